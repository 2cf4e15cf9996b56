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

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// minimalParams is examples/postgresqlinstance-minimal.yaml after the API
// server applied the CRD defaults.
func minimalParams() v1alpha1.PostgresqlInstanceParameters {
	return v1alpha1.PostgresqlInstanceParameters{
		Version:      "18",
		Edition:      v1alpha1.EditionEnterprise,
		Availability: v1alpha1.Availability{Type: v1alpha1.AvailabilityZonal},
		Backups:      v1alpha1.Backups{Daily: v1alpha1.DailyBackups{Enabled: ptr.To(true), StartTime: "00:00"}},
		Location:     v1alpha1.Location{Region: "europe-west1", Zone: v1alpha1.Any},
		Maintenance:  v1alpha1.Maintenance{Day: v1alpha1.Any},
		Networking:   v1alpha1.Networking{PublicIP: v1alpha1.PublicIP{Enabled: true}},
		Resources: v1alpha1.Resources{
			Disk:         v1alpha1.Disk{SizeMinimumGb: 10, SizeMaximumGb: 0, Type: v1alpha1.DiskTypeSSD},
			InstanceType: "db-custom-1-3840",
		},
	}
}

// fullParams is examples/postgresqlinstance-full.yaml without its maintenance
// plan (updateTrack, denyPeriods), which maintenance_test.go covers.
func fullParams() v1alpha1.PostgresqlInstanceParameters {
	p := v1alpha1.PostgresqlInstanceParameters{
		Name:         ptr.To("cloudsql-psql-123456"),
		Version:      "9.6",
		Edition:      v1alpha1.EditionEnterprise,
		Availability: v1alpha1.Availability{Type: v1alpha1.AvailabilityRegional},
		Backups:      v1alpha1.Backups{Daily: v1alpha1.DailyBackups{Enabled: ptr.To(true), StartTime: "22:00"}},
		Flags:        []string{"autovacuum=on"},
		Labels:       map[string]v1alpha1.LabelValue{"owner": "cloudsql-postgres-operator", "team": "payments"},
		Location:     v1alpha1.Location{Region: "europe-west4", Zone: "europe-west4-b"},
		Maintenance:  v1alpha1.Maintenance{Day: "Saturday", Hour: "16:00"},
		Networking: v1alpha1.Networking{
			PrivateIP: v1alpha1.PrivateIP{Enabled: true, Network: "projects/cloudsql-postgres-123456/global/networks/default"},
			PublicIP: v1alpha1.PublicIP{Enabled: true, AuthorizedNetworks: []v1alpha1.AuthorizedNetwork{
				{CIDR: "30.60.90.120/32", Name: "alice"},
				{CIDR: "120.90.60.0/24", Name: "bob"},
			}},
		},
		Resources: v1alpha1.Resources{
			Disk:         v1alpha1.Disk{SizeMinimumGb: 20, SizeMaximumGb: 40, Type: v1alpha1.DiskTypeSSD},
			InstanceType: "db-custom-2-7680",
		},
		DeletionProtection: &v1alpha1.DeletionProtection{Enabled: true},
	}
	p.Backups.RetainOnDelete = ptr.To(true)
	p.Backups.FinalBackup = &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 14}
	p.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true, LogRetentionDays: 3}
	p.Backups.RetainedBackups = ptr.To[int32](14)
	p.Backups.Location = "eu"
	return p
}

// minimalObserved is what Cloud SQL answers to instances.get for the
// instance created from minimalParams, written by hand (not derived from
// GenerateInstance) so that the comparison is tested against the API's
// shape rather than against itself.
func minimalObserved() *sqladmin.DatabaseInstance {
	return &sqladmin.DatabaseInstance{
		Kind:                       "sql#instance",
		Name:                       "example-minimal",
		Project:                    "my-project-123456",
		Region:                     "europe-west1",
		GceZone:                    "europe-west1-b",
		State:                      "RUNNABLE",
		DatabaseVersion:            "POSTGRES_18",
		DatabaseInstalledVersion:   "POSTGRES_18_1",
		ConnectionName:             "my-project-123456:europe-west1:example-minimal",
		InstanceType:               InstanceTypeCloudSQL,
		BackendType:                BackendTypeSecondGen,
		SelfLink:                   "https://sqladmin.googleapis.com/sql/v1beta4/projects/my-project-123456/instances/example-minimal",
		ServiceAccountEmailAddress: "p123-abc@gcp-sa-cloud-sql.iam.gserviceaccount.com",
		IpAddresses: []*sqladmin.IpMapping{
			{Type: "PRIMARY", IpAddress: "34.1.2.3"},
			{Type: "OUTGOING", IpAddress: "35.1.2.3"},
		},
		ServerCaCert: &sqladmin.SslCert{Cert: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", ExpirationTime: "2036-01-01T00:00:00Z"},
		Settings: &sqladmin.Settings{
			Kind:             "sql#settings",
			SettingsVersion:  1,
			Tier:             "db-custom-1-3840",
			Edition:          EditionEnterprise,
			AvailabilityType: AvailabilityZonal,
			PricingPlan:      PricingPlanPerUse,
			ActivationPolicy: ActivationPolicyAlways,
			ReplicationType:  "SYNCHRONOUS",
			BackupConfiguration: &sqladmin.BackupConfiguration{
				Kind: "sql#backupConfiguration", Enabled: true, StartTime: "00:00",
				TransactionLogRetentionDays: 7,
				BackupRetentionSettings:     &sqladmin.BackupRetentionSettings{RetentionUnit: "COUNT", RetainedBackups: 7},
			},
			UserLabels:             map[string]string{"owner": "cloudsql-postgres-operator"},
			IpConfiguration:        &sqladmin.IpConfiguration{Ipv4Enabled: true, SslMode: "ALLOW_UNENCRYPTED_AND_ENCRYPTED"},
			LocationPreference:     &sqladmin.LocationPreference{Kind: "sql#locationPreference", Zone: "europe-west1-b"},
			MaintenanceWindow:      &sqladmin.MaintenanceWindow{Kind: "sql#maintenanceWindow"},
			DataDiskSizeGb:         10,
			DataDiskType:           DiskTypeSSD,
			StorageAutoResize:      ptr.To(true),
			StorageAutoResizeLimit: 0,
			// What the provider turns on for an instance it creates.
			DeletionProtectionEnabled: true,
			RetainBackupsOnDelete:     true,
			FinalBackupConfig:         &sqladmin.FinalBackupConfig{Enabled: true, RetentionDays: 30},
		},
	}
}

// fullObserved is what Cloud SQL answers for the instance created from
// fullParams.
func fullObserved() *sqladmin.DatabaseInstance {
	o := minimalObserved()
	o.Name = "cloudsql-psql-123456"
	o.Region = "europe-west4"
	o.GceZone = "europe-west4-b"
	o.SecondaryGceZone = "europe-west4-c"
	o.DatabaseVersion = "POSTGRES_9_6"
	o.DatabaseInstalledVersion = "POSTGRES_9_6_24"
	o.ConnectionName = "my-project-123456:europe-west4:cloudsql-psql-123456"
	o.SelfLink = "https://sqladmin.googleapis.com/sql/v1beta4/projects/my-project-123456/instances/cloudsql-psql-123456"
	o.IpAddresses = []*sqladmin.IpMapping{
		{Type: "PRIMARY", IpAddress: "34.9.8.7"},
		{Type: "OUTGOING", IpAddress: "35.9.8.7"},
		{Type: "PRIVATE", IpAddress: "10.9.8.7"},
	}
	s := o.Settings
	s.SettingsVersion = 3
	s.Tier = "db-custom-2-7680"
	s.AvailabilityType = AvailabilityRegional
	s.BackupConfiguration.StartTime = "22:00"
	s.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "autovacuum", Value: "on"}}
	s.UserLabels = map[string]string{"owner": "cloudsql-postgres-operator", "team": "payments"}
	s.IpConfiguration = &sqladmin.IpConfiguration{
		Ipv4Enabled:    true,
		PrivateNetwork: "projects/cloudsql-postgres-123456/global/networks/default",
		SslMode:        "ALLOW_UNENCRYPTED_AND_ENCRYPTED",
		AuthorizedNetworks: []*sqladmin.AclEntry{
			{Kind: ACLEntryKind, Value: "30.60.90.120/32", Name: "alice"},
			{Kind: ACLEntryKind, Value: "120.90.60.0/24", Name: "bob"},
		},
	}
	s.LocationPreference.Zone = "europe-west4-b"
	s.MaintenanceWindow = &sqladmin.MaintenanceWindow{Kind: "sql#maintenanceWindow", Day: 6, Hour: 16}
	s.DataDiskSizeGb = 20
	s.StorageAutoResizeLimit = 40
	s.FinalBackupConfig.RetentionDays = 14
	s.BackupConfiguration = &sqladmin.BackupConfiguration{
		Kind: "sql#backupConfiguration", Enabled: true, StartTime: "22:00", Location: "eu",
		PointInTimeRecoveryEnabled: true, TransactionLogRetentionDays: 3,
		BackupRetentionSettings: &sqladmin.BackupRetentionSettings{RetentionUnit: "COUNT", RetainedBackups: 14},
	}
	return o
}

// wire is v as the Go client puts it on the wire (ForceSendFields
// applied), decoded into generic JSON values.
func wire(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("cannot marshal %T: %v", v, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("cannot unmarshal %s: %v", b, err)
	}
	return m
}

// wireJSON decodes a JSON literal for comparison with wire.
func wireJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad JSON in test: %v\n%s", err, s)
	}
	return m
}

// at walks nested JSON objects along keys; nil when a key is missing.
func at(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[k]
	}
	return cur
}

// applyPatch is what instances.patch does to observed: a JSON merge of the
// body (objects merge, arrays and scalars replace, null deletes), as the
// Admin API documents it and the emulator implements it.
func applyPatch(t *testing.T, observed, patch *sqladmin.DatabaseInstance) *sqladmin.DatabaseInstance {
	t.Helper()
	base := map[string]any{}
	if observed != nil {
		base = wire(t, observed)
	}
	mergePatch(base, wire(t, patch))
	return fromWire(t, base)
}

// fromWire decodes an instance from its JSON form, as the client would read it.
func fromWire(t *testing.T, m map[string]any) *sqladmin.DatabaseInstance {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := &sqladmin.DatabaseInstance{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mergePatch(dst, src map[string]any) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				mergePatch(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}
