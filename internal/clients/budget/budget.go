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

	// reserve is how many events of a window only writes and admission
	// lookups may use; admission how many of those only admission lookups may.
	reserve   int
	admission int

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

// DefaultAdmissionReserve is the share of a window that only the admission
// webhook's lookups may use, so that a check of a new PostgresqlInstance's name
// finds a request free however busy the controllers are.
const DefaultAdmissionReserve = 0.1

// WithAdmissionReserve keeps share (0 to 0.5) of every window for admission
// lookups (WaitAdmission); it is part of the write reserve, which grows to
// hold it when smaller.
func WithAdmissionReserve(share float64) WindowOption {
	return func(w *Window) {
		w.admission = int(float64(w.limit) * min(max(share, 0), 0.5))
		w.reserve = max(w.reserve, w.admission)
	}
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
// DefaultWriteReserve of them for writes and admission lookups only, and
// DefaultAdmissionReserve for admission lookups only.
func PerMinute(n int) *Window {
	return NewWindow(n, time.Minute+arrivalSkew, WithWriteReserve(DefaultWriteReserve), WithAdmissionReserve(DefaultAdmissionReserve))
}

// Wait blocks until a write may happen, and records it; it returns the context's
// error if the context ends first. A write leaves the admission reserve alone.
func (w *Window) Wait(ctx context.Context) error { return w.wait(ctx, w.admission) }

// WaitRead is Wait for a read, which leaves the window's write reserve alone.
func (w *Window) WaitRead(ctx context.Context) error { return w.wait(ctx, w.reserve) }

// WaitAdmission is Wait for an admission webhook's lookup, which may use the
// whole window.
func (w *Window) WaitAdmission(ctx context.Context) error { return w.wait(ctx, 0) }

// errSpent says why a call was not sent: waiting for the budget would outlast
// the caller, which is better told at once than at its deadline.
const errSpent = "the Cloud SQL request budget (cloudsql.requests_per_minute = %d) has no request free for this call for the next %s, " +
	"longer than it may wait; if this persists, raise cloudsql.requests_per_minute within the project's quota, " +
	"or make fewer calls (reconcile.observe = \"list\", a longer reconcile.poll_interval)"

// ErrSpent is what Wait and WaitRead return when the budget cannot admit a call
// before its context's deadline (errors.Is).
var ErrSpent = errors.New("request budget spent")

type spentError struct{ msg string }

func (e spentError) Error() string        { return e.msg }
func (e spentError) Is(target error) bool { return target == ErrSpent }

func (w *Window) wait(ctx context.Context, keep int) error {
	for {
		d := w.admit(keep)
		if d <= 0 {
			return nil
		}
		// Deadlines are on the wall clock, whatever clock the window counts by.
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return spentError{msg: fmt.Sprintf(errSpent, w.limit, d.Round(time.Second))}
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
