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
	"iter"
	"time"
)

// Operation tracking: when the provider last changed each instance (a listing
// that began before then cannot say how it is now), whether an operation of its
// own can still run there, when an observation shows it over, and how often the
// project is listed while operations run.

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
