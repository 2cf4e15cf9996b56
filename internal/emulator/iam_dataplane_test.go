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
	"net"
	"testing"
	"time"

	"cloud.google.com/go/cloudsqlconn"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	. "github.com/onsi/gomega"
	"golang.org/x/oauth2"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// These tests log in with IAM database authentication the way applications
// do: through the Go Cloud SQL connector (which the Auth Proxy is built on),
// with automatic IAM authentication (WithIAMAuthN, the Auth Proxy's
// --auto-iam-authn) or with an access token as the password, and pgx.

const (
	// codeInvalidAuthorization is the SQLSTATE of refused logins.
	codeInvalidAuthorization = "28000"
	// codeQueryCanceled is the SQLSTATE of a cancelled statement.
	codeQueryCanceled = "57014"
)

// iamUsers are the accounts of an IAM test and their database users.
type iamUsers struct {
	appEmail, app     string // a service account
	otherEmail, other string // another one
	jane              string // a person
}

func newIAMUsers(project string) iamUsers {
	return iamUsers{
		appEmail: "app@" + project + ".iam.gserviceaccount.com", app: "app@" + project + ".iam",
		otherEmail: "other@" + project + ".iam.gserviceaccount.com", other: "other@" + project + ".iam",
		jane: "jane@example.com",
	}
}

// insertUser runs users.insert and waits for its operation.
func (e *dataEnv) insertUser(g Gomega, instance string, u *sqladmin.User) {
	op, err := e.svc.Users.Insert(e.project, instance, u).Context(e.ctx).Do()
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	e.waitDone(g, op)
}

// staticToken is a token source that is never asked for a real token: the
// emulator's Admin API does not check them.
func staticToken() oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "unused", Expiry: time.Now().Add(24 * time.Hour)})
}

// dialer is a Cloud SQL connector whose Admin API is the emulator's, with
// opts; the test's cleanup closes it.
func (e *dataEnv) dialer(t *testing.T, opts ...cloudsqlconn.Option) *cloudsqlconn.Dialer {
	t.Helper()
	all := append([]cloudsqlconn.Option{
		cloudsqlconn.WithAdminAPIEndpoint(e.url + "/"),
		cloudsqlconn.WithLazyRefresh(),
	}, opts...)
	d, err := cloudsqlconn.NewDialer(e.ctx, all...)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// iamDialer is a connector with automatic IAM authentication whose login
// tokens come from login.
func (e *dataEnv) iamDialer(t *testing.T, login oauth2.TokenSource) *cloudsqlconn.Dialer {
	return e.dialer(t, cloudsqlconn.WithIAMAuthN(), cloudsqlconn.WithIAMAuthNTokenSources(staticToken(), login))
}

// plainDialer is a connector without IAM authentication: logins give a
// password.
func (e *dataEnv) plainDialer(t *testing.T) *cloudsqlconn.Dialer {
	return e.dialer(t, cloudsqlconn.WithTokenSource(staticToken()))
}

// connect logs in to instance's database postgres through d as user with
// password (empty: none) with pgx. The configuration names everything, so
// that no PG variable of the test's environment counts.
func (e *dataEnv) connect(d *cloudsqlconn.Dialer, instance, user, password string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig("host=127.0.0.1 port=5432 user=unused password=unused dbname=postgres sslmode=disable")
	if err != nil {
		return nil, err
	}
	cfg.User, cfg.Password, cfg.Database = user, password, "postgres"
	cfg.RuntimeParams = map[string]string{"application_name": "iam-test"}
	name := e.project + ":" + region + ":" + instance
	cfg.DialFunc = func(ctx context.Context, _, _ string) (net.Conn, error) { return d.Dial(ctx, name) }
	ctx, cancel := context.WithTimeout(e.ctx, dataTimeout)
	defer cancel()
	return pgx.ConnectConfig(ctx, cfg)
}

// whoAmI logs in and answers current_user, whether it is a member of
// cloudsqlsuperuser and of the IAM group roles, and closes.
func (e *dataEnv) whoAmI(d *cloudsqlconn.Dialer, instance, user, password string) (string, error) {
	conn, err := e.connect(d, instance, user, password)
	if err != nil {
		return "", err
	}
	defer conn.Close(e.ctx)
	var (
		name               string
		super, sa, persons bool
	)
	err = conn.QueryRow(e.ctx, "select current_user, pg_has_role(current_user, 'cloudsqlsuperuser', 'member'), "+
		"pg_has_role(current_user, 'cloudsqliamserviceaccount', 'member'), pg_has_role(current_user, 'cloudsqliamuser', 'member')").
		Scan(&name, &super, &sa, &persons)
	if err != nil {
		return "", err
	}
	switch {
	case super:
		return name + " (cloudsqlsuperuser)", nil
	case sa:
		return name + " (cloudsqliamserviceaccount)", nil
	case persons:
		return name + " (cloudsqliamuser)", nil
	}
	return name, nil
}

// expectRefused expects err to be PostgreSQL's refusal of a login, with
// SQLSTATE 28000, message and a detail that contains detail.
func expectRefused(g Gomega, err error, message, detail string) {
	g.ExpectWithOffset(1, err).To(HaveOccurred())
	var pe *pgconn.PgError
	g.ExpectWithOffset(1, errors.As(err, &pe)).To(BeTrue(), "a PostgreSQL error, not %v", err)
	g.ExpectWithOffset(1, pe.Severity).To(Equal("FATAL"))
	g.ExpectWithOffset(1, pe.Code).To(Equal(codeInvalidAuthorization))
	g.ExpectWithOffset(1, pe.Message).To(Equal(message))
	g.ExpectWithOffset(1, pe.Detail).To(ContainSubstring(detail))
}

// iamOn turns IAM database authentication on, as Cloud SQL needs before it
// logs an IAM user in.
func iamOn(db *sqladmin.DatabaseInstance) {
	db.Settings.DatabaseFlags = append(db.Settings.DatabaseFlags, &sqladmin.DatabaseFlags{Name: "cloudsql.iam_authentication", Value: "on"})
}

// TestDataPlaneIAMAuthentication logs in as IAM users of an instance. Its
// clock is a FakeClock at the wall clock's time, which the last subtest moves
// on to expire the tokens.
func TestDataPlaneIAMAuthentication(t *testing.T) {
	t.Parallel()
	clk := emulator.NewFakeClock(time.Now())
	e := newDataEnv(t, emulator.WithClock(clk))
	g := NewWithT(t)
	e.insert(g, instance("iam", iamOn))
	u := newIAMUsers(e.project)
	e.insertUser(g, "iam", &sqladmin.User{Name: u.app, Type: "CLOUD_IAM_SERVICE_ACCOUNT"})
	e.insertUser(g, "iam", &sqladmin.User{Name: u.jane, Type: "CLOUD_IAM_USER", Password: "ignored"})
	e.insertUser(g, "iam", &sqladmin.User{Name: "builtin", Password: "builtin-pw"})
	appTokens := accountTokens(g, e.ctx, e.url, e.project, u.appEmail)
	otherTokens := accountTokens(g, e.ctx, e.url, e.project, u.otherEmail)
	janeTokens := accountTokens(g, e.ctx, e.url, e.project, u.jane)
	appIAM := e.iamDialer(t, appTokens)
	plain := e.plainDialer(t)
	saFailed := `Cloud SQL IAM service account authentication failed for user "` + u.app + `"`

	t.Run("AServiceAccountLogsInWithATokenOfItsAccount", func(t *testing.T) {
		g := NewWithT(t)
		who, err := e.whoAmI(appIAM, "iam", u.app, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(who).To(Equal(u.app+" (cloudsqliamserviceaccount)"), "a member of its group role, not of cloudsqlsuperuser")

		// Its role is no more than that, and the API never shows a password.
		out, err := e.psqlQuery("iam", "PRIMARY", "postgres", rootPassword,
			"select rolcreatedb, rolcreaterole, rolsuper from pg_roles where rolname = '"+u.app+"'")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("f|f|f"))
		got, err := e.svc.Users.Get(e.project, "iam", u.app).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Type).To(Equal("CLOUD_IAM_SERVICE_ACCOUNT"))
		g.Expect(got.Password).To(BeEmpty())
	})

	t.Run("NoIAMLoginWhileTheFlagIsOff", func(t *testing.T) {
		g := NewWithT(t)
		e.insert(g, instance("iam-off"))
		e.insertUser(g, "iam-off", &sqladmin.User{Name: u.app, Type: "CLOUD_IAM_SERVICE_ACCOUNT"})
		_, err := e.whoAmI(appIAM, "iam-off", u.app, "")
		expectRefused(g, err, saFailed, "its database flag cloudsql.iam_authentication is not on")
	})

	t.Run("APersonLogsInWithATokenOfTheirAccount", func(t *testing.T) {
		g := NewWithT(t)
		who, err := e.whoAmI(e.iamDialer(t, janeTokens), "iam", u.jane, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(who).To(Equal(u.jane + " (cloudsqliamuser)"))
		_, err = e.whoAmI(e.iamDialer(t, janeTokens), "iam", u.app, "")
		expectRefused(g, err, saFailed, `The access token belongs to jane@example.com, whose database user is "jane@example.com".`)
		_, err = e.whoAmI(appIAM, "iam", u.jane, "")
		expectRefused(g, err, `Cloud SQL IAM user authentication failed for user "jane@example.com"`, "The access token belongs to "+u.appEmail)
		g.Expect(e.emu.PasswordIs(e.project, "iam", u.jane, "ignored")).To(BeFalse(), "an IAM user has no password of the API's")
	})

	t.Run("ATokenOfAnotherAccountIsRefused", func(t *testing.T) {
		g := NewWithT(t)
		_, err := e.whoAmI(e.iamDialer(t, otherTokens), "iam", u.app, "")
		expectRefused(g, err, saFailed, `The access token belongs to `+u.otherEmail+`, whose database user is "`+u.other+`".`)
		g.Expect(e.log.String()).To(ContainSubstring(`refused the IAM login of "` + u.app + `"`))
	})

	t.Run("APasswordIsRefusedAndATokenAsThePasswordLogsIn", func(t *testing.T) {
		g := NewWithT(t)
		_, err := e.whoAmI(plain, "iam", u.app, "not-a-token")
		expectRefused(g, err, saFailed, "The password is not an access token of the account.")
		_, err = e.whoAmI(plain, "iam", u.app, "")
		expectRefused(g, err, saFailed, "No access token was given.")
		other, err := otherTokens.Token()
		g.Expect(err).NotTo(HaveOccurred())
		_, err = e.whoAmI(plain, "iam", u.app, other.AccessToken)
		expectRefused(g, err, saFailed, "The access token belongs to "+u.otherEmail)

		// Manual IAM authentication: the account's token is the password.
		tok, err := appTokens.Token()
		g.Expect(err).NotTo(HaveOccurred())
		who, err := e.whoAmI(plain, "iam", u.app, tok.AccessToken)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(who).To(Equal(u.app + " (cloudsqliamserviceaccount)"))
		// The real psql too, asking for encryption first, as it does by
		// default: the proxy declines, as PostgreSQL on its socket would.
		c, err := e.connector("iam", "PRIMARY")
		g.Expect(err).NotTo(HaveOccurred())
		out, err := c.psqlWith(u.app, tok.AccessToken, "postgres", "select current_user", "PGSSLMODE=prefer")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal(u.app))
		out, err = c.psqlWith(u.app, "app-pw", "postgres", "select current_user", "PGSSLMODE=prefer")
		g.Expect(err).To(HaveOccurred(), out)
		g.Expect(out).To(ContainSubstring(saFailed))
	})

	t.Run("BuiltInUsersLogInWithTheirPassword", func(t *testing.T) {
		g := NewWithT(t)
		for name, d := range map[string]*cloudsqlconn.Dialer{"WithIAMAuthN": appIAM, "WithoutIt": plain} {
			who, err := e.whoAmI(d, "iam", "builtin", "builtin-pw")
			g.Expect(err).NotTo(HaveOccurred(), name)
			g.Expect(who).To(Equal("builtin (cloudsqlsuperuser)"), name)
			_, err = e.whoAmI(d, "iam", "builtin", "wrong")
			g.Expect(err).To(HaveOccurred(), name)
			g.Expect(err.Error()).To(ContainSubstring(`password authentication failed for user "builtin"`), name)
		}
		c, err := e.connector("iam", "PRIMARY")
		g.Expect(err).NotTo(HaveOccurred())
		out, err := c.psqlWith("postgres", rootPassword, "postgres", "select current_user", "PGSSLMODE=prefer")
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("postgres"))
	})

	t.Run("UsersUpdateGivesAnIAMUserNoPassword", func(t *testing.T) {
		g := NewWithT(t)
		e.updatePassword(g, "iam", u.app, "set-by-update")
		g.Expect(e.emu.PasswordIs(e.project, "iam", u.app, "set-by-update")).To(BeFalse(), "the role's password stays the emulator's own")
		_, err := e.whoAmI(plain, "iam", u.app, "set-by-update")
		expectRefused(g, err, saFailed, "The password is not an access token of the account.")
		who, err := e.whoAmI(appIAM, "iam", u.app, "")
		g.Expect(err).NotTo(HaveOccurred(), "the role keeps the password the emulator logs in with")
		g.Expect(who).To(Equal(u.app + " (cloudsqliamserviceaccount)"))
	})

	t.Run("ALoginToAMissingDatabaseGetsPostgreSQLsError", func(t *testing.T) {
		g := NewWithT(t)
		cfg, err := pgx.ParseConfig("host=127.0.0.1 port=5432 user=unused password=unused dbname=nowhere sslmode=disable")
		g.Expect(err).NotTo(HaveOccurred())
		cfg.User, cfg.Password = u.app, ""
		cfg.DialFunc = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return appIAM.Dial(ctx, e.project+":"+region+":iam")
		}
		_, err = pgx.ConnectConfig(e.ctx, cfg)
		var pe *pgconn.PgError
		g.Expect(errors.As(err, &pe)).To(BeTrue(), "%v", err)
		g.Expect(pe.Code).To(Equal("3D000"))
		g.Expect(pe.Message).To(Equal(`database "nowhere" does not exist`))
	})

	t.Run("CancelRequestsReachTheSession", func(t *testing.T) {
		g := NewWithT(t)
		conn, err := e.connect(appIAM, "iam", u.app, "")
		g.Expect(err).NotTo(HaveOccurred())
		defer conn.Close(e.ctx)
		done := make(chan error, 1)
		go func() {
			_, err := conn.Exec(e.ctx, "select pg_sleep(60)")
			done <- err
		}()
		// Cancel until the statement, once it runs, is cancelled: the
		// request names the session by the process ID and key that the
		// login gave the client.
		var queryErr error
		g.Eventually(func(g Gomega) {
			g.Expect(conn.PgConn().CancelRequest(e.ctx)).To(Succeed())
			g.Eventually(done, time.Second).Should(Receive(&queryErr))
		}, 30*time.Second, 0).Should(Succeed())
		var pe *pgconn.PgError
		g.Expect(errors.As(queryErr, &pe)).To(BeTrue(), "%v", queryErr)
		g.Expect(pe.Code).To(Equal(codeQueryCanceled))
		var one int
		g.Expect(conn.QueryRow(e.ctx, "select 1").Scan(&one)).To(Succeed(), "the session goes on")
	})

	t.Run("ACloneKeepsItsIAMUsers", func(t *testing.T) {
		g := NewWithT(t)
		op, err := e.svc.Instances.Clone(e.project, "iam", cloneRequest("iam-copy", "")).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		e.waitDone(g, op)
		got, err := e.svc.Users.Get(e.project, "iam-copy", u.app).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Type).To(Equal("CLOUD_IAM_SERVICE_ACCOUNT"))
		who, err := e.whoAmI(e.iamDialer(t, appTokens), "iam-copy", u.app, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(who).To(Equal(u.app + " (cloudsqliamserviceaccount)"))
		_, err = e.whoAmI(e.plainDialer(t), "iam-copy", u.app, "not-a-token")
		expectRefused(g, err, saFailed, "not an access token")
	})

	t.Run("ATokenTheEmulatorDidNotIssueGetsNoCertificate", func(t *testing.T) {
		g := NewWithT(t)
		_, err := e.whoAmI(e.iamDialer(t, staticToken()), "iam", u.app, "")
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("The access token is invalid or expired."))
	})

	// Last: it moves the clock on.
	t.Run("AnExpiredTokenIsRefused", func(t *testing.T) {
		g := NewWithT(t)
		old, err := appTokens.Token()
		g.Expect(err).NotTo(HaveOccurred())
		clk.Advance(61 * time.Minute)

		// Automatic: no certificate for it.
		_, err = e.whoAmI(e.iamDialer(t, oauth2.StaticTokenSource(old)), "iam", u.app, "")
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("The access token is invalid or expired."))
		// Manual: refused by the server-side proxy. (A new connector: the
		// certificates of those before have expired with the clock.)
		_, err = e.whoAmI(e.plainDialer(t), "iam", u.app, old.AccessToken)
		expectRefused(g, err, saFailed, "The access token expired at ")
		// A token issued now logs in.
		fresh := accountToken(g, e.ctx, e.url, e.project, u.appEmail)
		who, err := e.whoAmI(e.iamDialer(t, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: fresh, Expiry: time.Now().Add(time.Hour)})), "iam", u.app, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(who).To(Equal(u.app + " (cloudsqliamserviceaccount)"))
	})
}
