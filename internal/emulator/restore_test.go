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
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// restoreSettings is a restoreInstanceSettings body for a new instance.
func restoreSettings(mutators ...func(*sqladmin.DatabaseInstance)) *sqladmin.DatabaseInstance {
	db := &sqladmin.DatabaseInstance{
		RootPassword: "not-the-one-restored",
		Settings:     &sqladmin.Settings{Tier: "db-custom-2-7680", UserLabels: map[string]string{"owner": "restored"}},
	}
	for _, m := range mutators {
		m(db)
	}
	return db
}

// seedContents gives an instance a user and a database, as a backup of it
// then keeps them.
func (e *env) seedContents(instance string) {
	e.t.Helper()
	op, err := e.svc.Users.Insert(project, instance, &sqladmin.User{Name: "app", Password: "app-secret"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.operation(op.Name).Status).To(Equal(emulator.OperationDone))
	op, err = e.svc.Databases.Insert(project, instance, &sqladmin.Database{Name: "sales"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.operation(op.Name).Status).To(Equal(emulator.OperationDone))
}

// expectBackupContents expects an instance to have the users and databases
// that seedContents gave the instance backed up, and its postgres password.
func (e *env) expectBackupContents(instance string) {
	e.t.Helper()
	users, err := e.emu.UserNames(project, instance)
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(users).To(ConsistOf("postgres", "app"))
	dbs, err := e.emu.DatabaseNames(project, instance)
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(dbs).To(ConsistOf("postgres", "sales"))
	e.g.Expect(e.emu.PasswordIs(project, instance, "app", "app-secret")).To(BeTrue())
	e.g.Expect(e.emu.PasswordIs(project, instance, "postgres", rootPassword)).To(BeTrue(),
		"postgres keeps the backup's password, not rootPassword")
}

func TestRestoreABackupRunIntoANewInstance(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.seedContents("orders")
	run := e.backupNow("orders")

	op, err := e.svc.Instances.RestoreBackup(project, "orders-restored", &sqladmin.InstancesRestoreBackupRequest{
		RestoreBackupContext:    &sqladmin.RestoreBackupContext{BackupRunId: run.Id, InstanceId: "orders", Project: project},
		RestoreInstanceSettings: restoreSettings(),
	}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal(emulator.OpRestoreVolume))
	e.g.Expect(op.TargetId).To(Equal("orders-restored"))
	e.g.Expect(e.operation(op.Name).Status).To(Equal(emulator.OperationDone))

	got := e.get("orders-restored")
	e.g.Expect(got.State).To(Equal(emulator.StateRunnable))
	e.g.Expect(got.DatabaseVersion).To(Equal("POSTGRES_15"))
	e.g.Expect(got.Settings.Tier).To(Equal("db-custom-2-7680"), "the settings are restoreInstanceSettings'")
	e.g.Expect(got.Settings.UserLabels).To(Equal(map[string]string{"owner": "restored"}))
	e.expectBackupContents("orders-restored")
}

func TestRestoreARetainedBackupOfADeletedInstance(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", func(db *sqladmin.DatabaseInstance) { db.Settings.RetainBackupsOnDelete = true })
	e.seedContents("orders")
	run := e.backupNow("orders")
	op, err := e.svc.Instances.Delete(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.operation(op.Name).Status).To(Equal(emulator.OperationDone))

	// The name of the deleted instance is reserved; another one is free.
	op, err = e.svc.Instances.RestoreBackup(project, "orders-2", &sqladmin.InstancesRestoreBackupRequest{
		Backup:                  "projects/" + project + "/backups/" + strconv.FormatInt(run.Id, 10),
		RestoreInstanceSettings: restoreSettings(),
	}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal(emulator.OpRestoreVolume))
	e.g.Expect(e.get("orders-2").State).To(Equal(emulator.StateRunnable))
	e.expectBackupContents("orders-2")
}

func TestRestoreOverAnExistingInstance(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.seedContents("orders")
	run := e.backupNow("orders")
	op, err := e.svc.Users.Delete(project, "orders").Name("app").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.operation(op.Name).Status).To(Equal(emulator.OperationDone))

	op, err = e.svc.Instances.RestoreBackup(project, "orders", &sqladmin.InstancesRestoreBackupRequest{
		RestoreBackupContext: &sqladmin.RestoreBackupContext{BackupRunId: run.Id},
	}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal(emulator.OpRestoreVolume))
	e.g.Expect(e.operation(op.Name).Status).To(Equal(emulator.OperationDone))
	e.expectBackupContents("orders")
}

func TestRestoreBackupRefusals(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.insert("taken")
	e.insert("old")
	good := e.backupNow("orders")
	e.g.Expect(e.emu.FailNextBackup(project, "orders", "")).To(Succeed())
	failed := e.backupNow("orders")
	op, err := e.svc.Instances.Delete(project, "old").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.operation(op.Name).Status).To(Equal(emulator.OperationDone))
	byRun := func(id int64) *sqladmin.RestoreBackupContext {
		return &sqladmin.RestoreBackupContext{BackupRunId: id, InstanceId: "orders", Project: project}
	}

	cases := map[string]struct {
		target string
		req    *sqladmin.InstancesRestoreBackupRequest
		code   int
		want   string
	}{
		"a live name is taken": {
			target: "taken", code: http.StatusConflict, want: emulator.ReasonInstanceAlreadyExists,
			req: &sqladmin.InstancesRestoreBackupRequest{RestoreBackupContext: byRun(good.Id), RestoreInstanceSettings: restoreSettings()},
		},
		"a deleted instance's name is reserved": {
			target: "old", code: http.StatusConflict, want: emulator.ReasonInstanceAlreadyExists,
			req: &sqladmin.InstancesRestoreBackupRequest{RestoreBackupContext: byRun(good.Id), RestoreInstanceSettings: restoreSettings()},
		},
		"the version must be the backup's": {
			target: "new", code: http.StatusBadRequest, want: emulator.ReasonInvalid,
			req: &sqladmin.InstancesRestoreBackupRequest{RestoreBackupContext: byRun(good.Id),
				RestoreInstanceSettings: restoreSettings(withVersion("POSTGRES_16"))},
		},
		"an unknown backup is not found": {
			target: "new", code: http.StatusNotFound, want: emulator.ReasonNotFound,
			req: &sqladmin.InstancesRestoreBackupRequest{Backup: "projects/" + project + "/backups/42", RestoreInstanceSettings: restoreSettings()},
		},
		"an unknown backup run does not exist": {
			target: "new", code: http.StatusNotFound, want: emulator.ReasonBackupRunDoesNotExist,
			req: &sqladmin.InstancesRestoreBackupRequest{RestoreBackupContext: byRun(42), RestoreInstanceSettings: restoreSettings()},
		},
		"a failed backup can't be restored": {
			target: "new", code: http.StatusBadRequest, want: emulator.ReasonInvalid,
			req: &sqladmin.InstancesRestoreBackupRequest{RestoreBackupContext: byRun(failed.Id), RestoreInstanceSettings: restoreSettings()},
		},
		"one source is needed": {
			target: "new", code: http.StatusBadRequest, want: emulator.ReasonInvalid,
			req: &sqladmin.InstancesRestoreBackupRequest{RestoreInstanceSettings: restoreSettings()},
		},
		"a restore over an instance that does not exist": {
			target: "new", code: http.StatusNotFound, want: emulator.ReasonInstanceDoesNotExist,
			req: &sqladmin.InstancesRestoreBackupRequest{RestoreBackupContext: byRun(good.Id)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := e.svc.Instances.RestoreBackup(project, tc.target, tc.req).Do()
			expectAPIError(g, err, tc.code, tc.want)
			if tc.target == "new" {
				_, err = e.svc.Instances.Get(project, "new").Do()
				expectAPIError(g, err, http.StatusNotFound, emulator.ReasonInstanceDoesNotExist)
			}
		})
	}
}
