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

// Command fleetbench measures the provider with a fleet of N instances in one
// project, under the emulator's Cloud SQL quota (180 requests a minute by default,
// 429 past it), with the provider binary running as a process of its own so that
// its memory and CPU are its alone. For each N and observe mode it prints a row:
//
//   - Cloud SQL requests per minute in the steady state, by method, and the 429s;
//   - the time between successive reads of an instance from Cloud SQL, by a
//     listing of the project or an instances.get (the provider's
//     cloudsql_postgres_observation_gap_seconds histogram: the bucket bound under
//     which 50% and 99% fall) and the effective poll interval it reports;
//   - the time from an out-of-band change (a tier edited in the emulator on 1% of
//     the instances, another 1% every two minutes from a third of the way in,
//     each at a random time within its two minutes) to its revert: median,
//     99th percentile and most;
//   - the most requests the emulator answered in any 60 s of the run;
//   - the provider's peak RSS and CPU seconds per minute;
//   - with -create, the create phase (in the modes -create-modes names): that
//     many more instances, each with -create-databases databases and
//     -create-users users, applied one by one through the provider's webhooks
//     as users apply them (8 at a time), timed to Ready, with the requests it
//     made against the fewest it needs (an insert of each, and one listing of
//     each instance's databases and of its users), and its time against the
//     least that the quota allows: those requests at the whole quota, and
//     the objects' part of them at the share the provider gives objects
//     (-object-share: the rest is kept for the instances). The imported
//     fleet is written with the webhooks held back; they come back for this
//     phase. The emulator has no PostgreSQL at this scale, so the users are
//     created with managementPolicies Observe, Create, Delete and
//     LateInitialize: the provider makes the login and leaves its grants;
//     the SQL that would take them would add the connector's two requests
//     per instance;
//   - the backup-health reads (backupRuns.list, and getLatestRecoveryTime for
//     the -pitr share of the instances that have point-in-time recovery on)
//     per instance and hour, at the provider's backup_health_interval
//     (-health): the provider starts with no health read, so its reads spread
//     over the interval after it starts;
//   - for the -databases PostgresqlDatabases and -users PostgresqlUsers of each
//     instance (5 and 5 by default), the databases.list and users.list requests a
//     minute, the time between the reads behind two observations of an object
//     (cloudsql_postgres_object_observation_gap_seconds), the objects' own
//     interval and share of the budget (they are paced apart from the
//     instances, within reconcile.object_share), and the shortest time
//     between two listings of one instance's databases or users over the whole
//     run, which the provider keeps at one per objects' interval at most.
//
// The fleet is imported, not created: the benchmark creates the PostgresqlInstances
// and their connection secrets, then seeds each Cloud SQL instance as the provider
// would have created it (its settings, the owner-uid label, the password), and only
// then starts the provider, so that the steady state is what is measured. The
// databases and users are seeded in the emulator (which has no PostgreSQL at this
// scale) and imported as observe-only objects (managementPolicies Observe), each
// user with its password in its connection secret and each database owned by a
// user: their observation is then the shared listings alone, and the SQL that
// objects the provider may change would run once (the connector's two Admin API
// requests per instance and certificate) is left out. With objects, the steady
// state is measured for at least 1.2 of the objects' intervals, so that every
// object is observed twice. The
// first pass over an imported fleet is itself paced by the quota (in get mode,
// 10,000 instances take about an hour at 180 requests a minute): after
// -warmup-limit, the steady state is measured with the fleet synced so far.
//
//	go run ./hack/fleetbench -instances 1000,10000 -modes list,get
//
// `make fleet-bench` runs it with the defaults.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/memlimit"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/providerproc"
)

const (
	errMeasure = "%d instances, observe = %s"
	errNoVmHWM = "no VmHWM"
	errWatch   = "cannot watch the fleet's instances, databases and users"
)

// requestLogSize is how many of the emulator's requests the benchmark keeps:
// more than any run makes (several hours at 180 a minute).
const requestLogSize = 1 << 20

const (
	project  = "fleet-bench-123456"
	secretNS = "crossplane-system"
	password = "fleet-bench-password-0123456789ab"
)

type options struct {
	sizes   []int
	modes   []string
	poll    time.Duration
	measure time.Duration
	// measureMost caps how long the steady state is measured (0: none).
	measureMost time.Duration
	create      int
	// createDatabases and createUsers are the objects applied with each
	// of them.
	createDatabases, createUsers int
	// createModes are the observe modes in which -create runs.
	createModes []string
	quota       int
	rate        int
	// objectShare is the provider's reconcile.object_share.
	objectShare float64
	warmupLimit time.Duration
	createLimit time.Duration
	// goMemLimit is the provider's GOMEMLIMIT, as in a container with a memory
	// limit; empty leaves the runtime's default.
	goMemLimit string
	// memoryLimit is the provider's container memory limit in MiB, from
	// which it takes its GOMEMLIMIT as the provider does (memlimit.Soft);
	// 0: none.
	memoryLimit int
	// keep keeps the work directory (the provider's logs and configuration).
	keep bool
	// debug runs the provider with --debug.
	debug bool
	// databases and users are how many PostgresqlDatabases and
	// PostgresqlUsers each instance has.
	databases, users int
	// health is the provider's backup_health_interval; pitr the share of the
	// instances with point-in-time recovery on.
	health time.Duration
	pitr   float64
}

func main() {
	var sizes, modes, createModes string
	o := options{}
	flag.StringVar(&sizes, "instances", "1000", "comma-separated fleet sizes")
	flag.StringVar(&modes, "modes", "list,get", "comma-separated observe modes")
	flag.DurationVar(&o.poll, "poll", time.Minute, "reconcile.poll_interval of the provider")
	flag.DurationVar(&o.measure, "measure", 4*time.Minute, "how long the steady state is measured")
	flag.DurationVar(&o.measureMost, "measure-most", 0, "the most the steady state is measured, however long the objects' interval (0: 1.2 of it, so that every object is observed twice)")
	flag.IntVar(&o.create, "create", 0, "then apply this many new instances, each with -create-databases databases and -create-users users, one by one through the webhooks, and time them to Ready (0: skip)")
	flag.IntVar(&o.createDatabases, "create-databases", 5, "PostgresqlDatabases applied with each -create instance")
	flag.IntVar(&o.createUsers, "create-users", 5, "PostgresqlUsers applied with each -create instance")
	flag.StringVar(&createModes, "create-modes", "list", "comma-separated observe modes in which -create runs")
	flag.IntVar(&o.quota, "quota", emulator.DefaultRequestBudget, "the emulator's requests per minute (and the provider's budget)")
	flag.IntVar(&o.rate, "rate", 25, "reconcile.max_reconcile_rate of the provider")
	flag.Float64Var(&o.objectShare, "object-share", budget.DefaultObjectShare, "reconcile.object_share of the provider: the most of the budget its databases, users and backups take")
	flag.DurationVar(&o.warmupLimit, "warmup-limit", 20*time.Minute, "how long to wait for the first pass over the fleet before measuring anyway")
	flag.DurationVar(&o.createLimit, "create-limit", 3*time.Hour, "how long to wait for the -create instances to be Ready before reporting how many are")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (the provider's logs and configuration) and print its path")
	flag.BoolVar(&o.debug, "debug", false, "run the provider with --debug (its log is in the work directory: use with -keep)")
	flag.IntVar(&o.databases, "databases", 5, "PostgresqlDatabases of each instance, imported observe-only (0: none)")
	flag.IntVar(&o.users, "users", 5, "PostgresqlUsers of each instance, imported observe-only (0: none)")
	flag.DurationVar(&o.health, "health", time.Hour, "reconcile.backup_health_interval of the provider")
	flag.Float64Var(&o.pitr, "pitr", 0.5, "share of the instances with point-in-time recovery on (their health read costs two requests)")
	flag.StringVar(&o.goMemLimit, "gomemlimit", "", "GOMEMLIMIT of the provider, for example 300MiB; empty: none, or what -memory-limit gives")
	flag.IntVar(&o.memoryLimit, "memory-limit", 0, "the provider's container memory limit in MiB: its GOMEMLIMIT is set as the provider sets it in such a container, 90% of what its executable leaves (405 MiB of 512); 0: none")
	flag.Parse()
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "fleetbench: -instances: %q is not a positive number\n", s)
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
	if o.databases < 0 || o.users < 0 {
		fmt.Fprintln(os.Stderr, "fleetbench: -databases and -users must be 0 or more")
		os.Exit(2)
	}
	o.modes = strings.Split(modes, ",")
	o.createModes = strings.Split(createModes, ",")
	// Ctrl-C stops the run through its deferred cleanups: the control plane and
	// the provider do not outlive it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		os.Exit(1)
	}
}

// row is one measured configuration.
type row struct {
	n                              int
	mode                           string
	perMinute                      map[string]float64
	throttled                      int
	gapP50, gapP99                 string
	effective                      string
	listEvery                      string
	revertP50, revertP99, revertMx time.Duration
	reverted, changed              int
	rssMiB                         float64
	cpuPerMin                      float64
	// cp is the create phase (create.go).
	cp     createPhase
	warmup time.Duration
	synced int
	// healthRuns and healthWindow are the backup-health reads (backupRuns.list,
	// getLatestRecoveryTime) per instance and hour in the steady state.
	healthRuns, healthWindow float64
	// Of the databases and users: how many objects, how many synced at the
	// end of the warm-up, the gaps between the reads behind two observations
	// of an object, and the shortest time between two listings of one
	// instance's databases (users) with how many came sooner than the
	// effective interval after the one before.
	objects, objectsSynced   int
	objGapP50, objGapP99     string
	minListGap               time.Duration
	listPairs, soonerListing int
	measured                 time.Duration
	// objectInterval is the objects' effective interval the provider
	// reports (cloudsql_postgres_object_poll_interval_seconds), and
	// objectShare the share of the budget they may use.
	objectInterval string
	objectShare    float64
	// busiest is the most requests the emulator answered in any 60 s of
	// the run, warm-up included.
	busiest int
}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "fleetbench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintf(os.Stderr, "work directory (kept): %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bin, err := providerproc.Build(dir)
	if err != nil {
		return err
	}
	if o.memoryLimit > 0 && o.goMemLimit == "" {
		o.goMemLimit = fmt.Sprintf("%dMiB", memlimit.Soft(int64(o.memoryLimit)<<20, memlimit.Image(bin))>>20)
	}
	var rows []row
	for _, n := range o.sizes {
		for _, mode := range o.modes {
			fmt.Fprintf(os.Stderr, "==> %d instances, observe = %s\n", n, mode)
			r, err := measure(ctx, o, bin, dir, n, strings.TrimSpace(mode))
			if err != nil {
				return errors.Wrapf(err, errMeasure, n, mode)
			}
			rows = append(rows, r)
			// The table so far, in case a later configuration takes long: the
			// last one printed is the whole table.
			print(o, rows)
		}
	}
	return nil
}

// measure runs one configuration: n instances observed in mode, as the steps
// below in turn.
func measure(ctx context.Context, o options, bin, dir string, n int, mode string) (row, error) {
	b := &bench{o: o, n: n, mode: mode, r: row{n: n, mode: mode}}
	defer b.stop()
	for _, step := range []func(context.Context) error{
		b.startWorld,
		b.seed,
		func(ctx context.Context) error { return b.startProvider(bin, dir) },
		b.warmUp,
		b.steadyState,
		b.createNew,
	} {
		if err := step(ctx); err != nil {
			return b.r, err
		}
	}
	return b.r, nil
}

// bench is one measured configuration while it runs: what it started, and the
// row it fills in.
type bench struct {
	o    options
	n    int
	mode string
	r    row

	env *controlplane.Env
	emu *emulator.Server
	// webhooks are the webhook configurations held back while the fleet
	// is imported (holdWebhooks).
	webhooks    []client.Object
	endpoint    string
	metricsAddr string
	prov        *exec.Cmd
	// watched counts the fleet's conditions from informers (watch).
	watched client.Reader
	// stops undo what the steps started, last first.
	stops []func()
}

// watch returns a reader that serves the instances, databases and users from
// informers: each kind is listed once and then watched. Counting their
// conditions by listing 110,000 objects every few seconds took most of a core
// of the API server's, from the provider that the bench measures.
func (b *bench) watch(ctx context.Context) (client.Reader, error) {
	if b.watched != nil {
		return b.watched, nil
	}
	c, err := cache.New(b.env.Config, cache.Options{Scheme: b.env.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, errors.Wrap(err, errWatch)
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() { _ = c.Start(cctx) }()
	b.stops = append(b.stops, cancel)
	b.watched = c
	return c, nil
}

func (b *bench) stop() {
	for i := len(b.stops) - 1; i >= 0; i-- {
		b.stops[i]()
	}
}

// startWorld starts a control plane and an emulator, with a ProviderConfig
// that points at it.
func (b *bench) startWorld(ctx context.Context) error {
	env, err := controlplane.Start(controlplane.WithWebhooks(envtest.WebhookInstallOptions{
		Paths: []string{filepath.Join(controlplane.RepoRoot(), "package", "webhookconfigurations")},
	}))
	if err != nil {
		return err
	}
	b.env = env
	b.stops = append(b.stops, func() { _ = env.Stop() })
	// The imported fleet is written as it stands, not applied: the
	// webhooks come back for the create phase, which users apply.
	if b.webhooks, err = holdWebhooks(ctx, env.Client); err != nil {
		return err
	}

	// Every request of the run is accounted for: the log keeps them all.
	b.emu = emulator.New(emulator.WithRequestBudget(b.o.quota), emulator.WithDelays(10*time.Second, 3*time.Second, 5*time.Second),
		emulator.WithRequestLogSize(requestLogSize))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: b.emu, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	b.stops = append(b.stops, func() { _ = srv.Close() })
	b.endpoint = "http://" + lis.Addr().String() + "/"

	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ProviderConfigSpec{
			Project: v1alpha1.Project{ProjectID: project, Endpoint: b.endpoint}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
		}},
	} {
		if err := env.Client.Create(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// seed imports the fleet: its objects and secrets, and the Cloud SQL
// instances, databases and users they name.
func (b *bench) seed(ctx context.Context) error {
	b.r.objects = b.n * (b.o.databases + b.o.users)
	fmt.Fprintf(os.Stderr, "    importing %d instances with %d databases and %d users each (objects, secrets, seeded Cloud SQL instances, databases and users)\n", b.n, b.o.databases, b.o.users)
	return parallel(b.n, 8, func(i int) error {
		return importInstance(ctx, b.env.Client, b.emu, fmt.Sprintf("fleet-%05d", i), float64(i) < b.o.pitr*float64(b.n), b.o.databases, b.o.users)
	})
}

// startProvider runs the provider built at bin, its files in dir, with
// metrics and profiles on free ports and no webhooks.
func (b *bench) startProvider(bin, dir string) error {
	var err error
	if b.metricsAddr, err = freeAddr(); err != nil {
		return err
	}
	pprofAddr, err := freeAddr()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "    provider: metrics http://%s/metrics, profiles http://%s/debug/pprof/\n", b.metricsAddr, pprofAddr)
	cfg := filepath.Join(dir, fmt.Sprintf("config-%d-%s.toml", b.n, b.mode))
	_, port, certDir := b.env.WebhookServing()
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "[reconcile]\npoll_interval = %q\nbackup_health_interval = %q\nmax_reconcile_rate = %d\nobject_share = %g\nobserve = %q\n\n[cloudsql]\nrequests_per_minute = %d\n\n[webhook]\nport = %d\ncert_dir = %q\n",
		b.o.poll.String(), b.o.health.String(), b.o.rate, b.o.objectShare, b.mode, b.o.quota, port, certDir), 0o600); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, b.env.KubeConfig(), 0o600); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("provider-%d-%s.log", b.n, b.mode)))
	if err != nil {
		return err
	}
	b.stops = append(b.stops, func() { _ = logf.Close() })
	args := []string{"--config", cfg, "--kubeconfig", kubeconfig, "--metrics-bind-address", b.metricsAddr, "--metrics-secure=false",
		"--health-probe-bind-address", "0", "--pprof-bind-address", pprofAddr, "--pod-injector=false"}
	if b.o.debug {
		args = append(args, "--debug")
	}
	b.prov = exec.Command(bin, args...)
	b.prov.Stdout, b.prov.Stderr = logf, logf
	if b.o.goMemLimit != "" {
		b.prov.Env = append(os.Environ(), "GOMEMLIMIT="+b.o.goMemLimit)
	}
	if err := b.prov.Start(); err != nil {
		return err
	}
	b.stops = append(b.stops, func() { _ = b.prov.Process.Signal(syscall.SIGTERM); _ = b.prov.Wait() })
	return nil
}

// warmUp waits until every instance, database and user has been observed once
// (Synced), which is itself paced by the quota.
func (b *bench) warmUp(ctx context.Context) error {
	start := time.Now()
	r, err := b.watch(ctx)
	if err != nil {
		return err
	}
	for (b.r.synced < b.n || b.r.objectsSynced < b.r.objects) && time.Since(start) < b.o.warmupLimit {
		if err := pause(ctx, 5*time.Second); err != nil {
			return err
		}
		if b.r.synced, b.r.objectsSynced, err = countWith(ctx, r, xpv2.TypeSynced, ""); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "    warm-up: %d/%d instances and %d/%d databases and users synced after %s\n",
			b.r.synced, b.n, b.r.objectsSynced, b.r.objects, time.Since(start).Round(time.Second))
	}
	b.r.warmup = time.Since(start)
	return nil
}

// measureFor is how long the steady state is measured: at least -measure, and
// with databases and users long enough for each to be observed twice. The
// interval grows while the provider counts the listings of the first pass, so
// it is read again while measuring.
func (b *bench) measureFor(least time.Duration) (time.Duration, error) {
	if b.r.objects == 0 {
		return least, nil
	}
	effective, _, err := scrapeObjectPacing(b.metricsAddr)
	if err != nil {
		return least, err
	}
	if d, err := time.ParseDuration(effective); err == nil && time.Duration(1.2*float64(d)) > least {
		least = time.Duration(1.2 * float64(d)).Round(time.Second)
	}
	if b.o.measureMost > 0 {
		least = min(least, b.o.measureMost)
	}
	return least, nil
}

// steadyState measures the fleet once warm: the provider's requests, CPU and
// memory, and how soon it reverts out-of-band changes made to 1% of the
// instances at a time, another 1% every revertRound from a third of the way
// in, so that the 99th percentile rests on more than one round.
func (b *bench) steadyState(ctx context.Context) error {
	measureFor, err := b.measureFor(b.o.measure)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "    measuring the steady state for %s or more (out-of-band changes on 1%% after a third of it)\n", measureFor)
	// The listings of the warm-up count in the check of one listing per
	// instance and kind per interval: the second listing of each is the
	// first that could come too soon.
	warmupRequests := b.emu.Requests()
	b.emu.ResetCounts()
	cpu0, _ := cpuSeconds(b.prov.Process.Pid)
	t0 := time.Now()
	checked := t0
	changedAt := map[string]time.Time{}
	// due is when each instance of the rounds begun is to be changed.
	due := map[string]time.Time{}
	reverts := []time.Duration{}
	var lastRound time.Time
	round := 0
	for time.Since(t0) < measureFor {
		if err := pause(ctx, time.Second); err != nil {
			return err
		}
		if time.Since(checked) > 30*time.Second {
			checked = time.Now()
			if measureFor, err = b.measureFor(measureFor); err != nil {
				return err
			}
		}
		// Rounds stop a revert's worth before the end, so that each is
		// measured whole.
		if time.Since(t0) > measureFor/3 && time.Since(lastRound) > revertRound && time.Since(t0) < measureFor-2*revertRound {
			lastRound = time.Now()
			b.planOutOfBand(due, round, lastRound)
			round++
		}
		if err := b.changeOutOfBand(due, changedAt); err != nil {
			return err
		}
		for name, at := range changedAt {
			if db, err := b.emu.Instance(project, name); err == nil && db.Settings.Tier != outOfBandTier {
				reverts = append(reverts, time.Since(at))
				delete(changedAt, name)
			}
		}
	}
	elapsed := time.Since(t0)
	b.r.measured = elapsed.Round(time.Second)
	cpu1, _ := cpuSeconds(b.prov.Process.Pid)
	b.r.cpuPerMin = (cpu1 - cpu0) / elapsed.Minutes()
	b.r.rssMiB, _ = peakRSSMiB(b.prov.Process.Pid)
	b.r.changed = round * ((b.n + 99) / 100)
	b.recordReverts(reverts)
	return b.recordRequests(elapsed, warmupRequests)
}

// outOfBandTier is what an out-of-band change sets, as someone would in the
// console.
const outOfBandTier = "db-custom-8-30720"

// revertRound is the time between two rounds of out-of-band changes.
const revertRound = 2 * time.Minute

// planOutOfBand plans the changes of a round: every hundredth instance from
// the round-th on, each at a random time within the round. Changed all at once,
// every change of a round would meet the provider's listing schedule at the same
// point, and the reverts would measure where that point fell (up to a listing
// period apart between runs) rather than how the provider keeps up.
func (b *bench) planOutOfBand(due map[string]time.Time, round int, at time.Time) {
	for i := round % 100; i < b.n; i += 100 {
		due[fmt.Sprintf("fleet-%05d", i)] = at.Add(rand.N(revertRound))
	}
}

// changeOutOfBand changes the tier of the instances whose time has come
// behind the provider's back, noting when in changedAt.
func (b *bench) changeOutOfBand(due, changedAt map[string]time.Time) error {
	for name, at := range due {
		if time.Now().Before(at) {
			continue
		}
		if err := b.emu.MutateInstance(project, name, func(db *sqladmin.DatabaseInstance) { db.Settings.Tier = outOfBandTier }); err != nil {
			return err
		}
		changedAt[name] = time.Now()
		delete(due, name)
	}
	return nil
}

func (b *bench) recordReverts(reverts []time.Duration) {
	b.r.reverted = len(reverts)
	sort.Slice(reverts, func(i, j int) bool { return reverts[i] < reverts[j] })
	if len(reverts) > 0 {
		b.r.revertP50, b.r.revertMx = reverts[len(reverts)/2], reverts[len(reverts)-1]
		b.r.revertP99 = reverts[min(len(reverts)-1, (len(reverts)*99+99)/100-1)]
	}
}

// recordRequests fills in the requests a minute over elapsed, the 429s, and
// what the provider's metrics say of its observations and listings.
func (b *bench) recordRequests(elapsed time.Duration, warmupRequests []emulator.Request) error {
	b.r.perMinute = map[string]float64{}
	for m, k := range b.emu.Counts() {
		b.r.perMinute[m] = float64(k) / elapsed.Minutes()
	}
	perInstanceHour := 60 / float64(b.n)
	b.r.healthRuns = b.r.perMinute[emulator.MethodBackupRunsList] * perInstanceHour
	b.r.healthWindow = b.r.perMinute[emulator.MethodInstancesLatestRecovery] * perInstanceHour
	for _, q := range b.emu.Requests() {
		if q.Status == http.StatusTooManyRequests {
			b.r.throttled++
		}
	}
	var err error
	b.r.gapP50, b.r.gapP99, b.r.effective, b.r.listEvery, err = scrape(b.metricsAddr)
	if err != nil {
		return err
	}
	b.r.busiest = busiestMinute(append(warmupRequests, b.emu.Requests()...))
	if b.r.objects > 0 {
		if b.r.objGapP50, b.r.objGapP99, err = scrapeObjectGaps(b.metricsAddr); err != nil {
			return err
		}
		if b.r.objectInterval, b.r.objectShare, err = scrapeObjectPacing(b.metricsAddr); err != nil {
			return err
		}
		effective, _ := time.ParseDuration(b.r.objectInterval)
		b.r.minListGap, b.r.listPairs, b.r.soonerListing = listingGaps(append(warmupRequests, b.emu.Requests()...), effective)
	}
	return nil
}

// pause waits d, or returns the context's error when it ends first.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// importInstance creates a PostgresqlInstance (with point-in-time recovery
// when pitr), its connection secret, and the Cloud SQL instance as the
// provider would have created it; then its users and databases, seeded in the
// emulator and imported observe-only.
func importInstance(ctx context.Context, c client.Client, emu *emulator.Server, name string, pitr bool, databases, users int) error {
	pi := newInstance(name)
	if pitr {
		pi.Spec.ForProvider.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true}
	}
	if err := c.Create(ctx, pi); err != nil {
		return err
	}
	sec := resource.ConnectionSecretFor(pi, v1alpha1.PostgresqlInstanceGroupVersionKind)
	sec.Data = map[string][]byte{cloudsql.ConnectionKeyPassword: []byte(password)}
	if err := c.Create(ctx, sec); err != nil {
		return err
	}
	params := *pi.Spec.ForProvider.DeepCopy()
	params.Labels = map[string]v1alpha1.LabelValue{v1alpha1.OwnerUIDLabelKey: v1alpha1.LabelValue(pi.GetUID())}
	if err := emu.Seed(project, cloudsql.GenerateInstance(name, project, params, password)); err != nil {
		return err
	}
	for j := range users {
		u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-u%d", name, j)}}
		u.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
		u.Spec.ForProvider.Instance = name
		u.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: u.Name}
		if err := c.Create(ctx, u); err != nil {
			return err
		}
		// The password the login was created with, known as an imported
		// instance's postgres password is.
		sec := resource.ConnectionSecretFor(u, v1alpha1.PostgresqlUserGroupVersionKind)
		sec.Data = map[string][]byte{cloudsql.ConnectionKeyPassword: []byte(password)}
		if err := c.Create(ctx, sec); err != nil {
			return err
		}
		if err := emu.SeedUser(project, name, &sqladmin.User{Name: u.Name, Password: password}); err != nil {
			return err
		}
	}
	for j := range databases {
		d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-d%d", name, j)}}
		d.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
		d.Spec.ForProvider.Instance = name
		if users > 0 {
			d.Spec.ForProvider.Owner = fmt.Sprintf("%s-u%d", name, j%users)
		}
		if err := c.Create(ctx, d); err != nil {
			return err
		}
		if err := emu.SeedDatabase(project, name, &sqladmin.Database{Name: d.Name}); err != nil {
			return err
		}
	}
	return nil
}

// listingGaps is the shortest time between two listings of one instance's
// databases, or of one instance's users, in the request log; how many pairs of
// successive listings it holds; and how many of them came sooner than
// 0.95 × effective after the one before (5% for the moves of the effective
// interval while the fleet is counted).
func listingGaps(reqs []emulator.Request, effective time.Duration) (least time.Duration, pairs, sooner int) {
	last := map[string]time.Time{}
	for _, q := range reqs {
		if q.Method != emulator.MethodDatabasesList && q.Method != emulator.MethodUsersList {
			continue
		}
		k := q.Method + "\x00" + q.Instance
		if t, ok := last[k]; ok {
			d := q.Time.Sub(t)
			pairs++
			if least == 0 || d < least {
				least = d
			}
			if float64(d) < 0.95*float64(effective) {
				sooner++
			}
		}
		last[k] = q.Time
	}
	return least, pairs, sooner
}

func newInstance(name string) *v1alpha1.PostgresqlInstance {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "default"}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	return pi
}

func parallel(n, workers int, fn func(int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// scrape reads the observation-gap histogram, the effective poll interval and
// the listing period from the provider's /metrics.
func scrape(addr string) (p50, p99, effective, listEvery string, err error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", "", "", "", err
	}
	listEvery = "-"
	defer resp.Body.Close()
	var buckets []bucket
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "cloudsql_postgres_observation_gap_seconds_bucket{le=\""):
			rest := strings.TrimPrefix(line, "cloudsql_postgres_observation_gap_seconds_bucket{le=\"")
			le, count, _ := strings.Cut(rest, "\"} ")
			l, _ := strconv.ParseFloat(le, 64)
			if le == "+Inf" {
				l = -1
			}
			v, _ := strconv.ParseFloat(count, 64)
			buckets = append(buckets, bucket{l, v})
		case strings.HasPrefix(line, "cloudsql_postgres_poll_interval_seconds "):
			v, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			effective = (time.Duration(v) * time.Second).String()
		case strings.HasPrefix(line, "cloudsql_postgres_listing_period_seconds "):
			v, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			if v > 0 { // get mode registers the gauge but never lists
				listEvery = (time.Duration(v) * time.Second).String()
			}
		}
	}
	return quantile(buckets, 0.5), quantile(buckets, 0.99), effective, listEvery, sc.Err()
}

// bucket is a cumulative bucket of a histogram of seconds; le -1 is +Inf.
type bucket struct {
	le    float64
	count float64
}

// quantile is the bound of the first bucket that holds q of the histogram's
// observations ("none" when it has none).
func quantile(buckets []bucket, q float64) string {
	if len(buckets) == 0 || buckets[len(buckets)-1].count == 0 {
		return "none"
	}
	total := buckets[len(buckets)-1].count
	for _, b := range buckets {
		if b.count >= q*total {
			if b.le < 0 {
				return "> 2h"
			}
			return "<= " + (time.Duration(b.le) * time.Second).String()
		}
	}
	return "?"
}

// scrapeObjectPacing reads the objects' effective interval and their share
// of the budget from the provider's /metrics.
func scrapeObjectPacing(addr string) (interval string, share float64, err error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	interval = "-"
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "cloudsql_postgres_object_poll_interval_seconds":
			interval = (time.Duration(v) * time.Second).String()
		case "cloudsql_postgres_object_budget_share":
			share = v
		}
	}
	return interval, share, sc.Err()
}

// busiestMinute is the most requests in any 60 s of reqs (in time order).
func busiestMinute(reqs []emulator.Request) int {
	most, first := 0, 0
	for i, q := range reqs {
		for q.Time.Sub(reqs[first].Time) >= time.Minute {
			first++
		}
		most = max(most, i-first+1)
	}
	return most
}

// scrapeObjectGaps reads the objects' observation-gap histogram (both kinds
// together) from the provider's /metrics.
func scrapeObjectGaps(addr string) (p50, p99 string, err error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	byBound := map[float64]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "cloudsql_postgres_object_observation_gap_seconds_bucket{")
		if !ok {
			continue
		}
		_, rest, _ := strings.Cut(line, "le=\"")
		le, count, _ := strings.Cut(rest, "\"} ")
		l, _ := strconv.ParseFloat(le, 64)
		if le == "+Inf" {
			l = -1
		}
		v, _ := strconv.ParseFloat(count, 64)
		byBound[l] += v
	}
	var buckets []bucket
	for le, n := range byBound {
		buckets = append(buckets, bucket{le, n})
	}
	// Ascending, +Inf last.
	sort.Slice(buckets, func(i, j int) bool {
		a, b := buckets[i].le, buckets[j].le
		if a < 0 || b < 0 {
			return b < 0 && a >= 0
		}
		return a < b
	})
	return quantile(buckets, 0.5), quantile(buckets, 0.99), sc.Err()
}

// cpuSeconds is the user and system CPU time of a process.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100, nil // clock ticks; 100 a second on Linux
}

// peakRSSMiB is a process's peak resident set size (VmHWM).
func peakRSSMiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, nil
		}
	}
	return 0, errors.New(errNoVmHWM)
}

func print(o options, rows []row) {
	goMemLimit := "none"
	if o.goMemLimit != "" {
		goMemLimit = o.goMemLimit
	}
	if o.memoryLimit > 0 {
		goMemLimit += fmt.Sprintf(" (container limit %d MiB)", o.memoryLimit)
	}
	fmt.Printf("\nfleet in one project, emulator quota %d/min (429 past it), poll_interval %s, max_reconcile_rate %d, object_share %g, steady state measured %s (with databases and users: at least 1.2 of the objects' intervals), provider GOMEMLIMIT %s\n\n", o.quota, o.poll, o.rate, o.objectShare, o.measure, goMemLimit)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "instances\tobserve\twarm-up\treq/min list\treq/min get\treq/min other\t429s\tbusiest minute\tgap p50\tgap p99\tlisting period\tresync interval\trevert p50\trevert p99\trevert max\treverted\tpeak RSS MiB\tCPU s/min\tcreate s")
	for _, r := range rows {
		other := 0.0
		for m, v := range r.perMinute {
			if m != emulator.MethodInstancesList && m != emulator.MethodInstancesGet && m != emulator.MethodDatabasesList && m != emulator.MethodUsersList {
				other += v
			}
		}
		create := r.cp.summary()
		warmup := r.warmup.Round(time.Second).String()
		if r.synced < r.n || r.objectsSynced < r.objects {
			warmup = fmt.Sprintf("> %s (%d synced)", warmup, r.synced+r.objectsSynced)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%.1f\t%.1f\t%.1f\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%.0f\t%.2f\t%s\n",
			r.n, r.mode, warmup, r.perMinute[emulator.MethodInstancesList], r.perMinute[emulator.MethodInstancesGet], other,
			r.throttled, r.busiest, r.gapP50, r.gapP99, r.listEvery, r.effective, r.revertP50.Round(time.Second), r.revertP99.Round(time.Second), r.revertMx.Round(time.Second),
			r.reverted, r.changed, r.rssMiB, r.cpuPerMin, create)
	}
	_ = w.Flush()
	printCreate(o, rows)
	fmt.Printf("\nbackup-health reads, backup_health_interval %s, point-in-time recovery on %.0f%% of the instances (at most 2 requests per instance and hour)\n\n", o.health, 100*o.pitr)
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "instances\tobserve\treq/min backupRuns.list\treq/min getLatestRecoveryTime\tbackupRuns.list /instance/h\tgetLatestRecoveryTime /instance/h\ttotal /instance/h")
	for _, r := range rows {
		fmt.Fprintf(w, "%d\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", r.n, r.mode, r.perMinute[emulator.MethodBackupRunsList], r.perMinute[emulator.MethodInstancesLatestRecovery],
			r.healthRuns, r.healthWindow, r.healthRuns+r.healthWindow)
	}
	_ = w.Flush()
	if o.databases+o.users == 0 {
		return
	}
	fmt.Printf("\n%d databases and %d users of each instance, imported observe-only (their observation is the shared listings alone)\n\n", o.databases, o.users)
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "instances\tobserve\tdatabases+users\tsynced at warm-up's end\tmeasured\treq/min total\treq/min databases.list\treq/min users.list\t429s\tobject gap p50\tobject gap p99\tobjects' interval\tobjects' budget share\tleast time between two listings of one instance\tlistings sooner than the interval\tpeak RSS MiB")
	for _, r := range rows {
		total := 0.0
		for _, v := range r.perMinute {
			total += v
		}
		fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%s\t%.1f\t%.1f\t%.1f\t%d\t%s\t%s\t%s\t%.2f\t%s\t%d of %d\t%.0f\n",
			r.n, r.mode, r.objects, r.objectsSynced, r.measured, total, r.perMinute[emulator.MethodDatabasesList], r.perMinute[emulator.MethodUsersList], r.throttled,
			r.objGapP50, r.objGapP99, r.objectInterval, r.objectShare, r.minListGap.Round(time.Second), r.soonerListing, r.listPairs, r.rssMiB)
	}
	_ = w.Flush()
}
