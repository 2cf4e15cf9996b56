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

// Package postgresqlbackup reconciles PostgresqlBackups with the on-demand
// backup runs of Cloud SQL instances (backupRuns.*), through
// crossplane-runtime's managed reconciler and the controllers' core: creating
// one takes a backup of its instance, once; deleting one deletes the backup
// when the object allows it.
//
// The external name is the backup run's ID, which Cloud SQL chooses: it is
// known from the insert's operation (backupContext.backupId). A provider that
// stops between the insert and recording it finds the run again by the UID
// that the run's description carries (cloudsql.BackupMark), with one
// backupRuns.list, rather than taking a second backup.
package postgresqlbackup

import (
	"context"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
)

const (
	errNoInstance     = "spec.forProvider.instance is not set: name the PostgresqlInstance to back up (instance, instanceRef or instanceSelector; clusterInstance* for a cluster-scoped one)"
	errInsert         = "cannot take a backup of Cloud SQL instance %s in project %s"
	errNoBackupID     = "Cloud SQL took a backup of instance %s in project %s but its operation %s names no backup run: it is looked for by this object's UID at the next reconcile"
	errList           = "cannot list the backup runs of Cloud SQL instance %s in project %s to find the one this object took"
	errGet            = "cannot get backup run %s of Cloud SQL instance %s in project %s"
	errDelete         = "cannot delete backup run %s of Cloud SQL instance %s in project %s"
	errBadExternal    = "the annotation crossplane.io/external-name is %q, which is not a backup run ID: set it to the ID of a backup run of instance %s (gcloud sql backups list --instance %s), or remove it from an object that should take a backup"
	errGone           = "backup run %s of Cloud SQL instance %s in project %s no longer exists (deleted outside the provider, or with its instance): delete this PostgresqlBackup, and create a new one to take another backup"
	errNotTaken       = "backup run %s of Cloud SQL instance %s was not taken by %s %s (its description does not carry this object's UID): a namespaced PostgresqlBackup manages only the backup it takes, so that no namespace can read or delete another's; remove the annotation crossplane.io/external-name and create the object again to take a backup of its own"
	errDeleteNotAllow = "%s %s is being deleted without the annotation %s: \"true\", so the provider does not delete backup run %s of Cloud SQL instance %s: add the annotation to delete the backup, or keep it by letting the object go (deletionPolicy Orphan for a cluster-scoped PostgresqlBackup; managementPolicies without Delete for a namespaced one)"
	msgRunning        = "backup run %s of Cloud SQL instance %s is %s"
	msgFailed         = "backup run %s of Cloud SQL instance %s FAILED: %s; delete this PostgresqlBackup and create a new one to take the backup again"
)

// backup is a PostgresqlBackup of either kind.
type backup interface {
	resource.Managed
	Settings() *v1alpha1.PostgresqlBackupSettings
	Observation() *v1alpha1.PostgresqlBackupObservation
	InstanceKey() types.NamespacedName
}

// marks are what external tells the core's pacing.
type marks interface {
	core.Marks
	Settled(m metav1.Object)
}

// SetupCluster adds the controller of the cluster-scoped PostgresqlBackup kind
// to mgr, through core.
func SetupCluster(mgr ctrl.Manager, c *core.Core) error {
	return setup(mgr, c, &v1alpha1.PostgresqlBackup{}, v1alpha1.PostgresqlBackupGroupKind, v1alpha1.PostgresqlBackupGroupVersionKind)
}

// SetupNamespaced adds the controller of the namespaced PostgresqlBackup kind
// to mgr, through core.
func SetupNamespaced(mgr ctrl.Manager, c *core.Core) error {
	return setup(mgr, c, &nsv1alpha1.PostgresqlBackup{}, nsv1alpha1.PostgresqlBackupGroupKind, nsv1alpha1.PostgresqlBackupGroupVersionKind)
}

// setup adds the controller of the backups of obj's kind. No initializer
// runs: the external name is the backup run's ID, which only Create learns.
// Backups are read one backupRuns.get each, not from a listing.
func setup[T backup](mgr ctrl.Manager, cc *core.Core, obj T, groupKind string, gvk schema.GroupVersionKind) error {
	c := &connector[T]{kube: mgr.GetClient(), live: mgr.GetAPIReader(), core: cc, pacer: cc.Pacer(gvk)}
	return cc.SetupKind(mgr, core.Kind{
		GroupKind: groupKind, GVK: gvk, Object: obj,
		Connector: managed.WithTypedExternalConnector[T](c),
	})
}

// connector connects a PostgresqlBackup to its instance's Cloud SQL.
type connector[T backup] struct {
	kube  client.Client
	live  client.Reader
	core  *core.Core
	pacer core.Pacer
}

// Connect implements managed.TypedExternalConnector.
func (c *connector[T]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	goes, err := core.GoesWithNamespace(ctx, c.live, mg)
	if err != nil {
		return nil, err
	}
	if goes && mg.GetAnnotations()[v1alpha1.AnnotationAllowDeletion] != "true" {
		// Its namespace is being deleted and the guard let it go without
		// the annotation: the backup stays.
		return core.Released[T]{}, nil
	}
	key := mg.InstanceKey()
	conn, released, err := c.core.ObjectConnection(ctx, c.kube, c.live, mg, key, errNoInstance)
	if released {
		// Nothing can reach its backups through the instance any more.
		return core.Released[T]{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &external[T]{conn: conn, pacer: c.pacer, instance: key}, nil
}

// external manages one PostgresqlBackup's backup run during one reconcile.
type external[T backup] struct {
	conn     *core.InstanceConnection
	pacer    marks
	instance types.NamespacedName

	// run is the backup run Observe found.
	run *sqladmin.BackupRun
}

// instanceName names the PostgresqlInstance in messages: by name when
// cluster-scoped, else by namespace and name.
func (e *external[T]) instanceName() string {
	if e.instance.Namespace == "" {
		return e.instance.Name
	}
	return e.instance.String()
}

// Observe implements managed.TypedExternalClient. A backup that has an ID
// costs one backupRuns.get, at the busy poll interval while it runs and
// rarely once it ended; one without costs nothing, but after an insert whose
// answer may have been lost (one backupRuns.list).
func (e *external[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	id := meta.GetExternalName(mg)
	if id == "" {
		return e.find(ctx, mg)
	}
	n, ok := cloudsql.ParseBackupRunID(id)
	if !ok {
		if meta.WasDeleted(mg) {
			// Nothing it names can be deleted: let the object go.
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		e.pacer.Stalled(mg)
		return managed.ExternalObservation{}, errors.Errorf(errBadExternal, id, e.conn.Instance, e.conn.Instance)
	}
	run, err := e.conn.Service.BackupRuns.Get(e.conn.Project, e.conn.Instance, n).Context(ctx).Do()
	if err == nil && run.Status == v1alpha1.BackupStateDeleted {
		err = errDeletedRun
	}
	if errors.Is(err, errDeletedRun) || cloudsql.IsBackupRunNotFound(err) || cloudsql.IsNotFound(err) {
		if meta.WasDeleted(mg) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		// Taking another would give the object another ID, which a
		// restore may name already: the object says what happened.
		e.pacer.Stalled(mg)
		mg.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf(errGone, id, e.conn.Instance, e.conn.Project)))
		return managed.ExternalObservation{}, errors.Errorf(errGone, id, e.conn.Instance, e.conn.Project)
	}
	if err != nil {
		return managed.ExternalObservation{}, errors.Wrapf(cloudsql.Truncated(err), errGet, id, e.conn.Instance, e.conn.Project)
	}
	if mg.GetNamespace() != "" && !cloudsql.IsBackupOf(run, mg.GetUID()) {
		// An ID written into the annotation by hand: another team's backup,
		// or the platform's automated one. Neither is shown nor deleted.
		if meta.WasDeleted(mg) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		e.pacer.Stalled(mg)
		return managed.ExternalObservation{}, errors.Errorf(errNotTaken, id, e.conn.Instance, v1alpha1.PostgresqlBackupKind, core.ObjectKey(mg))
	}
	e.observed(mg, run)
	e.run = run
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// find is the observation of a backup without an ID: it has none unless an
// insert was sent for it (the create-pending annotation says so), whose run
// the description's mark finds. Found, its ID becomes the external name.
func (e *external[T]) find(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	if meta.GetExternalCreatePending(mg).IsZero() {
		if meta.WasDeleted(mg) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		if !e.conn.Ready() {
			// Back soon after the instance is: not at the end of an
			// error backoff that grows while it is created.
			e.pacer.Waiting(mg)
			return managed.ExternalObservation{}, e.conn.NotReady(e.instanceName(), "backup")
		}
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	run, err := e.lookUp(ctx, mg)
	if err != nil || run == nil {
		if err == nil && !meta.WasDeleted(mg) && !e.conn.Ready() {
			e.pacer.Waiting(mg)
			return managed.ExternalObservation{}, e.conn.NotReady(e.instanceName(), "backup")
		}
		return managed.ExternalObservation{ResourceExists: false}, err
	}
	meta.SetExternalName(mg, cloudsql.BackupRunID(run.Id))
	e.observed(mg, run)
	e.run = run
	// Late-initialized: the reconciler records the external name.
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: true}, nil
}

// lookUp lists the instance's backup runs for the one taken for mg; nil when
// there is none. Cloud SQL lists the newest first, and the run cannot be
// older than the insert: the listing stops at runs enqueued before it was
// sent, so that an insert retried after errors costs one page, not a year
// of automated runs.
func (e *external[T]) lookUp(ctx context.Context, mg T) (*sqladmin.BackupRun, error) {
	var found *sqladmin.BackupRun
	// Clocks differ: a run enqueued a little before the pending mark counts.
	since := meta.GetExternalCreatePending(mg).Add(-lookUpSlack)
	err := e.conn.Service.BackupRuns.List(e.conn.Project, e.conn.Instance).MaxResults(cloudsql.BackupRunsRead).Pages(ctx, func(l *sqladmin.BackupRunsListResponse) error {
		for _, r := range l.Items {
			if cloudsql.IsBackupOf(r, mg.GetUID()) {
				found = r
				return errFound
			}
			if t, err := time.Parse(time.RFC3339Nano, r.EnqueuedTime); err == nil && t.Before(since) {
				return errPast
			}
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return found, nil
	}
	if errors.Is(err, errPast) {
		return nil, nil
	}
	if cloudsql.IsNotFound(err) {
		// No instance, no backup of it.
		return nil, nil
	}
	return nil, errors.Wrapf(cloudsql.Truncated(err), errList, e.conn.Instance, e.conn.Project)
}

// errFound stops a listing at the run looked for; errPast at runs older
// than the insert.
var (
	errFound = errors.New("found")
	errPast  = errors.New("older than the insert")
)

// lookUpSlack is how much earlier than the provider's mark of an insert
// Cloud SQL may have enqueued its run, the clocks being apart.
const lookUpSlack = 10 * time.Minute

// errDeletedRun is a run that Cloud SQL reports DELETED: as gone as a 404.
var errDeletedRun = errors.New("the backup run is deleted")

// observed records run in mg's status and conditions, and paces mg by its
// state.
func (e *external[T]) observed(mg T, run *sqladmin.BackupRun) {
	*mg.Observation() = cloudsql.GenerateBackupObservation(run)
	id := cloudsql.BackupRunID(run.Id)
	switch run.Status {
	case v1alpha1.BackupStateSuccessful:
		mg.SetConditions(xpv2.Available())
		e.pacer.Settled(mg)
	case v1alpha1.BackupStateFailed:
		mg.SetConditions(xpv2.Unavailable().WithMessage(cloudsql.Truncate(fmt.Sprintf(msgFailed, id, run.Instance, mg.Observation().Error))))
		e.pacer.Settled(mg)
	case v1alpha1.BackupStateDeletionPending, v1alpha1.BackupStateDeletionFailed:
		mg.SetConditions(xpv2.Deleting().WithMessage(fmt.Sprintf(msgRunning, id, run.Instance, run.Status)))
		e.pacer.Busy(mg)
	default:
		mg.SetConditions(xpv2.Creating().WithMessage(fmt.Sprintf(msgRunning, id, run.Instance, run.Status)))
		e.pacer.Busy(mg)
	}
}

// Create implements managed.TypedExternalClient: one backupRuns.insert, whose
// operation names the run.
func (e *external[T]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	if !e.conn.Ready() {
		e.pacer.Waiting(mg)
		return managed.ExternalCreation{}, e.conn.NotReady(e.instanceName(), "backup")
	}
	ref := core.ObjectKey(mg)
	e.pacer.Busy(mg)
	op, err := e.conn.Service.BackupRuns.Insert(e.conn.Project, e.conn.Instance, cloudsql.GenerateBackupRun(mg.Settings(), ref, mg.GetUID())).Context(ctx).Do()
	if err != nil {
		// The run may have begun: the next visit finds it by its
		// description before it asks for another.
		e.pacer.WriteFailed(mg, err)
		return managed.ExternalCreation{}, errors.Wrapf(cloudsql.Truncated(err), errInsert, e.conn.Instance, e.conn.Project)
	}
	if op.BackupContext == nil || op.BackupContext.BackupId == 0 {
		return managed.ExternalCreation{}, errors.Errorf(errNoBackupID, e.conn.Instance, e.conn.Project, op.Name)
	}
	meta.SetExternalName(mg, cloudsql.BackupRunID(op.BackupContext.BackupId))
	mg.SetConditions(xpv2.Creating())
	return managed.ExternalCreation{}, nil
}

// Update implements managed.TypedExternalClient: nothing of a backup changes.
func (e *external[T]) Update(context.Context, T) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

// Delete implements managed.TypedExternalClient; the reconciler calls it only
// when the deletion policy (or the management policies) allow Delete. It
// writes only for an object that carries the allow-deletion annotation: the
// deletion guard lets no other through, but one deleted while the guard was
// not there.
func (e *external[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	id := meta.GetExternalName(mg)
	if mg.GetAnnotations()[v1alpha1.AnnotationAllowDeletion] != "true" {
		// Nothing is under way: the object comes back at the poll
		// interval, or at once when the annotation (or the policy) changes.
		e.pacer.Stalled(mg)
		return managed.ExternalDelete{}, errors.Errorf(errDeleteNotAllow, v1alpha1.PostgresqlBackupKind, core.ObjectKey(mg), v1alpha1.AnnotationAllowDeletion, id, e.conn.Instance)
	}
	mg.SetConditions(xpv2.Deleting())
	e.pacer.Busy(mg)
	if e.run != nil && e.run.Status == v1alpha1.BackupStateDeletionPending {
		// Asked already: the run goes when its operation ends.
		return managed.ExternalDelete{}, nil
	}
	n, ok := cloudsql.ParseBackupRunID(id)
	if !ok {
		return managed.ExternalDelete{}, nil
	}
	_, err := e.conn.Service.BackupRuns.Delete(e.conn.Project, e.conn.Instance, n).Context(ctx).Do()
	if err == nil || cloudsql.IsBackupRunNotFound(err) || cloudsql.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, errors.Wrapf(cloudsql.Truncated(err), errDelete, id, e.conn.Instance, e.conn.Project)
}

// Disconnect implements managed.TypedExternalClient.
func (e *external[T]) Disconnect(context.Context) error { return nil }
