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

package budgetlease

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

var env *controlplane.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // make unit: the tests that need a control plane skip
	}
	var err error
	if env, err = controlplane.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

// newLease returns the key of a Lease of a namespace of its own.
func newLease(t *testing.T, g *WithT) types.NamespacedName {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "provider-"}}
	g.Expect(env.Client.Create(context.Background(), ns)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ns) })
	return types.NamespacedName{Namespace: ns.Name, Name: DefaultName}
}

func keeper(key types.NamespacedName, w *budget.Window) *Keeper {
	return New(env.Client, env.Client, key, w, logging.NewNopLogger())
}

// A leader saves its record in the Lease; the next leader restores it and
// waits for what the first spent, plus what it may have sent unrecorded.
func TestTheNextLeaderCountsWhatThePreviousSpent(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	key := newLease(t, g)

	first := budget.NewWindow(30, time.Minute, budget.WithBurst(5))
	k := keeper(key, first)
	g.Expect(k.Sync(ctx)).To(Succeed())
	g.Expect(env.Client.Get(ctx, key, &coordinationv1.Lease{})).NotTo(Succeed(), "nothing admitted: nothing saved")
	for range 5 {
		g.Expect(first.Wait(ctx)).To(Succeed())
	}
	g.Expect(k.Sync(ctx)).To(Succeed())
	l := &coordinationv1.Lease{}
	g.Expect(env.Client.Get(ctx, key, l)).To(Succeed())
	g.Expect(l.Annotations).To(HaveKey(AnnotationRecord))
	g.Expect(k.Sync(ctx)).To(Succeed())
	again := &coordinationv1.Lease{}
	g.Expect(env.Client.Get(ctx, key, again)).To(Succeed())
	g.Expect(again.ResourceVersion).To(Equal(l.ResourceVersion), "nothing new: nothing written")

	next := budget.NewWindow(30, time.Minute, budget.WithBurst(5))
	keeper(key, next).Restore(ctx)
	// 5 recorded, and 5 a second for the 2 seconds that may have gone unrecorded.
	g.Expect(next.Record().Admitted).To(HaveLen(15))

	// A Lease that holds no record, or one that cannot be read, restores
	// nothing but what may have gone unrecorded; the next save replaces it.
	l = again
	l.Annotations[AnnotationRecord] = "not json"
	g.Expect(env.Client.Update(ctx, l)).To(Succeed())
	broken := budget.NewWindow(30, time.Minute, budget.WithBurst(5))
	keeper(key, broken).Restore(ctx)
	g.Expect(broken.Record().Admitted).To(HaveLen(10))
	g.Expect(keeper(key, broken).Sync(ctx)).To(Succeed())
	g.Expect(env.Client.Get(ctx, key, l)).To(Succeed())
	g.Expect(l.Annotations[AnnotationRecord]).To(ContainSubstring("admitted"))
	missing := budget.NewWindow(30, time.Minute, budget.WithBurst(5))
	keeper(types.NamespacedName{Namespace: key.Namespace, Name: "other"}, missing).Restore(ctx)
	g.Expect(missing.Record().Admitted).To(HaveLen(10))
}

// Two replicas, the leader's controllers and the other's admission lookups,
// admit requests and sync at the same time: the record ends up holding every
// admission of both (nobody's save overwrote the other's), and each window
// counts them all, each once.
func TestReplicasShareOneRecord(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	key := newLease(t, g)

	leader := budget.NewWindow(200, time.Minute)
	other := budget.NewWindow(200, time.Minute)
	kl, ko := keeper(key, leader), keeper(key, other)
	var wg sync.WaitGroup
	for _, r := range []struct {
		k     *Keeper
		admit func(context.Context) error
		n     int
	}{{kl, leader.Wait, 60}, {ko, other.WaitAdmission, 20}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range r.n {
				g.Expect(r.admit(ctx)).To(Succeed())
				if i%4 == 0 {
					g.Expect(r.k.Sync(ctx)).To(Succeed())
				}
			}
			g.Expect(r.k.Sync(ctx)).To(Succeed())
		}()
	}
	wg.Wait()
	g.Expect(kl.Sync(ctx)).To(Succeed())
	g.Expect(ko.Sync(ctx)).To(Succeed())

	stored, _, err := kl.read(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stored.Admitted).To(HaveLen(80))
	g.Expect(leader.Record().Admitted).To(HaveLen(80))
	g.Expect(other.Record().Admitted).To(HaveLen(80))
}

// The controllers' requests (through Gate) wait until the replica leads and
// has restored the previous leader's record; without leading they never go.
func TestControllersSendOnlyAfterTheRestore(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	key := newLease(t, g)

	previous := budget.NewWindow(30, time.Minute, budget.WithBurst(5))
	for range 7 {
		g.Expect(previous.Wait(ctx)).To(Succeed())
	}
	g.Expect(keeper(key, previous).Sync(ctx)).To(Succeed())

	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { sent.Add(1) }))
	defer srv.Close()
	w := budget.NewWindow(30, time.Minute, budget.WithBurst(5))
	k := keeper(key, w)
	c := &http.Client{Transport: k.Gate(budget.NewTransport(nil, w))}
	g.Expect(budget.PerMinuteOf(c.Transport)).To(Equal(30), "the gate says the limit of the budget behind it, which the pacing spaces observations to fit")

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(short, http.MethodGet, srv.URL, nil)
	_, err := c.Do(req)
	g.Expect(err).To(MatchError(ContainSubstring("deadline exceeded")), "not leading: held")
	g.Expect(sent.Load()).To(BeZero())

	lctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = k.Leading().Start(lctx) }()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := c.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(sent.Load()).To(BeEquivalentTo(1))
	// The previous leader's 7, 5 a second for 2 seconds, and this request.
	g.Expect(w.Record().Admitted).To(HaveLen(7 + 10 + 1))
}

// While the keeper saves, a burst of requests goes past the window's burst
// bound without waiting a second for every few: the window asks for a save
// every burst × 2 unrecorded instead, so that a crash after the burst leaves
// at most what a new leader counts as unrecorded. With a burst bound of one a
// second (two unrecorded), 30 requests would take 30 s under the burst bound,
// far past the 10 s that the saves, a few round trips each, are given.
func TestABurstGoesAtTheQuotasPaceWithItsRecordSaved(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	key := newLease(t, g)
	newWindow := func() *budget.Window { return budget.NewWindow(180, time.Minute, budget.WithBurst(1)) }
	w := newWindow()
	k := keeper(key, w)
	kctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go func() { _ = k.Start(kctx) }()
	g.Expect(w.Wait(kctx)).To(Succeed())
	g.Eventually(func() error { return env.Client.Get(kctx, key, &coordinationv1.Lease{}) }).Should(Succeed(), "the first request's save")

	ctx, cancel := context.WithTimeout(kctx, 10*time.Second)
	defer cancel()
	for range 29 {
		g.Expect(w.Wait(ctx)).To(Succeed())
	}
	l := &coordinationv1.Lease{}
	g.Expect(env.Client.Get(kctx, key, l)).To(Succeed())
	var r budget.Record
	g.Expect(json.Unmarshal([]byte(l.Annotations[AnnotationRecord]), &r)).To(Succeed())
	g.Expect(len(r.Admitted)).To(BeNumerically(">=", 30-2), "at most 2 unrecorded")
	next := newWindow()
	keeper(key, next).Restore(kctx)
	g.Expect(len(next.Record().Admitted)).To(BeNumerically(">=", 30), "what was recorded, and 2 that may not be")
}
