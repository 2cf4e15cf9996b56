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
	"cmp"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	xpcontroller "github.com/travelaudience/cloudsql-postgres-operator/internal/controller"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/postgresqlobject"
)

const secretNamespace = "crossplane-system"

var env *controlplane.Env

// observeMode is how the controllers under test observe instances:
// configfile.ObserveList unless OBSERVE says otherwise; `make test` runs the
// package in both modes.
var observeMode = cmp.Or(os.Getenv("OBSERVE"), configfile.ObserveList)

// harnesses counts the harnesses started, so that a test run twice (-count)
// gets names of its own.
var harnesses atomic.Int64

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // make unit: the tests that need the control plane skip
	}
	if observeMode != configfile.ObserveList && observeMode != configfile.ObserveGet {
		fmt.Fprintf(os.Stderr, "OBSERVE=%s: use %s or %s\n", observeMode, configfile.ObserveList, configfile.ObserveGet)
		os.Exit(2)
	}
	var err error
	if env, err = controlplane.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNamespace}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot stop the test control plane:", err)
	}
	os.Exit(code)
}

// A harness is one test's world: an emulator, a ProviderConfig pointing at it
// (with a project of the test's own, so the emulator's request log tells the
// test's requests apart), and a manager running the provider's controllers.
// Only one runs at a time, so no controller sees another test's objects.
type harness struct {
	t       testing.TB
	g       Gomega
	ctx     context.Context
	emu     *emulator.Server
	project string
	pc      string
	// id tells this harness's names apart from every other's.
	id string

	cfg harnessConfig
	mu  sync.Mutex
	// secrets are the connection secrets of the instances this harness made;
	// envtest runs no garbage collector to remove them with their instances.
	secrets []client.ObjectKey
	// namespaces are the namespaces the harness made for namespaced objects.
	namespaces map[string]bool
	mctx       context.Context
	// cached reads through the running manager's cache: what the
	// controllers see, which can lag the API server.
	cached client.Reader
	cancel context.CancelFunc
	done   chan struct{}
	srvURL string
}

type harnessOption func(*harnessConfig)

type harnessConfig struct {
	emulator []emulator.Option
	poll     time.Duration
	busyPoll time.Duration
	rpm      int
	attempts int
	observe  string
	// health is the backup-health interval (core's default when zero).
	health time.Duration
	// impersonate, when set, is the user the controllers run as.
	impersonate string
	// tenancy, when set, checks that a cluster-scoped instance admits the
	// namespace of an object that names it, as cmd/provider does.
	tenancy *tenancy.Policy
}

func withEmulator(o ...emulator.Option) harnessOption {
	return func(c *harnessConfig) { c.emulator = append(c.emulator, o...) }
}

func withIntervals(poll, busy time.Duration) harnessOption {
	return func(c *harnessConfig) { c.poll, c.busyPoll = poll, busy }
}

func withBudget(perMinute int) harnessOption {
	return func(c *harnessConfig) { c.rpm = perMinute }
}

// withImpersonation runs the controllers as user, with only the rights RBAC gives.
func withImpersonation(user string) harnessOption {
	return func(c *harnessConfig) { c.impersonate = user }
}

// withTenancy has the controllers check, as cmd/provider does, that a
// cluster-scoped instance admits the namespace of an object that names it,
// with policy.
func withTenancy(policy tenancy.Policy) harnessOption {
	return func(c *harnessConfig) { c.tenancy = &policy }
}

// withObserve sets how the controllers observe instances, whatever OBSERVE says.
func withObserve(mode string) harnessOption {
	return func(c *harnessConfig) { c.observe = mode }
}

// withHealth reads each instance's backup health every d.
func withHealth(d time.Duration) harnessOption {
	return func(c *harnessConfig) { c.health = d }
}

func withAttempts(n int) harnessOption {
	return func(c *harnessConfig) { c.attempts = n }
}

func newHarness(t testing.TB, o ...harnessOption) *harness {
	t.Helper()
	controlplane.Need(t)
	// The backup health is read once a day unless a test asks for more:
	// each instance's first read then falls at a time of its own within a
	// day of the start, and almost never into a test that counts requests.
	cfg := harnessConfig{poll: time.Hour, busyPoll: 100 * time.Millisecond, rpm: 100000, attempts: 5, observe: observeMode, health: 24 * time.Hour}
	for _, fn := range o {
		fn(&cfg)
	}
	// Project IDs hold at most 30 characters; a hash of the test name keeps them apart.
	id := fmt.Sprintf("%x", sha256.Sum256(fmt.Appendf(nil, "%s/%d", t.Name(), harnesses.Add(1))))[:12]
	h := &harness{t: t, g: NewWithT(t), ctx: context.Background(), project: "proj-" + id, pc: "pc-" + id, id: id, namespaces: map[string]bool{}}
	h.emu = emulator.New(append([]emulator.Option{emulator.WithRequestBudget(0)}, cfg.emulator...)...)
	srv := httptest.NewServer(h.emu)
	h.srvURL = srv.URL + "/"
	t.Cleanup(srv.Close)

	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: h.pc}, Spec: h.providerConfigSpec()}
	h.g.Expect(env.Client.Create(h.ctx, pc)).To(Succeed())
	h.cfg = cfg
	h.startManager()
	t.Cleanup(h.cleanup)
	return h
}

// providerConfigSpec points at the harness's emulator and project, without
// credentials.
func (h *harness) providerConfigSpec() v1alpha1.ProviderConfigSpec {
	return v1alpha1.ProviderConfigSpec{
		Project:     v1alpha1.Project{ProjectID: h.project, Endpoint: h.srvURL},
		Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
	}
}

// clusterProviderConfigSpec is providerConfigSpec as a ClusterProviderConfig's
// that every namespace may use, and through which namespaces may import.
func (h *harness) clusterProviderConfigSpec() nsv1alpha1.ClusterProviderConfigSpec {
	return nsv1alpha1.ClusterProviderConfigSpec{
		ProviderConfigSpec: h.providerConfigSpec(),
		Namespaces:         &nsv1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{}},
		ImportPolicy:       nsv1alpha1.ImportAllow,
	}
}

// startManager runs the provider's controllers as cmd/provider wires them, with
// test-sized intervals and retries that do not sleep long.
func (h *harness) startManager() {
	h.t.Helper()
	cfg := h.cfg
	restConfig := env.Config
	if cfg.impersonate != "" {
		restConfig = rest.CopyConfig(env.Config)
		restConfig.Impersonate = rest.ImpersonationConfig{UserName: cfg.impersonate}
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:  env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// As cmd/provider: secrets are never cached.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		// Each test starts a manager of its own with the same controller names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	h.g.Expect(err).ToNot(HaveOccurred())
	o := core.Options{
		Options: controller.Options{
			Logger:                  testLogger(),
			GlobalRateLimiter:       ratelimiter.NewGlobal(1000),
			PollInterval:            cfg.poll,
			MaxConcurrentReconciles: 5,
			Features:                &feature.Flags{},
		},
		Transport: budget.NewTransport(nil, budget.PerMinute(cfg.rpm),
			budget.WithRetries(cfg.attempts, 10*time.Millisecond, 100*time.Millisecond)),
		// As cmd/provider: each namespaced ProviderConfig spends a window of its own.
		TenantTransport: budget.NewWindows(func() *budget.Window { return budget.PerMinute(cfg.rpm) },
			budget.WithRetries(cfg.attempts, 10*time.Millisecond, 100*time.Millisecond)).Transport,
		BusyPollInterval:     cfg.busyPoll,
		BackupHealthInterval: cfg.health,
		Timeout:              30 * time.Second,
		ObserveByList:        cfg.observe == configfile.ObserveList,
		MaxReconcileRate:     1000,
		// Namespaced ProviderConfigs point at the harness's emulator.
		NamespacedEndpoints: []string{h.srvURL},
	}
	if p := cfg.tenancy; p != nil {
		o.AdmitsNamespace = func(ctx context.Context, mg client.Object, pi *v1alpha1.PostgresqlInstance) error {
			return postgresqlobject.CheckClusterInstance(ctx, *p, mgr.GetAPIReader(), mg, "spec.forProvider.clusterInstance", pi)
		}
		o.AdmitsSource = func(ctx context.Context, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error {
			return postgresqlobject.CheckSourceInstance(ctx, *p, mgr.GetAPIReader(), mg, field, pi)
		}
	}
	h.g.Expect(xpcontroller.Setup(mgr, o)).To(Succeed())
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	h.mu.Lock()
	h.mctx, h.cancel, h.done, h.cached = ctx, cancel, done, mgr.GetClient()
	h.mu.Unlock()
}

// managerContext is the running manager's context: it ends when the manager
// is stopped.
func (h *harness) managerContext() context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mctx
}

// seen is what the running manager's cache holds of key: what the
// controllers see, which can lag the API server.
func (h *harness) seen(key client.ObjectKey, o client.Object) error {
	h.mu.Lock()
	c := h.cached
	h.mu.Unlock()
	return c.Get(h.managerContext(), key, o)
}

// stopManager stops the controllers, like a crash of the provider would.
func (h *harness) stopManager() {
	h.mu.Lock()
	cancel, done := h.cancel, h.done
	h.mu.Unlock()
	cancel()
	<-done
}

func (h *harness) cleanup() {
	h.stopManager()
	// Leave nothing that a later test's controllers would pick up.
	list := &v1alpha1.PostgresqlInstanceList{}
	_ = env.Client.List(h.ctx, list)
	for i := range list.Items {
		pi := &list.Items[i]
		if pi.Spec.ProviderConfigReference == nil || pi.Spec.ProviderConfigReference.Name != h.pc {
			continue
		}
		pi.Finalizers = nil
		_ = env.Client.Update(h.ctx, pi)
		_ = env.Client.Delete(h.ctx, pi)
	}
	h.cleanupNamespaced()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range h.secrets {
		_ = env.Client.Delete(h.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}})
	}
	_ = env.Client.Delete(h.ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: h.pc}})
}

// The helpers below are those of kindHarness (kinds_test.go) for the
// cluster-scoped kind, typed for the tests that are about it alone.

// instance is a minimal PostgresqlInstance of this harness, changed by fns.
func (h *harness) instance(name string, fns ...func(*v1alpha1.PostgresqlInstance)) *v1alpha1.PostgresqlInstance {
	return h.of(cluster).instance(name, func(o object) {
		for _, fn := range fns {
			fn(o.(*v1alpha1.PostgresqlInstance))
		}
	}).(*v1alpha1.PostgresqlInstance)
}

// track remembers the object's connection secret for cleanup.
func (h *harness) track(pi object) {
	if ref := pi.ConnectionSecret(); ref != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.secrets = append(h.secrets, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name})
	}
}

// create stores the instance and waits until it is Ready and Synced.
func (h *harness) create(pi *v1alpha1.PostgresqlInstance) *v1alpha1.PostgresqlInstance {
	h.t.Helper()
	return h.of(cluster).create(pi).(*v1alpha1.PostgresqlInstance)
}

func (h *harness) get(name string) *v1alpha1.PostgresqlInstance {
	h.t.Helper()
	return h.of(cluster).get(name).(*v1alpha1.PostgresqlInstance)
}

func (h *harness) waitReady(name string) *v1alpha1.PostgresqlInstance {
	h.t.Helper()
	return h.of(cluster).waitReady(name).(*v1alpha1.PostgresqlInstance)
}

// update changes the stored instance, retrying on conflicts with the controller.
func (h *harness) update(name string, fn func(*v1alpha1.PostgresqlInstance)) {
	h.t.Helper()
	h.of(cluster).update(name, func(o object) { fn(o.(*v1alpha1.PostgresqlInstance)) })
}

// poke makes the controller reconcile the instance now, as a poll would.
func (h *harness) poke(name string, n int) {
	h.t.Helper()
	h.of(cluster).poke(name, n)
}

// settle waits until the controllers stop calling Cloud SQL for this test
// (no request for half a second), so that counts taken afterwards see only
// what the test causes.
func (h *harness) settle() {
	h.t.Helper()
	prev := -1
	for range 100 {
		n := h.requests()
		if n == prev {
			return
		}
		prev = n
		time.Sleep(500 * time.Millisecond)
	}
	h.t.Fatalf("the controllers kept calling Cloud SQL for project %s", h.project)
}

// requests counts this test's API requests.
func (h *harness) requests() int {
	n := 0
	for _, r := range h.emu.Requests() {
		if r.Project == h.project {
			n++
		}
	}
	return n
}

// calls counts this test's API requests by method, for one instance or ("") all.
func (h *harness) calls(method, instance string) int {
	n := 0
	for _, r := range h.emu.Requests() {
		if r.Project == h.project && r.Method == method && (instance == "" || r.Instance == instance) {
			n++
		}
	}
	return n
}

// writes counts this test's mutating API requests.
func (h *harness) writes() int {
	n := 0
	for _, r := range h.emu.Requests() {
		if r.Project == h.project && r.HTTPMethod != "GET" {
			n++
		}
	}
	return n
}

// secret is the connection secret of a PostgresqlInstance of either kind.
func (h *harness) secret(pi object) *corev1.Secret {
	h.t.Helper()
	s := &corev1.Secret{}
	h.g.Expect(env.Client.Get(h.ctx, secretKey(pi), s)).To(Succeed())
	return s
}

// svc is a Cloud SQL client for the test itself, outside the provider's budget.
func (h *harness) svc() *sqladmin.Service {
	h.t.Helper()
	svc, err := sqladmin.NewService(h.ctx, option.WithEndpoint(h.srvURL), option.WithoutAuthentication())
	h.g.Expect(err).ToNot(HaveOccurred())
	return svc
}

// testLogger logs the controllers' debug output when TEST_DEBUG is set.
func testLogger() logging.Logger {
	if os.Getenv("TEST_DEBUG") == "" {
		return logging.NewNopLogger()
	}
	return logging.NewLogrLogger(zap.New(zap.UseDevMode(true)))
}
