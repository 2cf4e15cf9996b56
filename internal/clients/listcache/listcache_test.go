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

package listcache_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/listcache"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

const project = "list-project"

// env is an emulator with two instances and a client of it.
func env(t *testing.T) (*emulator.Server, *sqladmin.Service) {
	t.Helper()
	g := NewWithT(t)
	emu := emulator.New(emulator.WithRequestBudget(0))
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range []string{"orders", "billing"} {
		_, err := svc.Instances.Insert(project, &sqladmin.DatabaseInstance{
			Name: name, DatabaseVersion: "POSTGRES_15", RootPassword: "pw",
			Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
		}).Do()
		g.Expect(err).NotTo(HaveOccurred())
	}
	emu.ResetCounts()
	return emu, svc
}

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestOneListingServesEveryObjectOfAnInstance(t *testing.T) {
	g := NewWithT(t)
	emu, svc := env(t)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := listcache.New(func() time.Duration { return time.Minute }, listcache.WithClock(clk.now))
	k := listcache.Key{Source: "pc", Project: project, Instance: "orders"}

	// Ten objects of one instance ask at once: one request.
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs, _, err := c.Databases(context.Background(), svc, k)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(dbs).To(ContainElement(HaveField("Name", "postgres")))
		}()
	}
	wg.Wait()
	g.Expect(emu.Counts()[emulator.MethodDatabasesList]).To(Equal(1))

	// Within the maximum age: none; users are listed apart; after it: one more.
	_, _, err := c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	users, _, err := c.Users(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(users).To(ContainElement(HaveField("Name", "postgres")))
	g.Expect(emu.Counts()[emulator.MethodDatabasesList]).To(Equal(1))
	g.Expect(emu.Counts()[emulator.MethodUsersList]).To(Equal(1))
	clk.advance(time.Minute)
	_, at, err := c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(at).To(Equal(clk.now()))
	g.Expect(emu.Counts()[emulator.MethodDatabasesList]).To(Equal(2))

	// Another instance has a listing of its own.
	_, _, err = c.Databases(context.Background(), svc, listcache.Key{Source: "pc", Project: project, Instance: "billing"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(emu.Counts()[emulator.MethodDatabasesList]).To(Equal(3))
	g.Expect(c.Active(time.Hour)).To(Equal(3), "two instances' databases, one's users")
}

func TestInvalidateListsAgain(t *testing.T) {
	g := NewWithT(t)
	emu, svc := env(t)
	c := listcache.New(func() time.Duration { return time.Hour })
	k := listcache.Key{Source: "pc", Project: project, Instance: "orders"}
	dbs, _, err := c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dbs).To(HaveLen(1))

	_, err = svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
	g.Expect(err).NotTo(HaveOccurred())
	c.Invalidate(listcache.Key{Source: "pc", Project: project, Instance: "orders", Kind: listcache.KindDatabases})
	dbs, _, err = c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dbs).To(ContainElement(HaveField("Name", "sales")))
	g.Expect(emu.Counts()[emulator.MethodDatabasesList]).To(Equal(2))
}

// What an insert made, once its operation is DONE, joins the listing at
// hand: the object that made it, and its instance's other objects, are
// served from it with no request.
func TestAnInsertJoinsTheListing(t *testing.T) {
	g := NewWithT(t)
	emu, svc := env(t)
	c := listcache.New(func() time.Duration { return time.Hour })
	k := listcache.Key{Source: "pc", Project: project, Instance: "orders"}
	dbs, _, err := c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	users, _, err := c.Users(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())

	for _, name := range []string{"sales", "stock"} {
		op, err := svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: name}).Do()
		g.Expect(err).NotTo(HaveOccurred())
		c.InsertedDatabase(k, op, listcache.Database{Name: name})
	}
	op, err := svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	g.Expect(err).NotTo(HaveOccurred())
	c.InsertedUser(k, op, listcache.User{Name: "app"})

	again, _, err := c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(HaveExactElements(HaveField("Name", "postgres"), HaveField("Name", "sales"), HaveField("Name", "stock")))
	g.Expect(dbs).To(HaveLen(1), "a caller's slice is never changed under it")
	moreUsers, _, err := c.Users(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moreUsers).To(ContainElement(HaveField("Name", "app")))
	g.Expect(moreUsers).To(HaveLen(len(users) + 1))
	g.Expect(emu.Counts()[emulator.MethodDatabasesList]).To(Equal(1))
	g.Expect(emu.Counts()[emulator.MethodUsersList]).To(Equal(1))

	// No listing at hand: the next caller lists, and sees it.
	other := listcache.Key{Source: "pc", Project: project, Instance: "billing"}
	op, err = svc.Databases.Insert(project, "billing", &sqladmin.Database{Name: "ledger"}).Do()
	g.Expect(err).NotTo(HaveOccurred())
	c.InsertedDatabase(other, op, listcache.Database{Name: "ledger"})
	dbs, _, err = c.Databases(context.Background(), svc, other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dbs).To(ContainElement(HaveField("Name", "ledger")))
	g.Expect(emu.Counts()[emulator.MethodDatabasesList]).To(Equal(2))
}

// A listing made after Cloud SQL answered an insert, but stored before the
// insert joined the cache, already shows the item: it is there once.
func TestAnInsertAlreadyListedIsThereOnce(t *testing.T) {
	g := NewWithT(t)
	_, svc := env(t)
	c := listcache.New(func() time.Duration { return time.Hour })
	k := listcache.Key{Source: "pc", Project: project, Instance: "orders"}
	op, err := svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
	g.Expect(err).NotTo(HaveOccurred())
	uop, err := svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	_, _, err = c.Users(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(c.InsertedDatabase(k, op, listcache.Database{Name: "sales", Charset: "UTF8", Collation: "C"})).To(BeTrue())
	g.Expect(c.InsertedUser(k, uop, listcache.User{Name: "app", Type: "BUILT_IN"})).To(BeTrue())
	dbs, _, err := c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dbs).To(ConsistOf(HaveField("Name", "postgres"), listcache.Database{Name: "sales", Charset: "UTF8", Collation: "C"}))
	users, _, err := c.Users(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(users).To(ContainElement(HaveField("Name", "app")))
	names := map[string]int{}
	for _, u := range users {
		names[u.Name]++
	}
	g.Expect(names).To(HaveKeyWithValue("app", 1))
}

// An insert whose operation is still running, or failed, drops the listing:
// the next caller lists again, to see its end.
func TestAnInsertNotDoneListsAgain(t *testing.T) {
	g := NewWithT(t)
	emu, svc := env(t)
	c := listcache.New(func() time.Duration { return time.Hour })
	k := listcache.Key{Source: "pc", Project: project, Instance: "orders"}
	for i, op := range []*sqladmin.Operation{
		{Status: "RUNNING"},
		{Status: "DONE", Error: &sqladmin.OperationErrors{Errors: []*sqladmin.OperationError{{Code: "INTERNAL_ERROR"}}}},
		nil,
	} {
		_, _, err := c.Databases(context.Background(), svc, k)
		g.Expect(err).NotTo(HaveOccurred())
		c.InsertedDatabase(k, op, listcache.Database{Name: "sales"})
		dbs, _, err := c.Databases(context.Background(), svc, k)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(dbs).NotTo(ContainElement(HaveField("Name", "sales")), "only what Cloud SQL shows")
		g.Expect(emu.Counts()[emulator.MethodDatabasesList]).To(Equal(i+2), "case %d: one listing more", i)
	}
}

// A listing in flight when an insert joins the cache answers the callers
// that were waiting for it, but is not kept: the next caller lists again.
func TestAListingBegunBeforeAnInsertIsNotKept(t *testing.T) {
	g := NewWithT(t)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	lists := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lists++
		n := lists
		mu.Unlock()
		if n == 1 {
			started <- struct{}{}
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"items":[{"name":"postgres"}]}`))
	}))
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	c := listcache.New(func() time.Duration { return time.Hour })
	k := listcache.Key{Source: "pc", Project: project, Instance: "orders"}

	done := make(chan error)
	go func() {
		_, _, err := c.Databases(context.Background(), svc, k)
		done <- err
	}()
	<-started
	c.InsertedDatabase(k, &sqladmin.Operation{Status: "DONE"}, listcache.Database{Name: "sales"})
	close(release)
	g.Expect(<-done).NotTo(HaveOccurred())
	_, _, err = c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	mu.Lock()
	defer mu.Unlock()
	g.Expect(lists).To(Equal(2), "the listing begun before the insert was not kept")
}

func TestErrorsAreNotKept(t *testing.T) {
	g := NewWithT(t)
	emu, svc := env(t)
	c := listcache.New(func() time.Duration { return time.Hour })
	k := listcache.Key{Source: "pc", Project: project, Instance: "nope"}
	_, _, err := c.Users(context.Background(), svc, k)
	g.Expect(err).To(MatchError(ContainSubstring("cannot list the users of Cloud SQL instance nope in project list-project")))
	_, _, err = c.Users(context.Background(), svc, k)
	g.Expect(err).To(HaveOccurred())
	g.Expect(emu.Counts()[emulator.MethodUsersList]).To(Equal(2))
	g.Expect(c.Active(time.Hour)).To(BeZero())
}

func TestActiveDropsWhatNobodyAskedFor(t *testing.T) {
	g := NewWithT(t)
	_, svc := env(t)
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := listcache.New(func() time.Duration { return time.Minute }, listcache.WithClock(clk.now))
	_, _, err := c.Databases(context.Background(), svc, listcache.Key{Source: "pc", Project: project, Instance: "orders"})
	g.Expect(err).NotTo(HaveOccurred())
	clk.advance(10 * time.Minute)
	_, _, err = c.Users(context.Background(), svc, listcache.Key{Source: "pc", Project: project, Instance: "orders"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Active(5 * time.Minute)).To(Equal(1))
}

// A listing that outlives the reconcile that asked for it says so, and goes
// on: the next reconcile is served by it, with no second listing.
func TestAListingOutlivesItsCaller(t *testing.T) {
	g := NewWithT(t)
	emu := emulator.New(emulator.WithRequestBudget(0))
	release := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The first listing waits, as one behind a full request budget.
		if strings.HasSuffix(r.URL.Path, "/users") && r.Method == http.MethodGet {
			once.Do(func() { <-release })
		}
		emu.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(emu.Seed(project, &sqladmin.DatabaseInstance{Name: "orders", DatabaseVersion: "POSTGRES_15", Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"}})).To(Succeed())
	c := listcache.New(func() time.Duration { return time.Hour })
	k := listcache.Key{Source: "pc", Project: project, Instance: "orders", Kind: listcache.KindUsers}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err = c.Users(ctx, svc, k)
	g.Expect(err).To(MatchError(ContainSubstring("the listing of the users of Cloud SQL instance orders in project list-project has not come back before this reconcile's deadline")))

	close(release)
	g.Eventually(func() error {
		_, _, err := c.Users(context.Background(), svc, k)
		return err
	}, 10*time.Second, 10*time.Millisecond).Should(Succeed())
	g.Expect(emu.Counts()[emulator.MethodUsersList]).To(Equal(1), "the listing went on and served the next reconcile")
}

// A listing keeps of each database and login what its object compares, and
// nothing more: a fleet's listings are a good part of the provider's memory.
func TestAListingKeepsWhatObjectsCompare(t *testing.T) {
	g := NewWithT(t)
	emu, svc := env(t)
	c := listcache.New(func() time.Duration { return time.Hour })
	k := listcache.Key{Source: "pc", Project: project, Instance: "orders"}
	g.Expect(emu.SeedDatabase(project, "orders", &sqladmin.Database{Name: "sales", Charset: "UTF8", Collation: "en_US.UTF8"})).To(Succeed())
	_, err := svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app@example.com", Type: "CLOUD_IAM_USER"}).Do()
	g.Expect(err).NotTo(HaveOccurred())

	dbs, _, err := c.Databases(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dbs).To(ContainElement(listcache.Database{Name: "sales", Charset: "UTF8", Collation: "en_US.UTF8"}))
	users, _, err := c.Users(context.Background(), svc, k)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(users).To(ContainElement(listcache.User{Name: "app@example.com", Type: "CLOUD_IAM_USER", IAMStatus: "IAM_STATUS_UNSPECIFIED"}))
}
