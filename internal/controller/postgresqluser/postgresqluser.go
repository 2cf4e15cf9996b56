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

// Package postgresqluser reconciles PostgresqlUsers with the logins of Cloud
// SQL instances, through crossplane-runtime's managed reconciler and the
// PostgresqlInstances' controller core: a login with a generated password kept
// in the user's connection secret, stripped of what Cloud SQL gives every user
// it creates (membership of cloudsqlsuperuser, CREATEROLE, CREATEDB).
package postgresqluser

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

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
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/listcache"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/pgsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	errNoInstance     = "spec.forProvider.instance is not set: name the PostgresqlInstance the user belongs to (instance, instanceRef or instanceSelector; clusterInstance* for a cluster-scoped one)"
	errInspect        = "cannot read the privileges of login %s on Cloud SQL instance %s"
	errLeastPrivilege = "cannot give login %s least privilege on Cloud SQL instance %s"
	errCreateUser     = "cannot create login %s on Cloud SQL instance %s in project %s"
	// msgUnconfirmedNoUpdate says why a login whose password is not known to
	// be set stays Creating.
	msgUnconfirmedNoUpdate = "login %s exists on Cloud SQL instance %s, but the password in its connection secret %s is not known to be the one Cloud SQL has (the answer to its insert was lost, a retried insert found the login made, or the password was edited in the secret)%s; only an update can set it, and spec.managementPolicies leave out Update: add Update (or \"*\") to spec.managementPolicies, and the provider sets it, or put the login's current password in the secret"
	// msgRefused and msgUnasked complete msgUnconfirmedNoUpdate with what
	// PostgreSQL said of the password.
	msgRefused          = ", and PostgreSQL refuses it"
	msgUnasked          = ", and PostgreSQL could not be asked: %v"
	errSetPassword      = "cannot set the password of login %s on Cloud SQL instance %s in project %s"
	errDeleteUser       = "cannot delete login %s from Cloud SQL instance %s in project %s"
	errOwnsDatabases    = "login %s still owns database(s) %s on Cloud SQL instance %s: delete their PostgresqlDatabases first (or give them another owner); the login is dropped once it owns none"
	errGeneratePassword = "cannot generate a password for login %s"
	errListDatabases    = "cannot list the PostgresqlDatabases that this user may own"
)

// user is a PostgresqlUser of either kind.
type user interface {
	resource.Managed
	Settings() *v1alpha1.PostgresqlUserSettings
	Observation() *v1alpha1.PostgresqlUserObservation
	ConnectionSecret() *xpv2.SecretReference
	InstanceKey() types.NamespacedName
}

// SetupCluster adds the controller of the cluster-scoped PostgresqlUser kind
// to mgr, through core.
func SetupCluster(mgr ctrl.Manager, c *core.Core) error {
	return setup(mgr, c, &v1alpha1.PostgresqlUser{}, v1alpha1.PostgresqlUserGroupKind, v1alpha1.PostgresqlUserGroupVersionKind,
		&v1alpha1.PostgresqlDatabase{}, v1alpha1.PostgresqlDatabaseGroupVersionKind)
}

// SetupNamespaced adds the controller of the namespaced PostgresqlUser kind
// to mgr, through core.
func SetupNamespaced(mgr ctrl.Manager, c *core.Core) error {
	return setup(mgr, c, &nsv1alpha1.PostgresqlUser{}, nsv1alpha1.PostgresqlUserGroupKind, nsv1alpha1.PostgresqlUserGroupVersionKind,
		&nsv1alpha1.PostgresqlDatabase{}, nsv1alpha1.PostgresqlDatabaseGroupVersionKind)
}

// ownerOf maps a PostgresqlDatabase to its owner, of its own scope and
// namespace: a database that names a user, or stops naming it, changes what
// the user's connection secret offers (its database and databases keys).
func ownerOf(_ context.Context, o client.Object) []reconcile.Request {
	d, ok := o.(database)
	if !ok || d.OwnerKey().Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: d.OwnerKey()}}
}

// setup adds the controller of the users of obj's kind, whose databases are
// of db's kind (dbGVK): it watches them, and indexes them by owner before
// the manager's cache serves a List of a user's databases.
func setup[T user](mgr ctrl.Manager, cc *core.Core, obj T, groupKind string, gvk schema.GroupVersionKind, db client.Object, dbGVK schema.GroupVersionKind) error {
	// Registered here, not only by the databases' controller: this
	// controller may run first, or alone.
	if err := cc.IndexOwners(mgr, db, dbGVK); err != nil {
		return err
	}
	c := &connector[T]{
		holders:   cc.Holders(gvk),
		kube:      mgr.GetClient(),
		secrets:   mgr.GetAPIReader(),
		core:      cc,
		passwords: core.NewPasswords(mgr.GetClient(), mgr.GetAPIReader(), gvk),
		pacer:     cc.Pacer(gvk),
		refused:   &sync.Map{},
	}
	return cc.SetupKind(mgr, core.Kind{
		GroupKind: groupKind, GVK: gvk, Object: obj,
		Connector: managed.WithTypedExternalConnector[T](c), Listing: listcache.KindUsers,
		Watches: []core.Watch{{Object: db, Map: ownerOf}},
	})
}

// connector connects a PostgresqlUser to its instance's Cloud SQL.
type connector[T user] struct {
	holders   core.Holders
	kube      client.Client
	secrets   client.Reader
	core      *core.Core
	passwords *core.Passwords
	pacer     core.Pacer
	// refused holds, by object UID and login, the fingerprint of the last
	// stored password that PostgreSQL refused: it is not tried again (a
	// failed login at every poll would look like an attack) until it
	// changes, or the provider restarts.
	refused *sync.Map
}

// Connect implements managed.TypedExternalConnector.
func (c *connector[T]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	key := mg.InstanceKey()
	conn, released, err := c.core.ObjectConnection(ctx, c.kube, c.secrets, mg, key, errNoInstance)
	if released {
		// Its logins went with the instance, or nothing can reach them any
		// more.
		return core.Released[T]{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &external[T]{
		kube: c.kube, conn: conn, lists: c.core.Lists(), passwords: c.passwords, pacer: c.pacer,
		instance: instanceName(key), holders: c.holders, refused: c.refused,
	}, nil
}

func instanceName(k types.NamespacedName) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// external manages one PostgresqlUser's login during one reconcile. Observe
// records what it saw, for Update and Delete.
type external[T user] struct {
	kube      client.Reader
	conn      *core.InstanceConnection
	lists     *listcache.Cache
	passwords *core.Passwords
	pacer     core.Marks
	// instance names the PostgresqlInstance, for messages.
	instance string
	// holders record which object holds the login.
	holders core.Holders
	// refused is the connector's record of refused passwords.
	refused *sync.Map

	password core.StoredPassword
	// sending says that the users.update that sets the unconfirmed password
	// is under way.
	sending bool
	// asked is what PostgreSQL said of an unconfirmed password that only an
	// update could set (msgRefused, msgUnasked), for the condition.
	asked string
	role  pgsql.RoleState
}

// name is login as the records of holders know it.
func (e *external[T]) name(login string) tenancy.Name {
	return tenancy.Name{Kind: tenancy.KindLogin, Project: e.conn.Project, Instance: e.conn.Instance, Name: login}
}

func (e *external[T]) key() listcache.Key {
	return listcache.Key{Source: e.conn.Source, Project: e.conn.Project, Instance: e.conn.Instance, Kind: listcache.KindUsers}
}

// Observe implements managed.TypedExternalClient. In the steady state it
// costs a share of one users.list of the instance and one SQL session.
func (e *external[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	login := cloudsql.UserName(mg.Settings(), mg.GetName())
	if !e.conn.Ready() {
		if meta.WasDeleted(mg) {
			// An instance on its way out takes its logins with it.
			return managed.ExternalObservation{ResourceExists: false}, nil
		}
		// Back soon after the instance is: not at the end of an error
		// backoff that grows while it is created.
		e.pacer.Waiting(mg)
		return managed.ExternalObservation{}, e.conn.NotReady(e.instance, "login")
	}
	users, readAt, err := e.lists.Users(ctx, e.conn.Service, e.key())
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	e.pacer.Observed(mg, readAt)
	found := findUser(users, login)
	// Whose the login is comes before anything is read of it or done to
	// it: another team's is never reset, re-owned or dropped.
	st, err := e.holders.Standing(ctx, mg, e.name(login), found != nil, e.conn, e.instance)
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
	obs.Instance, obs.Name, obs.IAMStatus = e.conn.Instance, login, found.IAMStatus
	obs.Type = found.Type
	if obs.Type == "" {
		obs.Type = v1alpha1.UserTypeBuiltIn
	}

	if mg.Settings().Type == v1alpha1.UserTypeBuiltIn || mg.Settings().Type == "" {
		if e.password, err = e.passwords.Get(ctx, mg); err != nil {
			return managed.ExternalObservation{}, err
		}
		var change core.PasswordChange
		if e.password, change, err = e.passwords.Settle(ctx, e.conn.Service.Operations, e.conn.Project, mg, login, e.password); err != nil {
			return managed.ExternalObservation{}, err
		}
		e.sending = change == core.ChangeRunning
		if core.MayChange(mg) && !meta.WasDeleted(mg) {
			// A rotation that is due stores the new password unconfirmed:
			// Update sets it, as it sets an edited one.
			if e.password, err = e.passwords.Rotate(ctx, mg, login, e.password, mg.Settings().PasswordRotation.Every()); err != nil {
				return managed.ExternalObservation{}, err
			}
		}
		if e.password.Value != "" && e.password.Unconfirmed && !e.sending && !core.MayChange(mg) && !meta.WasDeleted(mg) {
			if e.password, err = e.confirmByLogin(ctx, mg, login); err != nil {
				return managed.ExternalObservation{}, err
			}
		}
	}
	// SQL costs a session and, for a connector without a fresh
	// certificate, two Admin API requests: it runs until the login is seen
	// least privileged, and while the provider may change it, not at every
	// poll.
	if leastPrivileged(obs) || !core.MayChange(mg) {
		e.role = pgsql.RoleState{Exists: true}
	} else if err := e.inspect(ctx, mg, login); err != nil {
		return managed.ExternalObservation{}, err
	}
	if e.role.Databases, err = e.owned(ctx, mg); err != nil {
		return managed.ExternalObservation{}, err
	}
	obs.Databases = e.role.Databases

	if e.password.Confirmed() {
		e.refused.Delete(refusedKey{uid: mg.GetUID(), login: login})
	}
	// A login without a connection secret (an import the provider may not
	// create) has no password of the provider's to confirm.
	upToDate := (leastPrivileged(obs) || !core.MayChange(mg)) && (!builtIn(mg) || e.password.Confirmed() || mg.ConnectionSecret() == nil)
	switch {
	case upToDate:
		mg.SetConditions(xpv2.Available())
	case builtIn(mg) && e.password.Value != "" && e.password.Unconfirmed && !e.sending && !core.MayChange(mg):
		// Only Update could set it, and the policies leave it out: say so,
		// rather than wait for ever.
		ref := mg.ConnectionSecret()
		mg.SetConditions(xpv2.Creating().WithMessage(fmt.Sprintf(msgUnconfirmedNoUpdate, login, e.conn.Instance, ref.Namespace+"/"+ref.Name, e.asked)))
	default:
		mg.SetConditions(xpv2.Creating().WithMessage(fmt.Sprintf("login %s is being given least privilege", login)))
	}
	o := managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate}
	if !builtIn(mg) || e.password.Confirmed() {
		o.ConnectionDetails = cloudsql.UserConnectionDetails(e.conn.Observed, login, e.password.Value, e.role.Databases)
	}
	return o, nil
}

// confirmByLogin asks PostgreSQL whether the unconfirmed password stored for
// login is the login's, when only an update could set it: an insert whose
// answer was lost made the login with it. Taken, it is recorded as set;
// refused, it is not tried again until it changes; not asked (the instance
// unreachable), it is tried again at the poll interval. What PostgreSQL said
// goes into e.asked for the condition; the error is the record's. Only a
// login that the object made is asked of: a login it imported may be
// someone's whose password its secret must not be used to guess.
func (e *external[T]) confirmByLogin(ctx context.Context, mg T, login string) (core.StoredPassword, error) {
	pw := e.password
	key, fp := refusedKey{uid: mg.GetUID(), login: login}, core.Fingerprint(mg, pw.Value)
	if last, ok := e.refused.Load(key); ok && last == fp {
		e.asked = msgRefused
		return pw, nil
	}
	made, err := e.holders.Made(ctx, mg, e.name(login))
	if err != nil || !made {
		return pw, err
	}
	took, err := e.logsIn(ctx, login, pw.Value)
	switch {
	case err != nil:
		e.pacer.Stalled(mg)
		e.asked = fmt.Sprintf(msgUnasked, err)
		return pw, nil
	case !took:
		e.refused.Store(key, fp)
		e.asked = msgRefused
		return pw, nil
	}
	e.refused.Delete(key)
	if err := e.passwords.Store(ctx, mg, login, pw.Value, false); err != nil {
		return pw, err
	}
	// Read back, as Settle does: the record of when it was set is new.
	return e.passwords.Get(ctx, mg)
}

// refusedKey keys the record of refused passwords: an object, and its login
// (whose name may change while the object only observes it).
type refusedKey struct {
	uid   types.UID
	login string
}

// logsIn says whether PostgreSQL takes password for login.
func (e *external[T]) logsIn(ctx context.Context, login, password string) (bool, error) {
	sql, err := e.conn.As(login, password)
	if err != nil {
		return false, err
	}
	return sql.LogsIn(ctx)
}

// inspect reads the login's privileges with SQL into e.role and the status.
func (e *external[T]) inspect(ctx context.Context, mg T, login string) error {
	sql, err := e.conn.SQL(ctx)
	if err != nil {
		return err
	}
	if e.role, err = sql.Inspect(ctx, login); err != nil {
		if pgsql.IsUnreachable(err) {
			// Retried at the poll interval, not in the error backoff.
			e.pacer.Stalled(mg)
		}
		return errors.Wrapf(err, errInspect, login, e.conn.Instance)
	}
	obs := mg.Observation()
	obs.SuperuserMember, obs.CreateRole, obs.CreateDB = &e.role.SuperuserMember, &e.role.CreateRole, &e.role.CreateDB
	return nil
}

// leastPrivileged says whether the status shows the login read least
// privileged.
func leastPrivileged(o *v1alpha1.PostgresqlUserObservation) bool {
	return o.SuperuserMember != nil && !*o.SuperuserMember && o.CreateRole != nil && !*o.CreateRole && o.CreateDB != nil && !*o.CreateDB
}

// owned lists, by name, the databases of the PostgresqlDatabases of mg's
// scope and namespace that name mg as their owner and belong to its
// instance: what its connection secret offers, read from the cache without
// a request. The owner index (core.IndexOwners) finds them: a walk of every
// database of the scope at each observation of each user would cost users
// times databases.
func (e *external[T]) owned(ctx context.Context, mg T) ([]string, error) {
	var (
		names []string
		l     client.ObjectList
		// Read in place from the cache: only names are read.
		opts = []client.ListOption{core.OwnedBy(mg), client.UnsafeDisableDeepCopy}
	)
	switch any(mg).(type) {
	case *v1alpha1.PostgresqlUser:
		l = &v1alpha1.PostgresqlDatabaseList{}
	case *nsv1alpha1.PostgresqlUser:
		l = &nsv1alpha1.PostgresqlDatabaseList{}
		opts = append(opts, client.InNamespace(mg.GetNamespace()))
	default:
		return nil, nil
	}
	if err := e.kube.List(ctx, l, opts...); err != nil {
		return nil, errors.Wrap(err, errListDatabases)
	}
	for _, o := range l.(resource.ManagedList).GetItems() {
		// The index keys the owner only: the instance is checked here.
		d, ok := o.(database)
		if ok && d.OwnerKey() == client.ObjectKeyFromObject(mg) && d.InstanceKey() == mg.InstanceKey() {
			names = append(names, cloudsql.DatabaseName(d.Settings(), d.GetName()))
		}
	}
	slices.Sort(names)
	return names, nil
}

// database is what owned and ownerOf read of a PostgresqlDatabase of either
// kind.
type database interface {
	resource.Managed
	Settings() *v1alpha1.PostgresqlDatabaseSettings
	InstanceKey() types.NamespacedName
	OwnerKey() types.NamespacedName
}

func builtIn(mg user) bool {
	t := mg.Settings().Type
	return t == "" || t == v1alpha1.UserTypeBuiltIn
}

func findUser(users []listcache.User, name string) *listcache.User {
	for i := range users {
		if users[i].Name == name {
			return &users[i]
		}
	}
	return nil
}

// Create implements managed.TypedExternalClient. A BUILT_IN login's
// password is stored, unconfirmed, before Cloud SQL is given it, and
// confirmed once it has it: no crash loses it.
func (e *external[T]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	login := cloudsql.UserName(mg.Settings(), mg.GetName())
	// Recorded before the login exists: of two objects racing for a name,
	// one creates it and the other is refused.
	fresh, err := e.holders.Claim(ctx, mg, e.name(login))
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	u := &sqladmin.User{Name: login, Type: mg.Settings().Type}
	if builtIn(mg) {
		pw, err := e.storedOrNew(ctx, mg, login)
		if err != nil {
			return managed.ExternalCreation{}, err
		}
		u.Password, u.Type = pw, ""
	}
	e.pacer.Busy(mg)
	op, err := e.conn.Service.Users.Insert(e.conn.Project, e.conn.Instance, u).Context(ctx).Do()
	// Done at once, the login joins its instance's listing (without its
	// password), and the next observation confirms it with no request of
	// its own; else the listing is read again.
	joined := e.lists.InsertedUser(e.key(), op, listcache.User{Name: login, Type: u.Type})
	if cloudsql.IsUserExists(err) {
		// Made by an earlier attempt of this object's, its password not
		// known to be set: it stays unconfirmed, and Update sets it. Made
		// by someone else since the listing: not this object's.
		return managed.ExternalCreation{}, e.holders.Appeared(ctx, mg, e.name(login), fresh, e.instance)
	}
	if err != nil {
		e.pacer.WriteFailed(mg, err)
		return managed.ExternalCreation{}, errors.Wrapf(cloudsql.Truncated(err), errCreateUser, login, e.conn.Instance, e.conn.Project)
	}
	if joined {
		e.pacer.Made(mg)
	}
	if builtIn(mg) {
		// The login has this password now: recorded so even when the
		// answer came after the reconcile's deadline (the transport awaits
		// a sent write's answer past it), or the login would keep a
		// password not known to be set, which only an update could mend.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordWait)
		defer cancel()
		if err := e.passwords.Store(rctx, mg, login, u.Password, false); err != nil {
			return managed.ExternalCreation{}, err
		}
	}
	return managed.ExternalCreation{}, nil
}

// recordWait bounds the write that records a password Cloud SQL has just
// set, or the operation that sets it, once the reconcile's own deadline has
// passed: with the transport's answer wait (budget.DefaultAnswerWait), under
// the 30 s crossplane-runtime gives itself past that deadline to record the
// create.
const recordWait = 8 * time.Second

// storedOrNew is the stored password, or a new one stored unconfirmed.
func (e *external[T]) storedOrNew(ctx context.Context, mg T, login string) (string, error) {
	pw, err := e.passwords.Get(ctx, mg)
	if err != nil {
		return "", err
	}
	if pw.Value != "" {
		return pw.Value, nil
	}
	gen, err := cloudsql.GeneratePassword()
	if err != nil {
		return "", errors.Wrapf(err, errGeneratePassword, login)
	}
	return gen, e.passwords.Store(ctx, mg, login, gen, true)
}

// Update implements managed.TypedExternalClient: it sets a password that is
// not known to be set, and takes from the login what least privilege does
// not allow.
func (e *external[T]) Update(ctx context.Context, mg T) (managed.ExternalUpdate, error) {
	login := cloudsql.UserName(mg.Settings(), mg.GetName())
	e.pacer.Busy(mg)
	if builtIn(mg) && !e.password.Confirmed() && !e.sending {
		pw, err := e.storedOrNew(ctx, mg, login)
		if err != nil {
			return managed.ExternalUpdate{}, err
		}
		op, err := e.conn.Service.Users.Update(e.conn.Project, e.conn.Instance, &sqladmin.User{Name: login, Password: pw}).
			Name(login).Context(ctx).Do()
		if err != nil {
			return managed.ExternalUpdate{}, errors.Wrapf(cloudsql.Truncated(err), errSetPassword, login, e.conn.Instance, e.conn.Project)
		}
		// Confirmed once its operation is seen done without an error: a
		// failed one would not have set it. Recorded even when the answer
		// came after the reconcile's deadline, as Create records its
		// password, or the next observation could not confirm it and would
		// send it again.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordWait)
		defer cancel()
		if err := e.passwords.StoreSending(rctx, mg, login, pw, op.Name); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	if !leastPrivileged(mg.Observation()) {
		sql, err := e.conn.SQL(ctx)
		if err != nil {
			return managed.ExternalUpdate{}, err
		}
		if err := sql.LeastPrivilege(ctx, login); err != nil {
			if pgsql.IsUnreachable(err) {
				e.pacer.Stalled(mg)
			}
			return managed.ExternalUpdate{}, errors.Wrapf(err, errLeastPrivilege, login, e.conn.Instance)
		}
		// Read again at the next observation: the status must show what
		// PostgreSQL says, not what was asked of it.
		obs := mg.Observation()
		obs.SuperuserMember, obs.CreateRole, obs.CreateDB = nil, nil, nil
	}
	return managed.ExternalUpdate{}, nil
}

// Delete implements managed.TypedExternalClient. A login that still owns
// databases is not dropped: PostgreSQL would refuse, and the condition says
// which databases hold it back.
func (e *external[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	login := cloudsql.UserName(mg.Settings(), mg.GetName())
	if len(e.role.Databases) > 0 {
		// Their deletion, under way, frees it: it is dropped soon after,
		// not at the end of an error backoff that grows meanwhile.
		e.pacer.Waiting(mg)
		return managed.ExternalDelete{}, errors.Errorf(errOwnsDatabases, login, strings.Join(e.role.Databases, ", "), e.conn.Instance)
	}
	defer e.lists.Invalidate(e.key())
	e.pacer.Busy(mg)
	_, err := e.conn.Service.Users.Delete(e.conn.Project, e.conn.Instance).Name(login).Context(ctx).Do()
	if err != nil && !cloudsql.IsUserNotFound(err) {
		return managed.ExternalDelete{}, errors.Wrapf(cloudsql.Truncated(err), errDeleteUser, login, e.conn.Instance, e.conn.Project)
	}
	// Gone: the name is free for whichever object creates it next.
	e.refused.Delete(refusedKey{uid: mg.GetUID(), login: login})
	return managed.ExternalDelete{}, e.holders.Release(ctx, mg, e.name(login))
}

// Disconnect implements managed.TypedExternalClient.
func (e *external[T]) Disconnect(context.Context) error { return nil }
