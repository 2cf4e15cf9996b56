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
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// TestGenerateInstanceWire compares the insert body as it goes on the wire,
// which is what Cloud SQL sees: ForceSendFields included, empty values
// left out.
func TestGenerateInstanceWire(t *testing.T) {
	cases := map[string]struct {
		name   string
		params v1alpha1.PostgresqlInstanceParameters
		want   string
	}{
		"Minimal": {
			name:   "example-minimal",
			params: minimalParams(),
			want: `{
				"name": "example-minimal", "project": "my-project-123456", "region": "europe-west1",
				"databaseVersion": "POSTGRES_18", "rootPassword": "s3cret",
				"instanceType": "CLOUD_SQL_INSTANCE", "backendType": "SECOND_GEN",
				"settings": {
					"tier": "db-custom-1-3840", "edition": "ENTERPRISE", "availabilityType": "ZONAL",
					"pricingPlan": "PER_USE", "activationPolicy": "ALWAYS",
					"backupConfiguration": {"enabled": true, "startTime": "00:00"},
					"databaseFlags": [],
					"userLabels": {"owner": "cloudsql-postgres-operator"},
					"ipConfiguration": {"ipv4Enabled": true, "authorizedNetworks": []},
					"maintenanceWindow": {"day": 0, "hour": 0},
					"dataDiskSizeGb": "10", "dataDiskType": "PD_SSD",
					"storageAutoResize": true, "storageAutoResizeLimit": "0",
					"deletionProtectionEnabled": true, "retainBackupsOnDelete": true,
					"finalBackupConfig": {"enabled": true, "retentionDays": 30}
				}
			}`,
		},
		"Full": {
			name:   "cloudsql-psql-123456",
			params: fullParams(),
			want: `{
				"name": "cloudsql-psql-123456", "project": "my-project-123456", "region": "europe-west4",
				"databaseVersion": "POSTGRES_9_6", "rootPassword": "s3cret",
				"instanceType": "CLOUD_SQL_INSTANCE", "backendType": "SECOND_GEN",
				"settings": {
					"tier": "db-custom-2-7680", "edition": "ENTERPRISE", "availabilityType": "REGIONAL",
					"pricingPlan": "PER_USE", "activationPolicy": "ALWAYS",
					"backupConfiguration": {
						"enabled": true, "startTime": "22:00", "location": "eu",
						"pointInTimeRecoveryEnabled": true, "transactionLogRetentionDays": 3,
						"backupRetentionSettings": {"retentionUnit": "COUNT", "retainedBackups": 14}
					},
					"databaseFlags": [{"name": "autovacuum", "value": "on"}],
					"userLabels": {"owner": "cloudsql-postgres-operator", "team": "payments"},
					"ipConfiguration": {
						"ipv4Enabled": true,
						"privateNetwork": "projects/cloudsql-postgres-123456/global/networks/default",
						"authorizedNetworks": [
							{"kind": "sql#aclEntry", "value": "30.60.90.120/32", "name": "alice"},
							{"kind": "sql#aclEntry", "value": "120.90.60.0/24", "name": "bob"}
						]
					},
					"locationPreference": {"zone": "europe-west4-b"},
					"maintenanceWindow": {"day": 6, "hour": 16},
					"dataDiskSizeGb": "20", "dataDiskType": "PD_SSD",
					"storageAutoResize": true, "storageAutoResizeLimit": "40",
					"deletionProtectionEnabled": true, "retainBackupsOnDelete": true,
					"finalBackupConfig": {"enabled": true, "retentionDays": 14}
				}
			}`,
		},
		"OnlyNetworkingSetLeavesTheRestToCloudSQL": {
			name: "bare",
			params: v1alpha1.PostgresqlInstanceParameters{
				Networking: v1alpha1.Networking{PublicIP: v1alpha1.PublicIP{Enabled: true}},
			},
			want: `{
				"name": "bare", "project": "my-project-123456", "rootPassword": "s3cret",
				"instanceType": "CLOUD_SQL_INSTANCE", "backendType": "SECOND_GEN",
				"settings": {
					"pricingPlan": "PER_USE", "activationPolicy": "ALWAYS",
					"databaseFlags": [],
					"userLabels": {"owner": "cloudsql-postgres-operator"},
					"ipConfiguration": {"ipv4Enabled": true, "authorizedNetworks": []},
					"deletionProtectionEnabled": true, "retainBackupsOnDelete": true,
					"finalBackupConfig": {"enabled": true, "retentionDays": 30}
				}
			}`,
		},
		"SafetyTurnedOffIsSentOff": {
			name: "bare",
			params: v1alpha1.PostgresqlInstanceParameters{
				Networking:         v1alpha1.Networking{PublicIP: v1alpha1.PublicIP{Enabled: true}},
				Backups:            v1alpha1.Backups{RetainOnDelete: ptr.To(false), FinalBackup: &v1alpha1.FinalBackup{RetentionDays: 30}},
				DeletionProtection: &v1alpha1.DeletionProtection{},
			},
			want: `{
				"name": "bare", "project": "my-project-123456", "rootPassword": "s3cret",
				"instanceType": "CLOUD_SQL_INSTANCE", "backendType": "SECOND_GEN",
				"settings": {
					"pricingPlan": "PER_USE", "activationPolicy": "ALWAYS",
					"databaseFlags": [],
					"userLabels": {"owner": "cloudsql-postgres-operator"},
					"ipConfiguration": {"ipv4Enabled": true, "authorizedNetworks": []},
					"deletionProtectionEnabled": false, "retainBackupsOnDelete": false,
					"finalBackupConfig": {"enabled": false}
				}
			}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := wire(t, GenerateInstance(tc.name, "my-project-123456", tc.params, "s3cret"))
			if diff := cmp.Diff(wireJSON(t, tc.want), got); diff != "" {
				t.Errorf("GenerateInstance(...) on the wire: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestGenerateInstanceForceSend checks that desired false and 0 values
// reach Cloud SQL, which would otherwise apply its defaults (backups on,
// public IP on, growth on).
func TestGenerateInstanceForceSend(t *testing.T) {
	cases := map[string]struct {
		change func(p *v1alpha1.PostgresqlInstanceParameters)
		path   []string
		want   any
	}{
		"BackupsOff": {
			change: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Backups.Daily.Enabled = ptr.To(false) },
			path:   []string{"settings", "backupConfiguration", "enabled"},
			want:   false,
		},
		"PublicIPOff": {
			change: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Networking.PublicIP.Enabled = false
				p.Networking.PrivateIP = v1alpha1.PrivateIP{Enabled: true, Network: "projects/p-123456/global/networks/vpc"}
			},
			path: []string{"settings", "ipConfiguration", "ipv4Enabled"},
			want: false,
		},
		"GrowthOffWhenMaximumEqualsMinimum": {
			change: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.Disk.SizeMaximumGb = 10 },
			path:   []string{"settings", "storageAutoResize"},
			want:   false,
		},
		"NoGrowthLimit": {
			change: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.Disk.SizeMaximumGb = 0 },
			path:   []string{"settings", "storageAutoResizeLimit"},
			want:   "0",
		},
		"AnyMaintenanceDay": {
			change: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Maintenance = v1alpha1.Maintenance{Day: "Any"} },
			path:   []string{"settings", "maintenanceWindow", "day"},
			want:   float64(0),
		},
		"MaintenanceAtMidnight": {
			change: func(p *v1alpha1.PostgresqlInstanceParameters) {
				p.Maintenance = v1alpha1.Maintenance{Day: "Monday", Hour: "00:00"}
			},
			path: []string{"settings", "maintenanceWindow", "hour"},
			want: float64(0),
		},
		"DayWithoutHourIsAt4": {
			change: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Maintenance = v1alpha1.Maintenance{Day: "Sunday"} },
			path:   []string{"settings", "maintenanceWindow", "hour"},
			want:   float64(4),
		},
		"AnyZoneHasNoLocationPreference": {
			change: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Location.Zone = "Any" },
			path:   []string{"settings", "locationPreference"},
			want:   nil,
		},
		"PrivateIPOffSendsNoNetwork": {
			change: func(p *v1alpha1.PostgresqlInstanceParameters) { p.Networking.PrivateIP = v1alpha1.PrivateIP{} },
			path:   []string{"settings", "ipConfiguration", "privateNetwork"},
			want:   nil,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := minimalParams()
			tc.change(&p)
			got := at(wire(t, GenerateInstance("i", "p", p, "pw")), tc.path...)
			if tc.want == nil {
				NewWithT(t).Expect(got).To(BeNil())
				return
			}
			NewWithT(t).Expect(got).To(Equal(tc.want))
		})
	}
}

// TestGenerateInstanceIsUpToDateOnceCreated checks that an instance that
// took the insert body unchanged compares equal to the spec it came from,
// so that a new instance is not patched right after its creation.
func TestGenerateInstanceIsUpToDateOnceCreated(t *testing.T) {
	cases := map[string]func(p *v1alpha1.PostgresqlInstanceParameters){
		"Minimal":    func(*v1alpha1.PostgresqlInstanceParameters) {},
		"BackupsOff": func(p *v1alpha1.PostgresqlInstanceParameters) { p.Backups.Daily.Enabled = ptr.To(false) },
		"GrowthOff":  func(p *v1alpha1.PostgresqlInstanceParameters) { p.Resources.Disk.SizeMaximumGb = 10 },
		"DayOnly":    func(p *v1alpha1.PostgresqlInstanceParameters) { p.Maintenance = v1alpha1.Maintenance{Day: "Friday"} },
		"Full": func(p *v1alpha1.PostgresqlInstanceParameters) {
			*p = fullParams()
		},
		"FullWithEverythingOff": func(p *v1alpha1.PostgresqlInstanceParameters) {
			*p = fullParams()
			p.Backups.Daily.Enabled = ptr.To(false)
			p.Networking.PublicIP = v1alpha1.PublicIP{}
			p.Flags = nil
			p.Labels = nil
			p.Maintenance = v1alpha1.Maintenance{Day: "Any", Hour: "Any"}
			p.Resources.Disk.SizeMaximumGb = p.Resources.Disk.SizeMinimumGb
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p := minimalParams()
			change(&p)
			b, err := json.Marshal(GenerateInstance("i", "p", p, "pw"))
			g.Expect(err).NotTo(HaveOccurred())
			created := &sqladmin.DatabaseInstance{}
			g.Expect(json.Unmarshal(b, created)).To(Succeed())

			ok, diffs := IsUpToDate(p, created)
			g.Expect(diffs).To(BeEmpty())
			g.Expect(ok).To(BeTrue())
		})
	}
}

func TestGenerateInstanceDoesNotChangeItsInput(t *testing.T) {
	p := fullParams()
	_ = GenerateInstance("i", "p", p, "pw")
	if diff := cmp.Diff(fullParams(), p); diff != "" {
		t.Errorf("GenerateInstance changed its parameters: -before, +after:\n%s", diff)
	}
}
