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

package observer

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/json"
	"io"
	"sync"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// A packed instance is a listed instance as the view holds it: its JSON,
// deflated against a dictionary of what every Cloud SQL instance's JSON says.
// With 10,000 instances the view is, after the informers, what the provider
// holds most of, and an instance's JSON is mostly the words every other one
// has: field names, enumerations, addresses of the API. Deflated, it holds
// about a third of the bytes.
type packed struct {
	// sum is the SHA-256 of the JSON: marshalling is deterministic (fields in
	// order, map keys sorted), so equal sums tell an unchanged instance
	// without inflating anything.
	sum  [sha256.Size]byte
	data []byte
}

// packLevel trades the CPU of packing, which happens once for each instance
// that changed, for memory held for as long as it does not change. (Go's
// fastest level does not use the dictionary.)
const packLevel = flate.DefaultCompression

// dictionary is what the JSON of a Cloud SQL instance has in common with any
// other's. It is built from the API's own types, so that it has their field
// names exactly as they marshal. It must never change within a process: what
// is packed with it is inflated with it.
var dictionary = sync.OnceValue(func() []byte {
	yes := true
	sample := &sqladmin.DatabaseInstance{
		BackendType:              "SECOND_GEN",
		ConnectionName:           "project:europe-west1:instance",
		CreateTime:               "2026-01-01T00:00:00.000Z",
		DatabaseInstalledVersion: "POSTGRES_16_3",
		DatabaseVersion:          "POSTGRES_16",
		GceZone:                  "europe-west1-b",
		InstanceType:             "CLOUD_SQL_INSTANCE",
		IpAddresses: []*sqladmin.IpMapping{
			{IpAddress: "10.0.0.1", Type: "PRIMARY"}, {IpAddress: "10.0.0.2", Type: "OUTGOING"}, {IpAddress: "10.0.0.3", Type: "PRIVATE"},
		},
		Kind:                       "sql#instance",
		MaintenanceVersion:         "POSTGRES_16_3.R20240527.01_10",
		Project:                    "project",
		Region:                     "europe-west1",
		SatisfiesPzi:               true,
		SelfLink:                   "https://sqladmin.googleapis.com/sql/v1beta4/projects/project/instances/instance",
		ServerCaCert:               &sqladmin.SslCert{Kind: "sql#sslCert", Cert: "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", CertSerialNumber: "0", CommonName: `C=US,O=Google\, Inc,CN=Google Cloud SQL Server CA,dnQualifier=`, CreateTime: "2026-01-01T00:00:00.000Z", ExpirationTime: "2036-01-01T00:00:00.000Z", Instance: "instance", Sha1Fingerprint: "0"},
		ServiceAccountEmailAddress: "p0-0@gcp-sa-cloud-sql.iam.gserviceaccount.com",
		Settings: &sqladmin.Settings{
			ActivationPolicy: "ALWAYS", AvailabilityType: "ZONAL",
			BackupConfiguration: &sqladmin.BackupConfiguration{
				BackupRetentionSettings: &sqladmin.BackupRetentionSettings{RetainedBackups: 7, RetentionUnit: "COUNT"},
				Enabled:                 true, Kind: "sql#backupConfiguration", Location: "eu",
				StartTime: "04:00", TransactionLogRetentionDays: 7, TransactionalLogStorageState: "TRANSACTIONAL_LOG_STORAGE_STATE_UNSPECIFIED",
			},
			ConnectorEnforcement: "NOT_REQUIRED", DataDiskSizeGb: 10, DataDiskType: "PD_SSD", DatabaseFlags: []*sqladmin.DatabaseFlags{{Name: "max_connections", Value: "100"}},
			Edition: "ENTERPRISE",
			IpConfiguration: &sqladmin.IpConfiguration{
				Ipv4Enabled: true, PrivateNetwork: "projects/project/global/networks/default", SslMode: "ALLOW_UNENCRYPTED_AND_ENCRYPTED",
				AuthorizedNetworks: []*sqladmin.AclEntry{{Kind: "sql#aclEntry", Name: "office", Value: "0.0.0.0/0"}},
			},
			Kind: "sql#settings", LocationPreference: &sqladmin.LocationPreference{Kind: "sql#locationPreference", Zone: "europe-west1-b"},
			MaintenanceWindow: &sqladmin.MaintenanceWindow{Day: 7, Hour: 4, Kind: "sql#maintenanceWindow", UpdateTrack: "stable"},
			PricingPlan:       "PER_USE", ReplicationType: "SYNCHRONOUS", SettingsVersion: 1, StorageAutoResize: &yes,
			Tier: "db-custom-1-3840", UserLabels: map[string]string{"owner": "cloudsql-postgres-operator"},
		},
		SqlNetworkArchitecture: "NEW_NETWORK_ARCHITECTURE",
		State:                  "RUNNABLE",
		UpgradableDatabaseVersions: []*sqladmin.AvailableDatabaseVersion{
			{DisplayName: "PostgreSQL 17", MajorVersion: "POSTGRES_17", Name: "POSTGRES_17"},
			{DisplayName: "PostgreSQL 18", MajorVersion: "POSTGRES_18", Name: "POSTGRES_18"},
		},
	}
	d, err := json.Marshal(sample)
	if err != nil {
		panic(err) // a literal of the API's own types always marshals
	}
	return d
})

// A packer packs the instances of one listing; it is not safe for concurrent
// use. Its writer (most of a megabyte of tables) is made once per listing.
type packer struct {
	w   *flate.Writer
	out bytes.Buffer
}

// pack packs raw, an instance's JSON whose sum the caller computed.
func (p *packer) pack(raw []byte, sum [sha256.Size]byte) (packed, error) {
	p.out.Reset()
	if p.w == nil {
		w, err := flate.NewWriterDict(&p.out, packLevel, dictionary())
		if err != nil {
			return packed{}, err
		}
		p.w = w
	} else {
		p.w.Reset(&p.out)
	}
	if _, err := p.w.Write(raw); err != nil {
		return packed{}, err
	}
	if err := p.w.Close(); err != nil {
		return packed{}, err
	}
	return packed{sum: sum, data: bytes.Clone(p.out.Bytes())}, nil
}

// inflaters are kept between calls: each holds tens of kilobytes of tables,
// and every observation from the view inflates one instance.
var inflaters sync.Pool

// json inflates the instance's JSON.
func (p packed) json() ([]byte, error) {
	src := bytes.NewReader(p.data)
	r, ok := inflaters.Get().(io.ReadCloser)
	if ok {
		if err := r.(flate.Resetter).Reset(src, dictionary()); err != nil {
			return nil, err
		}
	} else {
		r = flate.NewReaderDict(src, dictionary())
	}
	defer inflaters.Put(r)
	var out bytes.Buffer
	out.Grow(4 * len(p.data))
	if _, err := out.ReadFrom(r); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// instance decodes the packed instance into a new DatabaseInstance.
func (p packed) instance() (*sqladmin.DatabaseInstance, error) {
	raw, err := p.json()
	if err != nil {
		return nil, err
	}
	i := &sqladmin.DatabaseInstance{}
	return i, json.Unmarshal(raw, i)
}
