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
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// TestDataPlaneRestoreBackup restores a backup into a new instance, by its
// backup run and, once its instance is deleted, by its retained backup's
// name, and over an instance: each holds the backup's rows, and its logins
// work with the passwords they had when the backup was taken.
func TestDataPlaneRestoreBackup(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("orders", func(db *sqladmin.DatabaseInstance) { db.Settings.RetainBackupsOnDelete = true }))
	const selectRows = "select v from items order by v"
	op, err := e.svc.Users.Insert(e.project, "orders", &sqladmin.User{Name: "app", Password: "app-secret"}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	out, err := e.psqlQuery("orders", "PRIMARY", "postgres", rootPassword,
		"create table items(v text); insert into items values ('first'); grant select on items to app")
	g.Expect(err).NotTo(HaveOccurred(), out)
	op, err = e.svc.BackupRuns.Insert(e.project, "orders", &sqladmin.BackupRun{}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	id := op.BackupContext.BackupId
	out, err = e.psqlQuery("orders", "PRIMARY", "postgres", rootPassword, "insert into items values ('second')")
	g.Expect(err).NotTo(HaveOccurred(), out)

	expectBackupRows := func(instance string) {
		out, err := e.psqlQuery(instance, "PRIMARY", "app", "app-secret", selectRows)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal("first"), "%s holds the backup's rows, and app logs in with its password", instance)
		out, err = e.psqlQuery(instance, "PRIMARY", "postgres", rootPassword, "select 1")
		g.Expect(err).NotTo(HaveOccurred(), "%s: postgres has the backup's password, not rootPassword: %s", instance, out)
	}
	restore := func(instance string, req *sqladmin.InstancesRestoreBackupRequest) {
		op, err := e.svc.Instances.RestoreBackup(e.project, instance, req).Context(e.ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(op.OperationType).To(Equal(emulator.OpRestoreVolume))
		e.waitDone(g, op)
		g.Expect(e.get(g, instance).State).To(Equal(emulator.StateRunnable))
	}
	settings := &sqladmin.DatabaseInstance{
		RootPassword: "not-the-one-restored",
		Settings:     &sqladmin.Settings{Tier: "db-custom-1-3840"},
	}

	restore("orders-restored", &sqladmin.InstancesRestoreBackupRequest{
		RestoreBackupContext:    &sqladmin.RestoreBackupContext{BackupRunId: id, InstanceId: "orders", Project: e.project},
		RestoreInstanceSettings: settings,
	})
	expectBackupRows("orders-restored")

	out, err = e.psqlQuery("orders-restored", "PRIMARY", "postgres", rootPassword, "insert into items values ('later')")
	g.Expect(err).NotTo(HaveOccurred(), out)
	restore("orders-restored", &sqladmin.InstancesRestoreBackupRequest{Backup: "projects/" + e.project + "/backups/" + strconv.FormatInt(id, 10)})
	expectBackupRows("orders-restored")

	op, err = e.svc.Instances.Delete(e.project, "orders").Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	restore("orders-again", &sqladmin.InstancesRestoreBackupRequest{
		Backup:                  "projects/" + e.project + "/backups/" + strconv.FormatInt(id, 10),
		RestoreInstanceSettings: settings,
	})
	expectBackupRows("orders-again")
}
