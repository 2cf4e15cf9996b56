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

package ratewait

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	. "github.com/onsi/gomega"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// counting records when each reconcile started.
type counting struct{ started []time.Time }

func (c *counting) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	c.started = append(c.started, time.Now())
	return reconcile.Result{RequeueAfter: time.Hour}, nil
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}
}

func TestWaitsInTheWorkerForItsSlot(t *testing.T) {
	g := NewWithT(t)
	inner := &counting{}
	// Ten a second, no burst beyond one: the third reconcile starts 200ms
	// after the first, and each returns what the inner reconciler said.
	r := New("c", inner, &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(10, 1)})
	begin := time.Now()
	for _, n := range []string{"a", "b", "c"} {
		res, err := r.Reconcile(context.Background(), request(n))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.RequeueAfter).To(Equal(time.Hour), "the inner reconciler's result, not a requeue for the limiter")
	}
	g.Expect(inner.started).To(HaveLen(3))
	g.Expect(inner.started[2].Sub(begin)).To(BeNumerically(">=", 150*time.Millisecond))
}

func TestAnEndedContextStopsTheWait(t *testing.T) {
	g := NewWithT(t)
	inner := &counting{}
	r := New("c", inner, &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Every(time.Hour), 1)})
	_, err := r.Reconcile(context.Background(), request("first"))
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = r.Reconcile(ctx, request("second"))
	g.Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue(), "got %v", err)
	g.Expect(inner.started).To(HaveLen(1), "the second reconcile must not start before its slot")
}

func TestWithoutALimiterReconcilesAtOnce(t *testing.T) {
	g := NewWithT(t)
	inner := &counting{}
	_, err := New("c", inner, nil).Reconcile(context.Background(), request("a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(inner.started).To(HaveLen(1))
}

// An exempt request starts at once and leaves the limiter's slots to others.
func TestExemptRequestsTakeNoSlot(t *testing.T) {
	g := NewWithT(t)
	inner := &counting{}
	lim := rate.NewLimiter(rate.Every(time.Hour), 1)
	r := New("c", inner, &workqueue.TypedBucketRateLimiter[string]{Limiter: lim},
		WithExempt(func(req reconcile.Request) bool { return req.Name == "follow-up" }))
	for range 3 {
		_, err := r.Reconcile(context.Background(), request("follow-up"))
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(inner.started).To(HaveLen(3), "exempt: none waited")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := r.Reconcile(ctx, request("new"))
	g.Expect(err).NotTo(HaveOccurred(), "the limiter's one slot is still free")
	g.Expect(inner.started).To(HaveLen(4))
}

func TestBothWaitsForTheSlowerLimiter(t *testing.T) {
	g := NewWithT(t)
	// The objects' share: one a second; the rate every kind shares: plenty.
	share := &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(1, 1)}
	shared := &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(1000, 1000)}
	l := Both(share, shared)
	g.Expect(l.When("a")).To(BeZero())
	g.Expect(l.When("b")).To(BeNumerically(">", 900*time.Millisecond), "the share is spent for a second")
	g.Expect(shared.Limiter.Tokens()).To(BeNumerically("<", 999), "each start takes a slot of the shared rate too")
	g.Expect(Both(nil, shared)).To(BeIdenticalTo(shared))
	g.Expect(Both(share, nil)).To(BeIdenticalTo(share))
	g.Expect(Both(nil, nil)).To(BeNil())
}
