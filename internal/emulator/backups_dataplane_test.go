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

// TestDataPlaneBackupHoldsTheRowsOfItsTime writes rows, takes a backup,
// writes more, and reads the backup: it holds exactly the first rows, also
// as the FINAL backup of a deleted instance.
func TestDataPlaneBackupHoldsTheRowsOfItsTime(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("orders"))
	const selectRows = "select v from items order by v"

	out, err := e.psqlQuery("orders", "PRIMARY", "postgres", rootPassword,
		"create table items(v text); insert into items values ('first'), ('second')")
	g.Expect(err).NotTo(HaveOccurred(), out)
	op, err := e.svc.BackupRuns.Insert(e.project, "orders", &sqladmin.BackupRun{}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	out, err = e.psqlQuery("orders", "PRIMARY", "postgres", rootPassword, "insert into items values ('third')")
	g.Expect(err).NotTo(HaveOccurred(), out)

	rows, err := e.emu.BackupQuery(e.ctx, e.project, op.BackupContext.BackupId, "postgres", selectRows)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows).To(Equal("first\nsecond"), "the backup holds the rows written before it, none after")
	run, err := e.svc.BackupRuns.Get(e.project, "orders", op.BackupContext.BackupId).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(run.MaxChargeableBytes).To(BeNumerically(">", 0), "a backup with data has its size")

	op, err = e.svc.Instances.Delete(e.project, "orders").EnableFinalBackup(true).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	list, err := e.svc.Backups.ListBackups("projects/" + e.project).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(list.Backups).To(HaveLen(1))
	final := list.Backups[0]
	g.Expect(final.Type).To(Equal(emulator.BackupFinal))
	id := backupID(g, final)
	rows, err = e.emu.BackupQuery(e.ctx, e.project, id, "postgres", selectRows)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows).To(Equal("first\nsecond\nthird"), "the final backup holds the rows at the deletion")
}
