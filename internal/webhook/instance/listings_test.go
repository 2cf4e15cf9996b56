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

package instance_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/instance"
)

// authNone are the credentials of the tests' ProviderConfig.
var authNone = auth.Credentials{Source: xpv2.CredentialsSourceNone}

// listingWorld is a Validator that checks names in listings of the project
// no older than maxAge, behind a request budget of window, against an
// emulator holding taken.
type listingWorld struct {
	emu      *emulator.Server
	v        *instance.Validator
	services *providerconfig.ServiceCache
	pc       *v1alpha1.ProviderConfig
	listings *observer.Observer
}

func newListingWorld(t *testing.T, window *budget.Window, timeout, maxAge time.Duration, taken ...string) *listingWorld {
	t.Helper()
	emu := emulator.New(emulator.WithRequestBudget(0))
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	for _, n := range taken {
		seed(t, emu, project, n)
	}
	s := scheme(t)
	pc := providerConfig("default")(t, srv.URL).(*v1alpha1.ProviderConfig)
	kube := fake.NewClientBuilder().WithScheme(s).WithObjects(pc, clusterProviderConfig("default")(t, srv.URL)).Build()
	w := &listingWorld{emu: emu, pc: pc, listings: observer.New(),
		services: providerconfig.NewServiceCache(budget.NewTransport(nil, window, budget.WithRetries(1, time.Millisecond, time.Millisecond)))}
	w.v = instance.New(kube, kube, s, w.services, instance.WithTimeout(timeout),
		instance.WithListings(w.listings, maxAge), instance.WithNamespacedEndpoints([]string{"*"}),
		instance.WithLogger(logging.NewLogrLogger(testr.New(t))))
	return w
}

// create asks the Validator to admit a new cluster-scoped instance name.
func (w *listingWorld) create(t *testing.T, name string) admission.Response {
	t.Helper()
	return w.handle(t, clusterInstance(name), false)
}

// handle asks the Validator to admit pi, of either kind, as a dry run or not.
func (w *listingWorld) handle(t *testing.T, pi client.Object, dryRun bool) admission.Response {
	t.Helper()
	kind := clusterKind
	if pi.GetNamespace() != "" {
		kind = nsKind
	}
	req := admissionv1.AdmissionRequest{UID: "a-request", Operation: admissionv1.Create, Kind: kind, Name: pi.GetName(),
		Namespace: pi.GetNamespace(), DryRun: ptr.To(dryRun), Object: runtime.RawExtension{Raw: rawOf(t, pi)}}
	return w.v.Handle(context.Background(), admission.Request{AdmissionRequest: req})
}

// checked says whether a response checked the name: allowed without a
// warning, or denied because it is taken.
func checked(r admission.Response) string {
	switch {
	case r.Allowed && len(r.Warnings) == 0:
		return "free"
	case r.Allowed:
		return fmt.Sprintf("unchecked: %v", r.Warnings)
	}
	return "denied: " + r.Result.Message
}

// readsSpent is a budget of 60 requests a minute whose 48 reads the
// controllers have spent: 6 are left for admission, 6 for writes.
func readsSpent(t *testing.T) *budget.Window {
	t.Helper()
	w := budget.NewWindow(60, time.Minute, budget.WithWriteReserve(budget.DefaultWriteReserve), budget.WithAdmissionReserve(budget.DefaultAdmissionReserve))
	for range 48 {
		if err := w.WaitRead(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// A burst of creates, one after another and at once, is checked in one
// listing of the project: a taken name is denied from it, and no name costs
// an instances.get.
func TestABurstOfCreatesSharesOneListing(t *testing.T) {
	g := NewWithT(t)
	w := newListingWorld(t, budget.PerMinute(180), 5*time.Second, 15*time.Second, "taken")
	for i := range 20 {
		g.Expect(checked(w.create(t, fmt.Sprintf("db-%02d", i)))).To(Equal("free"))
	}
	var wg sync.WaitGroup
	results := make([]string, 20)
	for i := range results {
		wg.Go(func() { results[i] = checked(w.create(t, fmt.Sprintf("burst-%02d", i))) })
	}
	wg.Wait()
	for _, r := range results {
		g.Expect(r).To(Equal("free"))
	}
	g.Expect(checked(w.create(t, "taken"))).To(And(HavePrefix("denied: "), ContainSubstring("a Cloud SQL instance named taken already exists in project "+project)))
	counts := w.emu.Counts()
	g.Expect(counts[emulator.MethodInstancesList]).To(Equal(1))
	g.Expect(counts[emulator.MethodInstancesGet]).To(BeZero())
}

// Names are checked in a listing no older than the maximum age: an older one
// is listed again.
func TestAnOldListingIsListedAgain(t *testing.T) {
	g := NewWithT(t)
	w := newListingWorld(t, budget.PerMinute(180), 5*time.Second, 10*time.Millisecond)
	g.Expect(checked(w.create(t, "orders"))).To(Equal("free"))
	time.Sleep(20 * time.Millisecond)
	g.Expect(checked(w.create(t, "billing"))).To(Equal("free"))
	g.Expect(w.emu.Counts()[emulator.MethodInstancesList]).To(Equal(2))
}

// When the controllers have spent every read of the budget, a name is still
// checked: the listing that admission starts draws on the admission reserve.
func TestReadsSpentLeaveNamesChecked(t *testing.T) {
	g := NewWithT(t)
	w := newListingWorld(t, readsSpent(t), 5*time.Second, 15*time.Second, "taken")
	for i := range 10 {
		g.Expect(checked(w.create(t, fmt.Sprintf("db-%02d", i)))).To(Equal("free"))
	}
	g.Expect(checked(w.create(t, "taken"))).To(HavePrefix("denied: "))
	g.Expect(w.emu.Counts()[emulator.MethodInstancesList]).To(Equal(1))
}

// A listing of a one-page project that the controllers started when they
// had spent every read of the budget takes the admission reserve, since it
// answers the name checks too: admission takes its answer rather than
// asking instances.get.
func TestAControllersListingServesAdmissionWhenReadsAreSpent(t *testing.T) {
	g := NewWithT(t)
	w := newListingWorld(t, readsSpent(t), 2*time.Second, 15*time.Second, "taken")
	svc, err := w.services.Get(w.pc, authNone)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = w.listings.Instance(context.Background(), svc, w.pc.Name, project, "x", time.Time{}, time.Hour)
	g.Expect(err).NotTo(HaveOccurred(), "a controller's observation")

	g.Expect(checked(w.create(t, "orders"))).To(Equal("free"))
	g.Expect(checked(w.create(t, "taken"))).To(HavePrefix("denied: "))
	counts := w.emu.Counts()
	g.Expect(counts[emulator.MethodInstancesGet]).To(BeZero())
	g.Expect(counts[emulator.MethodInstancesList]).To(Equal(1))
}

// twoPageWorld is a world whose project takes two pages to list, with a
// budget of 60 a minute that keeps 6 for admission lookups: a first listing's
// 2 pages, and a lookup for a few names.
func twoPageWorld(t *testing.T) (*listingWorld, *budget.Window) {
	t.Helper()
	window := budget.NewWindow(60, time.Minute, budget.WithWriteReserve(budget.DefaultWriteReserve), budget.WithAdmissionReserve(0.1))
	w := newListingWorld(t, window, 2*time.Second, 10*time.Millisecond, "taken")
	if err := w.emu.SeedMany(project, &sqladmin.DatabaseInstance{Name: "seeded", DatabaseVersion: "POSTGRES_15", Region: "europe-west1",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"}}, observer.PageSize); err != nil {
		t.Fatal(err)
	}
	return w, window
}

// A listing of a many-page project that the controllers started and that
// waits for the budget's reads does not hold admission past half its
// timeout: the name is then checked with instances.get, from the admission
// reserve.
func TestAListingWaitingForReadsFallsBackToAGet(t *testing.T) {
	g := NewWithT(t)
	w, window := twoPageWorld(t)
	svc, err := w.services.Get(w.pc, authNone)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = w.listings.Instance(context.Background(), svc, w.pc.Name, project, "x", time.Time{}, time.Hour)
	g.Expect(err).NotTo(HaveOccurred(), "a first listing: two pages, two reads")
	for range 48 - 2 {
		g.Expect(window.WaitRead(context.Background())).To(Succeed())
	}
	time.Sleep(20 * time.Millisecond) // the listing is too old now
	w.emu.ResetCounts()
	// A controller's observation: its listing waits a minute for a read.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _, _ = w.listings.Instance(ctx, svc, w.pc.Name, project, "x", time.Now(), time.Hour) }()
	time.Sleep(100 * time.Millisecond)

	g.Expect(checked(w.create(t, "orders"))).To(Equal("free"))
	g.Expect(checked(w.create(t, "taken"))).To(HavePrefix("denied: "))
	counts := w.emu.Counts()
	g.Expect(counts[emulator.MethodInstancesGet]).To(Equal(2))
	g.Expect(counts[emulator.MethodInstancesList]).To(BeZero())
}

// A project of more than one page is listed for admission as the controllers
// list, not from the admission reserve, which its pages would spend: with the
// reads spent, names are checked with instances.get until a listing comes.
func TestAManyPageListingLeavesTheReserveToLookups(t *testing.T) {
	g := NewWithT(t)
	w, window := twoPageWorld(t)
	g.Expect(checked(w.create(t, "orders"))).To(Equal("free"), "listed: two pages")
	g.Expect(w.listings.Pages(w.pc.Name, project)).To(Equal(2))
	// Its pages came from the admission reserve: the reads' share is whole.
	for range 48 {
		g.Expect(window.WaitRead(context.Background())).To(Succeed())
	}
	time.Sleep(20 * time.Millisecond) // the listing is too old now
	w.emu.ResetCounts()

	for _, n := range []string{"billing", "payments"} {
		g.Expect(checked(w.create(t, n))).To(Equal("free"))
	}
	g.Expect(checked(w.create(t, "taken"))).To(HavePrefix("denied: "))
	g.Expect(w.emu.Counts()[emulator.MethodInstancesGet]).To(Equal(3))
	g.Expect(w.emu.Counts()[emulator.MethodInstancesList]).To(BeZero())
}

// A dry run of either kind checks its name in a listing of the project at
// hand, fresh enough for a real create, and sends no request to Cloud SQL:
// a taken name is denied as a create's is, a free one admitted with a
// warning that says how old the listing is. Without such a listing the name
// is not checked, and the warning says so and why.
func TestADryRunChecksNamesInAListingAtHand(t *testing.T) {
	g := NewWithT(t)
	w := newListingWorld(t, budget.PerMinute(180), 5*time.Second, 15*time.Second, "taken")

	for _, pi := range []client.Object{clusterInstance("taken"), nsInstance("taken")} {
		r := w.handle(t, pi, true)
		g.Expect(r.Allowed).To(BeTrue(), "no listing at hand: not checked")
		g.Expect(r.Warnings).To(ConsistOf(And(
			ContainSubstring("whether a Cloud SQL instance named taken exists in project "+project+" was not checked on this dry run: no listing of the project from the last 15s is at hand"),
			ContainSubstring("choose another spec.forProvider.name"))))
	}
	g.Expect(w.emu.Counts()).To(BeEmpty(), "a dry run starts no listing and asks instances.get nothing")

	// Real creates of either kind list the project, as they or the
	// controllers do.
	g.Expect(checked(w.create(t, "orders"))).To(Equal("free"))
	g.Expect(checked(w.handle(t, nsInstance("billing"), false))).To(Equal("free"))
	w.emu.ResetCounts()

	for _, pi := range []client.Object{clusterInstance("taken"), nsInstance("taken")} {
		r := w.handle(t, pi, true)
		g.Expect(r.Allowed).To(BeFalse())
		g.Expect(r.Result.Message).To(And(
			ContainSubstring("a Cloud SQL instance named taken already exists in project "+project),
			ContainSubstring("choose another spec.forProvider.name")), "the denial of a real create")
	}
	for _, pi := range []client.Object{clusterInstance("payments"), nsInstance("payments")} {
		r := w.handle(t, pi, true)
		g.Expect(r.Allowed).To(BeTrue())
		g.Expect(r.Warnings).To(ConsistOf(And(
			ContainSubstring("no Cloud SQL instance named payments was in a listing of project "+project+" made less than a second ago"),
			ContainSubstring("the real create checks the name again"))))
	}
	g.Expect(w.emu.Counts()).To(BeEmpty(), "the listing at hand answered, at no request")
}

// A listing older than the maximum age does not answer a dry run, which
// does not list again either.
func TestADryRunDoesNotListAnOldListingAgain(t *testing.T) {
	g := NewWithT(t)
	w := newListingWorld(t, budget.PerMinute(180), 5*time.Second, 10*time.Millisecond, "taken")
	g.Expect(checked(w.create(t, "orders"))).To(Equal("free"))
	time.Sleep(20 * time.Millisecond)
	w.emu.ResetCounts()
	r := w.handle(t, clusterInstance("taken"), true)
	g.Expect(r.Allowed).To(BeTrue())
	g.Expect(r.Warnings).To(ConsistOf(ContainSubstring("was not checked on this dry run: no listing of the project from the last 10ms is at hand")))
	g.Expect(w.emu.Counts()).To(BeEmpty())
}
