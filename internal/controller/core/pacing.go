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
	"cmp"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
)

// Pacing carries, from an external client's calls to the reconciler's choice of
// when to come back, what it needs to know in three parts, each with a file of
// its own: per-object marks (marks.go: why an object needs a visit sooner than
// the poll interval, or later than the error backoff would bring), operation
// tracking (operations.go: when the provider last changed each instance, which a
// listing must postdate to be trusted, and when its operation ends), and the
// fleet interval (interval.go: observations spaced so that the fleet's polling
// fits the request budget). One mutex guards all three: a listing's result
// touches each. Keys are metadata.names.
type Pacing struct {
	now      func() time.Time
	poll     time.Duration
	busyPoll time.Duration
	log      logging.Logger

	mu sync.Mutex
	marks
	operations
	fleetInterval
	health backupHealth
}

// marks are the per-object marks (marks.go).
type marks struct {
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
	// wrote marks instances whose insert or delete Cloud SQL accepted in the
	// reconcile under way: its operation has just begun, and looking again at
	// once would only start a listing that shows it PENDING_CREATE or
	// PENDING_DELETE.
	wrote map[string]bool
	// made marks objects whose insert Cloud SQL accepted in the reconcile
	// under way (Pacer.Made).
	made map[string]bool
	// settled marks objects of other kinds whose external resource no
	// longer changes by itself (a finished backup): they come back at
	// settledFactor times the fleet's interval.
	settled map[string]bool
}

// operations is what is known of the provider's operations on instances
// (operations.go).
type operations struct {
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
}

// fleetInterval is what spaces the fleet's observations (interval.go).
type fleetInterval struct {
	perMinute     int
	reconcileRate int
	listed        bool
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
	// interval of the objects' polls costs (listcache.Cache.Active); nil:
	// none.
	lists func() int
	// objectShare is the most of the budget and of the reconcile rate that
	// the objects may take ([reconcile] object_share); split caps their
	// requests in every window at the share the objects' interval computed
	// last (nil: not capped).
	objectShare float64
	split       *budget.Split
	// instanceReads is what observing every instance once costs in
	// requests, as last computed; objectEvery the objects' interval as
	// last computed, at objectPlanned.
	instanceReads int
	objectEvery   time.Duration
	objectPlanned time.Time

	lastReported time.Duration
	lastLogged   time.Time
	// budgetBound is the least interval that the request budget alone allows.
	budgetBound time.Duration
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
	// healthEvery is the backup-health interval (DefaultBackupHealthInterval
	// when zero).
	healthEvery time.Duration
	listed      bool // observe = list
	log         logging.Logger
	pages       func() int
	objects     func() int
	others      func() int
	// objectShare is [reconcile] object_share (budget.DefaultObjectShare
	// when zero); split, when set, caps the objects' requests.
	objectShare float64
	split       *budget.Split
}

func newPacing(c pacingConfig) *Pacing {
	log := c.log
	if log == nil {
		log = logging.NewNopLogger()
	}
	healthEvery := c.healthEvery
	if healthEvery <= 0 {
		healthEvery = DefaultBackupHealthInterval
	}
	return &Pacing{
		now: time.Now, poll: c.poll, busyPoll: c.busyPoll, log: log,
		health: backupHealth{every: healthEvery, started: time.Now(), tried: map[string]time.Time{}, requests: map[string]int{}},
		marks: marks{
			busy: map[string]bool{}, stalled: map[string]bool{}, waiting: map[string]bool{},
			relist: map[string]time.Duration{}, wrote: map[string]bool{}, made: map[string]bool{}, settled: map[string]bool{},
		},
		operations: operations{
			active: map[string]time.Time{}, hurry: map[string]bool{}, visible: map[string]bool{}, idle: map[string]bool{},
			deleting: map[string]bool{}, opsAsked: map[string]time.Time{}, opAt: map[string]time.Time{}, changeSeen: map[string]bool{},
		},
		fleetInterval: fleetInterval{
			perMinute: c.perMinute, reconcileRate: c.reconcileRate, listed: c.listed,
			pages: c.pages, objects: c.objects, others: c.others,
			objectShare: cmp.Or(c.objectShare, budget.DefaultObjectShare), split: c.split,
			seen: map[string]time.Time{}, objectSeen: map[string]time.Time{},
		},
	}
}

// NewPacing returns a pacing of its own for the external client of one
// object, outside a Core: no budget, no fleet, no listings; poll and busyPoll
// are the poll intervals (tests of an external client read its marks), and
// health the backup-health interval (zero: DefaultBackupHealthInterval).
func NewPacing(poll, busyPoll time.Duration, health ...time.Duration) *Pacing {
	c := pacingConfig{poll: poll, busyPoll: busyPoll}
	if len(health) > 0 {
		c.healthEvery = health[0]
	}
	return newPacing(c)
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
	delete(p.made, name)
	delete(p.settled, name)
	delete(p.opsAsked, name)
	delete(p.seen, name)
	delete(p.objectSeen, name)
	delete(p.health.tried, name)
	p.health.set(name, 0)
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
