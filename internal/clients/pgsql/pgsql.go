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

// Package pgsql runs the SQL that gives application logins least privilege on
// a Cloud SQL for PostgreSQL instance. It logs in as postgres through the Cloud
// SQL Go connector (cloudsqlconn: connection settings and a client certificate
// from the Admin API, then TLS to port 3307 of the instance's address), with
// the ProviderConfig's endpoint and credentials, and speaks PostgreSQL with
// pgx. Every operation is idempotent, quotes every identifier and passes
// every value as a parameter.
package pgsql

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/cloudsqlconn"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/jackc/pgx/v5"
)

const (
	errParseConfig     = "cannot configure a PostgreSQL connection"
	errInspectRole     = "cannot read role %q"
	errLogIn           = "cannot log in as %q to check its password"
	errOwnedDatabases  = "cannot list the databases that role %q owns"
	errInspectDatabase = "cannot read database %q"
	errLeastPrivilege  = "cannot take cloudsqlsuperuser, CREATEDB and CREATEROLE from role %q"
	errOwnDatabase     = "cannot give database %q to role %q"
	errOwnSchema       = "cannot give the public schema of database %q to role %q"
	errStillMember     = "role %q is still a member of %s after REVOKE: %s granted the membership, and PostgreSQL 16 and later let only the grantor revoke it: revoke it as that role; the provider checks again at its next poll"
	errClose           = "cannot close the connection to database %q"
)

// DefaultConnectTimeout bounds a connection attempt: the connector's Admin API
// requests (when its certificate needs refreshing), the TCP and TLS handshakes
// with the instance and PostgreSQL's authentication.
const DefaultConnectTimeout = 30 * time.Second

// DefaultDatabase is the database that role and database statements run in:
// every Cloud SQL for PostgreSQL instance has it.
const DefaultDatabase = "postgres"

// applicationName names the provider's sessions in pg_stat_activity.
const applicationName = "provider-cloudsql-postgres"

// IPType is the address of an instance that connections are made to.
type IPType string

// IP types, named as Cloud SQL names the addresses.
const (
	// PublicIP is the instance's public IPv4 address.
	PublicIP IPType = "PRIMARY"
	// PrivateIP is its address in a VPC network.
	PrivateIP IPType = "PRIVATE"
)

// String is how messages name the address.
func (t IPType) String() string {
	if t == PrivateIP {
		return "private IP"
	}
	return "public IP"
}

// IPTypeFor is the address the provider connects to, as the injected Cloud SQL
// Auth Proxy does: the public IP when the instance has one, else the private
// IP.
func IPTypeFor(publicIP string) IPType {
	if publicIP == "" {
		return PrivateIP
	}
	return PublicIP
}

// A Dialer opens connections to Cloud SQL instances: a *cloudsqlconn.Dialer,
// typically from a DialerCache.
type Dialer interface {
	Dial(ctx context.Context, icn string, opts ...cloudsqlconn.DialOption) (net.Conn, error)
}

// A Client runs SQL on one instance as its administrator. Each operation opens
// its own session and closes it: the provider runs SQL rarely (after a
// create, and when what it observes drifted), so keeping sessions open would
// only hold connections of the instance. It is safe for concurrent use.
type Client struct {
	dialer   Dialer
	instance string
	user     string
	password string
	ipType   IPType
	timeout  time.Duration
}

// An Option configures a Client.
type Option func(*Client)

// WithIPType makes the client connect to the instance's address of type t
// (PublicIP by default; see IPTypeFor).
func WithIPType(t IPType) Option {
	return func(c *Client) { c.ipType = t }
}

// WithUser logs in as user rather than postgres.
func WithUser(user string) Option {
	return func(c *Client) { c.user = user }
}

// WithConnectTimeout bounds each connection attempt (DefaultConnectTimeout
// otherwise).
func WithConnectTimeout(d time.Duration) Option {
	return func(c *Client) { c.timeout = d }
}

// New returns a client that logs in to the instance whose connection name
// (project:region:instance) is instance, through d, as postgres with password.
func New(d Dialer, instance, password string, o ...Option) *Client {
	c := &Client{dialer: d, instance: instance, user: "postgres", password: password, ipType: PublicIP, timeout: DefaultConnectTimeout}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// RoleState is what Inspect reads of a role.
type RoleState struct {
	// Exists is false when there is no such role; the rest is then zero.
	Exists bool
	// SuperuserMember: the role is a member of cloudsqlsuperuser, directly
	// or through another role.
	SuperuserMember bool
	// CreateRole and CreateDB are the role's CREATEROLE and CREATEDB.
	CreateRole bool
	CreateDB   bool
	// Databases are the databases it owns, by name.
	Databases []string
}

// LeastPrivileged reports whether the role has nothing beyond logging in and
// what it owns.
func (s RoleState) LeastPrivileged() bool {
	return !s.SuperuserMember && !s.CreateRole && !s.CreateDB
}

// DatabaseState is what InspectDatabase reads of a database.
type DatabaseState struct {
	// Exists is false when there is no such database; the rest is then zero.
	Exists bool
	// Owner is the role that owns it.
	Owner string
	// PublicConnect: every role may connect to it (PUBLIC has CONNECT).
	PublicConnect bool
}

// connect logs in to database db. A failure to reach or log in to the
// instance is Unreachable.
func (c *Client) connect(ctx context.Context, db string) (*pgx.Conn, error) {
	// Everything the connection depends on is set here, so that no PG*
	// variable or password file of the provider's environment changes it.
	cfg, err := pgx.ParseConfig("host=cloudsql port=5432 sslmode=disable")
	if err != nil {
		return nil, errors.Wrap(err, errParseConfig)
	}
	cfg.User, cfg.Password, cfg.Database = c.user, c.password, db
	cfg.TLSConfig, cfg.Fallbacks = nil, nil
	cfg.ConnectTimeout = c.timeout
	cfg.RuntimeParams = map[string]string{"application_name": applicationName}
	dialOpt := cloudsqlconn.WithPublicIP()
	if c.ipType == PrivateIP {
		dialOpt = cloudsqlconn.WithPrivateIP()
	}
	// The connector encrypts and authenticates: pgx speaks plain PostgreSQL
	// on the connection it returns.
	cfg.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	cfg.DialFunc = func(ctx context.Context, _, _ string) (net.Conn, error) {
		return c.dialer.Dial(ctx, c.instance, dialOpt)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		if r := reasonOf(err); r != "" {
			return nil, &Unreachable{Instance: c.instance, User: c.user, IPType: c.ipType, Reason: r, Err: err}
		}
		return nil, err
	}
	return conn, nil
}

// in runs fn in a session on database db, and closes it.
func (c *Client) in(ctx context.Context, db string, fn func(*pgx.Conn) error) error {
	conn, err := c.connect(ctx, db)
	if err != nil {
		return err
	}
	err = fn(conn)
	if cerr := conn.Close(ctx); cerr != nil && err == nil {
		return errors.Wrapf(cerr, errClose, db)
	}
	return err
}

// execAll runs stmts in one transaction.
func execAll(ctx context.Context, conn *pgx.Conn, stmts []string) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// LogsIn says whether PostgreSQL takes the client's user and password: false
// when it refuses them, an error when the instance cannot be reached. It
// logs in to the postgres database, which every login of a Cloud SQL
// instance may connect to (cloudsqladmin grants it to PUBLIC).
func (c *Client) LogsIn(ctx context.Context) (bool, error) {
	err := c.in(ctx, DefaultDatabase, func(*pgx.Conn) error { return nil })
	var u *Unreachable
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &u) && u.Reason == ReasonAuthentication:
		return false, nil
	}
	return false, errors.Wrapf(err, errLogIn, c.user)
}

// Inspect reads role.
func (c *Client) Inspect(ctx context.Context, role string) (RoleState, error) {
	var s RoleState
	err := c.in(ctx, DefaultDatabase, func(conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, inspectRoleSQL, role, SuperuserRole).Scan(&s.CreateRole, &s.CreateDB, &s.SuperuserMember, &s.Databases)
		if errors.Is(err, pgx.ErrNoRows) {
			s = RoleState{}
			return nil
		}
		s.Exists = err == nil
		if len(s.Databases) == 0 {
			s.Databases = nil
		}
		return err
	})
	if err != nil {
		return RoleState{}, errors.Wrapf(err, errInspectRole, role)
	}
	return s, nil
}

// OwnedDatabases lists the databases that role owns, by name.
func (c *Client) OwnedDatabases(ctx context.Context, role string) ([]string, error) {
	var dbs []string
	err := c.in(ctx, DefaultDatabase, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, ownedDatabasesSQL, role)
		if err != nil {
			return err
		}
		dbs, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, errors.Wrapf(err, errOwnedDatabases, role)
	}
	return dbs, nil
}

// InspectDatabase reads db.
func (c *Client) InspectDatabase(ctx context.Context, db string) (DatabaseState, error) {
	var s DatabaseState
	err := c.in(ctx, DefaultDatabase, func(conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, inspectDatabaseSQL, db).Scan(&s.Owner, &s.PublicConnect)
		if errors.Is(err, pgx.ErrNoRows) {
			s = DatabaseState{}
			return nil
		}
		s.Exists = err == nil
		return err
	})
	if err != nil {
		return DatabaseState{}, errors.Wrapf(err, errInspectDatabase, db)
	}
	return s, nil
}

// LeastPrivilege takes from role its membership of cloudsqlsuperuser, CREATEDB
// and CREATEROLE, which Cloud SQL gives every user it creates. It fails, naming
// who granted it, when PostgreSQL leaves the membership in place (from
// PostgreSQL 16 on, only the grantor of a membership may revoke it).
func (c *Client) LeastPrivilege(ctx context.Context, role string) error {
	err := c.in(ctx, DefaultDatabase, func(conn *pgx.Conn) error {
		if err := execAll(ctx, conn, leastPrivilegeSQL(role)); err != nil {
			return err
		}
		// REVOKE of a membership the session's user did not grant is a
		// warning, not an error: read what it left.
		rows, err := conn.Query(ctx, grantorsSQL, role, SuperuserRole)
		if err != nil {
			return err
		}
		grantors, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(grantors) > 0 {
			return errors.Errorf(errStillMember, role, SuperuserRole, quoteList(grantors))
		}
		return nil
	})
	return errors.Wrapf(err, errLeastPrivilege, role)
}

// OwnDatabase gives db to owner, with its public schema, and lets no one else
// connect to it: ALTER DATABASE ... OWNER TO owner, REVOKE CONNECT, TEMPORARY
// ... FROM PUBLIC, GRANT CONNECT ... TO owner, then, in db, ALTER SCHEMA
// public OWNER TO owner and REVOKE CREATE ON SCHEMA public FROM PUBLIC. The
// session's user (postgres) becomes a member of owner, which PostgreSQL
// requires to give it a database and which keeps the provider able to
// connect to db.
func (c *Client) OwnDatabase(ctx context.Context, db, owner string) error {
	stmts := ownDatabaseSQL(db, owner)
	if owner == c.user {
		// A role cannot be a member of itself; it owns what it owns.
		stmts = stmts[1:]
	}
	err := c.in(ctx, DefaultDatabase, func(conn *pgx.Conn) error { return execAll(ctx, conn, stmts) })
	if err != nil {
		return errors.Wrapf(err, errOwnDatabase, db, owner)
	}
	err = c.in(ctx, db, func(conn *pgx.Conn) error { return execAll(ctx, conn, ownSchemaSQL(owner)) })
	return errors.Wrapf(err, errOwnSchema, db, owner)
}

// quoteList is names quoted and comma-separated, for messages.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
