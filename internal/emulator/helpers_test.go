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
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	. "github.com/onsi/gomega"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

const (
	project      = "test-project"
	otherProject = "other-project"
	region       = "europe-west1"
	rootPassword = "s3cr3t-root"
)

// epoch is where every fake clock of the suite starts.
var epoch = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// env is one emulator served over HTTP with a real client pointed at it.
type env struct {
	t   *testing.T
	g   *WithT
	ctx context.Context
	clk *emulator.FakeClock
	emu *emulator.Server
	url string
	svc *sqladmin.Service
}

// newEnv starts an emulator on a fake clock, with the request budget off
// unless opts set one.
func newEnv(t *testing.T, opts ...emulator.Option) *env {
	t.Helper()
	clk := emulator.NewFakeClock(epoch)
	all := append([]emulator.Option{emulator.WithClock(clk), emulator.WithRequestBudget(0)}, opts...)
	emu := emulator.New(all...)
	hs := httptest.NewServer(emu)
	t.Cleanup(hs.Close)
	ctx := context.Background()
	svc, err := sqladmin.NewService(ctx, option.WithEndpoint(hs.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatalf("creating the client: %v", err)
	}
	return &env{t: t, g: NewWithT(t), ctx: ctx, clk: clk, emu: emu, url: hs.URL, svc: svc}
}

// instance is a valid insert request for a POSTGRES_15 instance; mutators
// adjust it.
func instance(name string, mutators ...func(*sqladmin.DatabaseInstance)) *sqladmin.DatabaseInstance {
	db := &sqladmin.DatabaseInstance{
		Name:            name,
		DatabaseVersion: "POSTGRES_15",
		Region:          region,
		RootPassword:    rootPassword,
		Settings: &sqladmin.Settings{
			Tier: "db-custom-1-3840",
		},
	}
	for _, m := range mutators {
		m(db)
	}
	return db
}

// insert creates an instance through the client and expects success.
func (e *env) insert(name string, mutators ...func(*sqladmin.DatabaseInstance)) *sqladmin.Operation {
	e.t.Helper()
	op, err := e.svc.Instances.Insert(project, instance(name, mutators...)).Context(e.ctx).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	return op
}

// get reads an instance through the client and expects success.
func (e *env) get(name string) *sqladmin.DatabaseInstance {
	e.t.Helper()
	db, err := e.svc.Instances.Get(project, name).Context(e.ctx).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	return db
}

// operation reads an operation through the client and expects success.
func (e *env) operation(name string) *sqladmin.Operation {
	e.t.Helper()
	op, err := e.svc.Operations.Get(project, name).Context(e.ctx).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	return op
}

// haveAPIError matches a *googleapi.Error with the given code and reason.
func expectAPIError(g *WithT, err error, code int, reason string) *googleapi.Error {
	var gerr *googleapi.Error
	g.ExpectWithOffset(1, errors.As(err, &gerr)).To(BeTrue(), "expected a *googleapi.Error, got %v", err)
	g.ExpectWithOffset(1, gerr.Code).To(Equal(code), "error: %v", err)
	g.ExpectWithOffset(1, gerr.Errors).NotTo(BeEmpty(), "error: %v", err)
	g.ExpectWithOffset(1, gerr.Errors[0].Reason).To(Equal(reason), "error: %v", err)
	return gerr
}

func withTier(tier string) func(*sqladmin.DatabaseInstance) {
	return func(db *sqladmin.DatabaseInstance) { db.Settings.Tier = tier }
}

func withVersion(v string) func(*sqladmin.DatabaseInstance) {
	return func(db *sqladmin.DatabaseInstance) { db.DatabaseVersion = v }
}

func withEdition(ed string) func(*sqladmin.DatabaseInstance) {
	return func(db *sqladmin.DatabaseInstance) { db.Settings.Edition = ed }
}

func ipTypes(db *sqladmin.DatabaseInstance) []string {
	var out []string
	for _, ip := range db.IpAddresses {
		out = append(out, ip.Type)
	}
	return out
}

// readBody reads a whole HTTP response body.
func readBody(g *WithT, resp *http.Response) string {
	b, err := io.ReadAll(resp.Body)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return string(b)
}
