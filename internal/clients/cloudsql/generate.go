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
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Names of fields in ForceSendFields. The Go client leaves out false, 0 and
// empty lists unless they are named there, and Cloud SQL then keeps (on
// patch) or defaults (on insert) the value instead of taking the desired
// one.
const (
	fieldEnabled                = "Enabled"
	fieldIpv4Enabled            = "Ipv4Enabled"
	fieldAuthorizedNetworks     = "AuthorizedNetworks"
	fieldDatabaseFlags          = "DatabaseFlags"
	fieldDay                    = "Day"
	fieldHour                   = "Hour"
	fieldStorageAutoResize      = "StorageAutoResize"
	fieldStorageAutoResizeLimit = "StorageAutoResizeLimit"
	fieldDeletionProtection     = "DeletionProtectionEnabled"
	fieldRetainBackupsOnDelete  = "RetainBackupsOnDelete"
	fieldPointInTimeRecovery    = "PointInTimeRecoveryEnabled"
)

// RetentionUnitCount is the unit of backupRetentionSettings that counts
// backups, the only one Cloud SQL has.
const RetentionUnitCount = "COUNT"

// GenerateInstance is the body of instances.insert for a new instance named
// name in project, with rootPassword as the password of the postgres user.
// Unset parameters are left out, so Cloud SQL's defaults apply to them, but
// for the data-safety settings, which are on for a new instance unless the
// spec says otherwise (WithSafetyDefaults).
func GenerateInstance(name, project string, p v1alpha1.PostgresqlInstanceParameters, rootPassword string) *sqladmin.DatabaseInstance {
	p = WithSafetyDefaults(p)
	s := &sqladmin.Settings{
		PricingPlan:      PricingPlanPerUse,
		ActivationPolicy: ActivationPolicyAlways,
	}
	for _, set := range insertSetters {
		set(&p, s)
	}
	return &sqladmin.DatabaseInstance{
		Name:            name,
		Project:         project,
		Region:          p.Location.Region,
		DatabaseVersion: DatabaseVersion(p.Version),
		RootPassword:    rootPassword,
		InstanceType:    InstanceTypeCloudSQL,
		BackendType:     BackendTypeSecondGen,
		Settings:        s,
	}
}

// A setter writes one group of managed settings, taken from p, into s. The
// groups are what insert sends and what a patch sends together: a patch
// that fixes one field of a group sends the whole group, so that the result
// does not depend on whether Cloud SQL merges or replaces nested objects.
// Setters only ever set fields, so applying one twice is harmless.
type setter func(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings)

// insertSetters write every managed setting, in the order of the API.
var insertSetters = []setter{
	setTier, setEdition, setAvailability, setBackups, setFlags, setLabels,
	setIPConfiguration, setZone, setMaintenance, setDenyPeriods, setDiskSize, setAutoResize, setDiskType,
	setDeletionProtection, setRetainBackups, setFinalBackup,
}

// patchSetters write every managed setting that instances.patch can change.
// The disk size is not among them: without an observed size it could be a
// shrink, which Cloud SQL rejects (and with it the whole patch).
var patchSetters = []setter{
	setTier, setEdition, setAvailability, setBackups, setFlags, setLabels,
	setIPConfiguration, setZone, setMaintenance, setDenyPeriods, setAutoResize,
	setDeletionProtection, setRetainBackups, setFinalBackup,
}

func setTier(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	s.Tier = p.Resources.InstanceType
}

func setEdition(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	s.Edition = Edition(p.Edition)
}

func setAvailability(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	s.AvailabilityType = AvailabilityType(p.Availability.Type)
}

// setBackups sends the backup configuration the spec sets: daily backups,
// point-in-time recovery (its log retention only while it is on), the
// number of backups kept and their location. What the spec leaves unset is
// left out, so Cloud SQL keeps (or defaults, per edition) it.
func setBackups(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	b := p.Backups
	d := b.Daily
	if d.Enabled == nil && d.StartTime == "" && b.PointInTimeRecovery == nil && b.RetainedBackups == nil && b.Location == "" {
		return
	}
	bc := &sqladmin.BackupConfiguration{StartTime: d.StartTime, Location: b.Location}
	if d.Enabled != nil {
		bc.Enabled = *d.Enabled
		bc.ForceSendFields = forceSend(bc.ForceSendFields, fieldEnabled)
	}
	if pitr := b.PointInTimeRecovery; pitr != nil {
		bc.PointInTimeRecoveryEnabled = pitr.Enabled
		bc.ForceSendFields = forceSend(bc.ForceSendFields, fieldPointInTimeRecovery)
		if pitr.Enabled {
			bc.TransactionLogRetentionDays = int64(pitr.LogRetentionDays)
		}
	}
	if n := b.RetainedBackups; n != nil {
		bc.BackupRetentionSettings = &sqladmin.BackupRetentionSettings{RetentionUnit: RetentionUnitCount, RetainedBackups: int64(*n)}
	}
	s.BackupConfiguration = bc
}

// setDeletionProtection sends deletionProtectionEnabled, false included,
// when the spec sets it.
func setDeletionProtection(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	if dp := p.DeletionProtection; dp != nil {
		s.DeletionProtectionEnabled = dp.Enabled
		s.ForceSendFields = forceSend(s.ForceSendFields, fieldDeletionProtection)
	}
}

// setRetainBackups sends retainBackupsOnDelete, false included, when the
// spec sets it.
func setRetainBackups(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	if r := p.Backups.RetainOnDelete; r != nil {
		s.RetainBackupsOnDelete = *r
		s.ForceSendFields = forceSend(s.ForceSendFields, fieldRetainBackupsOnDelete)
	}
}

// setFinalBackup sends finalBackupConfig whole when the spec sets it: the
// retention only with the final backup on, where it means something.
func setFinalBackup(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	fb := p.Backups.FinalBackup
	if fb == nil {
		return
	}
	c := &sqladmin.FinalBackupConfig{Enabled: fb.Enabled, ForceSendFields: []string{fieldEnabled}}
	if fb.Enabled {
		c.RetentionDays = int64(finalBackupDays(fb))
	}
	s.FinalBackupConfig = c
}

// finalBackupDays is the retention of the final backup fb describes, with
// Cloud SQL's default when none is given.
func finalBackupDays(fb *v1alpha1.FinalBackup) int32 {
	if fb.RetentionDays <= 0 {
		return v1alpha1.DefaultFinalBackupRetentionDays
	}
	return fb.RetentionDays
}

// setFlags sends the flags as a whole list, so that after the call they are
// exactly the ones specified; no flags is sent as an empty list.
func setFlags(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	s.DatabaseFlags = DatabaseFlags(p.Flags)
	s.ForceSendFields = forceSend(s.ForceSendFields, fieldDatabaseFlags)
}

func setLabels(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	s.UserLabels = UserLabels(p.Labels)
}

// setIPConfiguration sends the authorized networks as a whole list (empty
// when there are none) and the private network only when one is wanted:
// Cloud SQL cannot remove a private network, and an empty one would be read
// as a request to.
func setIPConfiguration(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	n := p.Networking
	ipc := &sqladmin.IpConfiguration{
		Ipv4Enabled:        n.PublicIP.Enabled,
		AuthorizedNetworks: AuthorizedNetworks(n.PublicIP.AuthorizedNetworks),
		ForceSendFields:    []string{fieldIpv4Enabled, fieldAuthorizedNetworks},
	}
	if n.PrivateIP.Enabled && n.PrivateIP.Network != "" {
		ipc.PrivateNetwork = n.PrivateIP.Network
	}
	s.IpConfiguration = ipc
}

// setZone sets a location preference only for a chosen zone: without one,
// Cloud SQL picks a zone of the region, which is what Any means.
func setZone(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	if z := p.Location.Zone; z != "" && z != v1alpha1.Any {
		s.LocationPreference = &sqladmin.LocationPreference{Zone: z}
	}
}

// setMaintenance sends day and hour together, 0 included: day 0 is how
// Cloud SQL says "any day", and must be sent to undo a chosen day. The
// update track goes with them when the spec sets it.
func setMaintenance(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	m := p.Maintenance
	if m.Day == "" && m.UpdateTrack == "" {
		return
	}
	mw := &sqladmin.MaintenanceWindow{UpdateTrack: m.UpdateTrack}
	if m.Day != "" {
		mw.Day, mw.Hour = MaintenanceDay(m.Day), wantMaintenanceHour(m)
		mw.ForceSendFields = []string{fieldDay, fieldHour}
	}
	s.MaintenanceWindow = mw
}

// wantMaintenanceHour is the maintenanceWindow.hour for m: the effective
// hour on a chosen day, 0 on any day.
func wantMaintenanceHour(m v1alpha1.Maintenance) int64 {
	if MaintenanceDay(m.Day) == MaintenanceAnyDay {
		return 0
	}
	return MaintenanceHour(m.EffectiveHour())
}

func setDiskSize(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	if d := p.Resources.Disk; d.SizeMinimumGb > 0 {
		s.DataDiskSizeGb = int64(d.SizeMinimumGb)
	}
}

// setAutoResize sends storageAutoResize and its limit together, false and
// 0 (no limit) included.
func setAutoResize(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	d := p.Resources.Disk
	if d.SizeMinimumGb <= 0 {
		return
	}
	on := autoResize(d)
	s.StorageAutoResize = &on
	s.StorageAutoResizeLimit = int64(d.SizeMaximumGb)
	s.ForceSendFields = forceSend(s.ForceSendFields, fieldStorageAutoResize, fieldStorageAutoResizeLimit)
}

func setDiskType(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	s.DataDiskType = DataDiskType(p.Resources.Disk.Type)
}

// autoResize reports whether the disk may grow: unless the maximum equals
// the minimum. A maximum of 0 (no limit) differs from every minimum, which
// callers check is set (the CRD makes it at least 10).
func autoResize(d v1alpha1.Disk) bool {
	return d.SizeMaximumGb != d.SizeMinimumGb
}

// forceSend adds names to fields unless they are there already.
func forceSend(fields []string, names ...string) []string {
	for _, n := range names {
		present := false
		for _, f := range fields {
			if f == n {
				present = true
				break
			}
		}
		if !present {
			fields = append(fields, n)
		}
	}
	return fields
}
