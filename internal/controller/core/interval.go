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
	"math"
	"math/rand/v2"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
)

// The fleet interval: how often each object is observed so that the fleet's
// polls fit the request budget and the reconcile rate, how old a listing may be
// to serve an observation, and how the interval is reported.

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
		// The instances' reads alone: their objects' listings are paced
		// apart (objectInterval), so that an instance is observed as often
		// with objects as without.
		reads := readsPerInterval(n, pages, p.listed)
		d = time.Duration(float64(reads) / (budget.PollShare * float64(p.perMinute)) * float64(time.Minute))
		p.mu.Lock()
		p.budgetBound = d
		p.instanceReads = reads
		p.mu.Unlock()
	}
	if p.reconcileRate > 0 {
		// Every poll is a reconcile, and reconciles start at most this fast:
		// polls may take only a share of them, so that new objects, spec
		// changes and busy instances find free slots as well as the first
		// place in the work queue. The objects' reconciles have a limiter
		// of their own (objectRate).
		d = max(d, time.Duration(float64(n)/(reconcileShare*float64(p.reconcileRate))*float64(time.Second)))
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
	// Objects have an interval of their own, often far longer.
	olderObjects := max(older, 3*max(p.poll, p.objectEvery))
	for k, t := range p.objectSeen {
		if now.Sub(t) > olderObjects {
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

// The objects' interval: an instance's databases, users and backups (its
// objects) are observed apart from the instances, from what the instances
// leave of the request budget and the reconcile rate, so that a fleet that
// gains objects keeps observing its instances as often as before.

// objectReconcileShare is the share of the objects' reconcile rate
// (objectRate) that polls of steady objects may plan for: an object's poll
// costs no request while its instance's listings are fresh, and new objects
// and spec changes keep the rest.
const objectReconcileShare = 0.75

// objectPlanEvery bounds how often the objects' interval is computed again:
// each object's poll asks for it.
const objectPlanEvery = time.Second

// objectRate is how many reconciles a second the objects may start, of the
// provider's max_reconcile_rate rate, at the objects' share of it: at least
// one.
func objectRate(rate int, share float64) int {
	return max(1, int(float64(rate)*share))
}

// objectBudgetShare is the share of the request budget that the objects may
// use now: what the instances' planned polls (reads every interval, spaced
// every), their backup-health reads (budget.HealthShare) and the write
// reserve leave, at most the configured share and at least
// budget.MinObjectShare.
func (p *Pacing) objectBudgetShare(reads int, every time.Duration) float64 {
	if p.perMinute <= 0 {
		return p.objectShare
	}
	left := 1 - budget.DefaultWriteReserve - budget.HealthShare
	if every > 0 {
		left -= float64(reads) / every.Minutes() / float64(p.perMinute)
	}
	return min(max(left, budget.MinObjectShare), p.objectShare)
}

// objectInterval is the time between two observations of an unchanged
// object, and the age at which a listing of an instance's databases (users)
// is made again: the poll interval, or longer when the listings the objects
// need (lists) do not fit the objects' share of the budget, or their polls
// their share of the reconcile rate. It sets the split that caps the
// objects' requests in every window to that share.
func (p *Pacing) objectInterval() time.Duration {
	p.mu.Lock()
	now := p.now()
	if !p.objectPlanned.IsZero() && now.Sub(p.objectPlanned) < objectPlanEvery {
		// As last computed; the poll interval while the first computation
		// runs.
		d := max(p.poll, p.objectEvery)
		p.mu.Unlock()
		return d
	}
	// The last interval, and how long ago it was computed.
	prev, since := p.objectEvery, now.Sub(p.objectPlanned)
	p.objectPlanned = now
	reads, every := p.instanceReads, max(p.poll, p.lastReported)
	p.mu.Unlock()

	var d time.Duration
	if p.perMinute > 0 {
		share := p.objectBudgetShare(reads, every)
		p.split.Set(share)
		metrics.ObjectShare.Set(share)
		lists := 0
		if p.lists != nil {
			lists = p.lists()
		}
		d = time.Duration(float64(lists) / listingsPerMinute(share*float64(p.perMinute), p.split.Writes(now)) * float64(time.Minute))
	}
	if p.reconcileRate > 0 && p.others != nil {
		rate := float64(objectRate(p.reconcileRate, p.objectShare))
		d = max(d, time.Duration(float64(p.others())/(objectReconcileShare*rate)*float64(time.Second)))
	}
	// It grows at once, and shrinks no faster than time passes: when a burst
	// of writes ends, the listings it made last longer (they are younger
	// than the interval), and those read at its end would otherwise all
	// expire together, and be read again in a storm ahead of the objects
	// that the last writes made (1,765 listings in the last 6 minutes of a
	// 10,000-object create phase).
	effective := max(p.poll, d)
	if prev > effective {
		effective = max(effective, prev-since)
	}
	p.mu.Lock()
	p.objectEvery = effective
	p.mu.Unlock()
	metrics.ObjectPollInterval.Set(effective.Seconds())
	return effective
}

// minListingShare is the least share of the objects' budget that their
// listings plan for while the objects' writes take the rest.
const minListingShare = 0.1

// listingsPerMinute is how many listings of instances' databases and users
// the objects' interval plans for, of their budget of perMinute requests a
// minute: what the objects' writes of the last minute (inserts, deletes,
// password changes: what users asked for) leave, at least a tenth. In the
// steady state that is the whole budget; while thousands of new databases
// and users are created, the listings that watch the unchanged ones give
// way, and their interval grows for as long as the burst lasts, instead of
// holding every worker in a wait for the budget ahead of the inserts.
func listingsPerMinute(perMinute float64, writes int) float64 {
	return max(perMinute-float64(writes), minListingShare*perMinute)
}

// objectWatchExpiry is how long a listing of an instance's databases or
// users that no object asked for counts as a cost: a few objects'
// intervals.
func (p *Pacing) objectWatchExpiry() time.Duration {
	return 3 * p.lastObjectInterval()
}

// lastObjectInterval is the objects' interval as last computed (the poll
// interval before any): how long a listing of an instance's databases or
// users serves its objects. It computes nothing, for callers that hold a
// lock that computing it takes (the listings').
func (p *Pacing) lastObjectInterval() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.poll, p.objectEvery)
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
