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

// A yielding reconcile (an object's) takes the shared rate's slots that the
// reserving controllers (the instances') leave free: an instance that asks
// while the object waits is not pushed back by it, and the object starts
// after it.
func TestAYieldingReconcileGoesAfterTheReservationsOfOthers(t *testing.T) {
	g := NewWithT(t)
	shared := rate.NewLimiter(5, 1)
	instances := &workqueue.TypedBucketRateLimiter[string]{Limiter: shared}
	begin := time.Now()
	// Slots at 0, 200 and 400ms.
	for _, n := range []string{"a", "b", "c"} {
		instances.When(n)
	}
	inner := &counting{}
	r := New("objects", inner, nil, WithYieldTo(shared))
	done := make(chan error, 1)
	go func() {
		_, err := r.Reconcile(context.Background(), request("object"))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	// Reserved after the object began to wait: the slot at 600ms, as if the
	// object were not there (behind it, 800ms).
	late := time.Since(begin) + instances.When("late")
	g.Expect(late).To(BeNumerically("<", 700*time.Millisecond), "the waiting object took no place ahead of the instance")
	g.Eventually(done, 5*time.Second).Should(Receive(BeNil()))
	g.Expect(inner.started).To(HaveLen(1))
	g.Expect(inner.started[0].Sub(begin)).To(BeNumerically(">=", late+100*time.Millisecond), "the object starts once the instance's slot has passed and one is free")
	g.Expect(shared.Tokens()).To(BeNumerically("<", 1), "the object took its slot of the shared rate")
}

func TestAnEndedContextStopsAYield(t *testing.T) {
	g := NewWithT(t)
	shared := rate.NewLimiter(rate.Every(time.Hour), 1)
	g.Expect(shared.Allow()).To(BeTrue())
	inner := &counting{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := New("objects", inner, nil, WithYieldTo(shared)).Reconcile(ctx, request("object"))
	g.Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue(), "got %v", err)
	g.Expect(inner.started).To(BeEmpty())
}
