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

// TestDataPlaneUpgradeKeepsRowsAndLogins patches databaseVersion from 15 to
// 16, as an in-place major upgrade: the instance reports the new major, and
// its rows and every login, a second user's included, are still there, as
// pg_upgrade keeps them.
func TestDataPlaneUpgradeKeepsRowsAndLogins(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("orders"))
	op, err := e.svc.Users.Insert(e.project, "orders", &sqladmin.User{Name: "app", Password: "app-secret"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	out, err := e.psqlQuery("orders", "PRIMARY", "postgres", rootPassword,
		"create table items(v text); insert into items values ('kept'); grant select on items to app")
	g.Expect(err).NotTo(HaveOccurred(), out)

	op, err = e.svc.Instances.Patch(e.project, "orders", &sqladmin.DatabaseInstance{DatabaseVersion: "POSTGRES_16"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	got := e.get(g, "orders")
	g.Expect(got.State).To(Equal(emulator.StateRunnable))
	g.Expect(got.DatabaseVersion).To(Equal("POSTGRES_16"))
	g.Expect(got.DatabaseInstalledVersion).To(HavePrefix("POSTGRES_16_"))
	g.Expect(got.MaintenanceVersion).To(HavePrefix("POSTGRES_16_"))
	g.Expect(got.UpgradableDatabaseVersions).NotTo(ContainElement(HaveField("MajorVersion", "POSTGRES_16")))
	g.Expect(got.UpgradableDatabaseVersions).To(ContainElement(HaveField("MajorVersion", "POSTGRES_17")))

	out, err = e.psqlQuery("orders", "PRIMARY", "app", "app-secret", "select v from items")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("kept"), "the rows and the second user's login survive the upgrade")
	out, err = e.psqlQuery("orders", "PRIMARY", "postgres", rootPassword, "select count(*) from items")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("1"))
}
