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
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	. "github.com/onsi/gomega"
	"google.golang.org/api/googleapi"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

func TestInjectedServerErrorsAreCountedDown(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.g.Expect(e.emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesGet, ServerErrorShare: 1, Count: 2})).To(Succeed())
	e.g.Expect(e.emu.Faults()).To(HaveExactElements(HaveField("Count", 2)))

	for range 2 {
		_, err := e.svc.Instances.Get(project, "orders").Do()
		var gerr *googleapi.Error
		e.g.Expect(errors.As(err, &gerr)).To(BeTrue())
		e.g.Expect(gerr.Code).To(BeElementOf(http.StatusInternalServerError, http.StatusServiceUnavailable))
		e.g.Expect(gerr.Errors[0].Reason).To(Equal("backendError"))
	}
	// Other methods were never affected, and the fault is used up.
	_, err := e.svc.Instances.List(project).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.emu.Faults()).To(BeEmpty())
	e.get("orders")
	e.g.Expect(e.emu.Counts()[emulator.MethodInstancesGet]).To(Equal(3))
}

func TestInjectedRateLimitsHitEveryMethod(t *testing.T) {
	e := newEnv(t)
	e.g.Expect(e.emu.InjectFault(emulator.Fault{RateLimitShare: 1})).To(Succeed())
	_, err := e.svc.Instances.List(project).Do()
	gerr := expectAPIError(e.g, err, http.StatusTooManyRequests, "rateLimitExceeded")
	e.g.Expect(gerr.Message).To(HavePrefix(quotaMessage))
	_, err = e.svc.Operations.List(project).Do()
	expectAPIError(e.g, err, http.StatusTooManyRequests, "rateLimitExceeded")
	e.emu.ClearFaults()
	_, err = e.svc.Instances.List(project).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	// The request log tells the injected answers from the API's.
	var faults []bool
	for _, r := range e.emu.Requests() {
		faults = append(faults, r.Fault)
	}
	e.g.Expect(faults).To(Equal([]bool{true, true, false}))
}

func TestInjectedLatency(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.g.Expect(e.emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesGet, Latency: 100 * time.Millisecond})).To(Succeed())
	start := time.Now()
	e.get("orders")
	e.g.Expect(time.Since(start)).To(BeNumerically(">=", 100*time.Millisecond))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := e.svc.Instances.Get(project, "orders").Context(ctx).Do()
	e.g.Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue(), "got %v", err)
}

func TestInjectedOperationFailures(t *testing.T) {
	t.Run("AFailedUpdateChangesNothing", func(t *testing.T) {
		e := newEnv(t, emulator.WithDelays(0, time.Minute, 0))
		e.insert("orders")
		e.g.Expect(e.emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesPatch, FailOperationShare: 1, Count: 1})).To(Succeed())
		op, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{Tier: "db-custom-2-7680"}}).Do()
		e.g.Expect(err).NotTo(HaveOccurred())
		e.g.Expect(op.Error).To(BeNil(), "the error shows only once the operation is DONE")
		e.clk.Advance(time.Minute)
		done := e.operation(op.Name)
		e.g.Expect(done.Status).To(Equal("DONE"))
		e.g.Expect(done.Error).NotTo(BeNil())
		e.g.Expect(done.Error.Errors).To(HaveExactElements(HaveField("Code", "INTERNAL_ERROR")))
		db := e.get("orders")
		e.g.Expect(db.Settings.Tier).To(Equal("db-custom-1-3840"))
		e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(1)))
		e.g.Expect(db.State).To(Equal(emulator.StateRunnable))
		// The instance takes mutations again.
		_, err = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{Tier: "db-custom-2-7680"}}).Do()
		e.g.Expect(err).NotTo(HaveOccurred())
		e.clk.Advance(time.Minute)
		e.g.Expect(e.get("orders").Settings.Tier).To(Equal("db-custom-2-7680"))
	})

	t.Run("AFailedCreateLeavesAFAILEDInstance", func(t *testing.T) {
		e := newEnv(t)
		e.g.Expect(e.emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesInsert, FailOperationShare: 1})).To(Succeed())
		op := e.insert("orders")
		e.g.Expect(op.Error).NotTo(BeNil())
		db := e.get("orders")
		e.g.Expect(db.State).To(Equal(emulator.StateFailed))
		e.g.Expect(db.IpAddresses).To(BeEmpty())
		_, err := e.svc.Instances.Delete(project, "orders").Do()
		e.g.Expect(err).NotTo(HaveOccurred())
	})

	t.Run("AFailedDeleteLeavesTheInstanceAsItWas", func(t *testing.T) {
		e := newEnv(t)
		e.insert("orders")
		e.g.Expect(e.emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesDelete, FailOperationShare: 1})).To(Succeed())
		op, err := e.svc.Instances.Delete(project, "orders").Do()
		e.g.Expect(err).NotTo(HaveOccurred())
		e.g.Expect(op.Error).NotTo(BeNil())
		e.g.Expect(e.get("orders").State).To(Equal(emulator.StateRunnable))
	})

	t.Run("ALostAnswerLeavesWhatTheRequestDid", func(t *testing.T) {
		e := newEnv(t)
		e.insert("orders")
		e.g.Expect(e.emu.InjectFault(emulator.Fault{Method: emulator.MethodUsersInsert, LoseAnswerShare: 1, Count: 1})).To(Succeed())
		_, err := e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "pw"}).Do()
		var gerr *googleapi.Error
		e.g.Expect(errors.As(err, &gerr)).To(BeTrue(), "%v", err)
		e.g.Expect(gerr.Code).To(Equal(http.StatusServiceUnavailable))
		e.g.Expect(e.emu.PasswordIs(project, "orders", "app", "pw")).To(BeTrue(), "the login was made")
		_, err = e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "pw"}).Do()
		e.g.Expect(errors.As(err, &gerr)).To(BeTrue(), "%v", err)
		e.g.Expect(gerr.Code).To(Equal(http.StatusConflict), "a retry finds it made")
	})

	t.Run("AFailedPasswordChangeKeepsTheOldPassword", func(t *testing.T) {
		e := newEnv(t)
		e.insert("orders")
		e.g.Expect(e.emu.InjectFault(emulator.Fault{Method: emulator.MethodUsersUpdate, FailOperationShare: 1})).To(Succeed())
		op, err := e.svc.Users.Update(project, "orders", &sqladmin.User{Password: "new"}).Name("postgres").Do()
		e.g.Expect(err).NotTo(HaveOccurred())
		e.g.Expect(op.Error).NotTo(BeNil())
		e.g.Expect(e.emu.PasswordIs(project, "orders", "postgres", rootPassword)).To(BeTrue())
	})
}

func TestFaultsAreReproducibleForASeed(t *testing.T) {
	outcomes := func(seed uint64) []int {
		e := newEnv(t, emulator.WithRandSeed(seed))
		e.insert("orders")
		e.g.Expect(e.emu.InjectFault(emulator.Fault{ServerErrorShare: 0.3, RateLimitShare: 0.3})).To(Succeed())
		var codes []int
		for range 40 {
			_, err := e.svc.Instances.Get(project, "orders").Do()
			code := http.StatusOK
			var gerr *googleapi.Error
			if errors.As(err, &gerr) {
				code = gerr.Code
			}
			codes = append(codes, code)
		}
		return codes
	}
	g := NewWithT(t)
	first := outcomes(42)
	g.Expect(outcomes(42)).To(Equal(first))
	g.Expect(first).To(ContainElements(http.StatusOK, http.StatusTooManyRequests))
	g.Expect(first).To(ContainElement(BeElementOf(http.StatusInternalServerError, http.StatusServiceUnavailable)))
	g.Expect(outcomes(43)).NotTo(Equal(first))
}

func TestInvalidFaultsAreRefused(t *testing.T) {
	e := newEnv(t)
	for _, f := range []emulator.Fault{
		{ServerErrorShare: 1.5},
		{RateLimitShare: -0.1},
		{FailOperationShare: 2},
		{LoseAnswerShare: -1},
		{Latency: -time.Second},
		{Count: -1},
	} {
		e.g.Expect(e.emu.InjectFault(f)).To(MatchError(emulator.ErrInvalidFault))
	}
	e.g.Expect(e.emu.Faults()).To(BeEmpty())
}
