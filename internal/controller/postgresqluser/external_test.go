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

package postgresqluser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
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
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/listcache"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/pgsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/objecttest"
)

// These tests reach every branch of external that runs no SQL, and those
// whose SQL cannot reach the instance, against the emulator served by
// httptest and a fake API server for the connection secret. The branches
// whose SQL runs are told end to end, against the emulator's PostgreSQL, by
// the tests of package controller.

const (
	unitProject  = "unit-project"
	unitInstance = "shared"
	unitNS       = "team-a"
	ourUID       = "uid-user"
	storedPW     = "Stored0Password0Of0Thirty0Two0Ch"
	otherPW      = "Other0Password0Of0Thirty0Two0Cha"
)

type userMod func(*v1alpha1.PostgresqlUser)

// appUser is a cluster-scoped BUILT_IN PostgresqlUser "app" of instance
// "shared", its secret in team-a.
func appUser(mods ...userMod) *v1alpha1.PostgresqlUser {
	u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "app", UID: ourUID}}
	u.Spec.ForProvider.Instance = unitInstance
	u.Spec.ForProvider.Type = v1alpha1.UserTypeBuiltIn
	u.SetWriteConnectionSecretToReference(&xpv2.SecretReference{Namespace: unitNS, Name: "app-conn"})
	for _, m := range mods {
		m(u)
	}
	return u
}

func named(login string) userMod {
	return func(u *v1alpha1.PostgresqlUser) { u.Spec.ForProvider.Name = ptr.To(login) }
}

func serviceAccount(email string) userMod {
	return func(u *v1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.Type = v1alpha1.UserTypeCloudIAMServiceAccount
		u.Spec.ForProvider.IAMPrincipal = email
		u.SetWriteConnectionSecretToReference(nil)
	}
}

func noSecretRef(u *v1alpha1.PostgresqlUser) { u.SetWriteConnectionSecretToReference(nil) }

func deleted(u *v1alpha1.PostgresqlUser) {
	u.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
}

// cloud is what the emulator holds before the call, beyond instance "shared".
type cloud func(t *testing.T, emu *emulator.Server, svc *sqladmin.Service)

// login makes a user of instance "shared" with password.
func login(name, password string) cloud {
	return func(t *testing.T, _ *emulator.Server, svc *sqladmin.Service) {
		t.Helper()
		if _, err := svc.Users.Insert(unitProject, unitInstance, &sqladmin.User{Name: name, Password: password}).Do(); err != nil {
			t.Fatalf("creating login %s: %v", name, err)
		}
	}
}

// fault makes the emulator answer method 500 count times.
func fault(method string, count int) cloud {
	return func(t *testing.T, emu *emulator.Server, _ *sqladmin.Service) {
		t.Helper()
		if err := emu.InjectFault(emulator.Fault{Method: method, ServerErrorShare: 1, Count: count}); err != nil {
			t.Fatal(err)
		}
	}
}

// secret is the user's connection secret holding password, confirmed set
// unless unconfirmed, controlled by controller.
func secret(password string, unconfirmed bool, controller types.UID) client.Object {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: unitNS, Name: "app-conn",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1alpha1", Kind: "PostgresqlUser", Name: "app", UID: controller, Controller: ptr.To(true)}},
		},
		Type: resource.SecretTypeConnection,
		Data: map[string][]byte{cloudsql.ConnectionKeyPassword: []byte(password)},
	}
	if unconfirmed {
		s.Annotations = map[string]string{v1alpha1.AnnotationPasswordUnconfirmed: "true"}
	}
	return s
}

// args are one case's world before the call.
type args struct {
	mg      *v1alpha1.PostgresqlUser
	cloud   []cloud
	secrets []client.Object
	// state is the instance's state as its object observed it (RUNNABLE
	// when empty).
	state string
	// held records, before the call, that the object holds its login (an
	// earlier attempt claimed it).
	held bool
	// password and role are what Observe saw, for Update and Delete.
	password core.StoredPassword
	role     pgsql.RoleState
	// unreachable gives the connection a SQL client whose instance is
	// unreachable; the connection has none otherwise.
	unreachable bool
	// refused records that PostgreSQL refused storedPW for the object's
	// login before the call.
	refused bool
}

// result is what a call did: its answer, and what it left in the object,
// the pacing, the connection secret and Cloud SQL.
type result struct {
	Err       string
	Exists    bool
	UpToDate  bool
	Details   []string
	Condition string
	Pacing    []string
	Secret    string
	Login     string
	Calls     []string
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, coordinationv1.AddToScheme, v1alpha1.SchemeBuilder.AddToScheme, nsv1alpha1.SchemeBuilder.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// world is one case's emulator, fake API server and external client.
type world struct {
	emu  *emulator.Server
	svc  *sqladmin.Service
	kube client.Client
	rec  *objecttest.Marks
}

func newWorld(t *testing.T, a args) (*world, *external[*v1alpha1.PostgresqlUser]) {
	t.Helper()
	emu := emulator.New(emulator.WithRequestBudget(0), emulator.WithDelays(0, 0, 0))
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
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
	w := &world{emu: emu, svc: svc, rec: &objecttest.Marks{},
		kube: fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(a.secrets...).
			// owned lists through the index that the controller's setup registers.
			WithIndex(&v1alpha1.PostgresqlDatabase{}, core.FieldOwner, core.ReferrerKeys(core.OwnerOf)).
			WithIndex(&nsv1alpha1.PostgresqlDatabase{}, core.FieldOwner, core.ReferrerKeys(core.OwnerOf)).
			Build()}
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
		conn.NewDialer = func() (pgsql.Dialer, error) { return d, nil }
	}
	refused := &sync.Map{}
	if a.refused {
		refused.Store(refusedKey{uid: a.mg.GetUID(), login: cloudsql.UserName(a.mg.Settings(), a.mg.GetName())}, core.Fingerprint(a.mg, storedPW))
	}
	e := &external[*v1alpha1.PostgresqlUser]{
		kube: w.kube, conn: conn, lists: listcache.New(func() time.Duration { return time.Minute }),
		passwords: core.NewPasswords(w.kube, w.kube, v1alpha1.PostgresqlUserGroupVersionKind),
		pacer:     w.rec, instance: unitInstance, password: a.password, role: a.role, refused: refused,
		// Objects of these cases are made before the record began (no
		// creation time): they keep the logins they find, as before.
		holders: core.NewHolders(tenancy.NewRecords(w.kube, w.kube, "crossplane-system"), v1alpha1.PostgresqlUserGroupVersionKind),
	}
	if a.held {
		n := tenancy.Name{Kind: tenancy.KindLogin, Project: unitProject, Instance: unitInstance, Name: cloudsql.UserName(a.mg.Settings(), a.mg.GetName())}
		if _, err := tenancy.NewRecords(w.kube, w.kube, "crossplane-system").Claim(context.Background(), n, tenancy.HolderOf(a.mg, v1alpha1.PostgresqlUserGroupVersionKind), tenancy.Created); err != nil {
			t.Fatal(err)
		}
	}
	if a.role.Exists && a.mg != nil {
		// Update reads what Observe recorded of the login's privileges.
		obs := a.mg.Observation()
		obs.SuperuserMember, obs.CreateRole, obs.CreateDB = ptr.To(a.role.SuperuserMember), ptr.To(a.role.CreateRole), ptr.To(a.role.CreateDB)
	}
	return w, e
}

func call(t *testing.T, a args, method string) result {
	t.Helper()
	ctx := context.Background()
	w, e := newWorld(t, a)
	mg := a.mg
	var (
		r   result
		err error
	)
	switch method {
	case "Observe":
		o, oerr := e.Observe(ctx, mg)
		err, r.Exists, r.UpToDate = oerr, o.ResourceExists, o.ResourceUpToDate
		for k := range o.ConnectionDetails {
			r.Details = append(r.Details, k)
		}
		sort.Strings(r.Details)
	case "Create":
		_, err = e.Create(ctx, mg)
	case "Update":
		_, err = e.Update(ctx, mg)
	case "Delete":
		_, err = e.Delete(ctx, mg)
	}
	r.Err = objecttest.Shown(err)
	r.Condition, r.Calls = shownCondition(objecttest.Condition(mg)), objecttest.Calls(w.emu.Requests())
	r.Pacing = w.rec.List()
	r.Secret = secretState(t, w.kube, mg)
	r.Login = loginState(w, cloudsql.UserName(mg.Settings(), mg.GetName()), r.Secret)
	return r
}

// shownCondition cuts from a condition what an unreachable instance's
// error says of its address (a port that changes), as objecttest.Shown does
// from an error.
func shownCondition(c string) string {
	i, j := strings.Index(c, "cannot connect to Cloud SQL instance"), strings.Index(c, "; only an update")
	if i < 0 || j < i {
		return c
	}
	return c[:i] + "unreachable" + c[j:]
}

// secretState is the connection secret's password and whether it is
// confirmed set: "none", "stored", "other", "generated" (anything else),
// with " unconfirmed" when so marked.
func secretState(t *testing.T, kube client.Client, mg *v1alpha1.PostgresqlUser) string {
	t.Helper()
	ref := mg.ConnectionSecret()
	if ref == nil {
		return "none"
	}
	s := &corev1.Secret{}
	if err := kube.Get(context.Background(), types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		return "none"
	}
	pw := string(s.Data[cloudsql.ConnectionKeyPassword])
	state := "generated"
	switch pw {
	case storedPW:
		state = "stored"
	case otherPW:
		state = "other"
	case "":
		state = "empty"
	}
	if s.Annotations[v1alpha1.AnnotationPasswordUnconfirmed] == "true" {
		state += " unconfirmed"
	}
	if pw != "" && string(s.Data[cloudsql.ConnectionKeyUsername]) != "" && string(s.Data[cloudsql.ConnectionKeyPgpass]) == "" {
		state += " without pgpass"
	}
	return state
}

// loginState says whether the login exists on Cloud SQL and whose password
// it has: "absent", "the secret's", "other", or "unknown".
func loginState(w *world, name, secretState string) string {
	users, err := w.svc.Users.List(unitProject, unitInstance).Do()
	if err != nil {
		return "cannot list: " + err.Error()
	}
	found := false
	for _, u := range users.Items {
		found = found || u.Name == name
	}
	switch {
	case !found:
		return "absent"
	case w.emu.PasswordIs(unitProject, unitInstance, name, otherPW):
		return "other"
	case w.emu.PasswordIs(unitProject, unitInstance, name, storedPW):
		return "stored"
	}
	if strings.HasPrefix(secretState, "generated") {
		return "generated"
	}
	return "unknown"
}

// secretIsLogins checks that the secret's password is the login's.
func secretIsLogins(t *testing.T, w *world, mg *v1alpha1.PostgresqlUser) bool {
	t.Helper()
	ref := mg.ConnectionSecret()
	s := &corev1.Secret{}
	if err := w.kube.Get(context.Background(), types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		t.Fatal(err)
	}
	return w.emu.PasswordIs(unitProject, unitInstance, cloudsql.UserName(mg.Settings(), mg.GetName()), string(s.Data[cloudsql.ConnectionKeyPassword]))
}

const listUsersFailed = "cannot list the users of Cloud SQL instance shared in project unit-project: googleapi 500"

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"InstanceNotReady": {
			reason: "A login is made only on a RUNNABLE instance: the condition says which instance holds it back.",
			args:   args{mg: appUser(), state: "PENDING_CREATE"},
			want: result{
				Err:    `PostgresqlInstance shared is not ready (Cloud SQL reports it PENDING_CREATE): the login is created once it is; this is retried`,
				Secret: "none", Login: "absent",
				Pacing: []string{"waiting"},
			},
		},
		"InstanceGoingWithTheDeletedUser": {
			reason: "A deleted user of an instance that is not running any more is gone with it.",
			args:   args{mg: appUser(deleted), state: "PENDING_DELETE"},
			want:   result{Secret: "none", Login: "absent"},
		},
		"ListingFails": {
			reason: "A failed users.list is the reconcile's error.",
			args:   args{mg: appUser(), cloud: []cloud{fault(emulator.MethodUsersList, 1)}},
			want:   result{Err: listUsersFailed, Secret: "none", Login: "absent", Calls: []string{emulator.MethodUsersList}},
		},
		"NoSuchLogin": {
			reason: "A login that users.list lacks does not exist: Create makes it.",
			args:   args{mg: appUser(), cloud: []cloud{login("someone-else", otherPW)}},
			want:   result{Secret: "none", Login: "absent", Calls: []string{emulator.MethodUsersList}},
		},
		"NamedLogin": {
			reason: "spec.forProvider.name, not metadata.name, is the login looked for.",
			args:   args{mg: appUser(named("app_login")), cloud: []cloud{login("app", otherPW)}},
			want:   result{Secret: "none", Login: "absent", Calls: []string{emulator.MethodUsersList}},
		},
		"SecretOfAnotherObject": {
			reason: "A connection secret that another object controls is neither read nor used.",
			args: args{
				mg: appUser(), cloud: []cloud{login("app", otherPW)},
				secrets: []client.Object{secret(storedPW, false, "uid-someone-else")},
			},
			want: result{
				Err:    "connection secret team-a/app-conn belongs to another object: point spec.writeConnectionSecretToRef at a secret of its own",
				Secret: "stored", Login: "other", Calls: []string{emulator.MethodUsersList},
			},
		},
		"InstanceUnreachable": {
			reason: "An instance that SQL cannot reach is a clear error, and the user comes back at the poll interval, not in the error backoff.",
			args: args{
				mg: appUser(), cloud: []cloud{login("app", storedPW)},
				secrets: []client.Object{secret(storedPW, false, ourUID)}, unreachable: true,
			},
			want: result{
				Err:    "cannot read the privileges of login app on Cloud SQL instance shared: cannot read role \"app\": unreachable",
				Pacing: []string{"stalled"}, Secret: "stored", Login: "stored", Calls: []string{emulator.MethodUsersList},
			},
		},
		"UnconfirmedWithoutUpdate": {
			reason: "A login whose password is not known to be set, and whose policies leave out Update (the only way to set it), says so and what to do, rather than wait silently.",
			args: args{
				mg: appUser(func(u *v1alpha1.PostgresqlUser) {
					u.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionDelete}
				}),
				cloud:   []cloud{login("app", otherPW)},
				secrets: []client.Object{secret(storedPW, true, ourUID)},
				// PostgreSQL cannot be asked whether the login, which the
				// object made, has it.
				unreachable: true, held: true,
			},
			want: result{
				Exists: true,
				Condition: "Creating: login app exists on Cloud SQL instance shared, but the password in its connection secret team-a/app-conn is not known to be the one Cloud SQL has (the answer to its insert was lost, a retried insert found the login made, or the password was edited in the secret), " +
					"and PostgreSQL could not be asked: cannot log in as \"app\" to check its password: unreachable; " +
					"only an update can set it, and spec.managementPolicies leave out Update: add Update (or \"*\") to spec.managementPolicies, and the provider sets it, or put the login's current password in the secret",
				Pacing: []string{"stalled"}, Secret: "stored unconfirmed", Login: "other", Calls: []string{emulator.MethodUsersList},
			},
		},
		"UnconfirmedWithoutUpdateNotMade": {
			reason: "A login the object took over rather than made is not logged in to with its secret's password: that would let a secret guess someone else's password.",
			args: args{
				mg: appUser(func(u *v1alpha1.PostgresqlUser) {
					u.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionDelete}
				}),
				cloud:       []cloud{login("app", otherPW)},
				secrets:     []client.Object{secret(storedPW, true, ourUID)},
				unreachable: true,
			},
			want: result{
				Exists: true,
				Condition: "Creating: login app exists on Cloud SQL instance shared, but the password in its connection secret team-a/app-conn is not known to be the one Cloud SQL has (the answer to its insert was lost, a retried insert found the login made, or the password was edited in the secret); " +
					"only an update can set it, and spec.managementPolicies leave out Update: add Update (or \"*\") to spec.managementPolicies, and the provider sets it, or put the login's current password in the secret",
				Secret: "stored unconfirmed", Login: "other", Calls: []string{emulator.MethodUsersList},
			},
		},
		"UnconfirmedWithoutUpdateRefused": {
			reason: "A password that PostgreSQL refused is not tried again until it changes: a failed login at every poll would look like an attack.",
			args: args{
				mg: appUser(func(u *v1alpha1.PostgresqlUser) {
					u.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionDelete}
				}),
				cloud:   []cloud{login("app", otherPW)},
				secrets: []client.Object{secret(storedPW, true, ourUID)},
				refused: true, unreachable: true,
			},
			want: result{
				Exists: true,
				Condition: "Creating: login app exists on Cloud SQL instance shared, but the password in its connection secret team-a/app-conn is not known to be the one Cloud SQL has (the answer to its insert was lost, a retried insert found the login made, or the password was edited in the secret), " +
					"and PostgreSQL refuses it; " +
					"only an update can set it, and spec.managementPolicies leave out Update: add Update (or \"*\") to spec.managementPolicies, and the provider sets it, or put the login's current password in the secret",
				Secret: "stored unconfirmed", Login: "other", Calls: []string{emulator.MethodUsersList},
			},
		},
		"ImportWithoutSecret": {
			reason: "An observed login with no connection secret has no password to confirm: it is Available, and not told to add Update.",
			args: args{
				mg: appUser(noSecretRef, func(u *v1alpha1.PostgresqlUser) {
					u.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
				}),
				cloud: []cloud{login("app", otherPW)},
			},
			want: result{Exists: true, UpToDate: true, Condition: "Available: ", Secret: "none", Login: "other", Calls: []string{emulator.MethodUsersList}},
		},
		"NoSQL": {
			reason: "A connection that cannot run SQL is an error, not a panic.",
			args:   args{mg: appUser(serviceAccount("app@p.iam.gserviceaccount.com")), cloud: []cloud{iamLogin("app@p.iam", "CLOUD_IAM_SERVICE_ACCOUNT")}},
			want: result{
				Err:    "the provider has no way to run SQL on Cloud SQL instance shared: this is a bug of the provider's, please report it",
				Secret: "none", Login: "unknown", Calls: []string{emulator.MethodUsersList},
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

func iamLogin(name, typ string) cloud {
	return func(t *testing.T, _ *emulator.Server, svc *sqladmin.Service) {
		t.Helper()
		if _, err := svc.Users.Insert(unitProject, unitInstance, &sqladmin.User{Name: name, Type: typ}).Do(); err != nil {
			t.Fatalf("creating login %s: %v", name, err)
		}
	}
}

func TestCreate(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"NewLogin": {
			reason: "A new login gets a generated password, stored before users.insert and confirmed after it.",
			args:   args{mg: appUser()},
			want: result{
				Pacing: []string{"busy", "made"}, Secret: "generated", Login: "generated",
				Calls: []string{emulator.MethodUsersInsert},
			},
		},
		"StoredPasswordReused": {
			reason: "A password stored by an earlier attempt is the one given to Cloud SQL: the secret and the login never differ.",
			args:   args{mg: appUser(), secrets: []client.Object{secret(storedPW, true, ourUID)}},
			want: result{
				Pacing: []string{"busy", "made"}, Secret: "stored", Login: "stored",
				Calls: []string{emulator.MethodUsersInsert},
			},
		},
		"InsertFails": {
			reason: "A users.insert answered 5xx leaves the stored password unconfirmed, for the next attempt to use, which comes at the busy poll interval.",
			args: args{
				mg: appUser(), secrets: []client.Object{secret(storedPW, true, ourUID)},
				cloud: []cloud{fault(emulator.MethodUsersInsert, 1)},
			},
			want: result{
				Err:    "cannot create login app on Cloud SQL instance shared in project unit-project: googleapi 500",
				Pacing: []string{"busy", "retried"}, Secret: "stored unconfirmed", Login: "absent",
				Calls: []string{emulator.MethodUsersInsert},
			},
		},
		"LoginMadeOutsideTheProvider": {
			reason: "A login made by someone else after the listing that showed it absent (users.insert answers 409) is not this object's: its hold is let go, so that the next observation applies the import policy, and its password stays as it is.",
			args: args{
				mg: appUser(), secrets: []client.Object{secret(storedPW, true, ourUID)},
				cloud: []cloud{login("app", otherPW)},
			},
			want: result{
				Err: "login app of Cloud SQL instance shared in project unit-project was made outside the provider while this object was creating it, so it is not this object's: " +
					"the next observation decides, by spec.tenancy.importPolicy of PostgresqlInstance shared, whether this object may import it",
				Pacing: []string{"busy"}, Secret: "stored unconfirmed", Login: "other",
				Calls: []string{emulator.MethodUsersInsert},
			},
		},
		"LoginMadeByAnEarlierAttempt": {
			reason: "A login that exists already (409) and that this object held before this create was made by an earlier attempt that did not learn so: it is this object's, its password unknown, so the stored one stays unconfirmed and Update sets it.",
			args: args{
				mg: appUser(), secrets: []client.Object{secret(storedPW, true, ourUID)}, held: true,
				cloud: []cloud{login("app", otherPW)},
			},
			want: result{
				Pacing: []string{"busy"}, Secret: "stored unconfirmed", Login: "other",
				Calls: []string{emulator.MethodUsersInsert},
			},
		},
		"NoConnectionSecret": {
			reason: "A BUILT_IN login needs a connection secret to keep its password in: none is made without it.",
			args:   args{mg: appUser(noSecretRef)},
			want: result{
				Err:    "spec.writeConnectionSecretToRef is not set: a generated password is stored there before Cloud SQL is given it, so that it is never lost; name a secret there",
				Secret: "none", Login: "absent",
			},
		},
		"SecretOfAnotherObject": {
			reason: "A connection secret that another object controls is not overwritten.",
			args:   args{mg: appUser(), secrets: []client.Object{secret(otherPW, false, "uid-someone-else")}},
			want: result{
				Err:    "connection secret team-a/app-conn belongs to another object: point spec.writeConnectionSecretToRef at a secret of its own",
				Secret: "other", Login: "absent",
			},
		},
		"IAMServiceAccount": {
			reason: "An IAM login has no password: users.insert gets its type and the email without .gserviceaccount.com.",
			args:   args{mg: appUser(serviceAccount("app@p.iam.gserviceaccount.com"))},
			want: result{
				Pacing: []string{"busy", "made"}, Secret: "none", Login: "unknown",
				Calls: []string{emulator.MethodUsersInsert},
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

func TestCreateGivesTheStoredPassword(t *testing.T) {
	w, e := newWorld(t, args{mg: appUser()})
	mg := appUser()
	if _, err := e.Create(context.Background(), mg); err != nil {
		t.Fatal(err)
	}
	if !secretIsLogins(t, w, mg) {
		t.Error("Create(...): the login's password is not the one in its connection secret")
	}
}

func TestUpdate(t *testing.T) {
	leastPrivileged := pgsql.RoleState{Exists: true}
	asCreated := pgsql.RoleState{Exists: true, SuperuserMember: true, CreateRole: true, CreateDB: true}
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"NothingToDo": {
			reason: "A least-privileged login whose password is confirmed needs nothing.",
			args: args{
				mg: appUser(), cloud: []cloud{login("app", storedPW)}, secrets: []client.Object{secret(storedPW, false, ourUID)},
				password: core.StoredPassword{Value: storedPW}, role: leastPrivileged,
			},
			want: result{Pacing: []string{"busy"}, Secret: "stored", Login: "stored"},
		},
		"UnconfirmedPasswordIsSet": {
			reason: "A stored password not known to be set (a crash after users.insert, or a login made elsewhere) is set, and stays unconfirmed until its operation is seen done.",
			args: args{
				mg: appUser(), cloud: []cloud{login("app", otherPW)}, secrets: []client.Object{secret(storedPW, true, ourUID)},
				password: core.StoredPassword{Value: storedPW, Unconfirmed: true}, role: leastPrivileged,
			},
			want: result{Pacing: []string{"busy"}, Secret: "stored unconfirmed", Login: "stored", Calls: []string{emulator.MethodUsersUpdate}},
		},
		"SettingThePasswordFails": {
			reason: "A failed users.update leaves the password unconfirmed.",
			args: args{
				mg: appUser(), cloud: []cloud{login("app", otherPW), fault(emulator.MethodUsersUpdate, 1)},
				secrets:  []client.Object{secret(storedPW, true, ourUID)},
				password: core.StoredPassword{Value: storedPW, Unconfirmed: true}, role: leastPrivileged,
			},
			want: result{
				Err:    "cannot set the password of login app on Cloud SQL instance shared in project unit-project: googleapi 500",
				Pacing: []string{"busy"}, Secret: "stored unconfirmed", Login: "other", Calls: []string{emulator.MethodUsersUpdate},
			},
		},
		"IAMLoginHasNoPassword": {
			reason: "An IAM login's password is never set.",
			args: args{
				mg: appUser(serviceAccount("app@p.iam.gserviceaccount.com")), cloud: []cloud{iamLogin("app@p.iam", "CLOUD_IAM_SERVICE_ACCOUNT")},
				role: leastPrivileged,
			},
			want: result{Pacing: []string{"busy"}, Secret: "none", Login: "unknown"},
		},
		"LeastPrivilegeUnreachable": {
			reason: "A login that keeps what Cloud SQL gave it, on an instance SQL cannot reach, is a clear error, retried at the poll interval.",
			args: args{
				mg: appUser(), cloud: []cloud{login("app", storedPW)}, secrets: []client.Object{secret(storedPW, false, ourUID)},
				password: core.StoredPassword{Value: storedPW}, role: asCreated, unreachable: true,
			},
			want: result{
				Err:    `cannot give login app least privilege on Cloud SQL instance shared: cannot take cloudsqlsuperuser, CREATEDB and CREATEROLE from role "app": unreachable`,
				Pacing: []string{"busy", "stalled"}, Secret: "stored", Login: "stored",
			},
		},
		"LeastPrivilegeWithoutSQL": {
			reason: "A connection that cannot run SQL is an error, not a panic.",
			args: args{
				mg: appUser(), cloud: []cloud{login("app", storedPW)}, secrets: []client.Object{secret(storedPW, false, ourUID)},
				password: core.StoredPassword{Value: storedPW}, role: asCreated,
			},
			want: result{
				Err:    "the provider has no way to run SQL on Cloud SQL instance shared: this is a bug of the provider's, please report it",
				Pacing: []string{"busy"}, Secret: "stored", Login: "stored",
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
		"OwnsDatabases": {
			reason: "A login that owns databases is not dropped: the condition names them.",
			args: args{
				mg: appUser(deleted), cloud: []cloud{login("app", storedPW)},
				role: pgsql.RoleState{Exists: true, Databases: []string{"orders", "stock"}},
			},
			want: result{
				Err:    "login app still owns database(s) orders, stock on Cloud SQL instance shared: delete their PostgresqlDatabases first (or give them another owner); the login is dropped once it owns none",
				Secret: "none", Login: "stored",
				Pacing: []string{"waiting"},
			},
		},
		"Deletes": {
			reason: "A login that owns nothing is deleted.",
			args:   args{mg: appUser(deleted), cloud: []cloud{login("app", storedPW)}, role: pgsql.RoleState{Exists: true}},
			want:   result{Pacing: []string{"busy"}, Secret: "none", Login: "absent", Calls: []string{emulator.MethodUsersDelete}},
		},
		"AlreadyGone": {
			reason: "A login deleted meanwhile is deleted.",
			args:   args{mg: appUser(deleted), role: pgsql.RoleState{Exists: true}},
			want:   result{Pacing: []string{"busy"}, Secret: "none", Login: "absent", Calls: []string{emulator.MethodUsersDelete}},
		},
		"DeleteFails": {
			reason: "A failed users.delete is the reconcile's error.",
			args: args{
				mg: appUser(deleted), cloud: []cloud{login("app", storedPW), fault(emulator.MethodUsersDelete, 1)},
				role: pgsql.RoleState{Exists: true},
			},
			want: result{
				Err:    "cannot delete login app from Cloud SQL instance shared in project unit-project: googleapi 500",
				Pacing: []string{"busy"}, Secret: "none", Login: "stored", Calls: []string{emulator.MethodUsersDelete},
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
	c := &connector[*v1alpha1.PostgresqlUser]{}
	mg := appUser()
	mg.Spec.ForProvider.Instance = ""
	_, err := c.Connect(context.Background(), mg)
	if diff := cmp.Diff(errNoInstance, objecttest.Shown(err)); diff != "" {
		t.Errorf("Connect(...): -want, +got:\n%s", diff)
	}
}

func TestGone(t *testing.T) {
	var g core.Released[*v1alpha1.PostgresqlUser]
	ctx := context.Background()
	o, err := g.Observe(ctx, appUser())
	if err != nil || o.ResourceExists {
		t.Errorf("Observe(...): a user of a gone instance is gone: %+v, %v", o, err)
	}
	if _, err := g.Create(ctx, appUser()); err != nil {
		t.Error(err)
	}
	if _, err := g.Update(ctx, appUser()); err != nil {
		t.Error(err)
	}
	if _, err := g.Delete(ctx, appUser()); err != nil {
		t.Error(err)
	}
	if err := g.Disconnect(ctx); err != nil {
		t.Error(err)
	}
}

func TestOwnedReadsTheUsersDatabasesOnly(t *testing.T) {
	db := func(name, owner, instance string) *v1alpha1.PostgresqlDatabase {
		d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: name}}
		d.Spec.ForProvider.Owner, d.Spec.ForProvider.Instance = owner, instance
		return d
	}
	nsdb := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: unitNS, Name: "team"}}
	nsdb.Spec.ForProvider.Owner, nsdb.Spec.ForProvider.ClusterInstance = "app", unitInstance
	named := db("billing-db", "app", unitInstance)
	named.Spec.ForProvider.Name = ptr.To("billing")
	w, e := newWorld(t, args{mg: appUser()})
	for _, o := range []client.Object{
		db("orders", "app", unitInstance), named,
		db("stock", "other", unitInstance), // another owner
		db("elsewhere", "app", "other-pg"), // another instance
		nsdb,                               // another scope
	} {
		if err := w.kube.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.owned(context.Background(), appUser())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"billing", "orders"}, got); diff != "" {
		t.Errorf("owned(...): -want, +got:\n%s", diff)
	}

	// A namespaced user sees the databases of its own namespace only, of
	// its own instance.
	nsdb2 := func(ns, name, owner string) *nsv1alpha1.PostgresqlDatabase {
		d := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		d.Spec.ForProvider.Owner, d.Spec.ForProvider.ClusterInstance = owner, unitInstance
		return d
	}
	local := nsdb2(unitNS, "local", "app")
	local.Spec.ForProvider.ClusterInstance, local.Spec.ForProvider.Instance = "", unitInstance // its namespace's instance
	for _, o := range []client.Object{
		nsdb2(unitNS, "ledger", "app"),
		nsdb2(unitNS, "other-owner", "other"),
		nsdb2("elsewhere", "foreign", "app"), // another namespace's user of the same name
		local,                                // another instance
	} {
		if err := w.kube.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	nsUser := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: unitNS, Name: "app"}}
	nsUser.Spec.ForProvider.ClusterInstance = unitInstance
	nse := &external[*nsv1alpha1.PostgresqlUser]{kube: w.kube}
	got, err = nse.owned(context.Background(), nsUser)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ledger", "team"}, got); diff != "" {
		t.Errorf("owned(...) of a namespaced user: -want, +got:\n%s", diff)
	}
}

// A login that appeared between the listing and users.insert is not held
// afterwards: the next observation finds it with no holder, and the
// instance's import policy decides (a namespaced object is refused under the
// default). One this object held before the create stays its own.
func TestCreateLetsGoOfALoginMadeElsewhere(t *testing.T) {
	for name, held := range map[string]bool{"MadeElsewhere": false, "MadeByAnEarlierAttempt": true} {
		t.Run(name, func(t *testing.T) {
			mg := appUser()
			// The object exists, as a live holder does.
			w, e := newWorld(t, args{mg: mg, held: held, secrets: []client.Object{secret(storedPW, true, ourUID), appUser()}, cloud: []cloud{login("app", otherPW)}})
			_, _ = e.Create(context.Background(), mg)
			n := tenancy.Name{Kind: tenancy.KindLogin, Project: unitProject, Instance: unitInstance, Name: "app"}
			holder, err := tenancy.NewRecords(w.kube, w.kube, "crossplane-system").Holder(context.Background(), n, tenancy.Holder{UID: "uid-asking"})
			if err != nil {
				t.Fatal(err)
			}
			if got := holder != nil; got != held {
				t.Errorf("Create(...) of a login that existed: held afterwards = %v, want %v", got, held)
			}
		})
	}
}

// An insert answered after the reconcile's deadline made the login with the
// stored password: that password is recorded as set, not left unconfirmed
// for an update that the object's policies may not allow.
func TestCreateRecordsThePasswordOfAnInsertAnsweredAfterTheDeadline(t *testing.T) {
	g := NewWithT(t)
	w, e := newWorld(t, args{mg: appUser()})
	ctx := deadlineDuring(t, w, e, http.MethodPost)

	mg := appUser()
	_, err := e.Create(ctx, mg)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(ctx.Err()).To(MatchError(context.Canceled), "the deadline passed during the insert")
	g.Expect(secretState(t, w.kube, mg)).To(Equal("generated"), "the password is recorded as set")
	g.Expect(secretIsLogins(t, w, mg)).To(BeTrue())
}

// An update answered after the reconcile's deadline is recorded with its
// operation all the same: the next observation confirms the password from
// that operation, rather than sending it again.
func TestUpdateRecordsTheOperationOfAnUpdateAnsweredAfterTheDeadline(t *testing.T) {
	g := NewWithT(t)
	a := args{
		mg: appUser(), cloud: []cloud{login("app", otherPW)}, secrets: []client.Object{secret(storedPW, true, ourUID)},
		password: core.StoredPassword{Value: storedPW, Unconfirmed: true}, role: pgsql.RoleState{Exists: true},
	}
	w, e := newWorld(t, a)
	ctx := deadlineDuring(t, w, e, http.MethodPut)

	_, err := e.Update(ctx, a.mg)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(ctx.Err()).To(MatchError(context.Canceled), "the deadline passed during the update")
	g.Expect(secretState(t, w.kube, a.mg)).To(Equal("stored unconfirmed"))
	s := &corev1.Secret{}
	g.Expect(w.kube.Get(context.Background(), types.NamespacedName{Namespace: a.mg.ConnectionSecret().Namespace, Name: a.mg.ConnectionSecret().Name}, s)).To(Succeed())
	g.Expect(s.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationPasswordOperation, Not(BeEmpty())), "the users.update operation is recorded")
	g.Expect(secretIsLogins(t, w, a.mg)).To(BeTrue())
}

// deadlineDuring gives e a Cloud SQL whose answer to the first request of
// httpMethod comes after the returned context (the reconcile's) is done, and
// an API server that, like the real one, refuses a request whose context is
// done. The budget's transport awaits a sent write's answer past the
// deadline, as the provider's does.
func deadlineDuring(t *testing.T, w *world, e *external[*v1alpha1.PostgresqlUser], httpMethod string) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == httpMethod {
			// The reconcile's deadline passes while Cloud SQL answers.
			cancel()
			time.Sleep(200 * time.Millisecond)
		}
		w.emu.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"),
		option.WithHTTPClient(&http.Client{Transport: budget.NewTransport(nil, budget.PerMinute(1000))}))
	if err != nil {
		t.Fatal(err)
	}
	e.conn.Service = svc
	done := func(ctx context.Context) error { return ctx.Err() }
	kube := interceptor.NewClient(w.kube.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			if err := done(ctx); err != nil {
				return err
			}
			return c.Get(ctx, k, o, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if err := done(ctx); err != nil {
				return err
			}
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			if err := done(ctx); err != nil {
				return err
			}
			return c.Update(ctx, o, opts...)
		},
	})
	e.passwords = core.NewPasswords(kube, kube, v1alpha1.PostgresqlUserGroupVersionKind)
	return ctx
}
