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

package emulator

import (
	"errors"
	"strconv"
	"strings"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// Maintenance that can be planned around: the update track, the deny
// periods, and a scheduled maintenance that the admin surface announces.

// maxDenyDays is the longest deny maintenance period Cloud SQL allows.
const maxDenyDays = 90

// validateMaintenance applies Cloud SQL's rules for the update track
// (canary, stable or week5) and the deny maintenance periods: at most one,
// dates yyyy-mm-dd or mm-dd (a year of 0 is none, as recorded traffic
// shows), both with a year or neither (then it recurs every year), the end
// not before the start, at most 90 days, and a time hh:mm:ss.
func validateMaintenance(st *sqladmin.Settings) error {
	if mw := st.MaintenanceWindow; mw != nil && mw.UpdateTrack != "" {
		if err := oneOf("settings.maintenanceWindow.updateTrack", mw.UpdateTrack, "canary", "stable", "week5"); err != nil {
			return err
		}
	}
	dps := st.DenyMaintenancePeriods
	if len(dps) > 1 {
		return errInvalid("Invalid settings.denyMaintenancePeriods: %d periods, at most 1 is allowed.", len(dps))
	}
	for _, d := range dps {
		if d == nil {
			continue
		}
		if _, err := denySpan(d); err != nil {
			return err
		}
	}
	return nil
}

// denyDate is a deny period's date; year 0 is none (every year).
type denyDate struct{ year, month, day int }

func parseDenyDate(s string) (denyDate, bool) {
	parts := strings.Split(s, "-")
	if len(parts) == 2 {
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return denyDate{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return denyDate{}, false
		}
		n[i] = v
	}
	d := denyDate{n[0], n[1], n[2]}
	y := d.year
	if y == 0 {
		y = 2000 // a leap year, so that 02-29 is a date
	}
	t := time.Date(y, time.Month(d.month), d.day, 0, 0, 0, 0, time.UTC)
	return d, t.Month() == time.Month(d.month) && t.Day() == d.day
}

// denySpan is the deny period's start and end (a yearly one's in 2001, or
// into 2002 when it spans the turn of the year), or Cloud SQL's error for a
// period it refuses.
func denySpan(d *sqladmin.DenyMaintenancePeriod) ([2]time.Time, error) {
	start, ok1 := parseDenyDate(d.StartDate)
	end, ok2 := parseDenyDate(d.EndDate)
	if !ok1 || !ok2 {
		return [2]time.Time{}, errInvalid("Invalid deny maintenance period %q to %q: use dates yyyy-mm-dd, or mm-dd for every year.", d.StartDate, d.EndDate)
	}
	if (start.year == 0) != (end.year == 0) {
		return [2]time.Time{}, errInvalid("Invalid deny maintenance period %q to %q: give a year in both dates or in neither.", d.StartDate, d.EndDate)
	}
	at, err := time.Parse("15:04:05", d.Time)
	if d.Time == "" {
		at, err = time.Time{}, nil
	}
	if err != nil {
		return [2]time.Time{}, errInvalid("Invalid deny maintenance period time %q: use HH:mm:SS in UTC.", d.Time)
	}
	clock := time.Duration(at.Hour())*time.Hour + time.Duration(at.Minute())*time.Minute + time.Duration(at.Second())*time.Second
	sy, ey := start.year, end.year
	if sy == 0 {
		sy, ey = 2001, 2001
		if end.month < start.month || (end.month == start.month && end.day < start.day) {
			ey = 2002
		}
	}
	from := time.Date(sy, time.Month(start.month), start.day, 0, 0, 0, 0, time.UTC).Add(clock)
	to := time.Date(ey, time.Month(end.month), end.day, 0, 0, 0, 0, time.UTC).Add(clock)
	if to.Before(from) {
		return [2]time.Time{}, errInvalid("Invalid deny maintenance period %q to %q: the end date is before the start date.", d.StartDate, d.EndDate)
	}
	if to.Sub(from) > maxDenyDays*day {
		return [2]time.Time{}, errInvalid("Invalid deny maintenance period %q to %q: it can be at most %d days long.", d.StartDate, d.EndDate, maxDenyDays)
	}
	return [2]time.Time{from, to}, nil
}

// denied says whether t falls in one of the deny periods.
func denied(t time.Time, dps []*sqladmin.DenyMaintenancePeriod) bool {
	for _, d := range dps {
		if d == nil {
			continue
		}
		span, err := denySpan(d)
		if err != nil {
			continue
		}
		if start, _ := parseDenyDate(d.StartDate); start.year == 0 {
			// Try the occurrences that may hold t: the one that starts in
			// t's year and the one that starts the year before.
			for _, y := range []int{t.Year() - 1, t.Year()} {
				shift := y - span[0].Year()
				if !t.Before(span[0].AddDate(shift, 0, 0)) && !t.After(span[1].AddDate(shift, 0, 0)) {
					return true
				}
			}
			continue
		}
		if !t.Before(span[0]) && !t.After(span[1]) {
			return true
		}
	}
	return false
}

// ErrMaintenanceDenied means a maintenance was scheduled in one of the
// instance's deny maintenance periods, where Cloud SQL schedules none.
var ErrMaintenanceDenied = errors.New("emulator: the maintenance starts in a deny maintenance period of the instance")

// ScheduleMaintenance announces a maintenance of an instance, as Cloud SQL
// does some weeks before it: instances.get then answers it as
// scheduledMaintenance, until another is announced or it is cleared (sm nil,
// or without a startTime). A start in a deny maintenance period of the
// instance is refused with ErrMaintenanceDenied.
func (s *Server) ScheduleMaintenance(project, instance string, sm *sqladmin.SqlScheduledMaintenance) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return err
	}
	if sm == nil || sm.StartTime == "" {
		inst.db.ScheduledMaintenance = nil
		return nil
	}
	start, err := time.Parse(time.RFC3339Nano, sm.StartTime)
	if err != nil {
		return errInvalid("Invalid startTime %q: use an RFC 3339 time.", sm.StartTime)
	}
	if denied(start, inst.db.Settings.DenyMaintenancePeriods) {
		return ErrMaintenanceDenied
	}
	cp := *sm
	inst.db.ScheduledMaintenance = &cp
	return nil
}
