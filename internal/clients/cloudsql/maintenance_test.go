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

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

func TestMaintenancePlanCompare(t *testing.T) {
	yearly := []*sqladmin.DenyMaintenancePeriod{{StartDate: "0-12-1", EndDate: "0-1-31", Time: "00:00:00"}}
	cases := map[string]struct {
		reason   string
		spec     func(*v1alpha1.Maintenance)
		observed func(*sqladmin.Settings)
		want     []string
	}{
		"UnsetIsNotCompared": {
			reason: "An instance whose spec sets neither gets no patch, whatever Cloud SQL has.",
			observed: func(s *sqladmin.Settings) {
				s.DenyMaintenancePeriods = yearly
				s.MaintenanceWindow = &sqladmin.MaintenanceWindow{UpdateTrack: "canary"}
			},
		},
		"SameYearlyPeriodInAnotherForm": {
			reason: "12-01 is what Cloud SQL answers as 0-12-1.",
			spec: func(m *v1alpha1.Maintenance) {
				m.DenyPeriods = &[]v1alpha1.DenyPeriod{{StartDate: "12-01", EndDate: "01-31"}}
			},
			observed: func(s *sqladmin.Settings) { s.DenyMaintenancePeriods = yearly },
		},
		"PeriodMissing": {
			spec: func(m *v1alpha1.Maintenance) {
				m.DenyPeriods = &[]v1alpha1.DenyPeriod{{StartDate: "2026-12-01", EndDate: "2027-01-15", Time: "01:00:00"}}
			},
			want: []string{"settings.denyMaintenancePeriods: want [2026-12-01 to 2027-01-15 at 01:00:00], have none"},
		},
		"EmptyListRemoves": {
			reason:   "An empty list asks for no period.",
			spec:     func(m *v1alpha1.Maintenance) { m.DenyPeriods = &[]v1alpha1.DenyPeriod{} },
			observed: func(s *sqladmin.Settings) { s.DenyMaintenancePeriods = yearly },
			want:     []string{"settings.denyMaintenancePeriods: want none, have [12-01 to 01-31 at 00:00:00]"},
		},
		"UpdateTrack": {
			spec:     func(m *v1alpha1.Maintenance) { m.UpdateTrack = "week5" },
			observed: func(s *sqladmin.Settings) { s.MaintenanceWindow = &sqladmin.MaintenanceWindow{UpdateTrack: "stable"} },
			want:     []string{"settings.maintenanceWindow.updateTrack: want week5, have stable"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p, o := minimalParams(), minimalObserved()
			if tc.spec != nil {
				tc.spec(&p.Maintenance)
			}
			if tc.observed != nil {
				tc.observed(o.Settings)
			}
			d := Compare(p, o)
			g.Expect(d.All()).To(Equal(tc.want), tc.reason)
			if len(tc.want) == 0 {
				return
			}
			// The patch fixes exactly that, and nothing else.
			patch := GeneratePatch(p, o)
			g.Expect(patch.Settings.DenyMaintenancePeriods != nil || patch.Settings.MaintenanceWindow != nil).To(BeTrue())
			g.Expect(patch.Settings.Tier).To(BeEmpty())
		})
	}
}

func TestGeneratePatchSendsAnEmptyDenyList(t *testing.T) {
	g := NewWithT(t)
	p, o := minimalParams(), minimalObserved()
	p.Maintenance.DenyPeriods = &[]v1alpha1.DenyPeriod{}
	o.Settings.DenyMaintenancePeriods = []*sqladmin.DenyMaintenancePeriod{{StartDate: "12-01", EndDate: "12-20", Time: "00:00:00"}}
	b, err := GeneratePatch(p, o).Settings.MarshalJSON()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(b)).To(ContainSubstring(`"denyMaintenancePeriods":[]`))
}

func TestMaintenancePlanLateInitialize(t *testing.T) {
	cases := map[string]struct {
		observed func(*sqladmin.Settings)
		want     v1alpha1.Maintenance
	}{
		"NothingToFill": {want: v1alpha1.Maintenance{Day: v1alpha1.Any}},
		"ImportedPlan": {
			observed: func(s *sqladmin.Settings) {
				s.MaintenanceWindow = &sqladmin.MaintenanceWindow{UpdateTrack: "canary"}
				s.DenyMaintenancePeriods = []*sqladmin.DenyMaintenancePeriod{{StartDate: "0-12-1", EndDate: "0-1-31", Time: "00:00:00"}}
			},
			want: v1alpha1.Maintenance{Day: v1alpha1.Any, UpdateTrack: "canary", DenyPeriods: &[]v1alpha1.DenyPeriod{{StartDate: "12-01", EndDate: "01-31", Time: "00:00:00"}}},
		},
		"UnknownTrackIsLeftOut": {
			observed: func(s *sqladmin.Settings) {
				s.MaintenanceWindow = &sqladmin.MaintenanceWindow{UpdateTrack: "SQL_UPDATE_TRACK_UNSPECIFIED"}
			},
			want: v1alpha1.Maintenance{Day: v1alpha1.Any},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p, o := minimalParams(), minimalObserved()
			if tc.observed != nil {
				tc.observed(o.Settings)
			}
			LateInitialize(&p, o)
			g.Expect(p.Maintenance).To(Equal(tc.want))
			g.Expect(Compare(p, o).All()).To(BeEmpty(), "what late initialisation fills is up to date: no patch")
		})
	}
}

func TestScheduledMaintenance(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ScheduledMaintenance(nil)).To(BeNil())
	g.Expect(ScheduledMaintenance(&sqladmin.SqlScheduledMaintenance{})).To(BeNil())
	got := ScheduledMaintenance(&sqladmin.SqlScheduledMaintenance{StartTime: "2026-03-20T02:00:00.000Z", CanDefer: true, ScheduleDeadlineTime: "2026-04-20T00:00:00Z"})
	g.Expect(got).To(Equal(&v1alpha1.ScheduledMaintenance{
		StartTime:            &metav1.Time{Time: time.Date(2026, 3, 20, 2, 0, 0, 0, time.UTC)},
		CanDefer:             true,
		ScheduleDeadlineTime: &metav1.Time{Time: time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC)},
	}))
}
