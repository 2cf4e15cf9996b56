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

package pgsql_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/cloudsqlconn"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	. "github.com/onsi/gomega"
	"golang.org/x/oauth2"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/pgsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

// These tests run the package's SQL on real PostgreSQL servers: the
// emulator's data plane (WithPostgres) behind its server-side proxy on port
// 3307 of a loopback address, reached through the Cloud SQL connector with
// the provider's own Admin API client (credentials from a key whose token_uri
// is the emulator's, requests through the request budget). Users are made by
// users.insert, members of cloudsqlsuperuser as on Cloud SQL, and what the
// package did is proven by logging in as them.

const (
	region       = "europe-west1"
	rootPassword = "r00t-pa'ss\"word"
	// dataTimeout bounds the waits for operations and servers; a server
	// starts in about a second, more under the race detector.
	dataTimeout = 90 * time.Second
	// codeInsufficientPrivilege is PostgreSQL's "permission denied".
	codeInsufficientPrivilege = "42501"
)

// env is an emulator with a data plane, the provider's clients of it and a
// record of the Admin API requests that went through the request budget.
type env struct {
	ctx     context.Context
	project string
	url     string
	emu     *emulator.Server
	svc     *sqladmin.Service
	pc      *v1alpha1.ProviderConfig
	creds   auth.Credentials
	dialers *pgsql.DialerCache

	mu       sync.Mutex
	budgeted []string // paths of the requests the budget admitted
}

func newEnv(t *testing.T, o ...pgsql.DialerCacheOption) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL's server: make test runs it, make unit does not")
	}
	g := NewWithT(t)
	cfg, err := postgres.Config{}.Resolve()
	g.Expect(err).NotTo(HaveOccurred(), "these tests need PostgreSQL's server (initdb, postgres, psql): run `make postgres`")
	emu := emulator.New(emulator.WithPostgres(cfg), emulator.WithDelays(0, 0, 0), emulator.WithRequestBudget(0))
	hs := httptest.NewServer(emu)
	t.Cleanup(func() {
		hs.Close()
		_ = emu.Close()
	})
	var suffix [3]byte
	_, _ = rand.Read(suffix[:])
	e := &env{ctx: context.Background(), project: fmt.Sprintf("sq%x", suffix), url: hs.URL, emu: emu}

	key, err := emulator.ServiceAccountKey(e.project, hs.URL+emulator.TokenPath)
	g.Expect(err).NotTo(HaveOccurred())
	e.creds = auth.Credentials{Source: xpv2.CredentialsSourceSecret, JSON: key, Where: "test key"}
	e.pc = &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default", UID: types.UID("pc-" + e.project)},
		Spec:       v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{Endpoint: hs.URL}},
	}
	transport := budget.NewTransport(nil, budget.PerMinute(10000), budget.WithObserver(func(r *http.Request, _ int, _ error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		// The key's token, from the emulator's token endpoint: the
		// ProviderConfig's credentials.
		authorized := strings.HasPrefix(r.Header.Get("Authorization"), "Bearer emulator-")
		e.budgeted = append(e.budgeted, fmt.Sprintf("%s %s authorized=%t", r.Method, r.URL.Path, authorized))
	}))
	e.svc, err = auth.NewService(e.creds, hs.URL, transport, auth.WithKeyTokenURI(true))
	g.Expect(err).NotTo(HaveOccurred())
	e.dialers = pgsql.NewDialerCache(transport, append([]pgsql.DialerCacheOption{pgsql.WithAuth(auth.WithKeyTokenURI(true))}, o...)...)
	t.Cleanup(func() { _ = e.dialers.Close() })
	return e
}

// requests are the budgeted requests whose path contains part.
func (e *env) requests(part string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var found []string
	for _, r := range e.budgeted {
		if strings.Contains(r, part) {
			found = append(found, r)
		}
	}
	return found
}

func (e *env) waitDone(g Gomega, op *sqladmin.Operation, err error) {
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	g.EventuallyWithOffset(1, func(g Gomega) {
		got, err := e.svc.Operations.Get(e.project, op.Name).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Status).To(Equal(emulator.OperationDone))
		g.Expect(got.Error).To(BeNil())
	}).WithTimeout(dataTimeout).Should(Succeed())
}

// instance creates an instance with the real client and returns its
// connection name once it is RUNNABLE.
func (e *env) instance(g Gomega, name string) string {
	op, err := e.svc.Instances.Insert(e.project, &sqladmin.DatabaseInstance{
		Name: name, DatabaseVersion: "POSTGRES_15", Region: region, RootPassword: rootPassword,
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	}).Context(e.ctx).Do()
	e.waitDone(g, op, err)
	db, err := e.svc.Instances.Get(e.project, name).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(db.State).To(Equal(emulator.StateRunnable))
	return db.ConnectionName
}

func (e *env) user(g Gomega, instance, name, password string) {
	op, err := e.svc.Users.Insert(e.project, instance, &sqladmin.User{Name: name, Password: password}).Context(e.ctx).Do()
	e.waitDone(g, op, err)
}

func (e *env) database(g Gomega, instance, name string) {
	op, err := e.svc.Databases.Insert(e.project, instance, &sqladmin.Database{Name: name}).Context(e.ctx).Do()
	e.waitDone(g, op, err)
}

// client is the package's client of an instance as postgres.
func (e *env) client(g Gomega, icn string, o ...pgsql.Option) *pgsql.Client {
	d, err := e.dialers.Get(e.pc, e.creds)
	g.Expect(err).NotTo(HaveOccurred())
	return pgsql.New(d, icn, rootPassword, o...)
}

// login connects as user to db through a connector of the test's own, so that
// what it proves does not rest on the package's connections.
func (e *env) login(ctx context.Context, icn, user, password, db string) (*pgx.Conn, error) {
	d, err := cloudsqlconn.NewDialer(ctx,
		cloudsqlconn.WithAdminAPIEndpoint(e.url+"/"),
		cloudsqlconn.WithTokenSource(staticToken{}),
		cloudsqlconn.WithLazyRefresh())
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig("host=instance sslmode=disable connect_timeout=30")
	if err != nil {
		_ = d.Close()
		return nil, err
	}
	cfg.User, cfg.Password, cfg.Database = user, password, db
	cfg.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	cfg.DialFunc = func(ctx context.Context, _, _ string) (net.Conn, error) { return d.Dial(ctx, icn) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		_ = d.Close()
		return nil, err
	}
	go func() {
		<-conn.PgConn().CleanupDone()
		_ = d.Close()
	}()
	return conn, nil
}

// sqlState is the SQLSTATE of a PostgreSQL error, or "".
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// can reports whether user may log in to db.
func (e *env) can(g Gomega, icn, user, password, db string) error {
	conn, err := e.login(e.ctx, icn, user, password, db)
	if err == nil {
		g.Expect(conn.Close(e.ctx)).To(Succeed())
	}
	return err
}

func TestLeastPrivilegeHoldsForALoginAsTheUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := NewWithT(t)
	icn := e.instance(g, "shared")
	const (
		appPW   = `app-pa:ss'"\`
		otherPW = "other-pw"
	)
	// Names that need quoting: a role with a quote and a space, a database
	// with a hyphen and capitals.
	app, appDB := `app "one"`, "App-Db"
	other, otherDB := `o"; DROP ROLE postgres; --`, "other_db"
	e.user(g, "shared", app, appPW)
	e.user(g, "shared", other, otherPW)
	e.database(g, "shared", appDB)
	e.database(g, "shared", otherDB)
	c := e.client(g, icn)

	// What Cloud SQL gives a user it creates.
	got, err := c.Inspect(e.ctx, app)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(pgsql.RoleState{Exists: true, SuperuserMember: true, CreateRole: true, CreateDB: true}))
	g.Expect(got.LeastPrivileged()).To(BeFalse())
	dbState, err := c.InspectDatabase(e.ctx, otherDB)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dbState).To(Equal(pgsql.DatabaseState{Exists: true, Owner: pgsql.SuperuserRole, PublicConnect: true}))
	g.Expect(e.can(g, icn, app, appPW, otherDB)).To(Succeed(), "before: every user connects to every database")

	// Twice: every operation is idempotent.
	for range 2 {
		g.Expect(c.OwnDatabase(e.ctx, appDB, app)).To(Succeed())
		g.Expect(c.OwnDatabase(e.ctx, otherDB, other)).To(Succeed())
		g.Expect(c.LeastPrivilege(e.ctx, app)).To(Succeed())
		g.Expect(c.LeastPrivilege(e.ctx, other)).To(Succeed())
	}

	got, err = c.Inspect(e.ctx, app)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(pgsql.RoleState{Exists: true, Databases: []string{appDB}}))
	g.Expect(got.LeastPrivileged()).To(BeTrue())
	owned, err := c.OwnedDatabases(e.ctx, app)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(owned).To(Equal([]string{appDB}))
	dbState, err = c.InspectDatabase(e.ctx, appDB)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dbState).To(Equal(pgsql.DatabaseState{Exists: true, Owner: app, PublicConnect: false}))

	t.Run("TheUserIsNoLongerACloudsqlsuperuser", func(t *testing.T) {
		g := NewWithT(t)
		conn, err := e.login(e.ctx, icn, app, appPW, appDB)
		g.Expect(err).NotTo(HaveOccurred())
		defer conn.Close(e.ctx)
		var member, createRole, createDB bool
		g.Expect(conn.QueryRow(e.ctx, `SELECT pg_has_role(current_user, 'cloudsqlsuperuser', 'MEMBER'), rolcreaterole, rolcreatedb
			FROM pg_roles WHERE rolname = current_user`).Scan(&member, &createRole, &createDB)).To(Succeed())
		g.Expect([]bool{member, createRole, createDB}).To(Equal([]bool{false, false, false}))
	})

	t.Run("TheUserCannotCreateRolesOrDatabases", func(t *testing.T) {
		g := NewWithT(t)
		conn, err := e.login(e.ctx, icn, app, appPW, appDB)
		g.Expect(err).NotTo(HaveOccurred())
		defer conn.Close(e.ctx)
		_, err = conn.Exec(e.ctx, "CREATE ROLE intruder")
		g.Expect(sqlState(err)).To(Equal(codeInsufficientPrivilege), "CREATE ROLE: %v", err)
		_, err = conn.Exec(e.ctx, "CREATE DATABASE intruder")
		g.Expect(sqlState(err)).To(Equal(codeInsufficientPrivilege), "CREATE DATABASE: %v", err)
	})

	t.Run("TheUserCannotConnectToAnotherUsersDatabase", func(t *testing.T) {
		g := NewWithT(t)
		err := e.can(g, icn, app, appPW, otherDB)
		g.Expect(sqlState(err)).To(Equal(codeInsufficientPrivilege), "connect to %s: %v", otherDB, err)
		g.Expect(err.Error()).To(ContainSubstring("permission denied for database"))
		err = e.can(g, icn, other, otherPW, appDB)
		g.Expect(sqlState(err)).To(Equal(codeInsufficientPrivilege), "connect to %s: %v", appDB, err)
	})

	t.Run("TheUserConnectsToItsOwnDatabaseAndCreatesATable", func(t *testing.T) {
		g := NewWithT(t)
		conn, err := e.login(e.ctx, icn, app, appPW, appDB)
		g.Expect(err).NotTo(HaveOccurred())
		defer conn.Close(e.ctx)
		_, err = conn.Exec(e.ctx, "CREATE TABLE IF NOT EXISTS public.orders (id int PRIMARY KEY)")
		g.Expect(err).NotTo(HaveOccurred())
		_, err = conn.Exec(e.ctx, "INSERT INTO orders VALUES (1) ON CONFLICT DO NOTHING")
		g.Expect(err).NotTo(HaveOccurred())
		var schemaOwner string
		g.Expect(conn.QueryRow(e.ctx, "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'public'").Scan(&schemaOwner)).To(Succeed())
		g.Expect(schemaOwner).To(Equal(app))
	})

	t.Run("PostgresStillManagesTheDatabase", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(e.can(g, icn, "postgres", rootPassword, appDB)).To(Succeed())
		g.Expect(c.OwnDatabase(e.ctx, appDB, app)).To(Succeed())
	})

	t.Run("TheConnectorsAdminAPIRequestsSpendTheBudget", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(e.requests("/connectSettings")).NotTo(BeEmpty())
		g.Expect(e.requests(":generateEphemeralCert")).NotTo(BeEmpty())
		g.Expect(e.requests("authorized=false")).To(BeEmpty(), "every request carries the ProviderConfig's credentials")
		// One certificate serves every session of the hour: the provider's
		// many sessions above did not each ask for one.
		g.Expect(len(e.requests(":generateEphemeralCert"))).To(BeNumerically("<=", 2))
	})

	t.Run("MissingRolesAndDatabasesAreReadAsAbsent", func(t *testing.T) {
		g := NewWithT(t)
		got, err := c.Inspect(e.ctx, "nobody")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(pgsql.RoleState{}))
		dbState, err := c.InspectDatabase(e.ctx, "nothing")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(dbState).To(Equal(pgsql.DatabaseState{}))
		err = c.LeastPrivilege(e.ctx, "nobody")
		g.Expect(pgsql.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Expect(pgsql.IsUnreachable(err)).To(BeFalse())
		err = c.OwnDatabase(e.ctx, "nothing", app)
		g.Expect(pgsql.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Expect(pgsql.IsUnreachable(err)).To(BeFalse())
	})

	t.Run("LogsInTellsTheLoginsPasswordFromAnother", func(t *testing.T) {
		g := NewWithT(t)
		d, err := e.dialers.Get(e.pc, e.creds)
		g.Expect(err).NotTo(HaveOccurred())
		as := func(user, password string) *pgsql.Client { return pgsql.New(d, icn, password, pgsql.WithUser(user)) }
		g.Expect(as(app, appPW).LogsIn(e.ctx)).To(BeTrue())
		g.Expect(as(app, otherPW).LogsIn(e.ctx)).To(BeFalse(), "another password is refused, without an error")
		g.Expect(as("nobody", appPW).LogsIn(e.ctx)).To(BeFalse(), "so is a login that does not exist")
	})
}

func TestUnreachableInstances(t *testing.T) {
	t.Parallel()
	// Nothing listens on closed: every dial of the "blocked" dialers goes
	// there, as to an instance address that a firewall rejects.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()

	e := newEnv(t)
	g := NewWithT(t)
	icn := e.instance(g, "lonely")
	d, err := e.dialers.Get(e.pc, e.creds)
	g.Expect(err).NotTo(HaveOccurred())
	blocked, err := cloudsqlconn.NewDialer(e.ctx,
		cloudsqlconn.WithAdminAPIEndpoint(e.url+"/"),
		cloudsqlconn.WithTokenSource(staticToken{}),
		cloudsqlconn.WithLazyRefresh(),
		cloudsqlconn.WithDialFunc(func(ctx context.Context, network, _ string) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, network, closed)
		}))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = blocked.Close() })

	cases := map[string]struct {
		reason string
		client *pgsql.Client
		want   pgsql.Reason
		says   []string
	}{
		"NothingListensOnTheInstancesAddress": {
			reason: "the address refuses connections: the network",
			client: pgsql.New(blocked, icn, rootPassword),
			want:   pgsql.ReasonNetwork,
			says:   []string{icn, "connection refused", "port 3307 of the instance's public IP address", "firewall"},
		},
		"NoSuchInstance": {
			reason: "the Admin API has no such instance",
			client: pgsql.New(d, e.project+":"+region+":ghost", rootPassword),
			want:   pgsql.ReasonAdminAPI,
			says:   []string{"ghost", "Cloud SQL Admin API", "connectSettings", "roles/cloudsql.client"},
		},
		"NoPrivateIP": {
			reason: "the instance has no private IP",
			client: pgsql.New(d, icn, rootPassword, pgsql.WithIPType(pgsql.PrivateIP)),
			want:   pgsql.ReasonAdminAPI,
			says:   []string{"private IP"},
		},
		"WrongPassword": {
			reason: "PostgreSQL refuses the password",
			client: pgsql.New(d, icn, "not-"+rootPassword),
			want:   pgsql.ReasonAuthentication,
			says:   []string{"password authentication failed", "current password of postgres"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			start := time.Now()
			_, err := tc.client.Inspect(e.ctx, "postgres")
			t.Log(err)
			g.Expect(time.Since(start)).To(BeNumerically("<", 15*time.Second), "%s: fails fast", tc.reason)
			g.Expect(pgsql.IsUnreachable(err)).To(BeTrue(), "%s: %v", tc.reason, err)
			var u *pgsql.Unreachable
			g.Expect(errors.As(err, &u)).To(BeTrue())
			g.Expect(u.Reason).To(Equal(tc.want), "%s: %v", tc.reason, err)
			for _, s := range tc.says {
				g.Expect(err.Error()).To(ContainSubstring(s), tc.reason)
			}
		})
	}
}

// staticToken is a token source for the test's own connectors: the emulator
// does not check tokens.
type staticToken struct{}

func (staticToken) Token() (*oauth2.Token, error) { return &oauth2.Token{AccessToken: "test"}, nil }
