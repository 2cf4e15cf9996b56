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

func TestWithSafetyDefaults(t *testing.T) {
	cases := map[string]struct {
		reason string
		params v1alpha1.PostgresqlInstanceParameters
		want   v1alpha1.PostgresqlInstanceParameters
	}{
		"UnsetIsOn": {
			reason: "a new instance is protected and keeps its backups unless the spec says otherwise",
			params: minimalParams(),
			want:   withSafety(minimalParams(), true, true, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 30}),
		},
		"SetIsKept": {
			reason: "what the spec says wins, off included",
			params: withSafety(minimalParams(), false, false, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 7}),
			want:   withSafety(minimalParams(), false, false, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 7}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.params.DeepCopy()
			if diff := cmp.Diff(tc.want, WithSafetyDefaults(tc.params)); diff != "" {
				t.Errorf("%s\nWithSafetyDefaults(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(*before, tc.params); diff != "" {
				t.Errorf("WithSafetyDefaults changed its argument: -before, +after:\n%s", diff)
			}
		})
	}
}

func TestCompareSafety(t *testing.T) {
	cases := map[string]struct {
		reason   string
		params   v1alpha1.PostgresqlInstanceParameters
		observed observedChange
		want     []string
		patch    string
	}{
		"ProtectionLiftedOutOfBand": {
			reason:   "protection turned off in the console is drift, and the patch turns it on again",
			params:   withSafety(minimalParams(), true, true, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 30}),
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.DeletionProtectionEnabled = false },
			want:     []string{"settings.deletionProtectionEnabled: want true, have false"},
			patch:    `{"settings": {"settingsVersion": "1", "deletionProtectionEnabled": true}}`,
		},
		"ProtectionOffIsSentOff": {
			reason: "a spec that turns protection off sends false",
			params: withSafety(minimalParams(), false, true, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 30}),
			want:   []string{"settings.deletionProtectionEnabled: want false, have true"},
			patch:  `{"settings": {"settingsVersion": "1", "deletionProtectionEnabled": false}}`,
		},
		"RetainOff": {
			reason: "backups kept on delete are compared and sent, false included",
			params: withSafety(minimalParams(), true, false, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 30}),
			want:   []string{"settings.retainBackupsOnDelete: want false, have true"},
			patch:  `{"settings": {"settingsVersion": "1", "retainBackupsOnDelete": false}}`,
		},
		"FinalBackupRetention": {
			reason: "the final backup is sent whole when its retention differs",
			params: withSafety(minimalParams(), true, true, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 90}),
			want:   []string{"settings.finalBackupConfig.retentionDays: want 90, have 30"},
			patch:  `{"settings": {"settingsVersion": "1", "finalBackupConfig": {"enabled": true, "retentionDays": 90}}}`,
		},
		"FinalBackupOffIgnoresRetention": {
			reason: "an off final backup has no retention to compare",
			params: withSafety(minimalParams(), true, true, &v1alpha1.FinalBackup{RetentionDays: 30}),
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.FinalBackupConfig = &sqladmin.FinalBackupConfig{RetentionDays: 3}
			},
		},
		"FinalBackupMissing": {
			reason:   "an instance without a final backup configuration has it off",
			params:   withSafety(minimalParams(), true, true, &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 30}),
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.FinalBackupConfig = nil },
			want: []string{
				"settings.finalBackupConfig.enabled: want true, have false",
				"settings.finalBackupConfig.retentionDays: want 30, have 0",
			},
			patch: `{"settings": {"settingsVersion": "1", "finalBackupConfig": {"enabled": true, "retentionDays": 30}}}`,
		},
		"UnsetIsNotCompared": {
			reason: "a spec without the fields (before late initialisation) never patches them",
			params: minimalParams(),
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.DeletionProtectionEnabled, o.Settings.FinalBackupConfig = false, nil
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			o := minimalObserved()
			if tc.observed != nil {
				tc.observed(o)
			}
			d := Compare(tc.params, o)
			if diff := cmp.Diff(tc.want, d.Updatable); diff != "" {
				t.Errorf("%s\nCompare(...).Updatable: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.patch != "" {
				g.Expect(wire(t, GeneratePatch(tc.params, o))).To(Equal(wireJSON(t, tc.patch)), tc.reason)
				g.Expect(Compare(tc.params, applyPatch(t, o, GeneratePatch(tc.params, o))).All()).To(BeEmpty(), tc.reason)
			}
		})
	}
}

func TestGenerateProtection(t *testing.T) {
	cases := map[string]struct {
		observed *sqladmin.DatabaseInstance
		enabled  bool
		want     string
	}{
		"LiftOnlyTheGuardAtTheObservedVersion": {
			observed: fullObserved(),
			want:     `{"settings": {"deletionProtectionEnabled": false, "settingsVersion": "3"}}`,
		},
		"LiftNothingObserved": {
			want: `{"settings": {"deletionProtectionEnabled": false}}`,
		},
		"RestoreOnlyTheGuardAtTheObservedVersion": {
			observed: fullObserved(),
			enabled:  true,
			want:     `{"settings": {"deletionProtectionEnabled": true, "settingsVersion": "3"}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(wire(t, GenerateProtection(tc.observed, tc.enabled))).To(Equal(wireJSON(t, tc.want)))
		})
	}
}

func TestProtectionLeftOff(t *testing.T) {
	off := &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{}}
	on := &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{DeletionProtectionEnabled: true}}
	wanted := v1alpha1.PostgresqlInstanceParameters{DeletionProtection: &v1alpha1.DeletionProtection{Enabled: true}}
	unwanted := v1alpha1.PostgresqlInstanceParameters{DeletionProtection: &v1alpha1.DeletionProtection{}}
	cases := map[string]struct {
		p        v1alpha1.PostgresqlInstanceParameters
		observed *sqladmin.DatabaseInstance
		want     bool
	}{
		"WantedAndOff":              {p: wanted, observed: off, want: true},
		"WantedAndOn":               {p: wanted, observed: on},
		"TurnedOffInTheSpec":        {p: unwanted, observed: off},
		"UnsetKeepsWhatCloudSQLHas": {observed: off},
		"NothingObserved":           {p: wanted},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(ProtectionLeftOff(tc.p, tc.observed)).To(Equal(tc.want))
		})
	}
}

func TestDeletionProtected(t *testing.T) {
	g := NewWithT(t)
	g.Expect(DeletionProtected(minimalObserved())).To(BeTrue())
	g.Expect(DeletionProtected(&sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{}})).To(BeFalse())
	g.Expect(DeletionProtected(&sqladmin.DatabaseInstance{})).To(BeFalse())
	g.Expect(DeletionProtected(nil)).To(BeFalse())
}

func TestGenerateFinalBackup(t *testing.T) {
	cases := map[string]struct {
		fb   *v1alpha1.FinalBackup
		want FinalBackup
	}{
		"Unset":         {want: FinalBackup{}},
		"Off":           {fb: &v1alpha1.FinalBackup{RetentionDays: 30}, want: FinalBackup{Set: true}},
		"On":            {fb: &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 7}, want: FinalBackup{Set: true, Enabled: true, TTLDays: 7}},
		"OnWithoutDays": {fb: &v1alpha1.FinalBackup{Enabled: true}, want: FinalBackup{Set: true, Enabled: true, TTLDays: 30}},
		"OnForOneYear":  {fb: &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 365}, want: FinalBackup{Set: true, Enabled: true, TTLDays: 365}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := minimalParams()
			p.Backups.FinalBackup = tc.fb
			p.Backups.RetainOnDelete = ptr.To(true)
			if diff := cmp.Diff(tc.want, GenerateFinalBackup(p)); diff != "" {
				t.Errorf("GenerateFinalBackup(...): -want, +got:\n%s", diff)
			}
		})
	}
}
