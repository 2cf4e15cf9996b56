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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
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
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// These tests reach every branch of external, each against the emulator served
// by httptest and a fake API server for the connection secret: no control plane,
// milliseconds a case. The envtest suite tells the same stories end to end.

const (
	unitProject   = "unit-project"
	unitNamespace = "crossplane-system"
	teamNamespace = "team-a"
	ourUID        = "uid-ours"
	otherUID      = "uid-other"
	storedPW      = "Stored0Password0Of0Thirty0Two0Ch"
	editedPW      = "Edited0Password0Of0Thirty0Two0Ch"
)

var errBoom = errors.New("boom")

// Values that most results share: Ready=Available, and our running instance
// whose postgres user has the connection secret's password.
var available = []string{"Ready=Available"}

const oursWithSecretPassword = "RUNNABLE, owner uid-ours, postgres has the secret's password"

// published are the connection details Observe publishes: all but the password
// and its pgpass entry, which only the secret store writes.
var published = []string{
	cloudsql.ConnectionKeyConnectionName, cloudsql.ConnectionKeyEndpoint, cloudsql.ConnectionKeyPort, cloudsql.ConnectionKeyPrivateIP,
	cloudsql.ConnectionKeyPublicIP, cloudsql.ConnectionKeyServerCACert, cloudsql.ConnectionKeyServerCAExpirationTime, cloudsql.ConnectionKeyUsername,
}

// The password store's messages, as a user reads them.
const (
	errCompleteSecret     = "cannot write the connection details into connection secret %s/%s (of type %s)"
	errNoConnectionSecret = "spec.writeConnectionSecretToRef is not set: a generated password is stored there before Cloud SQL is given it, so that it is never lost; name a secret there"
	errPasswordUnusable   = "connection secret %s/%s: key password holds a line break or a NUL character, which a .pgpass entry (key pgpass) cannot carry: " +
		"store a password without them there, or remove the key to have the provider set a new one; this is retried at the poll interval"
	errSecretNotOurs = "connection secret %s/%s belongs to another object: point spec.writeConnectionSecretToRef at a secret of its own"
	errWriteSecret   = "cannot store the password of user %s in connection secret %s/%s"
)

// apiError is how a result shows an error of the Cloud SQL Admin API: its code.
func apiError(code int) error { return errors.Errorf("googleapi %d", code) }

// unitParams is a PostgresqlInstance's forProvider after the API server applied
// the CRD's defaults and the provider late-initialised the data safety its
// instance was created with.
func unitParams() v1alpha1.PostgresqlInstanceParameters {
	return v1alpha1.PostgresqlInstanceParameters{
		Version:      "18",
		Edition:      v1alpha1.EditionEnterprise,
		Availability: v1alpha1.Availability{Type: v1alpha1.AvailabilityZonal},
		Backups: v1alpha1.Backups{
			Daily:          v1alpha1.DailyBackups{Enabled: ptr.To(true), StartTime: "00:00"},
			RetainOnDelete: ptr.To(true),
			FinalBackup:    &v1alpha1.FinalBackup{Enabled: true, RetentionDays: v1alpha1.DefaultFinalBackupRetentionDays},
		},
		DeletionProtection: &v1alpha1.DeletionProtection{Enabled: true},
		Location:           v1alpha1.Location{Region: "europe-west1", Zone: v1alpha1.Any},
		Maintenance:        v1alpha1.Maintenance{Day: v1alpha1.Any},
		Networking:         v1alpha1.Networking{PublicIP: v1alpha1.PublicIP{Enabled: true}},
		Resources: v1alpha1.Resources{
			Disk:         v1alpha1.Disk{SizeMinimumGb: 10, Type: v1alpha1.DiskTypeSSD},
			InstanceType: "db-custom-1-3840",
		},
	}
}

type instanceMod func(mg core.Instance)

// errNoImport is a configuration's refusal to import.
var errNoImport = errors.New("ClusterProviderConfig \"shared\" does not allow importing")

// clusterDB is a cluster-scoped PostgresqlInstance "db" with its connection
// secret in crossplane-system.
func clusterDB(mods ...instanceMod) *v1alpha1.PostgresqlInstance {
	mg := &v1alpha1.PostgresqlInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "db", UID: ourUID, Generation: 1},
		Spec:       v1alpha1.PostgresqlInstanceSpec{ForProvider: unitParams()},
	}
	mg.SetWriteConnectionSecretToReference(&xpv2.SecretReference{Namespace: unitNamespace, Name: "db-conn"})
	for _, m := range mods {
		m(mg)
	}
	return mg
}

// teamDB is a namespaced PostgresqlInstance "db" of team-a.
func teamDB(mods ...instanceMod) *nsv1alpha1.PostgresqlInstance {
	mg := &nsv1alpha1.PostgresqlInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: teamNamespace, Name: "db", UID: ourUID, Generation: 1},
		Spec:       nsv1alpha1.PostgresqlInstanceSpec{ForProvider: unitParams()},
	}
	mg.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "db-conn"})
	for _, m := range mods {
		m(mg)
	}
	return mg
}

func deleted(mg core.Instance) { mg.SetDeletionTimestamp(&metav1.Time{Time: time.Now()}) }

// allowed carries the annotation that lets deleting the object delete its instance.
func allowed(mg core.Instance) {
	mg.SetAnnotations(map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
}

// unprotected is an instance whose deletion protection is off.
func unprotected(db *sqladmin.DatabaseInstance) { db.Settings.DeletionProtectionEnabled = false }

func observeOnlyPolicy(mg core.Instance) {
	mg.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
}

func noSecretRef(mg core.Instance) {
	switch mg := mg.(type) {
	case *v1alpha1.PostgresqlInstance:
		mg.SetWriteConnectionSecretToReference(nil)
	case *nsv1alpha1.PostgresqlInstance:
		mg.SetWriteConnectionSecretToReference(nil)
	}
}

func withParams(fn func(p *v1alpha1.PostgresqlInstanceParameters)) instanceMod {
	return func(mg core.Instance) { fn(mg.Parameters()) }
}

// synced marks the object reconciled to the end at its generation.
func synced(mg core.Instance) {
	mg.SetConditions(xpv2.ReconcileSuccess().WithObservedGeneration(mg.GetGeneration()))
}

// createdAt sets the object's creation time, d from now.
func createdAt(d time.Duration) instanceMod {
	return func(mg core.Instance) { mg.SetCreationTimestamp(metav1.NewTime(time.Now().Add(d))) }
}

// importedFrom records an earlier observation of the instance: its selfLink.
func importedFrom(selfLink string) instanceMod {
	return func(mg core.Instance) { mg.Observation().SelfLink = selfLink }
}

// cloud is what the emulator holds before the call.
type cloud func(t *testing.T, emu *emulator.Server)

// seeded stores the instance GenerateInstance makes of mg's spec, labelled with
// owner (none when empty), with storedPW for postgres, in state (RUNNABLE when
// empty); mods change it first.
func seeded(mg core.Instance, owner, state string, mods ...func(*sqladmin.DatabaseInstance)) cloud {
	return func(t *testing.T, emu *emulator.Server) {
		t.Helper()
		p := *mg.Parameters().DeepCopy()
		p.Labels = nil
		name := cloudsql.InstanceName(mg)
		db := cloudsql.GenerateInstance(name, unitProject, p, storedPW)
		if owner != "" {
			if db.Settings.UserLabels == nil {
				db.Settings.UserLabels = map[string]string{}
			}
			db.Settings.UserLabels[v1alpha1.OwnerUIDLabelKey] = owner
		}
		db.State = state
		for _, m := range mods {
			m(db)
		}
		if err := emu.Seed(unitProject, db); err != nil {
			t.Fatalf("seeding %s: %v", name, err)
		}
	}
}

// reservedName leaves the name of a deleted instance reserved.
func reservedName(name string) cloud {
	return func(t *testing.T, emu *emulator.Server) {
		t.Helper()
		db := cloudsql.GenerateInstance(name, unitProject, unitParams(), storedPW)
		unprotected(db)
		if err := emu.Seed(unitProject, db); err != nil {
			t.Fatalf("seeding %s: %v", name, err)
		}
		svc := unitService(t, httptest.NewServer(emu))
		if _, err := svc.Instances.Delete(unitProject, name).Do(); err != nil {
			t.Fatalf("deleting %s: %v", name, err)
		}
		emu.FinishOperations()
	}
}

// fault makes the emulator fail method with 500s count times.
func fault(method string, count int) cloud {
	return func(t *testing.T, emu *emulator.Server) {
		t.Helper()
		if err := emu.InjectFault(emulator.Fault{Method: method, ServerErrorShare: 1, Count: count}); err != nil {
			t.Fatal(err)
		}
	}
}

// running starts an operation on the instance that the emulator's fake clock
// never finishes: a patch of its labels.
func running(name string) cloud {
	return func(t *testing.T, emu *emulator.Server) {
		t.Helper()
		svc := unitService(t, httptest.NewServer(emu))
		if _, err := svc.Instances.Patch(unitProject, name, &sqladmin.DatabaseInstance{
			Settings: &sqladmin.Settings{UserLabels: map[string]string{v1alpha1.OwnerUIDLabelKey: ourUID, "touched": "yes"}},
		}).Do(); err != nil {
			t.Fatalf("patching %s: %v", name, err)
		}
	}
}

// listForbidden answers instances.list 403, as for a credential without
// cloudsql.instances.list (the emulator knows no IAM).
func listForbidden(emu http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/instances") {
			http.Error(w, `{"error":{"code":403,"message":"not authorized"}}`, http.StatusForbidden)
			return
		}
		emu.ServeHTTP(w, r)
	})
}

// wrongPath is an endpoint whose path the server does not serve: every call is
// a 404 "Method not found", which says nothing of any instance.
func wrongPath(http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":404,"message":"Method not found.","errors":[{"reason":"notFound","message":"Method not found."}],"status":"NOT_FOUND"}}`))
	})
}

func clouds(cs ...cloud) cloud {
	return func(t *testing.T, emu *emulator.Server) {
		t.Helper()
		for _, c := range cs {
			c(t, emu)
		}
	}
}

func unitService(t *testing.T, srv *httptest.Server) *sqladmin.Service {
	t.Helper()
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// connSecret is mg's connection secret, controlled by controller (mg's UID when
// empty), holding password with its fingerprint unless unconfirmed.
func connSecret(mg core.Instance, password string, mods ...func(*corev1.Secret)) *corev1.Secret {
	ref := mg.ConnectionSecret()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ref.Namespace, Name: ref.Name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1alpha1", Kind: "PostgresqlInstance", Name: mg.GetName(), UID: mg.GetUID(), Controller: ptr.To(true)}},
			Annotations:     map[string]string{v1alpha1.AnnotationPasswordSHA256: core.Fingerprint(mg, password)},
		},
		Type: resource.SecretTypeConnection,
		Data: map[string][]byte{cloudsql.ConnectionKeyPassword: []byte(password)},
	}
	for _, m := range mods {
		m(s)
	}
	return s
}

func unconfirmedMark(s *corev1.Secret) {
	s.Annotations = map[string]string{v1alpha1.AnnotationPasswordUnconfirmed: "true"}
}
func unrecorded(s *corev1.Secret) { s.Annotations = nil }
func controlledBy(uid types.UID) func(*corev1.Secret) {
	return func(s *corev1.Secret) { s.OwnerReferences[0].UID = uid }
}
func opaque(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque }
func editedTo(pw string) func(*corev1.Secret) {
	return func(s *corev1.Secret) { s.Data[cloudsql.ConnectionKeyPassword] = []byte(pw) }
}

// args are one case's world before the call.
type args struct {
	mg      core.Instance
	cloud   cloud
	emu     []emulator.Option
	secrets []client.Object
	kube    interceptor.Funcs
	// listed observes through a shared listing of the project (observe = list);
	listed bool
	// front stands in front of the emulator: what it cannot be made to answer.
	front func(emu http.Handler) http.Handler
	// listedBefore lists the project once before the call.
	listedBefore bool
	pacing       func(p *core.Pacing, key string)
	// busyPoll is the pacing's busy poll interval; a second when zero.
	busyPoll time.Duration
	// notObserved calls Update or Delete without an Observe first;
	// observedBefore calls Observe once before an Observe.
	notObserved, observedBefore bool
	// between changes Cloud SQL after that Observe, before the call.
	between cloud
	// noImport is the configuration's refusal to import, nil when it allows it.
	noImport error
	// health is the backup-health interval; the default when zero.
	health time.Duration
}

// result is what a call did: its answer, and what it left in the object, the
// pacing, the connection secret and Cloud SQL.
type result struct {
	Err        error
	Exists     bool
	UpToDate   bool
	LateInit   bool
	Diff       string
	Details    []string // keys published (observation, update)
	Conditions []string
	Pacing     []string
	Secret     string
	Cloud      string
	Calls      []string
}

// busyPollOr is the busy poll interval a case asks for, else d.
func (a args) busyPollOr(d time.Duration) time.Duration {
	if a.busyPoll != 0 {
		return a.busyPoll
	}
	return d
}

// world is one case's emulator, fake API server and external client.
type world struct {
	emu  *emulator.Server
	kube client.Client
	p    *core.Pacing
	obs  *observer.Observer
}

func newWorld(t *testing.T, a args) (*world, *sqladmin.Service) {
	t.Helper()
	emu := emulator.New(append([]emulator.Option{emulator.WithClock(emulator.NewFakeClock(time.Now())), emulator.WithRequestBudget(0)}, a.emu...)...)
	if a.cloud != nil {
		a.cloud(t, emu)
	}
	var h http.Handler = emu
	if a.front != nil {
		h = a.front(emu)
	}
	svc := unitService(t, httptest.NewServer(h))
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, v1alpha1.SchemeBuilder.AddToScheme, nsv1alpha1.SchemeBuilder.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(a.secrets...).WithInterceptorFuncs(a.kube).Build()
	w := &world{emu: emu, kube: kube, p: core.NewPacing(time.Minute, a.busyPollOr(time.Second), a.health)}
	if a.pacing != nil {
		a.pacing(w.p, core.ObjectKey(a.mg))
	}
	if a.listed {
		w.obs = observer.New()
		if a.listedBefore {
			if _, err := w.obs.Instance(context.Background(), svc, "pc", unitProject, "any", time.Time{}, time.Hour); err != nil {
				t.Fatalf("listing first: %v", err)
			}
			time.Sleep(2 * time.Millisecond) // a clock that counts whole ticks
		}
	}
	emu.ResetCounts()
	return w, svc
}

// newExternal is what Connect makes of a ProviderConfig for kind T.
func newExternal[T core.Instance](w *world, svc *sqladmin.Service, owner string) *external[T] {
	gvk := v1alpha1.PostgresqlInstanceGroupVersionKind
	if owner == "namespaced" {
		gvk = nsv1alpha1.PostgresqlInstanceGroupVersionKind
	}
	return &external[T]{svc: svc, project: unitProject, secrets: core.NewPasswords(w.kube, w.kube, gvk), pacing: w.p, observer: w.obs, source: "pc"}
}

// observe, create, update and remove call one method on mg's external client
// after Observe when the method follows one in a reconcile.
func call(t *testing.T, a args, method string) result {
	t.Helper()
	switch mg := a.mg.(type) {
	case *v1alpha1.PostgresqlInstance:
		return callKind(t, a, mg, method, "cluster")
	case *nsv1alpha1.PostgresqlInstance:
		return callKind(t, a, mg, method, "namespaced")
	}
	t.Fatalf("unknown kind %T", a.mg)
	return result{}
}

func callKind[T core.Instance](t *testing.T, a args, mg T, method, kind string) result {
	t.Helper()
	ctx := context.Background()
	w, svc := newWorld(t, a)
	e := newExternal[T](w, svc, kind)
	e.noImport = a.noImport
	var r result
	if (method != "Observe" && method != "Create" && !a.notObserved) || a.observedBefore {
		if _, err := e.Observe(ctx, mg); err != nil {
			t.Fatalf("Observe before %s: %v", method, err)
		}
		if a.between != nil {
			a.between(t, w.emu)
		}
		w.emu.ResetCounts()
		w.p = core.NewPacing(time.Minute, a.busyPollOr(time.Second), a.health)
		if a.pacing != nil {
			a.pacing(w.p, core.ObjectKey(mg))
		}
		e.pacing = w.p
	}
	var err error
	var details managed.ConnectionDetails
	switch method {
	case "Observe":
		var o managed.ExternalObservation
		o, err = e.Observe(ctx, mg)
		r.Exists, r.UpToDate, r.LateInit, r.Diff, details = o.ResourceExists, o.ResourceUpToDate, o.ResourceLateInitialized, o.Diff, o.ConnectionDetails
	case "Create":
		_, err = e.Create(ctx, mg)
	case "Update":
		var u managed.ExternalUpdate
		u, err = e.Update(ctx, mg)
		details = u.ConnectionDetails
	case "Delete":
		_, err = e.Delete(ctx, mg)
	}
	r.Err = shown(err)
	for k := range details {
		r.Details = append(r.Details, k)
	}
	sort.Strings(r.Details)
	if c := mg.GetCondition(xpv2.TypeReady); c.Reason != "" {
		r.Conditions = []string{string(c.Type) + "=" + string(c.Reason)}
		if c.Message != "" {
			r.Conditions[0] += ": " + c.Message
		}
	}
	r.Pacing = w.p.Flags(core.ObjectKey(mg))
	r.Secret = secretState(t, w.kube, mg)
	r.Cloud = cloudState(t, w.emu, w.kube, mg)
	for _, req := range w.emu.Requests() {
		if req.Method != "" {
			r.Calls = append(r.Calls, req.Method)
		}
	}
	return r
}

// shown is err as a result holds it: an error of the Cloud SQL Admin API as
// apiError, wrapped as it was.
func shown(err error) error {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		msg := err.Error()
		i := strings.Index(msg, "googleapi: ")
		if i < 0 {
			i = len(msg)
		}
		msg = strings.TrimSuffix(msg[:i], ": ")
		if msg == "" {
			return apiError(gerr.Code)
		}
		return errors.Wrap(apiError(gerr.Code), msg)
	}
	return err
}

// secretState describes the connection secret: absent, or its password (stored,
// edited or generated) and whether the provider confirmed it set.
func secretState(t *testing.T, kube client.Client, mg core.Instance) string {
	t.Helper()
	ref := mg.ConnectionSecret()
	if ref == nil {
		return ""
	}
	s := &corev1.Secret{}
	if err := kube.Get(context.Background(), types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		return "absent"
	}
	pw := string(s.Data[cloudsql.ConnectionKeyPassword])
	var state string
	switch {
	case pw == "":
		return "no password"
	case pw == storedPW:
		state = "stored"
	case pw == editedPW:
		state = "edited"
	case len(pw) == cloudsql.PasswordLength:
		state = "generated"
	default:
		state = "other"
	}
	switch {
	case s.Annotations[v1alpha1.AnnotationPasswordUnconfirmed] == "true":
		state += ", unconfirmed"
	case s.Annotations[v1alpha1.AnnotationPasswordSHA256] == core.Fingerprint(mg, pw):
		state += ", confirmed"
	}
	if _, ok := s.Data[cloudsql.ConnectionKeyConnectionName]; ok {
		state += ", completed"
	}
	return state
}

// cloudState describes the Cloud SQL instance: its state, its owner, and whether
// postgres has the connection secret's password.
func cloudState(t *testing.T, emu *emulator.Server, kube client.Client, mg core.Instance) string {
	t.Helper()
	name := cloudsql.InstanceName(mg)
	db, err := emu.Instance(unitProject, name)
	if err != nil {
		return "none"
	}
	s := db.State
	if o := db.Settings.UserLabels[v1alpha1.OwnerUIDLabelKey]; o != "" {
		s += ", owner " + o
	}
	if ref := mg.ConnectionSecret(); ref != nil {
		sec := &corev1.Secret{}
		if err := kube.Get(context.Background(), types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, sec); err == nil {
			if emu.PasswordIs(unitProject, name, cloudsql.RootUser, string(sec.Data[cloudsql.ConnectionKeyPassword])) {
				s += ", postgres has the secret's password"
			} else {
				s += ", postgres has another password"
			}
		}
	}
	return s
}

// An externalCase is one call of an external client's method.
type externalCase struct {
	reason string
	args   args
	want   result
}

// runExternal calls method in each case, in parallel, and compares what it did.
func runExternal(t *testing.T, method string, cases map[string]externalCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := call(t, tc.args, method)
			if diff := cmp.Diff(tc.want, got, test.EquateErrors()); diff != "" {
				t.Errorf("\n%s\n%s(...): -want, +got:\n%s", tc.reason, method, diff)
			}
		})
	}
}

func TestObserve(t *testing.T) {
	ours := clusterDB()
	cases := map[string]externalCase{
		"NotFound": {
			reason: "No instance of that name: it does not exist, and nothing else is asked.",
			args:   args{mg: clusterDB()},
			want:   result{Secret: "absent", Cloud: "none", Calls: []string{"instances.get"}},
		},
		"NotFoundOfAnotherKind": {
			reason: "A 404 that is not Cloud SQL's instanceDoesNotExist (an endpoint with a wrong path) is an error, never taken for a missing instance that Create would then make.",
			args:   args{mg: clusterDB(), front: wrongPath},
			want: result{
				Err:    errors.Wrapf(apiError(404), errGetInstance, "db", unitProject),
				Secret: "absent", Cloud: "none",
			},
		},
		"GetFails": {
			reason: "An error reading the instance is returned with its name and project.",
			args:   args{mg: clusterDB(), cloud: fault(emulator.MethodInstancesGet, 0)},
			want: result{
				Err:    errors.Wrapf(apiError(500), errGetInstance, "db", unitProject),
				Secret: "absent", Cloud: "none", Calls: []string{"instances.get"},
			},
		},
		"UpToDate": {
			reason: "Our running instance, as specified, with its password confirmed: available, up to date, its details published without the password.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.get"},
			},
		},
		"Drift": {
			reason: "A setting changed out of band: not up to date, and the difference says which.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "", func(db *sqladmin.DatabaseInstance) { db.Settings.Tier = "db-custom-2-7680" }),
				secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Exists: true, Diff: "settings.tier: want db-custom-1-3840, have db-custom-2-7680",
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.get"},
			},
		},
		"NoPassword": {
			reason: "Our instance with no password stored: not up to date (Update sets one), nothing published.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, ourUID, "")},
			want: result{
				Exists: true, Conditions: available,
				Secret: "absent", Cloud: "RUNNABLE, owner uid-ours", Calls: []string{"instances.get"},
			},
		},
		"PasswordEditedInSecret": {
			reason: "A password edited in the secret is unconfirmed: not up to date (Update sets it), nothing published.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, editedTo(editedPW))}},
			want: result{
				Exists: true, Conditions: available,
				Secret: "edited", Cloud: "RUNNABLE, owner uid-ours, postgres has another password", Calls: []string{"instances.get"},
			},
		},
		"PasswordMarkedUnconfirmed": {
			reason: "A password stored but not yet set (a crash between the two) is not published.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, unconfirmedMark)}},
			want: result{
				Exists: true, Conditions: available,
				Secret: "stored, unconfirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"PasswordUnrecorded": {
			reason: "A secret from before fingerprints were kept: its password is taken as set, and its fingerprint recorded.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, unrecorded)}},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"PasswordUnrecordedStoreFails": {
			reason: "Recording the fingerprint of an unrecorded password fails: the error names the secret.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, unrecorded)},
				kube:    interceptor.Funcs{Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error { return errBoom }}},
			want: result{
				Err:        errors.Wrapf(errBoom, errWriteSecret, cloudsql.RootUser, unitNamespace, "db-conn"),
				Conditions: available,
				Secret:     "stored", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"PasswordUnusable": {
			reason: "A password with a line break cannot go into .pgpass: an error that says what to do, retried at the poll interval.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, editedTo("line\nbreak"))}},
			want: result{
				Err:        core.UnusablePassword{Message: fmt.Sprintf(errPasswordUnusable, unitNamespace, "db-conn")},
				Conditions: available, Pacing: []string{"stalled"},
				Secret: "other", Cloud: "RUNNABLE, owner uid-ours, postgres has another password", Calls: []string{"instances.get"},
			},
		},
		"SecretOfAnotherObject": {
			reason: "A connection secret another object controls is neither read nor written.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, controlledBy(otherUID))}},
			want: result{
				Err:        errors.Errorf(errSecretNotOurs, unitNamespace, "db-conn"),
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"SecretReadFails": {
			reason: "An error reading the connection secret names it.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				kube: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return errBoom
				}}},
			want: result{
				Err:        errors.Wrapf(errBoom, errReadSecret, unitNamespace, "db-conn"),
				Conditions: available,
				Secret:     "absent", Cloud: "RUNNABLE, owner uid-ours", Calls: []string{"instances.get"},
			},
		},
		"OpaqueSecretCompleted": {
			reason: "An Opaque secret this object controls gets the connection details from Observe, since crossplane-runtime publishes only into its own type.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, opaque)}},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed, completed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"OpaqueSecretCompleteFails": {
			reason: "Completing an Opaque secret fails: the error names the secret and its type.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, opaque)},
				kube:    interceptor.Funcs{Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error { return errBoom }}},
			want: result{
				Err:        errors.Wrapf(errBoom, errCompleteSecret, unitNamespace, "db-conn", corev1.SecretTypeOpaque),
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"PendingCreate": {
			reason: "An instance being created: Creating, polled soon, not compared (it cannot change yet).",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "PENDING_CREATE"),
				secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: []string{"Ready=Creating"}, Pacing: []string{"busy"},
				Secret: "stored, confirmed", Cloud: "PENDING_CREATE, owner uid-ours, postgres has the secret's password", Calls: []string{"instances.get"},
			},
		},
		"PendingDelete": {
			reason: "An instance being deleted while its object is not: Deleting, polled soon.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "PENDING_DELETE"),
				secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy"},
				Secret: "stored, confirmed", Cloud: "PENDING_DELETE, owner uid-ours, postgres has the secret's password", Calls: []string{"instances.get"},
			},
		},
		"PendingDeleteOfDeletedObject": {
			reason: "An instance being deleted for a deleted object: marked deleting, so that a listing's absence proves it gone.",
			args: args{mg: clusterDB(deleted), cloud: seeded(ours, ourUID, "PENDING_DELETE"),
				secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy", "deleting"},
				Secret: "stored, confirmed", Cloud: "PENDING_DELETE, owner uid-ours, postgres has the secret's password", Calls: []string{"instances.get"},
			},
		},
		"Maintenance": {
			reason: "Any other state: Unavailable with the state in the message, and not compared.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "MAINTENANCE"),
				secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: []string{"Ready=Unavailable: Cloud SQL reports the instance as MAINTENANCE"},
				Secret:     "stored, confirmed", Cloud: "MAINTENANCE, owner uid-ours, postgres has the secret's password", Calls: []string{"instances.get"},
			},
		},
		"OwnedByOther": {
			reason: "Another PostgresqlInstance's instance is never changed: an error that says what to do, retried at the poll interval.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, otherUID, "")},
			want: result{
				Err:    errors.Errorf(errOwnedByOther, "db", unitProject, otherUID),
				Pacing: []string{"stalled"}, Secret: "absent", Cloud: "RUNNABLE, owner uid-other", Calls: []string{"instances.get"},
			},
		},
		"OwnedByOtherObjectDeleted": {
			reason: "Deleting an object that never owned the instance lets go of it: it does not exist, as far as this object goes.",
			args:   args{mg: clusterDB(deleted), cloud: seeded(ours, otherUID, "")},
			want:   result{Secret: "absent", Cloud: "RUNNABLE, owner uid-other", Calls: []string{"instances.get"}},
		},
		"NotCreatedByUs": {
			reason: "An unlabelled instance this object did not create: an error that says how to import it.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, "", "")},
			want: result{
				Err:    errors.Errorf(errNotCreatedByUs, "db", unitProject),
				Pacing: []string{"stalled"}, Secret: "absent", Cloud: "RUNNABLE", Calls: []string{"instances.get"},
			},
		},
		"ObserveOnlyOfUnlabelled": {
			reason: "managementPolicies [Observe] may observe an instance nobody owns: the first step of an import.",
			args:   args{mg: clusterDB(observeOnlyPolicy), cloud: seeded(ours, "", "")},
			want: result{
				Exists: true, Diff: "settings.userLabels.owner-uid: want uid-ours, have (absent)", Conditions: available,
				Secret: "absent", Cloud: "RUNNABLE", Calls: []string{"instances.get"},
			},
		},
		"ObserveOnlyOfAnothersCluster": {
			reason: "A cluster-scoped object may observe another object's instance.",
			args:   args{mg: clusterDB(observeOnlyPolicy), cloud: seeded(ours, otherUID, "")},
			want: result{
				Exists: true, Diff: "settings.userLabels.owner-uid: want uid-ours, have uid-other", Conditions: available,
				Secret: "absent", Cloud: "RUNNABLE, owner uid-other", Calls: []string{"instances.get"},
			},
		},
		"ImportTakeover": {
			reason: "An unlabelled instance this object observed before (same selfLink) is taken over once its policies allow changes.",
			args: args{mg: clusterDB(importedFrom("https://sqladmin.googleapis.com/sql/v1beta4/projects/unit-project/instances/db")),
				cloud: seeded(ours, "", ""), secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Exists: true, Diff: "settings.userLabels.owner-uid: want uid-ours, have (absent)",
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: "RUNNABLE, postgres has the secret's password", Calls: []string{"instances.get"},
			},
		},
		"NamespacedOwn": {
			reason: "A namespaced object's own instance, secret in its namespace: up to date.",
			args:   args{mg: teamDB(), cloud: seeded(teamDB(), ourUID, ""), secrets: []client.Object{connSecret(teamDB(), storedPW)}},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"NamespacedObserveOnlyOfAnothers": {
			reason: "A namespaced object may not even observe another object's instance: no team sees another's database.",
			args:   args{mg: teamDB(observeOnlyPolicy), cloud: seeded(teamDB(), otherUID, "")},
			want: result{
				Err:    errors.Errorf(errObservedByOther, "db", unitProject, otherUID),
				Pacing: []string{"stalled"}, Secret: "absent", Cloud: "RUNNABLE, owner uid-other", Calls: []string{"instances.get"},
			},
		},
		"NamespacedObserveOnlyOfUnlabelled": {
			reason: "A namespaced object may observe an instance nobody owns, to import it.",
			args:   args{mg: teamDB(observeOnlyPolicy), cloud: seeded(teamDB(), "", "")},
			want: result{
				Exists: true, Diff: "settings.userLabels.owner-uid: want uid-ours, have (absent)", Conditions: available,
				Secret: "absent", Cloud: "RUNNABLE", Calls: []string{"instances.get"},
			},
		},
		"NamespacedObserveOnlyImportDenied": {
			reason: "Through a configuration that forbids importing, a namespaced object does not even observe an instance nobody created.",
			args:   args{mg: teamDB(observeOnlyPolicy), cloud: seeded(teamDB(), "", ""), noImport: errNoImport},
			want: result{
				Err:    errors.Wrapf(errNoImport, errNotImported, "db", unitProject),
				Pacing: []string{"stalled"}, Secret: "absent", Cloud: "RUNNABLE", Calls: []string{"instances.get"},
			},
		},
		"NamespacedTakeoverImportDenied": {
			reason: "Through a configuration that forbids importing, an instance nobody created is not taken over, even one observed before: its password is not reset.",
			args: args{mg: teamDB(importedFrom("https://sqladmin.googleapis.com/sql/v1beta4/projects/unit-project/instances/db")),
				cloud: seeded(teamDB(), "", ""), noImport: errNoImport},
			want: result{
				Err:    errors.Wrapf(errNoImport, errNotImported, "db", unitProject),
				Pacing: []string{"stalled"}, Secret: "absent", Cloud: "RUNNABLE", Calls: []string{"instances.get"},
			},
		},
		"NamespacedOwnImportDenied": {
			reason: "A configuration that forbids importing leaves an object's own instance alone.",
			args: args{mg: teamDB(), cloud: seeded(teamDB(), ourUID, ""), secrets: []client.Object{connSecret(teamDB(), storedPW)},
				noImport: errNoImport},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"ListingServes": {
			reason: "observe = list: a listing that began after the object was created serves it without instances.get.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)},
				listed: true},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.list"},
			},
		},
		"ListingAbsenceIsProof": {
			reason: "observe = list: a new object's name missing from a complete listing is free; no instances.get.",
			args:   args{mg: clusterDB(), listed: true},
			want:   result{Secret: "absent", Cloud: "none", Calls: []string{"instances.list"}},
		},
		"ListingAbsenceConfirmed": {
			reason: "observe = list: an instance observed before and missing from a listing is confirmed gone by instances.get.",
			args:   args{mg: clusterDB(importedFrom("https://sqladmin.googleapis.com/sql/v1beta4/projects/unit-project/instances/db")), listed: true},
			want:   result{Secret: "absent", Cloud: "none", Calls: []string{"instances.list", "instances.get"}},
		},
		"ListingAbsenceOfDeletingConfirmsGone": {
			reason: "observe = list: a deleted object whose instance was seen deleting is gone once a listing lacks it.",
			args: args{mg: clusterDB(deleted, importedFrom("https://sqladmin.googleapis.com/sql/v1beta4/projects/unit-project/instances/db")), listed: true,
				pacing: func(p *core.Pacing, key string) { p.MarkDeleting(key) }},
			want: result{Pacing: []string{"deleting"}, Secret: "absent", Cloud: "none", Calls: []string{"instances.list"}},
		},
		"ListingFails": {
			reason: "observe = list: an error listing the project is returned.",
			args:   args{mg: clusterDB(), listed: true, cloud: fault(emulator.MethodInstancesList, 0)},
			want:   result{Err: errors.Wrapf(apiError(500), "cannot list the Cloud SQL instances of project %s", unitProject), Secret: "absent", Cloud: "none", Calls: []string{"instances.list"}},
		},
		"ListingForbidden": {
			reason: "observe = list: credentials without cloudsql.instances.list still observe, with instances.get.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)},
				listed: true, front: listForbidden},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"ListingTooOldForChangedSpec": {
			reason: "observe = list: a spec changed since the last sync wants a listing no older than the busy poll interval; one from before the change does not serve.",
			args: args{mg: clusterDB(withParams(func(p *v1alpha1.PostgresqlInstanceParameters) {}), synced, func(mg core.Instance) { mg.SetGeneration(2) }),
				cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)}, listed: true, listedBefore: true,
				busyPoll: time.Nanosecond},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.list"},
			},
		},
		"NewObjectTakesListingBegunAfterItsCreation": {
			reason: "observe = list: a new object takes any listing begun after it was created, so that a thousand new objects share one.",
			args: args{mg: clusterDB(createdAt(-time.Hour)), cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)},
				listed: true, listedBefore: true},
			want: result{
				Exists: true, UpToDate: true, Details: published, Conditions: available,
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
			},
		},
		"NewObjectTakesARecentListingBegunBeforeIt": {
			reason: "observe = list: a new object that may create its instance takes a recent listing begun before it (the admission check's): its own instance cannot exist before its insert.",
			args: args{mg: clusterDB(createdAt(time.Hour)), secrets: []client.Object{connSecret(ours, storedPW)},
				listed: true, listedBefore: true},
			want: result{Secret: "stored, confirmed", Cloud: "none"},
		},
		"NewObjectListsAgainPastTheBusyPoll": {
			reason: "observe = list: the listing that a new object takes is no older than the busy poll interval.",
			args: args{mg: clusterDB(createdAt(time.Hour)), secrets: []client.Object{connSecret(ours, storedPW)},
				listed: true, listedBefore: true, busyPoll: time.Nanosecond},
			want: result{Secret: "stored, confirmed", Cloud: "none", Calls: []string{"instances.list"}},
		},
		"NewImportReadAloneThisSecond": {
			reason: "observe = list: no listing can show yet whether the instance that an import created this very second expects exists: instances.get reads it.",
			// Created after the listing however long the cases before this one
			// take: the table is built when the test starts, and 2 s ahead
			// was behind the listing under CI's load.
			args: args{mg: clusterDB(createdAt(time.Hour), observeOnlyPolicy), cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)},
				listed: true, listedBefore: true},
			want: result{
				Exists: true, UpToDate: true, Details: published, Conditions: available,
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"OpaqueSecretAlreadyComplete": {
			reason: "An Opaque secret that holds the details already (completed by the Observe before) is not written again.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""), observedBefore: true,
				secrets: []client.Object{connSecret(ours, storedPW, opaque)},
				kube: interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.UpdateOption) error {
					cur := &corev1.Secret{}
					if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err == nil && cur.Data[cloudsql.ConnectionKeyConnectionName] != nil {
						return errBoom // a second write
					}
					return c.Update(ctx, obj, o...)
				}}},
			want: result{
				Exists: true, UpToDate: true, Details: published, Conditions: available,
				Secret: "stored, confirmed, completed", Cloud: oursWithSecretPassword, Calls: []string{"instances.get"},
			},
		},
		"SomePoliciesOfAnothers": {
			reason: "Policies that allow any change are not observe-only: another object's instance is refused.",
			args: args{mg: clusterDB(func(mg core.Instance) {
				mg.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionUpdate})
			}), cloud: seeded(ours, otherUID, "")},
			want: result{
				Err:    errors.Errorf(errOwnedByOther, "db", unitProject, otherUID),
				Pacing: []string{"stalled"}, Secret: "absent", Cloud: "RUNNABLE, owner uid-other", Calls: []string{"instances.get"},
			},
		},
		"ListingOfSyncedObjectServes": {
			reason: "observe = list: an object synced at its generation takes a listing made before the call.",
			args: args{mg: clusterDB(synced), cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)},
				listed: true, listedBefore: true},
			want: result{
				Exists: true, UpToDate: true,
				Details:    published,
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword,
			},
		},
	}
	runExternal(t, "Observe", cases)
}

func TestCreate(t *testing.T) {
	ours := clusterDB()
	failCreate := interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return errBoom }}
	cases := map[string]externalCase{
		"Creates": {
			reason: "A new password is stored, confirmed, before instances.insert creates the instance with it and our label.",
			args:   args{mg: clusterDB()},
			want: result{
				Pacing: []string{"busy", "changed", "visible", "written"},
				Secret: "generated, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.insert"},
			},
		},
		"CreatesNamespaced": {
			reason: "A namespaced object's password goes into a secret of its own namespace.",
			args:   args{mg: teamDB()},
			want: result{
				Pacing: []string{"busy", "changed", "visible", "written"},
				Secret: "generated, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.insert"},
			},
		},
		"RetryReusesStoredPassword": {
			reason: "A retried create reuses the password already stored: whichever insert wins, the secret holds its password.",
			args:   args{mg: clusterDB(), secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Pacing: []string{"busy", "changed", "visible", "written"},
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.insert"},
			},
		},
		"NoConnectionSecret": {
			reason: "Without writeConnectionSecretToRef the password could not be kept: nothing is created, and the error says what to set.",
			args:   args{mg: clusterDB(noSecretRef)},
			want:   result{Err: errors.New(errNoConnectionSecret), Cloud: "none"},
		},
		"StoringPasswordFails": {
			reason: "A password that cannot be stored is never set: no insert.",
			args:   args{mg: clusterDB(), kube: failCreate},
			want:   result{Err: errors.Wrapf(errBoom, errWriteSecret, cloudsql.RootUser, unitNamespace, "db-conn"), Secret: "absent", Cloud: "none"},
		},
		"SecretReadFails": {
			reason: "An error reading the connection secret names it; no insert.",
			args: args{mg: clusterDB(),
				kube: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return errBoom
				}}},
			want: result{Err: errors.Wrapf(errBoom, errReadSecret, unitNamespace, "db-conn"), Secret: "absent", Cloud: "none"},
		},
		"PasswordUnusable": {
			reason: "A stored password that cannot go into .pgpass: no insert, retried at the poll interval.",
			args:   args{mg: clusterDB(), secrets: []client.Object{connSecret(ours, "line\nbreak")}},
			want: result{
				Err:    core.UnusablePassword{Message: fmt.Sprintf(errPasswordUnusable, unitNamespace, "db-conn")},
				Pacing: []string{"stalled"}, Secret: "other, confirmed", Cloud: "none",
			},
		},
		"AnswerLost": {
			reason: "An insert whose answer was lost left our instance: the 409 is ours, not an error.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Pacing: []string{"busy", "changed"},
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.insert", "instances.get"},
			},
		},
		"NameTakenByOther": {
			reason: "The name belongs to another PostgresqlInstance: an error that says what to do, retried at the poll interval.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, otherUID, "")},
			want: result{
				Err:    errors.Errorf(errOwnedByOther, "db", unitProject, otherUID),
				Pacing: []string{"busy", "stalled", "changed", "visible"},
				Secret: "generated, confirmed", Cloud: "RUNNABLE, owner uid-other, postgres has another password",
				Calls: []string{"instances.insert", "instances.get"},
			},
		},
		"NameTakenUnlabelled": {
			reason: "The name belongs to an instance nobody manages: an error that says how to import it.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, "", "")},
			want: result{
				Err:    errors.Errorf(errNotCreatedByUs, "db", unitProject),
				Pacing: []string{"busy", "stalled", "changed", "visible"},
				Secret: "generated, confirmed", Cloud: "RUNNABLE, postgres has another password",
				Calls: []string{"instances.insert", "instances.get"},
			},
		},
		"NameReserved": {
			reason: "The name of an instance deleted within the week: an error that says to choose another, retried at the poll interval.",
			args:   args{mg: clusterDB(), cloud: reservedName("db")},
			want: result{
				Err:    errors.Errorf(errNameTaken, "db", unitProject),
				Pacing: []string{"busy", "stalled", "changed", "visible"},
				Secret: "generated, confirmed", Cloud: "none",
				Calls: []string{"instances.insert", "instances.get"},
			},
		},
		"NameConflictUnexplained": {
			reason: "A 409 whose instance cannot be read: the read's error, with name and project.",
			args:   args{mg: clusterDB(), cloud: clouds(seeded(ours, ourUID, ""), fault(emulator.MethodInstancesGet, 0))},
			want: result{
				Err:    errors.Wrapf(apiError(500), errGetInstance, "db", unitProject),
				Pacing: []string{"busy", "changed", "visible"},
				Secret: "generated, confirmed", Cloud: "RUNNABLE, owner uid-ours, postgres has another password",
				Calls: []string{"instances.insert", "instances.get"},
			},
		},
		"InsertFails": {
			reason: "An insert that fails: the error with name and project; the stored password stays for the retry.",
			args:   args{mg: clusterDB(), cloud: fault(emulator.MethodInstancesInsert, 0)},
			want: result{
				Err:    errors.Wrapf(apiError(500), errCreateInstance, "db", unitProject),
				Pacing: []string{"busy", "changed", "visible"},
				Secret: "generated, confirmed", Cloud: "none",
				Calls: []string{"instances.insert"},
			},
		},
	}
	runExternal(t, "Create", cases)
}

func TestUpdate(t *testing.T) {
	ours := clusterDB()
	tierChanged := func(db *sqladmin.DatabaseInstance) { db.Settings.Tier = "db-custom-2-7680" }
	slowUpdates := []emulator.Option{emulator.WithDelays(0, time.Hour, 0)}
	idle := func(p *core.Pacing, key string) { p.MarkIdle(key) }
	cases := map[string]externalCase{
		"NotObserved": {
			reason: "Update without an Observe before it changes nothing.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""), notObserved: true},
			want:   result{Err: errors.New(errNotObserved), Secret: "absent", Cloud: "RUNNABLE, owner uid-ours"},
		},
		"UpToDate": {
			reason: "Nothing differs: no request.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword,
			},
		},
		"SetsMissingPassword": {
			reason: "A secret without a password: a new one is stored unconfirmed and set with users.update; it stays unconfirmed, unpublished, until its operation is seen done.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, ourUID, "")},
			want: result{
				Conditions: available, Pacing: []string{"busy", "changed"},
				Secret: "generated, unconfirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"users.update"},
			},
		},
		"SetsEditedPassword": {
			reason: "A password edited in the secret is set on the instance; it is confirmed once its operation is seen done.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, editedTo(editedPW))}},
			want: result{
				Conditions: available, Pacing: []string{"busy", "changed"},
				Secret: "edited, unconfirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"users.update"},
			},
		},
		"SetPasswordWhileBusy": {
			reason: "users.update meets a running operation: wait (busy), the password stays unconfirmed.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""), emu: slowUpdates,
				secrets: []client.Object{connSecret(ours, storedPW, editedTo(editedPW))}, between: running("db")},
			want: result{
				Conditions: available, Pacing: []string{"busy"},
				Secret: "edited", Cloud: "RUNNABLE, owner uid-ours, postgres has another password",
				Calls: []string{"users.update"},
			},
		},
		"SetPasswordFails": {
			reason: "users.update fails: the error with name and project; the password stays unconfirmed.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, editedTo(editedPW))}, between: fault(emulator.MethodUsersUpdate, 0)},
			want: result{
				Err:        errors.Wrapf(apiError(500), errSetPassword, "db", unitProject),
				Conditions: available,
				Secret:     "edited", Cloud: "RUNNABLE, owner uid-ours, postgres has another password",
				Calls: []string{"users.update"},
			},
		},
		"SetsPasswordOfEmptiedSecret": {
			reason: "A secret whose password key was removed gets a new password, stored unconfirmed first, then set; confirmed once its operation is seen done.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, func(s *corev1.Secret) { s.Data = nil })}},
			want: result{
				Conditions: available, Pacing: []string{"busy", "changed"},
				Secret: "generated, unconfirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"users.update"},
			},
		},
		"ConfirmingPasswordFails": {
			reason: "The password was set but its operation cannot be recorded in the secret: an error; it stays unconfirmed and is set again next time.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				secrets: []client.Object{connSecret(ours, storedPW, editedTo(editedPW))},
				kube:    interceptor.Funcs{Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error { return errBoom }}},
			want: result{
				Err:        errors.Wrapf(errBoom, errWriteSecret, cloudsql.RootUser, unitNamespace, "db-conn"),
				Conditions: available,
				Secret:     "edited", Cloud: oursWithSecretPassword,
				Calls: []string{"users.update"},
			},
		},
		"SettingNewPasswordFails": {
			reason: "A new password Cloud SQL did not take stays stored, marked unconfirmed, and is set again next time.",
			args:   args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""), between: fault(emulator.MethodUsersUpdate, 0)},
			want: result{
				Err:        errors.Wrapf(apiError(500), errSetPassword, "db", unitProject),
				Conditions: available,
				Secret:     "generated, unconfirmed", Cloud: "RUNNABLE, owner uid-ours, postgres has another password",
				Calls: []string{"users.update"},
			},
		},
		"StoringNewPasswordFails": {
			reason: "A new password that cannot be stored is never set.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, ""),
				kube: interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return errBoom }}},
			want: result{
				Err:        errors.Wrapf(errBoom, errWriteSecret, cloudsql.RootUser, unitNamespace, "db-conn"),
				Conditions: available, Secret: "absent", Cloud: "RUNNABLE, owner uid-ours",
			},
		},
		"Patches": {
			reason: "A difference is patched once operations.list shows nothing running.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "", tierChanged),
				secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Conditions: available, Pacing: []string{"busy", "changed", "visible"},
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"operations.list", "instances.patch"},
			},
		},
		"PatchesWhenKnownIdle": {
			reason: "When no operation of the provider's can run, the patch needs no operations.list first.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "", tierChanged),
				secrets: []client.Object{connSecret(ours, storedPW)}, pacing: idle},
			want: result{
				Conditions: available, Pacing: []string{"busy", "changed", "visible"},
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.patch"},
			},
		},
		"WaitsForRunningOperation": {
			reason: "An operation runs: no patch (it would earn a 409), come back soon.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "", tierChanged), emu: slowUpdates,
				secrets: []client.Object{connSecret(ours, storedPW)}, between: running("db")},
			want: result{
				Conditions: available, Pacing: []string{"busy"},
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"operations.list"},
			},
		},
		"OperationsListFails": {
			reason: "operations.list fails: the error with name and project, no patch.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "", tierChanged),
				secrets: []client.Object{connSecret(ours, storedPW)}, between: fault(emulator.MethodOperationsList, 0)},
			want: result{
				Err:        errors.Wrapf(apiError(500), errListOperations, "db", unitProject),
				Conditions: available,
				Secret:     "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"operations.list"},
			},
		},
		"PatchMeetsAnotherOperation": {
			reason: "Known idle, but someone else's operation runs: the 409 means observe again soon, not an error.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "", tierChanged), emu: slowUpdates,
				secrets: []client.Object{connSecret(ours, storedPW)}, between: running("db"), pacing: idle},
			want: result{
				Conditions: available, Pacing: []string{"busy", "changed"},
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.patch"},
			},
		},
		"PatchOfStaleSettings": {
			reason: "The instance changed since it was observed (412 staleData): observe again soon, not an error.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "", tierChanged),
				secrets: []client.Object{connSecret(ours, storedPW)}, pacing: idle,
				between: func(t *testing.T, emu *emulator.Server) {
					t.Helper()
					if err := emu.MutateInstance(unitProject, "db", func(db *sqladmin.DatabaseInstance) { db.Settings.UserLabels["edited"] = "elsewhere" }); err != nil {
						t.Fatal(err)
					}
				}},
			want: result{
				Conditions: available, Pacing: []string{"busy", "changed"},
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.patch"},
			},
		},
		"PatchFails": {
			reason: "instances.patch fails: the error with name and project.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "", tierChanged),
				secrets: []client.Object{connSecret(ours, storedPW)}, pacing: idle, between: fault(emulator.MethodInstancesPatch, 0)},
			want: result{
				Err:        errors.Wrapf(apiError(500), errUpdateInstance, "db", unitProject),
				Conditions: available, Pacing: []string{"idle"},
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
				Calls: []string{"instances.patch"},
			},
		},
		"ImmutableDifference": {
			reason: "A difference Cloud SQL cannot patch (the region) is reported, never patched, and retried at the poll interval.",
			args: args{mg: clusterDB(), cloud: seeded(ours, ourUID, "", func(db *sqladmin.DatabaseInstance) { db.Region = "europe-west4" }),
				secrets: []client.Object{connSecret(ours, storedPW)}},
			want: result{
				Err: errors.Wrap(errors.New("region: want europe-west1, have europe-west4"),
					"the Cloud SQL instance differs from the spec in fields that cannot change on an existing instance; "+
						"set them back to the instance's values, or create a new PostgresqlInstance (with another name) to get the new ones"),
				Conditions: available, Pacing: []string{"stalled"},
				Secret: "stored, confirmed", Cloud: oursWithSecretPassword,
			},
		},
	}
	runExternal(t, "Update", cases)
}

func TestDelete(t *testing.T) {
	ours := clusterDB()
	cases := map[string]externalCase{
		"Deletes": {
			reason: "instances.delete is asked once; the instance is then known to be deleting, and the reconciler's immediate requeue is put off.",
			args:   args{mg: clusterDB(deleted, allowed), cloud: seeded(ours, ourUID, "", unprotected)},
			want: result{
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy", "changed", "deleting", "written"},
				Secret: "absent", Cloud: "none", Calls: []string{"instances.delete"},
			},
		},
		"AlreadyDeleting": {
			reason: "An instance observed PENDING_DELETE is not asked again, nor observed again at once: the listing that finds it gone brings its object back.",
			args:   args{mg: clusterDB(deleted, allowed), cloud: seeded(ours, ourUID, "PENDING_DELETE")},
			want: result{
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy", "written"},
				Secret: "absent", Cloud: "PENDING_DELETE, owner uid-ours",
			},
		},
		"AlreadyGone": {
			reason: "A 404 from instances.delete: gone, not an error.",
			args:   args{mg: clusterDB(deleted, allowed), notObserved: true},
			want: result{
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy"},
				Secret: "absent", Cloud: "none", Calls: []string{"instances.delete"},
			},
		},
		"OperationRunning": {
			reason: "A 409 from instances.delete: asked again once the operation is over (at the busy poll), not an error.",
			args: args{mg: clusterDB(deleted, allowed), cloud: seeded(ours, ourUID, "", unprotected), emu: []emulator.Option{emulator.WithDelays(0, time.Hour, 0)},
				between: running("db")},
			want: result{
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy", "changed", "written"},
				Secret: "absent", Cloud: "RUNNABLE, owner uid-ours", Calls: []string{"instances.delete"},
			},
		},
		"NotFoundOfAnotherKind": {
			reason: "A 404 that is not Cloud SQL's instanceDoesNotExist does not prove the instance gone: the finalizer stays.",
			args:   args{mg: clusterDB(deleted, allowed), notObserved: true, cloud: seeded(ours, ourUID, "", unprotected), front: wrongPath},
			want: result{
				Err:        errors.Wrapf(apiError(404), errDeleteInstance, "db", unitProject),
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy"},
				Secret: "absent", Cloud: "RUNNABLE, owner uid-ours",
			},
		},
		"DeleteFails": {
			reason: "instances.delete fails: the error with name and project.",
			args:   args{mg: clusterDB(deleted, allowed), cloud: seeded(ours, ourUID, "", unprotected), between: fault(emulator.MethodInstancesDelete, 0)},
			want: result{
				Err:        errors.Wrapf(apiError(500), errDeleteInstance, "db", unitProject),
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy"},
				Secret: "absent", Cloud: "RUNNABLE, owner uid-ours", Calls: []string{"instances.delete"},
			},
		},
		"LiftsProtectionFirst": {
			reason: "A protected instance of an object that may delete it: one patch that turns protection off, no delete yet; the next observation shows whether the patch is done.",
			args:   args{mg: clusterDB(deleted, allowed), cloud: seeded(ours, ourUID, "")},
			want: result{
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy", "changed", "visible"},
				Secret: "absent", Cloud: "RUNNABLE, owner uid-ours", Calls: []string{"operations.list", "instances.patch"},
			},
		},
		"LiftWaitsForRunningOperation": {
			reason: "An operation runs on the protected instance: the patch waits for it, as an update does.",
			args: args{mg: clusterDB(deleted, allowed), cloud: seeded(ours, ourUID, ""), emu: []emulator.Option{emulator.WithDelays(0, time.Hour, 0)},
				between: running("db")},
			want: result{
				Conditions: []string{"Ready=Deleting"}, Pacing: []string{"busy"},
				Secret: "absent", Cloud: "RUNNABLE, owner uid-ours", Calls: []string{"operations.list"},
			},
		},
		"NotAllowed": {
			reason: "An object deleted without the allow-deletion annotation (the guard was not there): no write at all, and an error that says what to do.",
			args:   args{mg: clusterDB(deleted), cloud: seeded(ours, ourUID, "")},
			want: result{
				Err:        errors.Errorf(errDeleteNotAllowed, "db", v1alpha1.AnnotationAllowDeletion, "db", unitProject),
				Conditions: []string{"Ready=Available"}, Pacing: []string{"stalled"},
				Secret: "absent", Cloud: "RUNNABLE, owner uid-ours",
			},
		},
		"NotAllowedUnprotected": {
			reason: "Without the annotation an unprotected instance is not deleted either.",
			args:   args{mg: clusterDB(deleted), cloud: seeded(ours, ourUID, "", unprotected)},
			want: result{
				Err:        errors.Errorf(errDeleteNotAllowed, "db", v1alpha1.AnnotationAllowDeletion, "db", unitProject),
				Conditions: []string{"Ready=Available"}, Pacing: []string{"stalled"},
				Secret: "absent", Cloud: "RUNNABLE, owner uid-ours",
			},
		},
		"NamespacedNotAllowed": {
			reason: "The namespaced kind, whose management policies allow Delete, needs the annotation too.",
			args:   args{mg: teamDB(deleted), cloud: seeded(teamDB(), ourUID, "")},
			want: result{
				Err:        errors.Errorf(errDeleteNotAllowed, "team-a/db", v1alpha1.AnnotationAllowDeletion, "db", unitProject),
				Conditions: []string{"Ready=Available"}, Pacing: []string{"stalled"},
				Secret: "absent", Cloud: "RUNNABLE, owner uid-ours",
			},
		},
	}
	runExternal(t, "Delete", cases)
}

// A write as it reached Cloud SQL: the verb, the query and the body.
type write struct {
	method string
	query  url.Values
	body   map[string]any
}

// recordWrites stands in front of the emulator and records every request but a
// read into writes.
func recordWrites(mu *sync.Mutex, writes *[]write) func(http.Handler) http.Handler {
	return func(emu http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				b, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(b))
				body := map[string]any{}
				_ = json.Unmarshal(b, &body)
				mu.Lock()
				*writes = append(*writes, write{method: r.Method, query: r.URL.Query(), body: body})
				mu.Unlock()
			}
			emu.ServeHTTP(w, r)
		})
	}
}

// A new instance is protected on Cloud SQL's side: a delete sent by anyone
// else is refused. Deleting its object with the allow-deletion annotation makes
// exactly two writes: one patch that carries nothing but
// deletionProtectionEnabled=false, then, once the instance shows it off, one
// delete that asks for the final backup the spec sets; that backup outlives the
// instance.
func TestDeleteLiftsProtectionThenDeletes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	var mu sync.Mutex
	var writes []write
	mg := clusterDB(withParams(func(p *v1alpha1.PostgresqlInstanceParameters) {
		// As created: the data safety unset, so the provider's defaults apply,
		// but for the final backup's retention.
		p.DeletionProtection, p.Backups.RetainOnDelete = nil, nil
		p.Backups.FinalBackup = &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 7}
	}))
	w, svc := newWorld(t, args{mg: mg, front: recordWrites(&mu, &writes)})
	e := newExternal[*v1alpha1.PostgresqlInstance](w, svc, "cluster")

	_, err := e.Create(ctx, mg)
	g.Expect(err).ToNot(HaveOccurred())
	w.emu.FinishOperations()
	obs, err := e.Observe(ctx, mg)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(obs.ResourceLateInitialized).To(BeTrue())
	g.Expect(mg.Spec.ForProvider.DeletionProtection).To(Equal(&v1alpha1.DeletionProtection{Enabled: true}), "a new instance is protected")
	g.Expect(mg.Spec.ForProvider.Backups.RetainOnDelete).To(Equal(ptr.To(true)), "a new instance keeps its backups on delete")

	_, err = svc.Instances.Delete(unitProject, "db").Do()
	g.Expect(err).To(HaveOccurred(), "Cloud SQL refuses to delete a protected instance")
	g.Expect(shown(err)).To(Equal(apiError(http.StatusBadRequest)))
	db, err := w.emu.Instance(unitProject, "db")
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(db.State).To(Equal(core.StateRunnable))

	mu.Lock()
	writes = nil
	mu.Unlock()
	deleted(mg)
	allowed(mg)
	for range 5 {
		e.pacing = core.NewPacing(time.Minute, time.Second)
		obs, err := e.Observe(ctx, mg)
		g.Expect(err).ToNot(HaveOccurred())
		if !obs.ResourceExists {
			break
		}
		_, err = e.Delete(ctx, mg)
		g.Expect(err).ToNot(HaveOccurred())
		w.emu.FinishOperations()
	}
	_, err = w.emu.Instance(unitProject, "db")
	g.Expect(err).To(MatchError(emulator.ErrInstanceNotFound))

	mu.Lock()
	defer mu.Unlock()
	g.Expect(writes).To(HaveLen(2), "one patch, one delete")
	g.Expect(writes[0].method).To(Equal(http.MethodPatch))
	g.Expect(writes[0].body).To(Equal(map[string]any{"settings": map[string]any{
		"deletionProtectionEnabled": false, "settingsVersion": fmt.Sprint(db.Settings.SettingsVersion),
	}}), "the patch carries only the protection")
	g.Expect(writes[1].method).To(Equal(http.MethodDelete))
	g.Expect(writes[1].query.Get("enableFinalBackup")).To(Equal("true"))
	g.Expect(writes[1].query.Get("finalBackupTtlDays")).To(Equal("7"))

	backups, err := svc.Backups.ListBackups("projects/" + unitProject).Do()
	g.Expect(err).ToNot(HaveOccurred())
	var final []string
	for _, b := range backups.Backups {
		if b.Instance == "db" && b.Type == "FINAL" {
			final = append(final, b.Name)
		}
	}
	g.Expect(final).To(HaveLen(1), "the final backup outlives the instance: %v", backups.Backups)
}
