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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// Per-object marks: why an object's next visit comes sooner than the poll
// interval (an operation of the provider's is under way) or later than the error
// backoff would bring it (a failure that only a change of the spec can fix, an
// object it waits on, a listing that failed), and the reconciler that turns the
// marks into when it comes back.

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

// MarkRelist says that the object is to be looked at again in d, not in the
// error backoff: its observation failed with its project's listing, which is
// tried again then, or its write was answered in a way that only a read can
// tell what became of it.
func (p *Pacing) MarkRelist(name string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.relist[name] = d
}

// MarkWriteFailed marks an object whose write Cloud SQL answered with a
// server error or a 429, or did not answer (err): the write may have been
// carried out, or the storm may pass, and only a look can tell. It comes back
// at the busy poll interval, and that visit looks before it writes again; in
// the error backoff, whose gaps double, a short storm of 5xx kept objects
// unwritten for minutes once such writes were no longer sent twice. Any other
// error is left to the backoff.
func (p *Pacing) MarkWriteFailed(name string, err error) {
	if cloudsql.IsUnsettled(err) {
		p.MarkRelist(name, p.busyPoll)
	}
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
	// every is the kind's interval, at which a waiting object polls; nil:
	// the instances' (effectiveInterval).
	every func() time.Duration
}

// interval is the interval of the kind's polls.
func (b *backoffToPoll) interval() time.Duration {
	if b.every != nil {
		return b.every()
	}
	return b.pacing.effectiveInterval()
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
	// Taken whatever the reconcile's end, so that no mark outlives it.
	made := b.pacing.take(b.pacing.made, b.keyOf(req))
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
		return reconcile.Result{RequeueAfter: jitter(max(b.poll, b.interval())), Priority: ptr.To(handler.LowPriority)}, nil
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
	if made && err == nil {
		// Its insert is done and in its instance's listing: the visit that
		// makes it Ready reads that listing (no request), and goes before
		// new objects, whose first observations may wait for the budget
		// (a burst of thousands of new databases and users).
		res.Priority = ptr.To(followUpPriority)
		return res, nil
	}
	if err == nil && res.RequeueAfter > b.pacing.busyPoll {
		res.Priority = ptr.To(handler.LowPriority)
	}
	return res, err
}
