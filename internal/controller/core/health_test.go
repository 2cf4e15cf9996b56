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

func TestBackupHealthDue(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		reason   string
		lastRead time.Duration // before start; 0: never
		tried    time.Duration // before now, by this process; 0: not
		now      time.Duration // after start
		want     bool
	}{
		"ReadRecentlyBeforeARestart": {reason: "A read 10 minutes before the start is due 50 minutes after it.", lastRead: 10 * time.Minute, now: 49 * time.Minute},
		"DueSinceBeforeTheRestart":   {reason: "A read due before the start waits for its own time in the hour after it.", lastRead: 5 * time.Hour, now: 0},
		"DueAfterAnInterval":         {reason: "Within the hour after the start every instance had its turn.", lastRead: 5 * time.Hour, now: time.Hour, want: true},
		"TriedHere":                  {reason: "A read tried here, failed or not, counts from then.", tried: 30 * time.Minute, now: 2 * time.Hour},
		"TriedHereAnHourAgo":         {tried: time.Hour, now: 2 * time.Hour, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p := newPacing(pacingConfig{})
			p.health.started = start
			now := start.Add(tc.now)
			p.now = func() time.Time { return now.Add(-tc.tried) }
			if tc.tried > 0 {
				p.BackupHealthRead("orders", 1)
			}
			p.now = func() time.Time { return now }
			var last time.Time
			if tc.lastRead > 0 {
				last = start.Add(-tc.lastRead)
			}
			g.Expect(p.BackupHealthDue("orders", last)).To(Equal(tc.want), tc.reason)
		})
	}
}

func TestBackupHealthSpreadsAFleetOverTheInterval(t *testing.T) {
	g := NewWithT(t)
	// 10,000 instances last read long before a restart are read about
	// evenly over the hour after it: no minute takes more than twice its share.
	perMinute := map[int]int{}
	for i := range 10000 {
		perMinute[int(spread(fmt.Sprintf("ns-%d/instance", i), time.Hour)/time.Minute)]++
	}
	g.Expect(perMinute).To(HaveLen(60))
	for m, n := range perMinute {
		g.Expect(n).To(BeNumerically("<", 2*10000/60), "minute %d", m)
	}
}

func TestBackupHealthIntervalFitsItsShareOfTheBudget(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{perMinute: 180})
	g.Expect(p.BackupHealthInterval()).To(Equal(DefaultBackupHealthInterval))
	for i := range 1000 {
		p.Observing(fmt.Sprintf("i-%d", i))
		p.BackupHealthRead(fmt.Sprintf("i-%d", i), 2)
	}
	// 2,000 reads at a tenth of 180 a minute: 111 minutes.
	g.Expect(p.BackupHealthInterval()).To(BeNumerically("~", 2000/18.0*float64(time.Minute), float64(time.Second)))
	// Half of them turn point-in-time recovery off (one request a read),
	// then go: the sum follows each change.
	for i := range 500 {
		p.BackupHealthRead(fmt.Sprintf("i-%d", i), 1)
	}
	g.Expect(p.BackupHealthInterval()).To(BeNumerically("~", 1500/18.0*float64(time.Minute), float64(time.Second)))
	for i := range 200 {
		p.Forget(fmt.Sprintf("i-%d", i))
	}
	g.Expect(p.BackupHealthInterval()).To(BeNumerically("~", 1300/18.0*float64(time.Minute), float64(time.Second)))
}
