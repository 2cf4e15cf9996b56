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
// platform's configurations share, one per tenant configuration: Windows),
// and retries the answers that
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

	mu   sync.Mutex
	ring []time.Time // the admission times of the last `limit` events, oldest at next
	next int
	// reads are the admission times of the reads of the last period, oldest
	// first. They are not part of a Record: a process that restores one
	// counts what another admitted as writes, whose cap is the looser.
	reads []time.Time

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
	admissions []admissionEvent

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

// An admissionEvent is an admission lookup that a Window admitted.
type admissionEvent struct {
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

// DefaultWriteReserve is the share of a window that reads leave to writes, so that
// creates, updates, deletes and password changes keep a share of the quota however
// much there is to poll.
const DefaultWriteReserve = 0.2

// WithWriteReserve keeps share (0 to 0.9) of every window for writes: reads wait
// once the rest is spent.
func WithWriteReserve(share float64) WindowOption {
	return func(w *Window) { w.reserve = int(float64(w.limit) * min(max(share, 0), 0.9)) }
}

// DefaultAdmissionReserve is the share of a window that only the admission
// webhook's lookups may use, so that a check of a new PostgresqlInstance's name
// finds a request free however busy the controllers are.
const DefaultAdmissionReserve = 0.05

// WithAdmissionReserve keeps share (0 to 0.5) of every window for admission
// lookups (WaitAdmission); it is part of the write reserve, which grows to
// hold it when smaller.
func WithAdmissionReserve(share float64) WindowOption {
	return func(w *Window) {
		w.admission = int(float64(w.limit) * min(max(share, 0), 0.5))
		w.reserve = max(w.reserve, w.admission)
	}
}

// DefaultAdmissionPerNamespace is the share of the admission reserve that the
// lookups of one namespace may use, so that one namespace's creates cannot
// leave every other's unchecked.
const DefaultAdmissionPerNamespace = 1.0 / 3

// WithAdmissionPerKey lets the admission lookups of one key (WaitAdmissionBy,
// a namespace) use at most share (0 to 1) of the admission reserve in any
// period, and at least one. Lookups without a key (the cluster-scoped kind's,
// which the platform team creates) are bounded only by the reserve.
func WithAdmissionPerKey(share float64) WindowOption {
	return func(w *Window) { w.perKey = max(1, int(float64(w.admission)*min(max(share, 0), 1))) }
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
	w := &Window{limit: limit, period: period, now: time.Now, sleep: sleepCtx, ring: make([]time.Time, limit)}
	for _, fn := range o {
		fn(w)
	}
	return w
}

// arrivalSkew lengthens the window that PerMinute mirrors. A request is counted
// here when it is admitted, and by Cloud SQL when it arrives: on a busy machine,
// with a body to send or a connection to open, one admitted earlier may arrive
// later than the next, and a window of exactly a minute would then let Cloud SQL
// count one request too many in its minute (a 429).
const arrivalSkew = 2 * time.Second

// PerMinute admits at most n requests in any minute (give or take arrivalSkew),
// DefaultWriteReserve of them for writes and admission lookups only, and
// DefaultAdmissionReserve for admission lookups only, which may use no more
// (DefaultAdmissionPerNamespace of that for one namespace); and at most a
// twentieth of them in any second (9 of 180: three times the average rate).
func PerMinute(n int) *Window {
	return NewWindow(n, time.Minute+arrivalSkew, WithWriteReserve(DefaultWriteReserve), WithAdmissionReserve(DefaultAdmissionReserve),
		WithAdmissionPerKey(DefaultAdmissionPerNamespace), WithBurst(max(1, n/20)))
}

// Wait blocks until a write may happen, and records it; it returns the context's
// error if the context ends first. A write leaves the admission reserve alone.
func (w *Window) Wait(ctx context.Context) error {
	return w.waitFor(ctx, func() time.Duration { return w.admit(classWrite) })
}

// WaitRead is Wait for a read, which leaves the window's write reserve alone.
func (w *Window) WaitRead(ctx context.Context) error {
	return w.waitFor(ctx, func() time.Duration { return w.admit(classRead) })
}

// WaitShared is Wait for a read that serves admission checks as well as the
// controllers (a one-page listing of a project, which answers every name
// check while it is recent): it is a read while reads have room, and an
// admission lookup of no namespace when they have not, so that the listing
// that sees a burst of writes done, and answers the checks meanwhile, is
// not kept out by those writes.
func (w *Window) WaitShared(ctx context.Context) error {
	return w.waitFor(ctx, func() time.Duration {
		d := w.admit(classRead)
		if d <= 0 {
			return 0
		}
		return min(d, w.admitAdmission(""))
	})
}

// A class is what a window's event is for: each has its own cap.
type class int

const (
	classWrite class = iota
	classRead
)

// WaitAdmission is Wait for an admission webhook's lookup of no namespace
// (see WaitAdmissionBy).
func (w *Window) WaitAdmission(ctx context.Context) error { return w.WaitAdmissionBy(ctx, "") }

// WaitAdmissionBy is Wait for an admission webhook's lookup for key (the
// namespace of the object under admission, empty for a cluster-scoped one).
// Admission lookups use the admission reserve and no more of the window, so
// that they cannot spend the controllers' share, and those of one key at most
// its share of the reserve (WithAdmissionPerKey). Without an admission reserve
// they count as writes.
func (w *Window) WaitAdmissionBy(ctx context.Context, key string) error {
	return w.waitFor(ctx, func() time.Duration { return w.admitAdmission(key) })
}

// admitAdmission records an admission lookup for key now if the admission
// reserve, key's share of it and the window allow it, and returns 0, or
// returns how long to wait before asking again.
func (w *Window) admitAdmission(key string) time.Duration {
	if w.admission == 0 {
		return w.admit(classWrite)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	drop := 0
	for drop < len(w.admissions) && now.Sub(w.admissions[drop].at) >= w.period {
		drop++
	}
	w.admissions = w.admissions[drop:]
	if len(w.admissions) >= w.admission {
		return w.period - now.Sub(w.admissions[0].at)
	}
	if key != "" && w.perKey > 0 {
		n := 0
		for _, e := range w.admissions {
			if e.key != key {
				continue
			}
			if n++; n >= w.perKey {
				// The oldest of key's lookups leaves first.
				return w.period - now.Sub(w.oldestLocked(key))
			}
		}
	}
	d := w.admitLocked(now)
	if d <= 0 {
		w.admissions = append(w.admissions, admissionEvent{at: now, key: key})
	}
	return d
}

// oldestLocked is when the oldest admission lookup of key in the period was
// admitted.
func (w *Window) oldestLocked(key string) time.Time {
	for _, e := range w.admissions {
		if e.key == key {
			return e.at
		}
	}
	return w.now()
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

// waitFor asks admit until it admits (0), sleeping as long as it says between.
func (w *Window) waitFor(ctx context.Context, admit func() time.Duration) error {
	for {
		d := admit()
		if d <= 0 {
			return nil
		}
		// Deadlines are on the wall clock, whatever clock the window counts by.
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return spentError{msg: fmt.Sprintf(errSpent, w.limit, d.Round(time.Second))}
		}
		if err := w.sleep(ctx, d); err != nil {
			return err
		}
	}
}

// admit records an event of class c now if the window and c's caps allow
// it, and returns 0, or returns how long to wait before asking again.
func (w *Window) admit(c class) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	drop := 0
	for drop < len(w.reads) && now.Sub(w.reads[drop]) >= w.period {
		drop++
	}
	w.reads = w.reads[drop:]
	// Reads and writes together leave the admission reserve.
	d := capWait(now, w.period, w.othersLocked(now), w.limit-w.admission)
	if c == classRead {
		// Reads leave the write reserve.
		d = max(d, capWait(now, w.period, w.reads, w.limit-w.reserve))
	}
	if d > 0 {
		return d
	}
	d = w.admitLocked(now)
	if d <= 0 && c == classRead {
		w.reads = append(w.reads, now)
	}
	return d
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

// othersLocked are the times of the period's events that are not admission
// lookups, oldest first.
func (w *Window) othersLocked(now time.Time) []time.Time {
	lookups := map[int64]int{}
	for _, e := range w.admissions {
		if now.Sub(e.at) < w.period {
			lookups[e.at.UnixNano()]++
		}
	}
	out := make([]time.Time, 0, w.limit)
	for i := range w.limit {
		t := w.ring[(w.next+i)%w.limit]
		if t.IsZero() || now.Sub(t) >= w.period {
			continue
		}
		if k := t.UnixNano(); lookups[k] > 0 {
			lookups[k]--
			continue
		}
		out = append(out, t)
	}
	return out
}

// admitLocked records an event now if the window has room for it, and
// returns 0, or returns how long to wait. The class caps are the caller's.
func (w *Window) admitLocked(now time.Time) time.Duration {
	// The ring holds the last events oldest first from next: the oldest must
	// have left the window for a slot to be free.
	oldest := w.ring[w.next]
	if !oldest.IsZero() && now.Sub(oldest) < w.period {
		return w.period - now.Sub(oldest)
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

// idle reports whether the window admitted nothing within its period: it then
// admits as a new one would.
func (w *Window) idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	// The newest admission is the last before next, times merged from
	// another clock included (ahead of this one, they keep it busy).
	newest := w.ring[(w.next+w.limit-1)%w.limit]
	return newest.IsZero() || w.now().Sub(newest) >= w.period
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
	// admitted is how many events the window had admitted itself when the
	// record was taken (BoundUnrecorded counts what no saved record holds).
	admitted uint64
}

// A Lookup is an admission lookup in a Record: when it was admitted, and for
// which key (a namespace; empty for a cluster-scoped object).
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
		if !t.IsZero() && now.Sub(t) < w.period {
			r.Admitted = append(r.Admitted, t)
		}
	}
	for _, e := range w.admissions {
		if now.Sub(e.at) < w.period {
			r.Lookups = append(r.Lookups, Lookup{At: e.at, Key: e.key})
		}
	}
	return r
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
	w.mergeLookupsLocked(now, r.Lookups)
}

// mergeLookupsLocked adds to the admission lookups those of in that it does
// not hold as often already (the same time and key), in time order, as
// mergeLocked does for admissions.
func (w *Window) mergeLookupsLocked(now time.Time, in []Lookup) {
	held := map[admissionEvent]int{}
	for _, e := range w.admissions {
		held[admissionEvent{at: time.Unix(0, e.at.UnixNano()), key: e.key}]++
	}
	added := false
	for _, l := range in {
		e := admissionEvent{at: time.Unix(0, l.At.UnixNano()), key: l.Key}
		if now.Sub(l.At) >= w.period {
			continue
		}
		if held[e] > 0 {
			held[e]--
			continue
		}
		w.admissions = append(w.admissions, e)
		added = true
	}
	if added {
		slices.SortStableFunc(w.admissions, func(a, b admissionEvent) int { return a.at.Compare(b.at) })
	}
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
	w.mergeLookupsLocked(now, r.Lookups)
	for range min(w.unrecordedBound(unrecorded), w.limit) {
		w.pushLocked(now)
	}
}

// mergeLocked adds to the ring the times of in that it does not hold as often
// already, and keeps the ring in order, oldest first from next, as admit
// expects. Times are compared by their wall clock: a record read back holds
// no monotonic reading.
func (w *Window) mergeLocked(now time.Time, in []time.Time) {
	held := map[int64]int{}
	all := make([]time.Time, 0, w.limit+len(in))
	for i := range w.limit {
		t := w.ring[(w.next+i)%w.limit]
		if !t.IsZero() && now.Sub(t) < w.period {
			all = append(all, t)
			held[t.UnixNano()]++
		}
	}
	added := false
	for _, t := range in {
		// A time ahead of this clock (another node's) counts from its own
		// time, which keeps it longer: never less than it should.
		if t.IsZero() || now.Sub(t) >= w.period || t.Sub(now) >= w.period {
			continue
		}
		if k := t.UnixNano(); held[k] > 0 {
			held[k]--
			continue
		}
		all = append(all, t.Round(0))
		added = true
	}
	if !added {
		return
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Before(all[j]) })
	if len(all) > w.limit {
		all = all[len(all)-w.limit:]
	}
	clear(w.ring)
	copy(w.ring[w.limit-len(all):], all)
	w.next = 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
