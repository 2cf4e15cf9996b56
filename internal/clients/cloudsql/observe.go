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
	"regexp"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Limits of the CRD that LateInitialize must respect, or the update of the
// spec that carries the late-initialised values would be rejected.
const (
	minDiskSizeGb = 10
	maxDiskSizeGb = 65536

	minFinalBackupDays = 1
	maxFinalBackupDays = 365
)

// backupLocationRE is the shape of a backup location the CRD accepts.
var backupLocationRE = regexp.MustCompile(`^[a-z]+(-[a-z]+[0-9]+)?$`)

// denyDateRE and denyTimeRE are the shapes of a deny period's date and time
// that the CRD accepts.
var (
	denyDateRE = regexp.MustCompile(`^([0-9]{4}-)?(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`)
	denyTimeRE = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$`)
)

var (
	// tierRE is the shape of an instance type the CRD accepts.
	tierRE = regexp.MustCompile(`^(db-f1-micro|db-g1-small|db-custom-[0-9]{1,3}-[0-9]{1,7}|db-perf-optimized-N-[0-9]{1,3})$`)
	// regionRE is the shape of a region the CRD accepts.
	regionRE = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)
)

// GenerateObservation is status.atProvider for observed, which may be nil
// or lack parts.
func GenerateObservation(observed *sqladmin.DatabaseInstance) v1alpha1.PostgresqlInstanceObservation {
	if observed == nil {
		return v1alpha1.PostgresqlInstanceObservation{}
	}
	obs := v1alpha1.PostgresqlInstanceObservation{
		State:                      observed.State,
		ConnectionName:             observed.ConnectionName,
		PublicIP:                   ipAddress(observed, IPTypePrimary),
		PrivateIP:                  ipAddress(observed, IPTypePrivate),
		GCEZone:                    observed.GceZone,
		DatabaseInstalledVersion:   observed.DatabaseInstalledVersion,
		ServiceAccountEmailAddress: observed.ServiceAccountEmailAddress,
		SelfLink:                   observed.SelfLink,
		ScheduledMaintenance:       ScheduledMaintenance(observed.ScheduledMaintenance),
	}
	if s := observed.Settings; s != nil {
		obs.CurrentDiskSizeGb = s.DataDiskSizeGb
		obs.SettingsVersion = s.SettingsVersion
		if ipc := s.IpConfiguration; ipc != nil && ipc.PscConfig != nil {
			obs.PSCEnabled = ipc.PscConfig.PscEnabled
		}
	}
	return obs
}

// ipAddress is the first address of type t, or "".
func ipAddress(o *sqladmin.DatabaseInstance, t string) string {
	if o == nil {
		return ""
	}
	for _, a := range o.IpAddresses {
		if a != nil && a.Type == t {
			return a.IpAddress
		}
	}
	return ""
}

// LateInitialize fills the parameters that p leaves unset from observed and
// reports whether it changed p. It never overwrites a value the user gave,
// and it writes only values the CRD accepts, so the update of the spec
// cannot be rejected.
//
// The maintenance hour is the case that matters in a cluster, where the CRD
// defaults everything else: when a day is chosen without an hour, the hour
// becomes the observed one if the observed window is on that same day (an
// imported instance keeps its window), else 04:00, the documented default.
//
// What is not late-initialised, on purpose:
//   - the zone: Cloud SQL reports the zone it picked as the location
//     preference, and copying it would turn "any zone" into a requirement.
//   - labels and flags: those Cloud SQL adds would become managed.
//   - networking: it is required, so never unset.
//   - point-in-time recovery and the number of backups kept: Cloud SQL's
//     defaults for them depend on the edition (see backupLocation).
//
// The data-safety settings (deletion protection, backups kept on delete, the
// final backup) are filled from what Cloud SQL has, so that an imported
// instance keeps its own and nothing patches it by surprise; a new instance
// got them on at insert (WithSafetyDefaults), and fills them as on.
func LateInitialize(p *v1alpha1.PostgresqlInstanceParameters, observed *sqladmin.DatabaseInstance) bool {
	if p == nil || observed == nil {
		return false
	}
	li := lateInit{}
	li.string(&p.Version, FromDatabaseVersion(observed.DatabaseVersion))
	if regionRE.MatchString(observed.Region) {
		li.string(&p.Location.Region, observed.Region)
	}

	if s := observed.Settings; s != nil {
		li.string(&p.Edition, FromEdition(s.Edition))
		li.string(&p.Availability.Type, FromAvailabilityType(s.AvailabilityType))
		if tierRE.MatchString(s.Tier) {
			li.string(&p.Resources.InstanceType, s.Tier)
		}
		if bc := s.BackupConfiguration; bc != nil {
			if p.Backups.Daily.Enabled == nil {
				enabled := bc.Enabled
				p.Backups.Daily.Enabled = &enabled
				li.changed = true
			}
			if isFullHour(bc.StartTime) {
				li.string(&p.Backups.Daily.StartTime, bc.StartTime)
			}
			li.backupLocation(p, bc)
		}
		li.safety(p, s)
		li.disk(&p.Resources.Disk, s)
		li.string(&p.Resources.Disk.Type, FromDataDiskType(s.DataDiskType))
		li.maintenance(&p.Maintenance, s.MaintenanceWindow)
		li.maintenancePlan(&p.Maintenance, s)
	}
	return li.changed
}

// lateInit records whether anything was filled in.
type lateInit struct{ changed bool }

// string sets *field to v if it is unset and v is not.
func (li *lateInit) string(field *string, v string) {
	if *field == "" && v != "" {
		*field = v
		li.changed = true
	}
}

// safety fills deletion protection, retainOnDelete and the final backup from
// s. A final backup that is off takes no retention; one on without a
// retention (or one the CRD would refuse) takes Cloud SQL's default.
func (li *lateInit) safety(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	if p.DeletionProtection == nil {
		p.DeletionProtection = &v1alpha1.DeletionProtection{Enabled: s.DeletionProtectionEnabled}
		li.changed = true
	}
	if p.Backups.RetainOnDelete == nil {
		retain := s.RetainBackupsOnDelete
		p.Backups.RetainOnDelete = &retain
		li.changed = true
	}
	if p.Backups.FinalBackup == nil {
		fb := &v1alpha1.FinalBackup{RetentionDays: v1alpha1.DefaultFinalBackupRetentionDays}
		if c := s.FinalBackupConfig; c != nil {
			fb.Enabled = c.Enabled
			if c.RetentionDays >= minFinalBackupDays && c.RetentionDays <= maxFinalBackupDays {
				fb.RetentionDays = int32(c.RetentionDays)
			}
		}
		p.Backups.FinalBackup = fb
		li.changed = true
	}
}

// backupLocation fills the backup location from bc. Point-in-time recovery,
// its log retention and the number of backups kept are not filled: Cloud SQL's
// defaults for them depend on the edition, and copied they would pin an
// edition's defaults that a change of edition must change.
func (li *lateInit) backupLocation(p *v1alpha1.PostgresqlInstanceParameters, bc *sqladmin.BackupConfiguration) {
	if backupLocationRE.MatchString(bc.Location) {
		li.string(&p.Backups.Location, bc.Location)
	}
}

// disk fills the sizes only when the disk has none at all: a maximum of 0
// means "no limit" and cannot be told apart from unset otherwise.
func (li *lateInit) disk(d *v1alpha1.Disk, s *sqladmin.Settings) {
	size := s.DataDiskSizeGb
	if d.SizeMinimumGb != 0 || d.SizeMaximumGb != 0 || size < minDiskSizeGb || size > maxDiskSizeGb {
		return
	}
	d.SizeMinimumGb = int32(size)
	switch limit := s.StorageAutoResizeLimit; {
	case s.StorageAutoResize != nil && !*s.StorageAutoResize:
		d.SizeMaximumGb = int32(size) // A maximum equal to the minimum is growth off.
	case limit >= size && limit <= maxDiskSizeGb:
		d.SizeMaximumGb = int32(limit)
	}
	li.changed = true
}

// maintenance fills the day from mw, and the hour of a chosen day.
func (li *lateInit) maintenance(m *v1alpha1.Maintenance, mw *sqladmin.MaintenanceWindow) {
	if mw == nil {
		mw = &sqladmin.MaintenanceWindow{}
	}
	li.string(&m.Day, FromMaintenanceDay(mw.Day))
	if m.Hour != "" || MaintenanceDay(m.Day) == MaintenanceAnyDay {
		return
	}
	hour := v1alpha1.DefaultMaintenanceHour
	if mw.Day == MaintenanceDay(m.Day) {
		if h := FromMaintenanceHour(mw.Hour); h != "" {
			hour = h
		}
	}
	li.string(&m.Hour, hour)
}
