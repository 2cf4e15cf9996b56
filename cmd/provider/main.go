// Command provider runs provider-cloudsql-postgres: the controllers that reconcile
// PostgresqlInstances and ProviderConfigs with Cloud SQL.
//
//	provider [--config FILE] [--debug] [--leader-election]
//
// Every setting has a default; the TOML file named by --config overrides them (see
// examples/config.toml). The provider talks to the Kubernetes API server named by
// --kubeconfig, $KUBECONFIG or the in-cluster configuration.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/travelaudience/cloudsql-postgres-operator/apis"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	xpcontroller "github.com/travelaudience/cloudsql-postgres-operator/internal/controller"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/postgresqlinstance"
)

func main() {
	if err := run(os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "provider:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("provider", flag.ContinueOnError)
	configPath := fs.String("config", "", "TOML configuration file (see examples/config.toml); every key has a default")
	debug := fs.Bool("debug", false, "log at debug level (overrides logging.debug)")
	leaderElection := fs.Bool("leader-election", false, "elect a leader so that only one of several replicas reconciles")
	metricsAddr := fs.String("metrics-bind-address", ":8080", "address of the Prometheus /metrics endpoint (0 turns it off)")
	healthAddr := fs.String("health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints (0 turns them off)")
	// controller-runtime registers --kubeconfig on the default flag set.
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file of the API server (default: $KUBECONFIG, else in-cluster)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := configfile.Load(*configPath)
	if err != nil {
		return err
	}
	zl := zap.New(zap.UseDevMode(*debug || cfg.Logging.Debug))
	ctrl.SetLogger(zl)
	log := logging.NewLogrLogger(zl.WithName("provider-cloudsql-postgres"))

	if *kubeconfig != "" {
		if err := os.Setenv("KUBECONFIG", *kubeconfig); err != nil {
			return err
		}
	}
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("cannot find the Kubernetes API server: pass --kubeconfig or run in a cluster: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := apis.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		LeaderElection:         *leaderElection,
		LeaderElectionID:       "crossplane-leader-election-provider-cloudsql-postgres",
		Metrics:                metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress: *healthAddr,
	})
	if err != nil {
		return fmt.Errorf("cannot create the controller manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}

	mrMetrics := managed.NewMRMetricRecorder()
	metrics.Registry.MustRegister(mrMetrics)
	o := postgresqlinstance.Options{
		Options: controller.Options{
			Logger:                  log,
			GlobalRateLimiter:       ratelimiter.NewGlobal(cfg.Reconcile.MaxReconcileRate),
			PollInterval:            cfg.Reconcile.PollInterval.Duration,
			MaxConcurrentReconciles: cfg.Reconcile.MaxReconcileRate,
			Features:                &feature.Flags{},
			MetricOptions:           &controller.MetricOptions{MRMetrics: mrMetrics},
		},
		Transport:        budget.NewTransport(nil, budget.PerMinute(cfg.CloudSQL.RequestsPerMinute)),
		BusyPollInterval: cfg.Reconcile.BusyPollInterval.Duration,
		Timeout:          cfg.Reconcile.Timeout.Duration,
	}
	if err := xpcontroller.Setup(mgr, o); err != nil {
		return fmt.Errorf("cannot set up the controllers: %w", err)
	}
	log.Info("starting", "poll-interval", cfg.Reconcile.PollInterval.Duration, "requests-per-minute", cfg.CloudSQL.RequestsPerMinute)
	return mgr.Start(ctrl.SetupSignalHandler())
}
