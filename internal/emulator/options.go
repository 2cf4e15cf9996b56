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

import (
	"io"
	"time"
)

// Defaults of the options.
const (
	// DefaultNameReservation is how long the name of a deleted instance stays
	// taken. Cloud SQL documents "up to a week".
	DefaultNameReservation = 7 * 24 * time.Hour
	// DefaultRequestBudget is the per-project requests-per-minute quota that
	// Cloud SQL grants by default ("Queries per minute per user").
	DefaultRequestBudget = 180
	// DefaultRandSeed seeds the random choices (operation names, injected
	// faults) unless WithRandSeed says otherwise, so runs are reproducible.
	DefaultRandSeed = 1
)

// Option configures a Server.
type Option func(*Server)

// Delays are how long operations take, measured on the emulator's clock.
// An operation is PENDING for the first tenth of its delay, RUNNING until the
// delay has passed, then DONE. Zero delays finish operations at once.
type Delays struct {
	// Create is the duration of instances.insert and instances.clone.
	Create time.Duration
	// Update is the duration of instances.patch and instances.update, and
	// of databases.patch, databases.update and databases.delete.
	Update time.Duration
	// Delete is the duration of instances.delete.
	Delete time.Duration
	// User is the duration of users.insert, users.update, users.delete
	// and databases.insert: zero unless WithUserOperationDelay says
	// otherwise, since Cloud SQL answers them DONE.
	User time.Duration
}

// WithClock makes the emulator read time from c instead of the wall clock.
// Pass a *FakeClock to control the lifecycle of operations from a test.
func WithClock(c Clock) Option {
	return func(s *Server) {
		if c != nil {
			s.clock = c
		}
	}
}

// WithDelays sets how long create, update and delete operations take.
// Negative durations count as zero.
func WithDelays(create, update, del time.Duration) Option {
	return func(s *Server) {
		s.delays.Create, s.delays.Update, s.delays.Delete = max(create, 0), max(update, 0), max(del, 0)
	}
}

// WithUserOperationDelay makes users.insert, users.update and users.delete
// take d instead of finishing at once, for tests of what a client sees
// while a user change is under way.
func WithUserOperationDelay(d time.Duration) Option {
	return func(s *Server) { s.delays.User = max(d, 0) }
}

// WithNameReservation sets how long the name of a deleted instance can't be
// reused. The default is DefaultNameReservation; zero frees names as soon as
// the delete operation is done.
func WithNameReservation(d time.Duration) Option {
	return func(s *Server) { s.reservation = max(d, 0) }
}

// WithRequestBudget sets how many API requests a project may send in any
// one-minute window before it is answered 429 rateLimitExceeded. Zero
// disables the budget. The default is DefaultRequestBudget.
func WithRequestBudget(perMinute int) Option {
	return func(s *Server) { s.budget = max(perMinute, 0) }
}

// WithRequestLog makes the emulator write one line per request to w: wall
// time, HTTP method, path, status and duration.
func WithRequestLog(w io.Writer) Option {
	return func(s *Server) { s.logw = w }
}

// WithRequestLogSize keeps at least the last n requests in the log that
// Requests returns (10,000 by default), for a benchmark that accounts for
// every request of a long run.
func WithRequestLogSize(n int) Option {
	return func(s *Server) { s.requestLog = max(n, 1) }
}

// WithRandSeed seeds the pseudo-random choices of the emulator: operation
// names and which requests an injected fault hits. The same seed and the same
// sequence of requests give the same answers.
func WithRandSeed(seed uint64) Option {
	return func(s *Server) { s.seed = seed }
}

// WithAfterInsert registers fn to be called after an instances.insert has
// been accepted and stored, before its answer is written. A controller test
// can use it to simulate a crash right after the insert succeeded, for
// example by cancelling the caller's context.
func WithAfterInsert(fn func(project, instance string)) Option {
	return func(s *Server) { s.afterInsert = fn }
}
