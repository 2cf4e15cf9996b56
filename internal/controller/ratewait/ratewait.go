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

// Package ratewait holds the reconcile rate limit of the provider's controllers.
//
// crossplane-runtime's ratelimiter.Reconciler answers a reconcile that the
// global rate limiter cannot start yet with a requeue after the limiter's delay.
// The limiter reserves its slots in order of asking, so every requeued object
// holds a place in line: when 10,000 steady objects have asked, a new object or
// a spec change waits behind all of them, whatever the work queue's priority
// says. Here the worker itself waits for its slot instead, so at most one slot
// per worker is ever reserved, and the work queue hands the next free worker the
// most urgent object.
package ratewait

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
)

// Reconciler starts its inner reconciler no faster than a rate limiter allows,
// waiting in the worker.
type Reconciler struct {
	name   string
	inner  reconcile.Reconciler
	limit  ratelimiter.RateLimiter
	exempt func(reconcile.Request) bool
}

// An Option configures a Reconciler.
type Option func(*Reconciler)

// WithExempt starts the requests for which exempt is true without waiting
// for the rate limiter, and without taking a slot of it.
func WithExempt(exempt func(reconcile.Request) bool) Option {
	return func(r *Reconciler) { r.exempt = exempt }
}

// New returns a Reconciler that starts inner at the pace of limit, which the
// controller named name may share with others (crossplane-runtime's global rate
// limiter). A nil limit does not limit.
func New(name string, inner reconcile.Reconciler, limit ratelimiter.RateLimiter, o ...Option) *Reconciler {
	r := &Reconciler{name: name, inner: inner, limit: limit}
	for _, fn := range o {
		fn(r)
	}
	return r
}

// Reconcile waits for the rate limiter's slot, then reconciles. A request whose
// context ends while it waits is returned with the context's error, so the work
// queue tries it again.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if r.limit == nil || (r.exempt != nil && r.exempt(req)) {
		return r.inner.Reconcile(ctx, req)
	}
	item := r.name + req.String()
	d := r.limit.When(item)
	metrics.ReconcileRateWait.Observe(d.Seconds())
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return reconcile.Result{}, ctx.Err()
		}
	}
	r.limit.Forget(item)
	return r.inner.Reconcile(ctx, req)
}

// Both is a rate limiter that starts an item only when both a and b allow
// it: a kind's own share of the rate, within the rate that every kind
// shares. A nil one does not limit; both nil: nil.
func Both(a, b ratelimiter.RateLimiter) ratelimiter.RateLimiter {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return both{a, b}
}

type both struct{ a, b ratelimiter.RateLimiter }

// When reserves the item's slot in both, and waits for the later.
func (l both) When(item string) time.Duration { return max(l.a.When(item), l.b.When(item)) }

func (l both) Forget(item string) {
	l.a.Forget(item)
	l.b.Forget(item)
}

func (l both) NumRequeues(item string) int { return max(l.a.NumRequeues(item), l.b.NumRequeues(item)) }
