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

package postgres

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// psqlAs runs one query as user with password over the server's socket, the
// way a client does: SCRAM authentication, no administrator shortcut.
func psqlAs(t *testing.T, s *Server, user, password, query string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(s.cfg.BinDir, "psql"), "--no-psqlrc", "--quiet", "-tAc", query)
	cmd.Env = append(baseEnv(), "PGHOST="+s.SocketDir(), "PGUSER="+user, "PGDATABASE=postgres",
		"PGPASSWORD="+password, "PGCONNECT_TIMEOUT=5")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestServerRolesFollowPasswords(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL's server: make test runs it, make unit does not")
	}
	g := NewWithT(t)
	ctx := context.Background()
	s, err := Start(ctx, Config{}, "roles", "first-pw")
	g.Expect(err).NotTo(HaveOccurred(), "PostgreSQL must be installed for this test: run `make postgres`")
	t.Cleanup(func() { _ = s.Stop() })

	out, err := psqlAs(t, s, RootRole, "first-pw", "select current_user, rolsuper from pg_roles where rolname = current_user")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("postgres|f"), "postgres logs in with the root password and is not a superuser")

	out, err = psqlAs(t, s, RootRole, "wrong", "select 1")
	g.Expect(err).To(HaveOccurred())
	g.Expect(out).To(ContainSubstring("password authentication failed"))
	_, err = psqlAs(t, s, AdminRole, "", "select 1")
	g.Expect(err).To(HaveOccurred(), "the administrator role needs its password too")

	g.Expect(s.SetPassword(ctx, RootRole, "second'pw\"")).To(Succeed())
	_, err = psqlAs(t, s, RootRole, "first-pw", "select 1")
	g.Expect(err).To(HaveOccurred(), "the old password stops working")
	out, err = psqlAs(t, s, RootRole, "second'pw\"", "select current_user")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("postgres"))

	g.Expect(s.CreateRole(ctx, `app "one"`, "app-pw")).To(Succeed())
	out, err = psqlAs(t, s, `app "one"`, "app-pw", "create table t(i int); select pg_has_role(current_user, 'cloudsqlsuperuser', 'member')")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("t"))

	// The table depends on the role: dropping it is refused, as on Cloud
	// SQL, and the check says why without dropping anything.
	msg, detail, err := s.RoleDependents(ctx, `app "one"`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(msg).To(Equal(`role "app "one"" cannot be dropped because some objects depend on it`))
	g.Expect(detail).To(Equal("owner of table t"))
	err = s.DropRole(ctx, `app "one"`)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("cannot be dropped because some objects depend on it"))
	out, err = psqlAs(t, s, `app "one"`, "app-pw", "drop table t")
	g.Expect(err).NotTo(HaveOccurred(), "the check rolled back: the role still logs in: %s", out)
	msg, detail, err = s.RoleDependents(ctx, `app "one"`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(msg+detail).To(BeEmpty(), "nothing depends on the role any more")
	_, _, err = s.RoleDependents(ctx, "nobody-of-that-name")
	g.Expect(err).To(HaveOccurred(), "a role that does not exist is an error")

	g.Expect(s.DropRole(ctx, `app "one"`)).To(Succeed())
	_, err = psqlAs(t, s, `app "one"`, "app-pw", "select 1")
	g.Expect(err).To(HaveOccurred(), "a dropped role cannot log in")

	dir := s.Dir()
	g.Expect(s.Stop()).To(Succeed())
	g.Eventually(s.Exited()).Should(BeClosed())
	_, err = os.Stat(dir)
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "Stop removes the data directory")
	g.Expect(s.Stop()).To(Succeed(), "Stop is idempotent")
}

// TestServerIAMRoles checks the roles of IAM database users: members of their
// group role only, without cloudsqlsuperuser's membership or CREATEDB and
// CREATEROLE, logging in with the password they were given.
func TestServerIAMRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL's server: make test runs it, make unit does not")
	}
	g := NewWithT(t)
	ctx := context.Background()
	s, err := Start(ctx, Config{}, "iamroles", "root-pw")
	g.Expect(err).NotTo(HaveOccurred(), "PostgreSQL must be installed for this test: run `make postgres`")
	t.Cleanup(func() { _ = s.Stop() })

	out, err := s.Query(ctx, "select rolname, rolcanlogin from pg_roles where rolname like 'cloudsqliam%' order by 1")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("cloudsqliamserviceaccount|f\ncloudsqliamuser|f"), "both group roles exist and do not log in")

	const member = "select rolcreatedb, rolcreaterole, rolsuper, pg_has_role(current_user, 'cloudsqlsuperuser', 'member'), " +
		"pg_has_role(current_user, 'cloudsqliamserviceaccount', 'member'), pg_has_role(current_user, 'cloudsqliamuser', 'member') " +
		"from pg_roles where rolname = current_user"
	g.Expect(s.CreateIAMRole(ctx, "app@p.iam", "internal-pw", IAMServiceAccountRole)).To(Succeed())
	out, err = psqlAs(t, s, "app@p.iam", "internal-pw", member)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("f|f|f|f|t|f"))
	g.Expect(s.CreateIAMRole(ctx, "jane@example.com", "other-pw", IAMUserRole)).To(Succeed())
	out, err = psqlAs(t, s, "jane@example.com", "other-pw", member)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("f|f|f|f|f|t"))
	_, err = psqlAs(t, s, "jane@example.com", "internal-pw", "select 1")
	g.Expect(err).To(HaveOccurred(), "each role has its own password")
	g.Expect(s.DropRole(ctx, "app@p.iam")).To(Succeed())
}

func TestResolveNamesWhatIsMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL's server: make test runs it, make unit does not")
	}
	g := NewWithT(t)
	_, err := Config{BinDir: t.TempDir()}.Resolve()
	g.Expect(err).To(MatchError(ContainSubstring("make postgres")))
	if os.Geteuid() == 0 {
		_, err = Config{RunAs: "no-such-user-here"}.Resolve()
		g.Expect(err).To(MatchError(ContainSubstring("no-such-user-here")))
	}
}

func TestQuoting(t *testing.T) {
	g := NewWithT(t)
	g.Expect(QuoteIdent(`a"b`)).To(Equal(`"a""b"`))
	g.Expect(QuoteLiteral(`it's \ ok`)).To(Equal(`'it''s \ ok'`))
	g.Expect(passwordLiteral("")).To(Equal("NULL"))
}

func TestServerDatabasesAndClone(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL's server: make test runs it, make unit does not")
	}
	g := NewWithT(t)
	ctx := context.Background()
	s, err := Start(ctx, Config{}, "dbs", "root-pw")
	g.Expect(err).NotTo(HaveOccurred(), "PostgreSQL must be installed for this test: run `make postgres`")
	t.Cleanup(func() { _ = s.Stop() })

	// A collation the host may lack still creates the database.
	g.Expect(s.CreateDatabase(ctx, `orders "eu"`, "UTF8", "en_US.UTF8")).To(Succeed())
	out, err := s.Query(ctx, `select pg_get_userbyid(datdba), pg_encoding_to_char(encoding) from pg_database where datname = 'orders "eu"'`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("cloudsqlsuperuser|UTF8"), "Cloud SQL's users own the databases the API creates")
	out, err = psqlAs(t, s, RootRole, "root-pw", `select 1`)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(s.CreateDatabase(ctx, `orders "eu"`, "UTF8", "")).To(MatchError(ContainSubstring("already exists")))

	// The clone holds the roles, their passwords, the databases and the data.
	g.Expect(s.CreateRole(ctx, "app", "app-pw")).To(Succeed())
	out, err = psqlAs(t, s, "app", "app-pw", "create table t(v text); insert into t values ('kept')")
	g.Expect(err).NotTo(HaveOccurred(), out)
	c, err := Clone(ctx, Config{}, "dbs-clone", s)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = c.Stop() })
	g.Expect(c.SocketDir()).NotTo(Equal(s.SocketDir()))
	out, err = psqlAs(t, c, "app", "app-pw", "select v from t")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("kept"))
	out, err = psqlAs(t, c, RootRole, "root-pw", `select count(*) from pg_database where datname = 'orders "eu"'`)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("1"))

	// Dropping disconnects whoever uses the database.
	hold := exec.Command(filepath.Join(s.cfg.BinDir, "psql"), "--no-psqlrc", "-tAc", "select pg_sleep(60)")
	hold.Env = append(baseEnv(), "PGHOST="+s.SocketDir(), "PGUSER="+RootRole, `PGDATABASE=orders "eu"`, "PGPASSWORD=root-pw")
	g.Expect(hold.Start()).To(Succeed())
	t.Cleanup(func() { _ = hold.Process.Kill(); _ = hold.Wait() })
	g.Eventually(func() (int, error) { return s.Sessions(ctx, `orders "eu"`) }).Should(Equal(1))
	g.Expect(s.SetDatabaseOwner(ctx, `orders "eu"`, "app")).To(Succeed())
	out, err = s.Query(ctx, `select pg_get_userbyid(datdba) from pg_database where datname = 'orders "eu"'`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("app"))
	g.Expect(s.DropDatabase(ctx, `orders "eu"`)).To(Succeed())
	out, err = s.Query(ctx, `select count(*) from pg_database where datname = 'orders "eu"'`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("0"))
	out, err = c.Query(ctx, `select count(*) from pg_database where datname = 'orders "eu"'`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("1"), "the clone is a copy, not a view of its source")
}

// A recovery to a point in time holds what was committed until then and
// nothing after: rows written before the backup, rows written between the
// backup and the target (replayed from the WAL archive), none written after.
func TestRecoverToAPointInTime(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL's server: make test runs it, make unit does not")
	}
	g := NewWithT(t)
	ctx := context.Background()
	s, err := Start(ctx, Config{}, "pitr", "pw")
	g.Expect(err).NotTo(HaveOccurred(), "PostgreSQL must be installed for this test: run `make postgres`")
	t.Cleanup(func() { _ = s.Stop() })

	g.Expect(s.Exec(ctx, "CREATE TABLE t (v text); INSERT INTO t VALUES ('t1')")).To(Succeed())
	b, err := s.Backup(ctx, "pitr-base")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = b.Remove() })
	g.Expect(s.Exec(ctx, "INSERT INTO t VALUES ('t2')")).To(Succeed())
	// Commit timestamps are the server's clock: the target lies between two
	// commits, well apart from both.
	time.Sleep(300 * time.Millisecond)
	target := time.Now()
	time.Sleep(300 * time.Millisecond)
	g.Expect(s.Exec(ctx, "INSERT INTO t VALUES ('t3')")).To(Succeed())
	latestTime, err := s.ArchiveWAL(ctx)
	g.Expect(err).NotTo(HaveOccurred())

	r, err := RecoverTo(ctx, b, s.ArchiveDir(), target, "pitr-at-t2")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = r.Stop() })
	out, err := r.Query(ctx, "SELECT string_agg(v, ',' ORDER BY v) FROM t")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.TrimSpace(out)).To(Equal("t1,t2"))
	// The recovered server serves and logs in as the source did, and writes.
	out, err = psqlAs(t, r, RootRole, "pw", "select 1")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(r.Exec(ctx, "INSERT INTO t VALUES ('after')")).To(Succeed())

	// The latest time the archive reaches recovers everything.
	latest, err := RecoverTo(ctx, b, s.ArchiveDir(), latestTime, "pitr-latest")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = latest.Stop() })
	out, err = latest.Query(ctx, "SELECT string_agg(v, ',' ORDER BY v) FROM t")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.TrimSpace(out)).To(Equal("t1,t2,t3"))

	// A time the archive does not reach is PostgreSQL's error, not a server.
	_, err = RecoverTo(ctx, b, s.ArchiveDir(), time.Now().Add(time.Hour), "pitr-future")
	g.Expect(err).To(MatchError(ContainSubstring("could not recover to")))
}
