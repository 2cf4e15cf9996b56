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
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// TestDataPlaneDatabasesAndClone checks through the instances' own PostgreSQL,
// reached as a connector reaches it, that databases.insert and databases.delete
// create and drop databases, and that a clone is a copy of its source: its
// users with their passwords, its databases and its data.
func TestDataPlaneDatabasesAndClone(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("source"))
	const countSales = "select count(*) from pg_database where datname = 'sales'"

	op, err := e.svc.Databases.Insert(e.project, "source", &sqladmin.Database{Name: "sales"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	out, err := e.psqlQuery("source", "PRIMARY", "postgres", rootPassword,
		"select pg_get_userbyid(datdba), pg_encoding_to_char(encoding) from pg_database where datname = 'sales'")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("cloudsqlsuperuser|UTF8"), "databases.insert created the database, owned by Cloud SQL's users")

	op, err = e.svc.Users.Insert(e.project, "source", &sqladmin.User{Name: "app", Password: "app-pw"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	out, err = e.psqlQuery("source", "PRIMARY", "app", "app-pw", "create table orders(v text); insert into orders values ('kept')")
	g.Expect(err).NotTo(HaveOccurred(), out)

	op, err = e.svc.Instances.Clone(e.project, "source", cloneRequest("copy", "")).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	g.Expect(e.get(g, "copy").State).To(Equal(emulator.StateRunnable))

	out, err = e.psqlQuery("copy", "PRIMARY", "postgres", rootPassword, countSales)
	g.Expect(err).NotTo(HaveOccurred(), "the clone takes the source's postgres password: %s", out)
	g.Expect(out).To(Equal("1"), "the clone has the source's databases")
	out, err = e.psqlQuery("copy", "PRIMARY", "app", "app-pw", "select v from orders")
	g.Expect(err).NotTo(HaveOccurred(), "the clone takes the source's users: %s", out)
	g.Expect(out).To(Equal("kept"), "the clone has the source's data")

	op, err = e.svc.Databases.Delete(e.project, "source", "sales").Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	out, err = e.psqlQuery("source", "PRIMARY", "postgres", rootPassword, countSales)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("0"), "databases.delete dropped the database")
	out, err = e.psqlQuery("copy", "PRIMARY", "postgres", rootPassword, countSales)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("1"), "the clone is a copy, apart from its source")
}

// TestDataPlaneDatabasesDeleteRefusesADatabaseInUse holds a session on a
// database, through the server-side proxy as an application would, and
// deletes the database: Cloud SQL refuses while the session lasts, and so
// must the emulator, rather than disconnect it.
func TestDataPlaneDatabasesDeleteRefusesADatabaseInUse(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("busy"))
	op, err := e.svc.Databases.Insert(e.project, "busy", &sqladmin.Database{Name: "sales"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	const sessions = "select count(*) from pg_stat_activity where datname = 'sales'"

	held := make(chan string, 1)
	go func() {
		out, _ := e.psqlIn("busy", "PRIMARY", "postgres", rootPassword, "sales", "select pg_sleep(60)")
		held <- out
	}()
	g.Eventually(func() (string, error) {
		return e.psqlQuery("busy", "PRIMARY", "postgres", rootPassword, sessions)
	}, dataTimeout, 200*time.Millisecond).Should(Equal("1"))

	_, err = e.svc.Databases.Delete(e.project, "busy", "sales").Context(e.ctx).Do()
	gerr := expectAPIError(g, err, http.StatusBadRequest, "invalid")
	g.Expect(gerr.Message).To(Equal(`Invalid request: failed to delete database sales. Detail: pq: database "sales" is being accessed by other users.`))
	_, err = e.svc.Databases.Get(e.project, "busy", "sales").Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred(), "the database is still there")
	g.Expect(held).NotTo(Receive(), "the session was not disconnected")

	out, err := e.psqlQuery("busy", "PRIMARY", "postgres", rootPassword,
		"select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = 'sales'")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Eventually(held, dataTimeout).Should(Receive())
	op, err = e.svc.Databases.Delete(e.project, "busy", "sales").Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred(), "without sessions the database goes")
	e.waitDone(g, op)
	out, err = e.psqlQuery("busy", "PRIMARY", "postgres", rootPassword, "select count(*) from pg_database where datname = 'sales'")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("0"))
}

// TestDataPlaneUsersDeleteRefusesARoleThatOwnsObjects deletes a user that
// owns a database, then one that owns a table in another database: Cloud
// SQL refuses both with PostgreSQL's DROP ROLE error, and so must the
// emulator, leaving the role as it was.
func TestDataPlaneUsersDeleteRefusesARoleThatOwnsObjects(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("owns"))
	op, err := e.svc.Users.Insert(e.project, "owns", &sqladmin.User{Name: "app", Password: "app-pw"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	op, err = e.svc.Databases.Insert(e.project, "owns", &sqladmin.Database{Name: "shared"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	out, err := e.psqlQuery("owns", "PRIMARY", "app", "app-pw", "create database appdb")
	g.Expect(err).NotTo(HaveOccurred(), out)

	_, err = e.svc.Users.Delete(e.project, "owns").Name("app").Context(e.ctx).Do()
	gerr := expectAPIError(g, err, http.StatusBadRequest, "invalid")
	g.Expect(gerr.Message).To(Equal(`Invalid request: failed to delete user app: . role "app" cannot be dropped because some objects depend on it Details: owner of database appdb.`))
	_, err = e.svc.Users.Get(e.project, "owns", "app").Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred(), "the user is still there")

	out, err = e.psqlIn("owns", "PRIMARY", "app", "app-pw", "shared", "create table orders(v text)")
	g.Expect(err).NotTo(HaveOccurred(), out)
	out, err = e.psqlQuery("owns", "PRIMARY", "app", "app-pw", "drop database appdb")
	g.Expect(err).NotTo(HaveOccurred(), "the check rolled back: app still owns and drops its database: %s", out)
	_, err = e.svc.Users.Delete(e.project, "owns").Name("app").Context(e.ctx).Do()
	gerr = expectAPIError(g, err, http.StatusBadRequest, "invalid")
	g.Expect(gerr.Message).To(Equal(`Invalid request: failed to delete user app: . role "app" cannot be dropped because some objects depend on it Details: 1 object in database shared.`))

	out, err = e.psqlIn("owns", "PRIMARY", "app", "app-pw", "shared", "drop table orders")
	g.Expect(err).NotTo(HaveOccurred(), out)
	op, err = e.svc.Users.Delete(e.project, "owns").Name("app").Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred(), "nothing depends on app any more")
	e.waitDone(g, op)
	out, err = e.psql("owns", "PRIMARY", "app", "app-pw")
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring(`password authentication failed for user "app"`))
}

// TestDataPlaneLeastPrivilegeAsOnCloudSQL checks the roles and owners Cloud
// SQL gives (postgres and the users of users.insert: members of
// cloudsqlsuperuser with CREATEROLE and CREATEDB, not superusers; the
// databases of databases.insert: cloudsqlsuperuser's), then takes a user down
// to least privilege as postgres, through the server-side proxy, and proves
// with the user's own login what it may and may not do.
func TestDataPlaneLeastPrivilegeAsOnCloudSQL(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("least"))
	op, err := e.svc.Users.Insert(e.project, "least", &sqladmin.User{Name: "app", Password: "app-pw"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	for _, db := range []string{"appdb", "other"} {
		op, err = e.svc.Databases.Insert(e.project, "least", &sqladmin.Database{Name: db}).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		e.waitDone(g, op)
	}
	c, err := e.connector("least", "PRIMARY")
	g.Expect(err).NotTo(HaveOccurred())
	asPostgres := func(query string) string {
		out, err := c.psql("postgres", rootPassword, query)
		g.ExpectWithOffset(1, err).NotTo(HaveOccurred(), "as postgres: %s: %s", query, out)
		return out
	}
	const attributes = "select rolsuper, rolcreaterole, rolcreatedb, pg_has_role(rolname, 'cloudsqlsuperuser', 'member') from pg_roles where rolname = current_user"

	// What Cloud SQL gives.
	g.Expect(asPostgres(attributes)).To(Equal("f|t|t|t"), "postgres: no superuser, CREATEROLE, CREATEDB, in cloudsqlsuperuser")
	out, err := c.psql("app", "app-pw", attributes)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("f|t|t|t"), "a user of users.insert has what postgres has")
	g.Expect(asPostgres("select datname, pg_get_userbyid(datdba) from pg_database where datname in ('appdb', 'other') order by 1")).
		To(Equal("appdb|cloudsqlsuperuser\nother|cloudsqlsuperuser"), "databases.insert makes cloudsqlsuperuser the owner")

	// Least privilege, as postgres.
	asPostgres("REVOKE cloudsqlsuperuser FROM app")
	asPostgres("ALTER ROLE app NOCREATEROLE NOCREATEDB")
	// postgres is no superuser: giving a database to a role takes
	// membership in that role, as PostgreSQL requires of everyone else.
	out, err = c.psql("postgres", rootPassword, "ALTER DATABASE appdb OWNER TO app")
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring(`must be member of role "app"`))
	asPostgres("GRANT app TO postgres")
	asPostgres("ALTER DATABASE appdb OWNER TO app")
	// While a member of the owner, postgres revokes as the owner would.
	asPostgres("REVOKE CONNECT, TEMPORARY ON DATABASE appdb FROM PUBLIC")
	asPostgres("REVOKE app FROM postgres")
	asPostgres("REVOKE CONNECT, TEMPORARY ON DATABASE other FROM PUBLIC")
	g.Expect(asPostgres("select datname, pg_get_userbyid(datdba), has_database_privilege('public', oid, 'CONNECT') from pg_database where datname in ('appdb', 'other') order by 1")).
		To(Equal("appdb|app|f\nother|cloudsqlsuperuser|f"))
	g.Expect(asPostgres("select pg_has_role('postgres', 'app', 'member')")).To(Equal("f"), "postgres gave its membership back")

	// What the user may do now, with its own login.
	out, err = c.psqlIn("app", "app-pw", "appdb", attributes)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("f|f|f|f"), "no superuser, no CREATEROLE, no CREATEDB, not in cloudsqlsuperuser")
	out, err = c.psqlIn("app", "app-pw", "appdb", "create table orders(v text); insert into orders values ('mine'); select v from orders")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(HaveSuffix("\nmine"), "the owner uses its database")
	out, err = c.psqlIn("app", "app-pw", "appdb", "create role intruder")
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("permission denied to create role"))
	out, err = c.psqlIn("app", "app-pw", "appdb", "create database intruder")
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("permission denied to create database"))
	out, err = c.psqlIn("app", "app-pw", "other", "select 1")
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring(`permission denied for database "other"`))
	out, err = c.psqlIn("app", "app-pw", "appdb", "grant cloudsqlsuperuser to app")
	g.Expect(err).To(HaveOccurred(), "the user can't take its privileges back: %s", out)

	// The user owns appdb now, so Cloud SQL won't delete it.
	_, err = e.svc.Users.Delete(e.project, "least").Name("app").Context(e.ctx).Do()
	gerr := expectAPIError(g, err, http.StatusBadRequest, "invalid")
	g.Expect(gerr.Message).To(ContainSubstring("owner of database appdb"))
}
