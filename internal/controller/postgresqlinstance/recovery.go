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
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
)

const (
	errSourceObject       = "cannot read %s, the source of PostgresqlInstance %s (spec.forProvider.source)"
	errSourceProject      = "spec.forProvider.source of PostgresqlInstance %s names %s, which is in project %s, while this instance is in project %s: Cloud SQL recovers an instance only within its project; use a configuration of project %s"
	errSourceNotOwned     = "spec.forProvider.source of PostgresqlInstance %s names PostgresqlInstance %s, but Cloud SQL instance %s in project %s is not that object's (its owner-uid label is %q): recover only from an instance that its object created or imported"
	errSourceNotReady     = "spec.forProvider.source of PostgresqlInstance %s names %s, which is not ready to recover from (%s): the recovery starts once it is"
	errGetSource          = "cannot get Cloud SQL instance %s in project %s, the source of PostgresqlInstance %s"
	errSourceVersion      = "spec.forProvider.version of PostgresqlInstance %s is %s, but its source %s is at %s: a recovery keeps the source's major version; set version %s, and raise it once the instance exists (an upgrade in place)"
	errSourceRegion       = "spec.forProvider.location.region of PostgresqlInstance %s is %s, but Cloud SQL clones %s only within its region, %s: set region %s"
	errSourceWindow       = "cannot read the recoverable window of Cloud SQL instance %s in project %s (getLatestRecoveryTime), the source of PostgresqlInstance %s: a point in time needs point-in-time recovery on the source (spec.forProvider.backups.pointInTimeRecovery of its PostgresqlInstance)"
	errOutsideWindow      = "spec.forProvider.source.pointInTime of PostgresqlInstance %s, %s, is outside the recoverable window of Cloud SQL instance %s: it can be recovered to any time from %s to %s; choose a time within it (the window moves as logs are kept and dropped)"
	errListBackups        = "cannot list the backups of project %s to find backup run %s of Cloud SQL instance %s"
	errNoSuchRun          = "spec.forProvider.source of PostgresqlInstance %s names backup run %s of Cloud SQL instance %s, which Cloud SQL does not list in project %s: check the ID (gcloud sql backups list --instance %s)"
	errGetBackup          = "cannot get backup %s, the source of PostgresqlInstance %s: check spec.forProvider.source.retainedBackup (gcloud sql backups list)"
	errBackupUnusable     = "spec.forProvider.source of PostgresqlInstance %s names backup %s, which Cloud SQL reports %s: only a SUCCESSFUL backup can be restored; name another"
	errBackupNotDone      = "spec.forProvider.source.backup of PostgresqlInstance %s names PostgresqlBackup %s, which has no successful backup yet (state %q): the restore starts once it is SUCCESSFUL"
	errRetainedProj       = "spec.forProvider.source.retainedBackup of PostgresqlInstance %s is %s, which is not of this instance's project %s: Cloud SQL restores a backup only within its project"
	errClone              = "cannot clone Cloud SQL instance %s into %s in project %s"
	errRestore            = "cannot restore backup %s into the new Cloud SQL instance %s in project %s"
	errSharedBackupSource = "cannot read cluster-scoped PostgresqlInstance %s, of which PostgresqlBackup %s, the source of PostgresqlInstance %s, is a backup: a namespace restores a backup of a shared instance only while that instance admits it; if it was deleted, ask the platform team to restore the backup (spec.forProvider.source.retainedBackup of a cluster-scoped PostgresqlInstance)"
	errSourceSelf         = "spec.forProvider.source of PostgresqlInstance %s names the PostgresqlInstance itself: name another instance, or a backup"
	errRetainedNamespaced = "spec.forProvider.source.retainedBackup of PostgresqlInstance %s: a backup of a deleted instance belongs to no namespace; restore a PostgresqlBackup of this namespace (source.backup), or ask the platform team to restore it"
	errBackupNotOwned     = "spec.forProvider.source of PostgresqlInstance %s names backup %s of Cloud SQL instance %s, which was taken of an instance whose owner-uid label was %q, not %q, the source's: it is another instance of the same name (one deleted since, with its backups kept); check the backup run's ID"
	errRecoveredElsewhere = "PostgresqlInstance %s was recovered into Cloud SQL instance %s already (status.atProvider.connectionName), and now names %s: a recovery is made once; set the crossplane.io/external-name annotation back, or create a new PostgresqlInstance to recover again"
	errCloneAppeared      = "Cloud SQL instance %s in project %s appeared while PostgresqlInstance %s was cloning %s into it, so it is not this object's: give this one another name (spec.forProvider.name or metadata.name)"
)

// msgSecuring is the Ready condition's message while a recovered instance is
// being made its own.
const msgSecuring = "recovered from %s; the provider sets its own postgres password and owner label, and publishes the connection secret once it is set"

// A recoverySource is spec.forProvider.source, resolved to what Cloud SQL
// takes: an instance to clone, or a backup to restore.
type recoverySource struct {
	// describe names the source for status and messages.
	describe string
	// instance is the Cloud SQL instance to clone, with owner its owner
	// label, which the clone carries until the provider gives it its own;
	// at is the point in time, zero for the present.
	instance, owner string
	at              time.Time
	// backup is the backup to restore, as the Backups API names it.
	backup string
	// version and region are the source's, which a recovery keeps.
	version, region string
}

// describeSource names spec.forProvider.source in status.
func describeSource(mg core.Instance, src *v1alpha1.Source) string {
	inst := src.Instance
	switch {
	case src.ClusterInstance != "":
		inst = "cluster-scoped PostgresqlInstance " + src.ClusterInstance
	case inst != "" && mg.GetNamespace() != "":
		inst = "PostgresqlInstance " + mg.GetNamespace() + "/" + inst
	case inst != "":
		inst = "PostgresqlInstance " + inst
	}
	switch {
	case src.BackupRunID != "":
		return "backup run " + src.BackupRunID + " of " + inst
	case src.PointInTime != nil:
		return inst + " at " + src.PointInTime.UTC().Format(time.RFC3339)
	case inst != "":
		return inst
	case src.Backup != "" && mg.GetNamespace() != "":
		return "PostgresqlBackup " + mg.GetNamespace() + "/" + src.Backup
	case src.Backup != "":
		return "PostgresqlBackup " + src.Backup
	}
	return "retained backup " + src.RetainedBackup
}

// isClone says whether src makes the instance as a clone of another.
func isClone(src *v1alpha1.Source) bool {
	return src != nil && (src.Instance != "" || src.ClusterInstance != "") && src.BackupRunID == ""
}

// resolveSource resolves mg's spec.forProvider.source. A namespaced
// PostgresqlInstance reaches only what its namespace may use: instances and
// PostgresqlBackups of its namespace, and cluster-scoped instances that
// admit it (core.Connection checks that).
func (e *external[T]) resolveSource(ctx context.Context, mg T) (*recoverySource, error) {
	src := mg.Parameters().Source
	rs := &recoverySource{describe: describeSource(mg, src)}
	switch {
	case src.Instance != "" || src.ClusterInstance != "":
		key := types.NamespacedName{Namespace: mg.GetNamespace(), Name: src.Instance}
		if src.ClusterInstance != "" {
			key = types.NamespacedName{Name: src.ClusterInstance}
		}
		if key.Name == mg.GetName() && (key.Namespace == mg.GetNamespace() || src.ClusterInstance == "" && mg.GetNamespace() == "") {
			return nil, errors.Errorf(errSourceSelf, objectRef(mg))
		}
		inst, err := e.sourceInstance(ctx, mg, key, rs.describe, fieldSourceClusterInstance, isClone(src) || src.PointInTime != nil)
		if err != nil {
			return nil, err
		}
		rs.instance, rs.version, rs.region = inst.Name, inst.DatabaseVersion, inst.Region
		if inst.Settings != nil {
			rs.owner = inst.Settings.UserLabels[v1alpha1.OwnerUIDLabelKey]
		}
		if src.PointInTime != nil {
			rs.at = src.PointInTime.Time
			if err := e.checkWindow(ctx, mg, rs); err != nil {
				return nil, err
			}
		}
		if src.BackupRunID != "" {
			b, err := e.findRun(ctx, mg, inst.Name, src.BackupRunID)
			if err != nil {
				return nil, err
			}
			// A run of this instance, not of a deleted namesake's.
			if err := e.checkBackupOwner(mg, b, rs.owner); err != nil {
				return nil, err
			}
			return rs, e.useBackup(mg, rs, b)
		}
		return rs, nil
	case src.Backup != "":
		b, err := e.sourceBackup(ctx, mg, src.Backup, rs.describe)
		if err != nil {
			return nil, err
		}
		return rs, e.useBackup(mg, rs, b)
	}
	if mg.GetNamespace() != "" {
		// The CRD refuses it too: a deleted instance's backup belongs to
		// no namespace.
		return nil, errors.Errorf(errRetainedNamespaced, objectRef(mg))
	}
	if p, _, _ := strings.Cut(strings.TrimPrefix(src.RetainedBackup, "projects/"), "/"); p != e.project {
		return nil, errors.Errorf(errRetainedProj, objectRef(mg), src.RetainedBackup, e.project)
	}
	b, err := e.svc.Backups.GetBackup(src.RetainedBackup).Context(ctx).Do()
	if err != nil {
		return nil, errors.Wrapf(cloudsql.Truncated(err), errGetBackup, src.RetainedBackup, objectRef(mg))
	}
	return rs, e.useBackup(mg, rs, b)
}

// sourceInstance reads the Cloud SQL instance of the source PostgresqlInstance
// key, which must be in this instance's project, created, and that object's.
func (e *external[T]) sourceInstance(ctx context.Context, mg T, key types.NamespacedName, describe, field string, running bool) (*sqladmin.DatabaseInstance, error) {
	conn, obj, err := e.connection(ctx, mg, key)
	if err != nil {
		return nil, errors.Wrapf(err, errSourceObject, describe, objectRef(mg))
	}
	if err := e.mayRecoverFrom(ctx, mg, field, obj); err != nil {
		return nil, err
	}
	if conn.Project != e.project {
		return nil, errors.Errorf(errSourceProject, objectRef(mg), describe, conn.Project, e.project, conn.Project)
	}
	// A clone needs the source serving; a backup run is restored
	// whatever became of its instance (a failed upgrade, say). Either way the
	// object must have observed the instance it names as its own.
	if !conn.Observes() || (running && conn.Observed.State != core.StateRunnable) {
		how := "its object has not observed it yet"
		switch {
		case conn.Observed.ConnectionName != "" && !conn.Observes():
			how = "its object last observed Cloud SQL instance " + conn.Observed.ConnectionName + ", not " + conn.Instance
		case conn.Observed.State != "":
			how = "Cloud SQL reports it " + conn.Observed.State
		}
		return nil, &waiting{errors.Errorf(errSourceNotReady, objectRef(mg), describe, how)}
	}
	inst, err := e.svc.Instances.Get(e.project, conn.Instance).Context(ctx).Do()
	if err != nil {
		return nil, errors.Wrapf(cloudsql.Truncated(err), errGetSource, conn.Instance, e.project, objectRef(mg))
	}
	// The object must own what it names: a spec.forProvider.name is
	// anyone's to write, and the clone is of the Cloud SQL instance.
	owner := ""
	if inst.Settings != nil {
		owner = inst.Settings.UserLabels[v1alpha1.OwnerUIDLabelKey]
	}
	if owner != string(obj.GetUID()) {
		return nil, errors.Errorf(errSourceNotOwned, objectRef(mg), core.ObjectKey(obj), inst.Name, e.project, owner)
	}
	return inst, nil
}

// checkBackupOwner refuses backup b unless the instance it was taken of
// carried the owner label owner then: a run ID alone could name a backup
// that Cloud SQL kept of a deleted instance of the same name, someone
// else's. A backup that does not say (no instance settings) is taken at its
// word.
func (e *external[T]) checkBackupOwner(mg T, b *sqladmin.Backup, owner string) error {
	if b.InstanceSettings == nil || b.InstanceSettings.Settings == nil {
		return nil
	}
	if got := b.InstanceSettings.Settings.UserLabels[v1alpha1.OwnerUIDLabelKey]; got != owner {
		return errors.Errorf(errBackupNotOwned, objectRef(mg), b.Name, b.Instance, got, owner)
	}
	return nil
}

// waiting is an error that lasts until another object is ready: the
// recovery is tried again at the busy poll interval, not the slow one.
type waiting struct{ error }

func (w *waiting) Unwrap() error { return w.error }

// fieldSourceClusterInstance is where a namespaced PostgresqlInstance names
// a cluster-scoped source.
const fieldSourceClusterInstance = "spec.forProvider.source.clusterInstance"

// mayRecoverFrom refuses src, a cluster-scoped PostgresqlInstance, as the
// source of mg, a namespaced one, unless mg's namespace may have a copy of
// all its data with a postgres password: what its spec.injection admits.
// core.Connection admitted mg only as its objects are admitted, which
// spec.tenancy alone allows.
func (e *external[T]) mayRecoverFrom(ctx context.Context, mg T, field string, src client.Object) error {
	pi, ok := src.(*v1alpha1.PostgresqlInstance)
	if !ok || mg.GetNamespace() == "" || e.admitsSource == nil {
		return nil
	}
	return e.admitsSource(ctx, mg, field, pi)
}

// checkWindow refuses a point in time outside the source's recoverable
// window, naming the window: Cloud SQL would refuse the clone.
func (e *external[T]) checkWindow(ctx context.Context, mg T, rs *recoverySource) error {
	w, err := e.svc.Projects.Instances.GetLatestRecoveryTime(e.project, rs.instance).Context(ctx).Do()
	if err != nil {
		return errors.Wrapf(cloudsql.Truncated(err), errSourceWindow, rs.instance, e.project, objectRef(mg))
	}
	earliest, _ := time.Parse(time.RFC3339Nano, w.EarliestRecoveryTime)
	latest, err := time.Parse(time.RFC3339Nano, w.LatestRecoveryTime)
	if err != nil || rs.at.After(latest) || (!earliest.IsZero() && rs.at.Before(earliest)) {
		from := "the earliest kept log"
		if !earliest.IsZero() {
			from = earliest.UTC().Format(time.RFC3339)
		}
		return errors.Errorf(errOutsideWindow, objectRef(mg), rs.at.UTC().Format(time.RFC3339), rs.instance, from, orUnknown(w.LatestRecoveryTime))
	}
	return nil
}

func orUnknown(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC().Format(time.RFC3339)
	}
	return "an unknown time"
}

// sourceBackup is the backup that PostgresqlBackup name (of mg's scope and
// namespace) took, as the Backups API lists it: its instance may be gone.
func (e *external[T]) sourceBackup(ctx context.Context, mg T, name, describe string) (*sqladmin.Backup, error) {
	var (
		obs         v1alpha1.PostgresqlBackupObservation
		instanceKey types.NamespacedName
	)
	if ns := mg.GetNamespace(); ns != "" {
		b := &nsv1alpha1.PostgresqlBackup{}
		if err := e.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, b); err != nil {
			return nil, errors.Wrapf(err, errSourceObject, describe, objectRef(mg))
		}
		if shared := b.Spec.ForProvider.ClusterInstance; shared != "" {
			// A backup of a shared instance is all of its data: the
			// namespace must be one that may have it.
			pi := &v1alpha1.PostgresqlInstance{}
			if err := e.kube.Get(ctx, types.NamespacedName{Name: shared}, pi); err != nil {
				return nil, errors.Wrapf(err, errSharedBackupSource, shared, ns+"/"+name, objectRef(mg))
			}
			if err := e.mayRecoverFrom(ctx, mg, "spec.forProvider.source.backup (PostgresqlBackup "+ns+"/"+name+")", pi); err != nil {
				return nil, err
			}
		}
		obs, instanceKey = b.Status.AtProvider, b.InstanceKey()
	} else {
		b := &v1alpha1.PostgresqlBackup{}
		if err := e.kube.Get(ctx, types.NamespacedName{Name: name}, b); err != nil {
			return nil, errors.Wrapf(err, errSourceObject, describe, objectRef(mg))
		}
		obs, instanceKey = b.Status.AtProvider, b.InstanceKey()
	}
	if obs.State != v1alpha1.BackupStateSuccessful || obs.ID == "" {
		return nil, &waiting{errors.Errorf(errBackupNotDone, objectRef(mg), name, obs.State)}
	}
	b, err := e.findRun(ctx, mg, obs.Instance, obs.ID)
	if err != nil {
		return nil, err
	}
	// The backup's instance must have been its object's own, as it was
	// when the PostgresqlBackup was taken (a PostgresqlBackup acts only on
	// the instance its object observed as its own): its label says whose.
	if owner, ok := e.backupInstanceOwner(ctx, mg, name, instanceKey); ok {
		if err := e.checkBackupOwner(mg, b, owner); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// backupInstanceOwner is the UID of the PostgresqlInstance key that a
// PostgresqlBackup backed up, when it still exists.
func (e *external[T]) backupInstanceOwner(ctx context.Context, mg T, backup string, key types.NamespacedName) (string, bool) {
	if key.Name == "" {
		return "", false
	}
	var obj client.Object = &v1alpha1.PostgresqlInstance{}
	if key.Namespace != "" {
		obj = &nsv1alpha1.PostgresqlInstance{}
	}
	if err := e.kube.Get(ctx, key, obj); err != nil {
		return "", false
	}
	return string(obj.GetUID()), true
}

// findRun finds backup run id of Cloud SQL instance (live or deleted) among
// the project's backups: a restore into a new instance names it so.
func (e *external[T]) findRun(ctx context.Context, mg T, instance, id string) (*sqladmin.Backup, error) {
	var found *sqladmin.Backup
	suffix := "/instances/" + instance + "/backupRuns/" + id
	err := e.svc.Backups.ListBackups("projects/"+e.project).Pages(ctx, func(l *sqladmin.ListBackupsResponse) error {
		for _, b := range l.Backups {
			if b != nil && b.Instance == instance && strings.HasSuffix(b.BackupRun, suffix) {
				found = b
				return errFound
			}
		}
		return nil
	})
	if found != nil {
		return found, nil
	}
	if err != nil && !errors.Is(err, errFound) {
		return nil, errors.Wrapf(cloudsql.Truncated(err), errListBackups, e.project, id, instance)
	}
	return nil, errors.Errorf(errNoSuchRun, objectRef(mg), id, instance, e.project, instance)
}

// errFound stops a listing at what it looks for.
var errFound = errors.New("found")

// useBackup makes rs a restore of b, which must have succeeded.
func (e *external[T]) useBackup(mg T, rs *recoverySource, b *sqladmin.Backup) error {
	if b.State != v1alpha1.BackupStateSuccessful {
		return errors.Errorf(errBackupUnusable, objectRef(mg), b.Name, b.State)
	}
	rs.instance, rs.owner, rs.backup, rs.version = "", "", b.Name, b.DatabaseVersion
	return nil
}

// createFrom makes instance name from mg's source: a clone, or a restore
// into it. The new postgres password is stored, unconfirmed, before: the
// recovered data holds the source's postgres password, and the instance's
// own is set (and only then published) once Cloud SQL has made it.
func (e *external[T]) createFrom(ctx context.Context, mg T, name string, pw core.StoredPassword) (managed.ExternalCreation, error) {
	if cn := mg.Observation().ConnectionName; cn != "" && !strings.HasSuffix(cn, ":"+name) {
		// Renamed after its recovery: another would be made, and billed.
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return managed.ExternalCreation{}, errors.Errorf(errRecoveredElsewhere, objectRef(mg), cn, name)
	}
	rs, err := e.resolveSource(ctx, mg)
	var w *waiting
	if errors.As(err, &w) {
		e.pacing.MarkBusy(core.ObjectKey(mg))
		return managed.ExternalCreation{}, err
	}
	if err != nil {
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return managed.ExternalCreation{}, err
	}
	if want := cloudsql.DatabaseVersion(mg.Parameters().Version); rs.version != "" && want != rs.version {
		v := cloudsql.FromDatabaseVersion(rs.version)
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return managed.ExternalCreation{}, errors.Errorf(errSourceVersion, objectRef(mg), mg.Parameters().Version, rs.describe, v, v)
	}
	if region := mg.Parameters().Location.Region; rs.instance != "" && region != "" && rs.region != "" && region != rs.region {
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return managed.ExternalCreation{}, errors.Errorf(errSourceRegion, objectRef(mg), region, rs.instance, rs.region, rs.region)
	}
	if pw.Value == "" || !pw.Unconfirmed {
		if pw.Value == "" {
			if pw.Value, err = cloudsql.GeneratePassword(); err != nil {
				return managed.ExternalCreation{}, errors.Wrap(err, errGeneratePassword)
			}
		}
		if err := e.secrets.Store(ctx, mg, cloudsql.RootUser, pw.Value, true); err != nil {
			return managed.ExternalCreation{}, err
		}
	}
	e.pacing.MarkChanged(core.ObjectKey(mg), true)
	if rs.backup != "" {
		// Asked right before: a restore must never land on an instance
		// that exists, whatever Cloud SQL would make of
		// restoreInstanceSettings then, and the observation that found
		// the name free may be a listing some seconds old.
		if _, err := e.svc.Instances.Get(e.project, name).Context(ctx).Do(); !cloudsql.IsNotFound(err) {
			if err != nil {
				return managed.ExternalCreation{}, errors.Wrapf(cloudsql.Truncated(err), errGetInstance, name, e.project)
			}
			return managed.ExternalCreation{}, e.nameConflict(ctx, mg, name)
		}
		_, err = e.svc.Instances.RestoreBackup(e.project, name, &sqladmin.InstancesRestoreBackupRequest{
			Backup:                  rs.backup,
			RestoreInstanceSettings: cloudsql.GenerateInstance(name, e.project, desired(mg), pw.Value),
		}).Context(ctx).Do()
		if cloudsql.IsAlreadyExists(err) {
			return managed.ExternalCreation{}, e.nameConflict(ctx, mg, name)
		}
		if err != nil {
			e.pacing.MarkWriteFailed(core.ObjectKey(mg), err)
			return managed.ExternalCreation{}, errors.Wrapf(cloudsql.Truncated(err), errRestore, rs.backup, name, e.project)
		}
	} else {
		// Recorded before the clone is asked for: the clone carries the
		// source's owner label, and only this record makes it this
		// object's.
		fresh, err := e.clones.Claim(ctx, mg, e.project, name, rs.owner)
		if err != nil {
			return managed.ExternalCreation{}, err
		}
		cc := &sqladmin.CloneContext{DestinationInstanceName: name}
		if !rs.at.IsZero() {
			cc.PointInTime = rs.at.UTC().Format(time.RFC3339Nano)
		}
		_, err = e.svc.Instances.Clone(e.project, rs.instance, &sqladmin.InstancesCloneRequest{CloneContext: cc}).Context(ctx).Do()
		if cloudsql.IsAlreadyExists(err) {
			if fresh {
				// Made by someone else since the listing: not this
				// object's, whatever its labels say.
				if err := e.clones.Release(ctx, mg, e.project, name); err != nil {
					return managed.ExternalCreation{}, err
				}
				e.pacing.MarkStalled(core.ObjectKey(mg))
				return managed.ExternalCreation{}, errors.Errorf(errCloneAppeared, name, e.project, objectRef(mg), rs.instance)
			}
			return managed.ExternalCreation{}, e.nameConflict(ctx, mg, name)
		}
		if err != nil {
			e.pacing.MarkWriteFailed(core.ObjectKey(mg), err)
			if fresh && !cloudsql.IsUnsettled(err) {
				// Nothing was made: no record may outlive the attempt.
				// A clone answered 5xx, or not at all, may have been
				// made, with the source's owner label: the record
				// stays, so the next visit, which looks first, finds
				// it this object's (its delete lets the record go).
				if rerr := e.clones.Release(ctx, mg, e.project, name); rerr != nil {
					return managed.ExternalCreation{}, rerr
				}
			}
			return managed.ExternalCreation{}, errors.Wrapf(cloudsql.Truncated(err), errClone, rs.instance, name, e.project)
		}
	}
	e.pacing.MarkChanged(core.ObjectKey(mg), true)
	e.pacing.MarkWritten(core.ObjectKey(mg))
	e.pacing.Began(core.ObjectKey(mg))
	return managed.ExternalCreation{}, nil
}

// madeClone says whether inst, which carries the owner label owner that is
// not mg's, is the clone that mg made and has not yet made its own.
func (e *external[T]) madeClone(ctx context.Context, mg T, inst *sqladmin.DatabaseInstance, owner string) (bool, error) {
	if !isClone(mg.Parameters().Source) {
		return false, nil
	}
	return e.clones.Made(ctx, mg, e.project, inst.Name, owner)
}

// observeRecovery shows in status how far the recovery of mg's instance
// from its source has come, prev being what status said before; the record
// of a clone goes once the clone carries mg's own label.
func (e *external[T]) observeRecovery(ctx context.Context, mg T, inst *sqladmin.DatabaseInstance, prev *v1alpha1.Recovery) error {
	src := mg.Parameters().Source
	if src == nil || observeOnly(mg) {
		return nil
	}
	r := prev
	if r == nil {
		r = &v1alpha1.Recovery{Source: describeSource(mg, src)}
	}
	owned := inst.Settings != nil && inst.Settings.UserLabels[v1alpha1.OwnerUIDLabelKey] == string(mg.GetUID())
	mg.Observation().Recovery = r
	if t, err := time.Parse(time.RFC3339Nano, inst.CreateTime); err == nil {
		r.CreateTime = &metav1.Time{Time: t}
	}
	if r.Phase == v1alpha1.RecoveryDone {
		return nil
	}
	switch {
	case inst.State != core.StateRunnable:
		r.Phase = v1alpha1.RecoveryRecovering
	case !owned || e.password.Value == "" || e.password.Unconfirmed:
		r.Phase = v1alpha1.RecoverySecuring
		// Not Ready before it is its own: a pod admitted now would get a
		// password the instance does not take yet.
		mg.SetConditions(xpv2.Creating().WithMessage(fmt.Sprintf(msgSecuring, r.Source)))
	default:
		r.Phase = v1alpha1.RecoveryDone
		if isClone(src) {
			return e.clones.Release(ctx, mg, e.project, inst.Name)
		}
	}
	return nil
}

// connectionOf resolves the PostgresqlInstance key as the core does for the
// objects of an instance: through its own configuration, admitting a
// namespaced mg only to what its namespace may use.
type connectionOf func(ctx context.Context, mg client.Object, key types.NamespacedName) (*core.InstanceConnection, client.Object, error)

// admitsSourceFunc says whether the cluster-scoped PostgresqlInstance pi may
// be the source of mg, a namespaced PostgresqlInstance that names it in
// field (core.Core.AdmitsSource).
type admitsSourceFunc func(ctx context.Context, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error
