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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

func TestGenerateBackupRun(t *testing.T) {
	cases := map[string]struct {
		reason string
		desc   *string
		ref    string
		want   *sqladmin.BackupRun
	}{
		"NoDescription": {
			reason: "Without a description the run is described by the object alone.",
			ref:    "nightly",
			want:   &sqladmin.BackupRun{Description: "PostgresqlBackup nightly, uid u-1"},
		},
		"Description": {
			reason: "The object's description comes first, the object after it.",
			desc:   ptr.To("before the upgrade"), ref: "team-a/nightly",
			want: &sqladmin.BackupRun{Description: "before the upgrade (PostgresqlBackup team-a/nightly, uid u-1)"},
		},
		"EmptyDescription": {
			reason: "An empty description is none.",
			desc:   ptr.To(""), ref: "nightly",
			want: &sqladmin.BackupRun{Description: "PostgresqlBackup nightly, uid u-1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := GenerateBackupRun(&v1alpha1.PostgresqlBackupSettings{Description: tc.desc}, tc.ref, "u-1")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nGenerateBackupRun(...): -want, +got:\n%s", tc.reason, diff)
			}
			got.Type = v1alpha1.BackupTypeOnDemand
			if !IsBackupOf(got, "u-1") {
				t.Errorf("%s\nIsBackupOf(GenerateBackupRun(...)) = false", tc.reason)
			}
		})
	}
}

func TestIsBackupOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		run    *sqladmin.BackupRun
		want   bool
	}{
		"Marked":         {reason: "An on-demand run with the object's mark is its.", run: &sqladmin.BackupRun{Type: "ON_DEMAND", Description: "x (PostgresqlBackup a, uid u-1)"}, want: true},
		"AnotherUID":     {reason: "Another object's UID is not.", run: &sqladmin.BackupRun{Type: "ON_DEMAND", Description: "PostgresqlBackup a, uid u-10"}},
		"Automated":      {reason: "An automated run is no object's.", run: &sqladmin.BackupRun{Type: "AUTOMATED", Description: "PostgresqlBackup a, uid u-1"}},
		"InTheMiddle":    {reason: "The mark counts only at the end, where the provider puts it.", run: &sqladmin.BackupRun{Type: "ON_DEMAND", Description: "PostgresqlBackup a, uid u-1 copied"}},
		"NoDescription":  {reason: "A run taken with gcloud has no mark.", run: &sqladmin.BackupRun{Type: "ON_DEMAND"}},
		"NoRun":          {reason: "Nothing is no one's.", run: nil},
		"MarkInUserText": {reason: "A description that only quotes the mark is not the object's.", run: &sqladmin.BackupRun{Type: "ON_DEMAND", Description: "uid u-1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsBackupOf(tc.run, "u-1"); got != tc.want {
				t.Errorf("%s\nIsBackupOf(...) = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

func TestGenerateBackupObservation(t *testing.T) {
	at := func(s string) *metav1.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Time{Time: tm}
	}
	cases := map[string]struct {
		reason string
		run    *sqladmin.BackupRun
		want   v1alpha1.PostgresqlBackupObservation
	}{
		"Successful": {
			reason: "A successful run shows its ID, times, size, location and version.",
			run: &sqladmin.BackupRun{
				Id: 1700000000123, Instance: "orders", Status: "SUCCESSFUL", Type: "ON_DEMAND", Description: "d",
				EnqueuedTime: "2026-11-27T10:00:00Z", StartTime: "2026-11-27T10:00:01Z", EndTime: "2026-11-27T10:02:00.5Z",
				MaxChargeableBytes: 52428800, Location: "eu", DatabaseVersion: "POSTGRES_16",
			},
			want: v1alpha1.PostgresqlBackupObservation{
				ID: "1700000000123", Instance: "orders", State: "SUCCESSFUL", Type: "ON_DEMAND", Description: "d",
				EnqueuedTime: at("2026-11-27T10:00:00Z"), StartTime: at("2026-11-27T10:00:01Z"), EndTime: at("2026-11-27T10:02:00.5Z"),
				SizeBytes: ptr.To[int64](52428800), Location: "eu", DatabaseVersion: "POSTGRES_16",
			},
		},
		"Enqueued": {
			reason: "An enqueued run has no start, end nor size yet.",
			run:    &sqladmin.BackupRun{Id: 7, Status: "ENQUEUED", EnqueuedTime: "2026-11-27T10:00:00Z"},
			want:   v1alpha1.PostgresqlBackupObservation{ID: "7", State: "ENQUEUED", EnqueuedTime: at("2026-11-27T10:00:00Z")},
		},
		"Failed": {
			reason: "A failed run shows Cloud SQL's message.",
			run:    &sqladmin.BackupRun{Id: 7, Status: "FAILED", Error: &sqladmin.OperationError{Code: "INTERNAL_ERROR", Message: "disk full"}},
			want:   v1alpha1.PostgresqlBackupObservation{ID: "7", State: "FAILED", Error: "disk full"},
		},
		"FailedWithoutMessage": {
			reason: "Without a message, the error's code says what it can.",
			run:    &sqladmin.BackupRun{Id: 7, Status: "FAILED", Error: &sqladmin.OperationError{Code: "INTERNAL_ERROR"}},
			want:   v1alpha1.PostgresqlBackupObservation{ID: "7", State: "FAILED", Error: "INTERNAL_ERROR"},
		},
		"MalformedTime": {
			reason: "A time that is not RFC 3339 is left out rather than shown wrong.",
			run:    &sqladmin.BackupRun{Id: 7, Status: "RUNNING", StartTime: "yesterday"},
			want:   v1alpha1.PostgresqlBackupObservation{ID: "7", State: "RUNNING"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GenerateBackupObservation(tc.run)); diff != "" {
				t.Errorf("%s\nGenerateBackupObservation(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestParseBackupRunID(t *testing.T) {
	for in, want := range map[string]bool{"1700000000123": true, "0": false, "-3": false, "nightly": false, "": false} {
		if _, got := ParseBackupRunID(in); got != want {
			t.Errorf("ParseBackupRunID(%q) ok = %v, want %v", in, got, want)
		}
	}
}
