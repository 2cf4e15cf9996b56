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

// Package budget keeps the provider's calls to the Cloud SQL Admin API within a
// per-minute request budget for each quota they spend (one Window that the
// platform's configurations share, one per tenant configuration: Windows;
// in the platform's, a share for each namespace's objects: shares.go), and
// retries the answers that
// say "try again later" (429 and 5xx) with exponential backoff and jitter, so that
// short storms never surface to users and long ones never exhaust the project's quota.
package budget

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/pause"
)

// A Window admits at most Limit events in any sliding window of Period. Unlike a
// token bucket, whose first window admits its burst on top of its rate, it never
// exceeds the quota it mirrors ("Queries per minute per user").
//
// Its reserves cap what each class of events may use of a period, not what
// the whole window holds when they come: reads may be at most limit-reserve
// of the period's events, so that writes always find the write reserve; reads
// and writes together at most limit-admission, so that admission lookups
// always find theirs; and admission lookups at most admission. A burst of
// writes therefore never keeps out the reads that see it done, as long as the
// window has room.
type Window struct {
	limit  int
	period time.Duration
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error

	// reserve is how many events of a window only writes and admission
	// lookups may use; admission how many of those only admission lookups may.
	reserve   int
	admission int

	// minSkew and maxSkew bound how much longer than period an event is
	// counted (WithArrivalSkew); both 0: exactly period.
	minSkew, maxSkew time.Duration

	mu   sync.Mutex
	ring []time.Time // the admission times of the last `limit` events, oldest at next
	next int
	// others is othersLocked's answer, reused: a fleet's waiters ask
	// several times a second, and a new slice of a whole window each time
	// was gigabytes of garbage an hour.
	others []time.Time
	// reads are the admission times of the reads of the last period, oldest
	// first. They are not part of a Record: a process that restores one
	// counts what another admitted as writes, whose cap is the looser.
	reads []time.Time
	// flying counts the requests in flight by admission time (UnixNano),
	// and took how long each request of the last period took from its
	// admission to its end (WithArrivalSkew).
	flying map[int64]int
	took   []tookEvent
	// foreign is the newest admission that another process made (merged
	// from a record, or what a restored one may have left unrecorded):
	// this process never saw how late those arrived, so while any is in
	// the window, the window counts every event for the most skew.
	foreign time.Time

	// burst bounds how many events any second admits (0: no bound), so that
	// what a killed process admitted after its last Record is bounded too;
	// recent holds the last burst admission times, oldest at rnext.
	burst  int
	recent []time.Time
	rnext  int

	// perKey bounds how many admission lookups one key (a namespace) may
	// make in a period (0: no bound); admissions are the admission lookups of
	// the last period, oldest first, at most `admission` of them.
	perKey     int
	admissions []keyedEvent

	// perNamespace bounds how many requests made for the objects of one
	// namespace (ForNamespace) a period may hold, and namespaces how many
	// those of every namespace together may (0: no bound; shares.go);
	// spent are those requests of the last period, oldest first.
	perNamespace, namespaces int
	oneShare, allShare       float64
	spent                    []keyedEvent
	// split, when not nil, caps the requests made for objects (ForObjects)
	// at the share of each period it holds (objects.go); objects are their
	// admission times within the last period, oldest first.
	split   *Split
	objects []time.Time
	// splitWrites says whether the objects' writes this window admits are
	// told to split (WithSplit, not WithSplitCap).
	splitWrites bool
	// objectWrites counts the writes made for objects (inserts, deletes,
	// password changes) that wait for the objects' share: while any does,
	// the objects' reads leave them the share's free events, so that a burst
	// of new databases and users is not kept waiting by the listings that
	// keep watch on the old ones (objects.go).
	objectWrites int
	// comeBack is, for each namespace, when the last object that was
	// refused for its share was told to come back (shares.go).
	comeBack map[string]time.Time

	// unrecordedMax, when not 0, bounds the events admitted after the last
	// saved record (BoundUnrecorded) instead of the burst bound, for as long
	// as records are saved; saveNow asks for one.
	unrecordedMax int
	saveNow       func()
	// admitted counts the events this window admitted itself; recorded how
	// many of them the last saved record holds, saved at savedAt.
	admitted, recorded uint64
	savedAt            time.Time
}

// A keyedEvent is an event that a Window admitted for a key: an admission
// lookup, or a request made for a namespaced object (ForNamespace).
type keyedEvent struct {
	at  time.Time
	key string
}

// WithBurst admits at most n events in any second.
func WithBurst(n int) WindowOption {
	return func(w *Window) {
		w.burst = max(n, 0)
		w.recent = make([]time.Time, w.burst)
	}
}

// WithWriteReserve keeps share (0 to 0.9) of every window for writes: reads wait
// once the rest is spent.
func WithWriteReserve(share float64) WindowOption {
	return func(w *Window) { w.reserve = int(float64(w.limit) * min(max(share, 0), 0.9)) }
}

// WithAdmissionReserve keeps share (0 to 0.5) of every window for admission
// lookups (WaitAdmission); it is part of the write reserve, which grows to
// hold it when smaller.
func WithAdmissionReserve(share float64) WindowOption {
	return func(w *Window) {
		w.admission = int(float64(w.limit) * min(max(share, 0), 0.5))
		w.reserve = max(w.reserve, w.admission)
	}
}

// WithAdmissionPerKey lets the admission lookups of one key (WaitAdmissionBy,
// a namespace) use at most share (0 to 1) of the admission reserve in any
// period, and at least one. Lookups without a key (the cluster-scoped kind's,
// which the platform team creates) are bounded only by the reserve.
func WithAdmissionPerKey(share float64) WindowOption {
	return func(w *Window) { w.perKey = max(1, int(float64(w.admission)*min(max(share, 0), 1))) }
}

// A tookEvent is how long a request admitted at at took to end.
type tookEvent struct {
	at   time.Time
	took time.Duration
}

// WithArrivalSkew counts each event for longer than the period: as long
// again as the requests admitted within the period took to end (or have
// taken so far, in flight), at least least and at most most. A request is
// counted here when it is admitted, and by Cloud SQL when it arrives, which
// is before its answer: when one admitted earlier arrives later than the
// next (a body to send, a connection to open, a busy machine), a window of
// exactly Cloud SQL's minute would let it count one request too many (a
// 429); one lengthened by the longest such delay never does. Requests that
// the caller ends at once (Wait, WaitRead) took nothing.
func WithArrivalSkew(least, most time.Duration) WindowOption {
	return func(w *Window) { w.minSkew, w.maxSkew = least, max(least, most) }
}

// A WindowOption configures a Window.
type WindowOption func(*Window)

// WithClock replaces the wall clock and sleeping, for tests.
func WithClock(now func() time.Time, sleep func(context.Context, time.Duration) error) WindowOption {
	return func(w *Window) { w.now, w.sleep = now, sleep }
}

// NewWindow admits at most limit events per period.
func NewWindow(limit int, period time.Duration, o ...WindowOption) *Window {
	if limit < 1 {
		limit = 1
	}
	w := &Window{limit: limit, period: period, now: time.Now, sleep: pause.For, ring: make([]time.Time, limit), flying: map[int64]int{}}
	for _, fn := range o {
		fn(w)
	}
	return w
}

// Bounds of the arrival skew of PerMinute's windows (WithArrivalSkew): a
// request that took longer than maxArrivalSkew is counted as if it took that
// long, since Cloud SQL's minute starts when it arrives, surely within that
// time of its admission on a machine that is not starved. Another process's
// requests, whose times taken this one never saw, count for the most: a new
// leader does not know how late a killed one's last requests arrived.
const (
	minArrivalSkew = 100 * time.Millisecond
	maxArrivalSkew = 5 * time.Second
)

// PerMinute admits at most n requests in any minute (lengthened by how late
// they may have arrived, WithArrivalSkew), DefaultWriteReserve of them for
// writes and admission lookups only, and DefaultAdmissionReserve for
// admission lookups only, which may use no more (DefaultAdmissionPerNamespace
// of that for one namespace); and at most a twentieth of them in any second
// (9 of 180: three times the average rate). Options o come after these (the
// platform's window adds WithNamespaceShares).
func PerMinute(n int, o ...WindowOption) *Window {
	return NewWindow(n, time.Minute, append([]WindowOption{WithArrivalSkew(minArrivalSkew, maxArrivalSkew), WithWriteReserve(DefaultWriteReserve),
		WithAdmissionReserve(DefaultAdmissionReserve), WithAdmissionPerKey(DefaultAdmissionPerNamespace), WithBurst(max(1, n/20))}, o...)...)
}

// PerMinute is the window's limit per minute.
func (w *Window) PerMinute() int {
	if w.period <= 0 {
		return 0
	}
	return int(int64(w.limit) * int64(time.Minute) / int64(w.period))
}

// A class is what a window's request is for: each has its own cap.
type class int

const (
	classWrite class = iota
	classRead
	classLookup
)

// An ask is a request for admission: its class, and whose it is.
type ask struct {
	c class
	// key is the namespace of the object that an admission lookup, or a
	// controller's request, is for (ForAdmissionBy, ForNamespace); "" for a
	// cluster-scoped object, the platform's.
	key string
	// objects says that the request is made for an instance's objects
	// (ForObjects), which the window's Split caps.
	objects bool
}

// begin blocks until a may be sent, and counts it (see Begin).
func (w *Window) begin(ctx context.Context, a ask) (func(), error) {
	if !a.objects || a.c != classWrite || w.split == nil {
		return w.waitFor(ctx, func() (func(), time.Duration, error) { return w.admit(a) })
	}
	// A write made for objects that has to wait is counted while it waits.
	waiting := false
	defer func() {
		if waiting {
			w.mu.Lock()
			w.objectWrites--
			w.mu.Unlock()
		}
	}()
	return w.waitFor(ctx, func() (func(), time.Duration, error) {
		done, d, err := w.admit(a)
		if d > 0 && !waiting {
			waiting = true
			w.mu.Lock()
			w.objectWrites++
			w.mu.Unlock()
		}
		return done, d, err
	})
}

// Begin blocks until a write may be sent, and counts it; it returns the
// context's error if the context ends first. The caller calls done once the
// request has ended (its answer or its error came), which says how late it
// may have arrived (WithArrivalSkew). A write leaves the admission reserve
// alone.
func (w *Window) Begin(ctx context.Context) (done func(), err error) {
	return w.begin(ctx, ask{c: classWrite})
}

// BeginRead is Begin for a read, which leaves the window's write reserve
// alone.
func (w *Window) BeginRead(ctx context.Context) (done func(), err error) {
	return w.begin(ctx, ask{c: classRead})
}

// BeginShared is Begin for a read that serves admission checks as well as
// the controllers (a one-page listing of a project, which answers every name
// check while it is recent): it is a read while reads have room, and an
// admission lookup of no namespace when they have not, so that the listing
// that sees a burst of writes done, and answers the checks meanwhile, is not
// kept out by those writes.
func (w *Window) BeginShared(ctx context.Context) (done func(), err error) {
	return w.waitFor(ctx, func() (func(), time.Duration, error) {
		done, d, _ := w.admit(ask{c: classRead})
		if d <= 0 {
			return done, 0, nil
		}
		done, e, _ := w.admit(ask{c: classLookup})
		return done, min(d, e), nil
	})
}

// BeginAdmissionBy is Begin for an admission webhook's lookup for key (the
// namespace of the object under admission, empty for a cluster-scoped one).
// Admission lookups use the admission reserve and no more of the window, so
// that they cannot spend the controllers' share, and those of one key at most
// its share of the reserve (WithAdmissionPerKey). Without an admission reserve
// they count as writes.
func (w *Window) BeginAdmissionBy(ctx context.Context, key string) (done func(), err error) {
	return w.begin(ctx, ask{c: classLookup, key: key})
}

// Wait is Begin for a request that ends at once.
func (w *Window) Wait(ctx context.Context) error { return ended(w.Begin(ctx)) }

// WaitRead is BeginRead for a request that ends at once.
func (w *Window) WaitRead(ctx context.Context) error { return ended(w.BeginRead(ctx)) }

// WaitShared is BeginShared for a request that ends at once.
func (w *Window) WaitShared(ctx context.Context) error { return ended(w.BeginShared(ctx)) }

// WaitAdmission is BeginAdmissionBy of no namespace for a request that ends
// at once.
func (w *Window) WaitAdmission(ctx context.Context) error { return w.WaitAdmissionBy(ctx, "") }

// WaitAdmissionBy is BeginAdmissionBy for a request that ends at once.
func (w *Window) WaitAdmissionBy(ctx context.Context, key string) error {
	return ended(w.BeginAdmissionBy(ctx, key))
}

func ended(done func(), err error) error {
	if err == nil {
		done()
	}
	return err
}

// errSpent says why a call was not sent: waiting for the budget would outlast
// the caller, which is better told at once than at its deadline.
const errSpent = "the Cloud SQL request budget (cloudsql.requests_per_minute = %d) has no request free for this call for the next %s, " +
	"longer than it may wait; if this persists, raise cloudsql.requests_per_minute within the project's quota, " +
	"or make fewer calls (reconcile.observe = \"list\", a longer reconcile.poll_interval)"

// ErrSpent is what Wait and WaitRead return when the budget cannot admit a call
// before its context's deadline (errors.Is).
var ErrSpent = errors.New("request budget spent")

type spentError struct{ msg string }

func (e spentError) Error() string        { return e.msg }
func (e spentError) Is(target error) bool { return target == ErrSpent }

// waitFor asks admit until it admits (0), sleeping as long as it says
// between, or refuses (an error, returned at once).
func (w *Window) waitFor(ctx context.Context, admit func() (func(), time.Duration, error)) (func(), error) {
	for {
		done, d, err := admit()
		if err != nil {
			return nil, err
		}
		if d <= 0 {
			return done, nil
		}
		// Deadlines are on the wall clock, whatever clock the window counts by.
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return nil, spentError{msg: fmt.Sprintf(errSpent, w.limit, d.Round(time.Second))}
		}
		if err := w.sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

// admit admits a now if the window and the caps of its class and key allow
// it, and returns what ends it; or returns how long to wait before asking
// again; or refuses it (a namespace that spent its share: shareLocked).
func (w *Window) admit(a ask) (func(), time.Duration, error) {
	c, key := a.c, a.key
	if c == classLookup && w.admission == 0 {
		c = classWrite
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	w.dropLocked(now)
	p := w.periodLocked(now)
	// A lookup that counts as a write is still a lookup: the namespace
	// shares are the controllers'.
	namespaced := a.c != classLookup && key != "" && w.perNamespace > 0
	if namespaced {
		if err := w.shareLocked(now, p, key); err != nil {
			return nil, 0, err
		}
	}
	var d time.Duration
	switch c {
	case classLookup:
		// The admission reserve, and key's share of it.
		d = capWait(now, p, keyedTimes(w.admissions, now, p, ""), w.admission)
		if key != "" && w.perKey > 0 {
			d = max(d, capWait(now, p, keyedTimes(w.admissions, now, p, key), w.perKey))
		}
	default:
		// Reads and writes together leave the admission reserve.
		d = capWait(now, p, w.othersLocked(now, p), w.limit-w.admission)
		if c == classRead {
			// Reads leave the write reserve.
			d = max(d, capWait(now, p, within(w.reads, now, p), w.limit-w.reserve))
		}
		if a.objects && w.split != nil {
			// Objects leave the instances what the split does not give
			// them.
			d = max(d, capWait(now, p, within(w.objects, now, p), w.objectCapLocked()))
			if c == classRead && w.objectWrites > 0 {
				d = max(d, w.writesFirstLocked(now, p))
			}
		}
	}
	if d > 0 {
		return nil, d, nil
	}
	if d = w.admitLocked(now, p); d > 0 {
		return nil, d, nil
	}
	switch c {
	case classRead:
		w.reads = append(w.reads, now)
	case classLookup:
		w.admissions = append(w.admissions, keyedEvent{at: now, key: key})
	}
	if namespaced {
		w.spent = append(w.spent, keyedEvent{at: now, key: key})
	}
	if a.objects && c != classLookup {
		w.objects = append(w.objects, now)
		if c == classWrite && w.split != nil && w.splitWrites {
			w.split.wrote(now)
		}
	}
	if w.maxSkew == 0 {
		return func() {}, 0, nil
	}
	w.flying[now.UnixNano()]++
	var once sync.Once
	return func() { once.Do(func() { w.end(now) }) }, 0, nil
}

// end records that the request admitted at at ended now.
func (w *Window) end(at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := at.UnixNano()
	if w.flying[k]--; w.flying[k] <= 0 {
		delete(w.flying, k)
	}
	w.took = append(w.took, tookEvent{at: at, took: w.now().Sub(at)})
}

// maxPeriod is the longest that an event is counted.
func (w *Window) maxPeriod() time.Duration { return w.period + w.maxSkew }

// periodLocked is how long an event is counted now: the period, lengthened
// by the longest time that a request admitted within the longest period
// took, or has taken so far (WithArrivalSkew).
func (w *Window) periodLocked(now time.Time) time.Duration {
	if w.maxSkew == 0 {
		return w.period
	}
	if !w.foreign.IsZero() && now.Sub(w.foreign) < w.maxPeriod() {
		return w.maxPeriod()
	}
	skew := w.minSkew
	for _, t := range w.took {
		skew = max(skew, t.took)
	}
	for k := range w.flying {
		skew = max(skew, now.Sub(time.Unix(0, k)))
	}
	return w.period + min(skew, w.maxSkew)
}

// dropLocked forgets the reads, admission lookups, namespaces' requests and
// times taken of requests admitted more than the longest period ago.
func (w *Window) dropLocked(now time.Time) {
	longest := w.maxPeriod()
	drop := 0
	for drop < len(w.reads) && now.Sub(w.reads[drop]) >= longest {
		drop++
	}
	w.reads = w.reads[drop:]
	drop = 0
	for drop < len(w.admissions) && now.Sub(w.admissions[drop].at) >= longest {
		drop++
	}
	w.admissions = w.admissions[drop:]
	drop = 0
	for drop < len(w.spent) && now.Sub(w.spent[drop].at) >= longest {
		drop++
	}
	w.spent = w.spent[drop:]
	drop = 0
	for drop < len(w.objects) && now.Sub(w.objects[drop]) >= longest {
		drop++
	}
	w.objects = w.objects[drop:]
	drop = 0
	for drop < len(w.took) && now.Sub(w.took[drop].at) >= longest {
		drop++
	}
	w.took = w.took[drop:]
}

// within are the times of times (oldest first) less than p before now.
func within(times []time.Time, now time.Time, p time.Duration) []time.Time {
	i := 0
	for i < len(times) && now.Sub(times[i]) >= p {
		i++
	}
	return times[i:]
}

// keyedTimes are when the events of key (all of them for "") less than p
// before now were admitted, oldest first.
func keyedTimes(events []keyedEvent, now time.Time, p time.Duration, key string) []time.Time {
	out := make([]time.Time, 0, len(events))
	for _, e := range events {
		if now.Sub(e.at) < p && (key == "" || e.key == key) {
			out = append(out, e.at)
		}
	}
	return out
}

// capWait is how long until fewer than most of times (oldest first, all
// within period of now) are left in the period: 0 when they are already.
func capWait(now time.Time, period time.Duration, times []time.Time, most int) time.Duration {
	if most < 1 {
		most = 1
	}
	if len(times) < most {
		return 0
	}
	return period - now.Sub(times[len(times)-most])
}

// othersLocked are the admission times of the requests less than p before
// now that are not admission lookups, oldest first. The slice is the
// window's own, good until the lock is released.
func (w *Window) othersLocked(now time.Time, p time.Duration) []time.Time {
	var lookups map[int64]int
	for _, e := range w.admissions {
		if now.Sub(e.at) < p {
			if lookups == nil {
				lookups = map[int64]int{}
			}
			lookups[e.at.UnixNano()]++
		}
	}
	out := w.others[:0]
	for i := range w.limit {
		t := w.ring[(w.next+i)%w.limit]
		if t.IsZero() || now.Sub(t) >= p {
			continue
		}
		if k := t.UnixNano(); lookups[k] > 0 {
			lookups[k]--
			continue
		}
		out = append(out, t)
	}
	w.others = out
	return out
}

// admitLocked records an event now if the window, counting events for p, has
// room for it and the bounds of a burst allow it, and returns 0, or returns
// how long to wait. The class caps are the caller's.
func (w *Window) admitLocked(now time.Time, p time.Duration) time.Duration {
	// The ring holds the last events oldest first from next: the oldest must
	// have left the window for a slot to be free.
	oldest := w.ring[w.next]
	if !oldest.IsZero() && now.Sub(oldest) < p {
		return p - now.Sub(oldest)
	}
	switch {
	case w.recordKeepsUpLocked(now):
		// What a crash could leave unrecorded is bounded by count: a burst
		// goes at the quota's pace, with a save every unrecordedMax events.
		if w.admitted-w.recorded >= uint64(w.unrecordedMax) {
			w.saveNow()
			return recordWait
		}
	case w.burst > 0:
		if o := w.recent[w.rnext]; !o.IsZero() && now.Sub(o) < time.Second {
			return time.Second - now.Sub(o)
		}
	}
	w.pushLocked(now)
	w.admitted++
	return 0
}

// RecordFresh is how recent the last saved record must be for the window to
// bound its unrecorded events by count (BoundUnrecorded) rather than by the
// burst bound: a save a second, and one that takes as long again.
const RecordFresh = 2 * time.Second

// recordWait is how long an event waits for the save that BoundUnrecorded's
// bound asked for.
const recordWait = 20 * time.Millisecond

// BoundUnrecorded makes the window admit no more events that no saved record
// holds (Recorded says which are saved) than the burst bound admits in
// RecordFresh (18 at 180 a minute), asking saveNow, which must not block, for
// a save when it would admit more. While records are saved (one within
// RecordFresh), this count, not the burst bound, is what bounds the events a
// crash may leave unrecorded: a burst of writes goes at the quota's pace, and
// a new process counts as many unrecorded as before (Restore). When saves
// lag, the burst bound applies again.
func (w *Window) BoundUnrecorded(saveNow func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.burst == 0 {
		// No bound to lift: a new process counts a whole window.
		return
	}
	w.unrecordedMax, w.saveNow = w.burst*int(math.Ceil(RecordFresh.Seconds())), saveNow
}

// Recorded says that r, a Record of this window, was saved, or found saved,
// just now.
func (w *Window) Recorded(r Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recorded = max(w.recorded, r.admitted)
	w.savedAt = w.now()
}

func (w *Window) recordKeepsUpLocked(now time.Time) bool {
	return w.unrecordedMax > 0 && !w.savedAt.IsZero() && now.Sub(w.savedAt) <= RecordFresh
}

// unrecordedBound is how many events a process may have admitted after its
// last saved record, given that it saved at most unrecorded ago: the count
// bound, or the burst bound for that long, whichever is larger.
func (w *Window) unrecordedBound(unrecorded time.Duration) int {
	if w.burst == 0 {
		return w.limit // and BoundUnrecorded set no count
	}
	return max(w.unrecordedMax, w.burst*int(math.Ceil(unrecorded.Seconds())))
}

func (w *Window) pushLocked(t time.Time) {
	w.ring[w.next] = t
	w.next = (w.next + 1) % w.limit
	if w.burst > 0 {
		w.recent[w.rnext] = t
		w.rnext = (w.rnext + 1) % w.burst
	}
}

// idle reports whether the window admitted nothing within its longest period
// and has no request in flight: it then admits as a new one would.
func (w *Window) idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	// The newest admission is the last before next, times merged from
	// another clock included (ahead of this one, they keep it busy).
	newest := w.ring[(w.next+w.limit-1)%w.limit]
	return len(w.flying) == 0 && (newest.IsZero() || w.now().Sub(newest) >= w.maxPeriod())
}

// A Record is what a Window admitted in its last period, kept so that a new
// process (after a crash, a restart, a new leader) does not spend again what
// the previous one spent (Restore).
type Record struct {
	// Written is when the record was taken.
	Written time.Time `json:"written"`
	// Admitted are the admission times within a period before Written, oldest
	// first.
	Admitted []time.Time `json:"admitted"`
	// Lookups are the admission lookups among them, with the namespace each
	// was for, so that every replica that merges the record keeps the
	// admission reserve and each namespace's share of it across all of them.
	Lookups []Lookup `json:"lookups,omitempty"`
	// Namespaced are the controllers' requests among them that were made
	// for namespaced objects (ForNamespace), with their namespace, so that a
	// new leader keeps each namespace's share of the window as Lookups keep
	// the admission shares.
	Namespaced []Lookup `json:"namespaced,omitempty"`
	// admitted is how many events the window had admitted itself when the
	// record was taken (BoundUnrecorded counts what no saved record holds).
	admitted uint64
}

// A Lookup is an admission lookup, or a request made for a namespaced
// object, in a Record: when it was admitted, and for which key (a
// namespace; empty for a lookup of a cluster-scoped object).
type Lookup struct {
	At  time.Time `json:"at"`
	Key string    `json:"key,omitempty"`
}

// Record returns what the window admitted within its period.
func (w *Window) Record() Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	r := Record{Written: now, admitted: w.admitted}
	for i := range w.limit {
		t := w.ring[(w.next+i)%w.limit]
		if !t.IsZero() && now.Sub(t) < w.maxPeriod() {
			r.Admitted = append(r.Admitted, t)
		}
	}
	r.Lookups = keyedRecord(w.admissions, now, w.maxPeriod())
	r.Namespaced = keyedRecord(w.spent, now, w.maxPeriod())
	return r
}

// keyedRecord is events as a Record holds them, less those more than
// longest before now.
func keyedRecord(events []keyedEvent, now time.Time, longest time.Duration) []Lookup {
	var out []Lookup
	for _, e := range events {
		if now.Sub(e.at) < longest {
			out = append(out, Lookup{At: e.at, Key: e.key})
		}
	}
	return out
}

// Merge counts in the window what another process admitted (its record, or
// the record several processes share), each admission once: an admission time
// that the window already holds (as often) is not counted again, so merging a
// record that holds this window's own admissions, or the same record twice,
// changes nothing. Admissions that left the period are ignored.
func (w *Window) Merge(r Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	w.mergeLocked(now, r.Admitted)
	w.admissions = w.mergeKeyedLocked(now, w.admissions, r.Lookups)
	w.spent = w.mergeKeyedLocked(now, w.spent, r.Namespaced)
}

// mergeKeyedLocked returns events (the admission lookups, or the
// namespaces' requests) with those of in that it does not hold as often
// already (the same time and key), in time order, as mergeLocked does for
// admissions.
func (w *Window) mergeKeyedLocked(now time.Time, events []keyedEvent, in []Lookup) []keyedEvent {
	held := map[keyedEvent]int{}
	for _, e := range events {
		held[keyedEvent{at: time.Unix(0, e.at.UnixNano()), key: e.key}]++
	}
	added := false
	for _, l := range in {
		e := keyedEvent{at: time.Unix(0, l.At.UnixNano()), key: l.Key}
		if now.Sub(l.At) >= w.maxPeriod() {
			continue
		}
		if held[e] > 0 {
			held[e]--
			continue
		}
		events = append(events, e)
		added = true
	}
	if added {
		slices.SortStableFunc(events, func(a, b keyedEvent) int { return a.at.Compare(b.at) })
	}
	return events
}

// Restore counts in the window what a previous process admitted (Merge), and
// as many more as it may have admitted unrecorded (BoundUnrecorded's count,
// or the burst bound for unrecorded, the longest it may have run after the
// record was written, whichever is more), as if admitted just now, since
// nobody knows when it stopped; without either bound, a whole window. It
// merges with what the window holds already, so a replica that takes over
// from another may call it at any time.
func (w *Window) Restore(r Record, unrecorded time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	w.mergeLocked(now, r.Admitted)
	w.admissions = w.mergeKeyedLocked(now, w.admissions, r.Lookups)
	w.spent = w.mergeKeyedLocked(now, w.spent, r.Namespaced)
	for range min(w.unrecordedBound(unrecorded), w.limit) {
		w.pushLocked(now)
	}
	if !r.Written.IsZero() {
		// A process ran before: what it left unrecorded is its own, of
		// which this one knows no more than of what it recorded.
		w.foreign = now
	}
}

// mergeLocked adds to the ring the times of in that it does not hold as often
// already, and keeps the ring in order, oldest first from next, as admit
// expects. Times are compared by their wall clock: a record read back holds
// no monotonic reading.
func (w *Window) mergeLocked(now time.Time, in []time.Time) {
	held := map[int64]int{}
	var newest time.Time
	all := make([]time.Time, 0, w.limit+len(in))
	for i := range w.limit {
		t := w.ring[(w.next+i)%w.limit]
		if !t.IsZero() && now.Sub(t) < w.maxPeriod() {
			all = append(all, t)
			held[t.UnixNano()]++
		}
	}
	added := false
	for _, t := range in {
		// A time ahead of this clock (another node's) counts from its own
		// time, which keeps it longer: never less than it should.
		if t.IsZero() || now.Sub(t) >= w.maxPeriod() || t.Sub(now) >= w.maxPeriod() {
			continue
		}
		if k := t.UnixNano(); held[k] > 0 {
			held[k]--
			continue
		}
		all = append(all, t.Round(0))
		added = true
		newest = later(newest, t.Round(0))
	}
	if !added {
		return
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Before(all[j]) })
	if len(all) > w.limit {
		all = all[len(all)-w.limit:]
	}
	if !newest.Before(all[0]) {
		// Something of another process's is still counted (this window's
		// own admissions that its ring no longer holds come back older
		// than all it holds, and leave again).
		w.foreign = later(w.foreign, newest)
	}
	clear(w.ring)
	copy(w.ring[w.limit-len(all):], all)
	w.next = 0
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
