/*
Copyright 2026 The provider-cloudsql-postgres Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package postgresqlinstance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"google.golang.org/api/googleapi"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
)

const (
	errGetInstance      = "cannot get Cloud SQL instance %s in project %s"
	errCreateInstance   = "cannot create Cloud SQL instance %s in project %s"
	errUpdateInstance   = "cannot update Cloud SQL instance %s in project %s"
	errDeleteInstance   = "cannot delete Cloud SQL instance %s in project %s"
	errListOperations   = "cannot list the operations of Cloud SQL instance %s in project %s"
	errSetPassword      = "cannot set the password of user postgres on Cloud SQL instance %s in project %s"
	errGeneratePassword = "cannot generate a password for user postgres"
	errNameTaken        = "the Cloud SQL instance name %s in project %s was used by an instance deleted within the last week " +
		"(Cloud SQL reserves the names of deleted instances for up to a week): create the PostgresqlInstance again with another name " +
		"(spec.forProvider.name or metadata.name); this one is retried only at the poll interval"
	errNotObserved  = "the Cloud SQL instance was not observed before it was changed"
	errOwnedByOther = "Cloud SQL instance %s in project %s belongs to another PostgresqlInstance (uid %s): " +
		"this one never changes it; give this one another name (spec.forProvider.name or metadata.name), or delete it"
	errObservedByOther = "Cloud SQL instance %s in project %s belongs to another PostgresqlInstance (uid %s): " +
		"a namespaced PostgresqlInstance neither changes nor observes it, so that no namespace sees another's database; " +
		"give this one another name (spec.forProvider.name or metadata.name), or delete it"
	errNotCreatedByUs = "Cloud SQL instance %s already exists in project %s and was not created by this PostgresqlInstance: " +
		"to manage it, import it (managementPolicies [\"Observe\"] first, then [\"*\"]), or give this one another name"
	errNotImported       = "Cloud SQL instance %s in project %s exists and no PostgresqlInstance created it, so this one neither observes nor changes it"
	errLiftProtection    = "cannot turn off the deletion protection of Cloud SQL instance %s in project %s before deleting it"
	errRestoreProtection = "cannot turn the deletion protection of Cloud SQL instance %s in project %s back on: it was lifted for a delete that no longer happens (the allow-deletion annotation or the Delete policy was removed); it is retried"
	errProtectionPending = "PostgresqlInstance %s now keeps Cloud SQL instance %s in project %s, whose deletion protection a delete may have turned off: " +
		"the provider turns it back on, and lets the object go once Cloud SQL shows it on; this is retried"
	errDeleteNotAllowed = "PostgresqlInstance %s is being deleted without the annotation %s: \"true\", so the provider neither " +
		"turns off the deletion protection of Cloud SQL instance %s in project %s nor deletes it: add the annotation to delete the instance " +
		"and its data, or keep the instance by letting the object go (deletionPolicy Orphan; for a namespaced PostgresqlInstance, " +
		"managementPolicies without Delete)"
	msgState = "Cloud SQL reports the instance as %s"
)

// Cloud SQL instance states the controller acts on.
const (
	statePendingCreate = "PENDING_CREATE"
	statePendingDelete = "PENDING_DELETE"
)

// external manages one PostgresqlInstance's Cloud SQL instance during one
// reconcile. Observe records what it saw, so that Update and Delete act on it
// without asking Cloud SQL again.
type external[T core.Instance] struct {
	svc     *sqladmin.Service
	project string
	secrets *core.Passwords
	pacing  *core.Pacing
	// observer serves observations from a shared listing of the project; nil
	// reads every instance with instances.get.
	observer *observer.Observer
	// source names the ProviderConfig, whose listing of the project is shared.
	source string
	// noImport, when not nil, forbids observing or taking over a Cloud SQL
	// instance that no PostgresqlInstance created, and says why.
	noImport error
	// kube reads the objects a source names; connection resolves a source
	// PostgresqlInstance; clones records the clones made from one.
	kube         client.Client
	connection   connectionOf
	clones       core.Clones
	admitsSource admitsSourceFunc

	observed *sqladmin.DatabaseInstance
	// readAt is when what observed says was read.
	readAt   time.Time
	password core.StoredPassword
	// change is what became of the users.update that sets an unconfirmed
	// password (settle).
	change core.PasswordChange
	// diff is how observed differs from the spec, as Observe reported it.
	diff cloudsql.Diff
}

// Observe implements managed.TypedExternalClient. In the steady state it costs no
// write, and either a share of one instances.list page (observe = list) or one
// instances.get. It reads the instance, shows its state, settles the postgres
// password, publishes the connection details and compares the instance with
// the spec, in that order.
func (e *external[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	name := cloudsql.InstanceName(mg)
	e.pacing.Observing(core.ObjectKey(mg))
	inst, readAt, err := e.read(ctx, mg, name)
	if cloudsql.IsNotFound(err) {
		if meta.WasDeleted(mg) {
			e.pacing.Deleted(core.ObjectKey(mg), readAt)
			if isClone(mg.Parameters().Source) {
				// A clone deleted before it was made its own leaves no
				// record that could adopt another at its name.
				if err := e.clones.Release(ctx, mg, e.project, name); err != nil {
					return managed.ExternalObservation{}, err
				}
			}
		}
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if err := e.checkOwner(ctx, mg, inst); err != nil {
		// Deleting this PostgresqlInstance lets go of the instance, never deletes it.
		if meta.WasDeleted(mg) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return managed.ExternalObservation{}, err
	}
	e.observed, e.readAt = inst, readAt
	prev := *mg.Observation()
	*mg.Observation() = cloudsql.GenerateObservation(inst)
	e.showState(mg, inst)
	e.observeBackups(ctx, mg, inst, prev.Backups)
	e.observeUpgrade(mg, inst, prev.MajorUpgrade)

	if err := e.settlePassword(ctx, mg, inst); err != nil {
		return managed.ExternalObservation{}, err
	}
	if err := e.observeRecovery(ctx, mg, inst, prev.Recovery); err != nil {
		return managed.ExternalObservation{}, err
	}
	obs := managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        true,
		ResourceLateInitialized: cloudsql.LateInitialize(mg.Parameters(), inst),
	}
	if obs.ConnectionDetails, err = e.connectionDetails(ctx, inst); err != nil {
		return managed.ExternalObservation{}, err
	}
	if meta.WasDeleted(mg) {
		return obs, e.keepProtected(ctx, mg, name)
	}
	// An instance that is being created or maintained cannot be changed;
	// asking would only earn 409s.
	if inst.State != core.StateRunnable {
		return obs, nil
	}
	e.diff = cloudsql.Compare(desired(mg), inst)
	obs.Diff = strings.Join(e.diff.All(), "; ")
	obs.ResourceUpToDate = e.diff.UpToDate() && e.password.Value != "" && !e.password.Unconfirmed
	if obs.ResourceUpToDate {
		// Whatever the provider changed before readAt has taken effect.
		e.pacing.Settled(core.ObjectKey(mg), readAt)
	}
	return obs, nil
}

// keepProtected puts back the deletion protection of the instance of mg, a
// deleted object, when a delete lifted it and then lost its right to delete:
// the allow-deletion annotation was removed, or the policies now keep the
// instance. The instance lives on, and guarded as its spec says. An object
// that still deletes needs nothing: Delete goes on.
//
// An object that keeps its instance is observed only by its finalizer (the
// managed reconciler lets such an object go without observing it), which
// must not let go while the protection may still be off: until an
// observation made after the provider's last operation shows it on, this
// returns errProtectionPending.
func (e *external[T]) keepProtected(ctx context.Context, mg T, name string) error {
	deletes := deletesInstance(mg)
	if e.observed.State != core.StateRunnable || (deletes && mg.GetAnnotations()[v1alpha1.AnnotationAllowDeletion] == "true") {
		return nil
	}
	if !cloudsql.ProtectionLeftOff(desired(mg), e.observed) {
		if !deletes {
			running, ended, err := e.operationRunning(ctx, mg, name)
			if err != nil {
				return err
			}
			if running || ended.After(e.readAt) {
				// A lift may be under way, or have ended after this read.
				return errors.Errorf(errProtectionPending, objectRef(mg), name, e.project)
			}
		}
		// A protection put back has taken effect: nothing is under way.
		e.pacing.Settled(core.ObjectKey(mg), e.readAt)
		return nil
	}
	if err := e.patchWhenIdle(ctx, mg, name, cloudsql.GenerateProtection(e.observed, true), errRestoreProtection); err != nil {
		return err
	}
	if !deletes {
		return errors.Errorf(errProtectionPending, objectRef(mg), name, e.project)
	}
	return nil
}

// showState sets the object's conditions from the instance's state, and asks
// for a visit soon while it is being created or deleted.
func (e *external[T]) showState(mg T, inst *sqladmin.DatabaseInstance) {
	switch inst.State {
	case core.StateRunnable:
		mg.SetConditions(xpv2.Available())
	case statePendingCreate:
		mg.SetConditions(xpv2.Creating())
		e.pacing.MarkBusy(core.ObjectKey(mg))
	case statePendingDelete:
		mg.SetConditions(xpv2.Deleting())
		e.pacing.MarkBusy(core.ObjectKey(mg))
		if meta.WasDeleted(mg) {
			e.pacing.MarkDeleting(core.ObjectKey(mg))
		}
	default:
		mg.SetConditions(xpv2.Unavailable().WithMessage(cloudsql.Truncate(fmt.Sprintf(msgState, inst.State))))
	}
}

// settlePassword reads the postgres password from the connection secret into
// e.password, learns what became of a change of it under way, records one
// set before fingerprints were kept, and starts a rotation that is due (Update
// sets it, as it sets an edited one).
func (e *external[T]) settlePassword(ctx context.Context, mg T, inst *sqladmin.DatabaseInstance) error {
	var err error
	if e.password, err = e.secrets.Get(ctx, mg); err != nil {
		if core.IsUnusablePassword(err) {
			e.pacing.MarkStalled(core.ObjectKey(mg))
		}
		return err
	}
	if e.password, e.change, err = e.secrets.Settle(ctx, e.svc.Operations, e.project, mg, cloudsql.RootUser, e.password); err != nil {
		return err
	}
	if e.change == core.ChangeRunning {
		e.pacing.MarkBusy(core.ObjectKey(mg))
	}
	if e.password.Unrecorded && !e.password.Unconfirmed {
		// A secret from before fingerprints were kept: its password is the
		// one set, as far as anyone can tell.
		return e.secrets.Store(ctx, mg, cloudsql.RootUser, e.password.Value, false)
	}
	if core.MayChange(mg) && !meta.WasDeleted(mg) && inst.State == core.StateRunnable {
		// A rotation that is due stores the new password unconfirmed.
		e.password, err = e.secrets.Rotate(ctx, mg, cloudsql.RootUser, e.password, mg.Parameters().PasswordRotation.Every())
	}
	return err
}

// connectionDetails are what the managed reconciler publishes of the instance,
// once its password is confirmed: everything but the password and its pgpass
// and url entries, which the password store writes alone.
func (e *external[T]) connectionDetails(ctx context.Context, inst *sqladmin.DatabaseInstance) (managed.ConnectionDetails, error) {
	if e.password.Value == "" || e.password.Unconfirmed {
		return nil, nil
	}
	cd := cloudsql.ConnectionDetails(inst, e.password.Value)
	// The password store updates the secret only at the version it read.
	// Published here too, a password read before a user edited the secret
	// would overwrite the edit (the publisher writes whatever version is
	// there), and the edit would be lost.
	delete(cd, cloudsql.ConnectionKeyPassword)
	delete(cd, cloudsql.ConnectionKeyPgpass)
	delete(cd, cloudsql.ConnectionKeyURL)
	if sec := e.password.CompleteHere; sec != nil {
		if err := e.secrets.Complete(ctx, sec, cd); err != nil {
			return nil, err
		}
	}
	return cd, nil
}

// read returns the instance, and when what it says was read: from the project's
// shared listing when one began after the provider's last change of the instance
// and is recent enough (see pacing.maxListingAge; a spec change just made wants
// one no older than the busy poll interval), else from instances.get. An absence
// from such a listing is trusted only where it cannot mislead (see
// absenceIsProof); otherwise instances.get confirms it.
func (e *external[T]) read(ctx context.Context, mg core.Instance, name string) (*sqladmin.DatabaseInstance, time.Time, error) {
	if e.observer != nil {
		// Scheduled listings of the project observe this instance from now on,
		// and bring a reconcile when it changes.
		e.observer.Watch(e.svc, e.source, e.project, name, core.ObjectKey(mg))
		age := e.pacing.MaxListingAge(core.ObjectKey(mg))
		notBefore := e.pacing.LastActive(core.ObjectKey(mg))
		switch {
		case neverSynced(mg) && !observeOnly(mg):
			// A new object that may create its instance: a recent listing
			// shows whether its name is free, even one that began before
			// the object (the admission check's), and a burst of new
			// objects shares it. Its own instance cannot exist before its
			// insert, and a name taken since then meets that insert,
			// which takes the name-conflict path.
			if e.pacing.BusyPoll() > 0 {
				age = min(age, e.pacing.BusyPoll())
			}
		case neverSynced(mg):
			// A new import: only a listing that began after it was
			// created may say that the instance it expects is missing.
			if c := mg.GetCreationTimestamp().Time; c.After(notBefore) {
				notBefore = c.Add(-time.Second) // the API server's clock counts whole seconds
			}
		case specChanged(mg):
			age = min(age, e.pacing.BusyPoll())
		}
		r, err := e.observer.Instance(ctx, e.svc, e.source, e.project, name, notBefore, age)
		switch {
		case cloudsql.IsForbidden(err):
			// Credentials without cloudsql.instances.list still observe, one get
			// at a time.
		case err != nil:
			if d := e.observer.RetryIn(e.source, e.project); d > 0 {
				e.pacing.MarkRelist(core.ObjectKey(mg), d)
			}
			return nil, time.Time{}, err
		case r.Listed && r.Instance != nil:
			metrics.Observations.WithLabelValues(sourceListing).Inc()
			return r.Instance, r.ReadAt, nil
		case r.Listed && r.Complete && e.absenceIsProof(mg):
			metrics.Observations.WithLabelValues(sourceListing).Inc()
			return nil, r.ReadAt, errNotListed
		}
	}
	readAt := time.Now()
	inst, err := e.svc.Instances.Get(e.project, name).Context(ctx).Do()
	if err != nil && !cloudsql.IsNotFound(err) {
		return nil, readAt, errors.Wrapf(err, errGetInstance, name, e.project)
	}
	metrics.Observations.WithLabelValues(sourceGet).Inc()
	e.pacing.Observed(readAt, core.ObjectKey(mg))
	return inst, readAt, err
}

// absenceIsProof says whether an instance missing from a complete listing that
// Began after the provider's last change of it is surely gone. It is for an
// object that never had an instance (never observed one, never tried to create
// one: at worst its first insert meets the name and takes the name-conflict
// path), and for a deleted object whose instance was seen PENDING_DELETE or
// whose instances.delete Cloud SQL accepted (this process knows both). In
// every other case (an insert whose answer was lost, an instance deleted out of
// band, a listing that skipped it) instances.get decides.
func (e *external[T]) absenceIsProof(mg core.Instance) bool {
	if meta.WasDeleted(mg) {
		return e.pacing.SawDeleting(core.ObjectKey(mg))
	}
	return mg.Observation().SelfLink == "" && meta.GetExternalCreatePending(mg).IsZero()
}

// Values of the observations metric's source label.
const (
	sourceListing = "listing"
	sourceGet     = "get"
)

// errNotListed is a 404, for an instance that a recent listing lacks.
var errNotListed = &googleapi.Error{
	Code: http.StatusNotFound, Message: "not in a listing of the project that began after the provider's last change",
	Errors: []googleapi.ErrorItem{{Reason: cloudsql.ReasonInstanceDoesNotExist}},
}

// neverSynced reports whether the provider never reconciled the object to the
// end, and never began to create its instance.
func neverSynced(mg core.Instance) bool {
	return mg.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionUnknown && mg.Observation().SelfLink == "" &&
		meta.GetExternalCreatePending(mg).IsZero()
}

// specChanged reports whether the spec changed since the provider last synced
// the object (or never did).
func specChanged(mg core.Instance) bool {
	c := mg.GetCondition(xpv2.TypeSynced)
	return c.Status != corev1.ConditionTrue || c.ObservedGeneration != mg.GetGeneration()
}

// Create implements managed.TypedExternalClient. The password is stored before
// instances.insert, and a retried create reuses it.
func (e *external[T]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	name := cloudsql.InstanceName(mg)
	pw, err := e.secrets.Get(ctx, mg)
	if err != nil {
		if core.IsUnusablePassword(err) {
			e.pacing.MarkStalled(core.ObjectKey(mg))
		}
		return managed.ExternalCreation{}, err
	}
	if mg.Parameters().Source != nil {
		return e.createFrom(ctx, mg, name, pw)
	}
	if pw.Value == "" {
		if pw.Value, err = cloudsql.GeneratePassword(); err != nil {
			return managed.ExternalCreation{}, errors.Wrap(err, errGeneratePassword)
		}
		// Not "unconfirmed": whichever instance this name gets, it gets this password.
		if err := e.secrets.Store(ctx, mg, cloudsql.RootUser, pw.Value, false); err != nil {
			return managed.ExternalCreation{}, err
		}
	}
	// Marked before the insert too: whatever its answer (or none), only what is
	// read after it began can tell whether the instance exists.
	e.pacing.MarkChanged(core.ObjectKey(mg), true)
	_, err = e.svc.Instances.Insert(e.project, cloudsql.GenerateInstance(name, e.project, desired(mg), pw.Value)).Context(ctx).Do()
	if cloudsql.IsAlreadyExists(err) {
		return managed.ExternalCreation{}, e.nameConflict(ctx, mg, name)
	}
	if err != nil {
		e.pacing.MarkWriteFailed(core.ObjectKey(mg), err)
		return managed.ExternalCreation{}, errors.Wrapf(err, errCreateInstance, name, e.project)
	}
	e.pacing.MarkChanged(core.ObjectKey(mg), true)
	e.pacing.MarkWritten(core.ObjectKey(mg))
	e.pacing.Began(core.ObjectKey(mg))
	return managed.ExternalCreation{}, nil
}

// desired are the spec's parameters plus the label that ties the Cloud SQL
// instance to this PostgresqlInstance.
func desired(mg core.Instance) v1alpha1.PostgresqlInstanceParameters {
	p := *mg.Parameters().DeepCopy()
	if p.Labels == nil {
		p.Labels = map[string]v1alpha1.LabelValue{}
	}
	p.Labels[v1alpha1.OwnerUIDLabelKey] = v1alpha1.LabelValue(mg.GetUID())
	return p
}

// checkOwner refuses to manage an instance that another PostgresqlInstance created,
// or that exists without having been created or imported by this one: a second
// object with the same name must never patch, delete or reset the password of
// somebody else's database. Observing (managementPolicies [Observe]) is
// allowed, except for a namespaced object and an instance another object owns
// (a team would otherwise see, and have its pods routed to, another's
// database), and an instance this object observed before is taken over (an
// import). A configuration may forbid importing (noImport): a namespace that
// uses a ClusterProviderConfig then reaches only the instances it created.
func (e *external[T]) checkOwner(ctx context.Context, mg T, inst *sqladmin.DatabaseInstance) error {
	owner := ""
	if inst.Settings != nil {
		owner = inst.Settings.UserLabels[v1alpha1.OwnerUIDLabelKey]
	}
	if owner != "" && owner != string(mg.GetUID()) {
		// A clone carries its source's label until it is given this
		// object's.
		made, err := e.madeClone(ctx, mg, inst, owner)
		if err != nil || made {
			return err
		}
	}
	switch {
	case owner == string(mg.GetUID()):
		return nil
	case owner != "" && mg.GetNamespace() != "":
		return errors.Errorf(errObservedByOther, inst.Name, e.project, owner)
	case owner == "" && e.noImport != nil:
		// Nobody created it: importing it is up to the configuration.
		return errors.Wrapf(e.noImport, errNotImported, inst.Name, e.project)
	case observeOnly(mg):
		return nil
	case owner != "":
		return errors.Errorf(errOwnedByOther, inst.Name, e.project, owner)
	case mg.Observation().SelfLink != "" && mg.Observation().SelfLink == inst.SelfLink:
		return nil
	}
	return errors.Errorf(errNotCreatedByUs, inst.Name, e.project)
}

// nameConflict explains a 409 from instances.insert: the instance may be ours
// (an earlier insert whose answer was lost), somebody else's, or gone with its
// name still reserved.
func (e *external[T]) nameConflict(ctx context.Context, mg T, name string) error {
	inst, err := e.svc.Instances.Get(e.project, name).Context(ctx).Do()
	switch {
	case cloudsql.IsNotFound(err):
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return errors.Errorf(errNameTaken, name, e.project)
	case err != nil:
		return errors.Wrapf(err, errGetInstance, name, e.project)
	}
	if err := e.checkOwner(ctx, mg, inst); err != nil {
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return err
	}
	// Ours: the next Observe finds it.
	e.pacing.MarkChanged(core.ObjectKey(mg), false)
	return nil
}

func observeOnly(mg core.Instance) bool {
	for _, p := range mg.GetManagementPolicies() {
		if p != xpv2.ManagementActionObserve && p != xpv2.ManagementActionLateInitialize {
			return false
		}
	}
	return len(mg.GetManagementPolicies()) > 0
}

// Update implements managed.TypedExternalClient. It sets a missing password first
// (the more urgent repair), else patches the managed settings, and waits rather
// than collide with an operation that is already running.
func (e *external[T]) Update(ctx context.Context, mg T) (managed.ExternalUpdate, error) {
	if e.observed == nil {
		return managed.ExternalUpdate{}, errors.New(errNotObserved)
	}
	name := cloudsql.InstanceName(mg)
	if e.password.Value == "" || e.password.Unconfirmed {
		if e.change == core.ChangeRunning {
			// Its users.update is under way: the next observation
			// confirms the password, or sends it again.
			return managed.ExternalUpdate{}, nil
		}
		return e.setPassword(ctx, mg, name)
	}
	if e.diff.NeedsPatch() {
		if err := e.patchWhenIdle(ctx, mg, name, cloudsql.GeneratePatch(desired(mg), e.observed), errUpdateInstance); err != nil {
			return managed.ExternalUpdate{}, err
		}
	} else if e.diff.Upgrade != "" {
		// Alone: the settings first, so that the upgrade's patch holds the
		// version only.
		if err := e.upgrade(ctx, mg, name); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	if err := e.diff.ImmutableError(); err != nil {
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return managed.ExternalUpdate{}, err
	}
	return managed.ExternalUpdate{}, nil
}

// patchWhenIdle sends body as the instance's instances.patch unless an
// operation is running, or ended after the observation was read: then it
// waits for the next observation instead, as it does for a patch that meets
// another operation (409) or a changed instance (412). errPatch (with the
// instance's name and project) says what failed.
func (e *external[T]) patchWhenIdle(ctx context.Context, mg core.Instance, name string, body *sqladmin.DatabaseInstance, errPatch string) error {
	_, err := e.patchIfIdle(ctx, mg, name, body, errPatch)
	return err
}

// patchIfIdle is patchWhenIdle, and says whether Cloud SQL took the patch.
func (e *external[T]) patchIfIdle(ctx context.Context, mg core.Instance, name string, body *sqladmin.DatabaseInstance, errPatch string) (bool, error) {
	if !e.pacing.OpsCheckDue(core.ObjectKey(mg)) {
		// A patch of the provider's is under way, and shows in the
		// instance when it ends: the project's busy listings see that,
		// without an operations.list each.
		e.pacing.MarkBusy(core.ObjectKey(mg))
		return false, nil
	}
	running, ended, err := e.operationRunning(ctx, mg, name)
	if err != nil {
		return false, err
	}
	if running {
		e.pacing.MarkBusy(core.ObjectKey(mg))
		return false, nil
	}
	if ended.After(e.readAt) {
		// An operation ended after the observation was read: it may
		// show what that operation changed as it was before, and a
		// patch made of it would be refused as stale (412).
		e.pacing.MarkChanged(core.ObjectKey(mg), true)
		return false, nil
	}
	_, err = e.svc.Instances.Patch(e.project, name, body).Context(ctx).Do()
	// Another operation started, or someone changed the instance, since it was
	// observed: observe again soon rather than report an error.
	if cloudsql.IsOperationInProgress(err) || cloudsql.IsStale(err) {
		e.pacing.MarkChanged(core.ObjectKey(mg), false)
		return false, nil
	}
	if err != nil {
		return false, errors.Wrapf(err, errPatch, name, e.project)
	}
	e.pacing.MarkChanged(core.ObjectKey(mg), true)
	e.pacing.Began(core.ObjectKey(mg))
	return true, nil
}

// setPassword gives the postgres user a new password, stored (as unconfirmed)
// before Cloud SQL is told, so that a crash in between is repaired by the next
// reconcile with the same password; it is confirmed once the operation of
// users.update is seen done without an error (settle), and sent again if that
// operation failed.
func (e *external[T]) setPassword(ctx context.Context, mg core.Instance, name string) (managed.ExternalUpdate, error) {
	pw := e.password.Value
	if pw == "" {
		var err error
		if pw, err = cloudsql.GeneratePassword(); err != nil {
			return managed.ExternalUpdate{}, errors.Wrap(err, errGeneratePassword)
		}
		if err := e.secrets.Store(ctx, mg, cloudsql.RootUser, pw, true); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	op, err := e.svc.Users.Update(e.project, name, &sqladmin.User{Name: cloudsql.RootUser, Password: pw}).Name(cloudsql.RootUser).Context(ctx).Do()
	if cloudsql.IsOperationInProgress(err) {
		e.pacing.MarkBusy(core.ObjectKey(mg))
		return managed.ExternalUpdate{}, nil
	}
	if err != nil {
		return managed.ExternalUpdate{}, errors.Wrapf(err, errSetPassword, name, e.project)
	}
	if err := e.secrets.StoreSending(ctx, mg, cloudsql.RootUser, pw, op.Name); err != nil {
		return managed.ExternalUpdate{}, err
	}
	// A password change does not show in the instance: its operation tells
	// when it is over.
	e.pacing.MarkChanged(core.ObjectKey(mg), false)
	return managed.ExternalUpdate{}, nil
}

// operationRunning reports whether an operation on the instance is not done
// yet, and when the last one that is done ended (zero when unknown). Cloud
// SQL lists operations newest first, and a running one is among the newest.
// It asks unless this process knows that no operation of the provider's can
// run (its last change was seen to take effect, or operations.list said so
// since): another's operation, rarer, then costs a 409 that the caller takes
// as "busy", where asking every time would cost a request per patch.
func (e *external[T]) operationRunning(ctx context.Context, mg core.Instance, name string) (bool, time.Time, error) {
	if e.pacing.IsIdle(core.ObjectKey(mg)) {
		return false, time.Time{}, nil
	}
	e.pacing.OpsChecked(core.ObjectKey(mg))
	ops, err := e.svc.Operations.List(e.project).Instance(name).MaxResults(10).Context(ctx).Do()
	if err != nil {
		return false, time.Time{}, errors.Wrapf(err, errListOperations, name, e.project)
	}
	var ended time.Time
	for _, op := range ops.Items {
		if op.Status != cloudsql.OperationDone {
			return true, time.Time{}, nil
		}
		if t, err := time.Parse(time.RFC3339Nano, op.EndTime); err == nil && t.After(ended) {
			ended = t
		}
	}
	e.pacing.MarkIdle(core.ObjectKey(mg))
	return false, ended, nil
}

// Delete implements managed.TypedExternalClient; the reconciler calls it only when
// the deletion policy (or the management policies) allow Delete. It is called
// again on every reconcile until Cloud SQL answers 404, and asks only once.
//
// It writes only for an object that carries the allow-deletion annotation
// (the deletion guard lets no other through, but one deleted while the guard
// was not there): first one patch that turns the instance's deletion
// protection off, when it is on, then, once an observation shows it off, the
// delete, with the final backup the spec asks for.
func (e *external[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	name := cloudsql.InstanceName(mg)
	if mg.GetAnnotations()[v1alpha1.AnnotationAllowDeletion] != "true" {
		// Nothing is under way: the object comes back at the poll interval,
		// or at once when the annotation (or the policy) changes.
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return managed.ExternalDelete{}, errors.Errorf(errDeleteNotAllowed, objectRef(mg), v1alpha1.AnnotationAllowDeletion, name, e.project)
	}
	mg.SetConditions(xpv2.Deleting())
	e.pacing.MarkBusy(core.ObjectKey(mg))
	if e.observed != nil && e.observed.State == statePendingDelete {
		e.pacing.MarkWritten(core.ObjectKey(mg))
		return managed.ExternalDelete{}, nil
	}
	if cloudsql.DeletionProtected(e.observed) {
		// The delete follows once an observation shows protection off: the
		// patch's operation is over.
		return managed.ExternalDelete{}, e.patchWhenIdle(ctx, mg, name, cloudsql.GenerateProtection(e.observed, false), errLiftProtection)
	}
	call := e.svc.Instances.Delete(e.project, name)
	if fb := cloudsql.GenerateFinalBackup(*mg.Parameters()); fb.Set {
		call = call.EnableFinalBackup(fb.Enabled)
		if fb.Enabled {
			call = call.FinalBackupTtlDays(fb.TTLDays)
		}
	}
	_, err := call.Context(ctx).Do()
	if err == nil || cloudsql.IsOperationInProgress(err) {
		e.pacing.MarkChanged(core.ObjectKey(mg), false)
		e.pacing.MarkWritten(core.ObjectKey(mg))
	}
	if err == nil {
		e.pacing.Began(core.ObjectKey(mg))
		// Cloud SQL took the delete: from now on the instance is listed
		// PENDING_DELETE until it is gone, so a complete listing begun after
		// this call that lacks it proves it gone, even if no observation ever
		// saw it PENDING_DELETE (a delete quicker than the listing period).
		e.pacing.MarkDeleting(core.ObjectKey(mg))
	}
	if cloudsql.IsNotFound(err) || cloudsql.IsOperationInProgress(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrapf(err, errDeleteInstance, name, e.project)
}

// objectRef names mg as its messages do: namespace/name, or name for the
// cluster-scoped kind.
func objectRef(mg core.Instance) string {
	if ns := mg.GetNamespace(); ns != "" {
		return ns + "/" + mg.GetName()
	}
	return mg.GetName()
}

// Disconnect implements managed.TypedExternalClient; clients are shared and kept.
func (e *external[T]) Disconnect(context.Context) error { return nil }
