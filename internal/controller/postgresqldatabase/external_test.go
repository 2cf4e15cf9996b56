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

package postgresqldatabase

import (
	"context"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/listcache"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/pgsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/objecttest"
)

// These tests reach every branch of external that runs no SQL, and those
// whose SQL cannot reach the instance, against the emulator served by
// httptest and a fake API server for the owners. The branches whose SQL runs
// are told end to end, against the emulator's PostgreSQL, by the tests of
// package controller.

const (
	unitProject  = "unit-project"
	unitInstance = "shared"
	unitNS       = "team-a"
)

type dbMod func(*v1alpha1.PostgresqlDatabase)

// ordersDB is a cluster-scoped PostgresqlDatabase "orders" of instance
// "shared", owned by PostgresqlUser "app".
func ordersDB(mods ...dbMod) *v1alpha1.PostgresqlDatabase {
	d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: "orders", UID: "uid-db"}}
	d.Spec.ForProvider.Instance = unitInstance
	d.Spec.ForProvider.Owner = "app"
	d.Spec.ForProvider.Charset, d.Spec.ForProvider.Collation = "UTF8", "en_US.UTF8"
	for _, m := range mods {
		m(d)
	}
	return d
}

func unowned(d *v1alpha1.PostgresqlDatabase) { d.Spec.ForProvider.Owner = "" }

func dbNamed(name string) dbMod {
	return func(d *v1alpha1.PostgresqlDatabase) { d.Spec.ForProvider.Name = ptr.To(name) }
}

func deleted(d *v1alpha1.PostgresqlDatabase) {
	d.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
}

// teamDB is a namespaced PostgresqlDatabase "orders" of team-a on the
// cluster-scoped instance "shared", owned by team-a's PostgresqlUser "app".
func teamDB() *nsv1alpha1.PostgresqlDatabase {
	d := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: unitNS, Name: "orders", UID: "uid-db"}}
	d.Spec.ForProvider.ClusterInstance = unitInstance
	d.Spec.ForProvider.Owner = "app"
	return d
}

// clusterUser is the cluster-scoped PostgresqlUser "app" of instance, Ready
// when ready.
func clusterUser(instance string, ready bool, login string) client.Object {
	u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "app"}}
	u.Spec.ForProvider.Instance = instance
	if login != "" {
		u.Spec.ForProvider.Name = ptr.To(login)
	}
	if ready {
		u.SetConditions(xpv2.Available())
	}
	return u
}

// teamUser is team-a's PostgresqlUser "app", Ready, of team-a's instance
// "shared" (namespaced) or of the cluster-scoped one.
func teamUser(clusterInstance bool) client.Object {
	u := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: unitNS, Name: "app"}}
	if clusterInstance {
		u.Spec.ForProvider.ClusterInstance = unitInstance
	} else {
		u.Spec.ForProvider.Instance = unitInstance
	}
	u.SetConditions(xpv2.Available())
	return u
}

// cloud is what the emulator holds before the call, beyond instance "shared".
type cloud func(t *testing.T, emu *emulator.Server, svc *sqladmin.Service)

func existing(name string) cloud {
	return func(t *testing.T, emu *emulator.Server, svc *sqladmin.Service) {
		t.Helper()
		if _, err := svc.Databases.Insert(unitProject, unitInstance, &sqladmin.Database{Name: name}).Do(); err != nil {
			t.Fatalf("creating database %s: %v", name, err)
		}
		emu.FinishOperations()
	}
}

func fault(method string, count int) cloud {
	return func(t *testing.T, emu *emulator.Server, _ *sqladmin.Service) {
		t.Helper()
		if err := emu.InjectFault(emulator.Fault{Method: method, ServerErrorShare: 1, Count: count}); err != nil {
			t.Fatal(err)
		}
	}
}

// args are one case's world before the call.
type args struct {
	mg    database
	cloud []cloud
	users []client.Object
	// state is the instance's state as its object observed it (RUNNABLE
	// when empty).
	state string
	// owner is the login Observe found the database should belong to.
	owner string
	// unreachable gives the connection a SQL client whose instance is
	// unreachable; the connection has none otherwise.
	unreachable bool
	// opDelay is how long the emulator's database operations run (0: done
	// at once).
	opDelay time.Duration
	// listed puts the instance's databases listing at hand before the call;
	// the result's Listed is then what it shows after.
	listed bool
}

// result is what a call did.
type result struct {
	Err       string
	Exists    bool
	UpToDate  bool
	Condition string
	Pacing    []string
	Databases []string
	Calls     []string
	// Listed is what the listing at hand shows after the call (args.listed).
	Listed []string
}

func call(t *testing.T, a args, method string) result {
	t.Helper()
	switch mg := a.mg.(type) {
	case *v1alpha1.PostgresqlDatabase:
		return callKind(t, a, mg, method, types.NamespacedName{Name: unitInstance})
	case *nsv1alpha1.PostgresqlDatabase:
		return callKind(t, a, mg, method, mg.InstanceKey())
	}
	t.Fatalf("unknown kind %T", a.mg)
	return result{}
}

func callKind[T database](t *testing.T, a args, mg T, method string, instance types.NamespacedName) result {
	t.Helper()
	ctx := context.Background()
	emu := emulator.New(emulator.WithRequestBudget(0), emulator.WithDelays(0, 0, 0), emulator.WithUserOperationDelay(a.opDelay))
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Seed(unitProject, &sqladmin.DatabaseInstance{
		Name: unitInstance, DatabaseVersion: "POSTGRES_15", Region: "europe-west1", RootPassword: "root",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range a.cloud {
		c(t, emu, svc)
	}
	emu.ResetCounts()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, coordinationv1.AddToScheme, v1alpha1.SchemeBuilder.AddToScheme, nsv1alpha1.SchemeBuilder.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(a.users...).Build()
	state := a.state
	if state == "" {
		state = "RUNNABLE"
	}
	conn := &core.InstanceConnection{
		Service: svc, Project: unitProject, Instance: unitInstance, Source: "pc",
		Observed: v1alpha1.PostgresqlInstanceObservation{State: state, ConnectionName: unitProject + ":europe-west1:" + unitInstance, PublicIP: "127.0.0.2"},
	}
	if a.unreachable {
		d := objecttest.RefusingDialer{Addr: objecttest.ClosedAddress(t)}
		conn.NewSQL = func(context.Context) (*pgsql.Client, error) {
			return pgsql.New(d, conn.Observed.ConnectionName, "root", pgsql.WithConnectTimeout(5*time.Second)), nil
		}
	}
	rec := &objecttest.Marks{}
	e := &external[T]{
		kube: kube, conn: conn, lists: listcache.New(func() time.Duration { return time.Minute }),
		pacer: rec, instance: instance, owner: a.owner,
		// Objects of these cases are made before the record began (no
		// creation time): they keep the databases they find, as before.
		holders: core.NewHolders(tenancy.NewRecords(kube, kube, "crossplane-system"), v1alpha1.PostgresqlDatabaseGroupVersionKind),
	}
	if a.listed {
		if _, _, err := e.lists.Databases(ctx, svc, e.key()); err != nil {
			t.Fatal(err)
		}
		emu.ResetCounts()
	}
	var r result
	switch method {
	case "Observe":
		o, oerr := e.Observe(ctx, mg)
		err, r.Exists, r.UpToDate = oerr, o.ResourceExists, o.ResourceUpToDate
	case "Create":
		_, err = e.Create(ctx, mg)
	case "Update":
		_, err = e.Update(ctx, mg)
	case "Delete":
		_, err = e.Delete(ctx, mg)
	}
	r.Err = objecttest.Shown(err)
	r.Condition, r.Calls = objecttest.Condition(mg), objecttest.Calls(emu.Requests())
	r.Pacing = rec.List()
	if a.listed {
		listed, _, err := e.lists.Databases(ctx, svc, e.key())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range listed {
			r.Listed = append(r.Listed, d.Name+" "+d.Charset+" "+d.Collation)
		}
		sort.Strings(r.Listed)
	}
	emu.FinishOperations()
	dbs, err := svc.Databases.List(unitProject, unitInstance).Do()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dbs.Items {
		r.Databases = append(r.Databases, d.Name+" "+d.Charset+" "+d.Collation)
	}
	sort.Strings(r.Databases)
	return r
}

// postgresOnly is what databases.list shows of a new instance.
var postgresOnly = []string{"postgres UTF8 en_US.UTF8"}

func withOrders() []string { return []string{"orders UTF8 en_US.UTF8", "postgres UTF8 en_US.UTF8"} }

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"InstanceNotReady": {
			reason: "A database is made only on a RUNNABLE instance: the condition says which instance holds it back.",
			args:   args{mg: ordersDB(), state: "PENDING_CREATE"},
			want: result{
				Err:       `PostgresqlInstance shared is not ready (Cloud SQL reports it PENDING_CREATE): the database is created once it is; this is retried`,
				Databases: postgresOnly,
				Pacing:    []string{"waiting"},
			},
		},
		"NamespacedInstanceNotReady": {
			reason: "A namespaced instance is named with its namespace.",
			args:   args{mg: teamDBOn(false), state: "PENDING_CREATE"},
			want: result{
				Err:       `PostgresqlInstance team-a/shared is not ready (Cloud SQL reports it PENDING_CREATE): the database is created once it is; this is retried`,
				Databases: postgresOnly,
				Pacing:    []string{"waiting"},
			},
		},
		"InstanceGoingWithTheDeletedDatabase": {
			reason: "A deleted database of an instance that is not running any more is gone with it.",
			args:   args{mg: ordersDB(deleted), state: "PENDING_DELETE"},
			want:   result{Databases: postgresOnly},
		},
		"ListingFails": {
			reason: "A failed databases.list is the reconcile's error.",
			args:   args{mg: ordersDB(), cloud: []cloud{fault(emulator.MethodDatabasesList, 1)}},
			want: result{
				Err:       "cannot list the databases of Cloud SQL instance shared in project unit-project: googleapi 500",
				Databases: postgresOnly, Calls: []string{emulator.MethodDatabasesList},
			},
		},
		"NoSuchDatabase": {
			reason: "A database that databases.list lacks does not exist: Create makes it.",
			args:   args{mg: ordersDB(dbNamed("orders_v2")), cloud: []cloud{existing("orders")}},
			want:   result{Databases: withOrders(), Calls: []string{emulator.MethodDatabasesList}},
		},
		"DeletedNeedsNoOwner": {
			reason: "A deleted database is deleted whatever its owner: no owner is read, no SQL runs.",
			args:   args{mg: ordersDB(deleted), cloud: []cloud{existing("orders")}},
			want:   result{Exists: true, UpToDate: true, Databases: withOrders(), Calls: []string{emulator.MethodDatabasesList}},
		},
		"OwnerMissing": {
			reason: "An owner that does not exist is named in the error.",
			args:   args{mg: ordersDB(), cloud: []cloud{existing("orders")}},
			want: result{
				Err:       `cannot get PostgresqlUser app named by spec.forProvider.owner: create it, or name an existing one: postgresqlusers.cloudsql.travelaudience.com "app" not found`,
				Exists:    false,
				Databases: withOrders(), Calls: []string{emulator.MethodDatabasesList},
			},
		},
		"OwnerOfAnotherInstance": {
			reason: "An owner of another instance cannot own a database of this one.",
			args:   args{mg: ordersDB(), cloud: []cloud{existing("orders")}, users: []client.Object{clusterUser("other", true, "")}},
			want: result{
				Err:       "PostgresqlUser app named by spec.forProvider.owner belongs to PostgresqlInstance other, not to shared: name a user of this database's instance",
				Databases: withOrders(), Calls: []string{emulator.MethodDatabasesList},
			},
		},
		"NamespacedOwnerOfTheNamespacesInstance": {
			reason: "A namespaced owner on its namespace's instance cannot own a database of the cluster-scoped instance of the same name.",
			args:   args{mg: teamDB(), cloud: []cloud{existing("orders")}, users: []client.Object{teamUser(false)}},
			want: result{
				Err:       "PostgresqlUser app named by spec.forProvider.owner belongs to PostgresqlInstance team-a/shared, not to shared: name a user of this database's instance",
				Databases: withOrders(), Calls: []string{emulator.MethodDatabasesList},
			},
		},
		"OwnerNotReady": {
			reason: "The database waits for its owner's login.",
			args:   args{mg: ordersDB(), cloud: []cloud{existing("orders")}, users: []client.Object{clusterUser(unitInstance, false, "")}},
			want: result{
				Err:       "PostgresqlUser app named by spec.forProvider.owner is not ready: the database is given to its login once it is; this is retried",
				Databases: withOrders(), Calls: []string{emulator.MethodDatabasesList},
				Pacing: []string{"waiting"},
			},
		},
		"InstanceUnreachable": {
			reason: "An instance that SQL cannot reach is a clear error, and the database comes back at the poll interval.",
			args: args{
				mg: teamDB(), cloud: []cloud{existing("orders")}, users: []client.Object{teamUser(true)}, unreachable: true,
			},
			want: result{
				Err:       `cannot read the owner and privileges of database orders on Cloud SQL instance shared: cannot read database "orders": unreachable`,
				Pacing:    []string{"stalled"},
				Databases: withOrders(), Calls: []string{emulator.MethodDatabasesList},
			},
		},
		"NoSQL": {
			reason: "A connection that cannot run SQL is an error, not a panic, when the owner's database must be read.",
			args:   args{mg: teamDB(), cloud: []cloud{existing("orders")}, users: []client.Object{teamUser(true)}},
			want: result{
				Err:       "the provider has no way to run SQL on Cloud SQL instance shared: this is a bug of the provider's, please report it",
				Databases: withOrders(), Calls: []string{emulator.MethodDatabasesList},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := call(t, tc.args, "Observe")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nObserve(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// teamDBOn is teamDB on team-a's instance "shared", or the cluster-scoped one.
func teamDBOn(clusterInstance bool) *nsv1alpha1.PostgresqlDatabase {
	d := teamDB()
	if !clusterInstance {
		d.Spec.ForProvider.ClusterInstance, d.Spec.ForProvider.Instance = "", unitInstance
	}
	return d
}

func TestCreate(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"Creates": {
			reason: "A database is created with its charset and collation.",
			args:   args{mg: ordersDB()},
			want:   result{Pacing: []string{"busy", "made"}, Databases: withOrders(), Calls: []string{emulator.MethodDatabasesInsert}},
		},
		"JoinsTheListingAsCloudSQLListsIt": {
			reason: "A database made without a charset or collation (stored before the API had defaults) joins the listing at hand with Cloud SQL's defaults, as the next listing shows it, once.",
			args: args{mg: ordersDB(func(d *v1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.Charset, d.Spec.ForProvider.Collation = "", ""
			}), listed: true},
			want: result{
				Pacing: []string{"busy", "made"}, Databases: withOrders(), Calls: []string{emulator.MethodDatabasesInsert},
				Listed: withOrders(),
			},
		},
		"CreateStillRunning": {
			reason: "An insert whose operation still runs is not known made: the next observation lists again, at the usual priority.",
			args:   args{mg: ordersDB(), opDelay: time.Minute},
			want:   result{Pacing: []string{"busy"}, Databases: withOrders(), Calls: []string{emulator.MethodDatabasesInsert}},
		},
		"NamedDatabase": {
			reason: "spec.forProvider.name, not metadata.name, is the database made.",
			args:   args{mg: ordersDB(dbNamed("orders_v2"))},
			want: result{
				Pacing: []string{"busy", "made"}, Databases: []string{"orders_v2 UTF8 en_US.UTF8", "postgres UTF8 en_US.UTF8"},
				Calls: []string{emulator.MethodDatabasesInsert},
			},
		},
		"DatabaseMadeOutsideTheProvider": {
			reason: "A database made by someone else after the listing that showed it absent is not this object's: its hold is let go, so that the next observation applies the import policy rather than giving the database to this object's owner.",
			args:   args{mg: ordersDB(), cloud: []cloud{existing("orders")}},
			want: result{
				Err: "database orders of Cloud SQL instance shared in project unit-project was made outside the provider while this object was creating it, so it is not this object's: " +
					"the next observation decides, by spec.tenancy.importPolicy of PostgresqlInstance shared, whether this object may import it",
				Pacing: []string{"busy"}, Databases: withOrders(), Calls: []string{emulator.MethodDatabasesInsert},
			},
		},
		"InsertFails": {
			reason: "A databases.insert answered 5xx is the reconcile's error, and the next attempt comes at the busy poll interval.",
			args:   args{mg: ordersDB(), cloud: []cloud{fault(emulator.MethodDatabasesInsert, 1)}},
			want: result{
				Err:    "cannot create database orders on Cloud SQL instance shared in project unit-project: googleapi 500",
				Pacing: []string{"busy", "retried"}, Databases: postgresOnly, Calls: []string{emulator.MethodDatabasesInsert},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := call(t, tc.args, "Create")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCreate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"NoOwner": {
			reason: "A database that names no owner stays as Cloud SQL made it.",
			args:   args{mg: ordersDB(unowned), cloud: []cloud{existing("orders")}},
			want:   result{Databases: withOrders()},
		},
		"OwnerUnreachable": {
			reason: "A database whose instance SQL cannot reach is a clear error, retried at the poll interval.",
			args:   args{mg: ordersDB(), cloud: []cloud{existing("orders")}, owner: "app", unreachable: true},
			want: result{
				Err:       `cannot give database orders to login app on Cloud SQL instance shared: cannot give database "orders" to role "app": unreachable`,
				Pacing:    []string{"busy", "stalled"},
				Databases: withOrders(),
			},
		},
		"NoSQL": {
			reason: "A connection that cannot run SQL is an error, not a panic.",
			args:   args{mg: ordersDB(), cloud: []cloud{existing("orders")}, owner: "app"},
			want: result{
				Err:       "the provider has no way to run SQL on Cloud SQL instance shared: this is a bug of the provider's, please report it",
				Pacing:    []string{"busy"},
				Databases: withOrders(),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := call(t, tc.args, "Update")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nUpdate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"Deletes": {
			reason: "A database is deleted.",
			args:   args{mg: ordersDB(deleted), cloud: []cloud{existing("orders")}},
			want:   result{Pacing: []string{"busy"}, Databases: postgresOnly, Calls: []string{emulator.MethodDatabasesDelete}},
		},
		"AlreadyGone": {
			reason: "A database deleted meanwhile is deleted.",
			args:   args{mg: ordersDB(deleted)},
			want:   result{Pacing: []string{"busy"}, Databases: postgresOnly, Calls: []string{emulator.MethodDatabasesDelete}},
		},
		"DeleteFails": {
			reason: "A failed databases.delete is the reconcile's error, which says what Cloud SQL refuses.",
			args:   args{mg: ordersDB(deleted), cloud: []cloud{existing("orders"), fault(emulator.MethodDatabasesDelete, 1)}},
			want: result{
				Err:    "cannot delete database orders from Cloud SQL instance shared in project unit-project: googleapi 500",
				Pacing: []string{"busy"}, Databases: withOrders(), Calls: []string{emulator.MethodDatabasesDelete},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := call(t, tc.args, "Delete")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDelete(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestConnectWithoutInstance(t *testing.T) {
	c := &connector[*v1alpha1.PostgresqlDatabase]{}
	_, err := c.Connect(context.Background(), ordersDB(func(d *v1alpha1.PostgresqlDatabase) { d.Spec.ForProvider.Instance = "" }))
	if diff := cmp.Diff(errNoInstance, objecttest.Shown(err)); diff != "" {
		t.Errorf("Connect(...): -want, +got:\n%s", diff)
	}
}

func TestGone(t *testing.T) {
	var g core.Released[*v1alpha1.PostgresqlDatabase]
	ctx := context.Background()
	o, err := g.Observe(ctx, ordersDB())
	if err != nil || o.ResourceExists {
		t.Errorf("Observe(...): a database of a gone instance is gone: %+v, %v", o, err)
	}
	if _, err := g.Create(ctx, ordersDB()); err != nil {
		t.Error(err)
	}
	if _, err := g.Update(ctx, ordersDB()); err != nil {
		t.Error(err)
	}
	if _, err := g.Delete(ctx, ordersDB()); err != nil {
		t.Error(err)
	}
	if err := g.Disconnect(ctx); err != nil {
		t.Error(err)
	}
}
