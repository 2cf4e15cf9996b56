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

package applybench

import (
	"slices"
	"time"
)

// PhysicalLimit is the shortest time a phase can take under a sliding quota of
// limit requests in any window (limit 0 or less: no quota), when each object
// of the phase needs one write (instances.insert, instances.patch or
// instances.delete) that takes op to finish, and one listing then observes
// them all.
//
// The phase starts at start. releases are when each object's write may be
// sent at the earliest: when its own create, update or delete call through
// the API server returned. prior are the times of the requests that the quota
// already counted before start (those after start are ignored; only the last
// window's matter). A request is admitted when fewer than limit were admitted
// in the window before it (those at exactly window before it no longer count),
// as the emulator and Cloud SQL count them.
//
// The writes are scheduled greedily in release order, each at the earliest
// time at or after its release when the window has room; each object is done
// op after its write; the listing takes the first slot at or after the last
// object is done. The limit is the listing's time minus start.
func PhysicalLimit(start time.Time, prior []time.Time, releases []time.Time, limit int, window, op time.Duration) time.Duration {
	// sent are the admitted requests' times, oldest first: every slot is
	// scheduled at or after the ones before it, so appending keeps the order.
	var sent []time.Time
	for _, t := range prior {
		if !t.After(start) {
			sent = append(sent, t)
		}
	}
	slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
	slot := func(at time.Time) time.Time {
		// The window at t holds the requests after t-window; there is room
		// once the limit-th most recent has aged out.
		if limit > 0 && len(sent) >= limit {
			if free := sent[len(sent)-limit].Add(window); free.After(at) {
				at = free
			}
		}
		sent = append(sent, at)
		return at
	}

	rel := slices.Clone(releases)
	slices.SortFunc(rel, func(a, b time.Time) int { return a.Compare(b) })
	done := start
	for _, r := range rel {
		if r.Before(start) {
			r = start
		}
		if d := slot(r).Add(op); d.After(done) {
			done = d
		}
	}
	return slot(done).Sub(start)
}
