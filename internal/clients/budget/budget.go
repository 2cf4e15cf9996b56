// Package budget keeps the provider's calls to the Cloud SQL Admin API within a
// per-minute request budget shared by every reconcile, and retries the answers that
// say "try again later" (429 and 5xx) with exponential backoff and jitter, so that
// short storms never surface to users and long ones never exhaust the project's quota.
package budget

import (
	"context"
	"sync"
	"time"
)

// A Window admits at most Limit events in any sliding window of Period. Unlike a
// token bucket, whose first window admits its burst on top of its rate, it never
// exceeds the quota it mirrors ("Queries per minute per user").
type Window struct {
	limit  int
	period time.Duration
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error

	mu   sync.Mutex
	ring []time.Time // the admission times of the last `limit` events, oldest at next
	next int
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

// PerMinute admits at most n requests in any minute.
func PerMinute(n int) *Window { return NewWindow(n, time.Minute) }

// Wait blocks until an event may happen, and records it; it returns the context's
// error if the context ends first.
func (w *Window) Wait(ctx context.Context) error {
	for {
		d := w.reserve()
		if d <= 0 {
			return nil
		}
		if err := w.sleep(ctx, d); err != nil {
			return err
		}
	}
}

// reserve records an event now and returns 0, or returns how long to wait before
// asking again.
func (w *Window) reserve() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	oldest := w.ring[w.next]
	if !oldest.IsZero() && now.Sub(oldest) < w.period {
		return w.period - now.Sub(oldest)
	}
	w.ring[w.next] = now
	w.next = (w.next + 1) % w.limit
	return 0
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
