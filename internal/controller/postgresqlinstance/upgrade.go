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
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
)

const (
	errPreCheck        = "cannot run the pre-check of the upgrade of PostgresqlInstance %s (spec.forProvider.version) to %s, on Cloud SQL instance %s in project %s; it is retried"
	errReadPreCheck    = "cannot read the pre-check operation %s of the upgrade of PostgresqlInstance %s (spec.forProvider.version), on Cloud SQL instance %s in project %s; it is retried"
	errUpgradeBlocked  = "the upgrade of PostgresqlInstance %s (spec.forProvider.version %s) waits: Cloud SQL's pre-check of Cloud SQL instance %s for %s found what must be fixed first: %s; fix it, and the pre-check runs again at the next poll, before anything is written"
	errUpgradeBackup   = "cannot take the backup of Cloud SQL instance %s in project %s that the upgrade of PostgresqlInstance %s (spec.forProvider.version) to %s waits for; it is retried"
	errReadUpgradeRun  = "cannot read backup run %s of Cloud SQL instance %s in project %s, which the upgrade of PostgresqlInstance %s (spec.forProvider.version) to %s waits for; it is retried"
	errBackupFailed    = "the upgrade of PostgresqlInstance %s to %s waits: the backup taken before it, run %s of Cloud SQL instance %s, failed (%s); another is taken at the next poll"
	errUpgradeInstance = "cannot upgrade Cloud SQL instance %s in project %s to spec.forProvider.version; it is retried"
	errUpgradeFailed   = "the upgrade of PostgresqlInstance %s (spec.forProvider.version) failed: Cloud SQL could not upgrade instance %s to %s (%s); the instance keeps its version, and the upgrade is tried again, pre-check and backup first, at the next poll; the backup taken before this attempt is run %s"
	errNoUpgradeRunID  = "Cloud SQL took the backup of instance %s in project %s before its upgrade but named no backup run in operation %s"
)

// observeUpgrade keeps status.atProvider.majorUpgrade (prev, what status
// said before) and ends it once the instance runs the version it went to.
func (e *external[T]) observeUpgrade(mg T, inst *sqladmin.DatabaseInstance, prev *v1alpha1.MajorUpgrade) {
	mg.Observation().MajorUpgrade = prev
	if prev == nil || prev.Phase == v1alpha1.UpgradeDone || inst.DatabaseVersion != prev.ToVersion {
		return
	}
	prev.Phase, prev.Message = v1alpha1.UpgradeDone, ""
	prev.EndTime = &metav1.Time{Time: time.Now()}
}

// upgrade takes the guarded major upgrade of instance name to the version
// the spec raised it to one step further: Cloud SQL's pre-check, then an
// on-demand backup it waits for, then a patch of the version alone. Each
// step is recorded in status.atProvider.majorUpgrade and found again after a
// restart: a pre-check runs again (it changes nothing), the backup is found
// by its description, and the patch is sent only while no operation runs.
func (e *external[T]) upgrade(ctx context.Context, mg T, name string) error {
	target := e.diff.Upgrade
	st := mg.Observation().MajorUpgrade
	if st == nil || st.ToVersion != target || st.Phase == v1alpha1.UpgradeDone {
		st = &v1alpha1.MajorUpgrade{FromVersion: e.observed.DatabaseVersion, ToVersion: target, Phase: v1alpha1.UpgradePreCheck}
		mg.Observation().MajorUpgrade = st
	}
	if st.Phase == v1alpha1.UpgradePreCheck || st.Phase == v1alpha1.UpgradeBlocked {
		done, err := e.preCheck(ctx, mg, name, st)
		if err != nil || !done {
			return err
		}
		st.Phase, st.Message = v1alpha1.UpgradeBackup, ""
	}
	if st.Phase == v1alpha1.UpgradeBackup {
		done, err := e.backUpFirst(ctx, mg, name, st)
		if err != nil || !done {
			return err
		}
		st.Phase = v1alpha1.UpgradeUpgrading
	}
	if st.StartTime != nil && st.StartTime.After(e.readAt) {
		// Sent in this process, after what was observed.
		e.pacing.MarkBusy(core.ObjectKey(mg))
		return nil
	}
	if st.StartTime != nil {
		failed, err := e.upgradeFailed(ctx, name, st.StartTime.Time)
		if err != nil {
			return err
		}
		if failed != "" {
			// From the start at the next poll, not in a loop: a pre-check
			// and a backup of the instance as it is then.
			backup := st.BackupID
			st.Phase, st.PreCheckOperation, st.BackupID, st.BackupEndTime, st.StartTime = v1alpha1.UpgradePreCheck, "", "", nil, nil
			st.Message = cloudsql.Truncate(failed)
			st.FailedAttempts++
			e.pacing.MarkStalled(core.ObjectKey(mg))
			return errors.Errorf(errUpgradeFailed, objectRef(mg), name, st.ToVersion, st.Message, backup)
		}
	}
	sent, err := e.patchIfIdle(ctx, mg, name, cloudsql.GenerateUpgrade(target), errUpgradeInstance)
	if sent {
		st.StartTime = &metav1.Time{Time: time.Now()}
	}
	return err
}

// preCheck runs Cloud SQL's pre-check of the upgrade, and says whether it
// ended with nothing that blocks the upgrade.
func (e *external[T]) preCheck(ctx context.Context, mg T, name string, st *v1alpha1.MajorUpgrade) (bool, error) {
	if st.PreCheckOperation == "" {
		op, err := e.svc.Instances.PreCheckMajorVersionUpgrade(e.project, name, cloudsql.GeneratePreCheck(st.ToVersion)).Context(ctx).Do()
		if cloudsql.IsOperationInProgress(err) {
			e.pacing.MarkBusy(core.ObjectKey(mg))
			return false, nil
		}
		if err != nil {
			return false, errors.Wrapf(cloudsql.Truncated(err), errPreCheck, objectRef(mg), st.ToVersion, name, e.project)
		}
		st.PreCheckOperation = op.Name
		e.pacing.MarkBusy(core.ObjectKey(mg))
		return false, nil
	}
	op, err := e.svc.Operations.Get(e.project, st.PreCheckOperation).Context(ctx).Do()
	if cloudsql.IsNotFound(err) {
		st.PreCheckOperation = ""
		e.pacing.MarkBusy(core.ObjectKey(mg))
		return false, nil
	}
	if err != nil {
		return false, errors.Wrapf(cloudsql.Truncated(err), errReadPreCheck, st.PreCheckOperation, objectRef(mg), name, e.project)
	}
	if op.Status != cloudsql.OperationDone {
		e.pacing.MarkBusy(core.ObjectKey(mg))
		return false, nil
	}
	findings := cloudsql.PreCheckFindings(op)
	if op.Error != nil {
		for _, oe := range op.Error.Errors {
			if oe != nil {
				findings = append(findings, oe.Code+": "+oe.Message)
			}
		}
	}
	if len(findings) == 0 {
		return true, nil
	}
	// Run again at the next poll: the user may have fixed it by then.
	st.Phase, st.PreCheckOperation = v1alpha1.UpgradeBlocked, ""
	st.Message = cloudsql.Truncate(strings.Join(findings, "; "))
	e.pacing.MarkStalled(core.ObjectKey(mg))
	return false, errors.Errorf(errUpgradeBlocked, objectRef(mg), mg.Parameters().Version, name, st.ToVersion, st.Message)
}

// backUpFirst takes the on-demand backup that the upgrade waits for, and
// says whether it succeeded.
func (e *external[T]) backUpFirst(ctx context.Context, mg T, name string, st *v1alpha1.MajorUpgrade) (bool, error) {
	desc := cloudsql.UpgradeBackupDescription(string(mg.GetUID()), st.ToVersion, st.FailedAttempts)
	if st.BackupID == "" {
		found, err := e.findUpgradeBackup(ctx, name, desc)
		if err != nil {
			return false, errors.Wrapf(cloudsql.Truncated(err), errUpgradeBackup, name, e.project, objectRef(mg), st.ToVersion)
		}
		if found == nil {
			op, err := e.svc.BackupRuns.Insert(e.project, name, &sqladmin.BackupRun{Description: desc}).Context(ctx).Do()
			if cloudsql.IsOperationInProgress(err) {
				e.pacing.MarkBusy(core.ObjectKey(mg))
				return false, nil
			}
			if err != nil {
				e.pacing.MarkWriteFailed(core.ObjectKey(mg), err)
				return false, errors.Wrapf(cloudsql.Truncated(err), errUpgradeBackup, name, e.project, objectRef(mg), st.ToVersion)
			}
			if op.BackupContext == nil || op.BackupContext.BackupId == 0 {
				return false, errors.Errorf(errNoUpgradeRunID, name, e.project, op.Name)
			}
			st.BackupID = cloudsql.BackupRunID(op.BackupContext.BackupId)
			e.pacing.MarkBusy(core.ObjectKey(mg))
			return false, nil
		}
		st.BackupID = cloudsql.BackupRunID(found.Id)
	}
	id, _ := cloudsql.ParseBackupRunID(st.BackupID)
	run, err := e.svc.BackupRuns.Get(e.project, name, id).Context(ctx).Do()
	if err != nil {
		return false, errors.Wrapf(cloudsql.Truncated(err), errReadUpgradeRun, st.BackupID, name, e.project, objectRef(mg), st.ToVersion)
	}
	switch run.Status {
	case v1alpha1.BackupStateSuccessful:
		if t, err := time.Parse(time.RFC3339Nano, run.EndTime); err == nil {
			st.BackupEndTime = &metav1.Time{Time: t}
		}
		return true, nil
	case v1alpha1.BackupStateFailed, v1alpha1.BackupStateDeleted, v1alpha1.BackupStateDeletionPending, v1alpha1.BackupStateDeletionFailed:
		msg := "it is " + run.Status
		if run.Error != nil {
			msg = run.Error.Code + ": " + run.Error.Message
		}
		failed := st.BackupID
		// Another backup at the next poll: a failed one is not found
		// again.
		st.BackupID, st.Message = "", cloudsql.Truncate(msg)
		e.pacing.MarkStalled(core.ObjectKey(mg))
		return false, errors.Errorf(errBackupFailed, objectRef(mg), st.ToVersion, failed, name, st.Message)
	}
	e.pacing.MarkBusy(core.ObjectKey(mg))
	return false, nil
}

// findUpgradeBackup finds, among the newest backup runs of instance name, a
// backup taken for the upgrade (its description desc) that did not fail.
func (e *external[T]) findUpgradeBackup(ctx context.Context, name, desc string) (*sqladmin.BackupRun, error) {
	l, err := e.svc.BackupRuns.List(e.project, name).MaxResults(cloudsql.BackupRunsRead).Context(ctx).Do()
	if err != nil {
		return nil, err
	}
	for _, r := range l.Items {
		if r != nil && r.Description == desc && usableRun(r.Status) {
			return r, nil
		}
	}
	return nil, nil
}

// upgradeFailed is Cloud SQL's error of the last upgrade operation of
// instance name that began at or after since and failed, or "" when it did
// not fail (or is not over).
func (e *external[T]) upgradeFailed(ctx context.Context, name string, since time.Time) (string, error) {
	ops, err := e.svc.Operations.List(e.project).Instance(name).MaxResults(10).Context(ctx).Do()
	if err != nil {
		return "", errors.Wrapf(err, errListOperations, name, e.project)
	}
	// Clocks differ: an operation Cloud SQL dates a little before the
	// provider sent it still counts.
	since = since.Add(-time.Minute)
	for _, op := range ops.Items {
		t, err := time.Parse(time.RFC3339Nano, op.InsertTime)
		if (op.OperationType != operationUpdate && op.OperationType != operationMajorUpgrade) || err != nil || t.Before(since) {
			continue
		}
		if op.Status != cloudsql.OperationDone || !cloudsql.OperationFailed(op) {
			return "", nil
		}
		var msgs []string
		for _, oe := range op.Error.Errors {
			if oe != nil {
				msgs = append(msgs, oe.Code+": "+oe.Message)
			}
		}
		if len(msgs) == 0 {
			return "its operation " + op.Name + " ended with an error", nil
		}
		return strings.Join(msgs, "; "), nil
	}
	return "", nil
}

// The types of the operation of an instances.patch of the version: the
// recorded real traffic shows UPDATE; the API also names MAJOR_VERSION_UPGRADE.
const (
	operationUpdate       = "UPDATE"
	operationMajorUpgrade = "MAJOR_VERSION_UPGRADE"
)

// usableRun says whether a backup run in state st is, or will be, a backup
// to go back to.
func usableRun(st string) bool {
	switch st {
	case v1alpha1.BackupStateFailed, v1alpha1.BackupStateDeleted, v1alpha1.BackupStateDeletionPending, v1alpha1.BackupStateDeletionFailed:
		return false
	}
	return true
}
