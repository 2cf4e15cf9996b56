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

package budget

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// fakeClock advances only when the Window sleeps, so tests are exact and instant.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return nil
}

func TestWindowAdmitsLimitPerPeriod(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(3, time.Minute, WithClock(clk.Now, clk.Sleep))
	ctx := context.Background()

	var admitted []time.Time
	for range 7 {
		g.Expect(w.Wait(ctx)).To(Succeed())
		admitted = append(admitted, clk.Now())
	}
	start := time.Unix(1000, 0)
	// Three at once, then each next one exactly when the oldest leaves the window.
	g.Expect(admitted).To(Equal([]time.Time{
		start, start, start,
		start.Add(time.Minute), start.Add(time.Minute), start.Add(time.Minute),
		start.Add(2 * time.Minute),
	}))
	// In no sliding minute were more than three admitted.
	for i := range admitted {
		n := 0
		for _, a := range admitted {
			if !a.Before(admitted[i]) && a.Sub(admitted[i]) < time.Minute {
				n++
			}
		}
		g.Expect(n).To(BeNumerically("<=", 3))
	}
}

// A full window tells its waiters how long to wait without making garbage:
// at 10,000 instances, hundreds of them ask several times a second, and a
// copy of the window each time was most of the provider's allocations.
func TestAFullWindowAnswersItsWaitersWithoutGarbage(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(1500, time.Minute, WithClock(clk.Now, clk.Sleep), WithWriteReserve(0.1))
	for range 1350 {
		done, err := w.BeginRead(context.Background())
		g.Expect(err).NotTo(HaveOccurred())
		done()
	}
	var d time.Duration
	var err error
	allocs := testing.AllocsPerRun(100, func() {
		_, d, err = w.admit(ask{c: classRead})
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d).To(BeNumerically(">", 0), "the reads are spent")
	g.Expect(allocs).To(BeZero())
}

func TestReadsLeaveTheWriteReserve(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(10, time.Minute, WithClock(clk.Now, clk.Sleep), WithWriteReserve(0.2))
	ctx := context.Background()
	start := clk.Now()

	// Reads take 8 of 10 at once; the ninth waits for the window to move.
	for range 8 {
		g.Expect(w.WaitRead(ctx)).To(Succeed())
	}
	g.Expect(clk.Now()).To(Equal(start), "eight reads fit")
	// Writes still get the two kept for them, without waiting.
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start), "writes are not starved by the reads before them")
	g.Expect(w.WaitRead(ctx)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start.Add(time.Minute)), "a read waits until the reserve is free again")

	g.Expect(NewWindow(10, time.Minute, WithWriteReserve(5)).reserve).To(Equal(9), "reads always keep some of the window")
	g.Expect(PerMinute(180).reserve).To(Equal(36))
}

func TestWindowSpacedEventsNeverWait(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(0, 0)}
	w := NewWindow(2, time.Minute, WithClock(clk.Now, clk.Sleep))
	for range 10 {
		g.Expect(w.Wait(context.Background())).To(Succeed())
		clk.now = clk.now.Add(30 * time.Second)
	}
	g.Expect(clk.slept).To(BeEmpty())
}

func TestWindowStopsWithContext(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(0, 0)}
	w := NewWindow(1, time.Minute, WithClock(clk.Now, clk.Sleep))
	g.Expect(w.Wait(context.Background())).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.Expect(w.Wait(ctx)).To(MatchError(context.Canceled))
}

func TestWindowIsSafeForConcurrentUse(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(0, 0)}
	w := NewWindow(50, time.Minute, WithClock(clk.Now, clk.Sleep))
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { g.Expect(w.Wait(context.Background())).To(Succeed()) })
	}
	wg.Wait()
	// 100 events at 50 a minute take at least one full minute of (fake) waiting.
	g.Expect(clk.Now().Sub(time.Unix(0, 0))).To(BeNumerically(">=", time.Minute))
}

// Requests admitted a second apart may reach Cloud SQL in the other order: a
// PerMinute window still keeps every minute Cloud SQL counts under the quota.
func TestPerMinuteLeavesRoomForRequestsThatArriveLate(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := PerMinute(180)
	w.now, w.sleep = clk.Now, clk.Sleep
	ctx := context.Background()
	var arrived []time.Time
	for i := range 400 {
		g.Expect(w.Wait(ctx)).To(Succeed())
		// Of the first minute's requests, every tenth is slow to arrive, by a
		// second; the next minute's are not.
		late := time.Duration(0)
		if i < 180 && i%10 == 1 {
			late = time.Second
		}
		arrived = append(arrived, clk.Now().Add(late))
	}
	g.Expect(busiestMinute(arrived)).To(BeNumerically("<=", 180), "Cloud SQL counted more than 180 in a minute")
}

// A call whose deadline comes before the budget could admit it is told so at
// once, instead of holding its worker until the deadline.
func TestWaitSaysAtOnceWhenTheBudgetOutlastsTheDeadline(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(1, time.Minute, WithClock(clk.Now, clk.Sleep))
	g.Expect(w.Wait(context.Background())).To(Succeed())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := w.Wait(ctx)
	g.Expect(err).To(MatchError(ErrSpent))
	g.Expect(err).To(MatchError(ContainSubstring("the Cloud SQL request budget (cloudsql.requests_per_minute = 1) has no request free for this call for the next 1m0s")))
	g.Expect(clk.slept).To(BeEmpty(), "nothing waited")

	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g.Expect(w.Wait(ctx)).To(Succeed(), "a deadline after the next slot waits for it")
	g.Expect(clk.slept).To(Equal([]time.Duration{time.Minute}))
}

// Of a window of 10 with a write reserve of 3 and an admission reserve of 1:
// reads stop at 7, writes at 9, and admission lookups may use the 10th.
func TestAdmissionLookupsKeepAReserveOfTheirOwn(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(10, time.Minute, WithClock(clk.Now, clk.Sleep), WithWriteReserve(0.3), WithAdmissionReserve(0.1))
	ctx := context.Background()
	for range 7 {
		g.Expect(w.WaitRead(ctx)).To(Succeed())
	}
	for range 2 {
		g.Expect(w.Wait(ctx)).To(Succeed())
	}
	g.Expect(w.WaitAdmission(ctx)).To(Succeed())
	g.Expect(clk.slept).To(BeEmpty(), "ten in the first minute, each within its share")

	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(time.Unix(1060, 0)), "the window is full: the next write waits a minute")

	g.Expect(PerMinute(180).admission).To(Equal(9))
	g.Expect(NewWindow(10, time.Minute, WithWriteReserve(0), WithAdmissionReserve(0.2)).reserve).To(Equal(2), "the write reserve holds the admission reserve")
}

func TestForAdmissionMarksLookups(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(2, time.Minute, WithClock(clk.Now, clk.Sleep), WithAdmissionReserve(0.5))
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	c := &http.Client{Transport: NewTransport(nil, w, WithSleep(clk.Sleep))}
	get := func(ctx context.Context) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := c.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
	}
	get(context.Background())
	get(ForAdmission(context.Background()))
	g.Expect(clk.slept).To(BeEmpty(), "the admission lookup used its reserve")
	get(context.Background())
	g.Expect(clk.slept).NotTo(BeEmpty(), "a read never does")

	// A read for everyone (a one-page listing) uses the reserve once the
	// reads' share is spent.
	clk.now = clk.now.Add(2 * time.Minute)
	clk.slept = nil
	get(context.Background())
	get(ForEveryone(context.Background()))
	g.Expect(clk.slept).To(BeEmpty(), "the listing used the admission reserve")
}

func TestBurstBoundsEachSecond(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(100, time.Minute, WithClock(clk.Now, clk.Sleep), WithBurst(3))
	for range 4 {
		g.Expect(w.Wait(context.Background())).To(Succeed())
	}
	g.Expect(clk.slept).To(Equal([]time.Duration{time.Second}), "the fourth in a second waits for the first to be a second old")
	g.Expect(PerMinute(180).burst).To(Equal(9))
}

// A process that records its window, admits more, and dies; a new process
// restores the record and sends as fast as its window lets it: no minute, as
// Cloud SQL counts them, holds more than the limit.
func TestRestoredWindowNeverOverrunsWhatTheDeadProcessSpent(t *testing.T) {
	for _, lost := range []time.Duration{0, 500 * time.Millisecond, 2 * time.Second} {
		t.Run(lost.String(), func(t *testing.T) {
			g := NewWithT(t)
			clk := &fakeClock{now: time.Unix(1000, 0)}
			ctx := context.Background()
			var sent []time.Time
			old := NewWindow(20, time.Minute, WithClock(clk.Now, clk.Sleep), WithBurst(5))
			for range 12 {
				g.Expect(old.Wait(ctx)).To(Succeed())
				sent = append(sent, clk.Now())
			}
			rec := old.Record()
			g.Expect(rec.Admitted).To(HaveLen(12))
			// After its last record, it sends what its burst allows until it
			// is killed, lost later.
			clk.now = clk.now.Add(lost)
			for range 5 {
				if _, d, _ := old.admit(ask{c: classWrite}); d == 0 {
					sent = append(sent, clk.Now())
				}
			}

			clk.now = clk.now.Add(100 * time.Millisecond)
			fresh := NewWindow(20, time.Minute, WithClock(clk.Now, clk.Sleep), WithBurst(5))
			fresh.Restore(rec, 2*time.Second)
			for range 40 {
				g.Expect(fresh.Wait(ctx)).To(Succeed())
				sent = append(sent, clk.Now())
			}
			g.Expect(busiestMinute(sent)).To(BeNumerically("<=", 20), "more than 20 in a minute")
		})
	}
}

// Two processes share one record: each merges the other's admissions, its own
// coming back with them, and counts every admission once.
func TestMergedWindowsCountEachAdmissionOnce(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	ctx := context.Background()
	a := NewWindow(20, time.Minute, WithClock(clk.Now, clk.Sleep))
	b := NewWindow(20, time.Minute, WithClock(clk.Now, clk.Sleep))
	for range 10 {
		g.Expect(a.Wait(ctx)).To(Succeed())
	}
	clk.now = clk.now.Add(time.Second)
	b.Merge(a.Record())
	b.Merge(a.Record())
	g.Expect(b.Record().Admitted).To(HaveLen(10), "the same record merged twice counts once")
	for range 5 {
		g.Expect(b.Wait(ctx)).To(Succeed())
	}
	a.Merge(b.Record())
	g.Expect(a.Record().Admitted).To(HaveLen(15), "a's own admissions, back in b's record, count once")
	g.Expect(a.Record().Admitted).To(Equal(b.Record().Admitted))

	// Both are five short of the limit: the next five wait for nobody, the
	// sixth for the first admission to leave the minute.
	slept := len(clk.slept)
	for range 5 {
		g.Expect(a.Wait(ctx)).To(Succeed())
	}
	g.Expect(clk.slept).To(HaveLen(slept))
	g.Expect(a.Wait(ctx)).To(Succeed())
	g.Expect(clk.slept).To(HaveLen(slept + 1))

	// What left the minute is not merged back.
	clk.now = clk.now.Add(2 * time.Minute)
	b.Merge(a.Record())
	g.Expect(b.Record().Admitted).To(BeEmpty())
}

// A replica that takes over restores the previous leader's record on top of
// what its window holds (what it merged while it waited): nothing twice.
func TestRestoreMergesWithWhatTheWindowHolds(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	ctx := context.Background()
	leader := NewWindow(30, time.Minute, WithClock(clk.Now, clk.Sleep), WithBurst(5))
	standby := NewWindow(30, time.Minute, WithClock(clk.Now, clk.Sleep), WithBurst(5))
	for range 4 {
		g.Expect(leader.Wait(ctx)).To(Succeed())
	}
	standby.Merge(leader.Record())
	g.Expect(standby.WaitAdmission(ctx)).To(Succeed())
	clk.now = clk.now.Add(time.Second)
	for range 3 {
		g.Expect(leader.Wait(ctx)).To(Succeed())
	}
	standby.Restore(leader.Record(), 2*time.Second)
	// 7 of the leader's, its own 1, and 5 a second for 2 seconds.
	g.Expect(standby.Record().Admitted).To(HaveLen(7 + 1 + 10))
}

// busiestMinute is the most events in any minute that begins at one of them.
func busiestMinute(events []time.Time) int {
	most := 0
	for _, from := range events {
		n := 0
		for _, e := range events {
			if !e.Before(from) && e.Sub(from) < time.Minute {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// Admission lookups use the admission reserve and no more of the window, so
// that a stream of creates cannot spend the controllers' share.
func TestAdmissionLookupsUseOnlyTheirReserve(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(20, time.Minute, WithClock(clk.Now, clk.Sleep), WithWriteReserve(0.2), WithAdmissionReserve(0.1))
	ctx := context.Background()
	start := clk.Now()

	for range 2 {
		g.Expect(w.WaitAdmission(ctx)).To(Succeed())
	}
	g.Expect(clk.Now()).To(Equal(start), "the admission reserve (2 of 20) is admitted at once")
	g.Expect(w.WaitAdmission(ctx)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start.Add(time.Minute)), "a third lookup waits for the first to leave the window, though 18 slots are free")

	// The lookup now in the window takes nothing from the controllers: their
	// reads find 20 - 4 (the write reserve) free.
	now := clk.Now()
	for range 16 {
		g.Expect(w.WaitRead(ctx)).To(Succeed())
	}
	g.Expect(clk.Now()).To(Equal(now))
}

// The write reserve caps what reads take of a window, not what the window
// holds when a read comes: a burst of writes does not keep out the reads that
// see it done, as long as the window has room.
func TestWritesDoNotKeepReadsOut(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	// 10 a minute, 3 kept for writes, 1 of them for admission lookups.
	w := NewWindow(10, time.Minute, WithClock(clk.Now, clk.Sleep), WithWriteReserve(0.3), WithAdmissionReserve(0.1))
	ctx := context.Background()
	start := clk.Now()
	for range 5 {
		g.Expect(w.Wait(ctx)).To(Succeed())
	}
	for range 4 {
		g.Expect(w.WaitRead(ctx)).To(Succeed())
	}
	g.Expect(clk.Now()).To(Equal(start), "after 5 writes, 4 reads: 9 of 10, the 10th kept for admission lookups")
	g.Expect(w.WaitShared(ctx)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start), "a listing that serves admission checks too may take the 10th")
	g.Expect(w.WaitAdmission(ctx)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start.Add(time.Minute)), "the window is full")

	// Reads alone still stop at 7.
	clk.now = clk.now.Add(2 * time.Minute)
	start = clk.Now()
	for range 7 {
		g.Expect(w.WaitRead(ctx)).To(Succeed())
	}
	g.Expect(w.WaitShared(ctx)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start), "a shared read past the reads' share takes the admission reserve")
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start), "the writes' share is whole")
	g.Expect(w.WaitRead(ctx)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start.Add(time.Minute)), "an eighth read waits for the first to leave the window")
}

// A deadline shorter than the wait for the admission reserve is told at once.
func TestAdmissionLookupBeyondItsReserveIsSpent(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(20, time.Minute, WithClock(clk.Now, clk.Sleep), WithAdmissionReserve(0.1))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g.Expect(w.WaitAdmission(ctx)).To(Succeed())
	g.Expect(w.WaitAdmission(ctx)).To(Succeed())
	g.Expect(w.WaitAdmission(ctx)).To(MatchError(ErrSpent))
}

// The lookups of one namespace use at most its share of the admission reserve:
// another namespace's, and the cluster-scoped kind's, still find theirs.
func TestAdmissionLookupsAreSharedBetweenNamespaces(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(100, time.Minute, WithClock(clk.Now, clk.Sleep), WithAdmissionReserve(0.1), WithAdmissionPerKey(0.3))
	ctx := context.Background()
	start := clk.Now()

	for range 3 {
		g.Expect(w.WaitAdmissionBy(ctx, "team-a")).To(Succeed())
	}
	g.Expect(clk.Now()).To(Equal(start), "3 of the reserve's 10 are team-a's")
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	g.Expect(w.WaitAdmissionBy(short, "team-a")).To(MatchError(ErrSpent), "team-a's fourth waits for its first to leave the window")
	for range 3 {
		g.Expect(w.WaitAdmissionBy(ctx, "team-b")).To(Succeed())
	}
	for range 4 {
		g.Expect(w.WaitAdmission(ctx)).To(Succeed(), "cluster-scoped instances are bounded by the reserve alone")
	}
	g.Expect(clk.Now()).To(Equal(start))
	g.Expect(w.WaitAdmissionBy(ctx, "team-a")).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start.Add(time.Minute)))
}

// Replicas that share one record keep the admission reserve and each
// namespace's share of it across all of them: the lookups one served count in
// the other's, with their namespaces, once each however often merged.
func TestReplicasShareTheAdmissionShares(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	ctx := context.Background()
	opts := []WindowOption{WithClock(clk.Now, clk.Sleep), WithAdmissionReserve(0.1), WithAdmissionPerKey(0.3)}
	a, b := NewWindow(100, time.Minute, opts...), NewWindow(100, time.Minute, opts...)
	for range 3 {
		g.Expect(a.WaitAdmissionBy(ctx, "team-a")).To(Succeed())
	}
	for range 4 {
		g.Expect(a.WaitAdmission(ctx)).To(Succeed())
	}
	clk.now = clk.now.Add(time.Second)
	r := a.Record()
	g.Expect(r.Lookups).To(HaveLen(7))
	b.Merge(r)
	b.Merge(r)
	a.Merge(b.Record())
	g.Expect(b.Record().Lookups).To(HaveLen(7), "the same record merged twice counts once")
	g.Expect(a.Record().Lookups).To(HaveLen(7), "a's own lookups, back in b's record, count once")

	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	g.Expect(b.WaitAdmissionBy(short, "team-a")).To(MatchError(ErrSpent), "team-a spent its share at the other replica")
	for range 3 {
		g.Expect(b.WaitAdmissionBy(ctx, "team-b")).To(Succeed())
	}
	g.Expect(b.WaitAdmissionBy(short, "team-c")).To(MatchError(ErrSpent), "the reserve is spent across both replicas")
}

func TestPerMinuteSharesTheAdmissionReserve(t *testing.T) {
	g := NewWithT(t)
	w := PerMinute(180)
	g.Expect(w.admission).To(Equal(9))
	g.Expect(w.perKey).To(Equal(3), "a third of the reserve for one namespace")
	g.Expect(PerMinute(10).perKey).To(Equal(1), "at least one")
}

// While records are saved, the events admitted beyond the last saved record
// are bounded by count (the burst bound's two seconds' worth), not by the
// burst bound: a burst goes at once, with a save asked for every 18 events at
// 180 a minute. When saves lag, the burst bound applies again; a new process
// counts as many unrecorded as before.
func TestAnUnrecordedBoundLetsBurstsThroughWhileRecordsAreSaved(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(180, time.Minute, WithBurst(9), WithClock(clk.Now, clk.Sleep))
	var saves atomic.Int32
	var saving sync.WaitGroup
	w.BoundUnrecorded(func() {
		saves.Add(1)
		// The keeper saves what was admitted so far (while the caller waits).
		saving.Go(func() { w.Recorded(w.Record()) })
	})
	ctx := context.Background()

	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(clk.slept).To(BeEmpty())
	w.Recorded(w.Record())
	for range 18 {
		g.Expect(w.Wait(ctx)).To(Succeed())
	}
	g.Expect(clk.slept).To(BeEmpty(), "18 unrecorded at once, past the burst bound of 9 a second")
	g.Expect(saves.Load()).To(BeZero())
	done := make(chan error)
	go func() { done <- w.Wait(ctx) }()
	g.Eventually(done).Should(Receive(Succeed()), "the 19th waits for a save")
	g.Expect(saves.Load()).To(BeNumerically(">=", 1))
	// Every save asked for has landed: none can make the record fresh again
	// after the clock moves on below.
	saving.Wait()
	clk.mu.Lock()
	g.Expect(clk.slept).To(HaveEach(recordWait))
	clk.mu.Unlock()

	// Saves lag past RecordFresh: the burst bound again.
	clk.mu.Lock()
	clk.now = clk.now.Add(RecordFresh + time.Second)
	clk.slept = nil
	clk.mu.Unlock()
	for range 10 {
		g.Expect(w.Wait(ctx)).To(Succeed())
	}
	g.Expect(clk.slept).To(Equal([]time.Duration{time.Second}), "9 a second")

	next := NewWindow(180, time.Minute, WithBurst(9), WithClock(clk.Now, clk.Sleep))
	next.BoundUnrecorded(func() {})
	next.Restore(Record{}, 2*time.Second)
	g.Expect(next.Record().Admitted).To(HaveLen(18), "unrecorded: as many as before")
}

// A window with an arrival skew counts each request for as long again as the
// slowest request admitted within the longest period took (in flight: has
// taken so far), within its bounds: a quick round trip leaves the window
// about Cloud SQL's minute long, a slow one lengthens it, and the skew falls
// back once that request leaves the window.
func TestTheWindowGrowsWithHowLateRequestsMayArrive(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(2, time.Minute, WithClock(clk.Now, clk.Sleep), WithArrivalSkew(100*time.Millisecond, 2*time.Second))
	ctx := context.Background()
	start := clk.Now()

	fast, err := w.Begin(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	clk.now = clk.now.Add(10 * time.Millisecond)
	fast()
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(clk.Now().Sub(start)).To(Equal(time.Minute+100*time.Millisecond), "counted for a minute and the least skew")

	// A request that took 1.5 s lengthens the window.
	clk.now = clk.now.Add(3 * time.Minute)
	slow, err := w.Begin(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	began := clk.Now()
	clk.now = clk.now.Add(1500 * time.Millisecond)
	slow()
	g.Expect(w.Wait(ctx)).To(Succeed(), "the second of the window")
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(clk.Now().Sub(began)).To(Equal(time.Minute+1500*time.Millisecond), "counted for as long as the slowest took")

	// One still in flight lengthens it as it goes, up to the most.
	clk.now = clk.now.Add(3 * time.Minute)
	stuck, err := w.Begin(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	began = clk.Now()
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(clk.Now().Sub(began)).To(Equal(time.Minute+2*time.Second), "in flight for the whole wait: the most")
	stuck()

	// Once the slow ones left the longest period, the window is short again.
	clk.now = clk.now.Add(3 * time.Minute)
	g.Expect(w.Wait(ctx)).To(Succeed())
	began = clk.Now()
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(w.Wait(ctx)).To(Succeed())
	g.Expect(clk.Now().Sub(began)).To(Equal(time.Minute + 100*time.Millisecond))

	g.Expect(PerMinute(180).maxPeriod()).To(Equal(time.Minute+5*time.Second), "PerMinute's windows count at most a minute and 5 s")
	g.Expect(PerMinute(180).minSkew).To(Equal(100*time.Millisecond), "and at least a minute and 100 ms")
}

// A new process never saw how long the previous one's requests took to
// arrive: it counts them, and all else while they are in its window, for the
// most skew, not for the least that its own quick requests would allow.
func TestAnotherProcesssRequestsCountForTheMostSkew(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	ctx := context.Background()
	opts := []WindowOption{WithClock(clk.Now, clk.Sleep), WithArrivalSkew(100*time.Millisecond, 5*time.Second), WithBurst(5)}
	old := NewWindow(20, time.Minute, opts...)
	var arrived []time.Time
	for range 20 {
		_, err := old.Begin(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		// Killed before any answer came: each arrived 4 s late.
		arrived = append(arrived, clk.Now().Add(4*time.Second))
	}
	rec := old.Record()

	clk.now = clk.now.Add(time.Second)
	fresh := NewWindow(20, time.Minute, opts...)
	fresh.Restore(rec, 0)
	for range 20 {
		g.Expect(fresh.Wait(ctx)).To(Succeed())
		arrived = append(arrived, clk.Now())
	}
	g.Expect(busiestMinute(arrived)).To(BeNumerically("<=", 20), "Cloud SQL counted more than 20 in a minute")
	g.Expect(fresh.Record().Admitted[0].Sub(rec.Admitted[0])).To(Equal(time.Minute + 5*time.Second))

	// Once they left its longest period, its own requests count for the least.
	clk.now = clk.now.Add(2 * time.Minute)
	began := clk.Now()
	for range 21 {
		g.Expect(fresh.Wait(ctx)).To(Succeed())
	}
	g.Expect(clk.Now().Sub(began)).To(Equal(time.Minute + 100*time.Millisecond))

	// A process that finds no record (the first) counts what it may have
	// left unrecorded, but for its own skew.
	clk.now = clk.now.Add(2 * time.Minute)
	first := NewWindow(1, time.Minute, opts...)
	first.Restore(Record{}, 0)
	began = clk.Now()
	g.Expect(first.Wait(ctx)).To(Succeed())
	g.Expect(first.Wait(ctx)).To(Succeed())
	g.Expect(clk.Now().Sub(began)).To(Equal(time.Minute + 100*time.Millisecond))
}

// The transport ends each request it admitted when its answer comes, so
// that the window knows how late it may have arrived, and a window with
// requests in flight is not idle.
func TestTheTransportEndsWhatItAdmitted(t *testing.T) {
	g := NewWithT(t)
	w := PerMinute(180)
	answer := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-answer }))
	defer srv.Close()
	c := &http.Client{Transport: NewTransport(nil, w)}
	got := make(chan error)
	go func() {
		resp, err := c.Get(srv.URL)
		if err == nil {
			_ = resp.Body.Close()
		}
		got <- err
	}()
	g.Eventually(func() int { w.mu.Lock(); defer w.mu.Unlock(); return len(w.flying) }).Should(Equal(1))
	g.Expect(w.idle()).To(BeFalse(), "a request is in flight")
	close(answer)
	g.Expect(<-got).To(Succeed())
	w.mu.Lock()
	defer w.mu.Unlock()
	g.Expect(w.flying).To(BeEmpty())
	g.Expect(w.took).To(HaveLen(1))
}
