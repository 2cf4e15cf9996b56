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

// Command provider runs provider-cloudsql-postgres: the controllers that reconcile
// PostgresqlInstances and ProviderConfigs with Cloud SQL, and the admission webhooks
// (the PostgresqlInstance validator and the pod injector).
//
//	provider [--config FILE] [--debug] [--leader-election] [--instance-webhook=false] [--pod-injector=false]
//	provider injector [--config FILE] [--debug] [--leader-election]
//
// The injector subcommand runs the pod injector alone (with the controller that
// keeps the password copies current), for clusters that want it apart from the
// provider or without Crossplane.
//
// Every setting has a default; the TOML file named by --config overrides them (see
// examples/config.toml). The provider talks to the Kubernetes API server named by
// --kubeconfig, $KUBECONFIG or the in-cluster configuration. The webhook server's
// certificate comes from [webhook] cert_dir, else $WEBHOOK_TLS_CERT_DIR (set by the
// Crossplane package manager), else a self-signed one is made for --webhook-hosts and
// its CA written next to it (ca.crt) for the webhook configurations' caBundle.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/gate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/customresourcesgate"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/travelaudience/cloudsql-postgres-operator/apis"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budgetlease"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	xpcontroller "github.com/travelaudience/cloudsql-postgres-operator/internal/controller"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/intern"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/memlimit"
	providermetrics "github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/instance"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/postgresqlobject"
)

const (
	errFindAPIServer    = "cannot find the Kubernetes API server: pass --kubeconfig or run in a cluster"
	errNewManager       = "cannot create the controller manager"
	errWatchCRDs        = "cannot watch CustomResourceDefinitions to start controllers when their kinds are served"
	errKeepBudget       = "cannot keep the request budget's record"
	errSetupControllers = "cannot set up the controllers"
	errSetupInjector    = "cannot set up the pod injector"
)

// injectorCommand runs the pod injector alone.
const injectorCommand = "injector"

func main() {
	if err := run(os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "provider:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == injectorCommand {
		return runInjector(args[1:])
	}
	return runProvider(args)
}

// common are the flags of both commands.
type common struct {
	configPath     *string
	debug          *bool
	leaderElection *bool
	metricsAddr    *string
	metricsSecure  *bool
	healthAddr     *string
	kubeconfig     *string
	webhookHosts   *string
	namespace      *string
	pprofAddr      *string
}

func commonFlags(fs *flag.FlagSet) *common {
	return &common{
		configPath:     fs.String("config", "", "TOML configuration file (see examples/config.toml); every key has a default"),
		debug:          fs.Bool("debug", false, "log at debug level (overrides logging.debug)"),
		leaderElection: fs.Bool("leader-election", false, "elect a leader so that only one of several replicas reconciles (webhooks are served by every replica)"),
		metricsAddr:    fs.String("metrics-bind-address", ":8443", "address of the Prometheus /metrics endpoint (0 turns it off)"),
		metricsSecure: fs.Bool("metrics-secure", true, "serve /metrics over HTTPS, only to callers that the API server authenticates (TokenReview) and authorizes "+
			"(SubjectAccessReview: get on the non-resource URL /metrics); false serves it over plain HTTP to anyone who reaches the address"),
		healthAddr: fs.String("health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints (0 turns them off)"),
		// controller-runtime registers --kubeconfig on the default flag set.
		kubeconfig:   fs.String("kubeconfig", "", "kubeconfig file of the API server (default: $KUBECONFIG, else in-cluster)"),
		webhookHosts: fs.String("webhook-hosts", "localhost,127.0.0.1", "comma-separated DNS names and IPs of the self-signed webhook certificate, made only when neither [webhook] cert_dir nor $WEBHOOK_TLS_CERT_DIR names one (for example <service>.<namespace>.svc)"),
		pprofAddr:    fs.String("pprof-bind-address", "0", "address of Go's /debug/pprof endpoints, to profile a large fleet (0, the default, turns them off)"),
		namespace:    fs.String("namespace", "", "the provider's own namespace, where it elects a leader and keeps the request budget's record (a Lease) across restarts (default: the pod's namespace in a cluster, else "+defaultNamespace+")"),
	}
}

// Leader election. A killed leader is replaced once its Lease expires for the
// others, leaseDuration after they last saw it renewed: they look every
// retryPeriod, jittered up to 2.2 times that (client-go), so within
// 2.2 + 8 + 2.2 = 12.4 s of the kill. A leader that cannot renew gives up
// within retryPeriod + renewDeadline (6 s) of its last renewal and the
// process exits, 2 s before anyone else may take over (docs/operations.md).
const (
	leaseDuration = 8 * time.Second
	renewDeadline = 5 * time.Second
	retryPeriod   = time.Second
)

// workersPerReconcilePerSecond is how many reconciles may run at once for each
// one that reconcile.max_reconcile_rate starts a second.
const workersPerReconcilePerSecond = 4

// defaultNamespace is the provider's namespace out of a cluster: Crossplane's.
const defaultNamespace = "crossplane-system"

// serviceAccountNamespace is where a pod finds its namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ownNamespace is --namespace, else the pod's namespace, else defaultNamespace.
func (c *common) ownNamespace() string {
	if *c.namespace != "" {
		return *c.namespace
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b))
	}
	return defaultNamespace
}

// setup is what both commands start from.
type setup struct {
	cfg        configfile.Config
	log        logging.Logger
	restConfig *rest.Config
	scheme     *runtime.Scheme
}

func (c *common) setup() (*setup, error) {
	cfg, err := configfile.Load(*c.configPath)
	if err != nil {
		return nil, err
	}
	zl := zap.New(zap.UseDevMode(*c.debug || cfg.Logging.Debug))
	ctrl.SetLogger(zl)
	log := logging.NewLogrLogger(zl.WithName("provider-cloudsql-postgres"))
	// The Go runtime does not read the container's memory limit: given none,
	// it lets the heap reach twice what is live before collecting.
	if os.Getenv("GOMEMLIMIT") == "" {
		exe, _ := os.Executable()
		if soft := memlimit.Soft(memlimit.FromCgroup("/sys/fs/cgroup"), memlimit.Image(exe)); soft > 0 {
			debug.SetMemoryLimit(soft)
			log.Info("Keeping the Go heap within the container's memory limit (set GOMEMLIMIT to choose another)", "soft-limit-bytes", soft)
		}
	}

	if *c.kubeconfig != "" {
		if err := os.Setenv("KUBECONFIG", *c.kubeconfig); err != nil {
			return nil, err
		}
	}
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return nil, errors.Wrap(err, errFindAPIServer)
	}
	// The API server warns about the same thing for every object (the
	// crossplane-runtime finalizer's name, say): once each is enough, not once
	// for each of 10,000 instances.
	restConfig.WarningHandlerWithContext = ctrllog.NewKubeAPIWarningLogger(ctrllog.KubeAPIWarningLoggerOptions{Deduplicate: true})
	restConfig.QPS, restConfig.Burst = kubeRate(cfg.Reconcile.MaxReconcileRate)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := apis.AddToScheme(scheme); err != nil {
		return nil, err
	}
	// The CRD gate watches CRDs to start each controller when its kinds are
	// served (safe-start).
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return &setup{cfg: cfg, log: log, restConfig: restConfig, scheme: scheme}, nil
}

// metricsOptions serves /metrics as --metrics-secure says. Metrics name every
// instance, namespace and Cloud SQL method the provider handles: they are not
// for every pod of the cluster to read.
func (c *common) metricsOptions(log logging.Logger) metricsserver.Options {
	o := metricsserver.Options{BindAddress: *c.metricsAddr}
	if *c.metricsSecure {
		o.SecureServing = true
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
		return o
	}
	if host, _, err := net.SplitHostPort(*c.metricsAddr); *c.metricsAddr != "0" && (err != nil || !isLoopback(host)) {
		log.Info("Warning: /metrics is served over plain HTTP without authentication (--metrics-secure=false) on an address other pods may reach: "+
			"bind it to 127.0.0.1, or drop --metrics-secure=false", "metrics-bind-address", *c.metricsAddr)
	}
	return o
}

// isLoopback reports whether host (of a bind address) is reachable from this
// machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// stripAndIntern is the cache's transform for every kind without one of its
// own: managed fields dropped, repeated strings interned.
func stripAndIntern(obj any) (any, error) {
	obj, err := cache.TransformStripManagedFields()(obj)
	if err != nil {
		return obj, err
	}
	return intern.Objects(obj)
}

// manager creates the controller manager, with a webhook server when serve is
// true.
func (c *common) manager(s *setup, leaderElectionID string, serve bool) (ctrl.Manager, error) {
	o := ctrl.Options{
		Scheme: s.scheme,
		// Secrets are read when needed, never cached: a cache would hold every
		// secret of the cluster in the provider's memory.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		// Managed fields are never read here, and would be a good part of the
		// cache's memory with 10,000 instances; the strings every object
		// repeats are held once (intern.Objects).
		Cache: cache.Options{
			DefaultTransform: stripAndIntern,
			// The gate reads only names, versions and conditions of CRDs; their
			// schemas would be most of the cache in a cluster with many.
			ByObject: map[client.Object]cache.ByObject{
				&apiextensionsv1.CustomResourceDefinition{}: {Transform: customresourcesgate.TransformStripCRDSchema},
				// Only secrets' metadata is cached (for the injector's
				// copy reconcilers): without the last applied configuration, which
				// holds the whole data of a secret applied with kubectl.
				&corev1.Secret{}: podinject.SecretCacheOptions(),
				// Only injected pods, which the rollout compares, and of
				// those only the metadata (the rollout watches no more).
				&corev1.Pod{}: podinject.PodCacheOptions(),
			},
		},
		LeaderElection:          *c.leaderElection,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: c.ownNamespace(),
		// A stopping leader hands over at once: the process ends when the
		// manager does, and nothing it does after the controllers stopped
		// (the webhooks, the budget's last save) needs leadership.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(leaseDuration),
		RenewDeadline:                 ptr.To(renewDeadline),
		RetryPeriod:                   ptr.To(retryPeriod),
		Metrics:                       c.metricsOptions(s.log),
		HealthProbeBindAddress:        *c.healthAddr,
		PprofBindAddress:              *c.pprofAddr,
	}
	if serve {
		hosts := strings.Split(*c.webhookHosts, ",")
		fallback := filepath.Join(os.TempDir(), "provider-cloudsql-postgres-webhook")
		dir, selfSigned, err := webhook.CertDir(s.cfg.Webhook.CertDir, fallback, hosts, time.Now())
		if err != nil {
			return nil, err
		}
		if selfSigned {
			s.log.Info("Serving the webhooks with a self-signed certificate: put the CA into the caBundle of the webhook configurations",
				"ca", filepath.Join(dir, webhook.CAName), "hosts", hosts)
		}
		o.WebhookServer = crwebhook.NewServer(crwebhook.Options{
			Port: s.cfg.Webhook.Port, CertDir: dir, CertName: webhook.CertName, KeyName: webhook.KeyName,
		})
	}
	mgr, err := ctrl.NewManager(s.restConfig, o)
	if err != nil {
		return nil, errors.Wrap(err, errNewManager)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	ready := healthz.Ping
	if serve {
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("ready", ready); err != nil {
		return nil, err
	}
	// Cloud SQL calls and pod injections, served on /metrics in both modes.
	if err := providermetrics.Register(metrics.Registry); err != nil {
		return nil, err
	}
	return mgr, nil
}

// gated starts controllers once the CRDs of the kinds they read are established
// (Crossplane's safe-start), and ends the process when one of them cannot start
// then.
type gated struct {
	gate   *gate.Gate[schema.GroupVersionKind]
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// newGated adds crossplane-runtime's CRD gate controller to mgr.
func newGated(mgr ctrl.Manager, log logging.Logger) (*gated, error) {
	ctx, cancel := context.WithCancelCause(ctrl.SetupSignalHandler())
	g := &gated{gate: new(gate.Gate[schema.GroupVersionKind]), ctx: ctx, cancel: cancel}
	if err := customresourcesgate.Setup(mgr, controller.Options{Logger: log, Gate: g.gate}); err != nil {
		return nil, errors.Wrap(err, errWatchCRDs)
	}
	return g, nil
}

// failed stops the manager with err.
func (g *gated) failed(err error) { g.cancel(err) }

// start runs mgr until a signal, or until a controller fails to start late,
// which it returns.
func (g *gated) start(mgr ctrl.Manager) error {
	err := mgr.Start(g.ctx)
	if cause := context.Cause(g.ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// setupInjector serves the pod injector on mgr, with the proxy's sidecar mode
// decided once, from the API server's version when the mode is auto; the
// copy reconciler of each source starts once the kinds it reads are served.
func setupInjector(mgr ctrl.Manager, s *setup, g *gated) error {
	dc, err := discovery.NewDiscoveryClientForConfig(s.restConfig)
	if err != nil {
		return err
	}
	native, err := webhook.NativeSidecars(s.cfg.Proxy.SidecarMode, dc)
	if err != nil {
		return err
	}
	ic, err := podinject.ConfigFrom(s.cfg, native)
	if err != nil {
		return err
	}
	s.log.Info("Serving the pod injector", "path", podinject.Path, "native-sidecars", native, "proxy-image", ic.ProxyImage,
		"default-allowed-namespaces", s.cfg.Injection.DefaultAllowedNamespaces)
	for _, w := range s.cfg.Warnings() {
		s.log.Info("Warning: " + w)
	}
	log := podinject.WithLogger(s.log.WithValues("webhook", "pods"))
	endpoints := podinject.WithNamespacedEndpoints(s.cfg.Tenancy.NamespacedEndpoints)
	if err := podinject.Serve(mgr, ic, log, endpoints); err != nil {
		return err
	}
	copies := func(src podinject.Source, kinds ...schema.GroupVersionKind) {
		xpcontroller.WhenEstablished(mgr, g.gate, g.failed, src.Name(), func() error {
			return podinject.SetupCopies(mgr, src, ic.Policy, log, endpoints)
		}, kinds...)
	}
	copies(podinject.InstanceCopies, xpcontroller.InstanceKinds...)
	copies(podinject.NamespacedInstanceCopies, xpcontroller.NamespacedInstanceKinds...)
	copies(podinject.UserCopies, v1alpha1.PostgresqlUserGroupVersionKind, v1alpha1.PostgresqlInstanceGroupVersionKind)
	if n := s.cfg.Injection.RolloutsPerMinute; n > 0 {
		xpcontroller.WhenEstablished(mgr, g.gate, g.failed, podinject.RolloutName, func() error {
			return podinject.SetupRollout(mgr, ic, n, podinject.WithRolloutLogger(s.log.WithValues("controller", podinject.RolloutName)),
				podinject.WithInjectorOptions(endpoints))
		}, xpcontroller.InstanceKinds...)
	}
	return nil
}

func runProvider(args []string) error {
	fs := flag.NewFlagSet("provider", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: provider [flags]\n       provider %s [flags]   (the pod injector alone; see provider %s --help)\n\nFlags:\n", injectorCommand, injectorCommand)
		fs.PrintDefaults()
	}
	c := commonFlags(fs)
	instanceWebhook := fs.Bool("instance-webhook", true, "serve the validating webhooks of PostgresqlInstances at "+instance.Path+
		", and of PostgresqlDatabases, PostgresqlUsers and PostgresqlBackups at "+postgresqlobject.DatabasePath+", "+postgresqlobject.UserPath+" and "+postgresqlobject.BackupPath)
	podInjector := fs.Bool("pod-injector", true, "serve the pod injection webhook at "+podinject.Path+" (and keep the password copies it makes current)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := c.setup()
	if err != nil {
		return err
	}
	mgr, err := c.manager(s, "crossplane-leader-election-provider-cloudsql-postgres", *instanceWebhook || *podInjector)
	if err != nil {
		return err
	}
	g, err := newGated(mgr, s.log)
	if err != nil {
		return err
	}

	// The requests of namespaced objects that reach Cloud SQL through the
	// platform's configurations spend their namespace's share of it, so that
	// no team can delay the platform's objects.
	// The objects of instances (databases, users, backups) take what the
	// instances' polls leave, up to reconcile.object_share: the pacing sets
	// the split that every window caps their requests by.
	split := budget.NewSplit(s.cfg.Reconcile.ObjectShare)
	window := budget.PerMinute(s.cfg.CloudSQL.RequestsPerMinute,
		budget.WithNamespaceShares(s.cfg.CloudSQL.NamespaceShare, s.cfg.CloudSQL.AllNamespacesShare), budget.WithSplit(split))
	// Every replica shares what it spends of the quota (its admission lookups,
	// the leader's controllers) through a Lease; a new leader counts what the
	// previous one spent before its controllers send anything: neither a crash
	// loop nor a change of leader may send a minute's requests twice.
	keeper := budgetlease.New(mgr.GetAPIReader(), mgr.GetClient(), types.NamespacedName{Namespace: c.ownNamespace(), Name: budgetlease.DefaultName}, window, s.log)
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := keeper.Sync(sctx); err != nil {
		s.log.Info("Starting without the other replicas' record of the request budget: this replica counts only its own requests until it can read it (check that the provider may read and write Leases in its namespace)", "error", err.Error())
	}
	cancel()
	if err := mgr.Add(keeper); err != nil {
		return errors.Wrap(err, errKeepBudget)
	}
	if err := mgr.Add(keeper.Leading()); err != nil {
		return errors.Wrap(err, errKeepBudget)
	}
	transport := budget.NewTransport(nil, window, budget.WithObserver(providermetrics.ObserveCloudSQL))
	// Each namespaced ProviderConfig spends its team's own quota, in a window
	// of its own that its reconciles and admission lookups share, so that no
	// team can spend the platform's budget or another team's. These windows
	// have no record in the Lease and so need no Gate: a new leader or a
	// restarted process starts them empty (see docs/operations.md). Their
	// objects' writes spend the team's quota, so the platform's listings do
	// not give way to them (WithSplitCap).
	tenantWindow := func() *budget.Window {
		return budget.PerMinute(s.cfg.CloudSQL.RequestsPerMinute, budget.WithSplitCap(split))
	}
	tenants := budget.NewWindows(tenantWindow, budget.WithObserver(providermetrics.ObserveCloudSQL))
	mrMetrics := managed.NewMRMetricRecorder()
	metrics.Registry.MustRegister(mrMetrics)
	o := core.Options{
		Options: controller.Options{
			Logger:            s.log,
			GlobalRateLimiter: ratelimiter.NewGlobal(s.cfg.Reconcile.MaxReconcileRate),
			PollInterval:      s.cfg.Reconcile.PollInterval.Duration,
			// Reconciles mostly wait (for the rate limiter's slot, a shared
			// listing, the request budget), and a waiting worker must not keep
			// a ready object from starting: the rate limiter, not the workers,
			// bounds the rate.
			MaxConcurrentReconciles: workersPerReconcilePerSecond * s.cfg.Reconcile.MaxReconcileRate,
			Features:                &feature.Flags{},
			Gate:                    g.gate,
			MetricOptions:           &controller.MetricOptions{MRMetrics: mrMetrics},
		},
		Transport:            keeper.Gate(transport),
		TenantTransport:      tenants.Transport,
		BusyPollInterval:     s.cfg.Reconcile.BusyPollInterval.Duration,
		BackupHealthInterval: s.cfg.Reconcile.BackupHealthInterval.Duration,
		Timeout:              s.cfg.Reconcile.Timeout.Duration,
		ObserveByList:        s.cfg.Reconcile.Observe == configfile.ObserveList,
		MaxReconcileRate:     s.cfg.Reconcile.MaxReconcileRate,
		ObjectShare:          s.cfg.Reconcile.ObjectShare,
		Split:                split,
		// What namespaced ProviderConfigs may name, and what platform keys
		// may read: the webhooks below obey the same.
		NamespacedEndpoints:    s.cfg.Tenancy.NamespacedEndpoints,
		ExternalAccountSources: s.cfg.Credentials.AllowExternalAccountSources,
		KeyTokenURI:            s.cfg.Credentials.AllowKeyTokenURI,
		// Who holds each login and database is kept where no team writes.
		RecordNamespace: c.ownNamespace(),
		// The webhook's rule, checked again where references resolve.
		AdmitsNamespace: func(ctx context.Context, mg client.Object, pi *v1alpha1.PostgresqlInstance) error {
			return postgresqlobject.CheckClusterInstance(ctx, tenancy.Policy{DefaultAllowedNamespaces: s.cfg.Injection.DefaultAllowedNamespaces},
				mgr.GetAPIReader(), mg, "spec.forProvider.clusterInstance", pi)
		},
		// A copy of a shared instance's data, with a postgres password, is
		// for a namespace its pods may receive that password in.
		AdmitsSource: func(ctx context.Context, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error {
			return postgresqlobject.CheckSourceInstance(ctx, tenancy.Policy{DefaultAllowedNamespaces: s.cfg.Injection.DefaultAllowedNamespaces},
				mgr.GetAPIReader(), mg, field, pi)
		},
	}
	core, err := xpcontroller.SetupGated(mgr, o, g.failed)
	if err != nil {
		return errors.Wrap(err, errSetupControllers)
	}
	if *instanceWebhook {
		// The validator's Cloud SQL lookups share the controllers' request
		// budgets (the platform's, each tenant configuration's), and go on
		// every replica, leader or not (not through the Gate).
		instance.Setup(mgr, providerconfig.NewServiceCache(transport,
			providerconfig.WithAuth(auth.WithExternalAccountSources(s.cfg.Credentials.AllowExternalAccountSources),
				auth.WithKeyTokenURI(s.cfg.Credentials.AllowKeyTokenURI)),
			providerconfig.WithTenantTransport(tenants.Transport)),
			instance.WithNamespacedEndpoints(s.cfg.Tenancy.NamespacedEndpoints),
			instance.WithTimeout(s.cfg.Webhook.CloudSQLTimeout.Duration),
			// A name is checked in the listing that the controllers
			// share (observe = list) when it is no older than what
			// serves an instance in the middle of an operation, so that
			// a burst of applies costs a listing, not a lookup each, and
			// the objects' first observations take the same listing.
			instance.WithListings(core.Observer(), core.BusyPollInterval()),
			instance.WithAdmits(o.AdmitsSource),
			instance.WithLogger(s.log.WithValues("webhook", "postgresqlinstances")))
		s.log.Info("Serving the PostgresqlInstance webhook", "path", instance.Path)
		// Which namespaces a cluster-scoped instance admits is decided as the
		// pod injector decides it, with the same default.
		postgresqlobject.Setup(mgr, tenancy.Policy{DefaultAllowedNamespaces: s.cfg.Injection.DefaultAllowedNamespaces},
			postgresqlobject.WithLogger(s.log.WithValues("webhook", "postgresqlobjects")))
		s.log.Info("Serving the PostgresqlDatabase, PostgresqlUser and PostgresqlBackup webhook", "paths", []string{postgresqlobject.DatabasePath, postgresqlobject.UserPath, postgresqlobject.BackupPath})
	}
	if *podInjector {
		if err := setupInjector(mgr, s, g); err != nil {
			return errors.Wrap(err, errSetupInjector)
		}
	}
	s.log.Info("starting", "poll-interval", s.cfg.Reconcile.PollInterval.Duration, "observe", s.cfg.Reconcile.Observe, "requests-per-minute", s.cfg.CloudSQL.RequestsPerMinute,
		"namespace-share", s.cfg.CloudSQL.NamespaceShare, "all-namespaces-share", s.cfg.CloudSQL.AllNamespacesShare)
	return g.start(mgr)
}

func runInjector(args []string) error {
	fs := flag.NewFlagSet("provider "+injectorCommand, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: provider %s [flags]\n\nRuns the pod injection webhook alone, at %s on [webhook] port, with the controller that\nkeeps the password copies it makes current. Register it with the MutatingWebhookConfiguration\nof package/webhookconfigurations.\n\nFlags:\n", injectorCommand, podinject.Path)
		fs.PrintDefaults()
	}
	c := commonFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := c.setup()
	if err != nil {
		return err
	}
	mgr, err := c.manager(s, "provider-cloudsql-postgres-injector", true)
	if err != nil {
		return err
	}
	g, err := newGated(mgr, s.log)
	if err != nil {
		return err
	}
	if err := setupInjector(mgr, s, g); err != nil {
		return errors.Wrap(err, errSetupInjector)
	}
	return g.start(mgr)
}

// kubeReadsPerReconcile is how many uncached reads of one kind (Secrets,
// mostly: the passwords are read from the API server, never from a cache
// that could be stale) a reconcile makes at most, in the steady state.
const kubeReadsPerReconcile = 4

// kubeRate is the client-side rate limit of the provider's Kubernetes
// clients (each kind's requests have a token bucket of their own): room for
// the reads of rate reconciles a second, and never less than
// controller-runtime's default (20 a second, bursts of 30). At the default
// a fleet's databases and users, whose reconciles read their passwords,
// queued the instances' reads of theirs past the reconcile's deadline.
func kubeRate(rate int) (qps float32, burst int) {
	qps = float32(max(20, kubeReadsPerReconcile*rate))
	return qps, int(2 * qps)
}
