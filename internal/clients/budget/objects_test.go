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
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestObjectsLeaveTheInstancesTheirShare(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	split := NewSplit(0.3)
	w := NewWindow(10, time.Minute, WithClock(clk.Now, clk.Sleep), WithWriteReserve(0.2), WithSplit(split))
	ctx := context.Background()
	start := clk.Now()
	object := func(c class) error { return ended(w.begin(ctx, ask{c: c, objects: true})) }

	// Three of ten for objects: two listings and an insert.
	g.Expect(object(classRead)).To(Succeed())
	g.Expect(object(classRead)).To(Succeed())
	g.Expect(object(classWrite)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start), "objects use their share at once")
	// The instances' reads still find the rest of the reads' room at once.
	for range 5 {
		g.Expect(w.WaitRead(ctx)).To(Succeed())
	}
	g.Expect(clk.Now()).To(Equal(start), "instances are not kept waiting by the objects before them")
	// The fourth request for objects waits for the first to leave the window.
	g.Expect(object(classRead)).To(Succeed())
	g.Expect(clk.Now()).To(Equal(start.Add(time.Minute)), "objects wait once their share is spent")

	// The share follows the pacing's: a larger one admits more at once.
	clk.now = clk.now.Add(time.Minute)
	start = clk.Now()
	split.Set(0.6)
	for range 6 {
		g.Expect(object(classRead)).To(Succeed())
	}
	g.Expect(clk.Now()).To(Equal(start))

	g.Expect(NewSplit(3).Objects()).To(Equal(1.0), "a share is at most the whole window")
	g.Expect(NewSplit(-1).Objects()).To(Equal(0.0))
	g.Expect((*Split)(nil).Objects()).To(Equal(1.0), "no split caps nothing")
	g.Expect(NewWindow(10, time.Minute, WithSplit(NewSplit(0))).objectCapLocked()).To(Equal(1), "objects always get one request a period")
}

func TestObjectsAreMarkedByContextOrTransport(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := NewWindow(10, time.Minute, WithClock(clk.Now, clk.Sleep), WithSplit(NewSplit(0.2)))
	tr := NewTransport(srv.Client().Transport, w)
	get := func(rt http.RoundTripper, ctx context.Context) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := rt.RoundTrip(req)
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
	}
	ctx := context.Background()
	get(tr, ForObjects(ctx))
	get(ObjectsTransport(tr), ctx)
	get(tr, ctx)
	w.mu.Lock()
	g.Expect(w.objects).To(HaveLen(2), "a reconcile's context and the connectors' transport mark their requests")
	w.mu.Unlock()
	g.Expect(PerMinuteOf(ObjectsTransport(tr))).To(Equal(10))
	g.Expect(ObjectsTransport(nil)).To(BeNil())

	// A third request for objects waits: two of ten is their share.
	start := clk.Now()
	get(tr, ForObjects(ctx))
	g.Expect(clk.Now()).To(Equal(start.Add(time.Minute)))
}

// While a write made for objects waits for their share, their reads leave
// it the share's free events: a burst of inserts is not kept waiting by the
// listings that watch unchanged objects. Instances' requests are not
// concerned.
func TestObjectsWritesGoBeforeTheirReads(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	// Five of ten for objects.
	w := NewWindow(10, time.Minute, WithClock(clk.Now, clk.Sleep), WithSplit(NewSplit(0.5)))
	read, write := ask{c: classRead, objects: true}, ask{c: classWrite, objects: true}
	admitted := func(a ask) bool {
		done, d, err := w.admit(a)
		g.Expect(err).NotTo(HaveOccurred())
		if d > 0 {
			return false
		}
		done()
		return true
	}
	for range 3 {
		g.Expect(admitted(read)).To(BeTrue())
	}
	// One write waits: a read may take one of the two free events, not both.
	w.mu.Lock()
	w.objectWrites = 1
	w.mu.Unlock()
	g.Expect(admitted(read)).To(BeTrue())
	g.Expect(admitted(read)).To(BeFalse(), "the last free event is the waiting write's")
	g.Expect(admitted(ask{c: classRead})).To(BeTrue(), "an instance's read is not concerned")
	g.Expect(admitted(write)).To(BeTrue())
	// As many writes wait as the share holds, with room left for some of
	// them: a read asks again after writesFirstTick, when they have gone.
	w = NewWindow(10, time.Minute, WithClock(clk.Now, clk.Sleep), WithSplit(NewSplit(0.5)))
	g.Expect(admitted(read)).To(BeTrue())
	g.Expect(admitted(read)).To(BeTrue())
	w.mu.Lock()
	w.objectWrites = 5
	w.mu.Unlock()
	_, d, _ := w.admit(read)
	g.Expect(d).To(Equal(writesFirstTick))
	w.mu.Lock()
	w.objectWrites = 0
	w.mu.Unlock()
	g.Expect(admitted(read)).To(BeTrue(), "no write waits: the share's room is the read's")
}

// A write made for objects is counted while it waits for their share, and
// no longer once admitted.
func TestAWaitingObjectWriteIsCounted(t *testing.T) {
	g := NewWithT(t)
	slept := make(chan struct{})
	wake := make(chan struct{})
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	sleep := func(_ context.Context, d time.Duration) error {
		slept <- struct{}{}
		<-wake
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
		return nil
	}
	w := NewWindow(2, time.Minute, WithClock(clock, sleep), WithSplit(NewSplit(0.5)))
	ctx := ForObjects(context.Background())
	g.Expect(ended(w.begin(ctx, ask{c: classWrite, objects: true}))).To(Succeed())
	errs := make(chan error)
	go func() { errs <- ended(w.begin(ctx, ask{c: classWrite, objects: true})) }()
	<-slept
	w.mu.Lock()
	g.Expect(w.objectWrites).To(Equal(1), "counted while it waits")
	w.mu.Unlock()
	close(wake)
	g.Expect(<-errs).To(Succeed())
	w.mu.Lock()
	defer w.mu.Unlock()
	g.Expect(w.objectWrites).To(BeZero(), "no longer once admitted")
}

// A split counts the writes made for objects that its windows admitted in
// the last minute: not their reads, nor the instances' writes.
func TestASplitCountsTheObjectsWrites(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	split := NewSplit(0.5)
	w := NewWindow(100, time.Minute, WithClock(clk.Now, clk.Sleep), WithSplit(split))
	ctx := context.Background()
	for _, a := range []ask{{c: classWrite, objects: true}, {c: classWrite, objects: true}, {c: classRead, objects: true}, {c: classWrite}} {
		g.Expect(ended(w.begin(ctx, a))).To(Succeed())
	}
	g.Expect(split.Writes(clk.Now())).To(Equal(2))
	g.Expect(split.Writes(clk.Now().Add(59 * time.Second))).To(Equal(2))
	g.Expect(split.Writes(clk.Now().Add(time.Minute))).To(BeZero(), "a minute later")
	g.Expect((*Split)(nil).Writes(clk.Now())).To(BeZero())

	// A team's window is capped by the split, but its writes spend its own
	// quota: they are not the platform's.
	split = NewSplit(0.5)
	team := NewWindow(100, time.Minute, WithClock(clk.Now, clk.Sleep), WithSplitCap(split))
	g.Expect(ended(team.begin(ctx, ask{c: classWrite, objects: true}))).To(Succeed())
	g.Expect(split.Writes(clk.Now())).To(BeZero(), "a team's write is not told to the split")
	split.Set(0.01)
	_, wait, err := team.admit(ask{c: classWrite, objects: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(wait).To(BeNumerically(">", 0), "a team's window is capped by the split: its share is 1 of 100, and it is spent")
}
