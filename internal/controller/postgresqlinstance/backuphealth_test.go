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

package postgresqlinstance

import (
	"context"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// backupCall observes mg once, with the cloud and pacing a case gives, and
// returns the requests the observation made.
func backupCall(t *testing.T, a args, mg *v1alpha1.PostgresqlInstance) []string {
	t.Helper()
	w, svc := newWorld(t, a)
	e := newExternal[*v1alpha1.PostgresqlInstance](w, svc, "cluster")
	if _, err := e.Observe(context.Background(), mg); err != nil {
		t.Fatalf("Observe: %v", err)
	}
	var calls []string
	for _, req := range w.emu.Requests() {
		if req.Method != "" {
			calls = append(calls, req.Method)
		}
	}
	return calls
}

// withBackupRuns leaves the instance with an automated backup that
// succeeded, then one that failed with message (none when empty).
func withBackupRuns(mg *v1alpha1.PostgresqlInstance, failure string) cloud {
	return func(t *testing.T, emu *emulator.Server) {
		if _, err := emu.RunBackupWindow(unitProject, mg.GetName()); err != nil {
			t.Fatal(err)
		}
		if failure == "" {
			return
		}
		if err := emu.FailNextBackup(unitProject, mg.GetName(), failure); err != nil {
			t.Fatal(err)
		}
		if _, err := emu.RunBackupWindow(unitProject, mg.GetName()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestObserveBackupHealth(t *testing.T) {
	ours := clusterDB()
	pitr := func(db *sqladmin.DatabaseInstance) {
		db.Settings.BackupConfiguration.PointInTimeRecoveryEnabled = true
	}
	type want struct {
		calls   []string
		status  corev1.ConditionStatus
		reason  xpv2.ConditionReason
		message string
		health  func(g *WithT, h *v1alpha1.BackupHealth)
	}
	cases := map[string]struct {
		reason string
		mg     *v1alpha1.PostgresqlInstance
		args   args
		want   want
	}{
		"FailedBackup": {
			reason: "Due, the read lists the backup runs and finds the automated one failed: False, with Cloud SQL's error.",
			mg:     clusterDB(),
			args: args{cloud: clouds(seeded(ours, ourUID, ""), withBackupRuns(ours, "the disk is full")),
				secrets: []client.Object{connSecret(ours, storedPW)}, health: time.Nanosecond},
			want: want{
				calls:  []string{"instances.get", "backupRuns.list"},
				status: corev1.ConditionFalse, reason: v1alpha1.ReasonBackupFailed, message: "the disk is full",
				health: func(g *WithT, h *v1alpha1.BackupHealth) {
					g.Expect(h.LastSuccessful).NotTo(BeNil())
					g.Expect(h.LastRun).NotTo(BeNil())
					g.Expect(h.LastRun.Status).To(Equal("FAILED"))
					g.Expect(h.LastRun.Error).To(ContainSubstring("the disk is full"))
					g.Expect(h.EarliestRecoveryTime).To(BeNil(), "point-in-time recovery is off: no window, and no request for it")
				},
			},
		},
		"SucceededWithRecoveryWindow": {
			reason: "With point-in-time recovery on, the recoverable window is read too: two requests.",
			mg: clusterDB(withParams(func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true}
			})),
			args: args{cloud: clouds(seeded(ours, ourUID, "", pitr), withBackupRuns(ours, "")),
				secrets: []client.Object{connSecret(ours, storedPW)}, health: time.Nanosecond},
			want: want{
				calls:  []string{"instances.get", "backupRuns.list", "instances.getLatestRecoveryTime"},
				status: corev1.ConditionTrue, reason: v1alpha1.ReasonBackupSucceeded,
				health: func(g *WithT, h *v1alpha1.BackupHealth) {
					g.Expect(h.LastRun).To(BeNil())
					g.Expect(h.LatestRecoveryTime).NotTo(BeNil())
					g.Expect(h.EarliestRecoveryTime).NotTo(BeNil())
					g.Expect(h.ReadTime).NotTo(BeNil())
				},
			},
		},
		"NotDue": {
			reason: "Read less than an interval ago: no request, the health stays as it was.",
			mg: clusterDB(func(mg core.Instance) {
				mg.Observation().Backups = &v1alpha1.BackupHealth{ReadTime: &metav1.Time{Time: time.Now().Add(-time.Minute)}}
			}),
			args: args{cloud: seeded(ours, ourUID, ""), secrets: []client.Object{connSecret(ours, storedPW)}},
			want: want{
				calls: []string{"instances.get"},
				health: func(g *WithT, h *v1alpha1.BackupHealth) {
					g.Expect(h).NotTo(BeNil(), "kept across the observation")
				},
			},
		},
		"NotRunnable": {
			reason: "An instance under maintenance is not read.",
			mg:     clusterDB(),
			args:   args{cloud: seeded(ours, ourUID, "MAINTENANCE"), secrets: []client.Object{connSecret(ours, storedPW)}, health: time.Nanosecond},
			want:   want{calls: []string{"instances.get"}, health: func(g *WithT, h *v1alpha1.BackupHealth) { g.Expect(h).To(BeNil()) }},
		},
		"ReadFails": {
			reason: "A failed read keeps the health as it was and says why; the instance stays available.",
			mg: clusterDB(func(mg core.Instance) {
				mg.Observation().Backups = &v1alpha1.BackupHealth{ReadTime: &metav1.Time{Time: time.Now().Add(-2 * time.Hour)}, LastSuccessful: &v1alpha1.BackupRunSummary{ID: "1"}}
			}),
			args: args{cloud: clouds(seeded(ours, ourUID, ""), fault(emulator.MethodBackupRunsList, 0)),
				secrets: []client.Object{connSecret(ours, storedPW)}, health: time.Nanosecond},
			want: want{
				calls:  []string{"instances.get", "backupRuns.list"},
				status: corev1.ConditionUnknown, reason: v1alpha1.ReasonBackupReadFailed, message: "cloudsql.backupRuns.list",
				health: func(g *WithT, h *v1alpha1.BackupHealth) {
					g.Expect(h.LastSuccessful.ID).To(Equal("1"))
					g.Expect(h.ReadError).To(ContainSubstring("cannot list the backup runs of Cloud SQL instance db"))
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			a := tc.args
			a.mg = tc.mg
			calls := backupCall(t, a, tc.mg)
			g.Expect(calls).To(Equal(tc.want.calls), tc.reason)
			c := tc.mg.GetCondition(v1alpha1.BackupsHealthy)
			if tc.want.reason == "" {
				g.Expect(c.Reason).To(BeEmpty(), "no condition: %s", c.Message)
			} else {
				g.Expect(c.Status).To(Equal(tc.want.status), c.Message)
				g.Expect(c.Reason).To(Equal(tc.want.reason), c.Message)
				g.Expect(c.Message).To(ContainSubstring(tc.want.message))
			}
			if name != "NotRunnable" {
				g.Expect(tc.mg.GetCondition(xpv2.TypeReady).Reason).To(Equal(xpv2.ReasonAvailable), "the health never makes the instance unavailable")
			}
			if tc.want.health != nil {
				tc.want.health(g, tc.mg.Status.AtProvider.Backups)
			}
		})
	}
}
