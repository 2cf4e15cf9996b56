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

package emulator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

const (
	errClosing       = "the emulator is closing"
	errServerCert    = "cannot issue the server certificate"
	errNoAddress     = "this system has no address %s (Linux answers on all of 127.0.0.0/8; elsewhere add aliases, and for WithDataPlaneAddresses a local route)"
	errNoFreeAddress = "no free data-plane address for port %d after %d tries"
	errBeingDeleted  = "the instance is being deleted"
	errNotReady      = "PostgreSQL is not ready after %s"
	errGone          = "the instance no longer exists"
	errNotRunnable   = "the instance is %s, not RUNNABLE"
)

// ServerProxyPort is the port Cloud SQL's server-side proxy listens on, which
// Cloud SQL connectors (the Auth Proxy among them) dial on the instance's IP.
const ServerProxyPort = 3307

const (
	// handshakeTimeout bounds a client's TLS handshake.
	handshakeTimeout = 10 * time.Second
	// readyTimeout bounds how long a connection waits for its instance's
	// PostgreSQL to start or to apply a password change the API already
	// reported done.
	readyTimeout = 90 * time.Second
	// maxAddressTries bounds the search for a free loopback address.
	maxAddressTries = 4096
)

// loopback is where instance addresses come from unless WithDataPlaneAddresses
// says otherwise: Linux answers on all of 127.0.0.0/8 with no configuration.
var loopback = netip.MustParsePrefix("127.0.0.0/8")

// WithDataPlaneAddresses makes the data plane (WithPostgres) give instances
// addresses of prefix instead of 127.0.0.0/8, from its third address on (the
// second is usually a gateway's), for clients that cannot reach this host's
// loopback, such as pods in network namespaces of their own. The host must
// accept connections to the whole prefix, for example through a local route
// (ip route add local <prefix> dev lo). The prefix must be IPv4 and hold at
// least four addresses (/30); anything else is a programming error, and panics.
func WithDataPlaneAddresses(prefix netip.Prefix) Option {
	if !prefix.Addr().Is4() || prefix.Bits() > 30 {
		panic(fmt.Sprintf("emulator.WithDataPlaneAddresses: %s is not an IPv4 prefix of /30 or shorter", prefix))
	}
	return func(s *Server) { s.dataAddrs = prefix.Masked() }
}

// dataAddress is host number h of prefix, and how many host numbers from 2 on it
// has (neither the network's nor the broadcast address).
func dataAddress(prefix netip.Prefix, h uint32) (netip.Addr, uint32) {
	if !prefix.IsValid() {
		prefix = loopback
	}
	hosts := uint32(1)<<(32-prefix.Bits()) - 3
	b := prefix.Addr().As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) + h
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), hosts
}

// WithPostgres backs every RUNNABLE instance with a real PostgreSQL server (see
// package postgres) behind a TLS listener that speaks like Cloud SQL's
// server-side proxy: each IP address the instance reports (PRIMARY for a public
// IP, PRIVATE for a private network) is a loopback address of its own
// (127.0.0.2, 127.0.0.3, ...), where port 3307 requires a client certificate
// from generateEphemeralCert for that instance and then forwards to its
// PostgreSQL. The postgres role's password follows rootPassword and
// users.update; users.insert and users.delete create and drop roles. Servers
// stop and their data go when the instance is deleted or the emulator closed
// (Server.Close). Call cfg.Resolve first to fail early when PostgreSQL is
// missing; a server that cannot start is logged and its connections refused.
func WithPostgres(cfg postgres.Config) Option {
	return func(s *Server) {
		s.data = &dataPlane{srv: s, cfg: cfg, next: 2, backends: map[*backend]bool{}, log: s.dataLog}
	}
}

// dataPlane allocates instance addresses and runs the backends.
type dataPlane struct {
	srv *Server
	cfg postgres.Config
	log func(format string, a ...any)

	mu       sync.Mutex // guards what follows
	next     uint32     // host number of the next address to try (see dataAddress)
	backends map[*backend]bool
	closed   bool
	// clones maps instances made by instances.clone to the backend of their
	// source, until their own backend starts as a copy of it.
	clones map[*instanceState]cloneSource
}

// cloneSource is where a new server's data comes from. For a clone of the
// present: the source's backend b once it has run the tasks up to n, every
// change the API had reported done when the clone was asked for. For a
// restore: the backup base. For a clone at a point in time: base, replayed
// with the WAL in archive up to target (by the wall clock).
type cloneSource struct {
	b       *backend
	n       uint64
	base    *postgres.Backup
	archive string
	target  time.Time
	// from names the source in logs.
	from string
}

// cloneOf records that inst is a clone of src, whose server its own will
// copy. Callers hold s.mu.
func (dp *dataPlane) cloneOf(inst, src *instanceState) {
	if src.data == nil {
		return
	}
	src.data.mu.Lock()
	n := src.data.queued
	src.data.mu.Unlock()
	dp.setSource(inst, cloneSource{b: src.data, n: n, from: src.db.Name})
}

// recoverInto records that inst is a clone of src at the wall-clock time
// target, whose server is recovered from base. Callers hold s.mu.
func (dp *dataPlane) recoverInto(inst, src *instanceState, base recoveryBase, target time.Time) {
	dp.setSource(inst, cloneSource{base: base.data, archive: base.archive, target: target,
		from: src.db.Name + " at " + target.UTC().Format(time.RFC3339Nano)})
}

// restoreInto records that inst's server starts from a copy of backup,
// called from in logs. Callers hold s.mu.
func (dp *dataPlane) restoreInto(inst *instanceState, backup *postgres.Backup, from string) {
	dp.setSource(inst, cloneSource{base: backup, from: from})
}

func (dp *dataPlane) setSource(inst *instanceState, c cloneSource) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	if dp.clones == nil {
		dp.clones = map[*instanceState]cloneSource{}
	}
	dp.clones[inst] = c
}

// forgetClone drops what cloneOf recorded, for a clone that failed.
func (dp *dataPlane) forgetClone(inst *instanceState) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	delete(dp.clones, inst)
}

// copyServer starts a server called name with the source's data.
func (c cloneSource) copyServer(ctx context.Context, cfg postgres.Config, name string) (*postgres.Server, error) {
	switch {
	case c.base != nil && c.archive != "":
		return postgres.RecoverTo(ctx, c.base, c.archive, c.target, name)
	case c.base != nil:
		return postgres.Restore(ctx, c.base, name)
	}
	if _, err := c.b.ready(c.n, readyTimeout); err != nil {
		return nil, err
	}
	src := c.b.postgres()
	if src == nil {
		return nil, errors.New(errGone)
	}
	return postgres.Clone(ctx, cfg, name, src)
}

// backend is one instance's data plane: its listeners and its PostgreSQL,
// driven by a queue of tasks that one goroutine runs in order, so that a
// connection can wait for every change the API has already reported done.
type backend struct {
	dp       *dataPlane
	project  string
	instance string
	tlsConf  *tls.Config
	ctx      context.Context
	cancel   context.CancelFunc

	// endpoints by IP type; read and written under the emulator's lock.
	endpoints map[string]*endpoint

	mu      sync.Mutex // guards what follows
	cond    *sync.Cond
	queue   []task
	queued  uint64 // tasks ever enqueued
	done    uint64 // tasks ever finished
	pg      *postgres.Server
	failure error // why PostgreSQL is not there
	stopped bool
	exited  chan struct{}
	conns   map[net.Conn]bool // client connections being forwarded
}

type task struct {
	what string
	run  func(ctx context.Context, b *backend) error
	// fatal marks the task that starts PostgreSQL: when it fails, the
	// instance takes no connection. Others failing is logged, as a failed
	// statement on a live server would be.
	fatal bool
}

type endpoint struct {
	addr string
	ln   net.Listener
}

// up makes sure inst has a backend, with a listener for each IP type in
// kinds, and closes the listeners of types no longer there. It returns the
// address of each type. Callers hold s.mu.
func (s *Server) dataPlaneUp(inst *instanceState, project string, kinds []string) map[string]string {
	if inst.data == nil {
		b, err := s.data.newBackend(project, inst)
		if err != nil {
			s.dataLog("instance %s:%s has no data plane: %v", project, inst.db.Name, err)
			return nil
		}
		inst.data = b
	}
	b := inst.data
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
		if b.endpoints[k] != nil {
			continue
		}
		ep, err := s.data.listen(b)
		if err != nil {
			s.dataLog("instance %s:%s gets no %s address: %v", project, inst.db.Name, k, err)
			continue
		}
		b.endpoints[k] = ep
		s.dataLog("instance %s:%s: %s address %s, server-side proxy on port %d", project, inst.db.Name, k, ep.addr, ServerProxyPort)
	}
	for k, ep := range b.endpoints {
		if !want[k] {
			_ = ep.ln.Close()
			delete(b.endpoints, k)
		}
	}
	addrs := map[string]string{}
	for k, ep := range b.endpoints {
		addrs[k] = ep.addr
	}
	return addrs
}

// dataPlaneDown stops inst's backend, if any. Callers hold s.mu.
func (s *Server) dataPlaneDown(inst *instanceState) {
	if inst.data != nil {
		inst.data.stop()
		inst.data = nil
	}
	// The WAL archive goes with the server, and a base without it is of
	// no use.
	s.dropPITRBase(inst)
}

// dataPlaneTask queues work on inst's PostgreSQL, if it has one. Callers hold s.mu.
func (s *Server) dataPlaneTask(inst *instanceState, t task) {
	if inst.data != nil {
		inst.data.enqueue(t)
	}
}

func (dp *dataPlane) newBackend(project string, inst *instanceState) (*backend, error) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	if dp.closed {
		return nil, errors.New(errClosing)
	}
	name := inst.db.Name
	cert, err := inst.ca.serverCert(project, name, []string{strings.TrimSuffix(dnsName(project, name, inst.db.Region), ".")}, time.Now())
	if err != nil {
		return nil, errors.Wrap(err, errServerCert)
	}
	pool := x509.NewCertPool()
	pool.AddCert(inst.ca.cert)
	ctx, cancel := context.WithCancel(context.Background())
	b := &backend{
		dp: dp, project: project, instance: name, ctx: ctx, cancel: cancel,
		endpoints: map[string]*endpoint{},
		exited:    make(chan struct{}),
		conns:     map[net.Conn]bool{},
		tlsConf: &tls.Config{
			Certificates: []tls.Certificate{cert},
			// Only certificates that generateEphemeralCert issued for this
			// instance are accepted, as on Cloud SQL.
			ClientAuth: tls.RequireAndVerifyClientCert,
			ClientCAs:  pool,
			MinVersion: tls.VersionTLS13,
			// Client certificates carry the emulator's time (a FakeClock, or
			// Advance), so they are judged by it.
			Time: dp.srv.Now,
		},
	}
	b.cond = sync.NewCond(&b.mu)
	// The users and databases as they are now; later changes arrive as tasks.
	type role struct{ userType, password string }
	users := map[string]role{}
	for n, u := range inst.users {
		users[n] = role{u.user.Type, u.password}
	}
	var databases []task
	for n, d := range inst.dbs() {
		if n != postgresDatabase {
			databases = append(databases, createDatabaseTask(d))
		}
	}
	from, cloned := dp.clones[inst]
	delete(dp.clones, inst)
	b.queue = append(b.queue, task{what: "start PostgreSQL", fatal: true, run: func(ctx context.Context, b *backend) error {
		start := time.Now()
		if cloned {
			pg, err := from.copyServer(ctx, dp.cfg, project+"-"+name)
			if err == nil {
				b.mu.Lock()
				b.pg = pg
				b.mu.Unlock()
				dp.log("instance %s:%s: PostgreSQL ready in %s as a copy of %s (socket %s)", project, name,
					time.Since(start).Round(time.Millisecond), from.from, pg.SocketPath())
				return nil
			}
			// The source went away or cannot be copied: the clone gets the
			// users and databases the API reports, without their data.
			dp.log("instance %s:%s: cannot copy the server of %s, starting with its users and databases but none of its data: %v",
				project, name, from.from, err)
		}
		pg, err := postgres.Start(ctx, dp.cfg, project+"-"+name, users[postgresUser].password)
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.pg = pg
		b.mu.Unlock()
		for n, r := range users {
			if n == postgresUser {
				continue
			}
			if err := createRole(ctx, pg, n, r.userType, r.password); err != nil {
				return err
			}
		}
		for _, t := range databases {
			if err := t.run(ctx, b); err != nil {
				return err
			}
		}
		dp.log("instance %s:%s: PostgreSQL ready in %s (socket %s)", project, name, time.Since(start).Round(time.Millisecond), pg.SocketPath())
		return nil
	}})
	b.queued = 1
	dp.backends[b] = true
	go b.work()
	return b, nil
}

// listen binds the server-side proxy port on the next free address.
func (dp *dataPlane) listen(b *backend) (*endpoint, error) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	var lastErr error
	for range maxAddressTries {
		ip, hosts := dataAddress(dp.srv.dataAddrs, dp.next)
		dp.next = 2 + (dp.next-1)%hosts
		addr := ip.String()
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, fmt.Sprint(ServerProxyPort)))
		if err == nil {
			ep := &endpoint{addr: addr, ln: ln}
			go b.serve(ln)
			return ep, nil
		}
		lastErr = err
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			return nil, errors.Wrapf(err, errNoAddress, addr)
		}
	}
	return nil, errors.Wrapf(lastErr, errNoFreeAddress, ServerProxyPort, maxAddressTries)
}

// closeDataPlane stops every instance's backend and waits for their servers to
// go, those of instances deleted earlier included.
func (s *Server) closeDataPlane() {
	s.mu.Lock()
	s.data.mu.Lock()
	s.data.closed = true
	s.data.mu.Unlock()
	for _, p := range s.projects {
		for _, inst := range p.instances {
			s.dataPlaneDown(inst)
		}
	}
	s.mu.Unlock()

	s.data.mu.Lock()
	all := make([]*backend, 0, len(s.data.backends))
	for b := range s.data.backends {
		all = append(all, b)
	}
	s.data.mu.Unlock()
	for _, b := range all {
		<-b.exited
	}
}

func (b *backend) enqueue(t task) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.queue = append(b.queue, t)
	b.queued++
	b.cond.Broadcast()
}

// work runs the queued tasks in order until the backend stops, then stops
// PostgreSQL and removes its files.
func (b *backend) work() {
	defer func() {
		b.mu.Lock()
		pg := b.pg
		b.pg = nil
		b.mu.Unlock()
		if pg != nil {
			if err := pg.Stop(); err != nil {
				b.dp.log("instance %s:%s: cannot remove PostgreSQL's files: %v", b.project, b.instance, err)
			}
		}
		b.dp.mu.Lock()
		delete(b.dp.backends, b)
		b.dp.mu.Unlock()
		close(b.exited)
	}()
	for {
		b.mu.Lock()
		for len(b.queue) == 0 && !b.stopped {
			b.cond.Wait()
		}
		if b.stopped {
			b.done = b.queued
			b.cond.Broadcast()
			b.mu.Unlock()
			return
		}
		t := b.queue[0]
		b.queue = b.queue[1:]
		failed := b.failure
		b.mu.Unlock()

		var err error
		if failed == nil {
			err = t.run(b.ctx, b)
		}
		b.mu.Lock()
		if err != nil && !b.stopped {
			err = errors.Wrap(err, t.what)
			b.dp.log("instance %s:%s: %v", b.project, b.instance, err)
			if t.fatal {
				b.failure = err
			}
		}
		b.done++
		b.cond.Broadcast()
		b.mu.Unlock()
	}
}

// postgres is the instance's server; tasks after the first run only when it
// started.
func (b *backend) postgres() *postgres.Server {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pg
}

// stop closes the listeners and the connections being forwarded and ends the
// worker, which stops PostgreSQL. Callers hold the emulator's lock.
func (b *backend) stop() {
	for k, ep := range b.endpoints {
		_ = ep.ln.Close()
		delete(b.endpoints, k)
	}
	b.mu.Lock()
	b.stopped = true
	for c := range b.conns {
		_ = c.Close()
	}
	b.cond.Broadcast()
	b.mu.Unlock()
	b.cancel()
}

// track registers a client connection so that stop closes it; false means the
// backend is stopping and the connection must not be served.
func (b *backend) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return false
	}
	b.conns[c] = true
	return true
}

func (b *backend) untrack(c net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.conns, c)
}

// ready waits until the tasks up to n have run and returns the socket of the
// PostgreSQL to forward to.
func (b *backend) ready(n uint64, timeout time.Duration) (string, error) {
	timer := time.AfterFunc(timeout, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(timeout)
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.done < n && !b.stopped && time.Now().Before(deadline) {
		b.cond.Wait()
	}
	switch {
	case b.stopped:
		return "", errors.New(errBeingDeleted)
	case b.failure != nil:
		return "", b.failure
	case b.done < n || b.pg == nil:
		return "", errors.Errorf(errNotReady, timeout)
	}
	return b.pg.SocketPath(), nil
}

// serve accepts connections on one of the backend's addresses.
func (b *backend) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go b.handle(c)
	}
}

// handle is Cloud SQL's server-side proxy for one connection: a TLS 1.3
// handshake that requires this instance's client certificate, then the
// client's startup message, then bytes to and from PostgreSQL. A login as an
// IAM user is authenticated here (see serveIAM); any other goes to
// PostgreSQL as the client sent it.
func (b *backend) handle(raw net.Conn) {
	defer raw.Close()
	if !b.track(raw) {
		return
	}
	defer b.untrack(raw)
	// An instance that is not RUNNABLE (stopped, in maintenance, being
	// deleted) takes no connection: it is closed before the handshake, so a
	// connector's dial fails as it does against Cloud SQL.
	n, err := b.dp.srv.connectable(b)
	if err != nil {
		b.dp.log("instance %s:%s: closed a connection from %s: %v", b.project, b.instance, raw.RemoteAddr(), err)
		return
	}
	conn := tls.Server(raw, b.tlsConf)
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := conn.Handshake(); err != nil {
		b.dp.log("instance %s:%s: refused a connection from %s: %v", b.project, b.instance, raw.RemoteAddr(), err)
		return
	}
	_ = conn.SetDeadline(time.Now().Add(startupTimeout))
	first, err := readStartup(conn)
	if errors.Is(err, io.EOF) {
		// Closed at once after the handshake: a connector's connection
		// test (the Auth Proxy's --run-connection-test), not worth a line.
		return
	}
	if err != nil {
		b.dp.log("instance %s:%s: closed a connection from %s before its startup message: %v", b.project, b.instance, raw.RemoteAddr(), err)
		return
	}
	var login iamLogin
	if user := first.user(); user != "" {
		// The users as they are now, and the tasks that made their roles.
		if login, n, err = b.dp.srv.loginOf(b, user); err != nil {
			b.dp.log("instance %s:%s: closed a connection from %s: %v", b.project, b.instance, raw.RemoteAddr(), err)
			return
		}
	}
	sock, err := b.ready(n, readyTimeout)
	if err != nil {
		b.dp.log("instance %s:%s: closed a connection from %s: %v", b.project, b.instance, raw.RemoteAddr(), err)
		return
	}
	if login.userType != "" {
		b.serveIAM(conn, sock, first, login)
		return
	}
	_ = conn.SetDeadline(time.Time{})
	pg, err := net.Dial("unix", sock)
	if err != nil {
		b.dp.log("instance %s:%s: cannot reach PostgreSQL: %v", b.project, b.instance, err)
		return
	}
	defer pg.Close()
	if _, err := pg.Write(first.raw); err != nil {
		b.dp.log("instance %s:%s: cannot reach PostgreSQL: %v", b.project, b.instance, err)
		return
	}
	pipe(conn, pg)
}

// pipe copies bytes between the client and PostgreSQL until both directions
// are done, passing on half-closes.
func pipe(conn *tls.Conn, pg net.Conn) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(pg, conn); closeWrite(pg); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, pg); _ = conn.CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// connectable settles the instance's operations and checks that it is
// RUNNABLE. It returns how many tasks its PostgreSQL must have run before the
// connection may reach it: every change the API has reported done, so that a
// client sees what the API says (a new password works as soon as its operation
// is DONE).
func (s *Server) connectable(b *backend) (uint64, error) {
	s.mu.Lock()
	p := s.project(b.project)
	s.settle(p, s.now())
	inst, ok := p.instances[b.instance]
	if !ok || inst.data != b {
		s.mu.Unlock()
		return 0, errors.New(errGone)
	}
	if st := inst.db.State; st != StateRunnable {
		s.mu.Unlock()
		return 0, errors.Errorf(errNotRunnable, st)
	}
	b.mu.Lock()
	n := b.queued
	b.mu.Unlock()
	s.mu.Unlock()
	return n, nil
}

// loginOf says whether user is an IAM user of b's instance, with what its
// role logs in with, and how many tasks its PostgreSQL must have run before
// the login (as connectable, now that the client said who it is).
func (s *Server) loginOf(b *backend, user string) (iamLogin, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.project(b.project)
	s.settle(p, s.now())
	inst, ok := p.instances[b.instance]
	if !ok || inst.data != b {
		return iamLogin{}, 0, errors.New(errGone)
	}
	var login iamLogin
	if u, ok := inst.users[user]; ok && iamGroupRole(u.user.Type) != "" {
		login = iamLogin{userType: u.user.Type, password: u.password, off: !iamAuthenticationOn(inst.db.Settings)}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return login, b.queued, nil
}

// pgCheck is a look at an instance's PostgreSQL that the API takes before it
// answers, as Cloud SQL's answers depend on its server (a database with
// sessions, a role that owns objects). It holds what the check needs from
// under the emulator's lock: the backend, nil without a data plane, and how
// many of its tasks must have run first (every change the API has reported
// done).
type pgCheck struct {
	b *backend
	n uint64
}

// dataPlaneCheck prepares a pgCheck of inst. Callers hold s.mu.
func dataPlaneCheck(inst *instanceState) pgCheck {
	if inst.data == nil {
		return pgCheck{}
	}
	b := inst.data
	b.mu.Lock()
	defer b.mu.Unlock()
	return pgCheck{b: b, n: b.queued}
}

// run runs f on the instance's PostgreSQL once it has applied what the API
// reported done. It reports false when there is no data plane or PostgreSQL
// cannot answer (logged): the caller then answers as without a data plane.
// Callers must not hold s.mu: this waits for the backend's worker, and other
// requests must go on meanwhile.
func (c pgCheck) run(what string, f func(ctx context.Context, pg *postgres.Server) error) bool {
	if c.b == nil {
		return false
	}
	err := func() error {
		if _, err := c.b.ready(c.n, readyTimeout); err != nil {
			return err
		}
		pg := c.b.postgres()
		if pg == nil {
			return errors.New(errGone)
		}
		return f(c.b.ctx, pg)
	}()
	if err != nil {
		c.b.dp.log("instance %s:%s: cannot %s, answering as without a data plane: %v", c.b.project, c.b.instance, what, err)
		return false
	}
	return true
}
