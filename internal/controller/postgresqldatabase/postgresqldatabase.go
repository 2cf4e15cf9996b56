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

// Package postgresqldatabase reconciles PostgresqlDatabases with the
// databases of Cloud SQL instances, through crossplane-runtime's managed
// reconciler and the PostgresqlInstances' controller core: a database that its
// owner (a PostgresqlUser) owns, with its public schema, and that no other
// login may connect to.
package postgresqldatabase

import (
	"cmp"
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/listcache"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/pgsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	errNoInstance     = "spec.forProvider.instance is not set: name the PostgresqlInstance the database belongs to (instance, instanceRef or instanceSelector; clusterInstance* for a cluster-scoped one)"
	errGetOwner       = "cannot get PostgresqlUser %s named by spec.forProvider.owner: create it, or name an existing one"
	errOwnerOther     = "PostgresqlUser %s named by spec.forProvider.owner belongs to PostgresqlInstance %s, not to %s: name a user of this database's instance"
	errOwnerNotReady  = "PostgresqlUser %s named by spec.forProvider.owner is not ready: the database is given to its login once it is; this is retried"
	errInspect        = "cannot read the owner and privileges of database %s on Cloud SQL instance %s"
	errOwn            = "cannot give database %s to login %s on Cloud SQL instance %s"
	errCreateDatabase = "cannot create database %s on Cloud SQL instance %s in project %s"
	errDeleteDatabase = "cannot delete database %s from Cloud SQL instance %s in project %s"
	errDatabaseInUse  = "cannot delete database %s from Cloud SQL instance %s in project %s: sessions are connected to it, and Cloud SQL refuses until they end; stop the applications that use it (or scale them to zero), then it is retried"
)

// database is a PostgresqlDatabase of either kind.
type database interface {
	resource.Managed
	Settings() *v1alpha1.PostgresqlDatabaseSettings
	Observation() *v1alpha1.PostgresqlDatabaseObservation
	InstanceKey() types.NamespacedName
	OwnerKey() types.NamespacedName
}

// SetupCluster adds the controller of the cluster-scoped PostgresqlDatabase
// kind to mgr, through core.
func SetupCluster(mgr ctrl.Manager, c *core.Core) error {
	return setup(mgr, c, &v1alpha1.PostgresqlDatabase{}, v1alpha1.PostgresqlDatabaseGroupKind, v1alpha1.PostgresqlDatabaseGroupVersionKind, &v1alpha1.PostgresqlUser{})
}

// SetupNamespaced adds the controller of the namespaced PostgresqlDatabase
// kind to mgr, through core.
func SetupNamespaced(mgr ctrl.Manager, c *core.Core) error {
	return setup(mgr, c, &nsv1alpha1.PostgresqlDatabase{}, nsv1alpha1.PostgresqlDatabaseGroupKind, nsv1alpha1.PostgresqlDatabaseGroupVersionKind, &nsv1alpha1.PostgresqlUser{})
}

// setup adds the controller of the databases of obj's kind, whose owners
// are of owner's kind: a database waiting for its owner to be Ready comes
// back when it is.
func setup[T database](mgr ctrl.Manager, cc *core.Core, obj T, groupKind string, gvk schema.GroupVersionKind, owner client.Object) error {
	c := &connector[T]{kube: mgr.GetClient(), secrets: mgr.GetAPIReader(), core: cc, pacer: cc.Pacer(gvk), holders: cc.Holders(gvk)}
	// The users' controller lists a user's databases through the same
	// index.
	owned, err := cc.Owners(mgr, obj, gvk)
	if err != nil {
		return err
	}
	return cc.SetupKind(mgr, core.Kind{
		GroupKind: groupKind, GVK: gvk, Object: obj,
		Connector: managed.WithTypedExternalConnector[T](c), Listing: listcache.KindDatabases,
		Watches: []core.Watch{{Object: owner, Map: owned,
			Predicates: []predicate.Predicate{core.ReadinessChanged(core.ConditionReady)}}},
	})
}

// ownerUser is the PostgresqlUser, of either kind, that owns a database.
type ownerUser interface {
	client.Object
	Settings() *v1alpha1.PostgresqlUserSettings
	InstanceKey() types.NamespacedName
}

// connector connects a PostgresqlDatabase to its instance's Cloud SQL.
type connector[T database] struct {
	holders core.Holders
	kube    client.Client
	secrets client.Reader
	core    *core.Core
	pacer   core.Pacer
}

// Connect implements managed.TypedExternalConnector.
func (c *connector[T]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	goes, err := core.GoesWithNamespace(ctx, c.secrets, mg)
	if err != nil {
		return nil, err
	}
	if goes && mg.GetAnnotations()[v1alpha1.AnnotationAllowDeletion] != "true" {
		// Its namespace is being deleted and the guard let it go without
		// the annotation: the database, with its data, stays.
		return core.Released[T]{}, nil
	}
	key := mg.InstanceKey()
	conn, released, err := c.core.ObjectConnection(ctx, c.kube, c.secrets, mg, key, errNoInstance)
	if released {
		// Its databases went with the instance, or nothing can reach them
		// any more.
		return core.Released[T]{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &external[T]{
		kube: c.kube, conn: conn, lists: c.core.Lists(), pacer: c.pacer, instance: key, holders: c.holders,
	}, nil
}

// external manages one PostgresqlDatabase's database during one reconcile.
type external[T database] struct {
	kube     client.Client
	conn     *core.InstanceConnection
	lists    *listcache.Cache
	pacer    core.Marks
	instance types.NamespacedName
	// holders record which object holds the database.
	holders core.Holders

	// owner is the login the database should belong to ("": none named).
	owner string
}

// name is database name as the records of holders know it.
func (e *external[T]) name(name string) tenancy.Name {
	return tenancy.Name{Kind: tenancy.KindDatabase, Project: e.conn.Project, Instance: e.conn.Instance, Name: name}
}

func (e *external[T]) key() listcache.Key {
	return listcache.Key{Source: e.conn.Source, Project: e.conn.Project, Instance: e.conn.Instance, Kind: listcache.KindDatabases}
}

func (e *external[T]) instanceName() string { return keyName(e.instance) }

// keyName names a PostgresqlInstance in messages: by name when
// cluster-scoped, else by namespace and name.
func keyName(k types.NamespacedName) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.String()
}

// Observe implements managed.TypedExternalClient. In the steady state it
// costs a share of one databases.list of the instance and one SQL session.
func (e *external[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	name := cloudsql.DatabaseName(mg.Settings(), mg.GetName())
	if !e.conn.Ready() {
		if meta.WasDeleted(mg) {
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		// Back soon after the instance is: not at the end of an error
		// backoff that grows while it is created.
		e.pacer.Waiting(mg)
		return managed.ExternalObservation{}, e.conn.NotReady(e.instanceName(), "database")
	}
	dbs, readAt, err := e.lists.Databases(ctx, e.conn.Service, e.key())
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	e.pacer.Observed(mg, readAt)
	found := findDatabase(dbs, name)
	// Whose the database is comes before anything is done to it: another
	// team's is never given away or dropped.
	st, err := e.holders.Standing(ctx, mg, e.name(name), found != nil, e.conn, e.instanceName())
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	switch st.Action {
	case tenancy.RefuseHeld, tenancy.RefuseImport:
		// Only the holder's deletion, or a new policy, changes that:
		// looked at again at the poll interval, not in a backoff.
		e.pacer.Stalled(mg)
		return managed.ExternalObservation{}, st.Err
	case tenancy.Leave, tenancy.Absent:
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if found == nil {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	obs := mg.Observation()
	obs.Instance, obs.Name, obs.Charset, obs.Collation = e.conn.Instance, name, found.Charset, found.Collation
	if meta.WasDeleted(mg) {
		// Deleting needs no owner, nor SQL.
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	if !core.MayChange(mg) {
		// An imported database that is only observed is given to no one: its
		// owner need not be ready, nor even exist, for the listing to show it.
		mg.SetConditions(xpv2.Available())
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}

	if e.owner, err = e.ownerLogin(ctx, mg); err != nil {
		return managed.ExternalObservation{}, err
	}
	// SQL costs a session and, for a connector without a fresh
	// certificate, two Admin API requests: it runs until the database is
	// seen given to its owner, not at every poll.
	if e.owner != "" && !given(obs, e.owner) && core.MayChange(mg) {
		sql, err := e.conn.SQL(ctx)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		st, err := sql.InspectDatabase(ctx, name)
		if err != nil {
			if pgsql.IsUnreachable(err) {
				e.pacer.Stalled(mg)
			}
			return managed.ExternalObservation{}, errors.Wrapf(err, errInspect, name, e.conn.Instance)
		}
		obs.Owner, obs.PublicConnect = st.Owner, &st.PublicConnect
	}
	upToDate := e.owner == "" || given(obs, e.owner) || !core.MayChange(mg)
	if upToDate {
		mg.SetConditions(xpv2.Available())
	} else {
		mg.SetConditions(xpv2.Creating().WithMessage(fmt.Sprintf("database %s is being given to login %s", name, e.owner)))
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate}, nil
}

// given says whether the status shows the database read as owner's, with
// CONNECT revoked from PUBLIC.
func given(o *v1alpha1.PostgresqlDatabaseObservation, owner string) bool {
	return o.Owner == owner && o.PublicConnect != nil && !*o.PublicConnect
}

func findDatabase(dbs []listcache.Database, name string) *listcache.Database {
	for i := range dbs {
		if dbs[i].Name == name {
			return &dbs[i]
		}
	}
	return nil
}

// ownerLogin is the login of the PostgresqlUser that spec.forProvider.owner
// names (of the database's own scope and namespace), or "" when it names
// none. The user must belong to the database's instance.
func (e *external[T]) ownerLogin(ctx context.Context, mg T) (string, error) {
	key := mg.OwnerKey()
	if key.Name == "" {
		return "", nil
	}
	// Of the database's own scope: a namespaced database has a namespace.
	var u ownerUser = &v1alpha1.PostgresqlUser{}
	if mg.GetNamespace() != "" {
		u = &nsv1alpha1.PostgresqlUser{}
	}
	owner := key.Name
	if err := e.kube.Get(ctx, key, u); err != nil {
		return "", errors.Wrapf(err, errGetOwner, owner)
	}
	inst, ready := u.InstanceKey(), core.ConditionReady(u)
	if inst != e.instance {
		return "", errors.Errorf(errOwnerOther, owner, keyName(inst), e.instanceName())
	}
	if !ready {
		// Its login may not exist yet: the database goes to it once it
		// does, soon after, not at the end of an error backoff.
		e.pacer.Waiting(mg)
		return "", errors.Errorf(errOwnerNotReady, owner)
	}
	return cloudsql.UserName(u.Settings(), owner), nil
}

// Create implements managed.TypedExternalClient.
func (e *external[T]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	st := mg.Settings()
	name := cloudsql.DatabaseName(st, mg.GetName())
	// Recorded before the database exists: of two objects racing for a
	// name, one creates it and the other is refused.
	fresh, err := e.holders.Claim(ctx, mg, e.name(name))
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	e.pacer.Busy(mg)
	op, err := e.conn.Service.Databases.Insert(e.conn.Project, e.conn.Instance, &sqladmin.Database{
		Name: name, Charset: st.Charset, Collation: st.Collation,
	}).Context(ctx).Do()
	// Done at once, the database joins its instance's listing, and the
	// next observation confirms it with no request of its own; else the
	// listing is read again. It joins as Cloud SQL lists it: with the
	// defaults Cloud SQL gave what the request left out.
	joined := e.lists.InsertedDatabase(e.key(), op, listcache.Database{
		Name: name, Charset: cmp.Or(st.Charset, v1alpha1.DefaultCharset), Collation: cmp.Or(st.Collation, v1alpha1.DefaultCollation),
	})
	if joined {
		e.pacer.Made(mg)
	}
	if cloudsql.IsDatabaseExists(err) {
		// Made by someone else since the listing, it is not this object's
		// to take (nor to give to its owner).
		if err := e.holders.Appeared(ctx, mg, e.name(name), fresh, e.instanceName()); err != nil {
			return managed.ExternalCreation{}, err
		}
	}
	e.pacer.WriteFailed(mg, err)
	return managed.ExternalCreation{}, errors.Wrapf(cloudsql.Truncated(err), errCreateDatabase, name, e.conn.Instance, e.conn.Project)
}

// Update implements managed.TypedExternalClient: the database goes to its
// owner, and no one else may connect to it. Charset and collation cannot
// change (the API refuses it, and so does Cloud SQL).
func (e *external[T]) Update(ctx context.Context, mg T) (managed.ExternalUpdate, error) {
	name := cloudsql.DatabaseName(mg.Settings(), mg.GetName())
	if e.owner == "" {
		return managed.ExternalUpdate{}, nil
	}
	e.pacer.Busy(mg)
	sql, err := e.conn.SQL(ctx)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	if err := sql.OwnDatabase(ctx, name, e.owner); err != nil {
		if pgsql.IsUnreachable(err) {
			e.pacer.Stalled(mg)
		}
		return managed.ExternalUpdate{}, errors.Wrapf(err, errOwn, name, e.owner, e.conn.Instance)
	}
	// Read again at the next observation: the status must show what
	// PostgreSQL says, not what was asked of it.
	obs := mg.Observation()
	obs.Owner, obs.PublicConnect = "", nil
	return managed.ExternalUpdate{}, nil
}

// Delete implements managed.TypedExternalClient.
func (e *external[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	name := cloudsql.DatabaseName(mg.Settings(), mg.GetName())
	defer e.lists.Invalidate(e.key())
	e.pacer.Busy(mg)
	_, err := e.conn.Service.Databases.Delete(e.conn.Project, e.conn.Instance, name).Context(ctx).Do()
	switch {
	case err == nil || cloudsql.IsDatabaseNotFound(err):
	case cloudsql.IsDatabaseInUse(err):
		return managed.ExternalDelete{}, errors.Wrapf(cloudsql.Truncated(err), errDatabaseInUse, name, e.conn.Instance, e.conn.Project)
	default:
		return managed.ExternalDelete{}, errors.Wrapf(cloudsql.Truncated(err), errDeleteDatabase, name, e.conn.Instance, e.conn.Project)
	}
	// Gone: the name is free for whichever object creates it next.
	return managed.ExternalDelete{}, e.holders.Release(ctx, mg, e.name(name))
}

// Disconnect implements managed.TypedExternalClient.
func (e *external[T]) Disconnect(context.Context) error { return nil }
