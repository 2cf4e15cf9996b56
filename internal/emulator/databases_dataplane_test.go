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
	"testing"

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
