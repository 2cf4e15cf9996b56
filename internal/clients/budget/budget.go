// Package budget keeps the provider's calls to the Cloud SQL Admin API within a
// per-minute request budget shared by every reconcile, and retries the answers that
// say "try again later" (429 and 5xx) with exponential backoff and jitter, so that
// short storms never surface to users and long ones never exhaust the project's quota.
package budget

import (
	"context"
	"errors"
	"fmt"
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

	// reserve is how many events of a window only writes may use.
	reserve int

	mu   sync.Mutex
	ring []time.Time // the admission times of the last `limit` events, oldest at next
	next int
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
// DefaultWriteReserve of them for writes only.
func PerMinute(n int) *Window {
	return NewWindow(n, time.Minute+arrivalSkew, WithWriteReserve(DefaultWriteReserve))
}

// Wait blocks until a write may happen, and records it; it returns the context's
// error if the context ends first.
func (w *Window) Wait(ctx context.Context) error { return w.wait(ctx, 0) }

// WaitRead is Wait for a read, which leaves the window's write reserve alone.
func (w *Window) WaitRead(ctx context.Context) error { return w.wait(ctx, w.reserve) }

// errSpent says why a call was not sent: waiting for the budget would outlast
// the caller, which is better told at once than at its deadline.
const errSpent = "the Cloud SQL request budget (cloudsql.requests_per_minute: %d a minute) is spent for the next %s, " +
	"longer than this call may wait (reconcile.timeout): it is retried later; if this persists, raise the budget within the project's quota " +
	"or reduce the calls (reconcile.observe = \"list\", a longer reconcile.poll_interval)"

// ErrSpent is what Wait and WaitRead return when the budget cannot admit a call
// before its context's deadline.
var ErrSpent = errors.New("request budget spent")

func (w *Window) wait(ctx context.Context, keep int) error {
	for {
		d := w.admit(keep)
		if d <= 0 {
			return nil
		}
		// Deadlines are on the wall clock, whatever clock the window counts by.
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return fmt.Errorf(errSpent+": %w", w.limit, d.Round(time.Second), ErrSpent)
		}
		if err := w.sleep(ctx, d); err != nil {
			return err
		}
	}
}

// admit records an event now if keep slots of the window stay free after it, and
// returns 0, or returns how long to wait before asking again.
func (w *Window) admit(keep int) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	// The ring holds the last events oldest first from next: the keep-th oldest
	// must have left the window for keep+1 slots to be free.
	oldest := w.ring[(w.next+keep)%w.limit]
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
