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
	"testing"

	. "github.com/onsi/gomega"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

func withDeny(periods ...*sqladmin.DenyMaintenancePeriod) func(*sqladmin.DatabaseInstance) {
	return func(db *sqladmin.DatabaseInstance) { db.Settings.DenyMaintenancePeriods = periods }
}

func TestMaintenancePlanIsValidatedAsCloudSQLDoes(t *testing.T) {
	cases := map[string]struct {
		reason string
		mutate func(*sqladmin.DatabaseInstance)
		ok     bool
	}{
		"YearlyAcrossTheYear": {reason: "Recorded: 0-12-1 to 0-1-31 is a yearly period over new year.",
			mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "0-12-1", EndDate: "0-1-31", Time: "00:00:00"}), ok: true},
		"MonthDay":       {reason: "mm-dd is a yearly period.", mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "11-01", EndDate: "12-15", Time: "01:00:00"}), ok: true},
		"Dated90Days":    {reason: "90 days is the longest.", mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "2026-01-01", EndDate: "2026-04-01", Time: "00:00:00"}), ok: true},
		"Dated91Days":    {reason: "Longer than 90 days.", mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "2026-01-01", EndDate: "2026-04-02", Time: "00:00:00"})},
		"YearlyTooLong":  {reason: "A yearly period of 4 months.", mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "10-01", EndDate: "01-31", Time: "00:00:00"})},
		"EndBeforeStart": {reason: "Dated, the end must follow the start.", mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "2026-05-01", EndDate: "2026-04-01", Time: "00:00:00"})},
		"YearInOneDate":  {reason: "Both dates carry a year or neither.", mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "2026-05-01", EndDate: "05-20", Time: "00:00:00"})},
		"BadDate":        {reason: "02-30 is no date.", mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "02-01", EndDate: "02-30", Time: "00:00:00"})},
		"BadTime":        {reason: "The time is HH:mm:SS.", mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "02-01", EndDate: "02-20", Time: "25:00"})},
		"TwoPeriods":     {reason: "At most one period.", mutate: withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "02-01", EndDate: "02-20"}, &sqladmin.DenyMaintenancePeriod{StartDate: "06-01", EndDate: "06-20"})},
		"UpdateTrackWeek5": {reason: "week5 is a track.", mutate: func(db *sqladmin.DatabaseInstance) {
			db.Settings.MaintenanceWindow = &sqladmin.MaintenanceWindow{UpdateTrack: "week5"}
		}, ok: true},
		"UpdateTrackUnknown": {reason: "production is gcloud's word, not the API's.", mutate: func(db *sqladmin.DatabaseInstance) {
			db.Settings.MaintenanceWindow = &sqladmin.MaintenanceWindow{UpdateTrack: "production"}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.svc.Instances.Insert(project, instance("orders", tc.mutate)).Context(e.ctx).Do()
			if tc.ok {
				e.g.Expect(err).NotTo(HaveOccurred(), tc.reason)
				return
			}
			expectAPIError(e.g, err, http.StatusBadRequest, emulator.ReasonInvalid)
		})
	}
}

func TestMaintenancePlanIsKeptAndAnswered(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "12-01", EndDate: "01-15", Time: "00:00:00"}), func(db *sqladmin.DatabaseInstance) {
		db.Settings.MaintenanceWindow = &sqladmin.MaintenanceWindow{Day: 6, Hour: 2, UpdateTrack: "canary"}
	})
	got := e.get("orders")
	e.g.Expect(got.Settings.MaintenanceWindow.UpdateTrack).To(Equal("canary"))
	e.g.Expect(got.Settings.DenyMaintenancePeriods).To(HaveLen(1))

	// A patch of the day keeps the track; an empty list removes the periods.
	_, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		MaintenanceWindow:      &sqladmin.MaintenanceWindow{Day: 3, Hour: 4},
		DenyMaintenancePeriods: []*sqladmin.DenyMaintenancePeriod{}, ForceSendFields: []string{"DenyMaintenancePeriods"},
	}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	got = e.get("orders")
	e.g.Expect(got.Settings.MaintenanceWindow.UpdateTrack).To(Equal("canary"))
	e.g.Expect(got.Settings.MaintenanceWindow.Day).To(Equal(int64(3)))
	e.g.Expect(got.Settings.DenyMaintenancePeriods).To(BeEmpty())
}

func TestScheduledMaintenance(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", withDeny(&sqladmin.DenyMaintenancePeriod{StartDate: "12-01", EndDate: "01-15", Time: "00:00:00"}))
	e.g.Expect(e.get("orders").ScheduledMaintenance).To(BeNil())

	path := "/emulator/v1/projects/" + project + "/instances/orders:scheduleMaintenance"
	e.g.Expect(e.call("POST", path, `{"startTime":"2026-12-24T02:00:00Z","canDefer":true}`, nil)).To(Equal(http.StatusBadRequest), "in the deny period, over the turn of the year")
	e.g.Expect(e.call("POST", path, `{"startTime":"2027-01-10T02:00:00Z"}`, nil)).To(Equal(http.StatusBadRequest), "in the deny period, the next year")
	e.g.Expect(e.call("POST", path, `{"startTime":"2026-03-20T02:00:00Z","canDefer":true,"canReschedule":true,"scheduleDeadlineTime":"2026-04-20T00:00:00Z"}`, nil)).To(Equal(http.StatusOK))
	sm := e.get("orders").ScheduledMaintenance
	e.g.Expect(sm).NotTo(BeNil())
	e.g.Expect(sm.StartTime).To(Equal("2026-03-20T02:00:00Z"))
	e.g.Expect(sm.CanDefer).To(BeTrue())
	e.g.Expect(sm.ScheduleDeadlineTime).To(Equal("2026-04-20T00:00:00Z"))

	e.g.Expect(e.call("POST", path, `{}`, nil)).To(Equal(http.StatusOK))
	e.g.Expect(e.get("orders").ScheduledMaintenance).To(BeNil())
}
