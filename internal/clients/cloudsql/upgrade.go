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

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// Kinds of Cloud SQL operations the guarded upgrade and recoveries start.
const (
	OperationPreCheck = "PRE_CHECK_MAJOR_VERSION_UPGRADE"
	OperationClone    = "CLONE"
	OperationRestore  = "RESTORE_VOLUME"
)

// preCheckError is the messageType of a pre-check finding that blocks the
// upgrade; INFO and WARNING ones do not.
const preCheckError = "ERROR"

// versionRank orders Cloud SQL's PostgreSQL databaseVersions: POSTGRES_9_6
// is 96, POSTGRES_16 is 160; 0 for anything else.
func versionRank(v string) int {
	major, minor, _ := strings.Cut(FromDatabaseVersion(v), ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 0
	}
	m, _ := strconv.Atoi(minor)
	return n*10 + m
}

// IsUpgrade says whether to is a later PostgreSQL major version than from,
// both as Cloud SQL spells them (POSTGRES_15).
func IsUpgrade(from, to string) bool {
	f, t := versionRank(from), versionRank(to)
	return f > 0 && t > f
}

// GenerateUpgrade is the patch of a major upgrade to version: the version
// alone, so that nothing else rides on the long operation it starts.
func GenerateUpgrade(version string) *sqladmin.DatabaseInstance {
	return &sqladmin.DatabaseInstance{DatabaseVersion: version}
}

// GeneratePreCheck asks Cloud SQL whether the instance can be upgraded to
// version.
func GeneratePreCheck(version string) *sqladmin.InstancesPreCheckMajorVersionUpgradeRequest {
	return &sqladmin.InstancesPreCheckMajorVersionUpgradeRequest{
		PreCheckMajorVersionUpgradeContext: &sqladmin.PreCheckMajorVersionUpgradeContext{TargetDatabaseVersion: version},
	}
}

// PreCheckFindings are the findings of a done pre-check operation that
// block the upgrade, each as "message (actions required: ...)"; none when
// the upgrade may go on.
func PreCheckFindings(op *sqladmin.Operation) []string {
	if op == nil || op.PreCheckMajorVersionUpgradeContext == nil {
		return nil
	}
	var out []string
	for _, r := range op.PreCheckMajorVersionUpgradeContext.PreCheckResponse {
		if r == nil || r.MessageType != preCheckError {
			continue
		}
		f := r.Message
		if len(r.ActionsRequired) > 0 {
			f += fmt.Sprintf(" (actions required: %s)", strings.Join(r.ActionsRequired, "; "))
		}
		out = append(out, f)
	}
	return out
}

// UpgradeBackupDescription is the description of the on-demand backup taken
// before an upgrade to version of the instance of the object with UID uid,
// after failed earlier attempts: the provider finds the backup of this
// attempt again by it after a crash, and never one of an earlier attempt.
func UpgradeBackupDescription(uid, version string, failed int32) string {
	d := fmt.Sprintf("before the upgrade to %s (PostgresqlInstance uid %s)", version, uid)
	if failed > 0 {
		d += fmt.Sprintf(", attempt %d", failed+1)
	}
	return d
}
