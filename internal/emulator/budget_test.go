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
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

const quotaMessage = "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service 'sqladmin.googleapis.com'"

func TestRequestBudgetIsASlidingMinutePerProject(t *testing.T) {
	e := newEnv(t, emulator.WithRequestBudget(5))
	e.insert("orders") // 1
	for range 2 {
		e.get("orders") // 2, 3
	}
	e.clk.Advance(30 * time.Second)
	_, err := e.svc.Instances.Get(project, "ghost").Do() // 4: errors count too
	expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
	_, err = e.svc.Operations.List(project).Do() // 5
	e.g.Expect(err).NotTo(HaveOccurred())

	_, err = e.svc.Instances.Get(project, "orders").Do()
	gerr := expectAPIError(e.g, err, http.StatusTooManyRequests, "rateLimitExceeded")
	e.g.Expect(gerr.Message).To(HavePrefix(quotaMessage))
	e.g.Expect(gerr.Body).To(ContainSubstring(`"status":"RESOURCE_EXHAUSTED"`))

	// Other projects have their own budget.
	_, err = e.svc.Instances.List(otherProject).Do()
	e.g.Expect(err).NotTo(HaveOccurred())

	// A minute after the first three requests, three slots are free again;
	// rejected requests did not use any.
	e.clk.Advance(30 * time.Second)
	for range 3 {
		_, err = e.svc.Instances.Get(project, "orders").Do()
		e.g.Expect(err).NotTo(HaveOccurred())
	}
	_, err = e.svc.Instances.Get(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusTooManyRequests, "rateLimitExceeded")

	// Rejected requests are still counted as received.
	e.g.Expect(e.emu.Counts()[emulator.MethodInstancesGet]).To(Equal(8))
}

func TestRequestBudgetDefaultsTo180PerMinute(t *testing.T) {
	g := NewWithT(t)
	clk := emulator.NewFakeClock(epoch)
	hs := httptest.NewServer(emulator.New(emulator.WithClock(clk)))
	defer hs.Close()
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(hs.URL+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	for i := range emulator.DefaultRequestBudget {
		_, err := svc.Instances.List(project).Do()
		g.Expect(err).NotTo(HaveOccurred(), "request %d", i+1)
	}
	_, err = svc.Instances.List(project).Do()
	expectAPIError(g, err, http.StatusTooManyRequests, "rateLimitExceeded")
	clk.Advance(time.Minute)
	_, err = svc.Instances.List(project).Do()
	g.Expect(err).NotTo(HaveOccurred())
}
