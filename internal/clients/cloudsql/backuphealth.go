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
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Backup health: what the newest backup runs of an instance say of its
// backups, as status.atProvider.backups and the BackupsHealthy condition.

// BackupRunsRead is how many backup runs one read asks for (maxResults): a
// week of daily backups and a few on-demand ones, enough to find the newest
// automated run and the newest success in one page.
const BackupRunsRead = 10

// Backup run types and statuses, as the API spells them.
const (
	BackupRunAutomated  = "AUTOMATED"
	BackupRunOnDemand   = "ON_DEMAND"
	BackupRunSuccessful = "SUCCESSFUL"
	BackupRunFailed     = "FAILED"
)

// BackupWindow is how long Cloud SQL's automated backup may take to start
// after backupConfiguration.startTime; BackupGrace is the slack on top of a
// day and the window before a backup counts as overdue.
const (
	BackupWindow = 4 * time.Hour
	BackupGrace  = time.Hour
	// BackupOverdue is how long after the newest automated backup that
	// succeeded (or the instance's creation) the next is overdue.
	BackupOverdue = 24*time.Hour + BackupWindow + BackupGrace
)

// BackupHealth is status.atProvider.backups for the runs Cloud SQL lists
// (newest first, as it lists them), the recoverable window rt (nil while
// point-in-time recovery is off) and the time of the read.
func BackupHealth(runs []*sqladmin.BackupRun, rt *sqladmin.SqlInstancesGetLatestRecoveryTimeResponse, readAt time.Time) *v1alpha1.BackupHealth {
	h := &v1alpha1.BackupHealth{ReadTime: &metav1.Time{Time: readAt.UTC().Truncate(time.Second)}}
	var newest *sqladmin.BackupRun
	for _, r := range runs {
		if r == nil {
			continue
		}
		if newest == nil {
			newest = r
		}
		if r.Status == BackupRunSuccessful {
			h.LastSuccessful = runSummary(r)
			break
		}
	}
	if newest != nil && (h.LastSuccessful == nil || newest.Id != runID(h.LastSuccessful)) {
		h.LastRun = runSummary(newest)
	}
	if rt != nil {
		h.EarliestRecoveryTime = apiTime(rt.EarliestRecoveryTime)
		h.LatestRecoveryTime = apiTime(rt.LatestRecoveryTime)
	}
	return h
}

func runID(s *v1alpha1.BackupRunSummary) int64 {
	id, _ := strconv.ParseInt(s.ID, 10, 64)
	return id
}

// runSummary is a backup run as the status shows it.
func runSummary(r *sqladmin.BackupRun) *v1alpha1.BackupRunSummary {
	s := &v1alpha1.BackupRunSummary{ID: strconv.FormatInt(r.Id, 10), Type: r.Type, Status: r.Status, Time: runTime(r), Error: runError(r)}
	return s
}

// runTime is when a run ended, or when it was enqueued while it runs.
func runTime(r *sqladmin.BackupRun) *metav1.Time {
	if t := apiTime(r.EndTime); t != nil {
		return t
	}
	return apiTime(r.EnqueuedTime)
}

// runError is Cloud SQL's error of a run, "code: message", or "".
func runError(r *sqladmin.BackupRun) string {
	e := r.Error
	if e == nil || (e.Code == "" && e.Message == "") {
		return ""
	}
	if e.Code == "" {
		return e.Message
	}
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// BackupsCondition is the BackupsHealthy condition of the instance inst
// (named ref, as the messages say it) from its newest backup runs, at now:
//
//   - False, Disabled, while daily backups are off;
//   - False, BackupFailed, with Cloud SQL's error, when the newest automated
//     run that ended failed;
//   - False, Overdue, when no automated backup succeeded for longer than a
//     day, the backup window and a grace (BackupOverdue), counted from the
//     newest that did, or from the instance's creation;
//   - Unknown, AutomatedNotListed, when runs (a full read) holds on-demand
//     runs only;
//   - Unknown, NoBackupYet, for an instance younger than that with no
//     automated backup yet;
//   - True, Succeeded, otherwise.
func BackupsCondition(ref string, inst *sqladmin.DatabaseInstance, runs []*sqladmin.BackupRun, now time.Time) xpv2.Condition {
	c := xpv2.Condition{Type: v1alpha1.BackupsHealthy, LastTransitionTime: metav1.NewTime(now)}
	var bc *sqladmin.BackupConfiguration
	if inst != nil && inst.Settings != nil {
		bc = inst.Settings.BackupConfiguration
	}
	if bc == nil || !bc.Enabled {
		return withState(c, corev1.ConditionFalse, v1alpha1.ReasonBackupsDisabled, fmt.Sprintf(
			"daily backups of PostgresqlInstance %s are off (spec.forProvider.backups.daily.enabled: false): if its data is lost or damaged, "+
				"nothing can be recovered; set spec.forProvider.backups.daily.enabled to true", ref))
	}
	ended, success := newestAutomated(runs)
	if ended == nil && success == nil && len(runs) >= BackupRunsRead {
		// On-demand runs crowd the automated ones out of the page: a
		// namespace's backups of a shared instance must not make it look
		// overdue.
		return withState(c, corev1.ConditionUnknown, v1alpha1.ReasonAutomatedNotListed, fmt.Sprintf(
			"the newest %d backup runs of PostgresqlInstance %s are all on-demand, so its newest automated backup is not known: "+
				"delete on-demand backups that are no longer needed (PostgresqlBackups, or gcloud sql backups delete), or see gcloud sql backups list --instance=%s",
			len(runs), ref, instanceName(inst)))
	}
	if ended != nil && ended.Status == BackupRunFailed {
		return withState(c, corev1.ConditionFalse, v1alpha1.ReasonBackupFailed, Truncate(fmt.Sprintf(
			"the last automated backup of PostgresqlInstance %s (backup run %d, %s) failed: %s; Cloud SQL tries again in the next backup window "+
				"(spec.forProvider.backups.daily.startTime); take an on-demand backup now (gcloud sql backups create --instance=%s) and see the instance's logs",
			ref, ended.Id, orUnset(ended.EndTime), orUnset(runError(ended)), instanceName(inst))))
	}
	since, what := time.Time{}, "no automated backup has succeeded since the instance was created"
	if success != nil {
		since, what = timeOf(success.EndTime), "the last automated backup that succeeded (backup run "+strconv.FormatInt(success.Id, 10)+") ended at "+success.EndTime
	} else if inst != nil {
		since = timeOf(inst.CreateTime)
	}
	if !since.IsZero() && now.Sub(since) > BackupOverdue {
		return withState(c, corev1.ConditionFalse, v1alpha1.ReasonBackupOverdue, fmt.Sprintf(
			"automated backups of PostgresqlInstance %s are overdue: %s, more than %s ago (a day, the %s backup window from spec.forProvider.backups.daily.startTime %s, and %s of grace); "+
				"check that the instance is RUNNABLE, and take an on-demand backup (gcloud sql backups create --instance=%s)",
			ref, what, BackupOverdue, BackupWindow, orUnset(bc.StartTime), BackupGrace, instanceName(inst)))
	}
	if success == nil {
		return withState(c, corev1.ConditionUnknown, v1alpha1.ReasonNoBackupYet, fmt.Sprintf(
			"PostgresqlInstance %s has no automated backup yet: the first comes in the backup window from spec.forProvider.backups.daily.startTime %s (UTC)",
			ref, orUnset(bc.StartTime)))
	}
	return withState(c, corev1.ConditionTrue, v1alpha1.ReasonBackupSucceeded, fmt.Sprintf(
		"the last automated backup of PostgresqlInstance %s (backup run %d) succeeded at %s", ref, success.Id, success.EndTime))
}

// BackupsReadFailedCondition is the BackupsHealthy condition once the reads
// of the backup runs of the instance (named ref) have failed since readTime
// for longer than the health says anything: its health is not known.
func BackupsReadFailedCondition(ref string, readTime time.Time, err string, now time.Time) xpv2.Condition {
	c := xpv2.Condition{Type: v1alpha1.BackupsHealthy, LastTransitionTime: metav1.NewTime(now)}
	since := "ever"
	if !readTime.IsZero() {
		since = "since " + readTime.UTC().Format(time.RFC3339)
	}
	return withState(c, corev1.ConditionUnknown, v1alpha1.ReasonBackupReadFailed, Truncate(fmt.Sprintf(
		"the provider could not read the backup runs of PostgresqlInstance %s %s: %s; check that the provider's service account may list backup runs (cloudsql.backupRuns.list)",
		ref, since, err)))
}

func withState(c xpv2.Condition, s corev1.ConditionStatus, r xpv2.ConditionReason, msg string) xpv2.Condition {
	c.Status, c.Reason, c.Message = s, r, msg
	return c
}

// newestAutomated is the newest automated run that ended (successful or
// failed), and the newest automated run that succeeded, among runs (newest
// first); nil when there is none.
func newestAutomated(runs []*sqladmin.BackupRun) (ended, success *sqladmin.BackupRun) {
	for _, r := range runs {
		if r == nil || r.Type != BackupRunAutomated {
			continue
		}
		if ended == nil && (r.Status == BackupRunSuccessful || r.Status == BackupRunFailed) {
			ended = r
		}
		if r.Status == BackupRunSuccessful {
			return ended, r
		}
	}
	return ended, nil
}

func timeOf(s string) time.Time {
	if t := apiTime(s); t != nil {
		return t.Time
	}
	return time.Time{}
}

func instanceName(inst *sqladmin.DatabaseInstance) string {
	if inst == nil {
		return "INSTANCE"
	}
	return inst.Name
}
