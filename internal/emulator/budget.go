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

package emulator

import "time"

// budgetWindow enforces a per-project requests-per-minute quota as a sliding
// window over the emulator's clock: a request is allowed when fewer than
// the budget were allowed in the minute before it. Rejected requests don't
// consume the quota, as with Google's quota system.
type budgetWindow struct {
	// times holds when the allowed requests of the last minute arrived,
	// oldest first.
	times []time.Time
}

func (b *budgetWindow) allow(now time.Time, limit int) bool {
	cutoff := now.Add(-time.Minute)
	drop := 0
	for drop < len(b.times) && !b.times[drop].After(cutoff) {
		drop++
	}
	if drop > 0 {
		b.times = append(b.times[:0], b.times[drop:]...)
	}
	if len(b.times) >= limit {
		return false
	}
	b.times = append(b.times, now)
	return true
}
