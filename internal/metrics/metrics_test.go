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

package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

func TestMethod(t *testing.T) {
	const p = "/sql/v1beta4/projects/my-project"
	cases := map[string]struct{ verb, path, want string }{
		"InstancesList":     {http.MethodGet, p + "/instances", "instances.list"},
		"InstancesInsert":   {http.MethodPost, p + "/instances", "instances.insert"},
		"InstancesGet":      {http.MethodGet, p + "/instances/db", "instances.get"},
		"InstancesPatch":    {http.MethodPatch, p + "/instances/db", "instances.patch"},
		"InstancesUpdate":   {http.MethodPut, p + "/instances/db", "instances.update"},
		"InstancesDelete":   {http.MethodDelete, p + "/instances/db", "instances.delete"},
		"OperationsList":    {http.MethodGet, p + "/operations", "operations.list"},
		"OperationsGet":     {http.MethodGet, p + "/operations/abc", "operations.get"},
		"UsersList":         {http.MethodGet, p + "/instances/db/users", "users.list"},
		"UsersUpdate":       {http.MethodPut, p + "/instances/db/users", "users.update"},
		"UsersGet":          {http.MethodGet, p + "/instances/db/users/postgres", "users.get"},
		"ConnectGet":        {http.MethodGet, p + "/instances/db/connectSettings", "connect.get"},
		"DatabasesList":     {http.MethodGet, p + "/instances/db/databases", "databases.list"},
		"DatabasesInsert":   {http.MethodPost, p + "/instances/db/databases", "databases.insert"},
		"DatabasesGet":      {http.MethodGet, p + "/instances/db/databases/orders", "databases.get"},
		"DatabasesPatch":    {http.MethodPatch, p + "/instances/db/databases/orders", "databases.patch"},
		"DatabasesUpdate":   {http.MethodPut, p + "/instances/db/databases/orders", "databases.update"},
		"DatabasesDelete":   {http.MethodDelete, p + "/instances/db/databases/orders", "databases.delete"},
		"EphemeralCert":     {http.MethodPost, p + "/instances/db:generateEphemeralCert", "connect.generateEphemeral"},
		"UnknownVerb":       {http.MethodHead, p + "/instances/db", "other"},
		"NotCloudsql":       {http.MethodGet, "/healthz", "other"},
		"UnknownCollection": {http.MethodGet, p + "/tiers", "other"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(Method(tc.verb, tc.path)).To(Equal(tc.want))
		})
	}
}

// Requests through the budget transport are counted by method and outcome, retries
// included.
func TestObserveCloudSQLCountsRetries(t *testing.T) {
	g := NewWithT(t)
	emu := emulator.New(emulator.WithRequestBudget(0))
	srv := httptest.NewServer(emu)
	defer srv.Close()
	tr := budget.NewTransport(nil, budget.PerMinute(1000), budget.WithObserver(ObserveCloudSQL),
		budget.WithSleep(func(context.Context, time.Duration) error { return nil }))
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithHTTPClient(&http.Client{Transport: tr}))
	g.Expect(err).ToNot(HaveOccurred())

	before404 := testutil.ToFloat64(CloudSQLRequests.WithLabelValues("instances.get", "404"))
	before503 := testutil.ToFloat64(CloudSQLRequests.WithLabelValues("operations.list", "503")) +
		testutil.ToFloat64(CloudSQLRequests.WithLabelValues("operations.list", "500"))
	before200 := testutil.ToFloat64(CloudSQLRequests.WithLabelValues("operations.list", "200"))

	_, err = svc.Instances.Get("p", "missing").Do()
	g.Expect(err).To(HaveOccurred())
	g.Expect(emu.InjectFault(emulator.Fault{Method: emulator.MethodOperationsList, ServerErrorShare: 1, Count: 2})).To(Succeed())
	_, err = svc.Operations.List("p").Do()
	g.Expect(err).ToNot(HaveOccurred())

	g.Expect(testutil.ToFloat64(CloudSQLRequests.WithLabelValues("instances.get", "404"))).To(Equal(before404 + 1))
	g.Expect(testutil.ToFloat64(CloudSQLRequests.WithLabelValues("operations.list", "503")) +
		testutil.ToFloat64(CloudSQLRequests.WithLabelValues("operations.list", "500"))).To(Equal(before503 + 2))
	g.Expect(testutil.ToFloat64(CloudSQLRequests.WithLabelValues("operations.list", "200"))).To(Equal(before200 + 1))
}
