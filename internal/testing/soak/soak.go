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

// Package soak runs the provider binary as a process of its own against a real
// API server and the Cloud SQL emulator (injecting 5xx, 429 and slow inserts, and
// enforcing the quota), kills it with SIGKILL every few seconds while instances
// are created, changed, imported and deleted, and users and databases are
// created and deleted on a few instances that run a real PostgreSQL (failed
// operations injected too), and reports what went wrong: duplicate creates,
// orphaned instances, users and databases, passwords Cloud SQL does not
// accept or that a user's secret lost, users and databases not Ready with
// least privilege, the most requests Cloud SQL counted in any 60 seconds, 429s
// shown in conditions, secrets or finalizers left behind, writes to instances
// deleted without the allow-deletion annotation, live instances without
// deletion protection, deleted instances without exactly one final backup,
// on-demand backups (PostgresqlBackups) taken twice, lost or left behind,
// and instances recovered from others (clones now and at a point in time,
// restores of PostgresqlBackups) whose connection secret ever held their
// source's postgres password, that Cloud SQL made twice, that do not carry
// their own owner label, or whose sources received a write.
// RunFailover does the same
// with two replicas and leader election: it kills and stops the leader, and
// reports how long each takeover took, the busiest minute across both replicas
// and whether annotated pods were admitted throughout.
package soak

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/providerproc"
)

const (
	errTimeout = "not %s within %s"
	// errFailures is ErrFailed followed by the failures.
	errFailures = "%w: %s"
)

const (
	project   = "soak-123456"
	secretNS  = "crossplane-system"
	changedTo = "db-custom-2-7680"
)

// Options size a soak.
type Options struct {
	// Instances is how many PostgresqlInstances are created (a third changed).
	Instances int
	// Imports is how many instances made outside Kubernetes are imported.
	Imports int
	// Quota is the emulator's requests per minute, and the provider's budget.
	Quota int
	// KillEvery bounds the time between two SIGKILLs of the provider.
	KillMin, KillMax time.Duration
	// MaxKills stops the killing after this many (0: until the end).
	MaxKills int
	// SQLInstances is how many more instances run on an emulator that gives
	// each a PostgreSQL server, with Logins PostgresqlUsers each and as many
	// PostgresqlDatabases, one owned by each user.
	SQLInstances int
	// Logins is how many users (and databases) each of SQLInstances gets.
	Logins int
	// Recoveries is how many instances are recovered from others, at most:
	// of each instance with PostgreSQL a clone now, one at a point in time
	// and a restore of a PostgresqlBackup, of two others a clone now and
	// one at a point in time, interleaved so that a few cover every kind
	// (see recoveryPlan). Negative: all of them.
	Recoveries int
	// Timeout bounds each phase.
	Timeout time.Duration
	// Log receives the progress.
	Log io.Writer
}

// Report is what a soak found. Every count but MaxPerMinute and
// QuotaConditions must be zero; MaxPerMinute must not exceed the quota.
type Report struct {
	Kills           int
	Requests        int
	MaxPerMinute    int
	Quota           int
	DuplicateCreate int
	Orphans         int
	BadPasswords    int
	// QuotaAnswers are the 429s that the emulators' quota answered (not an
	// injected fault): the provider spent more than the project's quota.
	QuotaAnswers int
	// QuotaConditions are the objects whose conditions showed a 429,
	// reported but not a failure: without QuotaAnswers they are injected
	// 429s that outlasted the provider's retries (a fault share of requests
	// failing several times running), which the objects show until a later
	// try succeeds.
	QuotaConditions int
	SecretsLeft     int
	ObjectsLeft     int
	// Users is how many PostgresqlUsers were made, each owning one of as
	// many PostgresqlDatabases.
	Users int
	// LostPasswords are users in Cloud SQL whose connection secret does not
	// hold their password.
	LostPasswords int
	// UsersTwice and DatabasesTwice were created in Cloud SQL more than once,
	// or claimed by more than one object.
	UsersTwice, DatabasesTwice int
	// OrphanUsers and OrphanDatabases are in Cloud SQL without an object,
	// while the objects live or after they were deleted.
	OrphanUsers, OrphanDatabases int
	// NotLeastPrivileged are users and databases not Ready with the least
	// privilege their status records.
	NotLeastPrivileged int
	// Rotations is how many passwords were rotated while the provider was
	// killed; ClientConnections how many connections clients made meanwhile
	// with their secrets' passwords, FailedConnections how many of those
	// Cloud SQL refused once the secret had settled (see followLag).
	Rotations, ClientConnections, FailedConnections int
	// RotationKills is how many SIGKILLs came within two seconds of a
	// round of rotations' start.
	RotationKills int
	// UnallowedWrites are the writes to instances whose objects were
	// deleted without the allow-deletion annotation; Unprotected the live
	// instances found without Cloud SQL's deletion protection.
	UnallowedWrites, Unprotected int
	// LostFinalBackups are deleted instances of which no final backup is
	// listed; FinalBackupsTwice those of which more than one is.
	LostFinalBackups, FinalBackupsTwice int
	// Backups is how many PostgresqlBackups were taken; BackupsTwice the
	// backup runs taken beyond one per object, BackupsLost the Ready ones
	// whose run Cloud SQL does not list, BackupsLeft the runs still listed
	// after their objects were deleted.
	Backups, BackupsTwice, BackupsLost, BackupsLeft int
	// Recoveries is how many instances were recovered from others, while
	// the provider was killed RecoveryKills times more. SourcePasswords are
	// those whose connection secret ever held a source's postgres password;
	// RecoveredTwice the clones and restores Cloud SQL accepted beyond one
	// per recovered instance; RecoveriesNotOwned those whose owner label is
	// not their object's once Done; CloneRecordsLeft the records of clones
	// left once Done; SourceWrites the writes the sources received
	// meanwhile.
	Recoveries, RecoveryKills                           int
	SourcePasswords, RecoveredTwice, RecoveriesNotOwned int
	CloneRecordsLeft, SourceWrites                      int
	// Conditions are the condition messages that mentioned a 429, for the
	// record.
	Conditions []string
}

// Failed says what in the report is wrong, or nothing.
func (r Report) Failed() []string {
	var f []string
	check := func(n int, what string) {
		if n > 0 {
			f = append(f, fmt.Sprintf("%d %s", n, what))
		}
	}
	check(r.DuplicateCreate, "instances created twice")
	check(r.Orphans, "instances left in Cloud SQL after their objects were deleted")
	check(r.BadPasswords, "connection secrets whose password Cloud SQL does not accept")
	check(r.QuotaAnswers, "answers of 429 from the quota (not injected)")
	check(r.SecretsLeft, "connection secrets left after deletion")
	check(r.ObjectsLeft, "objects left (finalizers) after deletion")
	check(r.LostPasswords, "users whose connection secret lost the password Cloud SQL has")
	check(r.UsersTwice, "users created twice or claimed by two objects")
	check(r.DatabasesTwice, "databases created twice or claimed by two objects")
	check(r.OrphanUsers, "users in Cloud SQL without a PostgresqlUser")
	check(r.OrphanDatabases, "databases in Cloud SQL without a PostgresqlDatabase")
	check(r.NotLeastPrivileged, "users and databases not Ready with least privilege")
	check(r.UnallowedWrites, "writes to instances deleted without the allow-deletion annotation")
	check(r.Unprotected, "live instances without deletion protection")
	check(r.LostFinalBackups, "deleted instances without a final backup")
	check(r.FinalBackupsTwice, "deleted instances with more than one final backup")
	check(r.BackupsTwice, "backup runs taken twice")
	check(r.BackupsLost, "Ready backups whose run Cloud SQL does not list")
	check(r.BackupsLeft, "backup runs left after their objects were deleted")
	check(r.SourcePasswords, "recovered instances whose connection secret held their source's postgres password")
	check(r.RecoveredTwice, "recovered instances that Cloud SQL made twice")
	check(r.RecoveriesNotOwned, "recovered instances without their own owner label")
	check(r.CloneRecordsLeft, "records of clones left once their recovery was Done")
	check(r.SourceWrites, "writes to the sources of recoveries")
	check(r.FailedConnections, "connections refused during rotations with a password its secret had held, confirmed, for "+followLag.String())
	if r.MaxPerMinute > r.Quota {
		f = append(f, fmt.Sprintf("%d requests in one 60-second window, over the quota of %d", r.MaxPerMinute, r.Quota))
	}
	return f
}

// Print writes the report as a table.
func (r Report) Print(w io.Writer) {
	fmt.Fprintf(w, "provider SIGKILLed %d times; %d Cloud SQL requests\n", r.Kills, r.Requests)
	rows := []struct {
		what string
		n    int
	}{
		{"instances created twice", r.DuplicateCreate},
		{"orphaned instances", r.Orphans},
		{"passwords Cloud SQL does not accept", r.BadPasswords},
		{"answers of 429 from the quota", r.QuotaAnswers},
		{"injected 429s shown in a condition", r.QuotaConditions},
		{"connection secrets left", r.SecretsLeft},
		{"objects (finalizers) left", r.ObjectsLeft},
		{"writes to instances deleted unannotated", r.UnallowedWrites},
		{"live instances without protection", r.Unprotected},
		{"deleted instances without final backup", r.LostFinalBackups},
		{"deleted instances with two final backups", r.FinalBackupsTwice},
	}
	if r.Users > 0 {
		rows = append(rows, []struct {
			what string
			n    int
		}{
			{fmt.Sprintf("users (of %d) whose password is lost", r.Users), r.LostPasswords},
			{"users created or claimed twice", r.UsersTwice},
			{"databases created or claimed twice", r.DatabasesTwice},
			{"orphaned users", r.OrphanUsers},
			{"orphaned databases", r.OrphanDatabases},
			{"users, databases not least privileged", r.NotLeastPrivileged},
			{fmt.Sprintf("backups (of %d) taken twice", r.Backups), r.BackupsTwice},
			{"Ready backups not in Cloud SQL", r.BackupsLost},
			{"backups left after deletion", r.BackupsLeft},
			{fmt.Sprintf("connections refused (of %d; %d rotations, %d kills)", r.ClientConnections, r.Rotations, r.RotationKills), r.FailedConnections},
		}...)
	}
	if r.Recoveries > 0 {
		rows = append(rows, []struct {
			what string
			n    int
		}{
			{fmt.Sprintf("recoveries (of %d; %d kills) with source's pw", r.Recoveries, r.RecoveryKills), r.SourcePasswords},
			{"recoveries made twice", r.RecoveredTwice},
			{"recoveries without their own owner label", r.RecoveriesNotOwned},
			{"records of clones left", r.CloneRecordsLeft},
			{"writes to the sources of recoveries", r.SourceWrites},
		}...)
	}
	for _, row := range rows {
		fmt.Fprintf(w, "  %-40s %d\n", row.what, row.n)
	}
	fmt.Fprintf(w, "  %-40s %d (quota %d)\n", "most requests in any 60 seconds", r.MaxPerMinute, r.Quota)
}

// world is the running soak.
type world struct {
	o    Options
	env  *controlplane.Env
	c    client.Client
	emu  *emulator.Server
	dir  string
	bin  string
	cfg  string
	kube string

	// all names every instance of the soak on emu, sqlAll those on sqlEmu.
	all    []string
	sqlAll []string
	// sqlEmu gives its instances a PostgreSQL server each; logins are the
	// users and databases made on them.
	sqlEmu *emulator.Server
	logins []login
	// loginsDeleted is when the users and databases were deleted.
	loginsDeleted time.Time
	// backupIDs are the run IDs of the PostgresqlBackups, by name.
	backupIDs map[string]string
	// recovered are the instances recovered from others.
	recovered []recovered

	// restarting is held for a whole kill and restart: the killer and the
	// rotation phase both kill, and two restarts at once would each start
	// a provider while only the second is known, so that the first would
	// run to the end beside every later one (two processes without leader
	// election, each spending the whole quota).
	restarting sync.Mutex
	mu         sync.Mutex
	provider   *exec.Cmd
	runs       int
	kills      int
	quota      map[string]string // instance -> a condition message that named a 429
}

// Run soaks the provider and reports what it found; an error means the soak
// itself could not run or a phase did not finish within its timeout.
func Run(ctx context.Context, o Options) (Report, error) {
	w := &world{o: o, quota: map[string]string{}}
	if w.o.Log == nil {
		w.o.Log = io.Discard
	}
	var err error
	if w.dir, err = os.MkdirTemp("", "soak-"); err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(w.dir)
	w.logf("building cmd/provider")
	if w.bin, err = providerproc.Build(w.dir); err != nil {
		return Report{}, err
	}
	if w.env, err = controlplane.Start(); err != nil {
		return Report{}, err
	}
	defer func() { _ = w.env.Stop() }()
	w.c = w.env.Client

	// Cloud SQL at its quota, with a fifth of the answers 5xx, a tenth 429 and
	// slow inserts.
	w.emu = emulator.New(emulator.WithRequestBudget(o.Quota), emulator.WithDelays(3*time.Second, 2*time.Second, 2*time.Second))
	for _, f := range []emulator.Fault{
		{ServerErrorShare: 0.2}, {RateLimitShare: 0.1}, {Method: emulator.MethodInstancesInsert, Latency: 2 * time.Second},
	} {
		if err := w.emu.InjectFault(f); err != nil {
			return Report{}, err
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Report{}, err
	}
	srv := &http.Server{Handler: w.emu, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	defer func() { _ = srv.Close() }()

	sqlEndpoint := ""
	if o.SQLInstances > 0 {
		endpoint, stop, err := w.serveSQL()
		if err != nil {
			return Report{}, err
		}
		defer stop()
		sqlEndpoint = endpoint
	}

	if err := w.configure("http://"+lis.Addr().String()+"/", sqlEndpoint); err != nil {
		return Report{}, err
	}
	if err := w.start(); err != nil {
		return Report{}, err
	}
	defer w.stop()

	// Named before the watchers start, which read them.
	w.sqlAll = w.sqlInstances()
	kctx, stopKilling := context.WithCancel(ctx)
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { defer bg.Done(); w.killer(kctx) }()
	go func() { defer bg.Done(); w.watchConditions(kctx) }()

	r := Report{Quota: o.Quota}
	err = w.phases(ctx, &r)
	stopKilling()
	bg.Wait()
	if err != nil {
		return r, err
	}
	w.stop()
	w.tally(ctx, &r)
	return r, nil
}

func (w *world) logf(format string, a ...any) {
	fmt.Fprintf(w.o.Log, "    "+format+"\n", a...)
}

// configure creates the ProviderConfigs of the emulators (sqlEndpoint, when
// not empty, is the one with PostgreSQL) and the provider's configuration.
func (w *world) configure(endpoint, sqlEndpoint string) error {
	ctx := context.Background()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ProviderConfigSpec{
			Project: v1alpha1.Project{ProjectID: project, Endpoint: endpoint}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
		}},
	}
	if sqlEndpoint != "" {
		more, err := sqlObjects(sqlEndpoint)
		if err != nil {
			return err
		}
		objs = append(objs, more...)
	}
	for _, obj := range objs {
		if err := w.c.Create(ctx, obj); err != nil {
			return err
		}
	}
	w.cfg = filepath.Join(w.dir, "config.toml")
	if err := os.WriteFile(w.cfg, fmt.Appendf(nil, "[reconcile]\npoll_interval = \"30s\"\nbusy_poll_interval = \"5s\"\n\n[cloudsql]\nrequests_per_minute = %d\n\n"+
		"# The key of the emulator with PostgreSQL gets its tokens from that emulator.\n[credentials]\nallow_key_token_uri = true\n", w.o.Quota), 0o600); err != nil {
		return err
	}
	w.kube = filepath.Join(w.dir, "kubeconfig")
	return os.WriteFile(w.kube, w.env.KubeConfig(), 0o600)
}

// start runs a new provider process, as a Deployment would after a crash.
func (w *world) start() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs++
	logf, err := os.Create(filepath.Join(w.dir, fmt.Sprintf("provider-%d.log", w.runs)))
	if err != nil {
		return err
	}
	p := exec.Command(w.bin, "--config", w.cfg, "--kubeconfig", w.kube, "--metrics-bind-address", "0",
		"--health-probe-bind-address", "0", "--instance-webhook=false", "--pod-injector=false")
	p.Stdout, p.Stderr = logf, logf
	if err := p.Start(); err != nil {
		_ = logf.Close()
		return err
	}
	go func() { _ = p.Wait(); _ = logf.Close() }()
	w.provider = p
	return nil
}

func (w *world) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.provider != nil && w.provider.Process != nil {
		_ = w.provider.Process.Signal(syscall.SIGTERM)
		w.provider = nil
	}
}

// killer SIGKILLs the provider every KillMin to KillMax and starts another one
// a second later, until ctx ends or MaxKills were done.
func (w *world) killer(ctx context.Context) {
	for {
		d := w.o.KillMin + time.Duration(rand.Int64N(int64(w.o.KillMax-w.o.KillMin)+1))
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		w.mu.Lock()
		done := w.o.MaxKills > 0 && w.kills >= w.o.MaxKills
		w.mu.Unlock()
		if done {
			return
		}
		if err := w.kill(); err != nil {
			w.logf("cannot restart the provider: %v", err)
			return
		}
	}
}

// kill SIGKILLs the provider and starts another one a second later.
func (w *world) kill() error {
	w.restarting.Lock()
	defer w.restarting.Unlock()
	w.mu.Lock()
	if w.provider != nil {
		_ = w.provider.Process.Kill()
	}
	w.kills++
	w.mu.Unlock()
	time.Sleep(time.Second)
	return w.start()
}

// watchConditions records every instance, user and database whose
// conditions speak of a 429.
func (w *world) watchConditions(ctx context.Context) {
	record := func(name string, cs []xpv2.Condition) {
		for _, c := range cs {
			if strings.Contains(c.Message, "429") || strings.Contains(c.Message, "rateLimitExceeded") || strings.Contains(c.Message, "Quota exceeded") {
				w.mu.Lock()
				w.quota[name] = c.Message
				w.mu.Unlock()
			}
		}
	}
	for {
		l := &v1alpha1.PostgresqlInstanceList{}
		if err := w.c.List(ctx, l); err == nil {
			for i := range l.Items {
				record(l.Items[i].Name, l.Items[i].Status.Conditions)
			}
		}
		if len(w.logins) > 0 {
			users := &v1alpha1.PostgresqlUserList{}
			if err := w.c.List(ctx, users); err == nil {
				for i := range users.Items {
					record("PostgresqlUser "+users.Items[i].Name, users.Items[i].Status.Conditions)
				}
			}
			dbs := &v1alpha1.PostgresqlDatabaseList{}
			if err := w.c.List(ctx, dbs); err == nil {
				for i := range dbs.Items {
					record("PostgresqlDatabase "+dbs.Items[i].Name, dbs.Items[i].Status.Conditions)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

func (w *world) phases(ctx context.Context, r *Report) error {
	var names []string
	for i := range w.o.Instances {
		names = append(names, fmt.Sprintf("soak-%03d", i))
	}
	var imports []string
	for i := range w.o.Imports {
		n := fmt.Sprintf("import-%02d", i)
		imports = append(imports, n)
		if err := w.emu.Seed(project, &sqladmin.DatabaseInstance{Name: n, DatabaseVersion: "POSTGRES_18", Region: "europe-west1",
			Settings: &sqladmin.Settings{Tier: "db-custom-1-3840", Edition: emulator.EditionEnterprise, IpConfiguration: &sqladmin.IpConfiguration{Ipv4Enabled: true}}}); err != nil {
			return err
		}
	}

	w.all = append(append([]string{}, names...), imports...)
	plain := plainSources(names)
	w.logf("creating %d instances (%d with PostgreSQL) and importing %d (observe first), while the provider is killed every %s to %s",
		len(names)+len(w.sqlAll), len(w.sqlAll), len(imports), w.o.KillMin, w.o.KillMax)
	for _, n := range names {
		pi := newInstance(n)
		if slices.Contains(plain, n) {
			withPITR(pi)
		}
		if err := w.c.Create(ctx, pi); err != nil {
			return err
		}
	}
	for _, n := range w.sqlAll {
		if err := w.c.Create(ctx, withPITR(newSQLInstance(n))); err != nil {
			return err
		}
	}
	if err := w.createLogins(ctx); err != nil {
		return err
	}
	for _, n := range imports {
		pi := newInstance(n)
		pi.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
		pi.Spec.WriteConnectionSecretToReference = nil
		if err := w.c.Create(ctx, pi); err != nil {
			return err
		}
	}
	if err := w.waitFor(ctx, "every instance Ready", func() (bool, error) { return w.allReady(ctx, slices.Concat(names, imports, w.sqlAll)) }); err != nil {
		return err
	}
	r.Users = len(w.logins)
	if err := w.waitLogins(ctx, r); err != nil {
		return err
	}
	if len(w.sqlAll) > 0 {
		if err := w.checkLogins(ctx, r); err != nil {
			return err
		}
		if err := w.takeBackups(ctx, r); err != nil {
			return err
		}
	}
	// After the backups, which some restore, and before the rotations,
	// which write to the sources.
	if err := w.recoverInstances(ctx, plain, r); err != nil {
		return err
	}
	if len(w.sqlAll) > 0 {
		if err := w.deleteBackups(ctx, r); err != nil {
			return err
		}
		if err := w.rotateLogins(ctx, r); err != nil {
			return err
		}
		// They go while the other instances change; before their
		// instances, which would take them along.
		if err := w.deleteLogins(ctx); err != nil {
			return err
		}
	}
	w.logf("taking over the imported instances (managementPolicies [\"*\"], a connection secret)")
	for _, n := range imports {
		if err := w.update(ctx, n, func(pi *v1alpha1.PostgresqlInstance) {
			pi.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
			pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: n + "-postgres"}
		}); err != nil {
			return err
		}
	}

	if err := w.changeTiers(ctx, names[:len(names)/3], append(names, imports...)); err != nil {
		return err
	}
	bad, err := w.badPasswords(ctx, w.emu, append(names, imports...))
	if err != nil {
		return err
	}
	r.BadPasswords = bad
	r.Unprotected += w.unprotected(w.emu, names)
	if len(w.sqlAll) > 0 {
		if bad, err = w.badPasswords(ctx, w.sqlEmu, w.sqlAll); err != nil {
			return err
		}
		r.BadPasswords += bad
		r.Unprotected += w.unprotected(w.sqlEmu, w.sqlAll)
		if err := w.loginsGone(ctx, r); err != nil {
			return err
		}
	}
	if err := w.guardedDeletes(ctx, names[len(names)-max(1, len(names)/4):], r); err != nil {
		return err
	}

	if err := w.deleteAll(ctx, slices.Concat(names, imports, w.sqlAll), 0); err != nil {
		return err
	}
	// The instances the soak created keep a final backup when deleted (the
	// imported ones keep what Cloud SQL had: none).
	// The recovered instances, deleted earlier, keep one too.
	r.LostFinalBackups, r.FinalBackupsTwice = finalBackups(w.emu, slices.Concat(names, w.recoveredOn(w.emu)))
	if w.sqlEmu != nil {
		lost, twice := finalBackups(w.sqlEmu, slices.Concat(w.sqlAll, w.recoveredOn(w.sqlEmu)))
		r.LostFinalBackups += lost
		r.FinalBackupsTwice += twice
	}
	return nil
}

// recoveredOn names the recovered instances on emu.
func (w *world) recoveredOn(emu *emulator.Server) []string {
	var names []string
	for _, rc := range w.recovered {
		if rc.emu == emu {
			names = append(names, rc.name)
		}
	}
	return names
}

// changeTiers changes the tier of the instances named changed, and waits until
// Cloud SQL holds every change and the password of each of all is known.
func (w *world) changeTiers(ctx context.Context, changed, all []string) error {
	w.logf("changing the tier of %d instances", len(changed))
	for _, n := range changed {
		if err := w.update(ctx, n, func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.ForProvider.Resources.InstanceType = changedTo }); err != nil {
			return err
		}
	}
	return w.waitFor(ctx, "every change made and every password known", func() (bool, error) {
		for _, n := range changed {
			if db, err := w.emu.Instance(project, n); err != nil || db.Settings.Tier != changedTo {
				return false, nil
			}
		}
		bad, err := w.badPasswords(ctx, w.emu, all)
		return bad == 0, err
	})
}

// deleteAll deletes the instances named names and waits until only remain
// PostgresqlInstances are left.
func (w *world) deleteAll(ctx context.Context, names []string, remain int) error {
	w.logf("deleting %d instances", len(names))
	for _, n := range names {
		pi := &v1alpha1.PostgresqlInstance{}
		pi.SetName(n)
		if err := w.c.Delete(ctx, pi); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return w.waitFor(ctx, "every deleted object gone", func() (bool, error) {
		l := &v1alpha1.PostgresqlInstanceList{}
		if err := w.c.List(ctx, l); err != nil {
			return false, err
		}
		return len(l.Items) == remain, nil
	})
}

func newInstance(name string) *v1alpha1.PostgresqlInstance {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "default"}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	meta.AddAnnotations(pi, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
	return pi
}

func (w *world) update(ctx context.Context, name string, fn func(*v1alpha1.PostgresqlInstance)) error {
	for {
		pi := &v1alpha1.PostgresqlInstance{}
		if err := w.c.Get(ctx, client.ObjectKey{Name: name}, pi); err != nil {
			return err
		}
		fn(pi)
		err := w.c.Update(ctx, pi)
		if !kerrors.IsConflict(err) {
			return err
		}
	}
}

func (w *world) allReady(ctx context.Context, names []string) (bool, error) {
	for _, n := range names {
		pi := &v1alpha1.PostgresqlInstance{}
		if err := w.c.Get(ctx, client.ObjectKey{Name: n}, pi); err != nil {
			return false, err
		}
		if pi.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
			return false, nil
		}
	}
	return true, nil
}

// badPasswords counts the connection secrets of the instances named names
// (on emu) whose password Cloud SQL does not accept, or that have none.
func (w *world) badPasswords(ctx context.Context, emu *emulator.Server, names []string) (int, error) {
	bad := 0
	for _, n := range names {
		s := &corev1.Secret{}
		err := w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: n + "-postgres"}, s)
		if client.IgnoreNotFound(err) != nil {
			return 0, err
		}
		pw := string(s.Data[cloudsql.ConnectionKeyPassword])
		if err != nil || pw == "" || s.Annotations[v1alpha1.AnnotationPasswordUnconfirmed] == "true" || !emu.PasswordIs(project, n, cloudsql.RootUser, pw) {
			bad++
		}
	}
	return bad, nil
}

func (w *world) waitFor(ctx context.Context, what string, done func() (bool, error)) error {
	start := time.Now()
	for {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			w.logf("%s after %s", what, time.Since(start).Round(time.Second))
			return nil
		}
		if time.Since(start) > w.o.Timeout {
			return errors.Errorf(errTimeout, what, w.o.Timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// tally counts, from the emulator's log and what is left, what went wrong.
func (w *world) tally(ctx context.Context, r *Report) {
	w.mu.Lock()
	r.Kills = w.kills
	r.QuotaConditions = len(w.quota)
	for n, m := range w.quota {
		r.Conditions = append(r.Conditions, n+": "+m)
	}
	w.mu.Unlock()
	sort.Strings(r.Conditions)

	// Both emulators stand for one project, whose quota the provider's one
	// budget serves.
	var times []time.Time
	inserted := 0
	requests := w.emu.Requests()
	if w.sqlEmu != nil {
		requests = append(requests, w.sqlEmu.Requests()...)
	}
	for _, q := range requests {
		if q.Method == "" || q.Project != project {
			continue
		}
		times = append(times, q.Time)
		if q.Status == http.StatusTooManyRequests && !q.Fault {
			r.QuotaAnswers++
		}
		if q.Method == emulator.MethodInstancesInsert && q.Status == http.StatusOK {
			inserted++
		}
	}
	r.Requests = len(times)
	r.MaxPerMinute = busiestMinute(times)
	w.logf("requests by method: %s", byMethod(w.emu, w.sqlEmu))
	// Cloud SQL refuses a second insert of a name that exists, so more inserts
	// accepted than instances to create means one was created, deleted and
	// created again.
	r.DuplicateCreate = max(0, inserted-w.o.Instances-len(w.sqlAll))
	if w.sqlEmu != nil {
		w.createdTwice(r)
	}
	// Deleted instances may still be PENDING_DELETE for the emulator's delay.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r.Orphans = 0
		for _, name := range w.all {
			if db, err := w.emu.Instance(project, name); err == nil && db.State != emulator.StatePendingDelete {
				r.Orphans++
			}
		}
		for _, name := range w.sqlAll {
			if db, err := w.sqlEmu.Instance(project, name); err == nil && db.State != emulator.StatePendingDelete {
				r.Orphans++
			}
		}
		for _, rc := range w.recovered {
			if db, err := rc.emu.Instance(project, rc.name); err == nil && db.State != emulator.StatePendingDelete {
				r.Orphans++
			}
		}
		if r.Orphans == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	secrets := &corev1.SecretList{}
	if err := w.c.List(ctx, secrets, client.InNamespace(secretNS)); err == nil {
		for _, s := range secrets.Items {
			// Kubernetes' garbage collector deletes the secrets that name
			// their instance as owner (this API server runs none); the others
			// would stay.
			if (strings.HasSuffix(s.Name, "-postgres") || strings.HasSuffix(s.Name, loginSecretSuffix)) && len(s.OwnerReferences) == 0 {
				r.SecretsLeft++
			}
		}
	}
	objs := &v1alpha1.PostgresqlInstanceList{}
	if err := w.c.List(ctx, objs); err == nil {
		r.ObjectsLeft = len(objs.Items)
	}
	users := &v1alpha1.PostgresqlUserList{}
	if err := w.c.List(ctx, users); err == nil {
		r.ObjectsLeft += len(users.Items)
	}
	dbs := &v1alpha1.PostgresqlDatabaseList{}
	if err := w.c.List(ctx, dbs); err == nil {
		r.ObjectsLeft += len(dbs.Items)
	}
	backups := &v1alpha1.PostgresqlBackupList{}
	if err := w.c.List(ctx, backups); err == nil {
		r.ObjectsLeft += len(backups.Items)
	}
}

// byMethod lists the requests the emulators counted, by method.
func byMethod(emus ...*emulator.Server) string {
	counts := map[string]int{}
	for _, e := range emus {
		if e == nil {
			continue
		}
		for m, n := range e.Counts() {
			counts[m] += n
		}
	}
	parts := make([]string, 0, len(counts))
	for m, n := range counts {
		parts = append(parts, fmt.Sprintf("%s %d", m, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// busiestMinute is the most of times in any 60 seconds, as Cloud SQL counts
// its quota.
func busiestMinute(times []time.Time) int {
	times = append([]time.Time(nil), times...)
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	most := 0
	for i, j := 0, 0; j < len(times); j++ {
		for times[j].Sub(times[i]) >= time.Minute {
			i++
		}
		most = max(most, j-i+1)
	}
	return most
}

// ErrFailed is returned by Check when a report holds a failure.
var ErrFailed = errors.New("the soak found failures")

// Check returns ErrFailed, naming the failures, when the report holds any.
func Check(r Report) error {
	if f := r.Failed(); len(f) > 0 {
		return errors.Errorf(errFailures, ErrFailed, strings.Join(f, "; "))
	}
	return nil
}
