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

package integration_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/instance"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/postgresqlobject"
)

// The tests run one API server with every webhook registered from
// package/webhookconfigurations, served by a manager as the provider serves them,
// and one Cloud SQL emulator behind the ProviderConfig "default".
const (
	project    = "webhook-tests-123"
	secretNS   = "crossplane-system"
	pcDefault  = "default"
	pcProxyKey = "with-proxy-key"
)

var (
	env  *controlplane.Env
	emu  *emulator.Server
	pods *switchable // the pod injector, native or classic
	// endpoint is the emulator's URL, the spec.endpoint of every configuration.
	endpoint string
	// secretLists counts the lists of secrets (not watches) that the
	// manager sends to the API server.
	secretLists atomic.Int64
	// cached is the manager's cache.
	cached client.Reader
)

// countSecretLists counts in secretLists the requests that list secrets, in
// one namespace or all.
type countSecretLists struct{ next http.RoundTripper }

func (c countSecretLists) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/secrets") && r.URL.Query().Get("watch") != "true" {
		secretLists.Add(1)
	}
	return c.next.RoundTrip(r)
}

// podRequests records the Accept header of each list or watch of pods
// (of every namespace) that the rollout's manager sends.
type podRequests struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (p *podRequests) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.URL.Path == "/api/v1/pods" {
		p.mu.Lock()
		p.seen = append(p.seen, r.Header.Get("Accept"))
		p.mu.Unlock()
	}
	return p.next.RoundTrip(r)
}

// accepts are the Accept headers recorded so far.
func (p *podRequests) accepts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// rolloutPodRequests are the rollout's manager's lists and watches of pods.
var rolloutPodRequests = &podRequests{}

// A switchable forwards admission requests to the injector of the sidecar mode a
// test chose, and counts them: both modes are tested against one API server.
type switchable struct {
	mu        sync.Mutex
	native    admission.Handler
	classic   admission.Handler
	current   admission.Handler
	calls     atomic.Int64
	recording bool
	took      []time.Duration // how long each request took, while recording
}

func (s *switchable) Handle(ctx context.Context, req admission.Request) admission.Response {
	s.calls.Add(1)
	s.mu.Lock()
	h := s.current
	s.mu.Unlock()
	start := time.Now()
	resp := h.Handle(ctx, req)
	d := time.Since(start)
	s.mu.Lock()
	if s.recording {
		s.took = append(s.took, d)
	}
	s.mu.Unlock()
	return resp
}

// record starts (discarding what was recorded) or stops timing requests.
func (s *switchable) record(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recording, s.took = on, nil
}

// recorded are the durations of the requests since record(true).
func (s *switchable) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.took...)
}

// instances serves the PostgresqlInstance webhook: the Validator as the
// provider wires it, without listings unless a test gives it some.
var instances *swappedValidator

// A swappedValidator forwards admission requests to the PostgresqlInstance
// Validator a test chose.
type swappedValidator struct {
	mu           sync.Mutex
	current      admission.Handler
	services     *providerconfig.ServiceCache
	options      []instance.Option
	newValidator func(*providerconfig.ServiceCache, ...instance.Option) admission.Handler
}

func (s *swappedValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	s.mu.Lock()
	h := s.current
	s.mu.Unlock()
	return h.Handle(ctx, req)
}

// withListings makes the webhook check names in o's listings no older than
// maxAge, as cmd/provider wires it, until the test ends. The other tests
// keep a validator without listings: they seed instances and expect the
// next create to see them, which a listing made before would not.
func (s *swappedValidator) withListings(t *testing.T, o *observer.Observer, maxAge time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	previous := s.current
	s.current = s.newValidator(s.services, append(slices.Clone(s.options), instance.WithListings(o, maxAge))...)
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.current = previous
	})
}

// use makes the injector run proxies as native sidecars or not until the test ends.
func (s *switchable) use(t *testing.T, native bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = s.classic
	if native {
		s.current = s.native
	}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.current = s.native
	})
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // make unit: the tests that need a control plane skip
	}
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctrl.SetLogger(logr.Discard())
	emu = emulator.New()
	srv := httptest.NewServer(emu)
	defer srv.Close()
	endpoint = srv.URL + "/"

	var err error
	env, err = controlplane.Start(controlplane.WithWebhooks(envtest.WebhookInstallOptions{
		Paths: []string{filepath.Join(controlplane.RepoRoot(), "package", "webhookconfigurations")},
	}))
	if err != nil {
		return 0, err
	}
	defer func() { _ = env.Stop() }()

	host, port, certDir := env.WebhookServing()
	mgrConfig := rest.CopyConfig(env.Config)
	mgrConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countSecretLists{next: rt} })
	mgr, err := ctrl.NewManager(mgrConfig, ctrl.Options{
		Scheme: env.Scheme,
		// As the provider: secrets are read live, and only their metadata
		// is cached, without the last applied configuration.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: podinject.SecretCacheOptions(),
			&corev1.Pod{}:    podinject.PodCacheOptions(),
		}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          crwebhook.NewServer(crwebhook.Options{Host: host, Port: port, CertDir: certDir}),
	})
	if err != nil {
		return 0, err
	}
	native, err := webhook.NativeSidecars(configfile.SidecarAuto, discovery.NewDiscoveryClientForConfigOrDie(env.Config))
	if err != nil {
		return 0, err
	}
	if !native {
		return 0, errors.New("the test API server should support native sidecars")
	}
	cfg, err := podinject.ConfigFrom(configfile.Defaults(), true)
	if err != nil {
		return 0, err
	}
	classicCfg := cfg
	classicCfg.Native = false
	// Namespaced ProviderConfigs may name the emulator and nothing else, as
	// [tenancy] namespaced_endpoints would say.
	endpoints := []string{endpoint}
	pods = &switchable{
		native:  podinject.NewInjector(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetClient(), mgr.GetScheme(), cfg, podinject.WithNamespacedEndpoints(endpoints)),
		classic: podinject.NewInjector(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetClient(), mgr.GetScheme(), classicCfg, podinject.WithNamespacedEndpoints(endpoints)),
	}
	pods.current = pods.native
	cached = mgr.GetCache()
	mgr.GetWebhookServer().Register(podinject.Path, &crwebhook.Admission{Handler: pods})
	if err := podinject.SetupCopies(mgr, podinject.InstanceCopies, cfg.Policy); err != nil {
		return 0, err
	}
	if err := podinject.SetupCopies(mgr, podinject.NamespacedInstanceCopies, cfg.Policy, podinject.WithNamespacedEndpoints(endpoints)); err != nil {
		return 0, err
	}
	if err := podinject.SetupCopies(mgr, podinject.UserCopies, cfg.Policy); err != nil {
		return 0, err
	}
	instanceOptions := []instance.Option{instance.WithTimeout(2 * time.Second), instance.WithNamespacedEndpoints(endpoints),
		// As cmd/provider wires it.
		instance.WithAdmits(func(ctx context.Context, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error {
			return postgresqlobject.CheckSourceInstance(ctx, cfg.Policy, mgr.GetAPIReader(), mg, field, pi)
		})}
	// As instance.Setup serves it, through instances, so that a test can
	// give it listings.
	instances = &swappedValidator{services: providerconfig.NewServiceCache(nil), options: instanceOptions,
		newValidator: func(services *providerconfig.ServiceCache, o ...instance.Option) admission.Handler {
			return instance.New(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme(), services, o...)
		}}
	instances.current = instances.newValidator(instances.services, instanceOptions...)
	mgr.GetWebhookServer().Register(instance.Path, &crwebhook.Admission{Handler: instances})
	postgresqlobject.Setup(mgr, cfg.Policy)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return 0, errors.New("the manager's cache did not sync")
	}
	if err := waitFor(func() error { return mgr.GetWebhookServer().StartedChecker()(nil) }); err != nil {
		return 0, errors.Wrap(err, "the webhook server did not start")
	}

	c := env.Client
	plain := v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: project, Endpoint: endpoint},
		Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}}
	keyed := plain
	keyed.ProxyCredentials = &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: secretNS, Name: "proxy-key"}, Key: "key.json"}
	// Each configuration exists as both the cluster-scoped kind's ProviderConfig
	// and the namespaced group's ClusterProviderConfig.
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pcDefault}, Spec: plain},
		&nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pcDefault}, Spec: lentToAll(plain)},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: "proxy-key"}, Data: map[string][]byte{"key.json": []byte(`{"type":"service_account"}`)}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pcProxyKey}, Spec: keyed},
		&nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pcProxyKey}, Spec: lentToAll(keyed)},
	} {
		if err := c.Create(ctx, o); err != nil {
			return 0, err
		}
	}

	rolloutDone, err := startRollout(ctx, cfg, endpoints)
	if err != nil {
		return 0, err
	}

	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		return code, errors.Wrap(err, "the manager failed")
	}
	if err := <-rolloutDone; err != nil {
		return code, errors.Wrap(err, "the rollout's manager failed")
	}
	return code, nil
}

// providerUser is the user of the provider's service account, as
// cluster/deploy names it.
const providerUser = "system:serviceaccount:" + secretNS + ":provider-cloudsql-postgres"

// startRollout runs the rollout in a manager of its own, as the provider's
// service account with the RBAC of cluster/deploy/provider.yaml and
// rollout.yaml (envtest enforces RBAC): a namespace lets it restart
// workloads only with a RoleBinding (bindRollout). It restarts a workload
// every 10 s in each namespace, so that a test sees the limit. The channel
// receives what the manager's Start returns once ctx ends.
func startRollout(ctx context.Context, cfg podinject.Config, endpoints []string) (<-chan error, error) {
	deploy := filepath.Join(controlplane.RepoRoot(), "cluster", "deploy")
	for _, f := range []string{"provider.yaml", "rollout.yaml"} {
		objs, err := manifests.ReadFile(filepath.Join(deploy, f))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			switch o.GetKind() {
			case "ServiceAccount", "ClusterRole", "ClusterRoleBinding":
				if err := env.Client.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
					return nil, err
				}
			}
		}
	}
	rc := rest.CopyConfig(env.Config)
	rc.Impersonate = rest.ImpersonationConfig{UserName: providerUser}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { rolloutPodRequests.next = rt; return rolloutPodRequests })
	mgr, err := ctrl.NewManager(rc, ctrl.Options{
		Scheme: env.Scheme,
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: podinject.SecretCacheOptions(),
			&corev1.Pod{}:    podinject.PodCacheOptions(),
		}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, err
	}
	// The API server's authorizer sees new bindings a moment later: without
	// them the rollout would not start.
	if err := waitFor(func() error {
		missing, err := podinject.RolloutDenied(ctx, mgr.GetClient())
		if err == nil && len(missing) > 0 {
			err = errors.Errorf("the provider's service account may not %v", missing)
		}
		return err
	}); err != nil {
		return nil, err
	}
	if err := podinject.SetupRollout(mgr, cfg, rolloutsPerMinute, podinject.WithRolloutResync(time.Second),
		podinject.WithInjectorOptions(podinject.WithNamespacedEndpoints(endpoints))); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.New("the rollout's cache did not sync")
	}
	return done, nil
}

func waitFor(fn func() error) error {
	var err error
	for range 100 {
		if err = fn(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// readyInstance creates a PostgresqlInstance, through the validating webhook, and
// makes it look like the controller reconciled it: Ready, with a connection name
// and a connection secret holding a pgpass entry. It allows namespace <name>-app.
func readyInstance(t testing.TB, name string, fns ...func(*v1alpha1.PostgresqlInstance)) *v1alpha1.PostgresqlInstance {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	// The provider's default allows no namespace: <name>-app, the namespace
	// the tests' pods are in, is named here unless fns say otherwise.
	pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{name + "-app"}}
	for _, fn := range fns {
		fn(pi)
	}
	status := pi.Status
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())
	pi.Status = status
	if pi.Status.AtProvider.ConnectionName == "" {
		pi.Status.AtProvider = v1alpha1.PostgresqlInstanceObservation{
			State: "RUNNABLE", ConnectionName: project + ":europe-west1:" + name, PublicIP: "203.0.113.7",
		}
	}
	pi.SetConditions(xpv2.Available())
	g.Expect(env.Client.Status().Update(ctx, pi)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: name + "-postgres"},
		Data:       map[string][]byte{cloudsql.ConnectionKeyPgpass: []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, "pw-"+name))},
	})).To(Succeed())
	return pi
}

// namespace creates a namespace with labels.
func namespace(t testing.TB, name string, labels map[string]string) {
	t.Helper()
	NewWithT(t).Expect(env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})).To(Succeed())
}

// annotatedPod is a pod in ns that requests instance.
func annotatedPod(ns, name, inst string) *corev1.Pod {
	p := plainPod(ns, name)
	p.Annotations = map[string]string{v1alpha1.AnnotationInstanceName: inst}
	return p
}

func plainPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
	}
}

// warnings collects the warnings the API server sends to a client.
type warnings struct {
	mu   sync.Mutex
	text []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.text...)
}

// warningClient is a client whose warnings land in w.
func warningClient(t testing.TB) (client.Client, *warnings) {
	cfg := rest.CopyConfig(env.Config)
	w := &warnings{}
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	NewWithT(t).Expect(err).ToNot(HaveOccurred())
	return c, w
}

// lentToAll is a ClusterProviderConfig of spec that every namespace may use.
func lentToAll(spec v1alpha1.ProviderConfigSpec) nsv1alpha1.ClusterProviderConfigSpec {
	return nsv1alpha1.ClusterProviderConfigSpec{ProviderConfigSpec: spec, Namespaces: &nsv1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{}}}
}
