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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

func withBackups(enabled, pitr bool, retained int64) func(*sqladmin.DatabaseInstance) {
	return func(db *sqladmin.DatabaseInstance) {
		db.Settings.BackupConfiguration = &sqladmin.BackupConfiguration{
			Enabled: enabled, PointInTimeRecoveryEnabled: pitr, TransactionLogRetentionDays: 3,
			BackupRetentionSettings: &sqladmin.BackupRetentionSettings{RetentionUnit: "COUNT", RetainedBackups: retained},
		}
	}
}

// backupNow takes an on-demand backup and returns its run once DONE.
func (e *env) backupNow(instance string) *sqladmin.BackupRun {
	e.t.Helper()
	op, err := e.svc.BackupRuns.Insert(project, instance, &sqladmin.BackupRun{Description: "before the migration"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal(emulator.OpBackupVolume))
	e.g.Expect(op.BackupContext).NotTo(BeNil())
	e.g.Expect(e.operation(op.Name).Status).To(Equal(emulator.OperationDone))
	run, err := e.svc.BackupRuns.Get(project, instance, op.BackupContext.BackupId).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	return run
}

func TestOnDemandBackupRunsAreListedAndDeleted(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	run := e.backupNow("orders")
	e.g.Expect(run.Type).To(Equal(emulator.BackupOnDemand))
	e.g.Expect(run.Status).To(Equal(emulator.BackupSuccessful))
	e.g.Expect(run.Description).To(Equal("before the migration"))
	e.g.Expect(run.Instance).To(Equal("orders"))
	e.g.Expect(run.EndTime).NotTo(BeEmpty())
	second := e.backupNow("orders")

	list, err := e.svc.BackupRuns.List(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Items).To(HaveLen(2))
	e.g.Expect(list.Items[0].Id).To(Equal(second.Id), "newest first")

	op, err := e.svc.BackupRuns.Delete(project, "orders", run.Id).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal(emulator.OpDeleteBackup))
	_, err = e.svc.BackupRuns.Get(project, "orders", run.Id).Do()
	expectAPIError(e.g, err, http.StatusNotFound, emulator.ReasonBackupRunDoesNotExist)
	_, err = e.svc.BackupRuns.Insert(project, "ghost", &sqladmin.BackupRun{}).Do()
	expectAPIError(e.g, err, http.StatusNotFound, emulator.ReasonInstanceDoesNotExist)
}

func TestBackupRunTakesTimeAndConflictsMeanwhile(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(0, 10*time.Minute, 0))
	e.insert("orders")
	op, err := e.svc.BackupRuns.Insert(project, "orders", &sqladmin.BackupRun{}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	run, err := e.svc.BackupRuns.Get(project, "orders", op.BackupContext.BackupId).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(run.Status).To(Equal(emulator.BackupEnqueued))
	_, err = e.svc.Instances.Delete(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusConflict, emulator.ReasonOperationInProgress)
	e.clk.Advance(5 * time.Minute)
	run, _ = e.svc.BackupRuns.Get(project, "orders", run.Id).Do()
	e.g.Expect(run.Status).To(Equal(emulator.BackupRunning))
	e.clk.Advance(5 * time.Minute)
	run, _ = e.svc.BackupRuns.Get(project, "orders", run.Id).Do()
	e.g.Expect(run.Status).To(Equal(emulator.BackupSuccessful))
}

// The insert's operation names its run in backupContext.backupId, as Cloud
// SQL's does, from its first answer; while a run's delete runs the run is
// DELETION_PENDING, and it is gone once the delete is DONE. Without a data
// plane a run has no size.
func TestBackupRunDeletionIsPendingWhileItRuns(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(0, 10*time.Minute, 0))
	e.insert("orders")
	op, err := e.svc.BackupRuns.Insert(project, "orders", &sqladmin.BackupRun{}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.Status).To(Equal(emulator.OperationPending))
	e.g.Expect(op.BackupContext).To(HaveField("BackupId", Not(BeZero())))
	e.clk.Advance(10 * time.Minute)
	run, err := e.svc.BackupRuns.Get(project, "orders", op.BackupContext.BackupId).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(run.Status).To(Equal(emulator.BackupSuccessful))
	e.g.Expect(run.MaxChargeableBytes).To(BeZero(), "no data, no size")

	del, err := e.svc.BackupRuns.Delete(project, "orders", run.Id).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(del.BackupContext).To(HaveField("BackupId", run.Id))
	run, err = e.svc.BackupRuns.Get(project, "orders", run.Id).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(run.Status).To(Equal(emulator.BackupDeletionPending))
	e.clk.Advance(10 * time.Minute)
	_, err = e.svc.BackupRuns.Get(project, "orders", run.Id).Do()
	expectAPIError(e.g, err, http.StatusNotFound, emulator.ReasonBackupRunDoesNotExist)
}

func TestInjectedBackupFailure(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.g.Expect(e.emu.FailNextBackup(project, "orders", "disk full")).To(Succeed())
	op, err := e.svc.BackupRuns.Insert(project, "orders", &sqladmin.BackupRun{}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	done := e.operation(op.Name)
	e.g.Expect(done.Error).NotTo(BeNil())
	e.g.Expect(done.Error.Errors[0].Message).To(Equal("disk full"))
	run, err := e.svc.BackupRuns.Get(project, "orders", op.BackupContext.BackupId).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(run.Status).To(Equal(emulator.BackupFailed))
	e.g.Expect(run.Error.Message).To(Equal("disk full"))

	// Only the next one fails.
	e.g.Expect(e.backupNow("orders").Status).To(Equal(emulator.BackupSuccessful))

	// And through the admin surface.
	resp, err := http.Post(e.url+"/emulator/v1/projects/"+project+"/instances/orders:failNextBackup", "application/json", nil)
	e.g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	e.g.Expect(resp.StatusCode).To(Equal(http.StatusNoContent))
	e.g.Expect(e.backupNow("orders").Status).To(Equal(emulator.BackupFailed))

	// A failed automated run is listed with Cloud SQL's error, whole.
	e.g.Expect(e.emu.FailNextBackup(project, "orders", "")).To(Succeed())
	_, err = e.emu.RunBackupWindow(project, "orders")
	e.g.Expect(err).NotTo(HaveOccurred())
	list, err := e.svc.BackupRuns.List(project, "orders").MaxResults(1).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Items).To(HaveLen(1))
	newest := list.Items[0]
	e.g.Expect(newest.Type).To(Equal(emulator.BackupAutomated))
	e.g.Expect(newest.Status).To(Equal(emulator.BackupFailed))
	e.g.Expect(newest.EndTime).NotTo(BeEmpty())
	e.g.Expect(newest.Error).To(Equal(&sqladmin.OperationError{Kind: "sql#operationError", Code: "INTERNAL_ERROR",
		Message: "An unknown error occurred while taking the backup."}))
}

func TestAutomatedBackupsFollowTheWindowAndRetention(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", withBackups(true, false, 2))
	// The fake clock starts at 10:00; the window is 12:00 each day.
	e.clk.Advance(3 * 24 * time.Hour)
	list, err := e.svc.BackupRuns.List(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Items).To(HaveLen(2), "retainedBackups is 2")
	for _, r := range list.Items {
		e.g.Expect(r.Type).To(Equal(emulator.BackupAutomated))
		e.g.Expect(r.Status).To(Equal(emulator.BackupSuccessful))
	}
	e.g.Expect(list.Items[0].WindowStartTime).To(Equal("2026-03-03T12:00:00.000Z"))

	// An on-demand backup is not counted, and the admin surface runs a window.
	e.backupNow("orders")
	run, err := e.emu.RunBackupWindow(project, "orders")
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(run.Type).To(Equal(emulator.BackupAutomated))
	list, _ = e.svc.BackupRuns.List(project, "orders").Do()
	e.g.Expect(list.Items).To(HaveLen(3))

	// Without backups enabled no window takes one.
	e.insert("scratch")
	e.clk.Advance(3 * 24 * time.Hour)
	list, _ = e.svc.BackupRuns.List(project, "scratch").Do()
	e.g.Expect(list.Items).To(BeEmpty())
}

func TestDeleteKeepsFinalAndRetainedBackups(t *testing.T) {
	e := newEnv(t)
	e.insert("kept", func(db *sqladmin.DatabaseInstance) { db.Settings.RetainBackupsOnDelete = true })
	e.insert("final")
	e.insert("gone")
	kept := e.backupNow("kept")
	e.backupNow("final")
	e.backupNow("gone")
	e.g.Expect(e.get("kept").Settings.RetainBackupsOnDelete).To(BeTrue())

	_, err := e.svc.Instances.Delete(project, "kept").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.svc.Instances.Delete(project, "final").EnableFinalBackup(true).FinalBackupTtlDays(7).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.svc.Instances.Delete(project, "gone").Do()
	e.g.Expect(err).NotTo(HaveOccurred())

	list, err := e.svc.Backups.ListBackups("projects/" + project).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	byInstance := map[string][]*sqladmin.Backup{}
	for _, b := range list.Backups {
		byInstance[b.Instance] = append(byInstance[b.Instance], b)
	}
	e.g.Expect(byInstance["gone"]).To(BeEmpty(), "without retention backups go with the instance")
	e.g.Expect(byInstance["kept"]).To(HaveLen(1))
	e.g.Expect(byInstance["kept"][0].InstanceDeletionTime).NotTo(BeEmpty())
	e.g.Expect(byInstance["final"]).To(HaveLen(1), "only the FINAL backup outlives an instance without retention")
	final := byInstance["final"][0]
	e.g.Expect(final.Type).To(Equal(emulator.BackupFinal))
	e.g.Expect(final.State).To(Equal(emulator.BackupSuccessful))
	e.g.Expect(final.ExpiryTime).To(Equal("2026-03-08T10:00:00.000Z"))
	e.g.Expect(final.InstanceSettings.Name).To(Equal("final"))

	got, err := e.svc.Backups.GetBackup(byInstance["kept"][0].Name).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(got.BackupRun).To(HaveSuffix("/instances/kept/backupRuns/" + strconv.FormatInt(kept.Id, 10)))
	op, err := e.svc.Backups.DeleteBackup(got.Name).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal(emulator.OpDeleteBackup))
	_, err = e.svc.Backups.GetBackup(got.Name).Do()
	expectAPIError(e.g, err, http.StatusNotFound, emulator.ReasonNotFound)

	// The final backup expires.
	e.clk.Advance(8 * 24 * time.Hour)
	list, _ = e.svc.Backups.ListBackups("projects/" + project).Do()
	e.g.Expect(list.Backups).To(BeEmpty())
}

func TestFinalBackupConfigTakesOneUnlessTheDeleteSaysNo(t *testing.T) {
	e := newEnv(t)
	cfg := func(db *sqladmin.DatabaseInstance) {
		db.Settings.FinalBackupConfig = &sqladmin.FinalBackupConfig{Enabled: true, RetentionDays: 10}
	}
	e.insert("a", cfg)
	e.insert("b", cfg)
	_, err := e.svc.Instances.Delete(project, "a").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.svc.Instances.Delete(project, "b").EnableFinalBackup(false).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	list, err := e.svc.Backups.ListBackups("projects/" + project).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Backups).To(HaveLen(1))
	e.g.Expect(list.Backups[0].Instance).To(Equal("a"))
	e.g.Expect(list.Backups[0].ExpiryTime).To(Equal("2026-03-11T10:00:00.000Z"))
}

func TestDeleteRejectsInvalidFinalBackupParameters(t *testing.T) {
	cases := map[string]string{
		"TTLTooLong":        "enableFinalBackup=true&finalBackupTtlDays=366",
		"TTLZero":           "enableFinalBackup=true&finalBackupTtlDays=0",
		"BothTTLAndExpiry":  "enableFinalBackup=true&finalBackupTtlDays=3&finalBackupExpiryTime=2026-03-05T00:00:00Z",
		"ExpiryInThePast":   "enableFinalBackup=true&finalBackupExpiryTime=2020-01-01T00:00:00Z",
		"ExpiryMalformed":   "enableFinalBackup=true&finalBackupExpiryTime=tomorrow",
		"FlagNotABool":      "enableFinalBackup=yes-please",
		"ExpiryBeyondAYear": "enableFinalBackup=true&finalBackupExpiryTime=2027-06-01T00:00:00Z",
	}
	for name, query := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.insert("orders")
			req, _ := http.NewRequest(http.MethodDelete, e.url+"/sql/v1beta4/projects/"+project+"/instances/orders?"+query, nil)
			resp, err := http.DefaultClient.Do(req)
			e.g.Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			e.g.Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), readBody(e.g, resp))
			e.g.Expect(e.get("orders").State).To(Equal(emulator.StateRunnable))
		})
	}
}

func TestLatestRecoveryTimeNeedsPointInTimeRecovery(t *testing.T) {
	e := newEnv(t)
	e.insert("plain")
	_, err := e.svc.Projects.Instances.GetLatestRecoveryTime(project, "plain").Do()
	expectAPIError(e.g, err, http.StatusBadRequest, emulator.ReasonInvalid)

	e.insert("pitr", withBackups(true, true, 7))
	e.clk.Advance(5 * 24 * time.Hour)
	got, err := e.svc.Projects.Instances.GetLatestRecoveryTime(project, "pitr").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(got.LatestRecoveryTime).To(Equal("2026-03-06T10:00:00.000Z"))
	e.g.Expect(got.EarliestRecoveryTime).To(Equal("2026-03-03T10:00:00.000Z"), "transactionLogRetentionDays is 3")

	// Turned on later, it reaches back to then.
	_, err = e.svc.Instances.Patch(project, "plain", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		BackupConfiguration: &sqladmin.BackupConfiguration{Enabled: true, PointInTimeRecoveryEnabled: true},
	}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.clk.Advance(time.Hour)
	got, err = e.svc.Projects.Instances.GetLatestRecoveryTime(project, "plain").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(got.EarliestRecoveryTime).To(Equal("2026-03-06T10:00:00.000Z"))
}

func TestBackupConfigurationIsStoredAsSent(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", func(db *sqladmin.DatabaseInstance) {
		db.Settings.BackupConfiguration = &sqladmin.BackupConfiguration{
			Enabled: true, PointInTimeRecoveryEnabled: true, TransactionLogRetentionDays: 2, Location: "eu",
			BackupRetentionSettings: &sqladmin.BackupRetentionSettings{RetentionUnit: "COUNT", RetainedBackups: 30},
		}
	})
	bc := e.get("orders").Settings.BackupConfiguration
	e.g.Expect(bc.PointInTimeRecoveryEnabled).To(BeTrue())
	e.g.Expect(bc.TransactionLogRetentionDays).To(Equal(int64(2)))
	e.g.Expect(bc.Location).To(Equal("eu"))
	e.g.Expect(bc.BackupRetentionSettings.RetainedBackups).To(Equal(int64(30)))
	e.g.Expect(e.backupNow("orders").Location).To(Equal("eu"))
}

// backupID is the backup run ID in a backup's name.
func backupID(g Gomega, b *sqladmin.Backup) int64 {
	id, err := strconv.ParseInt(b.Name[strings.LastIndex(b.Name, "/")+1:], 10, 64)
	g.Expect(err).NotTo(HaveOccurred())
	return id
}
