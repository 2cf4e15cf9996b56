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
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestPhysicalLimit(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	// every is n times, the first at from, then one each step.
	every := func(n int, from, step time.Duration) []time.Time {
		ts := make([]time.Time, n)
		for i := range ts {
			ts[i] = at(from + time.Duration(i)*step)
		}
		return ts
	}
	const limit, window, op = 180, time.Minute, 10 * time.Second

	cases := map[string]struct {
		prior    []time.Time
		releases []time.Time
		limit    int
		want     time.Duration
	}{
		"EmptyWindow": {
			// 100 applies 100 ms apart: the last write goes when its apply
			// returns, and is done op later.
			releases: every(100, 100*time.Millisecond, 100*time.Millisecond),
			limit:    limit,
			want:     10*time.Second + op,
		},
		"NoWrites": {
			limit: limit,
			want:  0,
		},
		"NoQuota": {
			prior:    every(1000, -30*time.Second, 0),
			releases: every(500, 0, 0),
			limit:    0,
			want:     op,
		},
		"WindowFullOfPriorRequests": {
			// 180 requests 50 s before the start hold the window until 10 s
			// after it: every write waits for them to age out.
			prior:    every(limit, -50*time.Second, 0),
			releases: every(10, 0, 0),
			limit:    limit,
			want:     10*time.Second + op,
		},
		"WindowPartlyFull": {
			// 170 prior requests leave 10 slots: 10 writes go at once, the
			// other 10 when the prior ones age out, 30 s after the start.
			prior:    every(170, -30*time.Second, 0),
			releases: every(20, 0, 0),
			limit:    limit,
			want:     30*time.Second + op,
		},
		"PriorRequestsOlderThanTheWindow": {
			prior:    every(limit, -2*time.Minute, 0),
			releases: every(10, 0, 0),
			limit:    limit,
			want:     op,
		},
		"PriorRequestsAfterTheStartAreIgnored": {
			prior:    every(limit, time.Second, 0),
			releases: every(10, 0, 0),
			limit:    limit,
			want:     op,
		},
		"MoreWritesThanTheWindowHolds": {
			// 180 writes fill the window; the 181st waits a minute, and the
			// listing finds room beside it.
			releases: every(limit+1, 0, 0),
			limit:    limit,
			want:     window + op,
		},
		"TheListingWaitsForASlot": {
			// 180 writes are done after op, but the window they fill
			// frees only a minute after them.
			releases: every(limit, 0, 0),
			limit:    limit,
			want:     window,
		},
		"ReleasesLaterThanTheWindowFrees": {
			// The window is full until 5 s after the start; the writes are
			// released later than that, so they go when released.
			prior:    every(limit, -55*time.Second, 0),
			releases: []time.Time{at(20 * time.Second), at(10 * time.Second)},
			limit:    limit,
			want:     20*time.Second + op,
		},
		"ReleasesBeforeTheStartCountFromTheStart": {
			releases: every(3, -time.Minute, 0),
			limit:    limit,
			want:     op,
		},
		"SmallQuota": {
			// Two a minute: writes at 0 s, 0 s, 60 s and 60 s; the last are
			// done at 70 s, and the listing waits until 120 s for a slot.
			releases: every(4, 0, 0),
			limit:    2,
			want:     2 * window,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			got := PhysicalLimit(start, tc.prior, tc.releases, tc.limit, window, op)
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
