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

package integration_test

import (
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// healthPoll is the backup-health interval of these tests.
const healthPoll = 2 * time.Second

// A failed automated backup turns BackupsHealthy False, with Cloud SQL's
// error, within one health poll; the next success turns it True again. The
// instance stays Ready throughout, and each health poll costs one
// backupRuns.list.
func TestFailedBackupTurnsBackupsHealthyFalse(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			testFailedBackupTurnsBackupsHealthyFalse(newHarness(t, withIntervals(time.Second, 100*time.Millisecond), withHealth(healthPoll)).of(k))
		})
	}
}

func testFailedBackupTurnsBackupsHealthyFalse(h kindHarness) {
	pi := h.create(h.instance("backed-up"))
	name := cloudsql.InstanceName(pi)
	_, err := h.emu.RunBackupWindow(h.project, name)
	h.g.Expect(err).NotTo(HaveOccurred())
	health := func(g Gomega) xpv2.Condition { return h.condition(pi.GetName(), v1alpha1.BackupsHealthy) }
	h.g.Eventually(health, 3*healthPoll, 50*time.Millisecond).Should(HaveField("Reason", v1alpha1.ReasonBackupSucceeded))

	h.g.Expect(h.emu.FailNextBackup(h.project, name, "Backup failed: the disk is full")).To(Succeed())
	failed, err := h.emu.RunBackupWindow(h.project, name)
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(failed.Error).NotTo(BeNil(), "a FAILED run carries Cloud SQL's error")
	start := time.Now()
	h.g.Eventually(health, 2*healthPoll, 50*time.Millisecond).Should(And(
		HaveField("Status", corev1.ConditionFalse),
		HaveField("Reason", v1alpha1.ReasonBackupFailed),
		HaveField("Message", ContainSubstring("Backup failed: the disk is full"))))
	h.t.Logf("BackupsHealthy turned False %s after the failed backup (health poll %s)", time.Since(start).Round(time.Millisecond), healthPoll)
	got := h.get(pi.GetName())
	h.g.Expect(got.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), "a failed backup does not make the instance unready")
	b := got.Observation().Backups
	h.g.Expect(b).NotTo(BeNil())
	h.g.Expect(b.LastRun).NotTo(BeNil())
	h.g.Expect(b.LastRun.Error).To(ContainSubstring("the disk is full"))
	h.g.Expect(b.LastSuccessful).NotTo(BeNil())

	_, err = h.emu.RunBackupWindow(h.project, name)
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Eventually(health, 2*healthPoll, 50*time.Millisecond).Should(HaveField("Status", corev1.ConditionTrue))

	// What the reads cost: about one backupRuns.list a health poll, no
	// getLatestRecoveryTime while point-in-time recovery is off.
	before, start := h.calls(emulator.MethodBackupRunsList, name), time.Now()
	time.Sleep(3 * healthPoll)
	reads := h.calls(emulator.MethodBackupRunsList, name) - before
	polls := int(time.Since(start)/healthPoll) + 1
	h.g.Expect(reads).To(BeNumerically("<=", polls), "backupRuns.list more often than once a health poll")
	h.g.Expect(h.calls(emulator.MethodInstancesLatestRecovery, name)).To(BeZero())
}

// The maintenance plan is set through the spec (one patch) and the scheduled
// maintenance shows in the status without a request of its own.
func TestMaintenancePlan(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			h := newHarness(t, withIntervals(time.Second, 100*time.Millisecond)).of(k)
			pi := h.create(h.instance("planned"))
			name := cloudsql.InstanceName(pi)
			h.g.Expect(h.calls(emulator.MethodInstancesPatch, name)).To(BeZero(), "an instance without a plan gets no patch")

			h.update(pi.GetName(), func(o object) {
				o.Parameters().Maintenance.UpdateTrack = "week5"
				o.Parameters().Maintenance.DenyPeriods = &[]v1alpha1.DenyPeriod{{StartDate: "12-01", EndDate: "01-15", Time: "00:00:00"}}
			})
			h.g.Eventually(func(g Gomega) {
				db, err := h.svc().Instances.Get(h.project, name).Do()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(db.Settings.MaintenanceWindow).NotTo(BeNil())
				g.Expect(db.Settings.MaintenanceWindow.UpdateTrack).To(Equal("week5"))
				g.Expect(db.Settings.DenyMaintenancePeriods).To(HaveLen(1))
			}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
			h.waitReady(pi.GetName())
			h.g.Expect(h.calls(emulator.MethodInstancesPatch, name)).To(Equal(1))

			h.g.Expect(h.emu.ScheduleMaintenance(h.project, name, &sqladmin.SqlScheduledMaintenance{
				StartTime: "2026-12-24T02:00:00Z"})).To(MatchError(emulator.ErrMaintenanceDenied), "not in the deny period")
			h.g.Expect(h.emu.ScheduleMaintenance(h.project, name, &sqladmin.SqlScheduledMaintenance{
				StartTime: "2026-03-20T02:00:00Z", CanDefer: true})).To(Succeed())
			h.poke(pi.GetName(), 1)
			h.g.Eventually(func(g Gomega) {
				sm := h.get(pi.GetName()).Observation().ScheduledMaintenance
				g.Expect(sm).NotTo(BeNil())
				g.Expect(sm.CanDefer).To(BeTrue())
				g.Expect(sm.StartTime.UTC().Format(time.RFC3339)).To(Equal("2026-03-20T02:00:00Z"))
			}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
		})
	}
}
