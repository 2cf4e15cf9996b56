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

package core

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestRotationDue(t *testing.T) {
	set := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	cases := map[string]struct {
		reason string
		setAt  time.Time
		period time.Duration
		now    time.Time
		want   bool
	}{
		"NoPeriod":       {reason: "Without a period nothing is due.", setAt: set, now: set.Add(1000 * day)},
		"Unknown":        {reason: "A password with no record of when it was set is not due: its record starts the period.", period: day, now: set},
		"Early":          {reason: "Before the period's last tenth nothing is due.", setAt: set, period: 30 * day, now: set.Add(27*day - time.Second)},
		"AtThePeriod":    {reason: "At the period, every key is due.", setAt: set, period: 30 * day, now: set.Add(30 * day), want: true},
		"Long":           {reason: "Long after the period, it is due.", setAt: set, period: day, now: set.Add(10 * day), want: true},
		"SetInTheFuture": {reason: "A record ahead of this clock is not due.", setAt: set.Add(day), period: time.Hour, now: set},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(rotationDue(tc.setAt, tc.period, "uid", tc.now)).To(Equal(tc.want), tc.reason)
		})
	}
}

// Logins whose passwords were set together rotate over the last tenth of
// their period, each at its own time, the same at every reconcile.
func TestRotationsAreSpreadOverThePeriodsLastTenth(t *testing.T) {
	g := NewWithT(t)
	set := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	period := 100 * time.Hour
	dueAt := map[time.Duration]int{}
	for i := range 1000 {
		key := fmt.Sprintf("uid-%d", i)
		var first time.Duration
		for h := time.Duration(0); h <= period; h += time.Hour {
			if rotationDue(set, period, key, set.Add(h)) {
				first = h
				break
			}
		}
		g.Expect(first).To(BeNumerically(">=", 90*time.Hour), key)
		g.Expect(rotationDue(set, period, key, set.Add(first))).To(BeTrue(), "the same answer again")
		dueAt[first]++
	}
	g.Expect(len(dueAt)).To(BeNumerically(">=", 10), "spread over the tenth's hours: %v", dueAt)
	for h, n := range dueAt {
		g.Expect(n).To(BeNumerically("<", 200), "at most about a tenth at %s", h)
	}
}
