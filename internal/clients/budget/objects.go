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
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The split between instances and their objects. An instance's databases,
// users and backups (its objects) are many more than the instances, and
// their requests (listings of an instance's databases and users, their
// inserts and deletes, the SQL connector's connectSettings and
// generateEphemeralCert) would otherwise take the window from the
// instances' observations: a tier changed in the console would be reverted
// only when a listing of the project found room among them. Requests made
// for objects (ForObjects) are therefore capped at a share of the window
// that a Split holds, which the fleet's pacing sets to what the instances'
// polls, their backup-health reads and the write reserve leave, up to the
// configured share.

// DefaultObjectShare is the largest share of the request budget (and of the
// reconcile rate) that the requests (reconciles) made for objects may take
// ([reconcile] object_share): they get what the instances leave, up to it.
const DefaultObjectShare = 0.5

// MinObjectShare is the least share of the window that objects always
// get, however much the instances' polls plan for: without it a fleet in
// get mode that fills its poll share would leave its objects nothing.
const MinObjectShare = 0.1

// A Split holds the share of a window's events that the requests made for
// objects may use; the windows that WithSplit or WithSplitCap gave it read it
// at each admission, and those of WithSplit tell it of the writes made for
// objects they admit. It is safe for concurrent use. A nil Split caps nothing.
type Split struct {
	bits atomic.Uint64

	mu sync.Mutex
	// writes are the admission times of the writes made for objects in the
	// last splitPeriod, oldest first.
	writes []time.Time
}

// splitPeriod is how far back a Split counts the writes made for objects.
const splitPeriod = time.Minute

// wrote records a write made for objects, admitted at now.
func (s *Split) wrote(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.dropLocked(now), now)
}

// Writes is how many writes made for objects (their inserts, deletes and
// password changes) the WithSplit windows of s admitted in the minute before now: the
// changes users asked for, which the objects' listings make room for.
func (s *Split) Writes(now time.Time) int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = s.dropLocked(now)
	return len(s.writes)
}

func (s *Split) dropLocked(now time.Time) []time.Time {
	drop := 0
	for drop < len(s.writes) && now.Sub(s.writes[drop]) >= splitPeriod {
		drop++
	}
	return s.writes[drop:]
}

// NewSplit returns a split that gives objects share of a window (0 to 1).
func NewSplit(share float64) *Split {
	s := &Split{}
	s.Set(share)
	return s
}

// Set gives objects share (0 to 1) of a window from now on.
func (s *Split) Set(share float64) {
	if s == nil || math.IsNaN(share) {
		return
	}
	s.bits.Store(math.Float64bits(min(max(share, 0), 1)))
}

// Objects is the share of a window that objects may use now; 1 for a nil
// Split.
func (s *Split) Objects() float64 {
	if s == nil {
		return 1
	}
	return math.Float64frombits(s.bits.Load())
}

// WithSplit caps the requests made for objects (ForObjects) at the share of
// the window's events that s holds at the time of each, at least one event,
// and tells s of the writes made for objects that it admits (Split.Writes).
// Admission lookups and the project's shared listings are never objects'.
func WithSplit(s *Split) WindowOption {
	return func(w *Window) { w.split, w.splitWrites = s, true }
}

// WithSplitCap is WithSplit for a window that spends a quota of its own (a
// team's): it caps its objects' requests at s's share, but its writes are
// not told to s, since they leave the share that the platform's listings
// plan on alone, and a team's burst of new databases would otherwise put
// off the watch on the platform's.
func WithSplitCap(s *Split) WindowOption {
	return func(w *Window) { w.split, w.splitWrites = s, false }
}

// objectCapLocked is how many of a period's events objects may use.
func (w *Window) objectCapLocked() int {
	return max(1, int(float64(w.limit)*w.split.Objects()))
}

// writesFirstTick is the least time that a read made for objects waits
// while writes made for objects wait for the whole of their share: it asks
// again after them.
const writesFirstTick = time.Second

// writesFirstLocked is how long a read made for objects waits while
// objectWrites writes made for objects wait: until the share has a free
// event for each of them and one more for it. The writes are changes users
// asked for; the reads are listings that watch unchanged objects, which come
// a little later, and the share is spent either way.
func (w *Window) writesFirstLocked(now time.Time, p time.Duration) time.Duration {
	room := w.objectCapLocked() - w.objectWrites
	if room < 1 {
		return max(capWait(now, p, within(w.objects, now, p), w.objectCapLocked()), writesFirstTick)
	}
	return capWait(now, p, within(w.objects, now, p), room)
}

type objectsKey struct{}

// ForObjects marks the requests made with ctx as made for an instance's
// objects (a database, a user, a backup): their window caps them at the
// share its Split holds.
func ForObjects(ctx context.Context) context.Context {
	return context.WithValue(ctx, objectsKey{}, true)
}

// forObjects says whether ctx is ForObjects.
func forObjects(ctx context.Context) bool {
	v, _ := ctx.Value(objectsKey{}).(bool)
	return v
}

// ObjectsTransport makes every request of rt a request made for objects:
// for a client that only objects use (the SQL connectors), whatever context
// its library gives its requests.
func ObjectsTransport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		// No budget to count them in.
		return nil
	}
	return objectsTransport{rt}
}

type objectsTransport struct{ base http.RoundTripper }

func (t objectsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(req.WithContext(ForObjects(req.Context())))
}

// PerMinute is the limit of the transport it wraps (Limited), so that the
// connectors' clients are spaced as the others are.
func (t objectsTransport) PerMinute() int { return PerMinuteOf(t.base) }
