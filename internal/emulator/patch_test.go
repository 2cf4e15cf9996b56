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

package emulator_test

import (
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// richInstance has flags, labels, authorized networks and a private network,
// so that a patch that leaves them out can be seen to keep them.
func richInstance(db *sqladmin.DatabaseInstance) {
	db.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{
		{Name: "max_connections", Value: "100"},
		{Name: "log_connections", Value: "on"},
	}
	db.Settings.UserLabels = map[string]string{"team": "payments", "env": "test"}
	db.Settings.BackupConfiguration = &sqladmin.BackupConfiguration{Enabled: true, StartTime: "03:30"}
	db.Settings.IpConfiguration = &sqladmin.IpConfiguration{
		Ipv4Enabled:        true,
		PrivateNetwork:     "projects/test-project/global/networks/default",
		AuthorizedNetworks: []*sqladmin.AclEntry{{Name: "office", Value: "203.0.113.0/24"}},
	}
	db.Settings.DataDiskSizeGb = 20
}

func TestPatchMergesOnlyWhatTheClientSent(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", richInstance)

	_, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{
		Settings: &sqladmin.Settings{Tier: "db-custom-2-7680"},
	}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	db := e.get("orders")
	st := db.Settings
	e.g.Expect(st.Tier).To(Equal("db-custom-2-7680"))
	e.g.Expect(st.SettingsVersion).To(Equal(int64(2)))
	e.g.Expect(st.DatabaseFlags).To(HaveLen(2))
	e.g.Expect(st.UserLabels).To(Equal(map[string]string{"team": "payments", "env": "test"}))
	e.g.Expect(st.BackupConfiguration.Enabled).To(BeTrue())
	e.g.Expect(st.BackupConfiguration.StartTime).To(Equal("03:30"))
	e.g.Expect(st.IpConfiguration.AuthorizedNetworks).To(HaveLen(1))
	e.g.Expect(st.IpConfiguration.PrivateNetwork).To(Equal("projects/test-project/global/networks/default"))
	e.g.Expect(st.DataDiskSizeGb).To(Equal(int64(20)))
	e.g.Expect(st.StorageAutoResize).To(HaveValue(BeTrue()))

	// false and 0 only count when forced; a nested object merges key by key.
	_, err = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		BackupConfiguration: &sqladmin.BackupConfiguration{Enabled: false, ForceSendFields: []string{"Enabled"}},
		IpConfiguration:     &sqladmin.IpConfiguration{Ipv4Enabled: false},
		StorageAutoResize:   new(bool),
	}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	st = e.get("orders").Settings
	e.g.Expect(st.BackupConfiguration.Enabled).To(BeFalse())
	e.g.Expect(st.BackupConfiguration.StartTime).To(Equal("03:30"))
	e.g.Expect(st.IpConfiguration.Ipv4Enabled).To(BeTrue(), "ipv4Enabled false was not forced, so it was not sent")
	e.g.Expect(st.StorageAutoResize).To(HaveValue(BeFalse()))
	e.g.Expect(st.SettingsVersion).To(Equal(int64(3)))

	// Arrays replace wholesale; an empty one only when forced.
	_, err = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		DatabaseFlags: []*sqladmin.DatabaseFlags{{Name: "work_mem", Value: "8192"}},
		IpConfiguration: &sqladmin.IpConfiguration{
			AuthorizedNetworks: []*sqladmin.AclEntry{},
			ForceSendFields:    []string{"AuthorizedNetworks"},
		},
	}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	db = e.get("orders")
	e.g.Expect(db.Settings.DatabaseFlags).To(HaveExactElements(HaveField("Name", "work_mem")))
	e.g.Expect(db.Settings.IpConfiguration.AuthorizedNetworks).To(BeEmpty())
	e.g.Expect(db.Settings.IpConfiguration.PrivateNetwork).NotTo(BeEmpty())
	e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(4)))

	// Turning the public IP off removes the PRIMARY address.
	_, err = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		IpConfiguration: &sqladmin.IpConfiguration{Ipv4Enabled: false, ForceSendFields: []string{"Ipv4Enabled"}},
	}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(ipTypes(e.get("orders"))).To(Equal([]string{"PRIVATE"}))

	// Labels can be cleared with NullFields.
	_, err = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		NullFields: []string{"UserLabels"},
	}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.get("orders").Settings.UserLabels).To(BeEmpty())
}

func TestPatchWithoutChangesKeepsTheSettingsVersion(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	op, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("UPDATE"))
	e.g.Expect(e.get("orders").Settings.SettingsVersion).To(Equal(int64(1)))
}

func TestPatchChecksASettingsVersionItIsGiven(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	_, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{
		Settings: &sqladmin.Settings{Tier: "db-custom-2-7680", SettingsVersion: 7},
	}).Do()
	gerr := expectAPIError(e.g, err, http.StatusPreconditionFailed, "staleData")
	e.g.Expect(gerr.Message).To(Equal("Condition does not match."))
	_, err = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{
		Settings: &sqladmin.Settings{Tier: "db-custom-2-7680", SettingsVersion: 1},
	}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
}

func TestPatchUpgradesTheMajorVersion(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", withVersion("POSTGRES_14"))
	_, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{DatabaseVersion: "POSTGRES_13"}).Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "invalid")
	_, err = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{DatabaseVersion: "POSTGRES_99"}).Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "invalid")
	_, err = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{DatabaseVersion: "POSTGRES_15"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	db := e.get("orders")
	e.g.Expect(db.DatabaseVersion).To(Equal("POSTGRES_15"))
	e.g.Expect(db.DatabaseInstalledVersion).To(HavePrefix("POSTGRES_15_"))
	e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(2)))
}

func TestPatchRejectsInvalidChanges(t *testing.T) {
	cases := map[string]struct {
		patch  *sqladmin.DatabaseInstance
		code   int
		reason string
	}{
		"ShrinkingTheDisk": {
			patch: &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{DataDiskSizeGb: 15}},
			code:  http.StatusBadRequest, reason: "invalid",
		},
		"RemovingThePrivateNetwork": {
			patch: &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{IpConfiguration: &sqladmin.IpConfiguration{
				PrivateNetwork: "", ForceSendFields: []string{"PrivateNetwork"},
			}}},
			code: http.StatusBadRequest, reason: "invalid",
		},
		"NullingThePrivateNetwork": {
			patch: &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{IpConfiguration: &sqladmin.IpConfiguration{
				NullFields: []string{"PrivateNetwork"},
			}}},
			code: http.StatusBadRequest, reason: "invalid",
		},
		"AMalformedFlag": {
			patch: &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{DatabaseFlags: []*sqladmin.DatabaseFlags{
				{Name: "max_connections", Value: "many"},
			}}},
			code: http.StatusBadRequest, reason: "invalidFlagValue",
		},
		"AnEnterprisePlusEditionWithACustomTier": {
			patch: &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{Edition: "ENTERPRISE_PLUS"}},
			code:  http.StatusBadRequest, reason: "invalid",
		},
		"AnInvalidCustomTier": {
			patch: &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{Tier: "db-custom-5-10240"}},
			code:  http.StatusBadRequest, reason: "invalid",
		},
		"DroppingTheTier": {
			patch: &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{NullFields: []string{"Tier"}}},
			code:  http.StatusBadRequest, reason: "required",
		},
		"AStaleSettingsVersion": {
			patch: &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{SettingsVersion: 2, Tier: "db-custom-2-7680"}},
			code:  http.StatusPreconditionFailed, reason: "staleData",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.insert("orders", richInstance)
			before := e.get("orders")
			_, err := e.svc.Instances.Patch(project, "orders", tc.patch).Do()
			expectAPIError(e.g, err, tc.code, tc.reason)
			after := e.get("orders")
			e.g.Expect(after.Settings).To(Equal(before.Settings), "a refused patch changes nothing")
		})
	}

	t.Run("AnUnknownInstance", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.svc.Instances.Patch(project, "nope", &sqladmin.DatabaseInstance{}).Do()
		expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
	})
}

func TestUpdateReplacesSettingsAndNeedsTheCurrentVersion(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", richInstance)
	db := e.get("orders")

	// A stale or missing version is refused.
	stale := &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{Tier: "db-custom-2-7680", SettingsVersion: 5}}
	_, err := e.svc.Instances.Update(project, "orders", stale).Do()
	gerr := expectAPIError(e.g, err, http.StatusPreconditionFailed, "staleData")
	e.g.Expect(gerr.Message).To(Equal("Condition does not match."))
	missing := &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{Tier: "db-custom-2-7680"}}
	_, err = e.svc.Instances.Update(project, "orders", missing).Do()
	expectAPIError(e.g, err, http.StatusPreconditionFailed, "staleData")
	_, err = e.svc.Instances.Update(project, "orders", &sqladmin.DatabaseInstance{}).Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "required")

	// The settings are replaced whole: what is left out goes back to default.
	op, err := e.svc.Instances.Update(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		Tier:            "db-custom-2-7680",
		SettingsVersion: db.Settings.SettingsVersion,
		DataDiskSizeGb:  20,
		IpConfiguration: &sqladmin.IpConfiguration{
			Ipv4Enabled:    true,
			PrivateNetwork: "projects/test-project/global/networks/default",
		},
	}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("UPDATE"))
	st := e.get("orders").Settings
	e.g.Expect(st.Tier).To(Equal("db-custom-2-7680"))
	e.g.Expect(st.SettingsVersion).To(Equal(int64(2)))
	e.g.Expect(st.DatabaseFlags).To(BeEmpty())
	e.g.Expect(st.UserLabels).To(BeEmpty())
	e.g.Expect(st.IpConfiguration.AuthorizedNetworks).To(BeEmpty())
	e.g.Expect(st.BackupConfiguration.Enabled).To(BeFalse())
	e.g.Expect(st.BackupConfiguration.StartTime).To(Equal("12:00"))

	// Leaving the private network out of a full replace removes it: refused.
	_, err = e.svc.Instances.Update(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		Tier: "db-custom-2-7680", SettingsVersion: 2, DataDiskSizeGb: 20,
	}}).Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "invalid")
	// So is shrinking the disk.
	_, err = e.svc.Instances.Update(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		Tier: "db-custom-2-7680", SettingsVersion: 2,
		IpConfiguration: &sqladmin.IpConfiguration{PrivateNetwork: "projects/test-project/global/networks/default"},
	}}).Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "invalid")

	_, err = e.svc.Instances.Update(project, "nope", &sqladmin.DatabaseInstance{}).Do()
	expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
}
