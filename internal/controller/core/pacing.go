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
	"context"
	"iter"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
)

// pollShare is the share of the request budget that polling may plan for: the
// rest is headroom for creates, updates, deletes, password changes and the
// webhook's lookups.
const pollShare = 0.5

// reconcileShare is the share of max_reconcile_rate that polls of steady
// instances may plan for.
const reconcileShare = 0.5

// logEvery bounds how often the provider says that it observes less often than
// poll_interval, while it does.
const logEvery = 10 * time.Minute

// pollJitter spreads observations by up to this share of the interval either way,
// so that instances created together are not all observed together ever after.
const pollJitter = 0.1

// listingsPerInterval is how many listings of a project an interval of polls
// causes: a listing serves observations for half an interval (maxListingAge).
const listingsPerInterval = 2

// Pacing carries, from an external client's calls to the reconciler's choice of
// when to come back, why an instance needs a visit sooner than the poll interval
// (an operation of ours is under way) or later than the error backoff would bring
// (a failure that only a change of the spec can fix); it remembers when the
// provider last changed each instance, which a listing must postdate to be
// trusted; and it spaces observations so that the fleet's polling fits the request
// budget. Keys are metadata.names.
type Pacing struct {
	now           func() time.Time
	poll          time.Duration
	busyPoll      time.Duration
	perMinute     int
	reconcileRate int
	listed        bool
	log           logging.Logger
	// pages is what listing every project once costs (observer.TotalPages);
	// nil counts N/500 pages.
	pages func() int
	// objects is how many PostgresqlInstances exist (the informer's count), so
	// that the fleet is known whole while most of it still waits for a first
	// reconcile; nil counts the instances observed.
	objects func() int
	// others is how many objects of the other kinds (databases, users)
	// exist: each poll of one is a reconcile, though most cost no request.
	others func() int
	// lists is how many listings of instances' databases and users an
	// interval of polls costs (listcache.Cache.Active); nil: none.
	lists func() int

	lastReported time.Duration
	lastLogged   time.Time
	// budgetBound is the least interval that the request budget alone allows.
	budgetBound time.Duration

	mu      sync.Mutex
	busy    map[string]bool
	stalled map[string]bool
	// waiting marks objects whose last error waits on another object (an
	// owner to be Ready, databases to go): they come back at the busy poll
	// interval rather than in the error backoff, which grows to a minute.
	waiting map[string]bool
	// relist marks objects whose last observation was a failed listing of
	// their project, with how long until the project is listed again: they
	// come back then rather than in the error backoff, which grows to a
	// minute while the next listing may come in seconds.
	relist map[string]time.Duration
	// active is when the provider last changed the instance (or learned that its
	// copy is stale); a listing that began before then cannot say how it is now.
	active map[string]time.Time
	// hurry marks instances in the middle of something (an operation of the
	// provider's, PENDING_CREATE, PENDING_DELETE): a listing serves them only
	// while it is younger than the busy poll interval.
	hurry map[string]bool
	// visible says the provider's last change of the instance shows in the
	// instance itself (an insert, a patch): an up-to-date observation then
	// proves its operation over. A password change or a delete does not.
	visible map[string]bool
	// idle marks instances on which no operation of the provider's can still
	// run, as far as this process knows: a patch then needs no operations.list
	// first. Unknown after a start.
	idle map[string]bool
	// deleting marks instances seen PENDING_DELETE after their object was
	// deleted, or whose delete Cloud SQL accepted: once a complete listing
	// begun after the provider's last change lacks them, they are gone.
	deleting map[string]bool
	// opsAsked is when operations.list was last asked about each instance
	// whose change of the provider's is under way.
	opsAsked map[string]time.Time
	// opAt is when Cloud SQL accepted the provider's insert, patch or delete
	// of each instance whose end no observation has shown yet; fastestOp is
	// the shortest time from such a write to the observation that showed it
	// done (0: none seen yet), which bounds how soon the next can end.
	opAt      map[string]time.Time
	fastestOp time.Duration
	// lastListed is when the latest listing of a project began.
	lastListed time.Time
	// changeSeen marks instances that a listing saw change since their
	// object was last observed: the reconcile that a listing brings for
	// them (which may wait for a worker) will look, and until it does more
	// listings tell it nothing new, so they do not hurry the project's.
	changeSeen map[string]bool
	// wrote marks instances whose insert or delete Cloud SQL accepted in the
	// reconcile under way: its operation has just begun, and looking again at
	// once would only start a listing that shows it PENDING_CREATE or
	// PENDING_DELETE.
	wrote map[string]bool
	// seen is when each instance was last read from Cloud SQL (by a listing or
	// an instances.get), or first reconciled, to size the fleet and measure the
	// gaps between observations.
	seen map[string]time.Time
	// objectSeen is, for each object of the other kinds, when the listing
	// behind its last observation was read, to measure the gaps between
	// them. It does not size the fleet.
	objectSeen map[string]time.Time
	lastPrune  time.Time
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
	pages         func() int
	objects       func() int
	others        func() int
}

func newPacing(c pacingConfig) *Pacing {
	log := c.log
	if log == nil {
		log = logging.NewNopLogger()
	}
	return &Pacing{
		now: time.Now, poll: c.poll, busyPoll: c.busyPoll, perMinute: c.perMinute, reconcileRate: c.reconcileRate,
		listed: c.listed, log: log, pages: c.pages, objects: c.objects, others: c.others,
		busy: map[string]bool{}, stalled: map[string]bool{}, waiting: map[string]bool{}, relist: map[string]time.Duration{}, hurry: map[string]bool{},
		visible: map[string]bool{}, idle: map[string]bool{}, deleting: map[string]bool{}, wrote: map[string]bool{}, opsAsked: map[string]time.Time{},
		changeSeen: map[string]bool{}, opAt: map[string]time.Time{},
		active: map[string]time.Time{}, seen: map[string]time.Time{}, objectSeen: map[string]time.Time{},
	}
}

// NewPacing returns a pacing of its own for the external client of one
// object, outside a Core: no budget, no fleet, no listings; poll and busyPoll
// are the poll intervals (tests of an external client read its marks).
func NewPacing(poll, busyPoll time.Duration) *Pacing {
	return newPacing(pacingConfig{poll: poll, busyPoll: busyPoll})
}

// BusyPoll is how soon an object is looked at again while an operation of
// the provider's is under way.
func (p *Pacing) BusyPoll() time.Duration { return p.busyPoll }

// Flags names the marks the pacing holds for the object key, in a fixed
// order: busy, stalled, changed, visible, idle, deleting, written.
func (p *Pacing) Flags(key string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var f []string
	for _, flag := range []struct {
		name string
		set  bool
	}{
		{"busy", p.busy[key]}, {"stalled", p.stalled[key]}, {"changed", !p.active[key].IsZero()},
		{"visible", p.visible[key]}, {"idle", p.idle[key]}, {"deleting", p.deleting[key]}, {"written", p.wrote[key]},
	} {
		if flag.set {
			f = append(f, flag.name)
		}
	}
	return f
}

// MarkBusy asks for the next visit to come soon, with a recent view of the
// instance.
func (p *Pacing) MarkBusy(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy[name] = true
	p.hurry[name] = true
}

// markSoon asks for the next visit of an object of another kind to come
// soon. It hurries no listing of instances: its changes show in the
// databases' and users' listings, and nothing would take its mark back
// (only instances' visits clear hurry), so the projects would be listed at
// the busy poll interval for good.
func (p *Pacing) markSoon(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy[name] = true
}

// MarkChanged is markBusy after the provider changed the instance, or may have
// (an answer lost), or learned that its copy is stale: only what is read after
// now can tell how it is, and an operation of the provider's may run. visible
// says the change will show in the instance (an insert, a patch).
func (p *Pacing) MarkChanged(name string, visible bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy[name] = true
	p.hurry[name] = true
	p.active[name] = p.now()
	p.visible[name] = visible
	delete(p.idle, name)
}

// writtenRequeue is when an object comes back by itself after its insert or
// delete: the busy poll interval. The listing that sees the operation end
// brings it back sooner; this visit is for listings that fail (a failed
// listing answers for 30 s), as a storm of 5xx and 429 makes them.
func (p *Pacing) writtenRequeue() time.Duration { return p.busyPoll }

// MarkWritten records that Cloud SQL accepted the instance's insert or delete
// in the reconcile under way, or that its delete is under way already: the
// reconciler's immediate requeue after a create or a delete is put off (see
// backoffToPoll), and the project's busy listings, or the busy poll, bring
// the object back. Requeued at once, a deleted object would come back again
// and again with the work queue's backoff while its delete runs, each visit a
// slot of max_reconcile_rate.
func (p *Pacing) MarkWritten(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wrote[name] = true
}

// OpsCheckDue says whether an instance that an observation shows unlike its
// spec should have its operations listed before it is patched. Not while a
// visible change of the provider's is under way (an insert, a patch: its end
// shows in a listing) for less than twice the busy poll interval, nor more
// often than every half of the time it has taken since: an operation that
// failed, or another's that holds the instance, is still found, with a few
// operations.list over an operation of minutes instead of one per busy poll.
func (p *Pacing) OpsCheckDue(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	since, pending := p.active[name]
	if !pending || !p.visible[name] {
		return true
	}
	took := p.now().Sub(since)
	if took < 2*p.busyPoll {
		return false
	}
	return p.now().Sub(p.opsAsked[name]) >= took/2
}

// OpsChecked records that operations.list is asked about the instance now.
func (p *Pacing) OpsChecked(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opsAsked[name] = p.now()
}

// MarkIdle records that no operation runs on the instance (operations.list
// said so).
func (p *Pacing) MarkIdle(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle[name] = true
}

// IsIdle says whether no operation of the provider's can run on the instance.
func (p *Pacing) IsIdle(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idle[name]
}

// MarkDeleting records that the instance was seen PENDING_DELETE after its
// object was deleted.
func (p *Pacing) MarkDeleting(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deleting[name] = true
}

// SawDeleting says whether the instance was seen PENDING_DELETE since its object
// was deleted.
func (p *Pacing) SawDeleting(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.deleting[name]
}

// MarkStalled says the last error will repeat until the spec changes.
func (p *Pacing) MarkStalled(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled[name] = true
}

// markWaiting says that the object's last error waits on another object.
func (p *Pacing) markWaiting(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting[name] = true
}

// relistSlack is how long after its project's listing is tried again an
// object whose observation failed with the last one comes back: the listing
// then runs, and the object shares it.
const relistSlack = 100 * time.Millisecond

// MarkRelist says that the object's observation failed with its project's
// listing, which is tried again in d.
func (p *Pacing) MarkRelist(name string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.relist[name] = d
}

// LastActive is when the provider last changed the instance or saw it change,
// zero when not since it started.
func (p *Pacing) LastActive(name string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active[name]
}

// Settled forgets the instance's activity once an observation read after it
// (at readAt) has shown the instance up to date. When the last change was one
// that shows in the instance, its operation is then over.
func (p *Pacing) Settled(name string, readAt time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.active[name]
	if ok && !readAt.After(a) {
		return
	}
	if ok && p.visible[name] {
		p.idle[name] = true
		p.opEndedLocked(name, readAt)
	}
	delete(p.active, name)
	delete(p.hurry, name)
	delete(p.visible, name)
	delete(p.opsAsked, name)
}

// Began records that Cloud SQL accepted an insert, patch or delete of the
// instance just now: its operation runs until an observation shows it done
// (settled, or deleted).
func (p *Pacing) Began(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opAt[name] = p.now()
}

// Deleted records that an observation read at readAt found the instance of a
// Deleted object gone: nothing of it is under way any more.
func (p *Pacing) Deleted(name string, readAt time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opEndedLocked(name, readAt)
	delete(p.hurry, name)
}

// opEndedLocked records that an observation read at readAt showed the
// provider's last write of the instance done, and how long that took at most.
func (p *Pacing) opEndedLocked(name string, readAt time.Time) {
	at, ok := p.opAt[name]
	if !ok || !readAt.After(at) {
		return
	}
	delete(p.opAt, name)
	if d := readAt.Sub(at); p.fastestOp == 0 || d < p.fastestOp {
		p.fastestOp = d
	}
}

// opFloorShare is the share of the fastest operation seen that a new
// operation is taken to need at least.
const opFloorShare = 0.8

// listingHoldLocked is when busy listings may begin at the earliest (zero: at
// once); until then projects are listed at their steady period. While every
// instance that hurries the listings waits for a write of the provider's
// that began less than opFloorShare of the fastest operation seen ago, no
// listing could show an operation end: Cloud SQL's creates take minutes and
// its patches and deletes about one, so listing every couple of seconds from
// their start would spend the quota on listings that show nothing new. An
// operation that ends sooner than that is seen at the hold, and shortens the
// next one. Instances in the middle of something else (one the provider did
// not change, a password change), or before any operation was seen to end,
// hold nothing.
// hurryingLocked are the instances in the middle of something that hurry the
// listings: those whose change a listing has seen wait for their reconcile,
// which the listing brought, to look.
func (p *Pacing) hurryingLocked() iter.Seq[string] {
	return func(yield func(string) bool) {
		for name := range p.hurry {
			if !p.changeSeen[name] && !yield(name) {
				return
			}
		}
	}
}

func (p *Pacing) listingHoldLocked() time.Time {
	if p.fastestOp == 0 || p.busyPoll <= 0 {
		return time.Time{}
	}
	floor := time.Duration(float64(p.fastestOp) * opFloorShare)
	var hold time.Time
	for name := range p.hurryingLocked() {
		at, ok := p.opAt[name]
		if !ok {
			return time.Time{}
		}
		if e := at.Add(floor); hold.IsZero() || e.Before(hold) {
			hold = e
		}
	}
	return hold
}

// Forget drops everything known of an instance whose object is gone.
func (p *Pacing) Forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.busy, name)
	delete(p.stalled, name)
	delete(p.waiting, name)
	delete(p.relist, name)
	delete(p.active, name)
	delete(p.hurry, name)
	delete(p.visible, name)
	delete(p.idle, name)
	delete(p.deleting, name)
	delete(p.changeSeen, name)
	delete(p.opAt, name)
	delete(p.wrote, name)
	delete(p.opsAsked, name)
	delete(p.seen, name)
	delete(p.objectSeen, name)
}

func (p *Pacing) take(m map[string]bool, name string) bool {
	v, _ := takeMark(p, m, name)
	return v
}

// takeMark removes name's mark from m, one of p's maps, and returns it.
func takeMark[V any](p *Pacing, m map[string]V, name string) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := m[name]
	delete(m, name)
	return v, ok
}

// Observing counts the instance in the fleet as its observation begins, before
// any waits for the budget.
func (p *Pacing) Observing(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.changeSeen, name)
	if _, ok := p.seen[name]; !ok {
		p.seen[name] = p.now()
	}
}

// Observed records that the instances of the objects named were read from Cloud
// SQL at readAt (one instances.get, or a listing), and the time since each was
// last read goes to the gap metric.
func (p *Pacing) Observed(readAt time.Time, names ...string) {
	p.mu.Lock()
	gaps := make([]float64, 0, len(names))
	for _, n := range names {
		last, ok := p.seen[n]
		if ok && !readAt.After(last) {
			continue
		}
		p.seen[n] = readAt
		if ok {
			gaps = append(gaps, readAt.Sub(last).Seconds())
		}
	}
	p.mu.Unlock()
	for _, g := range gaps {
		metrics.ObservationGap.Observe(g)
	}
}

// sawChange records that a listing saw the instances of the objects named
// change: each will be reconciled for it.
func (p *Pacing) sawChange(names ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range names {
		p.changeSeen[n] = true
	}
}

// completesWrite says whether the object's next reconcile is the one that
// sees an insert, patch or delete of the provider's done: a listing saw its
// instance change while that write's operation ran. Such a reconcile
// finishes the work that the write's own reconcile began, and took a slot of
// max_reconcile_rate for, so it does not take another: there is at most one
// per write, and the request budget bounds the writes. Counted again, the
// visits that make a burst of 100 changes Ready took the slots of the
// deletes that followed them.
func (p *Pacing) completesWrite(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, writing := p.opAt[name]
	return writing && p.changeSeen[name]
}

// objectObserved records that the object named (an object of another kind,
// of the kind given for the metric) was observed from a listing read at
// readAt, and the time since the listing behind its previous observation goes
// to the objects' gap metric.
func (p *Pacing) objectObserved(kind, name string, readAt time.Time) {
	p.mu.Lock()
	last, ok := p.objectSeen[name]
	if ok && !readAt.After(last) {
		p.mu.Unlock()
		return
	}
	p.objectSeen[name] = readAt
	p.mu.Unlock()
	if ok {
		metrics.ObjectObservationGap.WithLabelValues(kind).Observe(readAt.Sub(last).Seconds())
	}
}

// interval is the least time between two observations of a steady instance
// that the budget and the reconcile rate allow for the fleet (observing it that
// often costs pollShare of the budget); zero when they set no bound. It reports
// the effective interval (at least the poll interval) and prunes instances not
// Observed for a few intervals from the fleet's count.
func (p *Pacing) interval(name string) time.Duration {
	p.mu.Lock()
	now := p.now()
	if _, ok := p.seen[name]; !ok {
		p.seen[name] = now
	}
	n := len(p.seen)
	p.mu.Unlock()
	if p.objects != nil {
		n = max(n, p.objects())
	}

	var d time.Duration
	if p.perMinute > 0 {
		pages := 0
		if p.pages != nil {
			pages = p.pages()
		}
		reads := readsPerInterval(n, pages, p.listed)
		if p.lists != nil {
			reads += p.lists()
		}
		d = time.Duration(float64(reads) / (pollShare * float64(p.perMinute)) * float64(time.Minute))
		p.mu.Lock()
		p.budgetBound = d
		p.mu.Unlock()
	}
	if p.reconcileRate > 0 {
		// Every poll is a reconcile, and reconciles start at most this fast:
		// polls may take only a share of them, so that new objects, spec
		// changes and busy instances find free slots as well as the first
		// place in the work queue.
		reconciles := n
		if p.others != nil {
			reconciles += p.others()
		}
		d = max(d, time.Duration(float64(reconciles)/(reconcileShare*float64(p.reconcileRate))*float64(time.Second)))
	}
	effective := max(p.poll, d)
	p.prune(now, 3*effective)
	p.report(effective, n)
	return d
}

// effectiveInterval is the interval of the fleet's polls as last computed:
// the poll interval, or more when the budget or the reconcile rate need it.
func (p *Pacing) effectiveInterval() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.poll, p.lastReported)
}

// pruneEvery bounds how often the fleet's count is pruned: pruning walks it all.
const pruneEvery = time.Minute

// readsPerInterval is what observing n instances once costs in requests: n
// gets, or two listings of every project (pages, at least n/500).
func readsPerInterval(n, pages int, listed bool) int {
	if !listed {
		return n
	}
	return listingsPerInterval * max(pages, int(math.Ceil(float64(n)/observer.PageSize)))
}

func (p *Pacing) prune(now time.Time, older time.Duration) {
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
	for k, t := range p.objectSeen {
		if now.Sub(t) > older {
			delete(p.objectSeen, k)
		}
	}
}

// report publishes the effective interval and logs when it changes while above
// the configured one.
func (p *Pacing) report(d time.Duration, n int) {
	metrics.PollInterval.Set(d.Seconds())
	metrics.FleetSize.Set(float64(n))
	p.mu.Lock()
	now := p.now()
	above := d > p.poll && (p.lastReported <= p.poll || now.Sub(p.lastLogged) >= logEvery)
	p.lastReported = d
	if above {
		p.lastLogged = now
	}
	listEvery := p.listPeriodLocked()
	p.mu.Unlock()
	if p.listed {
		metrics.ListPeriod.Set(listEvery.Seconds())
	}
	switch {
	case above && p.listed:
		p.log.Info("reconciling unchanged instances less often than reconcile.poll_interval: the reconcile rate or the request budget cannot afford more; "+
			"each project is still listed every listing-period, which observes all its instances and reconciles at once those that changed; "+
			"for faster reconciles of unchanged instances raise reconcile.max_reconcile_rate, or cloudsql.requests_per_minute (within the project's quota)",
			"effective-interval", d.Round(time.Second).String(), "listing-period", listEvery.Round(time.Second).String(), "poll-interval", p.poll.String(),
			"instances", n, "requests-per-minute", p.perMinute, "max-reconcile-rate", p.reconcileRate)
	case above:
		p.log.Info("observing instances less often than reconcile.poll_interval: the request budget or the reconcile rate cannot afford more; raise cloudsql.requests_per_minute (within the project's quota) or reconcile.max_reconcile_rate, use reconcile.observe = \"list\", or split the fleet across projects",
			"effective-interval", d.Round(time.Second).String(), "poll-interval", p.poll.String(), "instances", n,
			"requests-per-minute", p.perMinute, "max-reconcile-rate", p.reconcileRate)
	}
}

// pollIntervalHook shortens the poll interval for busy instances, and spaces the
// others by the budget, with jitter.
func (p *Pacing) pollIntervalHook(busyInterval time.Duration) func(resource.Managed, time.Duration) time.Duration {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		// Keyed as everything else marks it: a namespaced object's bare name
		// would never find its marks, so it would never come back soon and
		// its marks would outlive it.
		name := ObjectKey(mg)
		if p.take(p.busy, name) {
			return min(busyInterval, poll)
		}
		// Not in the middle of anything any more (a state that no
		// observation settles, such as SUSPENDED, must not keep listings young).
		p.mu.Lock()
		delete(p.hurry, name)
		p.mu.Unlock()
		// poll may be shorter than the configured interval (the object's
		// crossplane.io/poll-interval annotation): the budget still bounds it.
		return jitter(max(poll, p.interval(name)))
	}
}

// MaxListingAge is how old a listing may be to serve an observation of name:
// for an instance in the middle of something, the busy poll interval; else the
// listing period.
func (p *Pacing) MaxListingAge(name string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hurry[name] && p.busyPoll > 0 {
		return p.busyPoll
	}
	return p.listPeriodLocked()
}

// listPeriod is how often a watched project is listed: twice a poll interval,
// or every busy poll interval while an instance is in the middle of something
// (its end shows in the next listing, which reconciles it), and never more often
// than the budget allows. It does not wait for the reconcile rate: a listing
// observes every instance of the project at once, and only those that changed
// are reconciled for it.
func (p *Pacing) listPeriod() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d, busy := p.busyListPeriodLocked(); busy && !p.now().Before(p.listingHoldLocked()) {
		return max(d, p.budgetBound/listingsPerInterval)
	}
	return p.listPeriodLocked()
}

// busyListFloor is the least time between two listings of a project while
// operations of the provider's run on its instances.
const busyListFloor = 2 * time.Second

// busyListShare is how late, as a share of the time an operation has taken so
// far, the listing that sees its end may come.
const busyListShare = 0.2

// busyListPeriodLocked is the listing period while instances are in the
// middle of something: the end of an operation is seen within busyListShare
// of the time it took (within 2 s of a 10 s one), and no later than the busy
// poll interval however long it took. It is set by the instance whose
// operation has run longest, so a burst of changes costs a listing every
// couple of seconds however many instances it holds, and only at the start of
// long operations (minutes, as Cloud SQL's creates take) a few listings more
// than at the busy poll interval. An instance in the middle of something
// whose start the provider does not know (one it did not change) is listed at
// the busy poll interval. Instances whose change a listing has seen, and
// whose reconcile has not looked yet, do not count: busy is false when no
// other instance is in the middle of something.
//
// Once an operation was seen to end, a listing also comes when the last
// write under way has run as long as the fastest operation seen, if none
// Began since: a burst of writes of the same kind then ends about together,
// and that listing sees the last of them end rather than the next one at a
// fifth of the time they took.
func (p *Pacing) busyListPeriodLocked() (d time.Duration, busy bool) {
	if p.busyPoll <= 0 {
		return 0, false
	}
	now := p.now()
	var longest time.Duration
	var lastEnd time.Time
	for name := range p.hurryingLocked() {
		a, ok := p.active[name]
		if !ok {
			return p.busyPoll, true
		}
		longest, busy = max(longest, now.Sub(a)), true
		if at, ok := p.opAt[name]; ok && p.fastestOp > 0 && at.Add(p.fastestOp).After(lastEnd) {
			lastEnd = at.Add(p.fastestOp)
		}
	}
	d = min(p.busyPoll, max(busyListFloor, time.Duration(float64(longest)*busyListShare)))
	if lastEnd.After(p.lastListed) {
		d = min(d, lastEnd.Sub(p.lastListed))
	}
	return d, busy
}

// listingBegan records that a listing of a project began at readAt.
func (p *Pacing) listingBegan(readAt time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if readAt.After(p.lastListed) {
		p.lastListed = readAt
	}
}

func (p *Pacing) listPeriodLocked() time.Duration {
	return max(p.poll, p.budgetBound) / listingsPerInterval
}

// watchExpiry is how long an object's watch of its instance lasts unrenewed: a
// few effective intervals, after which its object is surely gone or moved.
func (p *Pacing) watchExpiry() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return 3 * max(p.poll, p.lastReported)
}

func jitter(d time.Duration) time.Duration {
	j := time.Duration(float64(d) * pollJitter)
	if j <= 0 {
		return d
	}
	return d - j + time.Duration(rand.Int64N(int64(2*j)+1))
}

// followUpPriority is the work queue priority of a visit that sees an
// operation of the provider's end: the one after an insert, and one that a
// listing brings because the instance changed. New objects and spec changes
// come at 0, steady polls at handler.LowPriority. Such a visit reads the
// shared listing (no request) and is what makes the object Ready, so it goes
// before new objects: when a burst of creates holds every worker waiting for
// the write budget (1,000 new objects at N = 10,000), each worker that an
// insert frees would otherwise take the next new object, and the instances
// whose creation ended would wait behind all of them.
const followUpPriority = 1

// enqueueFollowUp enqueues the object of a generic event at followUpPriority.
func enqueueFollowUp() handler.EventHandler {
	return handler.Funcs{GenericFunc: func(_ context.Context, e ctrlevent.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()}}
		if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
			pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(followUpPriority)}, req)
			return
		}
		q.Add(req)
	}}
}

// backoffToPoll comes back at the poll interval, not with the error backoff, after
// a failure that only a change of the spec can fix: retrying a reserved name every
// few seconds costs quota and changes nothing. A change of the spec still triggers
// a reconcile at once.
type backoffToPoll struct {
	inner  reconcile.Reconciler
	pacing *Pacing
	poll   time.Duration
	// key names an object as the pacing's marks do; nil: objectKey.
	key func(metav1.Object) string
}

// keyOf names the object of req as the pacing's marks do: by namespace and
// name for a namespaced object, whose bare name would never find its marks.
func (b *backoffToPoll) keyOf(req reconcile.Request) string {
	m := &metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}
	if b.key != nil {
		return b.key(m)
	}
	return ObjectKey(m)
}

// Reconcile implements reconcile.Reconciler. A visit to a steady instance comes
// back at low priority: when the fleet's polls are more than the provider can
// reconcile in time, new objects, spec changes, changes a listing noticed and
// instances in the middle of an operation go first.
//
// The requests of a namespaced object count in its namespace's share of the
// platform's budget (budget.ForNamespace): one that its namespace has spent
// is refused, its condition says why and until when, and it comes back then,
// neither in the error backoff (sooner, a reconcile each time for nothing)
// nor in a worker that waits for the share.
func (b *backoffToPoll) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ctx, refused := budget.ForNamespace(ctx, req.Namespace)
	res, err := b.inner.Reconcile(ctx, req)
	if d := refused(); d > 0 {
		// What the reconcile marked was for the call it could not make.
		key := b.keyOf(req)
		for _, m := range []map[string]bool{b.pacing.stalled, b.pacing.waiting, b.pacing.wrote} {
			b.pacing.take(m, key)
		}
		takeMark(b.pacing, b.pacing.relist, key)
		return reconcile.Result{RequeueAfter: d, Priority: ptr.To(handler.LowPriority)}, nil
	}
	// Keyed as markStalled was given it: by namespace and name for a namespaced
	// object, whose bare name would leave it in the error backoff's hot loop.
	if b.pacing.take(b.pacing.stalled, b.keyOf(req)) {
		return reconcile.Result{RequeueAfter: b.poll, Priority: ptr.To(handler.LowPriority)}, nil
	}
	if b.pacing.take(b.pacing.waiting, b.keyOf(req)) {
		// A watch brings it back when what it waits for changes; this poll
		// is for a change that none sees, at the fleet's pace.
		return reconcile.Result{RequeueAfter: jitter(max(b.poll, b.pacing.effectiveInterval())), Priority: ptr.To(handler.LowPriority)}, nil
	}
	if d, ok := takeMark(b.pacing, b.pacing.relist, b.keyOf(req)); ok {
		// Its condition says why; the next listing, not the backoff, can
		// tell it more.
		return reconcile.Result{RequeueAfter: d + relistSlack}, nil
	}
	if b.pacing.take(b.pacing.wrote, b.keyOf(req)) && err == nil && res.RequeueAfter == 0 {
		// crossplane-runtime comes back at once after a create or a
		// delete, to see whether it is over: it has just begun. In a burst
		// that would be a listing after each write; the project's busy
		// listings see its end, and reconcile the object then.
		return reconcile.Result{RequeueAfter: b.pacing.writtenRequeue(), Priority: ptr.To(followUpPriority)}, nil
	}
	if err == nil && res.RequeueAfter > b.pacing.busyPoll {
		res.Priority = ptr.To(handler.LowPriority)
	}
	return res, err
}
