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

package emulator_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
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

// These tests drive the data plane (WithPostgres) end to end: the real
// sqladmin client against the emulator, connections made the way a Cloud SQL
// connector makes them (connectSettings, generateEphemeralCert, TLS 1.3 to
// port 3307 of an address in ipAddresses) and the real psql speaking
// PostgreSQL through that tunnel.

const (
	// dataTimeout bounds a psql run and the waits for a server to go; a
	// server starts in about a second, more under the race detector.
	dataTimeout = 90 * time.Second
	// privateNetworkOf is formatted with the project.
	privateNetworkOf = "projects/%s/global/networks/default"
)

// loopback is where every data plane address must be.
var loopback = netip.MustParsePrefix("127.0.0.0/8")

// connectorKey is the RSA key the test's "connector" has signed by
// generateEphemeralCert; like a connector, it makes one and reuses it.
var connectorKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

// dataEnv is an emulator with a data plane, on the wall clock with zero
// delays (every operation is DONE in the answer that starts it), served over
// HTTP with the real client pointed at it. Its project is unique to it, which
// names the servers' temporary directories apart from any other test's.
type dataEnv struct {
	ctx     context.Context
	project string
	emu     *emulator.Server
	svc     *sqladmin.Service
	psqlBin string
	// url is where the emulator serves the API and its token endpoint.
	url string
	// log is the emulator's request and data-plane log.
	log *lockedBuffer
}

// newDataEnv starts an emulator with WithPostgres. It fails, never skips, when
// PostgreSQL is missing. opts come after the defaults and may override them.
func newDataEnv(t *testing.T, opts ...emulator.Option) *dataEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL's server: make test runs it, make unit does not")
	}
	g := NewWithT(t)
	cfg, err := postgres.Config{}.Resolve()
	g.Expect(err).NotTo(HaveOccurred(), "the data plane tests need PostgreSQL's server (initdb, postgres, psql): run `make postgres`")
	logBuf := &lockedBuffer{}
	all := append([]emulator.Option{
		emulator.WithPostgres(cfg), emulator.WithDelays(0, 0, 0),
		emulator.WithRequestBudget(0), emulator.WithRequestLog(logBuf),
	}, opts...)
	emu := emulator.New(all...)
	hs := httptest.NewServer(emu)
	t.Cleanup(func() {
		hs.Close()
		_ = emu.Close()
		if t.Failed() {
			t.Logf("emulator log:\n%s", logBuf.String())
		}
	})
	ctx := context.Background()
	svc, err := sqladmin.NewService(ctx, option.WithEndpoint(hs.URL+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	var suffix [3]byte
	_, _ = rand.Read(suffix[:])
	return &dataEnv{
		ctx: ctx, project: fmt.Sprintf("dp%x", suffix), emu: emu, svc: svc,
		psqlBin: filepath.Join(cfg.BinDir, "psql"), url: hs.URL, log: logBuf,
	}
}

// insert creates instances and waits until each is RUNNABLE. Their servers
// start in the background, together; a connection waits for its own.
func (e *dataEnv) insert(g Gomega, dbs ...*sqladmin.DatabaseInstance) {
	for _, db := range dbs {
		op, err := e.svc.Instances.Insert(e.project, db).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		e.waitDone(g, op)
		g.Expect(e.get(g, db.Name).State).To(Equal(emulator.StateRunnable))
	}
}

// waitDone polls an operation until it is DONE, and expects it to have
// succeeded.
func (e *dataEnv) waitDone(g Gomega, op *sqladmin.Operation) {
	g.Eventually(func(g Gomega) {
		got, err := e.svc.Operations.Get(e.project, op.Name).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Status).To(Equal(emulator.OperationDone))
		g.Expect(got.Error).To(BeNil())
	}).WithTimeout(dataTimeout).Should(Succeed())
}

func (e *dataEnv) operation(g Gomega, name string) *sqladmin.Operation {
	op, err := e.svc.Operations.Get(e.project, name).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	return op
}

func (e *dataEnv) get(g Gomega, name string) *sqladmin.DatabaseInstance {
	db, err := e.svc.Instances.Get(e.project, name).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	return db
}

// updatePassword runs users.update and waits for its operation.
func (e *dataEnv) updatePassword(g Gomega, instance, user, password string) {
	op, err := e.svc.Users.Update(e.project, instance, &sqladmin.User{Name: user, Password: password}).
		Name(user).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
}

// ipOf returns the address of type typ in ips, or "".
func ipOf(ips []*sqladmin.IpMapping, typ string) string {
	for _, ip := range ips {
		if ip.Type == typ {
			return ip.IpAddress
		}
	}
	return ""
}

// target is what a connector learns from connectSettings: the address of the
// given type and a TLS configuration that trusts only the instance's CA under
// its DNS name.
func (e *dataEnv) target(instance, ipType string) (string, *tls.Config, error) {
	cs, err := e.svc.Connect.Get(e.project, instance).Context(e.ctx).Do()
	if err != nil {
		return "", nil, errors.Wrap(err, "connectSettings")
	}
	addr := ipOf(cs.IpAddresses, ipType)
	if addr == "" {
		return "", nil, errors.Errorf("connectSettings of %s has no %s address: %+v", instance, ipType, cs.IpAddresses)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(cs.ServerCaCert.Cert)) {
		return "", nil, errors.Errorf("serverCaCert of %s is not PEM", instance)
	}
	return net.JoinHostPort(addr, fmt.Sprint(emulator.ServerProxyPort)), &tls.Config{
		MinVersion: tls.VersionTLS13,
		RootCAs:    roots,
		ServerName: strings.TrimSuffix(cs.DnsName, "."),
	}, nil
}

// ephemeralCert has generateEphemeralCert sign the connector's key for
// instance, as a client certificate.
func (e *dataEnv) ephemeralCert(instance string) (*tls.Certificate, error) {
	key, err := connectorKey()
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	resp, err := e.svc.Connect.GenerateEphemeralCert(e.project, instance, &sqladmin.GenerateEphemeralCertRequest{
		PublicKey: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
	}).Context(e.ctx).Do()
	if err != nil {
		return nil, errors.Wrap(err, "generateEphemeralCert")
	}
	block, _ := pem.Decode([]byte(resp.EphemeralCert.Cert))
	if block == nil {
		return nil, errors.New("the ephemeral certificate is not PEM")
	}
	return &tls.Certificate{Certificate: [][]byte{block.Bytes}, PrivateKey: key}, nil
}

// connector is what a Cloud SQL connector keeps for one address of an
// instance: where to dial, the instance's CA and DNS name from
// connectSettings, and a client certificate from generateEphemeralCert.
type connector struct {
	e    *dataEnv
	addr string
	conf *tls.Config
}

func (e *dataEnv) connector(instance, ipType string) (*connector, error) {
	addr, conf, err := e.target(instance, ipType)
	if err != nil {
		return nil, err
	}
	cert, err := e.ephemeralCert(instance)
	if err != nil {
		return nil, err
	}
	conf.Certificates = []tls.Certificate{*cert}
	return &connector{e: e, addr: addr, conf: conf}, nil
}

// dial opens a TLS 1.3 connection to the server-side proxy. TLS 1.3 completes
// the client's side of the handshake before the server judged its
// certificate: a refusal shows on the first read.
func (c *connector) dial() (*tls.Conn, error) {
	return tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", c.addr, c.conf.Clone())
}

// dial connects to the instance's server-side proxy on its ipType address
// the way a Cloud SQL connector does.
func (e *dataEnv) dial(instance, ipType string) (*tls.Conn, error) {
	c, err := e.connector(instance, ipType)
	if err != nil {
		return nil, err
	}
	return c.dial()
}

// psql runs `select current_user` with the real psql as user, through a
// local forwarder into the instance's ipType address, and returns psql's
// output.
func (e *dataEnv) psql(instance, ipType, user, password string) (string, error) {
	return e.psqlQuery(instance, ipType, user, password, "select current_user")
}

// psqlQuery is psql with another query.
func (e *dataEnv) psqlQuery(instance, ipType, user, password, query string) (string, error) {
	return e.psqlIn(instance, ipType, user, password, "postgres", query)
}

// psqlIn is psqlQuery connected to another database.
func (e *dataEnv) psqlIn(instance, ipType, user, password, database, query string) (string, error) {
	c, err := e.connector(instance, ipType)
	if err != nil {
		return "", err
	}
	return c.psqlIn(user, password, database, query)
}

// psql runs query in the postgres database; see psqlIn.
func (c *connector) psql(user, password, query string) (string, error) {
	return c.psqlIn(user, password, "postgres", query)
}

// psqlIn runs query in database with the real psql as user through a
// forwarder that listens on 127.0.0.1:0 and, for each connection psql makes,
// dials the instance and copies bytes both ways. psql gets nothing of the
// test's environment but PATH.
func (c *connector) psqlIn(user, password, database, query string) (string, error) {
	return c.psqlWith(user, password, database, query)
}

// psqlWith is psqlIn with more environment variables for psql (NAME=value),
// which take precedence over psqlIn's.
func (c *connector) psqlWith(user, password, database, query string, env ...string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		open     = map[net.Conn]bool{}
		dialErrs []error
	)
	track := func(conn net.Conn, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			open[conn] = true
		} else {
			delete(open, conn)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer down.Close()
				track(down, true)
				defer track(down, false)
				up, err := c.dial()
				if err != nil {
					mu.Lock()
					dialErrs = append(dialErrs, err)
					mu.Unlock()
					return
				}
				defer up.Close()
				track(up, true)
				defer track(up, false)
				pipe(down, up)
			}()
		}
	}()

	ctx, cancel := context.WithTimeout(c.e.ctx, dataTimeout)
	defer cancel()
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	cmd := exec.CommandContext(ctx, c.e.psqlBin, "--no-psqlrc", "-w", "-h", "127.0.0.1", "-p", port, "-U", user, "-tAc", query)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"PGPASSWORD=" + password,
		"PGDATABASE=" + database,
		// The forwarder is the local end of the tunnel: plain text to it,
		// as to the Auth Proxy.
		"PGSSLMODE=disable",
		"PGCONNECT_TIMEOUT=" + fmt.Sprint(int(dataTimeout.Seconds())),
	}
	cmd.Env = append(cmd.Env, env...)
	out, runErr := cmd.CombinedOutput()

	_ = ln.Close()
	mu.Lock()
	for conn := range open {
		_ = conn.Close()
	}
	mu.Unlock()
	wg.Wait()
	if runErr != nil {
		// A plain error: gomega prints it without the process's innards.
		if len(dialErrs) > 0 {
			return strings.TrimSpace(string(out)), errors.Errorf("psql: %v (forwarder: %v)", runErr, errors.Join(dialErrs...))
		}
		return strings.TrimSpace(string(out)), errors.Errorf("psql: %v", runErr)
	}
	return strings.TrimSpace(string(out)), nil
}

// pipe copies bytes both ways until both directions are done, passing on
// half-closes.
func pipe(a net.Conn, b *tls.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(b, a)
		_ = b.CloseWrite()
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(a, b)
		if cw, ok := a.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// serverDirs lists the temporary directories of the instance's PostgreSQL
// servers: package postgres names them <TMPDIR>/cloudsql-<name>-NNN where
// <name> is the first 20 of [a-z0-9-] of "project-instance". Each test's
// project is unique and its instance names differ in their first letters, so
// the pattern is the instance's alone.
func (e *dataEnv) serverDirs(instance string) []string {
	name := e.project + "-" + instance
	if len(name) > 20 {
		name = name[:20]
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "cloudsql-"+name+"-*"))
	return dirs
}

// serverDir is the only temporary directory of the instance's server.
func (e *dataEnv) serverDir(g Gomega, instance string) string {
	dirs := e.serverDirs(instance)
	g.ExpectWithOffset(1, dirs).To(HaveLen(1), "the temporary directory of %s", instance)
	return dirs[0]
}

// processesIn lists the processes whose command line names something under
// dir: the postmaster runs `postgres -D <dir>/data -c
// unix_socket_directories=<dir>/run ...`.
func processesIn(dir string) []string {
	var found []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		cmdline := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		if strings.Contains(cmdline, dir+string(filepath.Separator)) {
			found = append(found, filepath.Base(filepath.Dir(p))+": "+cmdline)
		}
	}
	return found
}

// refused expects nothing to listen on addr (host:port) any more.
func refused(g Gomega, addr string) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		_ = c.Close()
	}
	g.ExpectWithOffset(1, err).To(HaveOccurred(), "something still listens on %s", addr)
	g.ExpectWithOffset(1, errors.Is(err, syscall.ECONNREFUSED)).To(BeTrue(), "dialing %s: %v", addr, err)
}

func withPrivateNetwork(project string, public bool) func(*sqladmin.DatabaseInstance) {
	return func(db *sqladmin.DatabaseInstance) {
		db.Settings.IpConfiguration = &sqladmin.IpConfiguration{
			Ipv4Enabled:     public,
			PrivateNetwork:  fmt.Sprintf(privateNetworkOf, project),
			ForceSendFields: []string{"Ipv4Enabled"},
		}
	}
}

// TestDataPlane shares one emulator between its subtests, with an instance
// per concern so that each subtest leaves the others' instances as it found
// them: orders (public IP) for logins, users and states; both (public and
// private IP) for addresses and as the "other" instance of the certificate
// test; doomed for instances.delete.
func TestDataPlane(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g,
		instance("orders"),
		instance("both", withPrivateNetwork(e.project, true)),
		instance("doomed"),
	)

	t.Run("EveryAddressIsALoopbackAddressOfItsOwn", func(t *testing.T) {
		g := NewWithT(t)
		seen := map[string]string{}
		for _, name := range []string{"orders", "both", "doomed"} {
			db := e.get(g, name)
			for _, ip := range db.IpAddresses {
				a, err := netip.ParseAddr(ip.IpAddress)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(loopback.Contains(a)).To(BeTrue(), "%s %s address %s", name, ip.Type, a)
				g.Expect(a.String()).NotTo(Equal("127.0.0.1"), "127.0.0.1 is the host's, not an instance's")
				if ip.Type == "OUTGOING" {
					continue
				}
				g.Expect(seen).NotTo(HaveKey(ip.IpAddress), "%s %s shares its address", name, ip.Type)
				seen[ip.IpAddress] = name + " " + ip.Type
			}
		}
		orders := e.get(g, "orders")
		g.Expect(ipTypes(orders)).To(ConsistOf("PRIMARY", "OUTGOING"))
		g.Expect(ipOf(orders.IpAddresses, "OUTGOING")).To(Equal(ipOf(orders.IpAddresses, "PRIMARY")))
		cs, err := e.svc.Connect.Get(e.project, "orders").Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cs.IpAddresses).To(Equal(orders.IpAddresses), "connectSettings and instances.get agree")
	})

	t.Run("PostgresLogsInWithRootPasswordAndNotWithAnother", func(t *testing.T) {
		g := NewWithT(t)
		out, err := e.psql("orders", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("postgres"))

		out, err = e.psql("orders", "PRIMARY", "postgres", "not-"+rootPassword)
		g.Expect(err).To(HaveOccurred(), out)
		g.Expect(out).To(ContainSubstring(`password authentication failed for user "postgres"`))
	})

	t.Run("UsersUpdateOfPostgresHoldsAsSoonAsItsOperationIsDONE", func(t *testing.T) {
		g := NewWithT(t)
		const next = `n3w'pa"ss\word`
		e.updatePassword(g, "orders", "postgres", next)
		// No wait in between: the connection waits for the data plane.
		out, err := e.psql("orders", "PRIMARY", "postgres", next)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("postgres"))
		out, err = e.psql("orders", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).To(HaveOccurred(), out)
		g.Expect(out).To(ContainSubstring("password authentication failed"))

		e.updatePassword(g, "orders", "postgres", rootPassword)
		out, err = e.psql("orders", "PRIMARY", "postgres", next)
		g.Expect(err).To(HaveOccurred(), "the second change holds too: %s", out)
		out, err = e.psql("orders", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("postgres"))
	})

	t.Run("UsersInsertCreatesARoleAndUsersDeleteDropsIt", func(t *testing.T) {
		g := NewWithT(t)
		op, err := e.svc.Users.Insert(e.project, "orders", &sqladmin.User{Name: "app", Password: "app-pw"}).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		e.waitDone(g, op)
		out, err := e.psql("orders", "PRIMARY", "app", "app-pw")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("app"))
		out, err = e.psqlQuery("orders", "PRIMARY", "app", "app-pw",
			"select rolsuper, pg_has_role(current_user, 'cloudsqlsuperuser', 'member') from pg_roles where rolname = current_user")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("f|t"), "a built-in user is a cloudsqlsuperuser, not a superuser")

		op, err = e.svc.Users.Delete(e.project, "orders").Name("app").Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		e.waitDone(g, op)
		out, err = e.psql("orders", "PRIMARY", "app", "app-pw")
		g.Expect(err).To(HaveOccurred(), out)
		g.Expect(out).To(ContainSubstring(`password authentication failed for user "app"`))
		out, err = e.psql("orders", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("postgres"))
	})

	t.Run("AClientCertificateOfAnotherInstanceIsRefused", func(t *testing.T) {
		g := NewWithT(t)
		addr, conf, err := e.target("orders", "PRIMARY")
		g.Expect(err).NotTo(HaveOccurred())
		foreign, err := e.ephemeralCert("both")
		g.Expect(err).NotTo(HaveOccurred())
		// Go's client sends no certificate that the server's list of CAs
		// doesn't name; force it, so that the server is the judge.
		conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return foreign, nil }
		err = handshakeAndRead(addr, conf)
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("certificate"))

		_, conf, err = e.target("orders", "PRIMARY")
		g.Expect(err).NotTo(HaveOccurred())
		err = handshakeAndRead(addr, conf)
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("certificate"), "no certificate at all is refused too")

		// The instance's own certificate gets through to PostgreSQL.
		out, err := e.psql("orders", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), out)
	})

	t.Run("PublicAndPrivateIPsAreTwoAddressesThatBothConnect", func(t *testing.T) {
		g := NewWithT(t)
		db := e.get(g, "both")
		g.Expect(ipTypes(db)).To(ConsistOf("PRIMARY", "OUTGOING", "PRIVATE"))
		primary, private := ipOf(db.IpAddresses, "PRIMARY"), ipOf(db.IpAddresses, "PRIVATE")
		g.Expect(primary).NotTo(Equal(private))
		for _, typ := range []string{"PRIMARY", "PRIVATE"} {
			out, err := e.psql("both", typ, "postgres", rootPassword)
			g.Expect(err).NotTo(HaveOccurred(), "%s: %s", typ, out)
			g.Expect(out).To(Equal("postgres"), typ)
		}

		// Without its public IP, the instance keeps its private address and
		// stops listening on the public one.
		op, err := e.svc.Instances.Patch(e.project, "both", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
			IpConfiguration: &sqladmin.IpConfiguration{Ipv4Enabled: false, ForceSendFields: []string{"Ipv4Enabled"}},
		}}).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		e.waitDone(g, op)
		db = e.get(g, "both")
		g.Expect(ipTypes(db)).To(ConsistOf("PRIVATE"))
		g.Expect(ipOf(db.IpAddresses, "PRIVATE")).To(Equal(private))
		refused(g, net.JoinHostPort(primary, fmt.Sprint(emulator.ServerProxyPort)))
		out, err := e.psql("both", "PRIVATE", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("postgres"))
	})

	t.Run("AnInstanceThatIsNotRUNNABLETakesNoConnection", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { _ = e.emu.SetInstanceState(e.project, "orders", emulator.StateRunnable) })
		addr := ipOf(e.get(g, "orders").IpAddresses, "PRIMARY")
		g.Expect(e.emu.SetInstanceState(e.project, "orders", emulator.StateSuspended)).To(Succeed())

		// Closed before the handshake: the server doesn't wait for a
		// ClientHello (it would for ten seconds).
		raw, err := net.DialTimeout("tcp", net.JoinHostPort(addr, fmt.Sprint(emulator.ServerProxyPort)), 5*time.Second)
		g.Expect(err).NotTo(HaveOccurred())
		_ = raw.SetDeadline(time.Now().Add(5 * time.Second))
		n, err := raw.Read(make([]byte, 1))
		_ = raw.Close()
		g.Expect(n).To(BeZero())
		g.Expect(err).To(Or(MatchError(io.EOF), MatchError(syscall.ECONNRESET)), "the connection is closed at once")

		conn, err := e.dial("orders", "PRIMARY")
		if err == nil {
			_ = conn.Close()
		}
		g.Expect(err).To(HaveOccurred(), "the TLS handshake fails")
		g.Expect(err.Error()).NotTo(ContainSubstring("certificate"))
		out, err := e.psql("orders", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).To(HaveOccurred(), out)

		g.Expect(e.emu.SetInstanceState(e.project, "orders", emulator.StateRunnable)).To(Succeed())
		g.Expect(ipOf(e.get(g, "orders").IpAddresses, "PRIMARY")).To(Equal(addr), "the address is kept")
		out, err = e.psql("orders", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("postgres"))
	})

	t.Run("InstancesDeleteStopsTheListenerAndTheServerAndRemovesItsFiles", func(t *testing.T) {
		g := NewWithT(t)
		addr := net.JoinHostPort(ipOf(e.get(g, "doomed").IpAddresses, "PRIMARY"), fmt.Sprint(emulator.ServerProxyPort))
		out, err := e.psql("doomed", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), out)
		dir := e.serverDir(g, "doomed")
		g.Expect(processesIn(dir)).NotTo(BeEmpty(), "the postmaster runs in %s", dir)

		live, err := e.dial("doomed", "PRIMARY")
		g.Expect(err).NotTo(HaveOccurred())
		defer live.Close()

		op, err := e.svc.Instances.Delete(e.project, "doomed").Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		e.waitDone(g, op)
		_, err = e.svc.Instances.Get(e.project, "doomed").Context(e.ctx).Do()
		expectAPIError(g, err, http.StatusNotFound, "instanceDoesNotExist")

		refused(g, addr)
		_ = live.SetDeadline(time.Now().Add(dataTimeout))
		_, err = live.Read(make([]byte, 1))
		// Closed: an orderly EOF, or a reset when the close found unread data.
		g.Expect(err).To(Or(MatchError(io.EOF), MatchError(syscall.ECONNRESET)), "a connection open at the time is closed")
		g.Eventually(func() []string { return processesIn(dir) }, dataTimeout, 100*time.Millisecond).Should(BeEmpty())
		g.Eventually(func() []string { return e.serverDirs("doomed") }, dataTimeout, 100*time.Millisecond).Should(BeEmpty())
		g.Expect(dir).NotTo(BeAnExistingFile())

		out, err = e.psql("orders", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), "the other instances are untouched: %s", out)
	})
}

// handshakeAndRead dials addr and reads once: in TLS 1.3 the server's verdict
// on the client's certificate arrives after the client's handshake is done.
func handshakeAndRead(addr string, conf *tls.Config) error {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, conf)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	return err
}

// TestDataPlaneSettlesOnConnectionAndCloses runs user operations that take
// time, then closes the emulator with its instance live.
func TestDataPlaneSettlesOnConnectionAndCloses(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	e := newDataEnv(t, emulator.WithUserOperationDelay(delay))
	g := NewWithT(t)
	e.insert(g, instance("closing", withPrivateNetwork(e.project, true)))

	t.Run("AConnectionSettlesTheOperationsItMustSee", func(t *testing.T) {
		g := NewWithT(t)
		// A connector fetches its certificate first and then dials at will.
		c, err := e.connector("closing", "PRIMARY")
		g.Expect(err).NotTo(HaveOccurred())
		const next = "after-the-delay"
		op, err := e.svc.Users.Update(e.project, "closing", &sqladmin.User{Name: "postgres", Password: next}).
			Name("postgres").Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(op.Status).NotTo(Equal(emulator.OperationDone))
		time.Sleep(delay + 50*time.Millisecond)

		// No API request settles the operation: the connection does.
		before := totalRequests(e.emu)
		out, err := c.psql("postgres", next, "select current_user")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("postgres"))
		out, err = c.psql("postgres", rootPassword, "select current_user")
		g.Expect(err).To(HaveOccurred(), out)
		g.Expect(out).To(ContainSubstring("password authentication failed"))
		g.Expect(totalRequests(e.emu)).To(Equal(before), "psql made no API request")

		e.updatePassword(g, "closing", "postgres", rootPassword)
		out, err = e.psql("closing", "PRIMARY", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), out)
	})

	t.Run("CloseStopsTheServersAndRemovesTheirFiles", func(t *testing.T) {
		g := NewWithT(t)
		out, err := e.psql("closing", "PRIVATE", "postgres", rootPassword)
		g.Expect(err).NotTo(HaveOccurred(), out)
		dir := e.serverDir(g, "closing")
		g.Expect(processesIn(dir)).NotTo(BeEmpty(), "the postmaster runs in %s", dir)
		db := e.get(g, "closing")

		g.Expect(e.emu.Close()).To(Succeed())
		// Close waits: nothing is left when it returns.
		g.Expect(dir).NotTo(BeAnExistingFile())
		g.Expect(e.serverDirs("closing")).To(BeEmpty())
		g.Expect(processesIn(dir)).To(BeEmpty())
		for _, typ := range []string{"PRIMARY", "PRIVATE"} {
			refused(g, net.JoinHostPort(ipOf(db.IpAddresses, typ), fmt.Sprint(emulator.ServerProxyPort)))
		}
		g.Expect(e.emu.Close()).To(Succeed(), "Close is idempotent")
		g.Expect(e.get(g, "closing").Name).To(Equal("closing"), "the API keeps answering")
	})
}

// totalRequests is how many API requests the emulator has answered.
func totalRequests(emu *emulator.Server) int {
	n := 0
	for _, c := range emu.Counts() {
		n += c
	}
	return n
}

// TestDataPlaneFollowsTheEmulatorClock connects to an emulator on a fake
// clock, the way most tests of this package run it. generateEphemeralCert
// stamps the client certificate with the emulator's time; the server-side
// proxy must judge it at the same time, not at the wall clock's. It fails
// while the proxy's tls.Config has no Time (see newBackend in dataplane.go).
func TestDataPlaneFollowsTheEmulatorClock(t *testing.T) {
	t.Parallel()
	clk := emulator.NewFakeClock(epoch)
	e := newDataEnv(t, emulator.WithClock(clk))
	g := NewWithT(t)
	e.insert(g, instance("faked"))
	c, err := e.connector("faked", "PRIMARY")
	g.Expect(err).NotTo(HaveOccurred())
	out, err := c.psql("postgres", rootPassword, "select current_user")
	g.Expect(err).NotTo(HaveOccurred(), "a certificate issued at the emulator's time is good at the emulator's time: %s", out)
	g.Expect(out).To(Equal("postgres"))

	// An hour later on the emulator's clock the certificate has expired: a
	// connector must fetch another.
	clk.Advance(2 * time.Hour)
	out, err = c.psql("postgres", rootPassword, "select current_user")
	g.Expect(err).To(HaveOccurred(), out)
	err = handshakeAndRead(c.addr, c.conf)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("certificate"))
	out, err = e.psql("faked", "PRIMARY", "postgres", rootPassword)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("postgres"))
}

// TestDataPlaneSurvivesAFailedRoleChange makes a user own a database after
// users.delete accepted it and before its operation is DONE: DROP ROLE then
// fails on the instance's PostgreSQL. Whatever the API makes of that, the
// instance must keep taking connections.
func TestDataPlaneSurvivesAFailedRoleChange(t *testing.T) {
	t.Parallel()
	const delay = 3 * time.Second
	e := newDataEnv(t, emulator.WithUserOperationDelay(delay))
	g := NewWithT(t)
	e.insert(g, instance("owner"))
	op, err := e.svc.Users.Insert(e.project, "owner", &sqladmin.User{Name: "app", Password: "app-pw"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	c, err := e.connector("owner", "PRIMARY")
	g.Expect(err).NotTo(HaveOccurred())

	op, err = e.svc.Users.Delete(e.project, "owner").Name("app").Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred(), "nothing depends on app yet")
	out, err := c.psql("app", "app-pw", "create database appdb")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(e.operation(g, op.Name).Status).NotTo(Equal(emulator.OperationDone), "the database came before the drop")
	e.waitDone(g, op)
	out, err = e.psql("owner", "PRIMARY", "postgres", rootPassword)
	g.Expect(err).NotTo(HaveOccurred(), "postgres still logs in: %s", out)
	g.Expect(out).To(Equal("postgres"))
}

// TestDataPlaneListensNoMoreAfterClose changes an instance after Close: "no
// instance gets a server again", so no address may take connections.
func TestDataPlaneListensNoMoreAfterClose(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("after"))
	out, err := e.psql("after", "PRIMARY", "postgres", rootPassword)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(e.emu.Close()).To(Succeed())

	g.Expect(e.emu.SetInstanceState(e.project, "after", emulator.StateRunnable)).To(Succeed())
	for _, ip := range e.get(g, "after").IpAddresses {
		refused(g, net.JoinHostPort(ip.IpAddress, fmt.Sprint(emulator.ServerProxyPort)))
	}
}
