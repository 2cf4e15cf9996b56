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
//
// Between controllers a reserved slot is a place in line too: a kind whose
// reconciles are many (an instance's databases and users) would hold most of
// the places of the rate that every kind shares, and an instance whose drift
// a listing just saw would wait behind them. Such a kind yields
// (WithYieldTo): it starts only when the shared rate has a slot free now.
package ratewait

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"golang.org/x/time/rate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/pause"
)

// Reconciler starts its inner reconciler no faster than a rate limiter allows,
// waiting in the worker.
type Reconciler struct {
	name    string
	inner   reconcile.Reconciler
	limit   ratelimiter.RateLimiter
	exempt  func(reconcile.Request) bool
	yieldTo *rate.Limiter
}

// An Option configures a Reconciler.
type Option func(*Reconciler)

// WithExempt starts the requests for which exempt is true without waiting
// for the rate limiter, and without taking a slot of it.
func WithExempt(exempt func(reconcile.Request) bool) Option {
	return func(r *Reconciler) { r.exempt = exempt }
}

// WithYieldTo starts a reconcile, once its own limiter (New's limit) allows
// it, only when shared has a slot free now, and takes that slot. Controllers
// that reserve their slots of shared (New with shared as limit) go first,
// however many of this controller's reconciles wait: they are never behind
// this one's in shared's line.
func WithYieldTo(shared *rate.Limiter) Option {
	return func(r *Reconciler) { r.yieldTo = shared }
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

// Reconcile waits for the rate limiter's slot (and the shared slot it yields
// for), then reconciles. A request whose context ends while it waits is
// returned with the context's error, so the work queue tries it again.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if (r.limit == nil && r.yieldTo == nil) || (r.exempt != nil && r.exempt(req)) {
		return r.inner.Reconcile(ctx, req)
	}
	began := time.Now()
	if r.limit != nil {
		item := r.name + req.String()
		if err := pause.For(ctx, r.limit.When(item)); err != nil {
			return reconcile.Result{}, err
		}
		r.limit.Forget(item)
	}
	if r.yieldTo != nil {
		if err := yield(ctx, r.yieldTo); err != nil {
			return reconcile.Result{}, err
		}
	}
	metrics.ReconcileRateWait.WithLabelValues(r.name).Observe(time.Since(began).Seconds())
	return r.inner.Reconcile(ctx, req)
}

// yield waits until shared has a slot free now, and takes it. The slots that
// others reserved ahead come back at shared's rate, so it sleeps until one
// should be free; another yielding worker may take it first, then it sleeps
// again.
func yield(ctx context.Context, shared *rate.Limiter) error {
	for {
		now := time.Now()
		if shared.AllowN(now, 1) {
			return nil
		}
		every := time.Second
		if l := float64(shared.Limit()); l > 0 {
			every = time.Duration(float64(time.Second) / l)
		}
		// Tokens below one are the slots reserved ahead, and the part of
		// one not yet come back.
		if err := pause.For(ctx, max(time.Millisecond, time.Duration((1-shared.TokensAt(now))*float64(every)))); err != nil {
			return err
		}
	}
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
