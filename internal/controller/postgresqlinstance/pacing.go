package postgresqlinstance

import (
	"sync"
	"time"

	"context"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// pacing carries, from an external client's calls to the reconciler's choice of
// when to come back, why an instance needs a visit sooner than the poll interval
// (an operation of ours is under way) or later than the error backoff would bring
// (a failure that only a change of the spec can fix). Keys are metadata.names.
type pacing struct {
	mu      sync.Mutex
	busy    map[string]bool
	stalled map[string]bool
}

func newPacing() *pacing {
	return &pacing{busy: map[string]bool{}, stalled: map[string]bool{}}
}

// markBusy asks for the next visit to come soon.
func (p *pacing) markBusy(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy[name] = true
}

// markStalled says the last error will repeat until the spec changes.
func (p *pacing) markStalled(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled[name] = true
}

func (p *pacing) take(m map[string]bool, name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := m[name]
	delete(m, name)
	return v
}

// pollIntervalHook shortens the poll interval for busy instances.
func (p *pacing) pollIntervalHook(busyInterval time.Duration) func(resource.Managed, time.Duration) time.Duration {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		if p.take(p.busy, mg.GetName()) {
			return min(busyInterval, poll)
		}
		return poll
	}
}

// backoffToPoll comes back at the poll interval, not with the error backoff, after
// a failure that only a change of the spec can fix: retrying a reserved name every
// few seconds costs quota and changes nothing. A change of the spec still triggers
// a reconcile at once.
type backoffToPoll struct {
	inner  reconcile.Reconciler
	pacing *pacing
	poll   time.Duration
}

// Reconcile implements reconcile.Reconciler.
func (b *backoffToPoll) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := b.inner.Reconcile(ctx, req)
	if b.pacing.take(b.pacing.stalled, req.Name) {
		return reconcile.Result{RequeueAfter: b.poll}, nil
	}
	return res, err
}
