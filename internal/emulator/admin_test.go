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
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	. "github.com/onsi/gomega"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// call sends an admin request and decodes a JSON answer into out (when not
// nil); it returns the status.
func (e *env) call(method, path, body string, out any) int {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	e.g.Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	e.g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == http.StatusOK {
		e.g.Expect(json.NewDecoder(resp.Body).Decode(out)).To(Succeed())
	}
	return resp.StatusCode
}

func TestAdminHTTP(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(time.Hour, 0, 0))

	var health map[string]string
	e.g.Expect(e.call("GET", "/emulator/v1/healthz", "", &health)).To(Equal(200))
	e.g.Expect(health).To(HaveKeyWithValue("status", "ok"))

	// Seeding.
	seed := `{"name":"legacy","databaseVersion":"POSTGRES_13","region":"us-east1","rootPassword":"old-root",
		"settings":{"tier":"db-custom-2-7680","settingsVersion":"9","userLabels":{"owner":"ops"}}}`
	var seeded sqladmin.DatabaseInstance
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances", seed, &seeded)).To(Equal(200))
	e.g.Expect(seeded.State).To(Equal("RUNNABLE"))
	e.g.Expect(seeded.Settings.SettingsVersion).To(Equal(int64(9)))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances", seed, nil)).To(Equal(409))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances", `{"name":"x"}`, nil)).To(Equal(400))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances", `{`, nil)).To(Equal(400))

	// Admin calls are not API calls.
	var counts map[string]int
	e.g.Expect(e.call("GET", "/emulator/v1/counts", "", &counts)).To(Equal(200))
	e.g.Expect(counts).To(BeEmpty())

	// Password check.
	var match map[string]bool
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/legacy/users/postgres:checkPassword", `{"password":"old-root"}`, &match)).To(Equal(200))
	e.g.Expect(match).To(HaveKeyWithValue("match", true))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/legacy/users/postgres:checkPassword", `{"password":"nope"}`, &match)).To(Equal(200))
	e.g.Expect(match).To(HaveKeyWithValue("match", false))

	// Out-of-band owner of a database.
	var owner map[string]string
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/legacy/databases/postgres:setOwner", `{"owner":"postgres"}`, &owner)).To(Equal(200))
	e.g.Expect(owner).To(Equal(map[string]string{"database": "postgres", "owner": "postgres"}))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/legacy/databases/ghost:setOwner", `{"owner":"postgres"}`, nil)).To(Equal(404))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/legacy/databases/postgres:setOwner", `{"owner":"ghost"}`, nil)).To(Equal(400))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/legacy/databases/postgres:setOwner", `{`, nil)).To(Equal(400))

	// Out-of-band change, seen through the API with a new settings version.
	var changed sqladmin.DatabaseInstance
	e.g.Expect(e.call("PATCH", "/emulator/v1/projects/test-project/instances/legacy",
		`{"settings":{"tier":"db-custom-4-15360","userLabels":{"owner":null,"drift":"yes"}}}`, &changed)).To(Equal(200))
	db := e.get("legacy")
	e.g.Expect(db.Settings.Tier).To(Equal("db-custom-4-15360"))
	e.g.Expect(db.Settings.UserLabels).To(Equal(map[string]string{"drift": "yes"}))
	e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(10)))
	e.g.Expect(e.call("PATCH", "/emulator/v1/projects/test-project/instances/legacy", `{"settings":"x"}`, nil)).To(Equal(400))
	e.g.Expect(e.call("PATCH", "/emulator/v1/projects/test-project/instances/ghost", `{}`, nil)).To(Equal(404))

	var got sqladmin.DatabaseInstance
	e.g.Expect(e.call("GET", "/emulator/v1/projects/test-project/instances/legacy", "", &got)).To(Equal(200))
	e.g.Expect(got.Settings.Tier).To(Equal("db-custom-4-15360"))
	e.g.Expect(e.call("GET", "/emulator/v1/projects/test-project/instances/ghost", "", nil)).To(Equal(404))

	// State.
	var inMaintenance sqladmin.DatabaseInstance
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/legacy:setState", `{"state":"MAINTENANCE"}`, &inMaintenance)).To(Equal(200))
	e.g.Expect(inMaintenance.State).To(Equal("MAINTENANCE"))
	e.g.Expect(e.get("legacy").State).To(Equal("MAINTENANCE"))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/legacy:setState", `{"state":"PENDING_DELETE"}`, nil)).To(Equal(400))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/ghost:setState", `{"state":"RUNNABLE"}`, nil)).To(Equal(404))

	// Operations, the clock and finishing.
	op := e.insert("orders")
	e.g.Expect(op.Status).To(Equal("PENDING"))
	var clock map[string]string
	e.g.Expect(e.call("POST", "/emulator/v1/clock:advance", `{"duration":"6m"}`, &clock)).To(Equal(200))
	e.g.Expect(clock).To(HaveKeyWithValue("now", "2026-03-01T10:06:00.000Z"))
	e.g.Expect(e.operation(op.Name).Status).To(Equal("RUNNING"))
	e.g.Expect(e.call("GET", "/emulator/v1/clock", "", &clock)).To(Equal(200))
	e.g.Expect(clock).To(HaveKeyWithValue("now", "2026-03-01T10:06:00.000Z"))
	e.g.Expect(e.call("POST", "/emulator/v1/clock:advance", `{"duration":"soon"}`, nil)).To(Equal(400))
	e.g.Expect(e.call("POST", "/emulator/v1/operations:finish", "", nil)).To(Equal(204))
	e.g.Expect(e.get("orders").State).To(Equal("RUNNABLE"))
	var ops sqladmin.OperationsListResponse
	e.g.Expect(e.call("GET", "/emulator/v1/operations?project=test-project", "", &ops)).To(Equal(200))
	e.g.Expect(ops.Items).To(HaveExactElements(And(HaveField("Name", op.Name), HaveField("Status", "DONE"))))
	ops = sqladmin.OperationsListResponse{}
	e.g.Expect(e.call("GET", "/emulator/v1/operations?project=other-project", "", &ops)).To(Equal(200))
	e.g.Expect(ops.Items).To(BeEmpty())

	// Counts and the request log.
	e.g.Expect(e.call("GET", "/emulator/v1/counts", "", &counts)).To(Equal(200))
	e.g.Expect(counts).To(Equal(map[string]int{"instances.get": 3, "instances.insert": 1, "operations.get": 1}))
	var requests []emulator.Request
	e.g.Expect(e.call("GET", "/emulator/v1/requests", "", &requests)).To(Equal(200))
	e.g.Expect(requests).To(HaveLen(5))
	e.g.Expect(requests[0]).To(And(HaveField("Method", "instances.get"), HaveField("Instance", "legacy"),
		HaveField("Project", project), HaveField("Status", 200), HaveField("HTTPMethod", "GET")))
	e.g.Expect(e.call("DELETE", "/emulator/v1/counts", "", nil)).To(Equal(204))
	counts = nil
	e.g.Expect(e.call("GET", "/emulator/v1/counts", "", &counts)).To(Equal(200))
	e.g.Expect(counts).To(BeEmpty())
	e.g.Expect(e.emu.Requests()).To(BeEmpty())

	// Faults.
	var faults []emulator.Fault
	e.g.Expect(e.call("POST", "/emulator/v1/faults", `{"method":"instances.list","serverErrorShare":1,"latency":"1ms","count":1}`, &faults)).To(Equal(200))
	e.g.Expect(faults).To(HaveExactElements(emulator.Fault{Method: "instances.list", ServerErrorShare: 1, Latency: time.Millisecond, Count: 1}))
	e.g.Expect(e.call("GET", "/emulator/v1/faults", "", &faults)).To(Equal(200))
	e.g.Expect(faults).To(HaveLen(1))
	_, err := e.svc.Instances.List(project).Do()
	e.g.Expect(err).To(HaveOccurred())
	e.g.Expect(e.call("POST", "/emulator/v1/faults", `{"rateLimitShare":1}`, nil)).To(Equal(200))
	e.g.Expect(e.call("DELETE", "/emulator/v1/faults", "", nil)).To(Equal(204))
	_, err = e.svc.Instances.List(project).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.call("POST", "/emulator/v1/faults", `{"serverErrorShare":3}`, nil)).To(Equal(400))
	e.g.Expect(e.call("POST", "/emulator/v1/faults", `{"latency":"slow"}`, nil)).To(Equal(400))

	// Unknown admin paths.
	e.g.Expect(e.call("GET", "/emulator/v1/nothing", "", nil)).To(Equal(404))
	e.g.Expect(e.call("PUT", "/emulator/v1/counts", "", nil)).To(Equal(404))
	e.g.Expect(e.call("GET", "/emulator/v1/projects/test-project/things", "", nil)).To(Equal(404))
}

// The request log names the top-level fields each write's body carried, so
// that a test can tell a patch of the version alone from one of more, whether
// or not the API accepted it; reads have no body and name none.
func TestRequestLogNamesTheBodyFields(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.emu.FinishOperations()
	_, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{
		Settings: &sqladmin.Settings{UserLabels: map[string]string{"team": "a"}},
	}).Context(e.ctx).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.emu.FinishOperations()
	_, _ = e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{DatabaseVersion: "POSTGRES_16"}).Context(e.ctx).Do()
	e.get("orders")

	fields := map[string][][]string{}
	for _, r := range e.emu.Requests() {
		fields[r.Method] = append(fields[r.Method], r.BodyFields)
	}
	e.g.Expect(fields["instances.insert"]).To(HaveExactElements(ContainElements("name", "databaseVersion", "region", "rootPassword", "settings")))
	e.g.Expect(fields["instances.patch"]).To(HaveExactElements(Equal([]string{"settings"}), Equal([]string{"databaseVersion"})))
	e.g.Expect(fields["instances.get"]).To(HaveExactElements(BeNil()))
}

// A reader that sees a request's effect in the state finds the request in
// the log: Requests waits for a handler that has started.
func TestRequestsIncludeEveryRequestWhoseEffectIsVisible(t *testing.T) {
	inserted, release := make(chan struct{}), make(chan struct{})
	e := newEnv(t, emulator.WithAfterInsert(func(string, string) {
		close(inserted)
		<-release
	}))
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before the server closes, which waits for the handler
	go func() { _, _ = e.svc.Instances.Insert(project, instance("orders")).Do() }()
	<-inserted
	// The instance is stored; its request is still being answered.
	inst, err := e.emu.Instance(project, "orders")
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(inst.Name).To(Equal("orders"))

	got := make(chan []emulator.Request, 1)
	go func() { got <- e.emu.Requests() }()
	e.g.Consistently(got, 300*time.Millisecond).ShouldNot(Receive(), "Requests answered before the insert was in the log")
	letGo()
	var log []emulator.Request
	e.g.Eventually(got, 5*time.Second).Should(Receive(&log))
	e.g.Expect(log).To(ContainElement(HaveField("Method", emulator.MethodInstancesInsert)))
}

func TestAfterInsertHookSimulatesACrashAfterInsert(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var seen []string
	e := newEnv(t, emulator.WithAfterInsert(func(p, name string) {
		mu.Lock()
		seen = append(seen, p+"/"+name)
		mu.Unlock()
		cancel()
	}))
	// The answer comes after the hook cancelled the context; Go's transport
	// may still hand it over, so this client drops it, as one that crashed
	// would never see it.
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(e.url+"/"), option.WithoutAuthentication(),
		option.WithHTTPClient(&http.Client{Transport: answerLostOnCancel{http.DefaultTransport}}))
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = svc.Instances.Insert(project, instance("orders")).Context(ctx).Do()
	e.g.Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "got %v", err)
	// The insert took effect all the same.
	e.g.Expect(e.get("orders").State).To(Equal(emulator.StateRunnable))
	mu.Lock()
	defer mu.Unlock()
	e.g.Expect(seen).To(Equal([]string{"test-project/orders"}))

	// A refused insert doesn't call the hook.
	_, err = e.svc.Instances.Insert(project, instance("orders")).Do()
	expectAPIError(e.g, err, http.StatusConflict, "instanceAlreadyExists")
	e.g.Expect(seen).To(HaveLen(1))
}

// answerLostOnCancel drops an answer that arrives after its request's context
// was cancelled.
type answerLostOnCancel struct{ http.RoundTripper }

func (a answerLostOnCancel) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.RoundTripper.RoundTrip(r)
	if err == nil && r.Context().Err() != nil {
		_ = resp.Body.Close()
		return nil, r.Context().Err()
	}
	return resp, err
}

func TestSeedAndMutateInstance(t *testing.T) {
	e := newEnv(t)
	e.g.Expect(e.emu.Seed(project, &sqladmin.DatabaseInstance{
		Name: "imported", DatabaseVersion: "POSTGRES_12", RootPassword: "pw",
		Settings: &sqladmin.Settings{
			Tier: "db-g1-small", SettingsVersion: 42,
			IpConfiguration: &sqladmin.IpConfiguration{
				PrivateNetwork:  "projects/test-project/global/networks/vpc",
				ForceSendFields: []string{"Ipv4Enabled"},
			},
		},
	})).To(Succeed())
	db := e.get("imported")
	e.g.Expect(db.State).To(Equal(emulator.StateRunnable))
	e.g.Expect(db.Region).To(Equal("us-central1"))
	e.g.Expect(db.ConnectionName).To(Equal("test-project:us-central1:imported"))
	e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(42)))
	e.g.Expect(ipTypes(db)).To(Equal([]string{"PRIVATE"}))
	e.g.Expect(db.ServerCaCert.Cert).To(HavePrefix("-----BEGIN CERTIFICATE-----"))
	e.g.Expect(e.emu.PasswordIs(project, "imported", "postgres", "pw")).To(BeTrue())

	e.g.Expect(e.emu.Seed(project, &sqladmin.DatabaseInstance{Name: "imported", DatabaseVersion: "POSTGRES_12",
		Settings: &sqladmin.Settings{Tier: "db-g1-small"}})).To(MatchError(emulator.ErrInstanceExists))
	e.g.Expect(e.emu.Seed(project, &sqladmin.DatabaseInstance{Name: "no-tier", DatabaseVersion: "POSTGRES_12"})).NotTo(Succeed())
	e.g.Expect(e.emu.Seed(project, nil)).NotTo(Succeed())
	e.g.Expect(e.emu.Seed(project, &sqladmin.DatabaseInstance{Name: "down", DatabaseVersion: "POSTGRES_12", State: "SUSPENDED",
		Settings: &sqladmin.Settings{Tier: "db-g1-small"}})).To(Succeed())
	e.g.Expect(e.get("down").State).To(Equal(emulator.StateSuspended))

	e.g.Expect(e.emu.MutateInstance(project, "imported", func(db *sqladmin.DatabaseInstance) {
		db.Name = "renamed-is-ignored"
		db.Settings.Tier = "db-custom-1-3840"
		db.Settings.DatabaseFlags = []*sqladmin.DatabaseFlags{{Name: "work_mem", Value: "4096"}}
		db.Settings.IpConfiguration.Ipv4Enabled = true
	})).To(Succeed())
	db = e.get("imported")
	e.g.Expect(db.Settings.Tier).To(Equal("db-custom-1-3840"))
	e.g.Expect(db.Settings.DatabaseFlags).To(HaveLen(1))
	e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(43)))
	e.g.Expect(ipTypes(db)).To(Equal([]string{"PRIMARY", "OUTGOING", "PRIVATE"}))
	e.g.Expect(e.emu.MutateInstance(project, "ghost", func(*sqladmin.DatabaseInstance) {})).To(MatchError(emulator.ErrInstanceNotFound))

	// An out-of-band change makes a client's stale update fail.
	_, err := e.svc.Instances.Update(project, "imported", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		Tier: "db-g1-small", SettingsVersion: 42,
		IpConfiguration: &sqladmin.IpConfiguration{PrivateNetwork: "projects/test-project/global/networks/vpc"},
	}}).Do()
	expectAPIError(e.g, err, http.StatusPreconditionFailed, "staleData")
}

func TestConcurrentClients(t *testing.T) {
	e := newEnv(t)
	const workers, each = 8, 20
	for w := range workers {
		e.insert("db-" + string(rune('a'+w)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*3)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "db-" + string(rune('a'+w))
			for i := range each {
				if _, err := e.svc.Instances.Get(project, name).Do(); err != nil {
					errs <- err
				}
				size := int64(10 + i + 1)
				if _, err := e.svc.Instances.Patch(project, name, &sqladmin.DatabaseInstance{
					Settings: &sqladmin.Settings{DataDiskSizeGb: size},
				}).Do(); err != nil {
					errs <- err
				}
				if _, err := e.svc.Instances.List(project).Do(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	counts := e.emu.Counts()
	e.g.Expect(counts[emulator.MethodInstancesGet]).To(Equal(workers * each))
	e.g.Expect(counts[emulator.MethodInstancesPatch]).To(Equal(workers * each))
	e.g.Expect(counts[emulator.MethodInstancesList]).To(Equal(workers * each))
	for w := range workers {
		db := e.get("db-" + string(rune('a'+w)))
		e.g.Expect(db.Settings.DataDiskSizeGb).To(Equal(int64(10 + each)))
		e.g.Expect(db.Settings.SettingsVersion).To(Equal(int64(1 + each)))
	}
}

func TestSeedManySeedsAFleet(t *testing.T) {
	e := newEnv(t)
	tmpl := &sqladmin.DatabaseInstance{Name: "fleet", DatabaseVersion: "POSTGRES_15", Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"}}
	e.g.Expect(e.emu.SeedMany(project, tmpl, 1200)).To(Succeed())
	var names []string
	err := e.svc.Instances.List(project).MaxResults(500).Pages(context.Background(), func(p *sqladmin.InstancesListResponse) error {
		e.g.Expect(len(p.Items)).To(BeNumerically("<=", 500))
		for _, i := range p.Items {
			names = append(names, i.Name)
		}
		return nil
	})
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(names).To(HaveLen(1200))
	e.g.Expect(names[0]).To(Equal("fleet-00000"))
	e.g.Expect(names[1199]).To(Equal("fleet-01199"))
	e.g.Expect(e.emu.SeedMany(project, tmpl, 0)).To(HaveOccurred())
	e.g.Expect(e.emu.SeedMany(project, tmpl, 1)).To(MatchError(ContainSubstring("fleet-00000")), "names already taken are refused, naming the instance")

	resp, err := http.Post(e.url+"/emulator/v1/projects/other/instances?count=3", "application/json",
		strings.NewReader(`{"name":"web","databaseVersion":"POSTGRES_15","settings":{"tier":"db-custom-1-3840"}}`))
	e.g.Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	e.g.Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
	e.g.Expect(string(body)).To(MatchJSON(`{"seeded":3}`))
	_, err = e.emu.Instance("other", "web-00002")
	e.g.Expect(err).NotTo(HaveOccurred())
}

func TestUserAndDatabaseNames(t *testing.T) {
	e := newEnv(t)
	e.g.Expect(e.emu.Seed(project, &sqladmin.DatabaseInstance{Name: "names", DatabaseVersion: "POSTGRES_15", RootPassword: "pw",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"}})).To(Succeed())
	for _, n := range []string{"zed", "amy"} {
		_, err := e.svc.Users.Insert(project, "names", &sqladmin.User{Name: n, Password: "pw-" + n}).Do()
		e.g.Expect(err).NotTo(HaveOccurred())
		_, err = e.svc.Databases.Insert(project, "names", &sqladmin.Database{Name: n + "-db"}).Do()
		e.g.Expect(err).NotTo(HaveOccurred())
	}
	counts := e.emu.Counts()

	users, err := e.emu.UserNames(project, "names")
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(users).To(Equal([]string{"amy", "postgres", "zed"}))
	dbs, err := e.emu.DatabaseNames(project, "names")
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(dbs).To(Equal([]string{"amy-db", "postgres", "zed-db"}))
	e.g.Expect(e.emu.Counts()).To(Equal(counts), "the admin listings are not API calls")

	_, err = e.emu.UserNames(project, "ghost")
	e.g.Expect(err).To(MatchError(emulator.ErrInstanceNotFound))
	_, err = e.emu.DatabaseNames(project, "ghost")
	e.g.Expect(err).To(MatchError(emulator.ErrInstanceNotFound))
}

func TestSeedDatabasesAndUsers(t *testing.T) {
	e := newEnv(t)
	e.g.Expect(e.emu.Seed(project, instance("shared"))).To(Succeed())

	// Go.
	e.g.Expect(e.emu.SeedDatabase(project, "shared", &sqladmin.Database{Name: "orders"})).To(Succeed())
	e.g.Expect(e.emu.SeedUser(project, "shared", &sqladmin.User{Name: "orders-app", Password: "s3cret"})).To(Succeed())
	e.g.Expect(e.emu.SeedDatabase(project, "shared", &sqladmin.Database{Name: "orders"})).To(MatchError(emulator.ErrDatabaseExists))
	e.g.Expect(e.emu.SeedDatabase(project, "shared", &sqladmin.Database{Name: "template1"})).To(MatchError(emulator.ErrDatabaseExists))
	e.g.Expect(e.emu.SeedDatabase(project, "shared", &sqladmin.Database{Name: "bad", Charset: "LATIN1"})).To(HaveOccurred())
	e.g.Expect(e.emu.SeedDatabase(project, "ghost", &sqladmin.Database{Name: "orders"})).To(MatchError(emulator.ErrInstanceNotFound))
	e.g.Expect(e.emu.SeedDatabase(project, "shared", nil)).To(HaveOccurred())
	e.g.Expect(e.emu.SeedUser(project, "shared", &sqladmin.User{Name: "orders-app"})).To(MatchError(emulator.ErrUserExists))
	e.g.Expect(e.emu.SeedUser(project, "shared", &sqladmin.User{})).To(HaveOccurred())
	e.g.Expect(e.emu.SeedUser(project, "ghost", &sqladmin.User{Name: "x"})).To(MatchError(emulator.ErrInstanceNotFound))
	e.g.Expect(e.emu.PasswordIs(project, "shared", "orders-app", "s3cret")).To(BeTrue())

	// HTTP.
	var d sqladmin.Database
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/shared/databases", `{"name":"billing"}`, &d)).To(Equal(200))
	e.g.Expect(d).To(And(HaveField("Name", "billing"), HaveField("Charset", "UTF8"), HaveField("Collation", "en_US.UTF8"), HaveField("Instance", "shared")))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/shared/databases", `{"name":"billing"}`, nil)).To(Equal(400))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/ghost/databases", `{"name":"billing"}`, nil)).To(Equal(404))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/shared/databases", `{`, nil)).To(Equal(400))
	var u sqladmin.User
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/shared/users", `{"name":"billing-app","password":"pw"}`, &u)).To(Equal(200))
	e.g.Expect(u).To(And(HaveField("Name", "billing-app"), HaveField("Password", ""), HaveField("Instance", "shared")))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/shared/users", `{"name":"billing-app"}`, nil)).To(Equal(409))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/shared/users", `{}`, nil)).To(Equal(400))
	e.g.Expect(e.call("POST", "/emulator/v1/projects/test-project/instances/ghost/users", `{"name":"x"}`, nil)).To(Equal(404))
	e.g.Expect(e.emu.PasswordIs(project, "shared", "billing-app", "pw")).To(BeTrue())

	// The API lists them, and seeding cost no request.
	dbs, err := e.svc.Databases.List(project, "shared").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(dbs.Items).To(ConsistOf(HaveField("Name", "postgres"), HaveField("Name", "orders"), HaveField("Name", "billing")))
	users, err := e.svc.Users.List(project, "shared").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(users.Items).To(ConsistOf(HaveField("Name", "postgres"), HaveField("Name", "orders-app"), HaveField("Name", "billing-app")))
	e.g.Expect(e.emu.Counts()).To(Equal(map[string]int{"databases.list": 1, "users.list": 1}))
}
