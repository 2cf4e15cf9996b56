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

package budget_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	. "github.com/onsi/gomega"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

const project = "budget-project"

// setup serves an emulator and returns a real sqladmin client whose requests go
// through a budget Transport; waits records every backoff instead of sleeping.
func setup(t *testing.T, window *budget.Window, o ...emulator.Option) (*emulator.Server, *sqladmin.Service, *[]time.Duration) {
	t.Helper()
	emu := emulator.New(append([]emulator.Option{emulator.WithRequestBudget(0)}, o...)...)
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	waits := &[]time.Duration{}
	tr := budget.NewTransport(nil, window, budget.WithSleep(func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*waits = append(*waits, d)
		return nil
	}))
	svc, err := sqladmin.NewService(context.Background(),
		option.WithEndpoint(srv.URL+"/"), option.WithHTTPClient(&http.Client{Transport: tr}))
	NewWithT(t).Expect(err).ToNot(HaveOccurred())
	return emu, svc, waits
}

func insert(g Gomega, svc *sqladmin.Service, name string) {
	_, err := svc.Instances.Insert(project, &sqladmin.DatabaseInstance{
		Name: name, DatabaseVersion: "POSTGRES_15", Region: "europe-west1",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840", Edition: "ENTERPRISE"},
	}).Do()
	g.Expect(err).ToNot(HaveOccurred())
}

func TestTransientErrorsAreRetried(t *testing.T) {
	cases := map[string]emulator.Fault{
		"ServerErrors": {Method: emulator.MethodInstancesGet, ServerErrorShare: 1, Count: 3},
		"RateLimited":  {Method: emulator.MethodInstancesGet, RateLimitShare: 1, Count: 4},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			emu, svc, waits := setup(t, budget.PerMinute(1000))
			insert(g, svc, "db")
			g.Expect(emu.InjectFault(f)).To(Succeed())

			got, err := svc.Instances.Get(project, "db").Do()
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(got.Name).To(Equal("db"))
			g.Expect(emu.Counts()[emulator.MethodInstancesGet]).To(Equal(f.Count + 1))
			g.Expect(*waits).To(HaveLen(f.Count))
			// Backoffs grow (jittered within [d/2, d) of 1s, 2s, 4s, ...).
			for i, w := range *waits {
				g.Expect(w).To(BeNumerically(">=", (time.Second<<i)/2))
				g.Expect(w).To(BeNumerically("<", time.Second<<i))
			}
		})
	}
}

func TestPersistentErrorsSurface(t *testing.T) {
	g := NewWithT(t)
	emu, svc, waits := setup(t, budget.PerMinute(1000))
	insert(g, svc, "db")
	g.Expect(emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesGet, RateLimitShare: 1})).To(Succeed())

	_, err := svc.Instances.Get(project, "db").Do()
	var gerr *googleapi.Error
	g.Expect(errors.As(err, &gerr)).To(BeTrue(), "%v", err)
	g.Expect(gerr.Code).To(Equal(http.StatusTooManyRequests))
	// Five tries in all, four waits between them.
	g.Expect(emu.Counts()[emulator.MethodInstancesGet]).To(Equal(5))
	g.Expect(*waits).To(HaveLen(4))
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	g := NewWithT(t)
	emu, svc, waits := setup(t, budget.PerMinute(1000))
	_, err := svc.Instances.Get(project, "missing").Do()
	var gerr *googleapi.Error
	g.Expect(errors.As(err, &gerr)).To(BeTrue())
	g.Expect(gerr.Code).To(Equal(http.StatusNotFound))
	g.Expect(emu.Counts()[emulator.MethodInstancesGet]).To(Equal(1))
	g.Expect(*waits).To(BeEmpty())
}

// An insert refused with 429 (nothing carried out) is retried with its
// body, and creates exactly one instance.
func TestRetriedInsertReplaysItsBody(t *testing.T) {
	g := NewWithT(t)
	emu, svc, _ := setup(t, budget.PerMinute(1000))
	g.Expect(emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesInsert, RateLimitShare: 1, Count: 1})).To(Succeed())
	insert(g, svc, "replayed")
	g.Expect(emu.Counts()[emulator.MethodInstancesInsert]).To(Equal(2))
	list, err := svc.Instances.List(project).Do()
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(list.Items).To(HaveLen(1))
	g.Expect(list.Items[0].Settings.Tier).To(Equal("db-custom-1-3840"))
}

// An insert answered 5xx may have been carried out: it is not sent again,
// for a retry would find what it made (409) and could not tell it from what
// someone else made. A read or an update is: the same sent twice as once.
func TestInsertsThatMayHaveBeenCarriedOutAreNotRetried(t *testing.T) {
	g := NewWithT(t)
	emu, svc, waits := setup(t, budget.PerMinute(1000))
	insert(g, svc, "db")
	g.Expect(emu.InjectFault(emulator.Fault{Method: emulator.MethodUsersInsert, LoseAnswerShare: 1, Count: 1})).To(Succeed())
	_, err := svc.Users.Insert(project, "db", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	var gerr *googleapi.Error
	g.Expect(errors.As(err, &gerr)).To(BeTrue(), "%v", err)
	g.Expect(gerr.Code).To(Equal(http.StatusServiceUnavailable), "the caller learns that its answer was lost")
	g.Expect(emu.Counts()[emulator.MethodUsersInsert]).To(Equal(1))
	g.Expect(emu.PasswordIs(project, "db", "app", "pw")).To(BeTrue(), "Cloud SQL made the login")
	g.Expect(*waits).To(BeEmpty())

	g.Expect(emu.InjectFault(emulator.Fault{Method: emulator.MethodUsersUpdate, LoseAnswerShare: 1, Count: 1})).To(Succeed())
	_, err = svc.Users.Update(project, "db", &sqladmin.User{Password: "new"}).Name("app").Do()
	g.Expect(err).NotTo(HaveOccurred(), "an update is sent again")
	g.Expect(emu.Counts()[emulator.MethodUsersUpdate]).To(Equal(2))
}

// Every attempt, retries included, spends the shared budget: with a budget of 3 per
// minute, the fourth request waits for the window to move on.
func TestRetriesSpendTheBudget(t *testing.T) {
	g := NewWithT(t)
	now := time.Unix(0, 0)
	var mu sync.Mutex
	var windowWaits []time.Duration
	w := budget.NewWindow(3, time.Minute, budget.WithClock(
		func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		func(_ context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			windowWaits = append(windowWaits, d)
			now = now.Add(d)
			return nil
		}))
	emu, svc, _ := setup(t, w)
	insert(g, svc, "db") // 1
	g.Expect(emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesGet, ServerErrorShare: 1, Count: 2})).To(Succeed())
	_, err := svc.Instances.Get(project, "db").Do() // 2, 3, then 4 must wait a minute
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(windowWaits).To(Equal([]time.Duration{time.Minute}))
}

// Admission lookups say so in X-Goog-Request-Reason, which Cloud Audit Logs
// show; the controllers' calls give no reason.
func TestAdmissionLookupsGiveTheirReason(t *testing.T) {
	g := NewWithT(t)
	emu, svc, _ := setup(t, budget.PerMinute(100))
	insert(g, svc, "db")
	_, err := svc.Instances.Get(project, "db").Context(budget.ForAdmissionBy(context.Background(), "team-a")).Do()
	g.Expect(err).ToNot(HaveOccurred())
	_, err = svc.Instances.Get(project, "db").Do()
	g.Expect(err).ToNot(HaveOccurred())
	var reasons []string
	for _, r := range emu.Requests() {
		reasons = append(reasons, r.Method+": "+r.Reason)
	}
	g.Expect(reasons).To(Equal([]string{
		"instances.insert: ",
		"instances.get: " + budget.AdmissionReason,
		"instances.get: ",
	}))
}

// The pacing reads the budget's limit from the transport it is given, so that
// the budget is configured once: a transport says its window's limit per
// minute, and anything else says it sends within none.
func TestPerMinuteOf(t *testing.T) {
	cases := map[string]struct {
		rt   http.RoundTripper
		want int
	}{
		"PerMinute":     {rt: budget.NewTransport(nil, budget.PerMinute(180)), want: 180},
		"ShorterPeriod": {rt: budget.NewTransport(nil, budget.NewWindow(30, 30*time.Second)), want: 60},
		"TenantWindow":  {rt: budget.NewWindows(func() *budget.Window { return budget.PerMinute(90) }).Transport("team-a"), want: 90},
		"NoBudget":      {rt: http.DefaultTransport, want: 0},
		"AtLeastOne":    {rt: budget.NewTransport(nil, budget.PerMinute(0)), want: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(budget.PerMinuteOf(tc.rt)).To(Equal(tc.want))
		})
	}
}

// giveUpWhileAnswering serves emu so that every request's caller gives up
// (cancel) after Cloud SQL received it and before it answers, and the answer
// comes delay later.
func giveUpWhileAnswering(t *testing.T, emu *emulator.Server, cancel func(), delay time.Duration, o ...budget.TransportOption) *sqladmin.Service {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel()
		time.Sleep(delay)
		emu.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(context.Background(),
		option.WithEndpoint(srv.URL+"/"), option.WithHTTPClient(&http.Client{Transport: budget.NewTransport(nil, budget.PerMinute(1000), o...)}))
	NewWithT(t).Expect(err).ToNot(HaveOccurred())
	return svc
}

// withInstance is an emulator holding instance "db".
func withInstance(g Gomega) *emulator.Server {
	emu := emulator.New(emulator.WithRequestBudget(0), emulator.WithDelays(0, 0, 0))
	g.Expect(emu.Seed(project, &sqladmin.DatabaseInstance{
		Name: "db", DatabaseVersion: "POSTGRES_15", Region: "europe-west1", Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	})).To(Succeed())
	return emu
}

// A write that went out is awaited for its answer after its caller gave up:
// Cloud SQL carries it out, and a caller cut off in between would not know
// (a login made with a password not recorded as set). A read is not: it
// changes nothing.
func TestAWriteSentIsAwaitedPastItsCallersDeadline(t *testing.T) {
	g := NewWithT(t)
	emu := withInstance(g)

	ctx, cancel := context.WithCancel(context.Background())
	svc := giveUpWhileAnswering(t, emu, cancel, 200*time.Millisecond)
	op, err := svc.Users.Insert(project, "db", &sqladmin.User{Name: "app", Password: "pw"}).Context(ctx).Do()
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(op.OperationType).To(Equal(emulator.OpCreateUser))
	g.Expect(ctx.Err()).To(MatchError(context.Canceled), "the caller gave up while the insert was answered")

	ctx, cancel = context.WithCancel(context.Background())
	svc = giveUpWhileAnswering(t, emu, cancel, 200*time.Millisecond)
	_, err = svc.Instances.Get(project, "db").Context(ctx).Do()
	g.Expect(err).To(MatchError(context.Canceled))

	// A caller that gave up before the write went out does not send it.
	_, err = svc.Users.Insert(project, "db", &sqladmin.User{Name: "late", Password: "pw"}).Context(ctx).Do()
	g.Expect(err).To(MatchError(context.Canceled))
	g.Expect(emu.PasswordIs(project, "db", "late", "pw")).To(BeFalse())
}

// The answer wait is bounded: an answer later than it is not awaited.
func TestAWriteIsAwaitedForTheAnswerWaitOnly(t *testing.T) {
	g := NewWithT(t)
	emu := withInstance(g)

	ctx, cancel := context.WithCancel(context.Background())
	svc := giveUpWhileAnswering(t, emu, cancel, time.Second, budget.WithAnswerWait(50*time.Millisecond), budget.WithRetries(1, time.Second, time.Second))
	_, err := svc.Users.Insert(project, "db", &sqladmin.User{Name: "app", Password: "pw"}).Context(ctx).Do()
	g.Expect(err).To(MatchError(context.Canceled))
}

// A certificate request is a POST that makes nothing to find again: a 5xx
// of it is retried, so that a connection waits no poll interval for it.
func TestCertificateRequestsAreRetried(t *testing.T) {
	g := NewWithT(t)
	emu, svc, waits := setup(t, budget.PerMinute(1000))
	insert(g, svc, "db")
	g.Expect(emu.InjectFault(emulator.Fault{Method: emulator.MethodConnectGenerateEphemeral, ServerErrorShare: 1, Count: 1})).To(Succeed())
	_, err := svc.Connect.GenerateEphemeralCert(project, "db", &sqladmin.GenerateEphemeralCertRequest{PublicKey: publicKey(g)}).Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(emu.Counts()[emulator.MethodConnectGenerateEphemeral]).To(Equal(2))
	g.Expect(*waits).To(HaveLen(1))
}

// publicKey is a new ECDSA public key in PEM, for a certificate request.
func publicKey(g Gomega) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	g.Expect(err).NotTo(HaveOccurred())
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	g.Expect(err).NotTo(HaveOccurred())
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}
