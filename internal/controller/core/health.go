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
	"hash/fnv"
	"time"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
)

// The pacing of the backup-health reads: each instance's backup runs (and,
// with point-in-time recovery on, its recoverable window) are read about once
// a health interval, each instance at its own time, so that the fleet's reads
// spread over the interval; never more often than budget.HealthShare of the
// request budget affords.

// DefaultBackupHealthInterval is how often each instance's backup health is
// read when Options.BackupHealthInterval is zero.
const DefaultBackupHealthInterval = time.Hour

// backupHealth is what the pacing knows of the health reads.
type backupHealth struct {
	// every is the health interval the options ask for.
	every time.Duration
	// started is when this process began: instances whose read was due
	// before then are read at a time of their own within an interval
	// after it, not all at once.
	started time.Time
	// tried is when this process last read (or tried to read) each
	// instance's health.
	tried map[string]time.Time
	// requests is what each instance's last read cost (one or two
	// requests), to size the fleet's reads against the budget; total is
	// their sum, kept as they change: every observation asks for the
	// interval, and a walk of a 10,000-instance map each time would cost
	// the fleet's observations a hundred million steps an interval.
	requests map[string]int
	total    int
}

// set records that the last read of the instance keyed key cost n requests
// (0: forget it).
func (h *backupHealth) set(key string, n int) {
	h.total += n - h.requests[key]
	if n == 0 {
		delete(h.requests, key)
		return
	}
	h.requests[key] = n
}

// BackupHealthDue says whether the backup health of the instance keyed key,
// last read at lastRead (zero: never, as far as its status says), is due now.
// A read that this process made or tried counts from then, failed or not; a
// read due before the process began is due at a time of the instance's own
// in the interval after it began.
func (p *Pacing) BackupHealthDue(key string, lastRead time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	iv := p.backupHealthIntervalLocked()
	now := p.now()
	if t, ok := p.health.tried[key]; ok {
		return now.Sub(t) >= iv
	}
	due := lastRead.Add(iv)
	if due.Before(p.health.started) {
		due = p.health.started.Add(spread(key, iv))
	}
	return !now.Before(due)
}

// BackupHealthRead records that the backup health of the instance keyed key
// was read (or tried) now, with requests requests.
func (p *Pacing) BackupHealthRead(key string, requests int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.health.tried[key] = p.now()
	p.health.set(key, requests)
}

// BackupHealthInterval is the time between two health reads of an instance:
// the configured interval, or longer when the fleet's reads would take more
// than budget.HealthShare of the request budget.
func (p *Pacing) BackupHealthInterval() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.backupHealthIntervalLocked()
}

func (p *Pacing) backupHealthIntervalLocked() time.Duration {
	iv := p.health.every
	if p.perMinute <= 0 {
		return iv
	}
	n := len(p.seen)
	if p.objects != nil {
		n = max(n, p.objects())
	}
	// An instance not read yet counts as one request.
	requests := p.health.total + max(0, n-len(p.health.requests))
	least := time.Duration(float64(requests) / (budget.HealthShare * float64(p.perMinute)) * float64(time.Minute))
	return max(iv, least)
}

// spread is the instance's own time within an interval iv: the same for the
// same key, spread evenly over the interval across keys.
func spread(key string, iv time.Duration) time.Duration {
	if iv <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return time.Duration(h.Sum64() % uint64(iv))
}
