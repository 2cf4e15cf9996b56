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
	"fmt"
	"strconv"
	"strings"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// The maintenance that can be planned around: the update track, the deny
// periods, and the maintenance Cloud SQL has scheduled.

const fieldDenyMaintenancePeriods = "DenyMaintenancePeriods"

// setDenyPeriods sends the deny periods the spec sets, an empty list
// included (which removes Cloud SQL's).
func setDenyPeriods(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	dps := p.Maintenance.DenyPeriods
	if dps == nil {
		return
	}
	s.DenyMaintenancePeriods = []*sqladmin.DenyMaintenancePeriod{}
	for _, d := range *dps {
		s.DenyMaintenancePeriods = append(s.DenyMaintenancePeriods, &sqladmin.DenyMaintenancePeriod{
			StartDate: d.StartDate, EndDate: d.EndDate, Time: denyTime(d.Time),
		})
	}
	s.ForceSendFields = forceSend(s.ForceSendFields, fieldDenyMaintenancePeriods)
}

// denyTime is the time of a deny period, midnight when unset.
func denyTime(t string) string {
	if t == "" {
		return "00:00:00"
	}
	return t
}

// updateTrack compares the update track, only when the spec sets it.
func (ds *diffs) updateTrack(want string, mw *sqladmin.MaintenanceWindow) {
	have := ""
	if mw != nil {
		have = mw.UpdateTrack
	}
	ds.addIfSet(setMaintenance, "settings.maintenanceWindow.updateTrack", want, have)
}

// denyPeriods compares what setDenyPeriods writes, only when the spec sets
// them. Dates compare by their year, month and day, whatever form Cloud SQL
// answers them in (12-01, 0-12-1 and 2026-12-01 are the forms seen).
func (ds *diffs) denyPeriods(want *[]v1alpha1.DenyPeriod, have []*sqladmin.DenyMaintenancePeriod) {
	if want == nil {
		return
	}
	w := make([]string, 0, len(*want))
	for _, d := range *want {
		w = append(w, denyText(d.StartDate, d.EndDate, denyTime(d.Time)))
	}
	h := make([]string, 0, len(have))
	for _, d := range have {
		if d != nil {
			h = append(h, denyText(d.StartDate, d.EndDate, denyTime(d.Time)))
		}
	}
	if strings.Join(w, ",") != strings.Join(h, ",") {
		ds.add(setDenyPeriods, "settings.denyMaintenancePeriods", listText(w), listText(h))
	}
}

func listText(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return "[" + strings.Join(l, ", ") + "]"
}

// denyText is a deny period in one normal form: mm-dd for a yearly date,
// yyyy-mm-dd otherwise.
func denyText(start, end, t string) string {
	return normalDate(start) + " to " + normalDate(end) + " at " + t
}

// normalDate is a deny period's date as yyyy-mm-dd, or mm-dd when it has no
// year (none, or year 0); a date it cannot read is kept as it is.
func normalDate(d string) string {
	parts := strings.Split(d, "-")
	if len(parts) == 2 {
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return d
	}
	n := make([]int, 3)
	for i, s := range parts {
		v, err := strconv.Atoi(s)
		if err != nil {
			return d
		}
		n[i] = v
	}
	if n[0] == 0 {
		return fmt.Sprintf("%02d-%02d", n[1], n[2])
	}
	return fmt.Sprintf("%04d-%02d-%02d", n[0], n[1], n[2])
}

// maintenancePlan fills the update track and the deny periods from what
// Cloud SQL has, when the spec leaves them unset: an imported instance
// keeps its own, and nothing is patched.
func (li *lateInit) maintenancePlan(m *v1alpha1.Maintenance, s *sqladmin.Settings) {
	if mw := s.MaintenanceWindow; mw != nil {
		switch mw.UpdateTrack {
		case "canary", "stable", "week5":
			li.string(&m.UpdateTrack, mw.UpdateTrack)
		}
	}
	if m.DenyPeriods != nil || len(s.DenyMaintenancePeriods) != 1 {
		return
	}
	d := s.DenyMaintenancePeriods[0]
	if d == nil {
		return
	}
	dp := v1alpha1.DenyPeriod{StartDate: normalDate(d.StartDate), EndDate: normalDate(d.EndDate), Time: denyTime(d.Time)}
	if !denyDateRE.MatchString(dp.StartDate) || !denyDateRE.MatchString(dp.EndDate) || !denyTimeRE.MatchString(dp.Time) {
		return
	}
	m.DenyPeriods = &[]v1alpha1.DenyPeriod{dp}
	li.changed = true
}

// ScheduledMaintenance is status.atProvider.scheduledMaintenance for sm,
// which may be nil.
func ScheduledMaintenance(sm *sqladmin.SqlScheduledMaintenance) *v1alpha1.ScheduledMaintenance {
	if sm == nil || (sm.StartTime == "" && !sm.CanDefer && !sm.CanReschedule && sm.ScheduleDeadlineTime == "") {
		return nil
	}
	return &v1alpha1.ScheduledMaintenance{
		StartTime:            apiTime(sm.StartTime),
		CanDefer:             sm.CanDefer,
		CanReschedule:        sm.CanReschedule,
		ScheduleDeadlineTime: apiTime(sm.ScheduleDeadlineTime),
	}
}

// apiTime is an RFC 3339 time of the API, nil when empty or unreadable.
func apiTime(s string) *metav1.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if s == "" || err != nil {
		return nil
	}
	return &metav1.Time{Time: t.UTC()}
}
