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

package pgsql

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/cloudsqlconn"
	"cloud.google.com/go/cloudsqlconn/errtype"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"
	. "github.com/onsi/gomega"
)

func TestStatements(t *testing.T) {
	type args struct{ db, role string }
	type want struct{ leastPrivilege, ownDatabase, ownSchema []string }
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"PlainNames": {
			reason: "Every identifier is quoted, even one that needs not be.",
			args:   args{db: "orders", role: "app"},
			want: want{
				leastPrivilege: []string{`REVOKE "cloudsqlsuperuser" FROM "app"`, `ALTER ROLE "app" NOCREATEDB NOCREATEROLE`},
				ownDatabase: []string{
					`GRANT "app" TO CURRENT_USER`,
					`ALTER DATABASE "orders" OWNER TO "app"`,
					`REVOKE CONNECT, TEMPORARY ON DATABASE "orders" FROM PUBLIC`,
					`GRANT CONNECT ON DATABASE "orders" TO "app"`,
				},
				ownSchema: []string{`ALTER SCHEMA public OWNER TO "app"`, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`},
			},
		},
		"CaseAndPunctuationAreKept": {
			reason: "Quoting keeps capitals, hyphens and dollars, which PostgreSQL would fold or refuse bare.",
			args:   args{db: "My-Db$1", role: "Team.App"},
			want: want{
				leastPrivilege: []string{`REVOKE "cloudsqlsuperuser" FROM "Team.App"`, `ALTER ROLE "Team.App" NOCREATEDB NOCREATEROLE`},
				ownDatabase: []string{
					`GRANT "Team.App" TO CURRENT_USER`,
					`ALTER DATABASE "My-Db$1" OWNER TO "Team.App"`,
					`REVOKE CONNECT, TEMPORARY ON DATABASE "My-Db$1" FROM PUBLIC`,
					`GRANT CONNECT ON DATABASE "My-Db$1" TO "Team.App"`,
				},
				ownSchema: []string{`ALTER SCHEMA public OWNER TO "Team.App"`, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`},
			},
		},
		"QuotesCannotEndTheIdentifier": {
			reason: "A double quote in a name is doubled, so that a name cannot close its quotes and add SQL of its own.",
			args:   args{db: `d"; DROP DATABASE postgres; --`, role: `r" SUPERUSER; --`},
			want: want{
				leastPrivilege: []string{`REVOKE "cloudsqlsuperuser" FROM "r"" SUPERUSER; --"`, `ALTER ROLE "r"" SUPERUSER; --" NOCREATEDB NOCREATEROLE`},
				ownDatabase: []string{
					`GRANT "r"" SUPERUSER; --" TO CURRENT_USER`,
					`ALTER DATABASE "d""; DROP DATABASE postgres; --" OWNER TO "r"" SUPERUSER; --"`,
					`REVOKE CONNECT, TEMPORARY ON DATABASE "d""; DROP DATABASE postgres; --" FROM PUBLIC`,
					`GRANT CONNECT ON DATABASE "d""; DROP DATABASE postgres; --" TO "r"" SUPERUSER; --"`,
				},
				ownSchema: []string{`ALTER SCHEMA public OWNER TO "r"" SUPERUSER; --"`, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`},
			},
		},
		"NULBytesAreDropped": {
			reason: "PostgreSQL's protocol cannot carry a NUL; it is dropped rather than cutting the statement short.",
			args:   args{db: "d\x00b", role: "r\x00"},
			want: want{
				leastPrivilege: []string{`REVOKE "cloudsqlsuperuser" FROM "r"`, `ALTER ROLE "r" NOCREATEDB NOCREATEROLE`},
				ownDatabase: []string{
					`GRANT "r" TO CURRENT_USER`,
					`ALTER DATABASE "db" OWNER TO "r"`,
					`REVOKE CONNECT, TEMPORARY ON DATABASE "db" FROM PUBLIC`,
					`GRANT CONNECT ON DATABASE "db" TO "r"`,
				},
				ownSchema: []string{`ALTER SCHEMA public OWNER TO "r"`, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := want{
				leastPrivilege: leastPrivilegeSQL(tc.args.role),
				ownDatabase:    ownDatabaseSQL(tc.args.db, tc.args.role),
				ownSchema:      ownSchemaSQL(tc.args.role),
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestQueriesTakeValuesAsParameters(t *testing.T) {
	// Queries are constants: names reach them only as $1 and $2.
	for name, q := range map[string]string{
		"inspectRole":     inspectRoleSQL,
		"ownedDatabases":  ownedDatabasesSQL,
		"grantors":        grantorsSQL,
		"inspectDatabase": inspectDatabaseSQL,
	} {
		if !strings.Contains(q, "$1") {
			t.Errorf("%s: takes no parameter", name)
		}
	}
}

func TestReasonOf(t *testing.T) {
	pgErr := func(code string) error {
		return &pgconn.PgError{Severity: "FATAL", Code: code, Message: "from PostgreSQL"}
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := map[string]struct {
		reason string
		err    error
		want   Reason
	}{
		"Nil":                 {"No error, no reason.", nil, ""},
		"WrongPassword":       {"PostgreSQL refused the password.", pgErr(codeInvalidPassword), ReasonAuthentication},
		"NoSuchUser":          {"pg_hba refused the user (28000).", pgErr(codeInvalidAuthorization), ReasonAuthentication},
		"WrappedPassword":     {"Wrapping keeps the reason.", errors.Wrap(pgErr(codeInvalidPassword), "connect"), ReasonAuthentication},
		"NoSuchDatabase":      {"A missing database is not a reachability problem.", pgErr(codeInvalidCatalogName), ""},
		"StartingUp":          {"PostgreSQL answered: a retry soon mends it.", pgErr("57P03"), ""},
		"TooManyConnections":  {"PostgreSQL answered: a retry soon mends it.", pgErr("53300"), ""},
		"AdminAPIRefresh":     {"connectSettings or generateEphemeralCert failed.", errtype.NewRefreshError("failed to get instance metadata", "p:r:i", errors.New("googleapi: Error 403")), ReasonAdminAPI},
		"AdminAPIConfig":      {"The instance has no such address.", errtype.NewConfigError(`instance does not have IP of type "PRIVATE"`, "p:r:i"), ReasonAdminAPI},
		"AdminAPIExhausted":   {"The Admin API is out of quota.", errtype.NewResourceExhaustedError("cooldown active", "p:r:i", nil), ReasonAdminAPI},
		"RefreshInDialError":  {"The connector wraps refresh errors in dial errors.", errtype.NewDialError("failed to get instance", "p:r:i", errtype.NewRefreshError("x", "p:r:i", nil)), ReasonAdminAPI},
		"DialRefused":         {"Nothing listens on port 3307.", errtype.NewDialError("failed to dial", "p:r:i", refused), ReasonNetwork},
		"HandshakeFailed":     {"The TLS handshake failed.", errtype.NewDialError("handshake failed", "p:r:i", errors.New("remote error: tls: bad certificate")), ReasonNetwork},
		"PlainNetworkError":   {"A dial function's own error.", refused, ReasonNetwork},
		"Deadline":            {"No answer within the connect timeout.", errors.Wrap(context.DeadlineExceeded, "timeout"), ReasonNetwork},
		"CallerCanceled":      {"The caller gave up: nothing to say about the instance.", errors.Wrap(context.Canceled, "connect"), ""},
		"DialerClosed":        {"A dialer replaced under the call: retry.", errors.Wrap(cloudsqlconn.ErrDialerClosed, "connect"), ""},
		"CanceledInDialError": {"A cancellation inside the connector is still the caller's.", errtype.NewDialError("failed to dial", "p:r:i", context.Canceled), ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := reasonOf(tc.err); got != tc.want {
				t.Errorf("%s\nreasonOf(%v): want %q, got %q", tc.reason, tc.err, tc.want, got)
			}
		})
	}
}

func TestUnreachableSaysWhatToReach(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    *Unreachable
		says   []string
		not    []string
	}{
		"PublicIP": {
			reason: "A network failure on the public IP names port 3307 of the public address.",
			err:    &Unreachable{Instance: "p:r:i", User: "postgres", IPType: PublicIP, Reason: ReasonNetwork, Err: errors.New("connection refused")},
			says:   []string{"Cloud SQL instance p:r:i as postgres over its public IP", "connection refused", "port 3307 of the instance's public IP address", "firewall"},
			not:    []string{"private", "Admin API"},
		},
		"PrivateIP": {
			reason: "A network failure on the private IP names the VPC network.",
			err:    &Unreachable{Instance: "p:r:i", User: "postgres", IPType: PrivateIP, Reason: ReasonNetwork, Err: errors.New("i/o timeout")},
			says:   []string{"over its private IP", "i/o timeout", "port 3307 of the instance's private IP address", "VPC network"},
			not:    []string{"public"},
		},
		"AdminAPI": {
			reason: "An Admin API failure names the API, the calls and the role they need.",
			err:    &Unreachable{Instance: "p:r:i", User: "postgres", IPType: PrivateIP, Reason: ReasonAdminAPI, Err: errors.New("googleapi: Error 403")},
			says:   []string{"Error 403", "Cloud SQL Admin API", "connectSettings", "generateEphemeralCert", "roles/cloudsql.client", "has a private IP"},
		},
		"Authentication": {
			reason: "A refused password names the secret that must hold it.",
			err:    &Unreachable{Instance: "p:r:i", User: "postgres", IPType: PublicIP, Reason: ReasonAuthentication, Err: errors.New("password authentication failed")},
			says:   []string{"password authentication failed", "connection secret", "current password of postgres"},
			not:    []string{"3307"},
		},
		"NoCause": {
			reason: "A missing cause does not panic.",
			err:    &Unreachable{Instance: "p:r:i", User: "postgres", Reason: ReasonNetwork},
			says:   []string{"unknown error", "public IP"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			msg := tc.err.Error()
			for _, s := range tc.says {
				g.Expect(msg).To(ContainSubstring(s), tc.reason)
			}
			for _, s := range tc.not {
				g.Expect(msg).NotTo(ContainSubstring(s), tc.reason)
			}
			wrapped := errors.Wrap(tc.err, "cannot read role")
			g.Expect(IsUnreachable(wrapped)).To(BeTrue())
			g.Expect(errors.Is(wrapped, tc.err.Err)).To(Equal(tc.err.Err != nil), "the cause stays in the chain")
		})
	}
}

// dialFunc is a Dialer that fails as the connector would.
type dialFunc func(ctx context.Context) (net.Conn, error)

func (f dialFunc) Dial(ctx context.Context, _ string, _ ...cloudsqlconn.DialOption) (net.Conn, error) {
	return f(ctx)
}

func TestOperationsReportDialFailures(t *testing.T) {
	refused := errtype.NewDialError("failed to dial", "p:r:i", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	hang := dialFunc(func(ctx context.Context) (net.Conn, error) { <-ctx.Done(); return nil, ctx.Err() })
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := map[string]struct {
		reason      string
		dialer      Dialer
		ctx         context.Context
		unreachable bool
		want        Reason
		says        string
	}{
		"Refused": {
			reason: "A refused dial is Unreachable over the network.",
			dialer: dialFunc(func(context.Context) (net.Conn, error) { return nil, refused }), ctx: context.Background(),
			unreachable: true, want: ReasonNetwork, says: "connection refused",
		},
		"AdminAPI": {
			reason: "A failed refresh is Unreachable through the Admin API.",
			dialer: dialFunc(func(context.Context) (net.Conn, error) {
				return nil, errtype.NewRefreshError("failed to get instance metadata", "p:r:i", errors.New("googleapi: Error 403: forbidden"))
			}), ctx: context.Background(),
			unreachable: true, want: ReasonAdminAPI, says: "Error 403",
		},
		"Timeout": {
			reason: "An instance that never answers is Unreachable once the connect timeout passes.",
			dialer: hang, ctx: context.Background(),
			unreachable: true, want: ReasonNetwork, says: "port 3307",
		},
		"CallerCanceled": {
			reason: "A caller that gave up learns nothing about the instance.",
			dialer: hang, ctx: canceled,
		},
		"DialerClosed": {
			reason: "A dialer closed under the call (its configuration changed) is retried, not reported.",
			dialer: dialFunc(func(context.Context) (net.Conn, error) { return nil, cloudsqlconn.ErrDialerClosed }), ctx: context.Background(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := New(tc.dialer, "p:r:i", "pw", WithConnectTimeout(200*time.Millisecond))
			errs := map[string]error{}
			_, errs["Inspect"] = c.Inspect(tc.ctx, "app")
			_, errs["OwnedDatabases"] = c.OwnedDatabases(tc.ctx, "app")
			_, errs["InspectDatabase"] = c.InspectDatabase(tc.ctx, "db")
			errs["LeastPrivilege"] = c.LeastPrivilege(tc.ctx, "app")
			errs["OwnDatabase"] = c.OwnDatabase(tc.ctx, "db", "app")
			for op, err := range errs {
				g.Expect(err).To(HaveOccurred(), op)
				g.Expect(IsUnreachable(err)).To(Equal(tc.unreachable), "%s: %s: %v", tc.reason, op, err)
				if !tc.unreachable {
					continue
				}
				var u *Unreachable
				g.Expect(errors.As(err, &u)).To(BeTrue())
				g.Expect(u.Reason).To(Equal(tc.want), "%s: %s", tc.reason, op)
				g.Expect(u.Instance).To(Equal("p:r:i"))
				g.Expect(err.Error()).To(ContainSubstring(tc.says), "%s: %s", tc.reason, op)
			}
		})
	}
}

func TestIsNotFound(t *testing.T) {
	cases := map[string]struct {
		err  error
		want bool
	}{
		"Nil":              {nil, false},
		"UndefinedRole":    {errors.Wrap(&pgconn.PgError{Code: codeUndefinedObject}, "revoke"), true},
		"NoSuchDatabase":   {&pgconn.PgError{Code: codeInvalidCatalogName}, true},
		"PermissionDenied": {&pgconn.PgError{Code: "42501"}, false},
		"NotPostgres":      {errors.New("role does not exist"), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsNotFound(tc.err); got != tc.want {
				t.Errorf("IsNotFound(%v): want %t, got %t", tc.err, tc.want, got)
			}
		})
	}
}

func TestIPTypeFor(t *testing.T) {
	g := NewWithT(t)
	g.Expect(IPTypeFor("203.0.113.7")).To(Equal(PublicIP), "the public IP when there is one, as the injected proxy")
	g.Expect(IPTypeFor("")).To(Equal(PrivateIP))
	g.Expect(PublicIP.String()).To(Equal("public IP"))
	g.Expect(PrivateIP.String()).To(Equal("private IP"))
}
