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

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

func TestGenerateObservation(t *testing.T) {
	cases := map[string]struct {
		observed *sqladmin.DatabaseInstance
		want     v1alpha1.PostgresqlInstanceObservation
	}{
		"Full": {
			observed: fullObserved(),
			want: v1alpha1.PostgresqlInstanceObservation{
				State:                      "RUNNABLE",
				ConnectionName:             "my-project-123456:europe-west4:cloudsql-psql-123456",
				PublicIP:                   "34.9.8.7",
				PrivateIP:                  "10.9.8.7",
				GCEZone:                    "europe-west4-b",
				DatabaseInstalledVersion:   "POSTGRES_9_6_24",
				CurrentDiskSizeGb:          20,
				ServiceAccountEmailAddress: "p123-abc@gcp-sa-cloud-sql.iam.gserviceaccount.com",
				SettingsVersion:            3,
				SelfLink:                   "https://sqladmin.googleapis.com/sql/v1beta4/projects/my-project-123456/instances/cloudsql-psql-123456",
			},
		},
		"PublicOnlyIgnoresOutgoing": {
			observed: &sqladmin.DatabaseInstance{IpAddresses: []*sqladmin.IpMapping{
				nil,
				{Type: "OUTGOING", IpAddress: "35.0.0.1"},
				{Type: "PRIMARY", IpAddress: "34.0.0.1"},
			}},
			want: v1alpha1.PostgresqlInstanceObservation{PublicIP: "34.0.0.1"},
		},
		"PrivateServiceConnect": {
			observed: &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{IpConfiguration: &sqladmin.IpConfiguration{
				PscConfig: &sqladmin.PscConfig{PscEnabled: true},
			}}},
			want: v1alpha1.PostgresqlInstanceObservation{PSCEnabled: true},
		},
		"Creating": {
			observed: &sqladmin.DatabaseInstance{State: "PENDING_CREATE", Settings: &sqladmin.Settings{DataDiskSizeGb: 10, SettingsVersion: 1}},
			want:     v1alpha1.PostgresqlInstanceObservation{State: "PENDING_CREATE", CurrentDiskSizeGb: 10, SettingsVersion: 1},
		},
		"NoSettings": {
			observed: &sqladmin.DatabaseInstance{State: "RUNNABLE"},
			want:     v1alpha1.PostgresqlInstanceObservation{State: "RUNNABLE"},
		},
		"Nil": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, GenerateObservation(tc.observed)); diff != "" {
				t.Errorf("GenerateObservation(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestLateInitialize(t *testing.T) {
	cases := map[string]struct {
		params   v1alpha1.PostgresqlInstanceParameters
		observed observedChange
		want     v1alpha1.PostgresqlInstanceParameters
		changed  bool
	}{
		"CompleteSpecIsLeftAlone": {
			params: fullParams(),
			observed: func(o *sqladmin.DatabaseInstance) {
				// Even where the instance differs: late initialisation never
				// overrides the spec.
				o.Settings.Tier = "db-custom-8-30720"
				o.Settings.MaintenanceWindow = &sqladmin.MaintenanceWindow{Day: 1, Hour: 2}
			},
			want: fullParams(),
		},
		"MinimalSpecTakesTheSafetyItWasCreatedWith": {
			params:  minimalParams(),
			want:    asCreated(withSafety(minimalParams(), true, true, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 14})),
			changed: true,
		},
		"ImportedUnprotectedInstanceStaysUnprotected": {
			params: minimalParams(),
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.DeletionProtectionEnabled = false
				o.Settings.RetainBackupsOnDelete = false
				o.Settings.FinalBackupConfig = nil
			},
			want:    asCreated(withSafety(minimalParams(), false, false, &v1alpha1.FinalBackup{RetentionDays: 30})),
			changed: true,
		},
		"FinalBackupRetentionTheCRDWouldRejectIsTheDefault": {
			params:   minimalParams(),
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.FinalBackupConfig.RetentionDays = 400 },
			want:     asCreated(withSafety(minimalParams(), true, true, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 30})),
			changed:  true,
		},
		"RetentionIsLeftToTheEdition": {
			params: minimalParams(),
			// Point-in-time recovery and the backups kept stay unset: Cloud
			// SQL's defaults for them change with the edition.
			want:    asCreated(withSafety(minimalParams(), true, true, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 14})),
			changed: true,
		},
		"SafetySetInTheSpecIsLeftAlone": {
			params: asCreated(withSafety(minimalParams(), false, false, &v1alpha1.FinalBackup{RetentionDays: 7})),
			want:   asCreated(withSafety(minimalParams(), false, false, &v1alpha1.FinalBackup{RetentionDays: 7})),
		},
		"DayWithoutHourTakesTheObservedHourOfThatDay": {
			params:  withMaintenance(fullParams(), "Saturday", ""),
			want:    withMaintenance(fullParams(), "Saturday", "16:00"),
			changed: true,
		},
		"DayWithoutHourOnAnotherDayIsAt4": {
			params:  withMaintenance(fullParams(), "Monday", ""),
			want:    withMaintenance(fullParams(), "Monday", "04:00"),
			changed: true,
		},
		"DayWithoutHourAndNoWindowIsAt4": {
			params:   withMaintenance(fullParams(), "Saturday", ""),
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.MaintenanceWindow = nil },
			want:     withMaintenance(fullParams(), "Saturday", "04:00"),
			changed:  true,
		},
		"DayWithoutHourAndObservedHourOutOfRangeIsAt4": {
			params:   withMaintenance(fullParams(), "Saturday", ""),
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.MaintenanceWindow.Hour = 25 },
			want:     withMaintenance(fullParams(), "Saturday", "04:00"),
			changed:  true,
		},
		"AnyDayGetsNoHour": {
			params: withMaintenance(fullParams(), "Any", ""),
			want:   withMaintenance(fullParams(), "Any", ""),
		},
		"EmptySpecTakesWhatTheInstanceHas": {
			params: v1alpha1.PostgresqlInstanceParameters{Networking: fullParams().Networking},
			want: v1alpha1.PostgresqlInstanceParameters{
				Version:      "9.6",
				Edition:      "Enterprise",
				Availability: v1alpha1.Availability{Type: "Regional"},
				Backups: v1alpha1.Backups{
					Daily:          v1alpha1.DailyBackups{Enabled: ptr.To(true), StartTime: "22:00"},
					RetainOnDelete: ptr.To(true),
					FinalBackup:    &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 14},
					Location:       "eu",
				},
				// The zone stays unset: copying it would pin the zone
				// Cloud SQL picked.
				Location:    v1alpha1.Location{Region: "europe-west4"},
				Maintenance: v1alpha1.Maintenance{Day: "Saturday", Hour: "16:00"},
				// An imported instance keeps the data safety it has.
				DeletionProtection: &v1alpha1.DeletionProtection{Enabled: true},
				Networking:         fullParams().Networking,
				Resources: v1alpha1.Resources{
					Disk:         v1alpha1.Disk{SizeMinimumGb: 20, SizeMaximumGb: 40, Type: "SSD"},
					InstanceType: "db-custom-2-7680",
				},
			},
			changed: true,
		},
		"GrowthOffBecomesMaximumEqualToMinimum": {
			params: withDisk(fullParams(), 0, 0),
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.StorageAutoResize = ptr.To(false)
				o.Settings.StorageAutoResizeLimit = 0
			},
			want:    withDisk(fullParams(), 20, 20),
			changed: true,
		},
		"GrowthLimitBecomesMaximum": {
			params:  withDisk(fullParams(), 0, 0),
			want:    fullParams(),
			changed: true,
		},
		"SetMaximumIsLeftAlone": {
			params: withDisk(fullParams(), 0, 30),
			want:   withDisk(fullParams(), 0, 30),
		},
		"ValuesTheCRDWouldRejectAreNotCopied": {
			params: v1alpha1.PostgresqlInstanceParameters{},
			observed: func(o *sqladmin.DatabaseInstance) {
				*o = sqladmin.DatabaseInstance{
					DatabaseVersion: "MYSQL_8_0",
					Region:          "Europe West",
					Settings: &sqladmin.Settings{
						Tier:                   "db-n1-standard-1",
						Edition:                "EDITION_UNSPECIFIED",
						BackupConfiguration:    &sqladmin.BackupConfiguration{StartTime: "12:30"},
						DataDiskSizeGb:         5,
						DataDiskType:           "HYPERDISK_BALANCED",
						StorageAutoResizeLimit: 3,
						MaintenanceWindow:      &sqladmin.MaintenanceWindow{Day: 9, Hour: 3},
					},
				}
			},
			// Only what has a valid form: backups off and any day.
			want: v1alpha1.PostgresqlInstanceParameters{
				Backups: v1alpha1.Backups{
					Daily:          v1alpha1.DailyBackups{Enabled: ptr.To(false)},
					RetainOnDelete: ptr.To(false),
					FinalBackup:    &v1alpha1.FinalBackup{RetentionDays: 30},
				},
				DeletionProtection: &v1alpha1.DeletionProtection{},
				Maintenance:        v1alpha1.Maintenance{Day: "Any"},
			},
			changed: true,
		},
		"LimitBelowSizeLeavesMaximumUnset": {
			params: withDisk(fullParams(), 0, 0),
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.DataDiskSizeGb = 45
				o.Settings.StorageAutoResizeLimit = 40
			},
			want:    withDisk(fullParams(), 45, 0),
			changed: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			o := fullObserved()
			if tc.observed != nil {
				tc.observed(o)
			}
			p := tc.params
			g.Expect(LateInitialize(&p, o)).To(Equal(tc.changed))
			if diff := cmp.Diff(tc.want, p); diff != "" {
				t.Errorf("LateInitialize(...): -want, +got:\n%s", diff)
			}
		})
	}
}

// TestLateInitializeThenUpToDate checks the import path: an empty spec,
// late-initialised from an instance, describes that instance.
func TestLateInitializeThenUpToDate(t *testing.T) {
	g := NewWithT(t)
	o := fullObserved()
	p := v1alpha1.PostgresqlInstanceParameters{
		Networking: fullParams().Networking,
		Labels:     fullParams().Labels,
		Flags:      fullParams().Flags,
		Location:   v1alpha1.Location{Zone: "europe-west4-b"},
	}
	g.Expect(LateInitialize(&p, o)).To(BeTrue())
	g.Expect(Compare(p, o).All()).To(BeEmpty())
	g.Expect(LateInitialize(&p, o)).To(BeFalse(), "a second late initialisation has nothing left to fill")
}

func TestLateInitializeNil(t *testing.T) {
	g := NewWithT(t)
	p := v1alpha1.PostgresqlInstanceParameters{}
	g.Expect(LateInitialize(&p, nil)).To(BeFalse())
	g.Expect(p).To(Equal(v1alpha1.PostgresqlInstanceParameters{}))
	g.Expect(LateInitialize(nil, fullObserved())).To(BeFalse())

	// Settings missing: only the top-level fields.
	g.Expect(LateInitialize(&p, &sqladmin.DatabaseInstance{DatabaseVersion: "POSTGRES_17", Region: "us-central1"})).To(BeTrue())
	g.Expect(p).To(Equal(v1alpha1.PostgresqlInstanceParameters{Version: "17", Location: v1alpha1.Location{Region: "us-central1"}}))
}

func withDisk(p v1alpha1.PostgresqlInstanceParameters, minimum, maximum int32) v1alpha1.PostgresqlInstanceParameters {
	p.Resources.Disk.SizeMinimumGb, p.Resources.Disk.SizeMaximumGb = minimum, maximum
	return p
}

func withMaintenance(p v1alpha1.PostgresqlInstanceParameters, day, hour string) v1alpha1.PostgresqlInstanceParameters {
	p.Maintenance = v1alpha1.Maintenance{Day: day, Hour: hour}
	return p
}

// asCreated is p with the backup location of fullObserved, as
// LateInitialize fills it.
func asCreated(p v1alpha1.PostgresqlInstanceParameters) v1alpha1.PostgresqlInstanceParameters {
	p.Backups.Location = "eu"
	return p
}

// withSafety is p with the data-safety settings given.
func withSafety(p v1alpha1.PostgresqlInstanceParameters, protected, retain bool, fb *v1alpha1.FinalBackup) v1alpha1.PostgresqlInstanceParameters {
	p.DeletionProtection = &v1alpha1.DeletionProtection{Enabled: protected}
	p.Backups.RetainOnDelete = &retain
	p.Backups.FinalBackup = fb
	return p
}
