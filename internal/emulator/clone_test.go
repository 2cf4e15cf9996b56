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
	"time"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

func cloneRequest(dest, zone string) *sqladmin.InstancesCloneRequest {
	return &sqladmin.InstancesCloneRequest{CloneContext: &sqladmin.CloneContext{
		Kind: "sql#cloneContext", DestinationInstanceName: dest, PreferredZone: zone,
	}}
}

func TestCloneCopiesTheSource(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(time.Minute, 0, 0))
	e.insert("orders", func(db *sqladmin.DatabaseInstance) {
		db.Settings.UserLabels = map[string]string{"team": "sales"}
		db.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "max_connections", Value: "50"}}
	})
	e.clk.Advance(time.Minute)
	_, err := e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "app-pw"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	src := e.get("orders")
	e.clk.Advance(time.Hour)

	op, err := e.svc.Instances.Clone(project, "orders", cloneRequest("orders-copy", "europe-west1-c")).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	// Recorded against Cloud SQL: the operation targets the new instance.
	e.g.Expect(op.OperationType).To(Equal("CLONE"))
	e.g.Expect(op.Status).To(Equal("PENDING"))
	e.g.Expect(op.TargetId).To(Equal("orders-copy"))
	e.g.Expect(op.TargetLink).To(Equal("https://sqladmin.googleapis.com/sql/v1beta4/projects/test-project/instances/orders-copy"))
	e.g.Expect(e.emu.Counts()).To(HaveKeyWithValue(emulator.MethodInstancesClone, 1))

	db := e.get("orders-copy")
	e.g.Expect(db.State).To(Equal(emulator.StatePendingCreate))
	e.g.Expect(db.IpAddresses).To(BeEmpty())
	_, err = e.svc.Instances.Patch(project, "orders-copy", &sqladmin.DatabaseInstance{}).Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")

	e.clk.Advance(time.Minute)
	e.g.Expect(e.operation(op.Name).Status).To(Equal("DONE"))
	db = e.get("orders-copy")
	e.g.Expect(db.State).To(Equal(emulator.StateRunnable))
	e.g.Expect(db.Name).To(Equal("orders-copy"))
	e.g.Expect(db.ConnectionName).To(Equal("test-project:europe-west1:orders-copy"))
	e.g.Expect(db.SelfLink).To(HaveSuffix("/instances/orders-copy"))
	e.g.Expect(db.GceZone).To(Equal("europe-west1-c"))
	e.g.Expect(db.Settings.LocationPreference.Zone).To(Equal("europe-west1-c"))
	e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(1)))
	e.g.Expect(db.CreateTime).To(Equal("2026-03-01T11:01:00.000Z"))
	e.g.Expect(db.CreateTime).NotTo(Equal(src.CreateTime))
	e.g.Expect(db.DatabaseVersion).To(Equal(src.DatabaseVersion))
	e.g.Expect(db.Settings.Tier).To(Equal(src.Settings.Tier))
	e.g.Expect(db.Settings.UserLabels).To(Equal(map[string]string{"team": "sales"}))
	e.g.Expect(db.Settings.DatabaseFlags).To(HaveExactElements(HaveField("Value", "50")))
	e.g.Expect(db.ServerCaCert.Instance).To(Equal("orders-copy"))
	e.g.Expect(db.ServerCaCert.Cert).NotTo(Equal(src.ServerCaCert.Cert), "a clone has its own CA")
	e.g.Expect(db.IpAddresses).NotTo(BeEmpty())
	e.g.Expect(db.IpAddresses[0].IpAddress).NotTo(Equal(src.IpAddresses[0].IpAddress))

	users, err := e.svc.Users.List(project, "orders-copy").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(users.Items).To(HaveExactElements(
		And(HaveField("Name", "app"), HaveField("Instance", "orders-copy")),
		HaveField("Name", "postgres")))
	e.g.Expect(e.emu.PasswordIs(project, "orders-copy", "postgres", rootPassword)).To(BeTrue())
	e.g.Expect(e.emu.PasswordIs(project, "orders-copy", "app", "app-pw")).To(BeTrue())
	dbs, err := e.svc.Databases.List(project, "orders-copy").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(dbs.Items).To(HaveExactElements(
		HaveField("Name", "postgres"),
		And(HaveField("Name", "sales"), HaveField("Instance", "orders-copy"),
			HaveField("SelfLink", HaveSuffix("/instances/orders-copy/databases/sales")))))

	// The two are apart from now on.
	_, err = e.svc.Users.Update(project, "orders-copy", &sqladmin.User{Password: "new"}).Name("app").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.emu.PasswordIs(project, "orders", "app", "app-pw")).To(BeTrue())
	e.g.Expect(e.get("orders").Settings.LocationPreference.Zone).To(Equal("europe-west1-a"))
}

func TestCloneKeepsTheZoneUnlessOneIsPreferred(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", func(db *sqladmin.DatabaseInstance) {
		db.Settings.LocationPreference = &sqladmin.LocationPreference{Zone: "europe-west1-d"}
	})
	_, err := e.svc.Instances.Clone(project, "orders", cloneRequest("orders-copy", "")).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.get("orders-copy").GceZone).To(Equal("europe-west1-d"))
}

func TestCloneErrors(t *testing.T) {
	e := newEnv(t, emulator.WithNameReservation(time.Hour))
	e.insert("orders")
	e.insert("taken")
	e.insert("gone")
	_, err := e.svc.Instances.Delete(project, "gone").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.emu.Seed(project, instance("busy"))).To(Succeed())
	e.g.Expect(e.emu.SetInstanceState(project, "busy", emulator.StateMaintenance)).To(Succeed())

	cases := map[string]struct {
		reason     string
		source     string
		req        *sqladmin.InstancesCloneRequest
		wantCode   int
		wantReason string
	}{
		"SourceMissing": {
			reason: "the source must exist",
			source: "nope", req: cloneRequest("copy", ""),
			wantCode: http.StatusNotFound, wantReason: "instanceDoesNotExist",
		},
		"DestinationTaken": {
			reason: "a clone can't take a live instance's name, as an insert can't",
			source: "orders", req: cloneRequest("taken", ""),
			wantCode: http.StatusConflict, wantReason: "instanceAlreadyExists",
		},
		"DestinationIsSource": {
			reason: "the source's own name is taken",
			source: "orders", req: cloneRequest("orders", ""),
			wantCode: http.StatusConflict, wantReason: "instanceAlreadyExists",
		},
		"DestinationReserved": {
			reason: "a deleted instance's name is reserved for clones as for inserts",
			source: "orders", req: cloneRequest("gone", ""),
			wantCode: http.StatusConflict, wantReason: "instanceAlreadyExists",
		},
		"DestinationMissing": {
			reason: "destinationInstanceName is required",
			source: "orders", req: cloneRequest("", ""),
			wantCode: http.StatusBadRequest, wantReason: "required",
		},
		"NoCloneContext": {
			reason: "cloneContext is required",
			source: "orders", req: &sqladmin.InstancesCloneRequest{},
			wantCode: http.StatusBadRequest, wantReason: "required",
		},
		"DestinationInvalid": {
			reason: "the destination follows the rule of instance names",
			source: "orders", req: cloneRequest("Not_Valid", ""),
			wantCode: http.StatusBadRequest, wantReason: "invalid",
		},
		"ZoneOfAnotherRegion": {
			reason: "a clone stays in its source's region",
			source: "orders", req: cloneRequest("copy", "us-central1-a"),
			wantCode: http.StatusBadRequest, wantReason: "invalid",
		},
		"PointInTimeInvalid": {
			reason: "pointInTime is a timestamp",
			source: "orders", req: &sqladmin.InstancesCloneRequest{CloneContext: &sqladmin.CloneContext{
				DestinationInstanceName: "copy", PointInTime: "yesterday"}},
			wantCode: http.StatusBadRequest, wantReason: "invalid",
		},
		"SourceInMaintenance": {
			reason: "a source that takes no mutation takes no clone",
			source: "busy", req: cloneRequest("copy", ""),
			wantCode: http.StatusConflict, wantReason: "operationInProgress",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := e.svc.Instances.Clone(project, tc.source, tc.req).Do()
			expectAPIError(g, err, tc.wantCode, tc.wantReason)
		})
	}
	_, err = e.svc.Instances.Get(project, "copy").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
}

func TestCloneThatFailsLeavesAFailedInstance(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.g.Expect(e.emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesClone, FailOperationShare: 1})).To(Succeed())
	op, err := e.svc.Instances.Clone(project, "orders", cloneRequest("orders-copy", "")).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.Error).NotTo(BeNil())
	e.g.Expect(e.get("orders-copy").State).To(Equal(emulator.StateFailed))
}

// TestCloneAtAPointInTimeMustBeInTheRecoveryWindow: the window is the one
// getLatestRecoveryTime answers, and a refusal names it.
func TestCloneAtAPointInTimeMustBeInTheRecoveryWindow(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", withBackups(true, true, 7))
	e.insert("plain")
	e.clk.Advance(time.Hour)
	window, err := e.svc.Projects.Instances.GetLatestRecoveryTime(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(window.EarliestRecoveryTime).To(Equal("2026-03-01T10:00:00.000Z"))
	e.g.Expect(window.LatestRecoveryTime).To(Equal("2026-03-01T11:00:00.000Z"))

	at := func(source, dest, t string) error {
		req := cloneRequest(dest, "")
		req.CloneContext.PointInTime = t
		_, err := e.svc.Instances.Clone(project, source, req).Do()
		return err
	}
	err = at("orders", "copy", "2026-03-01T09:59:59.999Z")
	ae := expectAPIError(e.g, err, http.StatusBadRequest, emulator.ReasonInvalid)
	e.g.Expect(ae.Message).To(Equal(`Invalid request: Invalid cloneContext.pointInTime "2026-03-01T09:59:59.999Z": ` +
		`instance "orders" can be recovered to any time from 2026-03-01T10:00:00.000Z to 2026-03-01T11:00:00.000Z.`))
	err = at("orders", "copy", "2026-03-01T11:00:00.001Z")
	expectAPIError(e.g, err, http.StatusBadRequest, emulator.ReasonInvalid)
	err = at("plain", "copy", "2026-03-01T10:30:00Z")
	ae = expectAPIError(e.g, err, http.StatusBadRequest, emulator.ReasonInvalid)
	e.g.Expect(ae.Message).To(ContainSubstring(`point-in-time recovery is not enabled for the instance "plain"`))
	_, err = e.svc.Instances.Get(project, "copy").Do()
	expectAPIError(e.g, err, http.StatusNotFound, emulator.ReasonInstanceDoesNotExist)

	e.g.Expect(at("orders", "copy", "2026-03-01T10:00:00.000Z")).To(Succeed())
	e.g.Expect(at("orders", "copy-2", "2026-03-01T11:00:00Z")).To(Succeed(), "both ends are in the window")
}
