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

package cloudsql

import (
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// healthNow is when the health tests read.
var healthNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// run is a backup run that ended ago before healthNow.
func run(id int64, kind, status string, ago time.Duration) *sqladmin.BackupRun {
	r := &sqladmin.BackupRun{Id: id, Type: kind, Status: status, EnqueuedTime: healthNow.Add(-ago - time.Minute).Format(time.RFC3339)}
	if status == BackupRunSuccessful || status == BackupRunFailed {
		r.EndTime = healthNow.Add(-ago).Format(time.RFC3339)
	}
	if status == BackupRunFailed {
		r.Error = &sqladmin.OperationError{Kind: "sql#operationError", Code: "INTERNAL_ERROR", Message: "disk full"}
	}
	return r
}

func ago(d time.Duration) *metav1.Time {
	return &metav1.Time{Time: healthNow.Add(-d)}
}

func TestBackupHealth(t *testing.T) {
	cases := map[string]struct {
		reason string
		runs   []*sqladmin.BackupRun
		rt     *sqladmin.SqlInstancesGetLatestRecoveryTimeResponse
		want   *v1alpha1.BackupHealth
	}{
		"NoRuns": {want: &v1alpha1.BackupHealth{ReadTime: ago(0)}},
		"NewestSucceeded": {
			reason: "The newest run is the last success: no lastRun.",
			runs:   []*sqladmin.BackupRun{run(3, BackupRunAutomated, BackupRunSuccessful, time.Hour), run(2, BackupRunAutomated, BackupRunSuccessful, 25*time.Hour)},
			want: &v1alpha1.BackupHealth{ReadTime: ago(0),
				LastSuccessful: &v1alpha1.BackupRunSummary{ID: "3", Type: BackupRunAutomated, Status: BackupRunSuccessful, Time: ago(time.Hour)}},
		},
		"NewestFailed": {
			reason: "A failed run is lastRun, with Cloud SQL's error; the success before it stays lastSuccessful.",
			runs:   []*sqladmin.BackupRun{run(3, BackupRunAutomated, BackupRunFailed, time.Hour), run(2, BackupRunOnDemand, BackupRunSuccessful, 25*time.Hour)},
			want: &v1alpha1.BackupHealth{ReadTime: ago(0),
				LastSuccessful: &v1alpha1.BackupRunSummary{ID: "2", Type: BackupRunOnDemand, Status: BackupRunSuccessful, Time: ago(25 * time.Hour)},
				LastRun:        &v1alpha1.BackupRunSummary{ID: "3", Type: BackupRunAutomated, Status: BackupRunFailed, Time: ago(time.Hour), Error: "INTERNAL_ERROR: disk full"}},
		},
		"RecoveryWindow": {
			rt:   &sqladmin.SqlInstancesGetLatestRecoveryTimeResponse{EarliestRecoveryTime: healthNow.Add(-72 * time.Hour).Format(time.RFC3339Nano), LatestRecoveryTime: healthNow.Format(time.RFC3339Nano)},
			want: &v1alpha1.BackupHealth{ReadTime: ago(0), EarliestRecoveryTime: ago(72 * time.Hour), LatestRecoveryTime: ago(0)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(BackupHealth(tc.runs, tc.rt, healthNow)).To(Equal(tc.want), tc.reason)
		})
	}
}

func TestBackupsCondition(t *testing.T) {
	instance := func(enabled bool, created time.Duration) *sqladmin.DatabaseInstance {
		return &sqladmin.DatabaseInstance{Name: "orders", CreateTime: healthNow.Add(-created).Format(time.RFC3339),
			Settings: &sqladmin.Settings{BackupConfiguration: &sqladmin.BackupConfiguration{Enabled: enabled, StartTime: "22:00"}}}
	}
	cases := map[string]struct {
		reason   string
		inst     *sqladmin.DatabaseInstance
		runs     []*sqladmin.BackupRun
		status   corev1.ConditionStatus
		want     xpv2.ConditionReason
		messages []string
	}{
		"Succeeded": {
			inst: instance(true, 30*24*time.Hour), runs: []*sqladmin.BackupRun{run(3, BackupRunAutomated, BackupRunSuccessful, time.Hour)},
			status: corev1.ConditionTrue, want: v1alpha1.ReasonBackupSucceeded, messages: []string{"default/orders", "backup run 3"},
		},
		"Failed": {
			reason: "The newest automated run failed: Cloud SQL's error is in the message.",
			inst:   instance(true, 30*24*time.Hour),
			runs:   []*sqladmin.BackupRun{run(4, BackupRunAutomated, BackupRunFailed, time.Hour), run(3, BackupRunAutomated, BackupRunSuccessful, 25*time.Hour)},
			status: corev1.ConditionFalse, want: v1alpha1.ReasonBackupFailed,
			messages: []string{"default/orders", "backup run 4", "INTERNAL_ERROR: disk full", "gcloud sql backups create --instance=orders"},
		},
		"FailedThenRunning": {
			reason: "A run under way does not hide the failure before it.",
			inst:   instance(true, 30*24*time.Hour),
			runs:   []*sqladmin.BackupRun{run(5, BackupRunAutomated, "RUNNING", 0), run(4, BackupRunAutomated, BackupRunFailed, time.Hour)},
			status: corev1.ConditionFalse, want: v1alpha1.ReasonBackupFailed,
		},
		"OnDemandSuccessDoesNotHideAFailedAutomatedOne": {
			inst:   instance(true, 30*24*time.Hour),
			runs:   []*sqladmin.BackupRun{run(5, BackupRunOnDemand, BackupRunSuccessful, time.Minute), run(4, BackupRunAutomated, BackupRunFailed, time.Hour)},
			status: corev1.ConditionFalse, want: v1alpha1.ReasonBackupFailed,
		},
		"OnDemandRunsCrowdTheReadOut": {
			reason: "A full read of on-demand runs only (a namespace's PostgresqlBackups of a shared instance) says nothing of the automated ones: unknown, not overdue.",
			inst:   instance(true, 30*24*time.Hour),
			runs:   onDemandRuns(BackupRunsRead),
			status: corev1.ConditionUnknown, want: v1alpha1.ReasonAutomatedNotListed,
			messages: []string{"newest 10 backup runs of PostgresqlInstance default/orders are all on-demand", "gcloud sql backups list --instance=orders"},
		},
		"FewOnDemandRunsOnly": {
			reason: "A read that is not full holds every run: no automated backup for longer than a day is overdue.",
			inst:   instance(true, 30*24*time.Hour),
			runs:   onDemandRuns(BackupRunsRead - 1),
			status: corev1.ConditionFalse, want: v1alpha1.ReasonBackupOverdue,
		},
		"SucceededAgain": {
			inst:   instance(true, 30*24*time.Hour),
			runs:   []*sqladmin.BackupRun{run(5, BackupRunAutomated, BackupRunSuccessful, time.Minute), run(4, BackupRunAutomated, BackupRunFailed, 24*time.Hour)},
			status: corev1.ConditionTrue, want: v1alpha1.ReasonBackupSucceeded,
		},
		"Overdue": {
			reason: "No automated backup for longer than a day, the window and the grace.",
			inst:   instance(true, 30*24*time.Hour), runs: []*sqladmin.BackupRun{run(3, BackupRunAutomated, BackupRunSuccessful, 30*time.Hour)},
			status: corev1.ConditionFalse, want: v1alpha1.ReasonBackupOverdue, messages: []string{"default/orders", "backup run 3", "spec.forProvider.backups.daily.startTime 22:00"},
		},
		"NotYetOverdue": {
			inst: instance(true, 30*24*time.Hour), runs: []*sqladmin.BackupRun{run(3, BackupRunAutomated, BackupRunSuccessful, 28*time.Hour)},
			status: corev1.ConditionTrue, want: v1alpha1.ReasonBackupSucceeded,
		},
		"NewInstance": {
			inst:   instance(true, 2*time.Hour),
			status: corev1.ConditionUnknown, want: v1alpha1.ReasonNoBackupYet,
		},
		"OldInstanceThatNeverHadOne": {
			inst:   instance(true, 3*24*time.Hour),
			status: corev1.ConditionFalse, want: v1alpha1.ReasonBackupOverdue, messages: []string{"no automated backup has succeeded since the instance was created"},
		},
		"Disabled": {
			reason: "Daily backups off: nothing can be recovered, whatever the runs say.",
			inst:   instance(false, 30*24*time.Hour), runs: []*sqladmin.BackupRun{run(3, BackupRunAutomated, BackupRunSuccessful, time.Hour)},
			status: corev1.ConditionFalse, want: v1alpha1.ReasonBackupsDisabled,
			messages: []string{"default/orders", "nothing can be recovered", "set spec.forProvider.backups.daily.enabled to true"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := BackupsCondition("default/orders", tc.inst, tc.runs, healthNow)
			g.Expect(c.Type).To(Equal(v1alpha1.BackupsHealthy))
			g.Expect(c.Status).To(Equal(tc.status), tc.reason+": "+c.Message)
			g.Expect(c.Reason).To(Equal(tc.want), c.Message)
			for _, m := range tc.messages {
				g.Expect(c.Message).To(ContainSubstring(m))
			}
		})
	}
}

func TestBackupsReadFailedCondition(t *testing.T) {
	g := NewWithT(t)
	c := BackupsReadFailedCondition("orders", healthNow.Add(-4*time.Hour), "googleapi: Error 403: forbidden", healthNow)
	g.Expect(c.Status).To(Equal(corev1.ConditionUnknown))
	g.Expect(c.Reason).To(Equal(v1alpha1.ReasonBackupReadFailed))
	g.Expect(c.Message).To(ContainSubstring("since 2026-03-10T08:00:00Z: googleapi: Error 403: forbidden"))
}

// onDemandRuns are n successful on-demand runs, newest first.
func onDemandRuns(n int) []*sqladmin.BackupRun {
	var runs []*sqladmin.BackupRun
	for i := range n {
		runs = append(runs, run(int64(100-i), BackupRunOnDemand, BackupRunSuccessful, time.Duration(i+1)*time.Minute))
	}
	return runs
}
