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
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
)

const (
	errListBackupRuns = "cannot list the backup runs of Cloud SQL instance %s in project %s"
	errRecoveryWindow = "cannot get the point-in-time recovery window of Cloud SQL instance %s in project %s"
)

// backupReadsToStale is how many health intervals without a read that
// succeeded leave the backup health unknown.
const backupReadsToStale = 3

// observeBackups keeps the instance's backup health (status.atProvider.backups
// and the BackupsHealthy condition) as it was, prev, and reads it again when
// it is due (core.Pacing.BackupHealthDue): one backupRuns.list, and one
// instances.getLatestRecoveryTime while point-in-time recovery is on. An
// instance being deleted, or not RUNNABLE, is not read. A failed read never
// fails the observation: the health stays as it was, with the error, and once
// no read has succeeded for a few intervals the condition says its health is
// not known.
func (e *external[T]) observeBackups(ctx context.Context, mg T, inst *sqladmin.DatabaseInstance, prev *v1alpha1.BackupHealth) {
	mg.Observation().Backups = prev
	key := core.ObjectKey(mg)
	var last time.Time
	if prev != nil && prev.ReadTime != nil {
		last = prev.ReadTime.Time
	}
	if meta.WasDeleted(mg) || inst.State != core.StateRunnable || !e.pacing.BackupHealthDue(key, last) {
		return
	}
	pitr := inst.Settings != nil && inst.Settings.BackupConfiguration != nil && inst.Settings.BackupConfiguration.PointInTimeRecoveryEnabled
	requests := 1
	if pitr {
		requests = 2
	}
	e.pacing.BackupHealthRead(key, requests)
	now := time.Now()
	runs, rt, err := e.readBackups(ctx, inst.Name, pitr)
	if err != nil {
		h := &v1alpha1.BackupHealth{}
		if prev != nil {
			h = prev.DeepCopy()
		}
		h.ReadError = cloudsql.Truncate(err.Error())
		mg.Observation().Backups = h
		if last.IsZero() || now.Sub(last) > backupReadsToStale*e.pacing.BackupHealthInterval() {
			mg.SetConditions(cloudsql.BackupsReadFailedCondition(objectRef(mg), last, h.ReadError, now))
		}
		return
	}
	mg.Observation().Backups = cloudsql.BackupHealth(runs, rt, now)
	mg.SetConditions(cloudsql.BackupsCondition(objectRef(mg), inst, runs, now))
}

// readBackups lists the instance's newest backup runs and, when pitr, its
// recoverable window.
func (e *external[T]) readBackups(ctx context.Context, name string, pitr bool) ([]*sqladmin.BackupRun, *sqladmin.SqlInstancesGetLatestRecoveryTimeResponse, error) {
	list, err := e.svc.BackupRuns.List(e.project, name).MaxResults(cloudsql.BackupRunsRead).Context(ctx).Do()
	if err != nil {
		return nil, nil, errors.Wrapf(err, errListBackupRuns, name, e.project)
	}
	if !pitr {
		return list.Items, nil, nil
	}
	rt, err := e.svc.Projects.Instances.GetLatestRecoveryTime(e.project, name).Context(ctx).Do()
	if err != nil {
		return nil, nil, errors.Wrapf(err, errRecoveryWindow, name, e.project)
	}
	return list.Items, rt, nil
}
