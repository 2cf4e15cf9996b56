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

package observer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
	"unsafe"

	. "github.com/onsi/gomega"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

const project = "observer-test"

// fixture is an emulator with n instances, a real client for it, and a clock the
// test moves.
type fixture struct {
	emu *emulator.Server
	svc *sqladmin.Service
	now time.Time
	mu  sync.Mutex
}

func newFixture(t *testing.T, n int) *fixture {
	g := NewWithT(t)
	emu := emulator.New(emulator.WithRequestBudget(0))
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	for i := range n {
		g.Expect(emu.Seed(project, &sqladmin.DatabaseInstance{
			Name: fmt.Sprintf("db-%04d", i), DatabaseVersion: "POSTGRES_15",
			Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
		})).To(Succeed())
	}
	return &fixture{emu: emu, svc: svc, now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *fixture) lists() int { return f.emu.Counts()["instances.list"] }

func TestInstanceSharesOneListing(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, 1200)
	o := New(WithClock(f.clock))
	ctx := context.Background()
	epoch := f.clock().Add(-time.Hour)

	// Many reconciles at once: one listing, paged by 500, serves them all.
	var wg sync.WaitGroup
	results := make([]Result, 50)
	errs := make([]error, 50)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = o.Instance(ctx, f.svc, "pc", project, fmt.Sprintf("db-%04d", i*20), epoch, time.Minute)
		}()
	}
	wg.Wait()
	for i := range results {
		g.Expect(errs[i]).NotTo(HaveOccurred())
		g.Expect(results[i].Instance).NotTo(BeNil())
		g.Expect(results[i].Instance.Name).To(Equal(fmt.Sprintf("db-%04d", i*20)))
	}
	g.Expect(f.lists()).To(Equal(3), "1,200 instances are three pages of 500, listed once")
	g.Expect(o.Pages("pc", project)).To(Equal(3))

	// Each caller gets its own copy: a reconcile that changes what it was
	// given changes nothing for the next one.
	results[0].Instance.Settings.Tier = "db-custom-64-245760"
	again, err := o.Instance(ctx, f.svc, "pc", project, "db-0000", epoch, time.Minute)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Instance.Settings.Tier).To(Equal("db-custom-1-3840"))

	cases := []struct {
		name       string
		advance    time.Duration
		writtenAgo time.Duration // the object's last write; 0: long ago
		instance   string
		wantLists  int
		wantListed bool
		wantFound  bool
	}{
		{name: "FreshEnoughNoRequest", advance: 30 * time.Second, instance: "db-0001", wantListed: true, wantFound: true},
		{name: "OlderThanMaxAgeListedAgain", advance: 31 * time.Second, instance: "db-0001", wantLists: 3, wantListed: true, wantFound: true},
		{name: "WrittenAfterTheListingBeganListedAgain", advance: 10 * time.Second, writtenAgo: 5 * time.Second,
			instance: "db-0002", wantLists: 3, wantListed: true, wantFound: true},
		{name: "WrittenJustNowNothingListedCanShowItAskInstancesGet", writtenAgo: -1, instance: "db-0002"},
		{name: "NotInTheListing", instance: "not-listed", wantListed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f.advance(tc.advance)
			notBefore := epoch
			switch {
			case tc.writtenAgo > 0:
				notBefore = f.clock().Add(-tc.writtenAgo)
			case tc.writtenAgo < 0:
				notBefore = f.clock()
			}
			before := f.lists()
			r, err := o.Instance(ctx, f.svc, "pc", project, tc.instance, notBefore, time.Minute)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(f.lists() - before).To(Equal(tc.wantLists))
			g.Expect(r.Listed).To(Equal(tc.wantListed))
			g.Expect(r.Instance != nil).To(Equal(tc.wantFound))
		})
	}
}

// Peek answers only from a listing at hand, and never sends a request: not
// for a project never listed, not for a listing too old, not while the
// listing fails.
func TestPeekMakesNoRequest(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, 3)
	o := New(WithClock(f.clock))
	epoch := f.clock().Add(-time.Hour)

	r, err := o.Peek("pc", project, "db-0001", epoch)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Listed).To(BeFalse(), "nothing listed yet")
	g.Expect(f.emu.Counts()).To(BeEmpty(), "no request, and no listing started")
	g.Expect(o.TotalPages()).To(BeZero(), "peeking makes no view that the schedule or the budget would count")

	_, err = o.Instance(context.Background(), f.svc, "pc", project, "db-0000", epoch, time.Minute)
	g.Expect(err).NotTo(HaveOccurred(), "a controller's observation lists the project")
	listedAt := f.clock()
	f.emu.ResetCounts()

	f.advance(30 * time.Second)
	r, err = o.Peek("pc", project, "db-0001", f.clock().Add(-time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r).To(And(HaveField("Listed", true), HaveField("Complete", true), HaveField("ReadAt", listedAt)))
	g.Expect(r.Instance).NotTo(BeNil())
	g.Expect(r.Instance.Name).To(Equal("db-0001"))
	r, err = o.Peek("pc", project, "not-there", f.clock().Add(-time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r).To(And(HaveField("Listed", true), HaveField("Instance", BeNil())))
	r, err = o.Peek("other-pc", project, "db-0001", f.clock().Add(-time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Listed).To(BeFalse(), "another configuration's view is not this one's")

	f.advance(time.Minute)
	r, err = o.Peek("pc", project, "db-0001", f.clock().Add(-time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Listed).To(BeFalse(), "the listing is too old")
	g.Expect(f.emu.Counts()).To(BeEmpty())
}

func TestAListingThatBeganAfterTheCallServesItHoweverLongItTook(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, 3)
	// Every reading of the clock is ten seconds later: each listing is "old" by
	// the time it ends.
	slow := func() time.Time { f.advance(10 * time.Second); return f.clock() }
	o := New(WithClock(slow))
	r, err := o.Instance(context.Background(), f.svc, "pc", project, "db-0001", time.Time{}, time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Listed).To(BeTrue())
	g.Expect(r.Instance).NotTo(BeNil())
	g.Expect(r.Complete).To(BeTrue())
	g.Expect(f.lists()).To(Equal(1), "one listing, not one per attempt")
}

// While the next listing is under way, the last one serves for the maximum
// age after its last page came, not after its first: a slow listing would
// otherwise hold every caller for a whole listing.
func TestTheLastListingServesWhileTheNextIsUnderWay(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, 3)
	ctx := context.Background()
	// The listings go through a server that can hold them, and the first
	// takes 25 s of the test's clock.
	var slow sync.Mutex
	held, release := make(chan struct{}, 1), make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	holding, first := false, true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slow.Lock()
		h, took := holding, first
		first = false
		slow.Unlock()
		if took {
			f.advance(25 * time.Second)
		}
		if h {
			held <- struct{}{}
			<-release
		}
		f.emu.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(free) // before the server closes, which waits for held listings
	svc, err := sqladmin.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	o := New(WithClock(f.clock))
	epoch := f.clock().Add(-time.Hour)

	began := f.clock()
	r, err := o.Instance(ctx, svc, "pc", project, "db-0001", epoch, 30*time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.ReadAt).To(Equal(began), "the first listing began at once, and ended 25 s later")

	// 10 s after it ended, a caller that wants a listing no older than 5 s
	// starts the next one, which is held.
	f.advance(10 * time.Second)
	slow.Lock()
	holding = true
	slow.Unlock()
	next := make(chan Result, 2)
	go func() {
		r, _ := o.Instance(ctx, svc, "pc", project, "db-0001", epoch, 5*time.Second)
		next <- r
	}()
	g.Eventually(held, 5*time.Second).Should(Receive(), "a caller that wants a listing no older than 5 s starts one")

	// The first listing began 35 s ago but ended 10 s ago: it serves a caller
	// that wants one no older than 30 s, at once.
	served := make(chan Result, 1)
	go func() {
		r, _ := o.Instance(ctx, svc, "pc", project, "db-0002", epoch, 30*time.Second)
		served <- r
	}()
	g.Eventually(served, 5*time.Second).Should(Receive(&r), "served from the listing at hand, without waiting for the next")
	g.Expect(r.Instance).NotTo(BeNil())
	g.Expect(r.ReadAt).To(Equal(began), "read at the first listing's start, as its first page was")

	// 25 s later it ended 35 s ago: a caller waits for the next.
	f.advance(25 * time.Second)
	go func() {
		r, _ := o.Instance(ctx, svc, "pc", project, "db-0002", epoch, 30*time.Second)
		next <- r
	}()
	g.Consistently(next, 200*time.Millisecond).ShouldNot(Receive(), "a listing that ended longer ago than the maximum age serves no one")
	free()
	for range 2 {
		var r Result
		g.Eventually(next, 5*time.Second).Should(Receive(&r))
		g.Expect(r.Instance).NotTo(BeNil())
		g.Expect(r.ReadAt).To(BeTemporally(">", began), "from the second listing")
	}
	g.Expect(f.lists()).To(Equal(2))

	// With no listing under way, one that began longer ago than the maximum
	// age lists again, however recently its last page came: the second
	// began 45 s ago and ended 20 s ago.
	slow.Lock()
	holding = false
	slow.Unlock()
	f.advance(20 * time.Second)
	_, err = o.Instance(ctx, svc, "pc", project, "db-0001", epoch, 30*time.Second)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(f.lists()).To(Equal(3))
}

func TestInstanceReportsAFailedListing(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, 3)
	o := New(WithClock(f.clock))
	ctx := context.Background()
	g.Expect(f.emu.InjectFault(emulator.Fault{Method: "instances.list", ServerErrorShare: 1, Count: 1})).To(Succeed())
	_, err := o.Instance(ctx, f.svc, "pc", project, "db-0000", time.Time{}, time.Minute)
	g.Expect(err).To(MatchError(ContainSubstring("cannot list the Cloud SQL instances of project " + project)))

	// For a while, callers get that error without another listing: a 5xx
	// passes, so the while is short, and twice as long after each failure
	// in a row.
	before := f.lists()
	_, err = o.Instance(ctx, f.svc, "pc", project, "db-0000", time.Time{}, time.Minute)
	g.Expect(err).To(MatchError(ContainSubstring("cannot list")))
	g.Expect(f.lists()).To(Equal(before))
	g.Expect(f.emu.InjectFault(emulator.Fault{Method: "instances.list", ServerErrorShare: 1, Count: 1})).To(Succeed())
	f.advance(retryFirst)
	_, err = o.Instance(ctx, f.svc, "pc", project, "db-0000", time.Time{}, time.Minute)
	g.Expect(err).To(MatchError(ContainSubstring("cannot list")))
	g.Expect(f.lists()).To(Equal(before+1), "listed again after retryFirst")
	f.advance(retryFirst)
	_, err = o.Instance(ctx, f.svc, "pc", project, "db-0000", time.Time{}, time.Minute)
	g.Expect(err).To(MatchError(ContainSubstring("cannot list")))
	g.Expect(f.lists()).To(Equal(before+1), "the second failure in a row answers for twice as long")

	// Later, the next call lists again and succeeds.
	f.advance(retryFirst)
	r, err := o.Instance(ctx, f.svc, "pc", project, "db-0000", time.Time{}, time.Minute)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Instance).NotTo(BeNil())
	g.Expect(r.ReadAt).To(Equal(f.clock()))
}

func TestAPassingFailureAnswersForLess(t *testing.T) {
	for name, tc := range map[string]struct {
		err      error
		failures int
		want     time.Duration
	}{
		"a 429":                         {&googleapi.Error{Code: http.StatusTooManyRequests}, 1, retryFirst},
		"a 503, the third in a row":     {&googleapi.Error{Code: http.StatusServiceUnavailable}, 3, 4 * retryFirst},
		"a 500, the tenth in a row":     {&googleapi.Error{Code: http.StatusInternalServerError}, 10, retryAfter},
		"no answer":                     {&url.Error{Op: "Get", URL: "https://sqladmin.googleapis.com/", Err: errors.New("connection refused")}, 1, retryFirst},
		"a 403, which will not pass":    {&googleapi.Error{Code: http.StatusForbidden}, 1, retryAfter},
		"too many pages, which neither": {errors.New("the listing went on past 100 pages"), 1, retryAfter},
	} {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(retryWait(fmt.Errorf("cannot list: %w", tc.err), tc.failures)).To(Equal(tc.want))
		})
	}
}

func TestScheduledListingsReportWhatChanged(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, 3)
	listings := make(chan Listing, 10)
	o := New(WithClock(f.clock),
		WithSchedule(func() time.Duration { return time.Minute }, func() time.Duration { return 10 * time.Minute }),
		WithOnListing(func(_ context.Context, l Listing) { listings <- l }))
	ctx := context.Background()

	o.schedule(ctx)
	g.Consistently(f.lists, 200*time.Millisecond).Should(BeZero(), "nothing watched: nothing listed")

	o.Watch(f.svc, "pc", project, "db-0000", "a")
	o.Watch(f.svc, "pc", project, "db-0001", "b")
	o.Watch(f.svc, "pc", project, "not-there", "c")
	g.Expect(o.Watched()).To(Equal(3))
	o.schedule(ctx)
	var l Listing
	g.Eventually(listings).Should(Receive(&l))
	g.Expect(l.Objects).To(ConsistOf("a", "b"), "c's instance is not listed")
	g.Expect(l.Changed).To(BeEmpty(), "a first listing has nothing to compare with")
	g.Expect(l.ReadAt).To(Equal(f.clock()))

	o.schedule(ctx)
	g.Consistently(f.lists, 200*time.Millisecond).Should(Equal(1), "the view is younger than the period")

	held := o.view("pc", project).instances
	g.Expect(f.emu.MutateInstance(project, "db-0001", func(db *sqladmin.DatabaseInstance) { db.Settings.Tier = "db-custom-2-7680" })).To(Succeed())
	f.advance(time.Minute)
	o.schedule(ctx)
	g.Eventually(listings).Should(Receive(&l))
	g.Expect(l.Objects).To(ConsistOf("a", "b"))
	g.Expect(l.Changed).To(ConsistOf("b"), "only the instance edited since the previous listing")
	// An unchanged instance keeps the bytes the previous listing held: a
	// steady fleet is held once in memory, not twice.
	now := o.view("pc", project).instances
	g.Expect(unsafe.SliceData(now["db-0000"].data)).To(BeIdenticalTo(unsafe.SliceData(held["db-0000"].data)))
	g.Expect(unsafe.SliceData(now["db-0001"].data)).NotTo(BeIdenticalTo(unsafe.SliceData(held["db-0001"].data)))

	// An instance still being created is reported when its creation ends,
	// not when it appears.
	o.Watch(f.svc, "pc", project, "new", "d")
	g.Expect(f.emu.Seed(project, &sqladmin.DatabaseInstance{Name: "new", DatabaseVersion: "POSTGRES_15", Region: "europe-west1",
		State: "PENDING_CREATE", Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"}})).To(Succeed())
	f.advance(time.Minute)
	o.schedule(ctx)
	g.Eventually(listings).Should(Receive(&l))
	g.Expect(l.Changed).To(BeEmpty(), "d's instance appeared, being created")
	g.Expect(f.emu.MutateInstance(project, "new", func(db *sqladmin.DatabaseInstance) { db.State = "RUNNABLE" })).To(Succeed())
	f.advance(time.Minute)
	o.schedule(ctx)
	g.Eventually(listings).Should(Receive(&l))
	g.Expect(l.Changed).To(ConsistOf("d"), "its creation ended")
	// One being deleted is reported when it is gone, not when its deletion
	// begins.
	g.Expect(f.emu.MutateInstance(project, "new", func(db *sqladmin.DatabaseInstance) { db.State = "PENDING_DELETE" })).To(Succeed())
	f.advance(time.Minute)
	o.schedule(ctx)
	g.Eventually(listings).Should(Receive(&l))
	g.Expect(l.Changed).To(BeEmpty(), "d's instance is being deleted")
	// (The emulator deletes only what is not being deleted yet.)
	g.Expect(f.emu.MutateInstance(project, "new", func(db *sqladmin.DatabaseInstance) { db.State = "RUNNABLE" })).To(Succeed())
	_, err := f.svc.Instances.Delete(project, "new").Do()
	g.Expect(err).NotTo(HaveOccurred())
	f.emu.FinishOperations()
	f.advance(time.Minute)
	o.schedule(ctx)
	g.Eventually(listings).Should(Receive(&l))
	g.Expect(l.Changed).To(ConsistOf("d"), "its deletion ended")
	o.Unwatch("d")

	// A watch that moves to another instance is counted once; the reconcile
	// that moved it observed the instance, which has not changed since.
	o.Watch(f.svc, "pc", project, "db-0002", "a")
	g.Expect(o.Watched()).To(Equal(3))
	f.advance(time.Minute)
	o.schedule(ctx)
	g.Eventually(listings).Should(Receive(&l))
	g.Expect(l.Objects).To(ConsistOf("a", "b"))
	g.Expect(l.Changed).To(BeEmpty())

	o.Unwatch("a")
	o.Unwatch("b")
	o.Unwatch("c")
	o.Unwatch("never-watched")
	g.Expect(o.Watched()).To(BeZero())
	f.advance(time.Minute)
	o.schedule(ctx)
	g.Consistently(f.lists, 200*time.Millisecond).Should(Equal(7), "nothing watched any more: nothing listed")
}

func TestUnrenewedWatchesExpire(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, 1)
	o := New(WithClock(f.clock), WithSchedule(func() time.Duration { return time.Minute }, func() time.Duration { return 10 * time.Minute }))
	ctx := context.Background()
	o.Watch(f.svc, "pc", project, "db-0000", "gone")
	o.Watch(f.svc, "pc", project, "db-0000", "renewed")
	o.schedule(ctx)
	g.Eventually(f.lists).Should(Equal(1))

	for range 11 {
		f.advance(time.Minute)
		o.Watch(f.svc, "pc", project, "db-0000", "renewed")
		o.schedule(ctx)
	}
	g.Expect(o.Watched()).To(Equal(1), "the watch not renewed for ten minutes is over")
	o.Unwatch("renewed")
	f.advance(time.Minute)
	g.Eventually(func() bool { return listing(o, "pc") }).Should(BeFalse())
	before := f.lists()
	o.schedule(ctx)
	g.Consistently(f.lists, 200*time.Millisecond).Should(Equal(before))
}

func TestRunListsWatchedProjectsUntilItsContextEnds(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, 1)
	// The real clock: Run ticks every second, and a listing is due every 1.5s.
	o := New(WithSchedule(func() time.Duration { return 1500 * time.Millisecond }, nil))
	o.Watch(f.svc, "pc", project, "db-0000", "a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- o.Run(ctx) }()
	g.Eventually(f.lists, 10*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 2))
	cancel()
	g.Eventually(done).Should(Receive(BeNil()))
	after := f.lists()
	g.Consistently(f.lists, 2500*time.Millisecond, 250*time.Millisecond).Should(Equal(after), "Run has stopped")
}

// listing says whether a listing of source's project is under way.
func listing(o *Observer, source string) bool {
	v := o.view(source, project)
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.refreshing != nil
}

// An endpoint that always sends a nextPageToken is listed for MaxPages pages,
// not forever: the listing fails with an error that names the configuration,
// the endpoint and the bound, and keeps nothing of what it read.
func TestListingStopsAfterMaxPages(t *testing.T) {
	g := NewWithT(t)
	var mu sync.Mutex
	pages := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pages++
		n := pages
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"items":[{"name":"db-%d"}],"nextPageToken":"page-%d"}`, n, n+1)
	}))
	defer srv.Close()
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	o := New()
	_, err = o.Instance(ctx, svc, "team-a/endless", project, "db-1", time.Time{}, time.Minute)
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`provider configuration "team-a/endless"`),
		ContainSubstring(srv.URL),
		ContainSubstring(fmt.Sprintf("past %d pages", MaxPages)),
		ContainSubstring("spec.endpoint"))))
	g.Expect(ctx.Err()).NotTo(HaveOccurred(), "the listing ended by itself")
	g.Expect(o.Pages("team-a/endless", project)).To(BeZero(), "a failed listing keeps nothing")
	mu.Lock()
	defer mu.Unlock()
	g.Expect(pages).To(Equal(MaxPages + 1))
}
