package postgresqlinstance

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
)

// pollShare is the share of the request budget that polling may plan for: the
// rest is headroom for creates, updates, deletes, password changes and the
// webhook's lookups (which the budget also serves first).
const pollShare = 0.5

// pollJitter spreads observations by up to this share of the interval either way,
// so that instances created together are not all observed together ever after.
const pollJitter = 0.1

// listingsPerInterval is how many listings of a project an interval of polls
// causes: a listing serves observations for half an interval (maxListingAge).
const listingsPerInterval = 2

// pacing carries, from an external client's calls to the reconciler's choice of
// when to come back, why an instance needs a visit sooner than the poll interval
// (an operation of ours is under way) or later than the error backoff would bring
// (a failure that only a change of the spec can fix); it remembers when the
// provider last changed each instance, which a listing must postdate to be
// trusted; and it spaces observations so that the fleet's polling fits the request
// budget. Keys are metadata.names.
type pacing struct {
	now           func() time.Time
	poll          time.Duration
	busyPoll      time.Duration
	perMinute     int
	reconcileRate int
	listed        bool
	log           logging.Logger
	lastReported  time.Duration

	mu      sync.Mutex
	busy    map[string]bool
	stalled map[string]bool
	// active is when the provider last changed the instance (or learned that its
	// copy is stale); a listing that began before then cannot say how it is now.
	active map[string]time.Time
	// hurry marks instances in the middle of something (an operation of the
	// provider's, PENDING_CREATE, PENDING_DELETE): a listing serves them only
	// while it is younger than the busy poll interval.
	hurry map[string]bool
	// seen is when each instance was last observed, to size the fleet.
	seen      map[string]time.Time
	lastPrune time.Time
}

// pacingConfig is what pacing needs of the configuration.
type pacingConfig struct {
	poll      time.Duration
	busyPoll  time.Duration
	perMinute int
	// reconcileRate is how many reconciles a second the controller starts at
	// most; every observation is one.
	reconcileRate int
	listed        bool // observe = list
	log           logging.Logger
}

func newPacing(c pacingConfig) *pacing {
	log := c.log
	if log == nil {
		log = logging.NewNopLogger()
	}
	return &pacing{
		now: time.Now, poll: c.poll, busyPoll: c.busyPoll, perMinute: c.perMinute, reconcileRate: c.reconcileRate, listed: c.listed, log: log,
		busy: map[string]bool{}, stalled: map[string]bool{}, hurry: map[string]bool{},
		active: map[string]time.Time{}, seen: map[string]time.Time{},
	}
}

// markBusy asks for the next visit to come soon, with a recent view of the
// instance.
func (p *pacing) markBusy(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy[name] = true
	p.hurry[name] = true
}

// markChanged is markBusy after the provider changed the instance (or learned
// that its copy is stale): only what is read after now can tell how it is.
func (p *pacing) markChanged(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy[name] = true
	p.hurry[name] = true
	p.active[name] = p.now()
}

// markStalled says the last error will repeat until the spec changes.
func (p *pacing) markStalled(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled[name] = true
}

// lastActive is when the provider last changed the instance or saw it change,
// zero when not since it started.
func (p *pacing) lastActive(name string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active[name]
}

// settled forgets the instance's activity once a listing newer than it has shown
// the instance steady.
func (p *pacing) settled(name string, listedAt time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.active[name]; ok && !listedAt.After(a) {
		return
	}
	delete(p.active, name)
	delete(p.hurry, name)
}

// forget drops everything known of an instance whose object is gone.
func (p *pacing) forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.busy, name)
	delete(p.stalled, name)
	delete(p.active, name)
	delete(p.hurry, name)
	delete(p.seen, name)
}

func (p *pacing) take(m map[string]bool, name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := m[name]
	delete(m, name)
	return v
}

// interval is the time between two observations of a steady instance: the poll
// interval, or longer when observing the fleet that often would cost more than
// pollShare of the budget. It also prunes instances not seen for a few
// intervals from the fleet's count.
func (p *pacing) interval(name string) time.Duration {
	p.mu.Lock()
	now := p.now()
	last, ok := p.seen[name]
	p.seen[name] = now
	n := len(p.seen)
	p.mu.Unlock()
	if ok {
		metrics.ObservationGap.Observe(now.Sub(last).Seconds())
	}

	d := p.poll
	if p.perMinute > 0 {
		need := time.Duration(float64(readsPerInterval(n, p.listed)) / (pollShare * float64(p.perMinute)) * float64(time.Minute))
		d = max(d, need)
	}
	if p.reconcileRate > 0 {
		// Every observation is a reconcile; they start at most this fast.
		d = max(d, time.Duration(float64(n)/float64(p.reconcileRate)*float64(time.Second)))
	}
	p.prune(now, 3*d)
	p.report(d, n)
	return d
}

// pruneEvery bounds how often the fleet's count is pruned: pruning walks it all.
const pruneEvery = time.Minute

// readsPerInterval is what observing n instances once costs in requests.
func readsPerInterval(n int, listed bool) int {
	if !listed {
		return n
	}
	return listingsPerInterval * int(math.Ceil(float64(n)/observer.PageSize))
}

func (p *pacing) prune(now time.Time, older time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.lastPrune) < pruneEvery {
		return
	}
	p.lastPrune = now
	for k, t := range p.seen {
		if now.Sub(t) > older {
			delete(p.seen, k)
		}
	}
}

// report publishes the effective interval and logs when it changes while above
// the configured one.
func (p *pacing) report(d time.Duration, n int) {
	metrics.PollInterval.Set(d.Seconds())
	metrics.FleetSize.Set(float64(n))
	p.mu.Lock()
	changed := d != p.lastReported
	p.lastReported = d
	p.mu.Unlock()
	if changed && d > p.poll {
		p.log.Info("observing instances less often than reconcile.poll_interval: the request budget or the reconcile rate cannot afford more; raise cloudsql.requests_per_minute (within the project's quota) or reconcile.max_reconcile_rate, use reconcile.observe = \"list\", or split the fleet across projects",
			"effective-interval", d.Round(time.Second).String(), "poll-interval", p.poll.String(), "instances", n,
			"requests-per-minute", p.perMinute, "max-reconcile-rate", p.reconcileRate)
	}
}

// pollIntervalHook shortens the poll interval for busy instances, and spaces the
// others by the budget, with jitter.
func (p *pacing) pollIntervalHook(busyInterval time.Duration) func(resource.Managed, time.Duration) time.Duration {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		if p.take(p.busy, mg.GetName()) {
			return min(busyInterval, poll)
		}
		d := max(poll, p.interval(mg.GetName()))
		return jitter(d)
	}
}

// maxListingAge is how old a listing may be to serve an observation of name:
// for an instance in the middle of something, the busy poll interval; else half
// the effective interval, so that an instance is seen at most 1.5 intervals after
// a change, and a project is listed about twice an interval whatever its size.
func (p *pacing) maxListingAge(name string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hurry[name] && p.busyPoll > 0 {
		return p.busyPoll
	}
	return max(p.poll, p.lastReported) / listingsPerInterval
}

func jitter(d time.Duration) time.Duration {
	j := time.Duration(float64(d) * pollJitter)
	if j <= 0 {
		return d
	}
	return d - j + time.Duration(rand.Int64N(int64(2*j)+1))
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
