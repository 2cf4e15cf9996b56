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
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

type (
	specChange     func(p *v1alpha1.PostgresqlInstanceParameters)
	observedChange func(o *sqladmin.DatabaseInstance)
)

// TestCompareUpToDate lists what must not count as drift: each would be an
// update on every poll otherwise.
func TestCompareUpToDate(t *testing.T) {
	cases := map[string]struct {
		minimal  bool
		spec     specChange
		observed observedChange
	}{
		"Minimal": {minimal: true},
		"Full":    {},
		"DiskGrownByAutoresize": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.DataDiskSizeGb = 35 },
		},
		"FlagsInAnotherOrder": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Flags = []string{"autovacuum=on", "log_connections=on", "max_connections=200"}
			},
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{
					{Name: "max_connections", Value: "200"}, {Name: "log_connections", Value: "on"}, {Name: "autovacuum", Value: "on"},
				}
			},
		},
		"AuthorizedNetworksInAnotherOrder": {
			observed: func(o *sqladmin.DatabaseInstance) {
				n := o.Settings.IpConfiguration.AuthorizedNetworks
				n[0], n[1] = n[1], n[0]
			},
		},
		"LabelsAddedByServerOrOthers": {
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.UserLabels["goog-managed-by"] = "cloudsql"
				o.Settings.UserLabels["cost-center"] = "1234"
			},
		},
		"FlagAddedByServer": {
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.DatabaseFlags = append(o.Settings.DatabaseFlags,
					&sqladmin.DatabaseFlags{Name: "cloudsql.enable_google_ml_integration", Value: "on"})
			},
		},
		"FlagsOnInstanceWhoseSpecHasNone": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Flags = nil },
		},
		"PrivateNetworkAsComputeURL": {
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.IpConfiguration.PrivateNetwork = "https://www.googleapis.com/compute/v1/projects/cloudsql-postgres-123456/global/networks/default"
			},
		},
		"AuthorizedNetworkAsBareAddress": {
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.IpConfiguration.AuthorizedNetworks[0].Value = "30.60.90.120"
			},
		},
		"AuthorizedNetworkAsBareAddressInSpec": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Networking.PublicIP.AuthorizedNetworks[0].CIDR = "30.60.90.120"
			},
		},
		"AnyZoneAcceptsTheZoneCloudSQLChose": {
			spec:     func(p *v1alpha1.PostgresqlInstanceParameters) { p.Location.Zone = "Any" },
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.LocationPreference.Zone = "europe-west4-a" },
		},
		"AnyMaintenanceWithoutWindow": {
			minimal:  true,
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.MaintenanceWindow = nil },
		},
		"AnyMaintenanceDayIgnoresHour": {
			minimal:  true,
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.MaintenanceWindow.Hour = 5 },
		},
		"DayWithoutHourIsAt4": {
			spec:     func(p *v1alpha1.PostgresqlInstanceParameters) { p.Maintenance.Hour = "" },
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.MaintenanceWindow.Hour = 4 },
		},
		"GrowthOffIgnoresLimit": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.Disk.SizeMaximumGb = 20 },
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.StorageAutoResize = ptr.To(false)
				o.Settings.StorageAutoResizeLimit = 0
			},
		},
		"UnmanagedSettingsDiffer": {
			observed: func(o *sqladmin.DatabaseInstance) {
				s := o.Settings
				s.BackupConfiguration.PointInTimeRecoveryEnabled = true
				s.BackupConfiguration.TransactionLogRetentionDays = 3
				s.IpConfiguration.SslMode = "ENCRYPTED_ONLY"
				s.InsightsConfig = &sqladmin.InsightsConfig{QueryInsightsEnabled: true}
				s.DeletionProtectionEnabled = true
				s.MaintenanceWindow.UpdateTrack = "canary"
				s.LocationPreference.SecondaryZone = "europe-west4-c"
				s.SettingsVersion = 42
				o.GceZone = "europe-west4-c" // after a failover
				o.State = "MAINTENANCE"
			},
		},
		"UnsetParametersAreNotCompared": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				*p = v1alpha1.PostgresqlInstanceParameters{Networking: p.Networking}
			},
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.Tier = "db-custom-8-30720"
				o.Settings.MaintenanceWindow = &sqladmin.MaintenanceWindow{Day: 3, Hour: 1}
				o.Settings.DataDiskSizeGb = 100
				o.Settings.DataDiskType = "HYPERDISK_BALANCED"
				o.Settings.StorageAutoResize = nil
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p, o := fullParams(), fullObserved()
			if tc.minimal {
				p, o = minimalParams(), minimalObserved()
			}
			if tc.spec != nil {
				tc.spec(&p)
			}
			if tc.observed != nil {
				tc.observed(o)
			}
			d := Compare(p, o)
			g.Expect(d.All()).To(BeEmpty())
			g.Expect(d.UpToDate()).To(BeTrue())
			g.Expect(d.NeedsPatch()).To(BeFalse())
			ok, diffs := IsUpToDate(p, o)
			g.Expect(ok).To(BeTrue())
			g.Expect(diffs).To(BeEmpty())
		})
	}
}

// TestCompareOneDifference changes one managed field, in the spec or out of
// band, and checks that exactly that difference is reported, that the patch
// carries exactly its group of settings (plus the settings version), and
// that the instance is up to date once the patch is applied.
func TestCompareOneDifference(t *testing.T) {
	cases := map[string]struct {
		spec     specChange
		observed observedChange
		want     string
		// keys are the settings the patch carries, besides settingsVersion.
		keys []string
		// at and value: a value the patch must carry.
		at    []string
		value any
	}{
		"Tier": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.InstanceType = "db-custom-4-15360" },
			want:  "settings.tier: want db-custom-4-15360, have db-custom-2-7680",
			keys:  []string{"tier"},
			at:    []string{"tier"},
			value: "db-custom-4-15360",
		},
		"TierChangedOutOfBand": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.Tier = "db-custom-1-3840" },
			want:     "settings.tier: want db-custom-2-7680, have db-custom-1-3840",
			keys:     []string{"tier"},
			at:       []string{"tier"},
			value:    "db-custom-2-7680",
		},
		"Edition": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Edition = v1alpha1.EditionEnterprisePlus },
			want:  "settings.edition: want ENTERPRISE_PLUS, have ENTERPRISE",
			keys:  []string{"edition"},
			at:    []string{"edition"},
			value: "ENTERPRISE_PLUS",
		},
		"Availability": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Availability.Type = v1alpha1.AvailabilityZonal },
			want:  "settings.availabilityType: want ZONAL, have REGIONAL",
			keys:  []string{"availabilityType"},
			at:    []string{"availabilityType"},
			value: "ZONAL",
		},
		"BackupsOff": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Backups.Daily.Enabled = ptr.To(false) },
			want: "settings.backupConfiguration.enabled: want false, have true",
			keys: []string{"backupConfiguration"},
			at:   []string{"backupConfiguration"},
			// The whole group: Cloud SQL's merge of nested objects does not matter.
			value: map[string]any{
				"enabled": false, "startTime": "22:00", "location": "eu",
				"pointInTimeRecoveryEnabled": true, "transactionLogRetentionDays": float64(3),
				"backupRetentionSettings": map[string]any{"retentionUnit": "COUNT", "retainedBackups": float64(14)},
			},
		},
		"PointInTimeRecoveryTurnedOffOutOfBand": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.BackupConfiguration.PointInTimeRecoveryEnabled = false },
			want:     "settings.backupConfiguration.pointInTimeRecoveryEnabled: want true, have false",
			keys:     []string{"backupConfiguration"},
			at:       []string{"backupConfiguration", "pointInTimeRecoveryEnabled"},
			value:    true,
		},
		"PointInTimeRecoveryOff": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{LogRetentionDays: 3}
			},
			want:  "settings.backupConfiguration.pointInTimeRecoveryEnabled: want false, have true",
			keys:  []string{"backupConfiguration"},
			at:    []string{"backupConfiguration", "pointInTimeRecoveryEnabled"},
			value: false,
		},
		"LogRetention": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.BackupConfiguration.TransactionLogRetentionDays = 7 },
			want:     "settings.backupConfiguration.transactionLogRetentionDays: want 3, have 7",
			keys:     []string{"backupConfiguration"},
			at:       []string{"backupConfiguration", "transactionLogRetentionDays"},
			value:    float64(3),
		},
		"RetainedBackups": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.BackupConfiguration.BackupRetentionSettings = nil },
			want:     "settings.backupConfiguration.backupRetentionSettings.retainedBackups: want 14, have 0",
			keys:     []string{"backupConfiguration"},
			at:       []string{"backupConfiguration", "backupRetentionSettings", "retainedBackups"},
			value:    float64(14),
		},
		"BackupLocation": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.BackupConfiguration.Location = "us" },
			want:     "settings.backupConfiguration.location: want eu, have us",
			keys:     []string{"backupConfiguration"},
			at:       []string{"backupConfiguration", "location"},
			value:    "eu",
		},
		"BackupsTurnedOffOutOfBand": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.BackupConfiguration.Enabled = false },
			want:     "settings.backupConfiguration.enabled: want true, have false",
			keys:     []string{"backupConfiguration"},
			at:       []string{"backupConfiguration", "enabled"},
			value:    true,
		},
		"BackupStartTime": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Backups.Daily.StartTime = "03:00" },
			want:  "settings.backupConfiguration.startTime: want 03:00, have 22:00",
			keys:  []string{"backupConfiguration"},
			at:    []string{"backupConfiguration", "startTime"},
			value: "03:00",
		},
		"FlagValue": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Flags = []string{"autovacuum=off"} },
			want:  "settings.databaseFlags[autovacuum]: want off, have on",
			keys:  []string{"databaseFlags"},
			at:    []string{"databaseFlags"},
			value: []any{map[string]any{"name": "autovacuum", "value": "off"}},
		},
		"FlagAdded": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Flags = []string{"autovacuum=on", "log_connections=on"}
			},
			want: "settings.databaseFlags[log_connections]: want on, have (absent)",
			keys: []string{"databaseFlags"},
			at:   []string{"databaseFlags"},
			value: []any{
				map[string]any{"name": "autovacuum", "value": "on"},
				map[string]any{"name": "log_connections", "value": "on"},
			},
		},
		"FlagRemovedOutOfBand": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.DatabaseFlags = nil },
			want:     "settings.databaseFlags[autovacuum]: want on, have (absent)",
			keys:     []string{"databaseFlags"},
			at:       []string{"databaseFlags"},
			value:    []any{map[string]any{"name": "autovacuum", "value": "on"}},
		},
		"FlagWithEmptyValueOutOfBand": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.DatabaseFlags[0].Value = "" },
			want:     `settings.databaseFlags[autovacuum]: want on, have ""`,
			keys:     []string{"databaseFlags"},
		},
		"LabelValue": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Labels["team"] = "billing" },
			want:  "settings.userLabels.team: want billing, have payments",
			keys:  []string{"userLabels"},
			at:    []string{"userLabels"},
			value: map[string]any{"owner": "cloudsql-postgres-operator", "team": "billing"},
		},
		"LabelAdded": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Labels["env"] = "prod" },
			want:  "settings.userLabels.env: want prod, have (absent)",
			keys:  []string{"userLabels"},
			at:    []string{"userLabels", "env"},
			value: "prod",
		},
		"OwnerLabelRemovedOutOfBand": {
			observed: func(o *sqladmin.DatabaseInstance) { delete(o.Settings.UserLabels, "owner") },
			want:     "settings.userLabels.owner: want cloudsql-postgres-operator, have (absent)",
			keys:     []string{"userLabels"},
			at:       []string{"userLabels", "owner"},
			value:    "cloudsql-postgres-operator",
		},
		"PublicIPOff": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Networking.PublicIP.Enabled = false },
			want:  "settings.ipConfiguration.ipv4Enabled: want false, have true",
			keys:  []string{"ipConfiguration"},
			at:    []string{"ipConfiguration", "ipv4Enabled"},
			value: false,
		},
		"PrivateNetworkChanged": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Networking.PrivateIP.Network = "projects/cloudsql-postgres-123456/global/networks/other"
			},
			want:  "settings.ipConfiguration.privateNetwork: want projects/cloudsql-postgres-123456/global/networks/other, have projects/cloudsql-postgres-123456/global/networks/default",
			keys:  []string{"ipConfiguration"},
			at:    []string{"ipConfiguration", "privateNetwork"},
			value: "projects/cloudsql-postgres-123456/global/networks/other",
		},
		"PrivateIPEnabled": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.IpConfiguration.PrivateNetwork = "" },
			want:     "settings.ipConfiguration.privateNetwork: want projects/cloudsql-postgres-123456/global/networks/default, have (unset)",
			keys:     []string{"ipConfiguration"},
			at:       []string{"ipConfiguration", "privateNetwork"},
			value:    "projects/cloudsql-postgres-123456/global/networks/default",
		},
		"AuthorizedNetworkRenamed": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Networking.PublicIP.AuthorizedNetworks[0].Name = "carol"
			},
			want:  "settings.ipConfiguration.authorizedNetworks[30.60.90.120/32]: want present, named carol, have present, named alice",
			keys:  []string{"ipConfiguration"},
			at:    []string{"ipConfiguration", "authorizedNetworks"},
			value: []any{aclJSON("30.60.90.120/32", "carol"), aclJSON("120.90.60.0/24", "bob")},
		},
		"AuthorizedNetworkAdded": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Networking.PublicIP.AuthorizedNetworks = append(p.Networking.PublicIP.AuthorizedNetworks,
					v1alpha1.AuthorizedNetwork{CIDR: "10.0.0.0/8"})
			},
			want: "settings.ipConfiguration.authorizedNetworks[10.0.0.0/8]: want present (no name), have (absent)",
			keys: []string{"ipConfiguration"},
		},
		"AuthorizedNetworkRemoved": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Networking.PublicIP.AuthorizedNetworks = p.Networking.PublicIP.AuthorizedNetworks[:1]
			},
			want:  "settings.ipConfiguration.authorizedNetworks[120.90.60.0/24]: want (absent), have present, named bob",
			keys:  []string{"ipConfiguration"},
			at:    []string{"ipConfiguration", "authorizedNetworks"},
			value: []any{aclJSON("30.60.90.120/32", "alice")},
		},
		"AuthorizedNetworkAddedOutOfBand": {
			observed: func(o *sqladmin.DatabaseInstance) {
				o.Settings.IpConfiguration.AuthorizedNetworks = append(o.Settings.IpConfiguration.AuthorizedNetworks,
					&sqladmin.AclEntry{Value: "0.0.0.0/0", Name: "anyone"})
			},
			want:  "settings.ipConfiguration.authorizedNetworks[0.0.0.0/0]: want (absent), have present, named anyone",
			keys:  []string{"ipConfiguration"},
			at:    []string{"ipConfiguration", "authorizedNetworks"},
			value: []any{aclJSON("30.60.90.120/32", "alice"), aclJSON("120.90.60.0/24", "bob")},
		},
		"Zone": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Location.Zone = "europe-west4-c" },
			want:  "settings.locationPreference.zone: want europe-west4-c, have europe-west4-b",
			keys:  []string{"locationPreference"},
			at:    []string{"locationPreference"},
			value: map[string]any{"zone": "europe-west4-c"},
		},
		"MaintenanceDay": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Maintenance.Day = "Sunday" },
			want:  "settings.maintenanceWindow.day: want 7 (Sunday), have 6 (Saturday)",
			keys:  []string{"maintenanceWindow"},
			at:    []string{"maintenanceWindow"},
			value: map[string]any{"day": float64(7), "hour": float64(16)},
		},
		"MaintenanceHour": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Maintenance.Hour = "03:00" },
			want:  "settings.maintenanceWindow.hour: want 3, have 16",
			keys:  []string{"maintenanceWindow"},
			at:    []string{"maintenanceWindow"},
			value: map[string]any{"day": float64(6), "hour": float64(3)},
		},
		"MaintenanceHourMidnight": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Maintenance.Hour = "00:00" },
			want:  "settings.maintenanceWindow.hour: want 0, have 16",
			keys:  []string{"maintenanceWindow"},
			at:    []string{"maintenanceWindow"},
			value: map[string]any{"day": float64(6), "hour": float64(0)},
		},
		"MaintenanceAnyDay": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Maintenance = v1alpha1.Maintenance{Day: "Any", Hour: "Any"}
			},
			want:  "settings.maintenanceWindow.day: want 0 (any day), have 6 (Saturday)",
			keys:  []string{"maintenanceWindow"},
			at:    []string{"maintenanceWindow"},
			value: map[string]any{"day": float64(0), "hour": float64(0)},
		},
		"DiskIncreased": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.Disk.SizeMinimumGb = 30 },
			want:  "settings.dataDiskSizeGb: want at least 30, have 20",
			keys:  []string{"dataDiskSizeGb"},
			at:    []string{"dataDiskSizeGb"},
			value: "30",
		},
		"GrowthLimit": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.Disk.SizeMaximumGb = 50 },
			want:  "settings.storageAutoResizeLimit: want 50, have 40",
			keys:  []string{"storageAutoResize", "storageAutoResizeLimit"},
			at:    []string{"storageAutoResizeLimit"},
			value: "50",
		},
		"NoGrowthLimit": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.Disk.SizeMaximumGb = 0 },
			want:  "settings.storageAutoResizeLimit: want 0 (no limit), have 40",
			keys:  []string{"storageAutoResize", "storageAutoResizeLimit"},
			at:    []string{"storageAutoResizeLimit"},
			value: "0",
		},
		"GrowthOff": {
			spec:  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.Disk.SizeMaximumGb = 20 },
			want:  "settings.storageAutoResize: want false, have true",
			keys:  []string{"storageAutoResize", "storageAutoResizeLimit"},
			at:    []string{"storageAutoResize"},
			value: false,
		},
		"GrowthTurnedOffOutOfBand": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings.StorageAutoResize = ptr.To(false) },
			want:     "settings.storageAutoResize: want true, have false",
			keys:     []string{"storageAutoResize", "storageAutoResizeLimit"},
			at:       []string{"storageAutoResize"},
			value:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p, o := fullParams(), fullObserved()
			if tc.spec != nil {
				tc.spec(&p)
			}
			if tc.observed != nil {
				tc.observed(o)
			}

			d := Compare(p, o)
			g.Expect(d.Updatable).To(Equal([]string{tc.want}))
			g.Expect(d.Immutable).To(BeEmpty())
			g.Expect(d.NeedsPatch()).To(BeTrue())
			g.Expect(d.ImmutableError()).NotTo(HaveOccurred())
			ok, diffs := IsUpToDate(p, o)
			g.Expect(ok).To(BeFalse())
			g.Expect(diffs).To(Equal([]string{tc.want}))

			patch := GeneratePatch(p, o)
			w := wire(t, patch)
			g.Expect(w).To(HaveLen(1), "a patch carries settings only: %v", w)
			g.Expect(settingsKeys(w)).To(Equal(append([]string{"settingsVersion"}, tc.keys...)))
			g.Expect(at(w, "settings", "settingsVersion")).To(Equal("3"))
			if tc.at != nil {
				g.Expect(at(w, append([]string{"settings"}, tc.at...)...)).To(Equal(tc.value))
			}

			patched := applyPatch(t, o, patch)
			g.Expect(Compare(p, patched).All()).To(BeEmpty(), "the patch must converge")
		})
	}
}

// TestCompareImmutable checks that differences a patch cannot fix are
// reported apart, and that no patch is built for them.
func TestCompareImmutable(t *testing.T) {
	cases := map[string]struct {
		spec     specChange
		observed observedChange
		want     string
	}{
		"VersionDown": {
			spec:     func(p *v1alpha1.PostgresqlInstanceParameters) { p.Version = "15" },
			observed: func(o *sqladmin.DatabaseInstance) { o.DatabaseVersion = "POSTGRES_16" },
			want:     "databaseVersion: want POSTGRES_15, have POSTGRES_16",
		},
		"Region": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Location.Region = "europe-west1" },
			want: "region: want europe-west1, have europe-west4",
		},
		"DiskType": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.Disk.Type = v1alpha1.DiskTypeHDD },
			want: "settings.dataDiskType: want PD_HDD, have PD_SSD",
		},
		"PrivateIPCannotBeRemoved": {
			spec: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Networking.PrivateIP = v1alpha1.PrivateIP{} },
			want: "settings.ipConfiguration.privateNetwork: want none (private IP disabled), have projects/cloudsql-postgres-123456/global/networks/default",
		},
		"VersionUpgradedOutOfBand": {
			observed: func(o *sqladmin.DatabaseInstance) { o.DatabaseVersion = "POSTGRES_16" },
			want:     "databaseVersion: want POSTGRES_9_6, have POSTGRES_16",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p, o := fullParams(), fullObserved()
			if tc.spec != nil {
				tc.spec(&p)
			}
			if tc.observed != nil {
				tc.observed(o)
			}

			d := Compare(p, o)
			g.Expect(d.Updatable).To(BeEmpty())
			g.Expect(d.Immutable).To(Equal([]string{tc.want}))
			g.Expect(d.UpToDate()).To(BeFalse())
			g.Expect(d.NeedsPatch()).To(BeFalse())
			g.Expect(d.ImmutableError()).To(MatchError(ContainSubstring(tc.want)))
			g.Expect(d.ImmutableError()).To(MatchError(ContainSubstring("create a new PostgresqlInstance")))
			ok, diffs := IsUpToDate(p, o)
			g.Expect(ok).To(BeFalse())
			g.Expect(diffs).To(Equal([]string{tc.want}))

			// Nothing to fix: the body would carry the settings version only.
			g.Expect(wire(t, GeneratePatch(p, o))).To(Equal(map[string]any{"settings": map[string]any{"settingsVersion": "3"}}))
		})
	}
}

func TestCompareImmutableAndUpdatable(t *testing.T) {
	g := NewWithT(t)
	p, o := fullParams(), fullObserved()
	o.DatabaseVersion = "POSTGRES_16"
	p.Version = "15"
	p.Resources.InstanceType = "db-custom-4-15360"
	p.Resources.Disk.Type = v1alpha1.DiskTypeHDD

	d := Compare(p, o)
	g.Expect(d.Updatable).To(Equal([]string{"settings.tier: want db-custom-4-15360, have db-custom-2-7680"}))
	g.Expect(d.Immutable).To(Equal([]string{
		"databaseVersion: want POSTGRES_15, have POSTGRES_16",
		"settings.dataDiskType: want PD_HDD, have PD_SSD",
	}))
	g.Expect(d.Upgrade).To(BeEmpty())
	g.Expect(d.All()).To(Equal(append(append([]string{}, d.Updatable...), d.Immutable...)))
	g.Expect(d.NeedsPatch()).To(BeTrue())

	w := wire(t, GeneratePatch(p, o))
	g.Expect(w).To(Equal(map[string]any{"settings": map[string]any{"settingsVersion": "3", "tier": "db-custom-4-15360"}}))
}

// TestCompareSeveralDifferences checks the order of the lines (stable, so
// events do not flap) and that one patch fixes them all.
func TestCompareSeveralDifferences(t *testing.T) {
	g := NewWithT(t)
	p, o := fullParams(), minimalObserved()
	p.Location.Region = "europe-west1"
	p.Location.Zone = "europe-west1-c"
	p.Version = "18"

	want := []string{
		"settings.tier: want db-custom-2-7680, have db-custom-1-3840",
		"settings.availabilityType: want REGIONAL, have ZONAL",
		"settings.backupConfiguration.startTime: want 22:00, have 00:00",
		"settings.backupConfiguration.pointInTimeRecoveryEnabled: want true, have false",
		"settings.backupConfiguration.transactionLogRetentionDays: want 3, have 7",
		"settings.backupConfiguration.backupRetentionSettings.retainedBackups: want 14, have 7",
		"settings.backupConfiguration.location: want eu, have (unset)",
		"settings.finalBackupConfig.retentionDays: want 14, have 30",
		"settings.databaseFlags[autovacuum]: want on, have (absent)",
		"settings.userLabels.team: want payments, have (absent)",
		"settings.ipConfiguration.privateNetwork: want projects/cloudsql-postgres-123456/global/networks/default, have (unset)",
		"settings.ipConfiguration.authorizedNetworks[120.90.60.0/24]: want present, named bob, have (absent)",
		"settings.ipConfiguration.authorizedNetworks[30.60.90.120/32]: want present, named alice, have (absent)",
		"settings.locationPreference.zone: want europe-west1-c, have europe-west1-b",
		"settings.maintenanceWindow.day: want 6 (Saturday), have 0 (any day)",
		"settings.maintenanceWindow.hour: want 16, have 0",
		"settings.dataDiskSizeGb: want at least 20, have 10",
		"settings.storageAutoResizeLimit: want 40, have 0 (no limit)",
	}
	d := Compare(p, o)
	if diff := cmp.Diff(want, d.Updatable); diff != "" {
		t.Errorf("Compare(...).Updatable: -want, +got:\n%s", diff)
	}
	g.Expect(d.Immutable).To(BeEmpty())
	g.Expect(Compare(p, applyPatch(t, o, GeneratePatch(p, o))).All()).To(BeEmpty())
}

// TestGeneratePatchListsEndUpAsSpecified checks that when flags or
// authorized networks are patched, the lists sent are the desired ones,
// whole: entries nobody specified are removed, and an empty list is sent
// as [] (not left out, which would keep the old list).
func TestGeneratePatchListsEndUpAsSpecified(t *testing.T) {
	g := NewWithT(t)
	p, o := fullParams(), fullObserved()
	p.Flags = []string{"log_connections=on"}
	p.Networking.PublicIP.AuthorizedNetworks = nil
	o.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "autovacuum", Value: "on"}, {Name: "log_connections", Value: "off"}}

	patch := GeneratePatch(p, o)
	w := wire(t, patch)
	g.Expect(at(w, "settings", "databaseFlags")).To(Equal([]any{map[string]any{"name": "log_connections", "value": "on"}}))
	g.Expect(at(w, "settings", "ipConfiguration", "authorizedNetworks")).To(Equal([]any{}))

	patched := applyPatch(t, o, patch)
	g.Expect(FromDatabaseFlags(patched.Settings.DatabaseFlags)).To(Equal([]string{"log_connections=on"}))
	g.Expect(patched.Settings.IpConfiguration.AuthorizedNetworks).To(BeEmpty())
	g.Expect(Compare(p, patched).All()).To(BeEmpty())
}

// TestCompareNilSafety feeds instances with missing parts: none may panic,
// each must be reported, and (but for a missing instance or settings) the
// patch must repair it.
func TestCompareNilSafety(t *testing.T) {
	cases := map[string]struct {
		observed observedChange
		contains string
		// converges is whether applying the patch makes the instance up
		// to date.
		converges bool
	}{
		"IpConfiguration": {
			observed:  func(o *sqladmin.DatabaseInstance) { o.Settings.IpConfiguration = nil },
			contains:  "settings.ipConfiguration.ipv4Enabled: want true, have false",
			converges: true,
		},
		"BackupConfiguration": {
			observed:  func(o *sqladmin.DatabaseInstance) { o.Settings.BackupConfiguration = nil },
			contains:  "settings.backupConfiguration.startTime: want 22:00, have (unset)",
			converges: true,
		},
		"MaintenanceWindow": {
			observed:  func(o *sqladmin.DatabaseInstance) { o.Settings.MaintenanceWindow = nil },
			contains:  "settings.maintenanceWindow.day: want 6 (Saturday), have 0 (any day)",
			converges: true,
		},
		"LocationPreference": {
			observed:  func(o *sqladmin.DatabaseInstance) { o.Settings.LocationPreference = nil },
			contains:  "settings.locationPreference.zone: want europe-west4-b, have (unset)",
			converges: true,
		},
		"StorageAutoResize": {
			observed:  func(o *sqladmin.DatabaseInstance) { o.Settings.StorageAutoResize = nil },
			contains:  "settings.storageAutoResize: want true, have (unset)",
			converges: true,
		},
		"UserLabels": {
			observed:  func(o *sqladmin.DatabaseInstance) { o.Settings.UserLabels = nil },
			contains:  "settings.userLabels.owner: want cloudsql-postgres-operator, have (absent)",
			converges: true,
		},
		"Settings": {
			observed: func(o *sqladmin.DatabaseInstance) { o.Settings = nil },
			contains: "settings: want the managed settings, have none",
		},
		"EverythingButName": {
			observed: func(o *sqladmin.DatabaseInstance) { *o = sqladmin.DatabaseInstance{Name: o.Name} },
			contains: "settings: want the managed settings, have none",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p, o := fullParams(), fullObserved()
			tc.observed(o)

			ok, diffs := IsUpToDate(p, o)
			g.Expect(ok).To(BeFalse())
			g.Expect(diffs).To(ContainElement(tc.contains))
			patch := GeneratePatch(p, o)
			if tc.converges {
				g.Expect(Compare(p, applyPatch(t, o, patch)).All()).To(BeEmpty())
			}
		})
	}
}

func TestCompareNilInstance(t *testing.T) {
	g := NewWithT(t)
	p := fullParams()
	d := Compare(p, nil)
	g.Expect(d.Updatable).To(Equal([]string{"instance: want an observed Cloud SQL instance, have none"}))
	g.Expect(d.Immutable).To(BeEmpty())

	// With nothing known, every patchable managed setting is sent, but not
	// the disk size (it could be a shrink) nor a settings version.
	w := wire(t, GeneratePatch(p, nil))
	g.Expect(settingsKeys(w)).To(Equal([]string{
		"tier", "edition", "availabilityType", "backupConfiguration", "databaseFlags", "userLabels",
		"ipConfiguration", "locationPreference", "maintenanceWindow", "storageAutoResize", "storageAutoResizeLimit",
		"deletionProtectionEnabled", "retainBackupsOnDelete", "finalBackupConfig",
	}))
}

func TestGeneratePatchWithoutSettingsSendsEmptyFlags(t *testing.T) {
	g := NewWithT(t)
	p, o := minimalParams(), minimalObserved()
	o.Settings = nil
	w := wire(t, GeneratePatch(p, o))
	g.Expect(at(w, "settings", "databaseFlags")).To(Equal([]any{}))
	g.Expect(at(w, "settings", "dataDiskSizeGb")).To(BeNil())
	g.Expect(at(w, "settings", "settingsVersion")).To(BeNil())
}

func TestCompareNilListEntries(t *testing.T) {
	g := NewWithT(t)
	p, o := fullParams(), fullObserved()
	o.Settings.DatabaseFlags = append([]*sqladmin.DatabaseFlags{nil}, o.Settings.DatabaseFlags...)
	o.Settings.IpConfiguration.AuthorizedNetworks = append([]*sqladmin.AclEntry{nil}, o.Settings.IpConfiguration.AuthorizedNetworks...)
	o.IpAddresses = append([]*sqladmin.IpMapping{nil}, o.IpAddresses...)
	g.Expect(Compare(p, o).All()).To(BeEmpty())
}

func TestGeneratePatchDoesNotChangeItsInputs(t *testing.T) {
	p, o := fullParams(), fullObserved()
	p.Flags = []string{"b=2", "a=1"}
	o.Settings.Tier = "db-custom-1-3840"
	before := fullObserved()
	before.Settings.Tier = "db-custom-1-3840"
	_ = GeneratePatch(p, o)
	if diff := cmp.Diff([]string{"b=2", "a=1"}, p.Flags); diff != "" {
		t.Errorf("GeneratePatch reordered the spec's flags: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(wire(t, before), wire(t, o)); diff != "" {
		t.Errorf("GeneratePatch changed the observed instance: -want, +got:\n%s", diff)
	}
}

func TestDiffWithoutDifferences(t *testing.T) {
	g := NewWithT(t)
	var d Diff
	g.Expect(d.UpToDate()).To(BeTrue())
	g.Expect(d.NeedsPatch()).To(BeFalse())
	g.Expect(d.All()).To(BeNil())
	g.Expect(d.ImmutableError()).NotTo(HaveOccurred())
}

// settingsKeys are the keys of the patch's settings: settingsVersion first,
// then in the order of the API (the order of insertSetters).
func settingsKeys(w map[string]any) []string {
	s, _ := w["settings"].(map[string]any)
	order := map[string]int{
		"settingsVersion": 0, "tier": 1, "edition": 2, "availabilityType": 3, "backupConfiguration": 4,
		"databaseFlags": 5, "userLabels": 6, "ipConfiguration": 7, "locationPreference": 8,
		"maintenanceWindow": 9, "dataDiskSizeGb": 10, "storageAutoResize": 11, "storageAutoResizeLimit": 12,
		"dataDiskType": 13, "deletionProtectionEnabled": 14, "retainBackupsOnDelete": 15, "finalBackupConfig": 16,
	}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		oi, iok := order[keys[i]]
		oj, jok := order[keys[j]]
		switch {
		case iok && jok:
			return oi < oj
		case iok != jok:
			return iok
		default:
			return keys[i] < keys[j]
		}
	})
	return keys
}

func aclJSON(cidr, name string) map[string]any {
	return map[string]any{"kind": "sql#aclEntry", "value": cidr, "name": name}
}

// TestCompareUpgrade checks that a higher version is an upgrade, which no
// patch of the settings carries, and a lower or equal one is not.
func TestCompareUpgrade(t *testing.T) {
	cases := map[string]struct {
		spec, observed string
		upgrade        string
	}{
		"Up":           {spec: "16", observed: "POSTGRES_15", upgrade: "POSTGRES_16"},
		"UpSkipping":   {spec: "18", observed: "POSTGRES_15", upgrade: "POSTGRES_18"},
		"UpFrom96":     {spec: "10", observed: "POSTGRES_9_6", upgrade: "POSTGRES_10"},
		"Same":         {spec: "15", observed: "POSTGRES_15"},
		"Down":         {spec: "14", observed: "POSTGRES_15"},
		"DownTo96":     {spec: "9.6", observed: "POSTGRES_10"},
		"NotPostgres":  {spec: "16", observed: "MYSQL_8_0"},
		"VersionUnset": {spec: "", observed: "POSTGRES_15"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p, o := fullParams(), fullObserved()
			p.Version, o.DatabaseVersion = tc.spec, tc.observed
			d := Compare(p, o)
			g.Expect(d.Upgrade).To(Equal(tc.upgrade))
			if tc.upgrade == "" {
				return
			}
			g.Expect(d.UpToDate()).To(BeFalse())
			g.Expect(d.NeedsPatch()).To(BeFalse(), "the settings patch never carries the version")
			g.Expect(d.Immutable).To(BeEmpty())
			g.Expect(d.All()).To(ContainElement("databaseVersion: want " + tc.upgrade + " (a major upgrade)"))
			g.Expect(wire(t, GenerateUpgrade(d.Upgrade))).To(Equal(map[string]any{"databaseVersion": tc.upgrade}), "the upgrade's patch holds the version alone")
		})
	}
}

func TestPreCheckFindings(t *testing.T) {
	g := NewWithT(t)
	g.Expect(PreCheckFindings(nil)).To(BeEmpty())
	g.Expect(PreCheckFindings(&sqladmin.Operation{})).To(BeEmpty())
	op := &sqladmin.Operation{PreCheckMajorVersionUpgradeContext: &sqladmin.PreCheckMajorVersionUpgradeContext{
		PreCheckResponse: []*sqladmin.PreCheckResponse{
			{MessageType: "INFO", Message: "all good"},
			{MessageType: "WARNING", Message: "extension pg_foo will be updated"},
			{MessageType: "ERROR", Message: "unsupported extension plv8", ActionsRequired: []string{"DROP EXTENSION plv8", "retry"}},
			nil,
			{MessageType: "ERROR", Message: "prepared transactions exist"},
		},
	}}
	g.Expect(PreCheckFindings(op)).To(Equal([]string{
		"unsupported extension plv8 (actions required: DROP EXTENSION plv8; retry)",
		"prepared transactions exist",
	}))
}
