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
	"net/http"
	"strconv"
	"strings"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// ReasonBackupRunDoesNotExist is the reason of the 404 of a backup run that
// does not exist.
const ReasonBackupRunDoesNotExist = "backupRunDoesNotExist"

// IsBackupRunNotFound reports whether err is the 404 of a backup run that
// does not exist.
func IsBackupRunNotFound(err error) bool {
	return hasReason(err, http.StatusNotFound, ReasonBackupRunDoesNotExist)
}

// BackupMark is what the description of an on-demand backup carries of the
// PostgresqlBackup that took it: its UID, by which a provider that stopped
// between the insert and recording the run's ID finds the run again.
func BackupMark(uid types.UID) string {
	return "uid " + string(uid)
}

// GenerateBackupRun is the body of the backupRuns.insert of a PostgresqlBackup
// named ref (name, or namespace/name) with UID uid: its description, then the
// object's name and BackupMark.
func GenerateBackupRun(s *v1alpha1.PostgresqlBackupSettings, ref string, uid types.UID) *sqladmin.BackupRun {
	tail := "PostgresqlBackup " + ref + ", " + BackupMark(uid)
	desc := tail
	if s.Description != nil && *s.Description != "" {
		desc = *s.Description + " (" + tail + ")"
	}
	return &sqladmin.BackupRun{Description: desc}
}

// IsBackupOf reports whether run was taken for the PostgresqlBackup with UID
// uid: an on-demand run whose description ends with its BackupMark.
func IsBackupOf(run *sqladmin.BackupRun, uid types.UID) bool {
	if run == nil || uid == "" || run.Type != v1alpha1.BackupTypeOnDemand {
		return false
	}
	d := strings.TrimSuffix(run.Description, ")")
	return strings.HasSuffix(d, ", "+BackupMark(uid))
}

// BackupRunID is the ID that names a backup run in the API and in the
// object's external name.
func BackupRunID(id int64) string { return strconv.FormatInt(id, 10) }

// ParseBackupRunID parses an external name as a backup run's ID.
func ParseBackupRunID(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// GenerateBackupObservation is status.atProvider of a backup run.
func GenerateBackupObservation(run *sqladmin.BackupRun) v1alpha1.PostgresqlBackupObservation {
	o := v1alpha1.PostgresqlBackupObservation{
		ID: BackupRunID(run.Id), Instance: run.Instance, State: run.Status, Type: run.Type,
		Description: run.Description, Location: run.Location, DatabaseVersion: run.DatabaseVersion,
		EnqueuedTime: apiTime(run.EnqueuedTime), StartTime: apiTime(run.StartTime), EndTime: apiTime(run.EndTime),
	}
	if run.MaxChargeableBytes > 0 {
		o.SizeBytes = ptr.To(run.MaxChargeableBytes)
	}
	if run.Error != nil {
		o.Error = run.Error.Message
		if o.Error == "" {
			o.Error = run.Error.Code
		}
	}
	return o
}
