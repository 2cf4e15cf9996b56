//go:build linux

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

// The data plane's tests read /proc and use Linux process attributes.

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	. "github.com/onsi/gomega"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

// The instance of the package doc's "Connecting with the Cloud SQL Auth Proxy
// and psql" section.
const (
	docProject      = "demo-project"
	docInstance     = "legacy-db"
	docConnection   = "demo-project:europe-west1:legacy-db"
	docRootPassword = "change-me"
)

// docSeed is the seed.toml the package doc's section means: demo-project:legacy-db
// as in its [[instances]] example, with extra appended (e.g. a [postgres] table).
func docSeed(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seed.toml")
	NewWithT(t).Expect(os.WriteFile(path, []byte(extra+`
[[instances]]
project          = "demo-project"
name             = "legacy-db"
database_version = "POSTGRES_15"
tier             = "db-custom-1-3840"
region           = "europe-west1"
root_password    = "change-me"
`), 0o600)).To(Succeed())
	return path
}

// lineLog collects what run logs; it is safe for concurrent use.
type lineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lines are the complete lines logged so far.
func (l *lineLog) lines() []string {
	s := l.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.Split(s[:i], "\n")
	}
	return nil
}

// emulatorRun is run serving in this process until stop cancels its context.
type emulatorRun struct {
	url    string
	log    *lineLog
	cancel context.CancelFunc
	errc   chan error
	once   sync.Once
	err    error
}

// runEmulator calls run with args and waits for the "listening on" line, whose
// address it keeps. The test's cleanup stops it, if the test did not.
func runEmulator(t *testing.T, args ...string) *emulatorRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &emulatorRun{log: &lineLog{}, cancel: cancel, errc: make(chan error, 1)}
	go func() { e.errc <- run(ctx, args, e.log) }()
	t.Cleanup(func() { _ = e.stop() })

	deadline := time.After(30 * time.Second)
	for e.url == "" {
		for _, l := range e.log.lines() {
			if u, ok := strings.CutPrefix(l, "cloudsql-emulator listening on "); ok {
				e.url = u
			}
		}
		select {
		case err := <-e.errc:
			e.errc <- err
			t.Fatalf("run %v returned before listening: %v\nlog:\n%s", args, err, e.log)
		case <-deadline:
			t.Fatalf("run %v did not log its address within 30s\nlog:\n%s", args, e.log)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return e
}

// stop cancels run's context, as SIGTERM does, and returns what run returned.
func (e *emulatorRun) stop() error {
	e.once.Do(func() {
		e.cancel()
		select {
		case e.err = <-e.errc:
		case <-time.After(60 * time.Second):
			e.err = errors.New("run did not return within 60s of its context's end")
		}
	})
	return e.err
}

// socketLine is the data plane's line for a server that is ready.
var socketLine = regexp.MustCompile(`dataplane: instance (\S+): PostgreSQL ready in \S+ \(socket (\S+)\)$`)

// serverDir waits for the data plane to report instance's PostgreSQL ready and
// returns the server's temporary directory (data directory, socket, log).
func (e *emulatorRun) serverDir(t *testing.T, instance string) string {
	t.Helper()
	var dir string
	NewWithT(t).Eventually(func() string {
		for _, l := range e.log.lines() {
			if m := socketLine.FindStringSubmatch(l); m != nil && m[1] == instance {
				dir = filepath.Dir(filepath.Dir(m[2])) // <dir>/run/.s.PGSQL.5432
			}
		}
		return dir
	}).WithTimeout(30*time.Second).WithPolling(20*time.Millisecond).ShouldNot(BeEmpty(),
		"the data plane did not report the PostgreSQL of %s ready; log:\n%s", instance, e.log)
	return dir
}

// serverDirGlob matches the temporary directories of demo-project:legacy-db's
// servers (package postgres names them cloudsql-<first 20 characters>-*).
func serverDirGlob() string {
	return filepath.Join(os.TempDir(), "cloudsql-demo-project-legacy-*")
}

func globSet(t *testing.T, pattern string) map[string]bool {
	t.Helper()
	m, err := filepath.Glob(pattern)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	set := map[string]bool{}
	for _, p := range m {
		set[p] = true
	}
	return set
}

// processesIn lists the processes whose command line names dir or whose working
// directory is in it: a PostgreSQL postmaster runs with -D <dir>/data and it and
// its children (which rename themselves) work in <dir>/data.
func processesIn(dir string) []string {
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		if bytes.Contains(cmdline, []byte(dir)) || cwd == dir || strings.HasPrefix(cwd, dir+"/") {
			found = append(found, fmt.Sprintf("pid %s: %s (cwd %s)", filepath.Base(p), bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), cwd))
		}
	}
	return found
}

// postmasterPID is the pid in a running server's postmaster.pid.
func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	g := NewWithT(t)
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	g.Expect(err).NotTo(HaveOccurred())
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	g.Expect(err).NotTo(HaveOccurred())
	return pid
}

// expectShutdownCleansUp stops the emulator and checks that the PostgreSQL
// server behind dir is gone with its files, as is every server directory of
// demo-project:legacy-db made since before (the glob before the emulator started).
func expectShutdownCleansUp(t *testing.T, e *emulatorRun, dir string, before map[string]bool) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(dir).To(HavePrefix(filepath.Join(os.TempDir(), "cloudsql-demo-project-legacy-")))
	g.Expect(filepath.Join(dir, "data", "PG_VERSION")).To(BeARegularFile())
	pid := postmasterPID(t, dir)
	g.Expect(filepath.Join("/proc", strconv.Itoa(pid))).To(BeADirectory(), "the postmaster runs")
	g.Expect(processesIn(dir)).NotTo(BeEmpty(), "the server's processes are found by their directory")

	g.Expect(e.stop()).To(Succeed(), "log:\n%s", e.log)
	g.Expect(e.log.lines()).To(ContainElement("cloudsql-emulator stopped"))

	g.Expect(dir).NotTo(BeAnExistingFile(), "the server's directory is removed")
	var left []string
	for p := range globSet(t, serverDirGlob()) {
		if !before[p] {
			left = append(left, p)
		}
	}
	g.Expect(left).To(BeEmpty(), "server directories of %s:%s left behind", docProject, docInstance)
	g.Expect(processesIn(dir)).To(BeEmpty(), "server processes left behind")
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	g.Expect(err != nil || !bytes.Contains(cmdline, []byte(dir))).To(BeTrue(), "the postmaster (pid %d) still runs: %s", pid, cmdline)
}

// proxyBinary is the Cloud SQL Auth Proxy the Makefile builds and exports.
func proxyBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the Cloud SQL Auth Proxy and PostgreSQL's server: make test runs it, make unit does not")
	}
	bin := os.Getenv("CLOUD_SQL_PROXY")
	if bin == "" {
		t.Fatal("CLOUD_SQL_PROXY must name the Cloud SQL Auth Proxy binary: run the tests with `make test`, " +
			"or build it with `make cloud-sql-proxy` and export CLOUD_SQL_PROXY=<the path it prints>")
	}
	NewWithT(t).Expect(bin).To(BeARegularFile(), "CLOUD_SQL_PROXY names no file: run `make cloud-sql-proxy`")
	return bin
}

// freePort is a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// syncBuffer is a bytes.Buffer safe for a process's output and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// authProxy is a running cloud-sql-proxy.
type authProxy struct {
	port int
	out  *syncBuffer
	cmd  *exec.Cmd
	// exited is closed when the process has ended.
	exited chan struct{}
}

// kill kills the proxy and waits for it to end.
func (p *authProxy) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// startProxy runs the proxy as the package doc does, on a free port, with auth
// (e.g. --token unused) and waits until it accepts connections. The test's
// cleanup kills it.
func startProxy(t *testing.T, apiURL string, auth ...string) *authProxy {
	t.Helper()
	g := NewWithT(t)
	p := &authProxy{port: freePort(t), out: &syncBuffer{}, exited: make(chan struct{})}
	args := append([]string{"--sqladmin-api-endpoint", apiURL + "/"}, auth...)
	args = append(args, "--port", strconv.Itoa(p.port), docConnection)
	cmd := exec.Command(proxyBinary(t), args...)
	// Nothing of the caller's (no gcloud configuration, no application default
	// credentials) decides how it authenticates.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	// A test binary that dies (a timeout, a closed pipe) takes the proxy along.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	g.Expect(cmd.Start()).To(Succeed())
	p.cmd = cmd
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("cloud-sql-proxy %s output:\n%s", strings.Join(args, " "), p.out)
		}
	})

	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)), time.Second)
		if err == nil {
			_ = c.Close()
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("cloud-sql-proxy %s exited (%v) before listening:\n%s", strings.Join(args, " "), cmd.ProcessState, p.out)
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("cloud-sql-proxy %s does not listen on port %d after 20s:\n%s", strings.Join(args, " "), p.port, p.out)
		}
	}
}

// psqlBinary is psql from PATH, as a user runs it, else the data plane's.
func psqlBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL's psql: make test runs it, make unit does not")
	}
	if p, err := exec.LookPath("psql"); err == nil {
		return p
	}
	dir, err := postgres.FindBinDir()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return filepath.Join(dir, "psql")
}

// psqlCurrentUser runs the package doc's psql against the proxy's port, with an
// environment of PATH and PG variables only, and returns its output.
func psqlCurrentUser(t *testing.T, port int, password string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, psqlBinary(t), "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "postgres",
		"--no-psqlrc", "-tAc", "select current_user")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PGPASSWORD=" + password, "PGCONNECT_TIMEOUT=20"}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// serviceAccountKey writes a service-account key file with a real RSA key whose
// token_uri is the emulator's token endpoint, and returns its path.
func serviceAccountKey(t *testing.T, apiURL string) string {
	t.Helper()
	g := NewWithT(t)
	b, err := emulator.ServiceAccountKey(docProject, apiURL+emulator.TokenPath)
	g.Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(t.TempDir(), "key.json")
	g.Expect(os.WriteFile(path, b, 0o600)).To(Succeed())
	return path
}

// serviceAccountKeyOf is serviceAccountKey for the service account email.
func serviceAccountKeyOf(t *testing.T, apiURL, email string) string {
	t.Helper()
	g := NewWithT(t)
	b, err := emulator.ServiceAccountKeyFor(docProject, email, apiURL+emulator.TokenPath)
	g.Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(t.TempDir(), "key.json")
	g.Expect(os.WriteFile(path, b, 0o600)).To(Succeed())
	return path
}

// psqlNoPassword runs psql as user against the proxy's port without a
// password (-w: never ask for one), with an environment of PATH and PG
// variables only, and returns its output.
func psqlNoPassword(t *testing.T, port int, user string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, psqlBinary(t), "-w", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", user,
		"-d", "postgres", "--no-psqlrc", "-tAc", "select current_user, pg_has_role(current_user, 'cloudsqlsuperuser', 'member')")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PGCONNECT_TIMEOUT=20"}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestPostgresAutoIAMAuthn runs the real Auth Proxy with --auto-iam-authn and
// a service account's key: psql logs in as the account's IAM user with no
// password, and a proxy with another account's key is refused.
func TestPostgresAutoIAMAuthn(t *testing.T) {
	g := NewWithT(t)
	proxyBinary(t)
	e := runEmulator(t, "--postgres", "--listen", "127.0.0.1:0", "--config", docSeed(t, ""))
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(e.url+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	const (
		appEmail   = "app@" + docProject + ".iam.gserviceaccount.com"
		app        = "app@" + docProject + ".iam"
		otherEmail = "other@" + docProject + ".iam.gserviceaccount.com"
	)
	// Cloud SQL logs IAM users in only on an instance with this flag on.
	op, err := svc.Instances.Patch(docProject, docInstance, &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		DatabaseFlags: []*sqladmin.DatabaseFlags{{Name: "cloudsql.iam_authentication", Value: "on"}},
	}}).Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) string {
		got, err := svc.Operations.Get(docProject, op.Name).Do()
		g.Expect(err).NotTo(HaveOccurred())
		return got.Status
	}).WithTimeout(time.Minute).Should(Equal("DONE"))
	op, err = svc.Users.Insert(docProject, docInstance, &sqladmin.User{Name: app, Type: "CLOUD_IAM_SERVICE_ACCOUNT"}).Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(op.Status).To(Equal("DONE"))

	p := startProxy(t, e.url, "--auto-iam-authn", "--credentials-file", serviceAccountKeyOf(t, e.url, appEmail))
	out, err := psqlNoPassword(t, p.port, app)
	g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s\nemulator log:\n%s", out, p.out, e.log)
	g.Expect(out).To(Equal(app+"|f"), "the account's IAM user, not a cloudsqlsuperuser")
	p.kill()

	other := startProxy(t, e.url, "--auto-iam-authn", "--credentials-file", serviceAccountKeyOf(t, e.url, otherEmail))
	out, err = psqlNoPassword(t, other.port, app)
	g.Expect(err).To(HaveOccurred(), "psql: %s", out)
	g.Expect(out).To(ContainSubstring(`Cloud SQL IAM service account authentication failed for user "` + app + `"`))
	g.Expect(out).To(ContainSubstring(otherEmail))
	other.kill()
}

// TestPostgresDocumentedJourney follows the package doc's "Connecting with the
// Cloud SQL Auth Proxy and psql": the emulator with --postgres and a seed,
// the real proxy pointed at it, and psql through the proxy; first with --token
// as documented, then with a service-account key, which gets its token from the
// emulator's token endpoint.
func TestPostgresDocumentedJourney(t *testing.T) {
	g := NewWithT(t)
	proxyBinary(t) // fail early, before starting anything, when it is missing
	before := globSet(t, serverDirGlob())
	e := runEmulator(t, "--postgres", "--listen", "127.0.0.1:0", "--config", docSeed(t, ""))
	g.Expect(e.log.lines()).To(ContainElement(HavePrefix("cloudsql-emulator backs RUNNABLE instances with PostgreSQL")))

	// The instance reports a loopback address of its own.
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(e.url+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	db, err := svc.Instances.Get(docProject, docInstance).Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(db.State).To(Equal("RUNNABLE"))
	g.Expect(db.IpAddresses).To(ContainElement(And(
		HaveField("Type", "PRIMARY"),
		HaveField("IpAddress", MatchRegexp(`^127\.\d+\.\d+\.\d+$`)),
		HaveField("IpAddress", Not(Equal("127.0.0.1"))))))

	t.Run("TokenAsDocumented", func(t *testing.T) {
		g := NewWithT(t)
		p := startProxy(t, e.url, "--token", "unused")
		out, err := psqlCurrentUser(t, p.port, docRootPassword)
		g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s", out, p.out)
		g.Expect(out).To(Equal("postgres"))

		// A wrong password is refused, as on Cloud SQL.
		out, err = psqlCurrentUser(t, p.port, "not-"+docRootPassword)
		g.Expect(err).To(HaveOccurred(), "psql: %s", out)
		g.Expect(out).To(ContainSubstring(`password authentication failed for user "postgres"`))
	})

	t.Run("CredentialsFileWithAServiceAccountKey", func(t *testing.T) {
		g := NewWithT(t)
		p := startProxy(t, e.url, "--credentials-file", serviceAccountKey(t, e.url))
		out, err := psqlCurrentUser(t, p.port, docRootPassword)
		g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s", out, p.out)
		g.Expect(out).To(Equal("postgres"))
		// The proxy got its token from the emulator.
		g.Expect(e.log.lines()).To(ContainElement(MatchRegexp(`^\S+ POST /token 200 \S+$`)))
	})

	expectShutdownCleansUp(t, e, e.serverDir(t, docProject+":"+docInstance), before)
}

// TestPostgresConfigTable checks that [postgres] enabled = true (with bin_dir
// and run_as) turns the data plane on as --postgres does, and that shutting
// the emulator down stops the servers and removes their files.
func TestPostgresConfigTable(t *testing.T) {
	g := NewWithT(t)
	proxyBinary(t)
	binDir, err := postgres.FindBinDir()
	g.Expect(err).NotTo(HaveOccurred(), "PostgreSQL's server is missing: run `make postgres`")
	before := globSet(t, serverDirGlob())
	e := runEmulator(t, "--listen", "127.0.0.1:0", "--config", docSeed(t, fmt.Sprintf(`
[postgres]
enabled = true
bin_dir = %q
run_as  = "postgres"
`, binDir)))
	g.Expect(e.log.lines()).To(ContainElement(HavePrefix("cloudsql-emulator backs RUNNABLE instances with PostgreSQL")))

	p := startProxy(t, e.url, "--token", "unused")
	out, err := psqlCurrentUser(t, p.port, docRootPassword)
	g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s", out, p.out)
	g.Expect(out).To(Equal("postgres"))

	// The postgres user's password follows users.update, as the doc says.
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(e.url+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	op, err := svc.Users.Update(docProject, docInstance, &sqladmin.User{Name: "postgres", Password: "changed"}).Name("postgres").Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(op.Status).To(Equal("DONE"))
	out, err = psqlCurrentUser(t, p.port, "changed")
	g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s", out, p.out)
	g.Expect(out).To(Equal("postgres"))
	out, err = psqlCurrentUser(t, p.port, docRootPassword)
	g.Expect(err).To(HaveOccurred(), "the old password still works: %s", out)

	dir := e.serverDir(t, docProject+":"+docInstance)
	if os.Geteuid() == 0 {
		// PostgreSQL refuses root: the server runs as run_as.
		fi, err := os.Stat(filepath.Join(dir, "data"))
		g.Expect(err).NotTo(HaveOccurred())
		pgUser, err := user.Lookup("postgres")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fmt.Sprint(fi.Sys().(*syscall.Stat_t).Uid)).To(Equal(pgUser.Uid))
	}
	// A live proxy would hold the emulator's shutdown for up to 5s (see
	// TestShutdownDoesNotWaitForSilentConnections); the doc's user stops it first.
	p.kill()
	expectShutdownCleansUp(t, e, dir, before)
}

// badConfig is a configuration that must stop the emulator at start.
type badConfig struct {
	args []string
	want []string // substrings of the error
}

// expectFailsAtStart runs the emulator with each case and checks that run
// returns an error containing every wanted substring, without listening.
func expectFailsAtStart(t *testing.T, cases map[string]badConfig) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// An emulator that starts anyway is stopped at once.
			out := &stopOnListen{cancel: cancel}
			err := run(ctx, append(tc.args, "--listen", "127.0.0.1:0"), out)
			g.Expect(err).To(HaveOccurred(), "run started; log:\n%s", out.String())
			for _, w := range tc.want {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
			g.Expect(out.String()).NotTo(ContainSubstring("listening on"))
		})
	}
}

// stopOnListen is a log that cancels run's context when run listens.
type stopOnListen struct {
	lineLog
	cancel context.CancelFunc
}

func (w *stopOnListen) Write(p []byte) (int, error) {
	n, err := w.lineLog.Write(p)
	if strings.Contains(w.String(), "listening on") {
		w.cancel()
	}
	return n, err
}

// writeConfig writes a configuration file into dir.
func writeConfig(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	NewWithT(t).Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
	return path
}

// TestPostgresBadConfigFailsAtStart checks that a data plane that cannot work
// fails when the emulator starts, saying why, rather than at the first instance.
func TestPostgresBadConfigFailsAtStart(t *testing.T) {
	empty := t.TempDir()
	dir := t.TempDir()
	cases := map[string]badConfig{
		"BinDirIsAnEmptyDirectory": {
			[]string{"--config", writeConfig(t, dir, "empty.toml", fmt.Sprintf("[postgres]\nenabled = true\nbin_dir = %q\n", empty))},
			[]string{"initdb", empty, "make postgres"},
		},
		"BinDirDoesNotExist": {
			[]string{"--config", writeConfig(t, dir, "none.toml", "[postgres]\nenabled = true\nbin_dir = \"/nonexistent\"\n")},
			[]string{"initdb", "/nonexistent", "make postgres"},
		},
		"BinDirDoesNotExistWithPostgres": {
			[]string{"--postgres", "--config", writeConfig(t, dir, "flag.toml", "[postgres]\nbin_dir = \"/nonexistent\"\n")},
			[]string{"/nonexistent", "make postgres"},
		},
		"UnknownKeyInPostgres": {
			[]string{"--postgres", "--config", writeConfig(t, dir, "typo.toml", "[postgres]\nbindir = \"/usr/lib/postgresql/15/bin\"\n")},
			[]string{"unknown keys: postgres.bindir"},
		},
		"EnabledIsNotABoolean": {
			[]string{"--config", writeConfig(t, dir, "bool.toml", "[postgres]\nenabled = \"yes\"\n")},
			[]string{"reading config", "postgres.enabled"},
		},
	}
	// run_as is checked once PostgreSQL's server is found: not under make unit.
	if os.Geteuid() == 0 && !testing.Short() {
		cases["RunAsIsRoot"] = badConfig{
			[]string{"--postgres", "--config", writeConfig(t, dir, "root.toml", "[postgres]\nrun_as = \"root\"\n")},
			[]string{"refuses to run as root"},
		}
		cases["RunAsDoesNotExist"] = badConfig{
			[]string{"--postgres", "--config", writeConfig(t, dir, "nouser.toml", "[postgres]\nrun_as = \"no-such-user-x\"\n")},
			[]string{"no-such-user-x"},
		}
	}
	expectFailsAtStart(t, cases)
}

// TestPostgresConfigErrorsNameTheKey checks that a bad [postgres] setting
// fails naming the key at fault (as unknown keys and type errors do), and that
// a bin_dir is checked even when the data plane is off rather than ignored.
func TestPostgresConfigErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]badConfig{
		"BinDirDoesNotExist": {
			[]string{"--config", writeConfig(t, dir, "none.toml", "[postgres]\nenabled = true\nbin_dir = \"/nonexistent\"\n")},
			[]string{"bin_dir", "/nonexistent", "make postgres"},
		},
		"BinDirDoesNotExistDataPlaneNotEnabled": {
			[]string{"--config", writeConfig(t, dir, "off.toml", "[postgres]\nbin_dir = \"/nonexistent\"\n")},
			[]string{"bin_dir", "enabled = true", "--postgres"},
		},
	}
	// run_as is checked once PostgreSQL's server is found: not under make unit.
	if os.Geteuid() == 0 && !testing.Short() {
		cases["RunAsIsRoot"] = badConfig{
			[]string{"--config", writeConfig(t, dir, "root.toml", "[postgres]\nenabled = true\nrun_as = \"root\"\n")},
			[]string{"run_as", "root"},
		}
		cases["RunAsDoesNotExist"] = badConfig{
			[]string{"--config", writeConfig(t, dir, "nouser.toml", "[postgres]\nenabled = true\nrun_as = \"no-such-user-x\"\n")},
			[]string{"run_as", "no-such-user-x"},
		}
	}
	expectFailsAtStart(t, cases)
}

// TestDocConfigurationExampleIsAccepted takes the package doc's configuration
// example verbatim (the seed.toml its "Connecting" section runs with seeds the
// same instance) and checks that the emulator accepts it as it stands.
func TestDocConfigurationExampleIsAccepted(t *testing.T) {
	g := NewWithT(t)
	doc, err := os.ReadFile("doc.go")
	g.Expect(err).NotTo(HaveOccurred())
	_, rest, ok := strings.Cut(string(doc), "// # Configuration\n")
	g.Expect(ok).To(BeTrue(), "doc.go has no # Configuration section")
	section, _, _ := strings.Cut(rest, "\n// # ")
	var example strings.Builder
	for _, l := range strings.Split(section, "\n") {
		if code, ok := strings.CutPrefix(l, "//\t"); ok {
			example.WriteString(code + "\n")
		}
	}
	g.Expect(example.String()).To(ContainSubstring("[[instances]]"))
	path := writeConfig(t, t.TempDir(), "seed.toml", example.String())

	cfg, err := loadConfig(path)
	g.Expect(err).NotTo(HaveOccurred(), "the doc's example:\n%s", example.String())
	g.Expect(cfg.Postgres.Enabled).To(BeTrue())
	g.Expect(cfg.Instances).To(HaveExactElements(And(
		HaveField("Project", docProject), HaveField("Name", docInstance),
		HaveField("DatabaseVersion", "POSTGRES_15"), HaveField("Region", "europe-west1"),
		HaveField("RootPassword", docRootPassword))))
	// The seed is valid (without the data plane, which the journey tests run).
	srv := emulator.New(cfg.options()...)
	defer srv.Close()
	g.Expect(cfg.seed(path, srv)).To(Succeed())
}
