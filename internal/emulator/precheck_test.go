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

// preCheck asks whether instance can be upgraded to target.
func (e *env) preCheck(instance, target string) (*sqladmin.Operation, error) {
	return e.svc.Instances.PreCheckMajorVersionUpgrade(project, instance, &sqladmin.InstancesPreCheckMajorVersionUpgradeRequest{
		PreCheckMajorVersionUpgradeContext: &sqladmin.PreCheckMajorVersionUpgradeContext{TargetDatabaseVersion: target},
	}).Do()
}

func TestPreCheckMajorVersionUpgradeAnswersInTheDoneOperation(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(0, 10*time.Minute, 0))
	e.insert("orders")

	op, err := e.preCheck("orders", "POSTGRES_16")
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal(emulator.OpPreCheckUpgrade))
	e.g.Expect(op.Status).NotTo(Equal(emulator.OperationDone))
	e.g.Expect(op.PreCheckMajorVersionUpgradeContext.TargetDatabaseVersion).To(Equal("POSTGRES_16"))
	e.g.Expect(op.PreCheckMajorVersionUpgradeContext.PreCheckResponse).To(BeEmpty(), "no findings until it is done")
	_, err = e.preCheck("orders", "POSTGRES_16")
	expectAPIError(e.g, err, http.StatusConflict, emulator.ReasonOperationInProgress)

	e.clk.Advance(10 * time.Minute)
	done := e.operation(op.Name)
	e.g.Expect(done.Status).To(Equal(emulator.OperationDone))
	e.g.Expect(done.Error).To(BeNil())
	e.g.Expect(done.PreCheckMajorVersionUpgradeContext.PreCheckResponse).To(HaveExactElements(
		HaveField("MessageType", emulator.PreCheckInfo)))
	e.g.Expect(e.get("orders").DatabaseVersion).To(Equal("POSTGRES_15"), "a pre-check changes nothing")
}

func TestFailPreCheckMakesTheNextPreCheckFindAProblem(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.g.Expect(e.call(http.MethodPost, "/emulator/v1/projects/"+project+"/instances/orders:failPreCheck",
		`{"message":"extension postgis 2.5 is not supported by POSTGRES_16"}`, nil)).To(Equal(http.StatusNoContent))

	op, err := e.preCheck("orders", "POSTGRES_16")
	e.g.Expect(err).NotTo(HaveOccurred())
	done := e.operation(op.Name)
	e.g.Expect(done.Status).To(Equal(emulator.OperationDone))
	e.g.Expect(done.Error).To(BeNil(), "the operation succeeds: its findings are its result")
	resp := done.PreCheckMajorVersionUpgradeContext.PreCheckResponse
	e.g.Expect(resp).To(HaveLen(1))
	e.g.Expect(resp[0].MessageType).To(Equal(emulator.PreCheckError))
	e.g.Expect(resp[0].Message).To(Equal("extension postgis 2.5 is not supported by POSTGRES_16"))
	e.g.Expect(resp[0].ActionsRequired).NotTo(BeEmpty())

	op, err = e.preCheck("orders", "POSTGRES_17")
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.operation(op.Name).PreCheckMajorVersionUpgradeContext.PreCheckResponse).To(HaveExactElements(
		HaveField("MessageType", emulator.PreCheckInfo)), "only the next pre-check fails")

	e.g.Expect(e.emu.FailPreCheck(project, "missing", "")).To(MatchError(emulator.ErrInstanceNotFound))
}

func TestPreCheckMajorVersionUpgradeRefusals(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	for _, tc := range []struct {
		instance, target string
		code             int
		reason           string
	}{
		{"orders", "POSTGRES_14", http.StatusBadRequest, emulator.ReasonInvalid},
		{"orders", "POSTGRES_15", http.StatusBadRequest, emulator.ReasonInvalid},
		{"orders", "MYSQL_8_0", http.StatusBadRequest, emulator.ReasonInvalid},
		{"orders", "", http.StatusBadRequest, emulator.ReasonRequired},
		{"missing", "POSTGRES_16", http.StatusNotFound, emulator.ReasonInstanceDoesNotExist},
	} {
		_, err := e.preCheck(tc.instance, tc.target)
		expectAPIError(e.g, err, tc.code, tc.reason)
	}
}
