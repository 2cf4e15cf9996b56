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

package instance_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/afero"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/instance"
)

// Every case runs against an emulator of its own, with its instances in project,
// reached through the ProviderConfigs (and their secrets) the case lays out.
const (
	project  = "webhook-unit-1" // 14 characters: 83 more make the 97 Cloud SQL allows
	other    = "someone-else-1" // another project, whose names do not matter
	secretNS = "crossplane-system"
	ns       = "team-x"
)

var (
	clusterKind = metav1.GroupVersionKind{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.PostgresqlInstanceKind}
	nsKind      = metav1.GroupVersionKind{Group: nsv1alpha1.Group, Version: nsv1alpha1.Version, Kind: nsv1alpha1.PostgresqlInstanceKind}

	errBoom = errors.New("boom")
)

// Messages that several cases expect.
const (
	mayNotCreate = "the provider may not create this instance, so an existing one is expected"
	allowedByAnn = "deletion allowed by annotation cloudsql.travelaudience.com/allow-deletion"
	decodeFailed = "cannot decode the PostgresqlInstance"
	observeHint  = `to manage the existing instance instead, create the PostgresqlInstance with spec.managementPolicies ["Observe"] and widen them once it is observed`
	validNameFix = "it must start with a lowercase letter, hold only lowercase letters, digits and hyphens, end with a letter or digit, and have 3 to 91 characters; set spec.forProvider.name (or the annotation crossplane.io/external-name) to a valid name"
	uncheckedFix = "if it does, the controller reports the conflict on the instance"
)

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, v1alpha1.SchemeBuilder.AddToScheme, nsv1alpha1.SchemeBuilder.AddToScheme,
	} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// A fixture is a Kubernetes object that may need the emulator's URL (an
// endpoint, a key's token_uri).
type fixture func(t *testing.T, url string) client.Object

// A specOption changes the spec that ProviderConfigs of every kind start from:
// project, the emulator as endpoint, no credentials.
type specOption func(s *v1alpha1.ProviderConfigSpec, url string)

func spec(url string, o ...specOption) v1alpha1.ProviderConfigSpec {
	s := v1alpha1.ProviderConfigSpec{
		Project:     v1alpha1.Project{ProjectID: project, Endpoint: url + "/"},
		Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
	}
	for _, fn := range o {
		fn(&s, url)
	}
	return s
}

func inProject(p string) specOption {
	return func(s *v1alpha1.ProviderConfigSpec, _ string) { s.ProjectID = p }
}

// atEndpoint makes the endpoint the emulator's URL followed by path.
func atEndpoint(path string) specOption {
	return func(s *v1alpha1.ProviderConfigSpec, url string) { s.Endpoint = url + path }
}

func unreachable() specOption {
	return func(s *v1alpha1.ProviderConfigSpec, _ string) { s.Endpoint = "http://127.0.0.1:1/" }
}

func keyInSecret(namespace, name, key string) specOption {
	return func(s *v1alpha1.ProviderConfigSpec, _ string) {
		s.Credentials.Source = xpv2.CredentialsSourceSecret
		s.Credentials.SecretRef = &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: namespace, Name: name}, Key: key}
	}
}

func keyInFile(path string) specOption {
	return func(s *v1alpha1.ProviderConfigSpec, _ string) {
		s.Credentials.Source = xpv2.CredentialsSourceFilesystem
		s.Credentials.Fs = &xpv2.FsSelector{Path: path}
	}
}

// providerConfig is a ProviderConfig of the cluster-scoped group.
func providerConfig(name string, o ...specOption) fixture {
	return func(_ *testing.T, url string) client.Object {
		return &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}, Spec: spec(url, o...)}
	}
}

// lentClusterProviderConfig is clusterProviderConfig(name) with what lend
// sets: which namespaces may use it, whether they may import.
func lentClusterProviderConfig(name string, lend func(*nsv1alpha1.ClusterProviderConfigSpec)) fixture {
	return func(t *testing.T, url string) client.Object {
		cpc := clusterProviderConfig(name)(t, url).(*nsv1alpha1.ClusterProviderConfig)
		lend(&cpc.Spec)
		return cpc
	}
}

// namespaceLabelled is namespace name with labels.
func namespaceLabelled(name string, labels map[string]string) fixture {
	return func(*testing.T, string) client.Object {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
}

// clusterProviderConfig is a ClusterProviderConfig of the namespaced group
// that every namespace may use.
func clusterProviderConfig(name string, o ...specOption) fixture {
	return func(_ *testing.T, url string) client.Object {
		return &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-cpc-" + name)}, Spec: nsv1alpha1.ClusterProviderConfigSpec{
			ProviderConfigSpec: spec(url, o...), Namespaces: &nsv1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{}},
		}}
	}
}

// namespacedProviderConfig is a ProviderConfig of the namespaced group in
// namespace, with a secret (if any) of that namespace.
func namespacedProviderConfig(namespace, name string, o ...specOption) fixture {
	return func(_ *testing.T, url string) client.Object {
		s := spec(url, o...)
		pc := &nsv1alpha1.ProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-pc-" + namespace + "-" + name)},
			Spec: nsv1alpha1.ProviderConfigSpec{Project: s.Project,
				Credentials: nsv1alpha1.LocalCredentials{Source: s.Credentials.Source}},
		}
		if ref := s.Credentials.SecretRef; ref != nil {
			pc.Spec.Credentials.SecretRef = &xpv2.LocalSecretKeySelector{LocalSecretReference: xpv2.LocalSecretReference{Name: ref.Name}, Key: ref.Key}
		}
		return pc
	}
}

// keySecret holds, at key, a service-account key whose token_uri is the
// emulator's token endpoint followed by tokenPath.
func keySecret(namespace, name, key, tokenPath string) fixture {
	return func(t *testing.T, url string) client.Object {
		k, err := emulator.ServiceAccountKey(project, url+tokenPath)
		if err != nil {
			t.Fatal(err)
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{key: k}}
	}
}

func dataSecret(namespace, name, key, data string) fixture {
	return func(_ *testing.T, _ string) client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{key: []byte(data)}}
	}
}

// A mod changes a PostgresqlInstance of either kind.
type mod func(client.Object)

func clusterInstance(name string, m ...mod) client.Object {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pi.SetGroupVersionKind(v1alpha1.PostgresqlInstanceGroupVersionKind)
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	for _, fn := range m {
		fn(pi)
	}
	return pi
}

// nsInstance is a namespaced PostgresqlInstance of namespace ns that names
// ClusterProviderConfig default.
func nsInstance(name string, m ...mod) client.Object {
	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	pi.SetGroupVersionKind(nsv1alpha1.PostgresqlInstanceGroupVersionKind)
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "default"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	for _, fn := range m {
		fn(pi)
	}
	return pi
}

func withAnnotation(k, v string) mod {
	return func(o client.Object) { meta.AddAnnotations(o, map[string]string{k: v}) }
}

func allowDeletion() mod { return withAnnotation(v1alpha1.AnnotationAllowDeletion, "true") }

func externalName(n string) mod { return withAnnotation(meta.AnnotationKeyExternalName, n) }

// named sets spec.forProvider.name.
func named(n string) mod {
	return func(o client.Object) { o.(cloudsql.NamedInstance).Parameters().Name = ptr.To(n) }
}

func policies(p ...xpv2.ManagementAction) mod {
	return func(o client.Object) {
		o.(interface{ SetManagementPolicies(xpv2.ManagementPolicies) }).SetManagementPolicies(p)
	}
}

// orphan sets deletionPolicy Orphan, which only the cluster-scoped kind has.
func orphan() mod {
	return func(o client.Object) { o.(*v1alpha1.PostgresqlInstance).SetDeletionPolicy(xpv2.DeletionOrphan) }
}

// configRef names the provider configuration: a ProviderConfig for the
// cluster-scoped kind (kind is ignored), the given kind for the namespaced one.
func configRef(kind, name string) mod {
	return func(o client.Object) {
		switch pi := o.(type) {
		case *v1alpha1.PostgresqlInstance:
			pi.SetProviderConfigReference(&xpv2.Reference{Name: name})
		case *nsv1alpha1.PostgresqlInstance:
			pi.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: kind, Name: name})
		}
	}
}

func rawOf(t *testing.T, o client.Object) []byte {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A verdict is what a response says, in a form cmp can compare: the substrings
// a case expects of the message and of each warning, which stand for the whole
// text when it holds them all (see matched).
type verdict struct {
	Allowed  bool
	Code     int32
	Message  []string
	Warnings [][]string
	// Lookups is how many instances.get requests reached the emulator.
	Lookups int
}

// matched is the parts of text that it holds, followed by text itself when it
// misses one (or when no part is expected and text is not empty): equal to
// parts exactly when text holds them all.
func matched(text string, parts []string) []string {
	var out []string
	for _, p := range parts {
		if strings.Contains(text, p) {
			out = append(out, p)
		}
	}
	if len(out) < len(parts) || (len(parts) == 0 && text != "") {
		out = append(out, text)
	}
	return out
}

func verdictOf(resp admission.Response, want verdict, lookups int) verdict {
	got := verdict{Allowed: resp.Allowed, Lookups: lookups}
	if resp.Result != nil {
		got.Code = resp.Result.Code
		got.Message = matched(resp.Result.Message, want.Message)
	}
	for i, w := range resp.Warnings {
		var parts []string
		if i < len(want.Warnings) {
			parts = want.Warnings[i]
		}
		got.Warnings = append(got.Warnings, matched(w, parts))
	}
	return got
}

// world is the Cloud SQL and Kubernetes that a case runs against.
type world struct {
	// kube are the objects the manager's cache and the API server both hold.
	kube []fixture
	// late are objects that only the API server holds: the cache has not seen
	// them yet.
	late []fixture
	// pcs and secrets replace the cache and the API server's reader.
	pcs, secrets client.Reader
	// keyFiles are where the file system that WithFs gives holds
	// service-account keys whose token_uri is the emulator's.
	keyFiles []string
	// taken are names of instances in project, elsewhere in another project,
	// reserved names of instances of project deleted a moment ago.
	taken, elsewhere, reserved []string
	faults                     []emulator.Fault
	// timeout bounds the Cloud SQL lookup; zero leaves it at DefaultTimeout.
	timeout time.Duration
	// endpoints are those namespaced ProviderConfigs may name; nil allows any.
	endpoints []string
	// externalSources lets platform keys use a credential_source.
	externalSources bool
}

type args struct {
	op admissionv1.Operation
	// kind is the request's kind; empty means that of object.
	kind *metav1.GroupVersionKind
	// object is what the request carries, marshalled; raw replaces it when
	// object is nil.
	object client.Object
	raw    []byte
	// namespace is the request's namespace, when not object's.
	namespace *string
	dryRun    bool
	world     world
}

// seed puts an instance named name in project p, as if made outside Kubernetes.
func seed(t *testing.T, emu *emulator.Server, p, name string) {
	t.Helper()
	if err := emu.Seed(p, &sqladmin.DatabaseInstance{
		Name: name, DatabaseVersion: "POSTGRES_15", Region: "europe-west1",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	}); err != nil {
		t.Fatal(err)
	}
}

// reserve leaves name reserved in project: an instance of that name was deleted,
// Cloud SQL refuses to create another, and instances.get does not find it.
func reserve(t *testing.T, emu *emulator.Server, url, name string) {
	t.Helper()
	seed(t, emu, project, name)
	svc, err := auth.NewService(auth.Credentials{Source: xpv2.CredentialsSourceNone}, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Instances.Delete(project, name).Do(); err != nil {
		t.Fatal(err)
	}
	emu.FinishOperations()
	if _, err := svc.Instances.Get(project, name).Do(); !cloudsql.IsNotFound(err) {
		t.Fatalf("instances.get of the deleted instance %s: want 404, got %v", name, err)
	}
	_, err = svc.Instances.Insert(project, &sqladmin.DatabaseInstance{
		Name: name, DatabaseVersion: "POSTGRES_15", Region: "europe-west1",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	}).Do()
	if !cloudsql.IsAlreadyExists(err) {
		t.Fatalf("instances.insert of the deleted instance %s: want 409 instanceAlreadyExists, got %v", name, err)
	}
}

// handle builds the world of a, sends a's request to a Validator and returns
// its response and how many instances.get requests the emulator answered.
func handle(t *testing.T, a args) (admission.Response, int) {
	t.Helper()
	emu := emulator.New()
	srv := httptest.NewServer(emu)
	t.Cleanup(func() {
		srv.Close()
		_ = emu.Close()
	})
	for _, n := range a.world.taken {
		seed(t, emu, project, n)
	}
	for _, n := range a.world.elsewhere {
		seed(t, emu, other, n)
	}
	for _, n := range a.world.reserved {
		reserve(t, emu, srv.URL+"/", n)
	}
	for _, f := range a.world.faults {
		if err := emu.InjectFault(f); err != nil {
			t.Fatal(err)
		}
	}
	emu.ResetCounts() // only the validator's lookups count

	s := scheme(t)
	cached, all := fake.NewClientBuilder().WithScheme(s), fake.NewClientBuilder().WithScheme(s)
	for _, fn := range a.world.kube {
		cached.WithObjects(fn(t, srv.URL))
		all.WithObjects(fn(t, srv.URL))
	}
	for _, fn := range a.world.late {
		all.WithObjects(fn(t, srv.URL))
	}
	var pcs, secrets client.Reader = cached.Build(), all.Build()
	if a.world.pcs != nil {
		pcs = a.world.pcs
	}
	if a.world.secrets != nil {
		secrets = a.world.secrets
	}
	fs := afero.NewMemMapFs()
	for _, path := range a.world.keyFiles {
		k, err := emulator.ServiceAccountKey(project, srv.URL+emulator.TokenPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := afero.WriteFile(fs, path, k, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := []instance.Option{instance.WithFs(fs), instance.WithLogger(logging.NewLogrLogger(testr.New(t)))}
	if a.world.timeout != 0 {
		o = append(o, instance.WithTimeout(a.world.timeout))
	}
	endpoints := a.world.endpoints
	if endpoints == nil {
		endpoints = []string{"*"}
	}
	o = append(o, instance.WithNamespacedEndpoints(endpoints))
	// Token requests for Google's endpoint are answered by the emulator's,
	// so that tenants' keys, whose tokens only ever go to Google, work here;
	// platform keys keep their token_uri ([credentials] allow_key_token_uri),
	// so that one whose token_uri gives no token can be tested.
	services := providerconfig.NewServiceCache(nil, providerconfig.WithAuth(auth.WithTokenTransport(googleTokensTo(srv.URL+emulator.TokenPath)),
		auth.WithExternalAccountSources(a.world.externalSources), auth.WithKeyTokenURI(true)))
	v := instance.New(pcs, secrets, s, services, o...)

	req := admissionv1.AdmissionRequest{UID: "a-request", Operation: a.op, DryRun: ptr.To(a.dryRun)}
	raw := a.raw
	if a.object != nil {
		raw = rawOf(t, a.object)
		gvk := a.object.GetObjectKind().GroupVersionKind()
		req.Kind = metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
		req.Name, req.Namespace = a.object.GetName(), a.object.GetNamespace()
	}
	if a.namespace != nil {
		req.Namespace = *a.namespace
	}
	if a.kind != nil {
		req.Kind = *a.kind
	}
	req.Resource = metav1.GroupVersionResource{Group: req.Kind.Group, Version: req.Kind.Version, Resource: "postgresqlinstances"}
	switch a.op {
	case admissionv1.Create, admissionv1.Connect:
		req.Object = runtime.RawExtension{Raw: raw}
	case admissionv1.Update:
		req.Object, req.OldObject = runtime.RawExtension{Raw: raw}, runtime.RawExtension{Raw: raw}
	case admissionv1.Delete:
		req.OldObject = runtime.RawExtension{Raw: raw}
	}
	resp := v.Handle(context.Background(), admission.Request{AdmissionRequest: req})
	return resp, emu.Counts()[emulator.MethodInstancesGet]
}

type testCase struct {
	reason string
	args   args
	want   verdict
}

// googleTokensTo sends requests for Google's token endpoint to url, and
// others (platform keys keep their token_uri) where they go.
func googleTokensTo(url string) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.String() != auth.TokenURL {
			return http.DefaultTransport.RoundTrip(r)
		}
		out := r.Clone(r.Context())
		u, err := neturl.Parse(url)
		if err != nil {
			return nil, err
		}
		out.URL, out.Host = u, u.Host
		return http.DefaultTransport.RoundTrip(out)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func run(t *testing.T, cases map[string]testCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp, lookups := handle(t, tc.args)
			got := verdictOf(resp, tc.want, lookups)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("\n%s\nHandle(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// allowed, denied and errored are verdicts.
func allowed(lookups int, message ...string) verdict {
	return verdict{Allowed: true, Code: http.StatusOK, Message: message, Lookups: lookups}
}

func denied(lookups int, message ...string) verdict {
	return verdict{Code: http.StatusForbidden, Message: message, Lookups: lookups}
}

func errored(message ...string) verdict {
	return verdict{Code: http.StatusBadRequest, Message: message}
}

// warned is allowed(lookups) with one warning holding parts.
func warned(lookups int, parts ...string) verdict {
	v := allowed(lookups)
	v.Warnings = [][]string{parts}
	return v
}

// defaultPC is ProviderConfig default and ClusterProviderConfig default, which
// instances use when they name no configuration.
var defaultPC = []fixture{providerConfig("default"), clusterProviderConfig("default")}

func TestHandleDispatch(t *testing.T) {
	t.Parallel()
	run(t, map[string]testCase{
		"UpdateIsNotJudged": {
			reason: "Updates are not the validator's: it admits them without decoding, even an object it would not let be created or deleted.",
			args:   args{op: admissionv1.Update, kind: &clusterKind, raw: []byte("{not json"), world: world{taken: []string{"taken"}}},
			want:   allowed(0),
		},
		"ConnectIsNotJudged": {
			reason: "Operations other than CREATE and DELETE are admitted as they are.",
			args:   args{op: admissionv1.Connect, object: nsInstance("Bad_Name"), world: world{taken: []string{"taken"}}},
			want:   allowed(0),
		},
		"CreateUndecodable": {
			reason: "A CREATE whose object is not JSON is answered 400, not admitted.",
			args:   args{op: admissionv1.Create, kind: &clusterKind, raw: []byte("{not json"), world: world{kube: defaultPC}},
			want:   errored(decodeFailed),
		},
		"CreateWithoutObject": {
			reason: "A CREATE that carries no object is answered 400.",
			args:   args{op: admissionv1.Create, kind: &nsKind, world: world{kube: defaultPC}},
			want:   errored(decodeFailed, "there is no content to decode"),
		},
		"DeleteUndecodable": {
			reason: "A DELETE whose old object is not JSON is answered 400: failing closed keeps the deletion guard.",
			args:   args{op: admissionv1.Delete, kind: &nsKind, raw: []byte(`{"apiVersion":`)},
			want:   errored(decodeFailed),
		},
		"DeleteWithoutOldObject": {
			reason: "A DELETE that carries no old object is answered 400, never admitted.",
			args:   args{op: admissionv1.Delete, kind: &clusterKind},
			want:   errored(decodeFailed, "there is no content to decode"),
		},
		"ClusterKindCarryingANamespacedObject": {
			reason: "A request of the cluster-scoped kind whose object is of the namespaced group is not decoded as the cluster-scoped kind.",
			args:   args{op: admissionv1.Delete, kind: &clusterKind, raw: rawOf(t, nsInstance("db", allowDeletion()))},
			want:   errored(decodeFailed),
		},
		"NamespacedKindCarryingAClusterObject": {
			reason: "A request of the namespaced kind whose object is of the cluster-scoped group is not decoded as the namespaced kind.",
			args:   args{op: admissionv1.Create, kind: &nsKind, raw: rawOf(t, clusterInstance("db")), world: world{kube: defaultPC}},
			want:   errored(decodeFailed),
		},
		"UnknownKindIsReadAsTheClusterScopedKind": {
			reason: "A request whose kind is of neither group (or none) is read as the cluster-scoped kind: its deletion is guarded and named as that kind's.",
			args:   args{op: admissionv1.Delete, kind: &metav1.GroupVersionKind{}, object: clusterInstance("orders")},
			want: denied(0, "PostgresqlInstance orders may not be deleted",
				"kubectl annotate postgresqlinstances.cloudsql.travelaudience.com orders cloudsql.travelaudience.com/allow-deletion=true"),
		},
		"UnknownKindCarryingANamespacedObject": {
			reason: "A request whose kind is of neither group is read as the cluster-scoped kind, so a namespaced object in it cannot be decoded.",
			args:   args{op: admissionv1.Delete, kind: &metav1.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "PostgresqlInstance"}, raw: rawOf(t, nsInstance("db", allowDeletion()))},
			want:   errored(decodeFailed),
		},
	})
}

func TestHandleDelete(t *testing.T) {
	t.Parallel()
	deletes := func(ref, instance, kubectl string) verdict {
		return denied(0, "PostgresqlInstance "+ref+" may not be deleted: deleting it deletes Cloud SQL instance "+instance+" and its data. "+
			"If that is what you want, allow it first with `kubectl annotate "+kubectl+" cloudsql.travelaudience.com/allow-deletion=true`, then delete it again")
	}
	keeps := func(ref, instance, kubectl string) verdict {
		return denied(0, "PostgresqlInstance "+ref+" may not be deleted: deleting it stops managing Cloud SQL instance "+instance+", which keeps running. "+
			"If that is what you want, allow it first with `kubectl annotate "+kubectl+" cloudsql.travelaudience.com/allow-deletion=true`, then delete it again")
	}
	const (
		clusterCmd = "postgresqlinstances.cloudsql.travelaudience.com orders"
		nsCmd      = "-n team-x postgresqlinstances.cloudsql.m.travelaudience.com orders"
	)
	run(t, map[string]testCase{
		"DeleteWithoutAllowDeletion": {
			reason: "Deleting an instance without the allow-deletion annotation is denied with the kubectl command that allows it.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders")},
			want:   deletes("orders", "orders", clusterCmd),
		},
		"DeleteWithAllowDeletion": {
			reason: "The allow-deletion annotation set to \"true\" lets the instance be deleted.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", allowDeletion())},
			want:   allowed(0, allowedByAnn),
		},
		"DeleteWithAllowDeletionFalse": {
			reason: "Only \"true\" allows deletion.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", withAnnotation(v1alpha1.AnnotationAllowDeletion, "false"))},
			want:   deletes("orders", "orders", clusterCmd),
		},
		"DeleteWithAllowDeletionCapitalised": {
			reason: "The annotation's value is compared exactly: \"True\" does not allow deletion.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", withAnnotation(v1alpha1.AnnotationAllowDeletion, "True"))},
			want:   deletes("orders", "orders", clusterCmd),
		},
		"DeleteDryRunWithoutAllowDeletion": {
			reason: "Dry-run deletions are answered like real ones.",
			args:   args{op: admissionv1.Delete, dryRun: true, object: clusterInstance("orders")},
			want:   deletes("orders", "orders", clusterCmd),
		},
		"DeleteNamesTheCloudSQLInstance": {
			reason: "The denial names the Cloud SQL instance, spec.forProvider.name, which is not metadata.name.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", named("orders-prod"), externalName("ignored"))},
			want:   deletes("orders", "orders-prod", clusterCmd),
		},
		"DeleteNamesTheExternalName": {
			reason: "Without spec.forProvider.name, the denial names the Cloud SQL instance of the external-name annotation.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", externalName("orders-legacy"))},
			want:   deletes("orders", "orders-legacy", clusterCmd),
		},
		"DeleteOrphan": {
			reason: "Deleting an instance of deletionPolicy Orphan does not delete the Cloud SQL instance, and the denial says so.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", orphan())},
			want:   keeps("orders", "orders", clusterCmd),
		},
		"DeleteOrphanWithAllPolicies": {
			reason: "deletionPolicy Orphan keeps the Cloud SQL instance whatever the management policies.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", orphan(), policies(xpv2.ManagementActionAll))},
			want:   keeps("orders", "orders", clusterCmd),
		},
		"DeleteOrphanWithAllowDeletion": {
			reason: "The annotation allows deleting an orphaning instance too.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", orphan(), allowDeletion())},
			want:   allowed(0, allowedByAnn),
		},
		"DeleteObserveOnly": {
			reason: "Management policies without Delete or * keep the Cloud SQL instance, and the denial says so.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", policies(xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate))},
			want:   keeps("orders", "orders", clusterCmd),
		},
		"DeletePoliciesWithDelete": {
			reason: "Management policies holding Delete delete the Cloud SQL instance.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", policies(xpv2.ManagementActionObserve, xpv2.ManagementActionDelete))},
			want:   deletes("orders", "orders", clusterCmd),
		},
		"DeletePoliciesAll": {
			reason: "Management policies [*] delete the Cloud SQL instance.",
			args:   args{op: admissionv1.Delete, object: clusterInstance("orders", policies(xpv2.ManagementActionAll))},
			want:   deletes("orders", "orders", clusterCmd),
		},
		"DeleteNamespacedWithoutAllowDeletion": {
			reason: "The namespaced kind's deletion is guarded the same, named with its namespace and group.",
			args:   args{op: admissionv1.Delete, object: nsInstance("orders", named("team-x-orders"))},
			want:   deletes("team-x/orders", "team-x-orders", nsCmd),
		},
		"DeleteNamespacedWithAllowDeletion": {
			reason: "The annotation allows deleting the namespaced kind.",
			args:   args{op: admissionv1.Delete, object: nsInstance("orders", allowDeletion())},
			want:   allowed(0, allowedByAnn),
		},
		"DeleteNamespacedObserveOnly": {
			reason: "A namespaced instance that may not delete keeps its Cloud SQL instance, and the denial says so.",
			args:   args{op: admissionv1.Delete, object: nsInstance("orders", policies(xpv2.ManagementActionObserve))},
			want:   keeps("team-x/orders", "orders", nsCmd),
		},
		"DeleteNamespacedOfTerminatingNamespace": {
			reason: "A namespace being deleted deletes its instances: admitting that keeps it from staying Terminating, and the controller keeps the Cloud SQL instance.",
			args: args{op: admissionv1.Delete, object: nsInstance("orders"), world: world{kube: []fixture{func(*testing.T, string) client.Object {
				return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-x", DeletionTimestamp: &metav1.Time{Time: time.Now()}, Finalizers: []string{"kubernetes"}}}
			}}}},
			want: allowed(0, "namespace team-x is being deleted: the PostgresqlInstance goes, and Cloud SQL instance orders is kept (it is deleted only with the allow-deletion annotation)"),
		},
		"DeleteNamespacedOfLiveNamespace": {
			reason: "A namespace that stays does not let its instances go without the annotation.",
			args: args{op: admissionv1.Delete, object: nsInstance("orders"), world: world{kube: []fixture{func(*testing.T, string) client.Object {
				return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-x"}}
			}}}},
			want: deletes("team-x/orders", "orders", nsCmd),
		},
		"DeleteNamespacedPoliciesAll": {
			reason: "A namespaced instance of management policies [*] deletes its Cloud SQL instance.",
			args:   args{op: admissionv1.Delete, object: nsInstance("orders", policies(xpv2.ManagementActionAll))},
			want:   deletes("team-x/orders", "orders", nsCmd),
		},
		"DeleteObjectOfAnotherNamespace": {
			reason: "A deletion whose object is of another namespace than the request's was not sent by the API server: denied, whatever the object says.",
			args:   args{op: admissionv1.Delete, object: nsInstance("orders", allowDeletion()), namespace: ptr.To("team-y")},
			want:   denied(0, `the PostgresqlInstance's metadata.namespace "team-x" differs from the admission request's namespace "team-y"`),
		},
		"DeleteReadsNothing": {
			reason: "Deciding a deletion reads no ProviderConfig and asks Cloud SQL nothing: readers that fail change nothing.",
			args: args{op: admissionv1.Delete, object: clusterInstance("orders", allowDeletion()), world: world{
				pcs: &test.MockClient{MockGet: test.NewMockGetFn(errBoom)}, secrets: &test.MockClient{MockGet: test.NewMockGetFn(errBoom)},
			}},
			want: allowed(0, allowedByAnn),
		},
	})
}

func TestHandleCreateName(t *testing.T) {
	t.Parallel()
	const n91 = "a234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901"
	run(t, map[string]testCase{
		"BadExternalName": {
			reason: "An external-name annotation that Cloud SQL would refuse is denied, naming the annotation and what to set.",
			args:   args{op: admissionv1.Create, object: clusterInstance("bad-external", externalName("Bad_Name")), world: world{kube: defaultPC}},
			want:   denied(0, `PostgresqlInstance bad-external: annotation crossplane.io/external-name "Bad_Name" is not a valid Cloud SQL instance name: `+validNameFix),
		},
		"BadMetadataName": {
			reason: "Without spec.forProvider.name and the annotation, metadata.name is the Cloud SQL name and must be valid.",
			args:   args{op: admissionv1.Create, object: clusterInstance("team.db"), world: world{kube: defaultPC}},
			want:   denied(0, `PostgresqlInstance team.db: metadata.name "team.db" is not a valid Cloud SQL instance name: `+validNameFix),
		},
		"MetadataNameTooShort": {
			reason: "Cloud SQL names have at least 3 characters.",
			args:   args{op: admissionv1.Create, object: clusterInstance("ab"), world: world{kube: defaultPC}},
			want:   denied(0, `PostgresqlInstance ab: metadata.name "ab" is not a valid Cloud SQL instance name`),
		},
		"ExternalNameEndingInAHyphen": {
			reason: "Cloud SQL names end with a letter or digit.",
			args:   args{op: admissionv1.Create, object: clusterInstance("db", externalName("orders-")), world: world{kube: defaultPC}},
			want:   denied(0, `PostgresqlInstance db: annotation crossplane.io/external-name "orders-" is not a valid Cloud SQL instance name`),
		},
		"ExternalNameOf92Characters": {
			reason: "Cloud SQL names have at most 91 characters.",
			args:   args{op: admissionv1.Create, object: clusterInstance("db", externalName(n91+"2")), world: world{kube: defaultPC}},
			want:   denied(0, `PostgresqlInstance db: annotation crossplane.io/external-name "`+n91+`2" is not a valid Cloud SQL instance name`, "have 3 to 91 characters"),
		},
		"ExternalNameOf91Characters": {
			reason: "A 91-character name is valid; with the project ID it is too long, which the next check says.",
			args:   args{op: admissionv1.Create, object: clusterInstance("db", externalName(n91)), world: world{kube: defaultPC}},
			want: denied(0, "PostgresqlInstance db: Cloud SQL instance name "+n91+" (91 characters) and project ID "+project+" (14 characters) of ProviderConfig \"default\" add up to 105 characters, "+
				"more than the 97 Cloud SQL allows: choose a shorter spec.forProvider.name"),
		},
		"ValidExternalNameBesideADottedMetadataName": {
			reason: "With a valid annotation, metadata.name may be anything Kubernetes accepts; the annotation's name is checked in Cloud SQL.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders.prod", externalName("orders-prod")), world: world{kube: defaultPC, taken: []string{"orders-prod"}}},
			want:   denied(1, "PostgresqlInstance orders.prod: a Cloud SQL instance named orders-prod already exists in project "+project),
		},
		"ForProviderNameIsLeftToTheCRD": {
			reason: "With spec.forProvider.name (which the CRD validates), neither annotation nor metadata.name is judged.",
			args:   args{op: admissionv1.Create, object: clusterInstance("team.db", named("team-db"), externalName("Bad_Name")), world: world{kube: defaultPC}},
			want:   allowed(1),
		},
		"NamespacedBadExternalName": {
			reason: "The namespaced kind's external name is judged the same, and the denial names its namespace.",
			args:   args{op: admissionv1.Create, object: nsInstance("db", externalName("db_1")), world: world{kube: defaultPC}},
			want:   denied(0, `PostgresqlInstance team-x/db: annotation crossplane.io/external-name "db_1" is not a valid Cloud SQL instance name: `+validNameFix),
		},
		"NamespacedBadMetadataName": {
			reason: "The namespaced kind's metadata.name is judged when it is the Cloud SQL name.",
			args:   args{op: admissionv1.Create, object: nsInstance("team.db"), world: world{kube: defaultPC}},
			want:   denied(0, `PostgresqlInstance team-x/team.db: metadata.name "team.db" is not a valid Cloud SQL instance name`),
		},
		"BadNameOfAnObservedInstance": {
			reason: "A name Cloud SQL refuses is denied even when the provider may not create the instance: no such instance can exist.",
			args:   args{op: admissionv1.Create, object: clusterInstance("db", externalName("Orders"), policies(xpv2.ManagementActionObserve)), world: world{kube: defaultPC}},
			want:   denied(0, `PostgresqlInstance db: annotation crossplane.io/external-name "Orders" is not a valid Cloud SQL instance name`),
		},
	})
}

func TestHandleCreatePolicies(t *testing.T) {
	t.Parallel()
	taken := world{kube: defaultPC, taken: []string{"orders"}}
	run(t, map[string]testCase{
		"ObserveOnly": {
			reason: "An instance the provider may not create is meant to observe an existing one: admitted without asking Cloud SQL, even when the name is taken.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders", policies(xpv2.ManagementActionObserve)), world: taken},
			want:   allowed(0, mayNotCreate),
		},
		"ObserveOnlyWithoutProviderConfig": {
			reason: "An instance the provider may not create needs no ProviderConfig to be admitted.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders", policies(xpv2.ManagementActionObserve))},
			want:   allowed(0, mayNotCreate),
		},
		"PoliciesWithoutCreate": {
			reason: "Management policies without Create or * are not checked against Cloud SQL.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders", policies(xpv2.ManagementActionObserve, xpv2.ManagementActionUpdate,
				xpv2.ManagementActionLateInitialize, xpv2.ManagementActionDelete)), world: taken},
			want: allowed(0, mayNotCreate),
		},
		"PoliciesWithCreate": {
			reason: "Management policies holding Create are checked against Cloud SQL.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders", policies(xpv2.ManagementActionObserve, xpv2.ManagementActionCreate)), world: taken},
			want:   denied(1, "a Cloud SQL instance named orders already exists"),
		},
		"PoliciesAll": {
			reason: "Management policies [*] are checked against Cloud SQL.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders", policies(xpv2.ManagementActionAll)), world: taken},
			want:   denied(1, "a Cloud SQL instance named orders already exists"),
		},
		"NoPolicies": {
			reason: "Without management policies the provider may create the instance: it is checked against Cloud SQL.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders"), world: taken},
			want:   denied(1, "a Cloud SQL instance named orders already exists"),
		},
		"NamespacedObserveOnly": {
			reason: "A namespaced instance the provider may not create, through a ClusterProviderConfig that allows importing, is admitted without asking Cloud SQL.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", policies(xpv2.ManagementActionObserve)), world: world{
				kube:  []fixture{lentClusterProviderConfig("default", func(s *nsv1alpha1.ClusterProviderConfigSpec) { s.ImportPolicy = nsv1alpha1.ImportAllow })},
				taken: []string{"orders"},
			}},
			want: allowed(0, mayNotCreate),
		},
		"NamespacedObserveOnlyImportDenied": {
			reason: "A namespaced instance that only observes imports an instance no object created: denied, without asking Cloud SQL, through a ClusterProviderConfig whose spec.importPolicy is not Allow.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders", policies(xpv2.ManagementActionObserve)), world: taken},
			want: denied(0, "PostgresqlInstance team-x/orders: managementPolicies [Observe] only observe, which imports an existing Cloud SQL instance",
				`ClusterProviderConfig "default" does not allow importing`, "spec.importPolicy is Deny", "set spec.importPolicy: Allow"),
		},
		"NamespacedObserveOnlyThroughOwnProviderConfig": {
			reason: "A namespace's own ProviderConfig (its own project and credentials) may import.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", policies(xpv2.ManagementActionObserve), func(o client.Object) {
				o.(*nsv1alpha1.PostgresqlInstance).Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "team"}
			}), world: world{kube: []fixture{namespacedProviderConfig(ns, "team")}, taken: []string{"orders"}}},
			want: allowed(0, mayNotCreate),
		},
		"NamespacedPoliciesAll": {
			reason: "A namespaced instance of management policies [*] is checked against Cloud SQL.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders", policies(xpv2.ManagementActionAll)), world: taken},
			want:   denied(1, "PostgresqlInstance team-x/orders: a Cloud SQL instance named orders already exists"),
		},
	})
}

// A namespaced instance may use only a configuration lent to its namespace,
// and must name one.
func TestHandleCreateAccess(t *testing.T) {
	t.Parallel()
	lentTo := func(names ...string) fixture {
		return lentClusterProviderConfig("default", func(s *nsv1alpha1.ClusterProviderConfigSpec) {
			s.Namespaces = &nsv1alpha1.NamespaceSelection{Names: names}
		})
	}
	selecting := lentClusterProviderConfig("default", func(s *nsv1alpha1.ClusterProviderConfigSpec) {
		s.Namespaces = &nsv1alpha1.NamespaceSelection{Names: []string{"team-y"}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"cloudsql": "shared"}}}
	})
	run(t, map[string]testCase{
		"NoConfigRef": {
			reason: "A namespaced instance that names no configuration gets none, not even ClusterProviderConfig default: denied.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", func(o client.Object) {
				o.(*nsv1alpha1.PostgresqlInstance).Spec.ProviderConfigReference = nil
			}), world: world{kube: defaultPC}},
			want: denied(0, "PostgresqlInstance team-x/orders: spec.providerConfigRef is not set", "no configuration is used implicitly"),
		},
		"NotLent": {
			reason: "A ClusterProviderConfig without spec.namespaces admits no namespace: denied, saying what the platform team must add.",
			args: args{op: admissionv1.Create, object: nsInstance("orders"), world: world{
				kube: []fixture{lentClusterProviderConfig("default", func(s *nsv1alpha1.ClusterProviderConfigSpec) { s.Namespaces = nil })},
			}},
			want: denied(0, `PostgresqlInstance team-x/orders: spec.providerConfigRef names a configuration this namespace may not use: ClusterProviderConfig "default" does not admit namespace team-x`,
				"its spec.namespaces admits no namespace", "add team-x to the ClusterProviderConfig's spec.namespaces.names"),
		},
		"LentToOthers": {
			reason: "A ClusterProviderConfig lent to other namespaces by name is denied to this one.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders"), world: world{kube: []fixture{lentTo("team-y", "team-z")}}},
			want:   denied(0, "it admits only spec.namespaces.names [team-y, team-z]"),
		},
		"LentByName": {
			reason: "A ClusterProviderConfig that lists the namespace is used: the name is checked.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders"), world: world{kube: []fixture{lentTo(ns)}, taken: []string{"orders"}}},
			want:   denied(1, "a Cloud SQL instance named orders already exists"),
		},
		"LentByLabel": {
			reason: "A ClusterProviderConfig whose selector matches the namespace's labels is used.",
			args: args{op: admissionv1.Create, object: nsInstance("orders"), world: world{
				kube: []fixture{selecting, namespaceLabelled(ns, map[string]string{"cloudsql": "shared"})},
			}},
			want: allowed(1),
		},
		"LabelLentJustNow": {
			reason: "The namespace's labels are read from the API server, not a cache that may lag a label just set (here, lacks the namespace).",
			args: args{op: admissionv1.Create, object: nsInstance("orders"), world: world{
				kube: []fixture{selecting}, late: []fixture{namespaceLabelled(ns, map[string]string{"cloudsql": "shared"})},
			}},
			want: allowed(1),
		},
		"LabelDoesNotMatch": {
			reason: "A namespace whose labels the selector does not match is denied, naming the selector.",
			args: args{op: admissionv1.Create, object: nsInstance("orders"), world: world{
				kube: []fixture{selecting, namespaceLabelled(ns, map[string]string{"cloudsql": "private"})},
			}},
			want: denied(0, "it admits only spec.namespaces.names [team-y] and spec.namespaces.selector cloudsql=shared", "or label the namespace to match spec.namespaces.selector"),
		},
		"ObjectOfAnotherNamedNamespace": {
			reason: "So is one that names another namespace than its object's, which would have the object judged by that namespace's access.",
			args: args{op: admissionv1.Create, object: nsInstance("orders"), namespace: ptr.To("team-y"),
				world: world{kube: defaultPC, taken: []string{"orders"}}},
			want: denied(0, `the PostgresqlInstance's metadata.namespace "team-x" differs from the admission request's namespace "team-y"`),
		},
		"ObjectOfAnotherNamespace": {
			reason: "A request whose object is of another namespace than the request's was not sent by the API server: denied before anything is read.",
			args:   args{op: admissionv1.Create, kind: &nsKind, raw: rawOf(t, nsInstance("orders")), world: world{kube: defaultPC, taken: []string{"orders"}}},
			want:   denied(0, `the PostgresqlInstance's metadata.namespace "team-x" differs from the admission request's namespace ""`),
		},
	})
}

func TestHandleCreateProviderConfig(t *testing.T) {
	t.Parallel()
	failing := &test.MockClient{MockGet: test.NewMockGetFn(errBoom)}
	run(t, map[string]testCase{
		"ProviderConfigMissing": {
			reason: "Without its ProviderConfig the instance is admitted with a warning that names the ProviderConfig: it may be applied next.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{kube: []fixture{clusterProviderConfig("default")}}},
			want: warned(0, `PostgresqlInstance orders: ProviderConfig "default" does not exist, so whether Cloud SQL instance orders is free was not checked; `+
				"the instance stays unsynced until it exists"),
		},
		"NamedProviderConfigMissing": {
			reason: "The warning names the ProviderConfig that spec.providerConfigRef names.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders", configRef("", "team-a"), named("orders-a")), world: world{kube: defaultPC}},
			want:   warned(0, `PostgresqlInstance orders: ProviderConfig "team-a" does not exist, so whether Cloud SQL instance orders-a is free was not checked`),
		},
		"NamedProviderConfig": {
			reason: "The ProviderConfig that spec.providerConfigRef names says where to look, not ProviderConfig default.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders", configRef("", "team-a")), world: world{
				kube: []fixture{providerConfig("default", unreachable()), providerConfig("team-a")}, taken: []string{"orders"},
			}},
			want: denied(1, "PostgresqlInstance orders: a Cloud SQL instance named orders already exists in project "+project+` (ProviderConfig "team-a")`),
		},
		"ProviderConfigNotYetCached": {
			reason: "A ProviderConfig the cache has not seen yet (applied together with the instance) is read from the API server.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{late: defaultPC, taken: []string{"orders"}}},
			want:   denied(1, "a Cloud SQL instance named orders already exists in project "+project),
		},
		"ProviderConfigReadFails": {
			reason: "A ProviderConfig that cannot be read is no reason to deny: the instance is admitted unchecked, with the error.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{pcs: failing}},
			want:   warned(0, "PostgresqlInstance orders: whether a Cloud SQL instance named orders exists in project ? was not checked (boom); "+uncheckedFix),
		},
		"ProviderConfigReadFromTheAPIServerFails": {
			reason: "When the cache has no ProviderConfig and the API server cannot be read, the instance is admitted unchecked.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{secrets: failing}},
			want:   warned(0, "whether a Cloud SQL instance named orders exists in project ? was not checked (boom)"),
		},
		"ClusterProviderConfigMissing": {
			reason: "Without ClusterProviderConfig default a namespaced instance is admitted with a warning that names it.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders"), world: world{kube: []fixture{providerConfig("default")}}},
			want: warned(0, `PostgresqlInstance team-x/orders: ClusterProviderConfig "default" does not exist, so whether Cloud SQL instance orders is free was not checked; `+
				"the instance stays unsynced until it exists"),
		},
		"ClusterProviderConfigNotYetCached": {
			reason: "A ClusterProviderConfig the cache has not seen yet is read from the API server.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders"), world: world{late: defaultPC, taken: []string{"orders"}}},
			want:   denied(1, "PostgresqlInstance team-x/orders: a Cloud SQL instance named orders already exists in project "+project+` (ClusterProviderConfig "default")`),
		},
		"NamedClusterProviderConfig": {
			reason: "The ClusterProviderConfig that spec.providerConfigRef names says where to look.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", configRef(nsv1alpha1.ClusterProviderConfigKind, "shared")), world: world{
				kube: []fixture{clusterProviderConfig("default", unreachable()), clusterProviderConfig("shared")}, taken: []string{"orders"},
			}},
			want: denied(1, "already exists in project "+project+` (ClusterProviderConfig "shared")`),
		},
		"NamespacedProviderConfig": {
			reason: "A ProviderConfig of the instance's namespace says where to look, and is named with its namespace.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", configRef(nsv1alpha1.ProviderConfigKind, "team")), world: world{
				kube: []fixture{clusterProviderConfig("default", unreachable()), namespacedProviderConfig(ns, "team")}, taken: []string{"orders"},
			}},
			want: denied(1, "PostgresqlInstance team-x/orders: a Cloud SQL instance named orders already exists in project "+project+` (ProviderConfig "team" of namespace team-x): `+
				"choose another spec.forProvider.name; "+observeHint),
		},
		"NamespacedProviderConfigMissing": {
			reason: "Without the ProviderConfig it names, a namespaced instance is admitted with a warning naming it and its namespace.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders", configRef(nsv1alpha1.ProviderConfigKind, "team")), world: world{kube: defaultPC}},
			want:   warned(0, `PostgresqlInstance team-x/orders: ProviderConfig "team" of namespace team-x does not exist, so whether Cloud SQL instance orders is free was not checked`),
		},
		"NamespacedProviderConfigOfAnotherNamespace": {
			reason: "A namespaced instance uses ProviderConfigs of its own namespace only.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", configRef(nsv1alpha1.ProviderConfigKind, "team")), world: world{
				kube: []fixture{namespacedProviderConfig("team-y", "team")}, taken: []string{"orders"},
			}},
			want: warned(0, `ProviderConfig "team" of namespace team-x does not exist`),
		},
		"NamespacedProviderConfigNotYetCached": {
			reason: "A namespaced ProviderConfig the cache has not seen yet is read from the API server.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", configRef(nsv1alpha1.ProviderConfigKind, "team")), world: world{
				late: []fixture{namespacedProviderConfig(ns, "team")}, taken: []string{"orders"},
			}},
			want: denied(1, `(ProviderConfig "team" of namespace team-x)`),
		},
		"UnknownConfigKind": {
			reason: "A spec.providerConfigRef.kind that is no configuration's is no reason to deny: admitted unchecked, saying what is wrong.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders", configRef("Secret", "team")), world: world{kube: defaultPC}},
			want: warned(0, "PostgresqlInstance team-x/orders: whether a Cloud SQL instance named orders exists in project ? was not checked",
				`spec.providerConfigRef.kind "Secret" is not a kind of provider configuration`),
		},
		"NamespacedConfigReadFails": {
			reason: "A namespaced instance's configuration that cannot be read leaves it admitted unchecked.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders"), world: world{pcs: failing}},
			want:   warned(0, "PostgresqlInstance team-x/orders: whether a Cloud SQL instance named orders exists in project ? was not checked (boom)"),
		},
		"NamespacedConfigReadFromTheAPIServerFails": {
			reason: "When the cache has no configuration and the API server cannot be read, a namespaced instance is admitted unchecked.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders"), world: world{secrets: failing}},
			want:   warned(0, "PostgresqlInstance team-x/orders: whether a Cloud SQL instance named orders exists in project ? was not checked (boom)"),
		},
	})
}

func TestHandleCreateLength(t *testing.T) {
	t.Parallel()
	n83 := "a" + strings.Repeat("b", 82) // with the 14 characters of project: 97
	run(t, map[string]testCase{
		"NameAndProjectTooLong": {
			reason: "A name that with the project ID exceeds 97 characters is denied, naming both, the ProviderConfig, and the field to change.",
			args:   args{op: admissionv1.Create, object: clusterInstance("too-long", named(n83+"c")), world: world{kube: defaultPC}},
			want: denied(0, "PostgresqlInstance too-long: Cloud SQL instance name "+n83+"c (84 characters) and project ID "+project+` (14 characters) of ProviderConfig "default" `+
				"add up to 98 characters, more than the 97 Cloud SQL allows: choose a shorter spec.forProvider.name"),
		},
		"NameAndProjectOf97Characters": {
			reason: "97 characters are allowed: the name is checked in Cloud SQL.",
			args:   args{op: admissionv1.Create, object: clusterInstance("longest", named(n83)), world: world{kube: defaultPC}},
			want:   allowed(1),
		},
		"NameAndLongerProjectTooLong": {
			reason: "The project ID is the named ProviderConfig's.",
			args: args{op: admissionv1.Create, object: clusterInstance("too-long", named("orders"), configRef("", "long-project")), world: world{
				kube: []fixture{providerConfig("long-project", inProject(strings.Repeat("p", 92)))},
			}},
			want: denied(0, "and project ID "+strings.Repeat("p", 92)+` (92 characters) of ProviderConfig "long-project" add up to 98 characters`),
		},
		"NamespacedNameAndProjectTooLong": {
			reason: "A namespaced instance's name and project are too long alike, and the denial names its namespace and ClusterProviderConfig.",
			args:   args{op: admissionv1.Create, object: nsInstance("too-long", externalName(n83+"c")), world: world{kube: defaultPC}},
			want: denied(0, "PostgresqlInstance team-x/too-long: Cloud SQL instance name "+n83+"c (84 characters)",
				`of ClusterProviderConfig "default" add up to 98 characters, more than the 97 Cloud SQL allows: choose a shorter spec.forProvider.name`),
		},
	})
}

func TestHandleCreateCredentials(t *testing.T) {
	t.Parallel()
	run(t, map[string]testCase{
		"KeyFromASecret": {
			reason: "A service-account key in a secret authenticates at its token_uri (the emulator's) and the name is checked.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube:  []fixture{providerConfig("default", keyInSecret(secretNS, "admin-key", "key.json")), keySecret(secretNS, "admin-key", "key.json", emulator.TokenPath)},
				taken: []string{"orders"},
			}},
			want: denied(1, "a Cloud SQL instance named orders already exists"),
		},
		"KeyFromASecretNotYetCached": {
			reason: "Credentials are read from the API server: a secret the cache does not hold is found.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube: []fixture{providerConfig("default", keyInSecret(secretNS, "admin-key", "key.json"))},
				late: []fixture{keySecret(secretNS, "admin-key", "key.json", emulator.TokenPath)},
			}},
			want: allowed(1),
		},
		"KeySecretMissing": {
			reason: "Credentials that cannot be read leave the instance admitted unchecked, with the project and the secret named.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube: []fixture{providerConfig("default", keyInSecret(secretNS, "admin-key", "key.json"))},
			}},
			want: warned(0, "PostgresqlInstance orders: whether a Cloud SQL instance named orders exists in project "+project+" was not checked",
				"ProviderConfig \"default\": cannot read secret crossplane-system/admin-key named by spec.credentials.secretRef", uncheckedFix),
		},
		"KeyNotJSON": {
			reason: "A key that is not JSON leaves the instance admitted unchecked, saying where the key is.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube: []fixture{providerConfig("default", keyInSecret(secretNS, "admin-key", "key.json")), dataSecret(secretNS, "admin-key", "key.json", "not json")},
			}},
			want: warned(0, "exists in project "+project+" was not checked", `key "key.json" of secret crossplane-system/admin-key is not JSON`),
		},
		"KeyRejectedByTheTokenEndpoint": {
			reason: "A key whose token_uri gives no token leaves the instance admitted unchecked: Cloud SQL cannot be asked.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube:  []fixture{providerConfig("default", keyInSecret(secretNS, "admin-key", "key.json")), keySecret(secretNS, "admin-key", "key.json", "/no-token-here")},
				taken: []string{"orders"},
			}},
			want: warned(0, "PostgresqlInstance orders: whether a Cloud SQL instance named orders exists in project "+project+" was not checked", "oauth2", uncheckedFix),
		},
		"ClientCannotBeBuilt": {
			reason: "Credentials from which no Cloud SQL client can be built leave the instance admitted unchecked.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube: []fixture{providerConfig("default", keyInSecret(secretNS, "admin-key", "key.json")),
					dataSecret(secretNS, "admin-key", "key.json", `{"type":"external_account","audience":"x"}`)},
				taken: []string{"orders"},
			}},
			want: warned(0, "whether a Cloud SQL instance named orders exists in project "+project+" was not checked",
				"ProviderConfig \"default\": cannot create a Cloud SQL Admin API client"),
		},
		"KeyFromAFile": {
			reason: "Credentials of source Filesystem are read from the file system WithFs gives.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube:     []fixture{providerConfig("default", keyInFile("/creds/key.json"))},
				keyFiles: []string{"/creds/key.json"}, taken: []string{"orders"},
			}},
			want: denied(1, "a Cloud SQL instance named orders already exists"),
		},
		"KeyFileMissing": {
			reason: "A key file that is not there leaves the instance admitted unchecked, saying which source failed.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube: []fixture{providerConfig("default", keyInFile("/creds/missing.json"))},
			}},
			want: warned(0, "was not checked", "ProviderConfig \"default\": cannot read the credentials of source Filesystem"),
		},
		"NamespacedKeyFromItsNamespace": {
			reason: "A namespaced ProviderConfig's key is read from a secret of its own namespace.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", configRef(nsv1alpha1.ProviderConfigKind, "team")), world: world{
				kube: []fixture{namespacedProviderConfig(ns, "team", keyInSecret("ignored", "team-key", "sa.json")), keySecret(ns, "team-key", "sa.json", emulator.TokenPath),
					keySecret(secretNS, "team-key", "other.json", "/no-token-here")},
				taken: []string{"orders"},
			}},
			want: denied(1, "PostgresqlInstance team-x/orders: a Cloud SQL instance named orders already exists"),
		},
		"NamespacedKeyOnlyInAnotherNamespace": {
			reason: "A namespaced ProviderConfig does not reach secrets of other namespaces: admitted unchecked, naming the secret it looked for.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", configRef(nsv1alpha1.ProviderConfigKind, "team")), world: world{
				kube: []fixture{namespacedProviderConfig(ns, "team", keyInSecret("ignored", "team-key", "sa.json")), keySecret(secretNS, "team-key", "sa.json", emulator.TokenPath)},
			}},
			want: warned(0, "PostgresqlInstance team-x/orders: whether a Cloud SQL instance named orders exists in project "+project+" was not checked",
				"ProviderConfig \"team\" of namespace team-x: cannot read secret team-x/team-key"),
		},
	})
}

func TestHandleCreateLookup(t *testing.T) {
	t.Parallel()
	run(t, map[string]testCase{
		"NameTaken": {
			reason: "A name an instance of the project has is denied, naming the instance, project and configuration, with both ways out.",
			args:   args{op: admissionv1.Create, object: clusterInstance("wants-taken", named("taken-db")), world: world{kube: defaultPC, taken: []string{"taken-db"}}},
			want: denied(1, "PostgresqlInstance wants-taken: a Cloud SQL instance named taken-db already exists in project "+project+` (ProviderConfig "default"): `+
				"choose another spec.forProvider.name; "+observeHint),
		},
		"NameTakenByMetadataName": {
			reason: "The Cloud SQL name is metadata.name when nothing else names it.",
			args:   args{op: admissionv1.Create, object: clusterInstance("taken-db"), world: world{kube: defaultPC, taken: []string{"taken-db"}}},
			want:   denied(1, "PostgresqlInstance taken-db: a Cloud SQL instance named taken-db already exists"),
		},
		"NameTakenByExternalName": {
			reason: "The Cloud SQL name is the external-name annotation's when spec.forProvider.name is not set.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders", externalName("taken-db")), world: world{kube: defaultPC, taken: []string{"taken-db"}}},
			want:   denied(1, "PostgresqlInstance orders: a Cloud SQL instance named taken-db already exists"),
		},
		"DryRunNameTaken": {
			reason: "A dry run asks nothing of Cloud SQL (it must not spend the request budget): without listings, it is admitted with a warning that the name was not checked, and why.",
			args:   args{op: admissionv1.Create, dryRun: true, object: clusterInstance("taken-db"), world: world{kube: defaultPC, taken: []string{"taken-db"}}},
			want: warned(0, "PostgresqlInstance taken-db: whether a Cloud SQL instance named taken-db exists in project "+project+" was not checked on this dry run: "+
				"no listing of the project is at hand, and dry runs spend none of the Cloud SQL request budget; the real create checks it (if it is taken, choose another spec.forProvider.name)"),
		},
		"NamespacedDryRun": {
			reason: "A namespaced dry run asks nothing of Cloud SQL either.",
			args:   args{op: admissionv1.Create, dryRun: true, object: nsInstance("orders"), world: world{kube: defaultPC, taken: []string{"orders"}}},
			want:   warned(0, "PostgresqlInstance team-x/orders: whether a Cloud SQL instance named orders exists", "was not checked on this dry run: no listing of the project is at hand"),
		},
		"DryRunInvalidName": {
			reason: "What needs no lookup is judged on a dry run as on a create.",
			args:   args{op: admissionv1.Create, dryRun: true, object: clusterInstance("orders", named("a"+strings.Repeat("b", 90))), world: world{kube: defaultPC}},
			want:   denied(0, "Cloud SQL instance name a"+strings.Repeat("b", 90)+" (91 characters)"),
		},
		"NameFree": {
			reason: "A name no instance of the project has is admitted without a warning.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders", named("free-db")), world: world{kube: defaultPC, taken: []string{"taken-db"}}},
			want:   allowed(1),
		},
		"NameTakenInAnotherProject": {
			reason: "Names are unique per project: one taken in another project is free in the configuration's.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{kube: defaultPC, elsewhere: []string{"orders"}}},
			want:   allowed(1),
		},
		"NameTakenInTheConfigurationsProject": {
			reason: "The project looked in is the ProviderConfig's.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube: []fixture{providerConfig("default", inProject(other))}, elsewhere: []string{"orders"},
			}},
			want: denied(1, "a Cloud SQL instance named orders already exists in project "+other+` (ProviderConfig "default")`),
		},
		"NameReserved": {
			reason: "The name of an instance deleted a moment ago is reserved but invisible to instances.get: admitted, the conflict shows when the controller creates it.",
			args:   args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{kube: defaultPC, reserved: []string{"orders"}}},
			want:   allowed(1),
		},
		"NamespacedNameTaken": {
			reason: "A namespaced instance's name taken in the project of its ClusterProviderConfig is denied, naming its namespace and the ClusterProviderConfig.",
			args:   args{op: admissionv1.Create, object: nsInstance("wants-taken", named("taken-by-ns")), world: world{kube: defaultPC, taken: []string{"taken-by-ns"}}},
			want: denied(1, "PostgresqlInstance team-x/wants-taken: a Cloud SQL instance named taken-by-ns already exists in project "+project+` (ClusterProviderConfig "default"): `+
				"choose another spec.forProvider.name; "+observeHint),
		},
		"NamespacedNameFree": {
			reason: "A namespaced instance's free name is admitted without a warning.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders", named("team-x-orders")), world: world{kube: defaultPC, taken: []string{"orders"}}},
			want:   allowed(1),
		},
		"NamespacedNameReserved": {
			reason: "A reserved name is admitted for the namespaced kind too.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders"), world: world{kube: defaultPC, reserved: []string{"orders"}}},
			want:   allowed(1),
		},
		"CloudSQLFails": {
			reason: "An error of Cloud SQL is no reason to deny: admitted with a warning naming the instance, project and error, saying the controller reports a conflict.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{kube: defaultPC, taken: []string{"orders"},
				faults: []emulator.Fault{{Method: emulator.MethodInstancesGet, ServerErrorShare: 1}}}},
			want: warned(1, "PostgresqlInstance orders: whether a Cloud SQL instance named orders exists in project "+project+" was not checked (googleapi: Error 50", uncheckedFix),
		},
		"CloudSQLRateLimited": {
			reason: "A 429 of Cloud SQL leaves the instance admitted unchecked.",
			args: args{op: admissionv1.Create, object: nsInstance("orders"), world: world{kube: defaultPC, taken: []string{"orders"},
				faults: []emulator.Fault{{Method: emulator.MethodInstancesGet, RateLimitShare: 1}}}},
			want: warned(1, "PostgresqlInstance team-x/orders: whether a Cloud SQL instance named orders exists in project "+project+" was not checked (googleapi: Error 429", uncheckedFix),
		},
		"CloudSQLTimesOut": {
			reason: "A Cloud SQL that does not answer within the timeout leaves the instance admitted unchecked: an outage must not block declaring instances.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{kube: defaultPC, taken: []string{"orders"}, timeout: 100 * time.Millisecond,
				faults: []emulator.Fault{{Method: emulator.MethodInstancesGet, Latency: 10 * time.Second}}}},
			want: warned(1, "PostgresqlInstance orders: whether a Cloud SQL instance named orders exists in project "+project+" was not checked (context deadline exceeded); "+uncheckedFix),
		},
		"CloudSQLUnreachable": {
			reason: "A Cloud SQL endpoint that refuses connections leaves the instance admitted unchecked.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube: []fixture{providerConfig("default", unreachable())}, taken: []string{"orders"},
			}},
			want: warned(0, "PostgresqlInstance orders: whether a Cloud SQL instance named orders exists in project "+project+" was not checked", "127.0.0.1:1", uncheckedFix),
		},
	})
}

// TestHandleCreateTimeoutIsBounded checks that the lookup gives up at the
// timeout, not when Cloud SQL answers.
func TestHandleCreateTimeoutIsBounded(t *testing.T) {
	t.Parallel()
	start := time.Now()
	resp, _ := handle(t, args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{kube: defaultPC, timeout: 100 * time.Millisecond,
		faults: []emulator.Fault{{Method: emulator.MethodInstancesGet, Latency: 10 * time.Second}}}})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("\nA lookup that Cloud SQL answers in 10s must give up after the 100ms timeout\nHandle(...) took %v, warnings %q", took, resp.Warnings)
	}
}

// TestHandleCreateNotFoundOutsideCloudSQL: only Cloud SQL's own 404 says a
// name is free.
func TestHandleCreateNotFoundOutsideCloudSQL(t *testing.T) {
	t.Parallel()
	run(t, map[string]testCase{
		"NotFoundFromAWrongEndpointPath": {
			reason: "An endpoint whose path is wrong (here /sqladmin/, which the server does not serve: 404 \"Method not found\", reason notFound) " +
				"says nothing of the name: the instance is admitted with the warning that it was not checked, not as free.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{
				kube: []fixture{providerConfig("default", atEndpoint("/sqladmin/"))}, taken: []string{"orders"},
			}},
			want: warned(0, "PostgresqlInstance orders: whether a Cloud SQL instance named orders exists in project "+project+" was not checked", uncheckedFix),
		},
	})
}

// atURL makes the endpoint url, a server other than the emulator.
func atURL(url string) specOption {
	return func(s *v1alpha1.ProviderConfigSpec, _ string) { s.Endpoint = url }
}

// A configuration that may not use its key or endpoint is denied, dry runs
// included, with a message that names the configuration, its namespace, the
// secret and key or endpoint, and says what to do; nothing is looked up.
func TestHandleCreateRefused(t *testing.T) {
	t.Parallel()
	tenantPC := configRef(nsv1alpha1.ProviderConfigKind, "team")
	external := `{"type":"external_account","audience":"//iam.googleapis.com/x","subject_token_type":"urn:ietf:params:oauth:token-type:jwt",` +
		`"token_url":"http://127.0.0.1:1/token","credential_source":{"file":"/var/run/secrets/kubernetes.io/serviceaccount/token"}}`
	run(t, map[string]testCase{
		"TenantExternalAccount": {
			reason: "A namespaced ProviderConfig's external_account key is denied, on a dry run too.",
			args: args{op: admissionv1.Create, dryRun: true, object: nsInstance("orders", tenantPC), world: world{kube: []fixture{
				namespacedProviderConfig(ns, "team", keyInSecret(ns, "gcp", "key.json")), dataSecret(ns, "gcp", "key.json", external),
			}}},
			want: denied(0, `PostgresqlInstance team-x/orders is denied: ProviderConfig "team" of namespace team-x: key "key.json" of secret team-x/gcp has type "external_account", `+
				"but a namespaced ProviderConfig may only hold a service-account key (type service_account, as `gcloud iam service-accounts keys create` writes it): put such a key in the secret; "+
				"workload identity federation (external_account) is only available through a ClusterProviderConfig that the platform team owns"),
		},
		"TenantOtherType": {
			reason: "So is any other type than service_account.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", tenantPC), world: world{kube: []fixture{
				namespacedProviderConfig(ns, "team", keyInSecret(ns, "gcp", "key.json")), dataSecret(ns, "gcp", "key.json", `{"type":"authorized_user"}`),
			}}},
			want: denied(0, `key "key.json" of secret team-x/gcp has type "authorized_user", but a namespaced ProviderConfig may only hold a service-account key`),
		},
		"TenantServiceAccount": {
			reason: "A namespaced ProviderConfig's service-account key is used, its tokens got from Google's endpoint (the emulator's in this test).",
			args: args{op: admissionv1.Create, object: nsInstance("orders", tenantPC), world: world{
				kube:  []fixture{namespacedProviderConfig(ns, "team", keyInSecret(ns, "gcp", "key.json")), keySecret(ns, "gcp", "key.json", "/not-a-token-endpoint")},
				taken: []string{"orders"},
			}},
			want: denied(1, "a Cloud SQL instance named orders already exists"),
		},
		"TenantEndpointNotAllowed": {
			reason: "A namespaced ProviderConfig's endpoint must be one [tenancy] namespaced_endpoints allows.",
			args: args{op: admissionv1.Create, dryRun: true, object: nsInstance("orders", tenantPC), world: world{
				kube:      []fixture{namespacedProviderConfig(ns, "team", atURL("http://metadata.google.internal/"))},
				endpoints: []string{"https://sqladmin.example.com"},
			}},
			want: denied(0, `PostgresqlInstance team-x/orders is denied: ProviderConfig "team" of namespace team-x: spec.endpoint "http://metadata.google.internal/" is not allowed for namespaced ProviderConfigs `+
				"by [tenancy] namespaced_endpoints of the provider's configuration file (https://sqladmin.example.com): remove spec.endpoint to use Google's Cloud SQL Admin API"),
		},
		"TenantEndpointNoneAllowed": {
			reason: "By default no endpoint is allowed.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", tenantPC), world: world{
				kube: []fixture{namespacedProviderConfig(ns, "team")}, endpoints: []string{},
			}},
			want: denied(0, `spec.endpoint "http://127.0.0.1`, `namespaced_endpoints of the provider's configuration file (none)`),
		},
		"PlatformEndpointAnywhere": {
			reason: "The platform's configurations name any endpoint.",
			args:   args{op: admissionv1.Create, object: nsInstance("orders"), world: world{kube: defaultCPC(), endpoints: []string{}}},
			want:   allowed(1),
		},
		"TenantExternalAccountObserveOnly": {
			reason: "An instance that only observes is read with its configuration's key: a namespaced ProviderConfig's external_account key is denied for it too.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", tenantPC, policies(xpv2.ManagementActionObserve)), world: world{kube: []fixture{
				namespacedProviderConfig(ns, "team", keyInSecret(ns, "gcp", "key.json")), dataSecret(ns, "gcp", "key.json", external),
			}}},
			want: denied(0, `PostgresqlInstance team-x/orders is denied: ProviderConfig "team" of namespace team-x: key "key.json" of secret team-x/gcp has type "external_account"`),
		},
		"TenantEndpointNotAllowedObserveOnly": {
			reason: "An instance that only observes is read at its configuration's endpoint: one [tenancy] namespaced_endpoints does not allow is denied for it too.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", tenantPC, policies(xpv2.ManagementActionObserve)), world: world{
				kube:      []fixture{namespacedProviderConfig(ns, "team", atURL("http://metadata.google.internal/"))},
				endpoints: []string{"https://sqladmin.example.com"},
			}},
			want: denied(0, `PostgresqlInstance team-x/orders is denied: ProviderConfig "team" of namespace team-x: spec.endpoint "http://metadata.google.internal/" is not allowed for namespaced ProviderConfigs`),
		},
		"PlatformExternalSourceObserveOnly": {
			reason: "A platform's external_account key with a credential_source is denied for an instance that only observes too.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders", policies(xpv2.ManagementActionObserve)), world: world{kube: []fixture{
				providerConfig("default", keyInSecret(secretNS, "wif", "config.json")), dataSecret(secretNS, "wif", "config.json", external),
			}}},
			want: denied(0, `key "config.json" of secret crossplane-system/wif is an external_account configuration whose credential_source reads a file`),
		},
		"TenantServiceAccountObserveOnly": {
			reason: "A namespaced ProviderConfig's service-account key is fine for an instance that only observes, which Cloud SQL is not asked about.",
			args: args{op: admissionv1.Create, object: nsInstance("orders", tenantPC, policies(xpv2.ManagementActionObserve)), world: world{
				kube:  []fixture{namespacedProviderConfig(ns, "team", keyInSecret(ns, "gcp", "key.json")), keySecret(ns, "gcp", "key.json", "/not-a-token-endpoint")},
				taken: []string{"orders"},
			}},
			want: allowed(0, mayNotCreate),
		},
		"PlatformExternalSource": {
			reason: "A platform's external_account key with a credential_source is denied unless the configuration file allows it.",
			args: args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{kube: []fixture{
				providerConfig("default", keyInSecret(secretNS, "wif", "config.json")), dataSecret(secretNS, "wif", "config.json", external),
			}}},
			want: denied(0, `ProviderConfig "default": cannot create a Cloud SQL Admin API client: key "config.json" of secret crossplane-system/wif is an external_account configuration whose credential_source reads a file`,
				"[credentials] allow_external_account_sources = true"),
		},
	})
}

// defaultCPC is the ClusterProviderConfig "default" at the emulator.
func defaultCPC() []fixture { return []fixture{clusterProviderConfig("default")} }

// Error text from the configuration's endpoint reaches kubectl cut, and an
// endless answer is reported as too large.
func TestHandleCreateLongErrors(t *testing.T) {
	t.Parallel()
	long := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error":{"code":403,"message":"` + strings.Repeat("denied ", 2000) + `"}}`))
	}))
	t.Cleanup(long.Close)
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 1600 { // 100 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(endless.Close)
	for name, tc := range map[string]struct {
		url  string
		want []string
	}{
		"Long":    {url: long.URL, want: []string{"denied denied", "more bytes cut]"}},
		"Endless": {url: endless.URL, want: []string{"is larger than 65536 bytes", "check that the provider configuration's spec.endpoint names a Cloud SQL Admin API"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp, _ := handle(t, args{op: admissionv1.Create, object: clusterInstance("orders"), world: world{kube: []fixture{providerConfig("default", atURL(tc.url))}}})
			if !resp.Allowed || len(resp.Warnings) != 1 {
				t.Fatalf("want an admission with one warning, got allowed %t, warnings %q", resp.Allowed, resp.Warnings)
			}
			w := resp.Warnings[0]
			if len(w) > 2*cloudsql.MaxMessage {
				t.Errorf("the warning has %d bytes", len(w))
			}
			for _, part := range append(tc.want, "PostgresqlInstance orders: whether a Cloud SQL instance named orders exists", uncheckedFix) {
				if !strings.Contains(w, part) {
					t.Errorf("the warning %q does not hold %q", w, part)
				}
			}
		})
	}
}
