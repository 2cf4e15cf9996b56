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
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// WithSafetyDefaults is p with the data-safety settings that p leaves unset
// turned on: deletion protection, backups kept on delete and a final backup
// kept for Cloud SQL's default retention. They apply to a new instance only:
// an imported one keeps what Cloud SQL has (LateInitialize copies it).
func WithSafetyDefaults(p v1alpha1.PostgresqlInstanceParameters) v1alpha1.PostgresqlInstanceParameters {
	if p.DeletionProtection == nil {
		p.DeletionProtection = &v1alpha1.DeletionProtection{Enabled: true}
	}
	if p.Backups.RetainOnDelete == nil {
		p.Backups.RetainOnDelete = ptr.To(true)
	}
	if p.Backups.FinalBackup == nil {
		p.Backups.FinalBackup = &v1alpha1.FinalBackup{Enabled: true, RetentionDays: v1alpha1.DefaultFinalBackupRetentionDays}
	}
	return p
}

// DeletionProtected reports whether Cloud SQL refuses to delete observed
// (settings.deletionProtectionEnabled).
func DeletionProtected(observed *sqladmin.DatabaseInstance) bool {
	return observed != nil && observed.Settings != nil && observed.Settings.DeletionProtectionEnabled
}

// GenerateProtection is the body of the instances.patch that turns the
// deletion protection of observed on or off: that one setting, at the
// observed settings version, and nothing else. Off, it is the last write to
// a doomed instance, right before its delete; on, it puts back a protection
// lifted for a delete that did not follow.
func GenerateProtection(observed *sqladmin.DatabaseInstance, enabled bool) *sqladmin.DatabaseInstance {
	s := &sqladmin.Settings{DeletionProtectionEnabled: enabled, ForceSendFields: []string{fieldDeletionProtection}}
	if observed != nil && observed.Settings != nil {
		s.SettingsVersion = observed.Settings.SettingsVersion
	}
	return &sqladmin.DatabaseInstance{Settings: s}
}

// ProtectionLeftOff reports whether observed, which the spec's parameters p
// want protected, is not: a delete lifted the protection and was then
// called off. Only that is put back; an instance whose spec leaves the
// protection unset (an import) keeps what Cloud SQL has.
func ProtectionLeftOff(p v1alpha1.PostgresqlInstanceParameters, observed *sqladmin.DatabaseInstance) bool {
	return p.DeletionProtection != nil && p.DeletionProtection.Enabled && observed != nil && !DeletionProtected(observed)
}

// FinalBackup is what instances.delete says about a final backup: whether to
// take one (Set false leaves it to the instance's finalBackupConfig) and for
// how many days to keep it (0 when not taken).
type FinalBackup struct {
	Set     bool
	Enabled bool
	TTLDays int64
}

// GenerateFinalBackup is what the delete of an instance with parameters p
// says about its final backup: as the spec's backups.finalBackup says, and
// nothing when the spec leaves it unset.
func GenerateFinalBackup(p v1alpha1.PostgresqlInstanceParameters) FinalBackup {
	fb := p.Backups.FinalBackup
	switch {
	case fb == nil:
		return FinalBackup{}
	case !fb.Enabled:
		return FinalBackup{Set: true}
	}
	return FinalBackup{Set: true, Enabled: true, TTLDays: int64(finalBackupDays(fb))}
}
