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
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/api/googleapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
)

// getModeInterval is 1,000 gets at half of 180 a minute: 11m6.67s.
var getModeInterval = func(gets float64) time.Duration { return time.Duration(gets / 90 * float64(time.Minute)) }(1000)

func TestPacingSpacesTheFleetByTheBudget(t *testing.T) {
	cases := map[string]struct {
		listed    bool
		instances int
		perMinute int
		rate      int
		// lists and others are the databases' and users' listings and
		// objects.
		lists, others int
		want          time.Duration
		// listEvery is how often a project is listed; half the poll interval
		// unless set.
		listEvery time.Duration
	}{
		"ASmallFleetPollsAtThePollInterval": {
			instances: 100, perMinute: 180, want: 5 * time.Minute,
		},
		"GetMode1000GetsNeed1000Over90MinutesOfHalfTheBudget": {
			instances: 1000, perMinute: 180, want: getModeInterval, listEvery: getModeInterval / 2,
		},
		"ListMode10000InstancesAre20PagesTwiceAnInterval": {
			listed: true, instances: 10000, perMinute: 180, want: 5 * time.Minute,
		},
		"ListModeStillSpacesAFleetTooBigForATinyBudget": {
			listed: true, instances: 10000, perMinute: 10, want: 8 * time.Minute, listEvery: 4 * time.Minute,
		},
		"NoBudgetThePollInterval": {
			instances: 100000, want: 5 * time.Minute,
		},
		"TheReconcileRateSpacesReconcilesNotListings10000AtHalfOf10ASecondTake2000s": {
			listed: true, instances: 10000, perMinute: 180, rate: 10, want: 2000 * time.Second,
		},
		// 1,000 instances with 5 databases and 5 users each: their listings
		// and reconciles are paced apart (TestObjectsArePacedApart), and the
		// instances keep the interval they have without them.
		"ListingsOfDatabasesAndUsersLeaveTheInstancesTheirInterval": {
			listed: true, instances: 1000, perMinute: 180, lists: 2000, others: 10000, want: 5 * time.Minute,
		},
		"DatabasesAndUsersLeaveTheInstancesTheirReconciles": {
			listed: true, instances: 1000, perMinute: 180, rate: 10, others: 10000, want: 5 * time.Minute,
		},
		"GetModeWithObjectsAsWithout": {
			instances: 1000, perMinute: 180, lists: 2000, others: 10000, rate: 25, want: getModeInterval, listEvery: getModeInterval / 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p := newPacing(pacingConfig{poll: 5 * time.Minute, perMinute: tc.perMinute, reconcileRate: tc.rate, listed: tc.listed,
				others: func() int { return tc.others }})
			p.lists = func() int { return tc.lists }
			var got time.Duration
			for i := range tc.instances {
				got = max(5*time.Minute, p.interval(fmt.Sprintf("i-%d", i)))
			}
			g.Expect(got).To(Equal(tc.want))
			g.Expect(p.MaxListingAge("i-0")).To(Equal(cmp.Or(tc.listEvery, 150*time.Second)))
			g.Expect(p.listPeriod()).To(Equal(cmp.Or(tc.listEvery, 150*time.Second)))
		})
	}
}

func TestPacingHook(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: time.Minute, perMinute: 180, listed: true})
	hook := p.pollIntervalHook(2 * time.Second)
	mg := &v1alpha1.PostgresqlInstance{}
	mg.SetName("a")

	p.MarkBusy("a")
	g.Expect(hook(mg, time.Minute)).To(Equal(2*time.Second), "busy instances come back soon")
	ns := &nsv1alpha1.PostgresqlInstance{}
	ns.SetNamespace("team-a")
	ns.SetName("a")
	p.MarkBusy(ObjectKey(ns))
	g.Expect(hook(mg, time.Minute)).To(BeNumerically(">=", 54*time.Second), "a namespaced instance's marks are not the cluster-scoped one's")
	g.Expect(hook(ns, time.Minute)).To(Equal(2*time.Second), "busy namespaced instances come back soon")
	for range 100 {
		d := hook(mg, time.Minute)
		g.Expect(d).To(BeNumerically(">=", 54*time.Second))
		g.Expect(d).To(BeNumerically("<=", 66*time.Second), "jitter stays within a tenth of the interval")
	}
}

func TestPacingRemembersActivityUntilAListingShowsIt(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacing(pacingConfig{poll: time.Minute})
	p.now = func() time.Time { return now }

	g.Expect(p.LastActive("a")).To(BeZero(), "nothing done since the start: any listing serves")
	p.busyPoll = 15 * time.Second
	p.MarkBusy("a")
	g.Expect(p.LastActive("a")).To(BeZero(), "an operation seen is not a change of the provider's")
	g.Expect(p.MaxListingAge("a")).To(Equal(15*time.Second), "in the middle of something: a recent listing only")
	g.Expect(p.listPeriod()).To(Equal(15*time.Second), "while one is, projects are listed every busy poll interval")
	p.MarkChanged("a", true)
	g.Expect(p.LastActive("a")).To(Equal(now))
	p.Settled("a", now.Add(-time.Second))
	g.Expect(p.LastActive("a")).To(Equal(now), "a listing older than the change does not settle it")
	p.Settled("a", now.Add(time.Second))
	g.Expect(p.LastActive("a")).To(BeZero())
	g.Expect(p.MaxListingAge("a")).To(Equal(30*time.Second), "steady again: half the poll interval")
	g.Expect(p.listPeriod()).To(Equal(30 * time.Second))

	p.MarkChanged("b", false)
	p.MarkStalled("b")
	p.interval("b")
	p.Forget("b")
	g.Expect(p.active).NotTo(HaveKey("b"))
	g.Expect(p.busy).NotTo(HaveKey("b"))
	g.Expect(p.stalled).NotTo(HaveKey("b"))
	g.Expect(p.hurry).NotTo(HaveKey("b"))
	g.Expect(p.seen).NotTo(HaveKey("b"))
}

// fixedResult is a reconciler that answers what it is told.
type fixedResult struct {
	res reconcile.Result
	err error
}

func (f fixedResult) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	return f.res, f.err
}

func TestSteadyVisitsComeBackAtLowPriority(t *testing.T) {
	low := ptr.To(handler.LowPriority)
	cases := map[string]struct {
		inner   fixedResult
		stalled bool
		// namespace is the object's, for the namespaced kind.
		namespace string
		want      *int
	}{
		"ASteadyInstancesNextPollWaitsBehindOtherWork": {inner: fixedResult{res: reconcile.Result{RequeueAfter: 5 * time.Minute}}, want: low},
		"ABusyInstanceKeepsItsPriority":                {inner: fixedResult{res: reconcile.Result{RequeueAfter: 15 * time.Second}}},
		"AnErrorKeepsItsPriority":                      {inner: fixedResult{err: errors.New("boom")}},
		"AStalledInstanceWaitsForItsNextPollBehindOtherWork": {
			inner: fixedResult{err: errors.New("reserved name")}, stalled: true, want: low,
		},
		"AStalledNamespacedInstanceWaitsForItsNextPollBehindOtherWork": {
			inner: fixedResult{err: errors.New("reserved name")}, stalled: true, namespace: "team-a", want: low,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second})
			req := types.NamespacedName{Namespace: tc.namespace, Name: "a"}
			if tc.stalled {
				p.MarkStalled(ObjectKey(&metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}))
			}
			b := &backoffToPoll{inner: tc.inner, pacing: p, poll: 5 * time.Minute}
			res, _ := b.Reconcile(context.Background(), reconcile.Request{NamespacedName: req})
			g.Expect(res.Priority).To(Equal(tc.want))
		})
	}
}

// An object whose error waits on another object (a database on its owner, a
// user on its databases' deletion) is brought back by a watch of that object:
// it polls at the fleet's interval, behind other work, not in the error
// backoff nor at the busy poll interval (10,000 objects waiting for their
// instances would take the whole reconcile rate); once, and only that object.
func TestWaitingObjectsWaitForTheirWatchBehindOtherWork(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second})
	gvk := v1alpha1.SchemeGroupVersion.WithKind("PostgresqlUser")
	key := func(m metav1.Object) string { return kindKey(gvk, m) }
	pacer := Pacer{p: p, gvk: gvk}
	// crossplane-runtime asks for the error backoff after an error it
	// recorded in a condition.
	//lint:ignore SA1019 crossplane-runtime's managed reconciler still answers Requeue after an error it recorded
	backoff := reconcile.Result{Requeue: true}
	b := &backoffToPoll{inner: fixedResult{res: backoff}, pacing: p, poll: 5 * time.Minute, key: key}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "app"}}
	obj := &v1alpha1.PostgresqlUser{}
	obj.SetName("app")

	pacer.Waiting(obj)
	p.markWaiting("app") // an instance named app: not the object
	res, err := b.Reconcile(context.Background(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeNumerically(">=", time.Duration(float64(5*time.Minute)*(1-pollJitter))))
	g.Expect(res.Priority).To(Equal(ptr.To(handler.LowPriority)))

	// A fleet whose interval has grown past the poll interval: its interval.
	p.mu.Lock()
	p.lastReported = 20 * time.Minute
	p.mu.Unlock()
	pacer.Waiting(obj)
	res, _ = b.Reconcile(context.Background(), req)
	g.Expect(res.RequeueAfter).To(BeNumerically(">=", time.Duration(float64(20*time.Minute)*(1-pollJitter))))

	// An instance's objects wait at their own interval, not the instances'.
	b.every = func() time.Duration { return time.Hour }
	pacer.Waiting(obj)
	res, _ = b.Reconcile(context.Background(), req)
	g.Expect(res.RequeueAfter).To(BeNumerically(">=", time.Duration(float64(time.Hour)*(1-pollJitter))))

	res, err = b.Reconcile(context.Background(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(backoff), "once: the next error backs off unless it waits again")

	other := reconcile.Request{NamespacedName: types.NamespacedName{Name: "other"}}
	res, _ = b.Reconcile(context.Background(), other)
	g.Expect(res).To(Equal(backoff))
}

func TestObjectPollHookKeepsObjectsApartFromInstances(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: time.Minute, perMinute: 180})
	gvk := v1alpha1.SchemeGroupVersion.WithKind("PostgresqlDatabase")
	key := func(m metav1.Object) string { return kindKey(gvk, m) }
	hook := p.objectPollHook(key, 2*time.Second)
	pacer := Pacer{p: p, gvk: gvk}
	obj := &v1alpha1.PostgresqlInstance{}
	obj.SetName("a")

	// An instance named a is busy: an object named a is not.
	p.MarkBusy("a")
	g.Expect(hook(obj, time.Minute)).To(BeNumerically(">=", 54*time.Second))
	pacer.Busy(obj)
	g.Expect(hook(obj, time.Minute)).To(Equal(2*time.Second), "a busy object comes back soon")
	g.Expect(hook(obj, time.Minute)).To(BeNumerically(">=", 54*time.Second), "once")
	p.mu.Lock()
	defer p.mu.Unlock()
	g.Expect(p.seen).To(BeEmpty(), "objects are not counted as instances")
}

// A settled object (a backup that ended) comes back settledFactor times less
// often than the fleet's interval, once per mark; a busy mark wins over it,
// and Forget drops it.
func TestSettledObjectsComeBackRarely(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: time.Minute})
	gvk := v1alpha1.SchemeGroupVersion.WithKind("PostgresqlBackup")
	hook := p.objectPollHook(func(m metav1.Object) string { return kindKey(gvk, m) }, 2*time.Second)
	pacer := Pacer{p: p, gvk: gvk}
	obj := &v1alpha1.PostgresqlBackup{}
	obj.SetName("nightly")

	pacer.Settled(obj)
	g.Expect(hook(obj, time.Minute)).To(BeNumerically(">=", 9*time.Minute), "a settled backup is looked at rarely")
	g.Expect(hook(obj, time.Minute)).To(BeNumerically("<", 2*time.Minute), "once per mark: each observation marks it again")
	pacer.Settled(obj)
	pacer.Busy(obj)
	g.Expect(hook(obj, time.Minute)).To(Equal(2*time.Second), "busy wins: a deletion under way is looked at soon")
	g.Expect(hook(obj, time.Minute)).To(BeNumerically("<", 2*time.Minute), "and takes the settled mark with it")
	pacer.Settled(obj)
	pacer.Forget(obj)
	g.Expect(hook(obj, time.Minute)).To(BeNumerically("<", 2*time.Minute), "a forgotten object has no mark")
}

// A busy database or user comes back soon, but hurries no listing of
// instances: their changes show in the databases' and users' listings, and
// only an instance's visit takes a hurry back, so one database created would
// list its project at the busy poll interval for good.
func TestBusyObjectsDoNotHurryInstanceListings(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: 10 * time.Second, busyPoll: time.Second, perMinute: 180, listed: true})
	normal := p.listPeriod()
	g.Expect(normal).To(Equal(5*time.Second), "a project is listed twice a poll interval")
	gvk := v1alpha1.SchemeGroupVersion.WithKind("PostgresqlUser")
	hook := p.objectPollHook(func(m metav1.Object) string { return kindKey(gvk, m) }, time.Second)
	obj := &v1alpha1.PostgresqlUser{}
	obj.SetName("app")

	Pacer{p: p, gvk: gvk}.Busy(obj)
	g.Expect(p.listPeriod()).To(Equal(normal), "while the user is busy")
	g.Expect(hook(obj, 10*time.Second)).To(Equal(time.Second), "the user comes back soon")
	g.Expect(p.listPeriod()).To(Equal(normal), "after its visit")
}

// The objects' observation gaps are the time between the listings behind two
// successive observations of an object; a listing no newer than the last one
// (an object observed twice from one listing) is no gap, and objects are not
// counted in the fleet of instances.
func TestObjectObservedMeasuresGapsBetweenListings(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: time.Minute})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	count := func() uint64 {
		m := &dto.Metric{}
		g.Expect(metrics.ObjectObservationGap.WithLabelValues("PostgresqlUser").(prometheus.Histogram).Write(m)).To(Succeed())
		return m.GetHistogram().GetSampleCount()
	}
	before := count()
	p.objectObserved("PostgresqlUser", "PostgresqlUser.x:app", t0)
	p.objectObserved("PostgresqlUser", "PostgresqlUser.x:app", t0)
	g.Expect(count()).To(Equal(before), "the first listing, and the same listing again, are no gap")
	p.objectObserved("PostgresqlUser", "PostgresqlUser.x:app", t0.Add(5*time.Minute))
	g.Expect(count()).To(Equal(before + 1))
	g.Expect(p.seen).To(BeEmpty(), "objects do not size the fleet of instances")
	p.Forget("PostgresqlUser.x:app")
	g.Expect(p.objectSeen).To(BeEmpty())
}

// Objects observed from one listing of their instance come back together
// when it has served its interval, each a little late, so that the first
// lists for all and each is observed from a listing one interval younger;
// one observed from a listing about to expire waits for the next, and one
// observed from no listing comes back at the interval with jitter. The
// objects' gaps outlive the instances' much shorter interval.
func TestObjectsOfAnInstanceComeBackWhenItsListingExpires(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: 10 * time.Minute})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	gvk := v1alpha1.SchemeGroupVersion.WithKind("PostgresqlUser")
	key := func(m metav1.Object) string { return kindKey(gvk, m) }
	hook := p.objectPollHook(key, 2*time.Second)
	pacer := Pacer{p: p, gvk: gvk}
	user := func(name string) *v1alpha1.PostgresqlUser {
		return &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	listedAt := now.Add(-4 * time.Minute)
	for _, n := range []string{"a", "b", "c"} {
		pacer.Observed(user(n), listedAt)
	}
	late := time.Duration(objectLateness * float64(10*time.Minute))
	for _, n := range []string{"a", "b", "c"} {
		g.Expect(hook(user(n), 10*time.Minute)).To(BeNumerically("~", 6*time.Minute+late/2, late/2), "%s comes back when the listing read 4 minutes ago expires", n)
	}
	pacer.Observed(user("old"), now.Add(-10*time.Minute+time.Second))
	g.Expect(hook(user("old"), 10*time.Minute)).To(BeNumerically("~", minObjectWait+late/2, late/2), "a listing about to expire: the next one")
	g.Expect(hook(user("unlisted"), 10*time.Minute)).To(BeNumerically("~", 10*time.Minute, time.Minute), "no listing: the interval, with jitter")

	// Pruned with the objects' interval, not the instances'.
	p.interval("i")
	now = now.Add(5 * time.Minute)
	p.prune(now, 3*time.Minute)
	g.Expect(p.objectSeen).To(HaveKey(key(user("a"))))
}

// The listings the objects need are counted from the objects themselves,
// one per listing kind and instance, so that the first pass is paced for
// them all rather than for the listings made so far.
func TestNeededListingsCountsInstancesWithObjects(t *testing.T) {
	g := NewWithT(t)
	user := func(name, instance string) *v1alpha1.PostgresqlUser {
		u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: name}}
		u.Spec.ForProvider.Instance = instance
		return u
	}
	n := &neededListings{}
	for i := range 5 {
		n.add("users", user(fmt.Sprintf("a-%d", i), "a"), 1)
	}
	n.add("users", user("b-0", "b"), 1)
	n.add("databases", user("a-db", "a"), 1)
	unresolved := user("c-0", "")
	n.add("users", unresolved, 1)
	g.Expect(n.count()).To(Equal(3), "users of a and b, databases of a; an object without an instance needs none yet")
	n.move("users", unresolved, user("c-0", "c"))
	g.Expect(n.count()).To(Equal(4), "its instance resolved")
	n.add("users", toolscache.DeletedFinalStateUnknown{Obj: user("b-0", "b")}, -1)
	g.Expect(n.count()).To(Equal(3), "b has no users left")
	n.add("users", user("a-0", "a"), -1)
	g.Expect(n.count()).To(Equal(3), "a still has users")

	// Paced for them: 2,000 listings of 1,000 instances at half of 180 a
	// minute, from the first reconcile on, apart from the instances.
	p := newPacing(pacingConfig{poll: time.Minute, perMinute: 180})
	p.lists = func() int { return 2000 }
	g.Expect(p.objectInterval()).To(BeNumerically(">", 22*time.Minute))
	g.Expect(p.interval("i")).To(BeNumerically("<", time.Second), "its one instance costs one get an interval")
}

// The objects' interval: their listings at the share of the budget that the
// instances' polls, their backup-health reads and the write reserve leave
// (at most the configured share, at least budget.MinObjectShare), and their
// polls at their share of the reconcile rate. The windows' split follows.
func TestObjectsArePacedApart(t *testing.T) {
	minutes := func(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }
	cases := map[string]struct {
		listed         bool
		instances      int
		lists, objects int
		rate           int
		share          float64
		want           time.Duration
		wantShare      float64
	}{
		"FewObjectsAtThePollInterval": {
			listed: true, instances: 10, lists: 20, objects: 100, want: 5 * time.Minute, wantShare: 0.5,
		},
		// 4 pages every 5 minutes leave most of the budget: objects get
		// their whole share, 90 a minute, for 2,000 listings.
		"ListMode1000InstancesWith10ObjectsEach": {
			listed: true, instances: 1000, lists: 2000, objects: 10000, rate: 25, want: minutes(2000.0 / 90), wantShare: 0.5,
		},
		"ASmallerShareGivesObjectsLess": {
			listed: true, instances: 1000, lists: 2000, objects: 10000, share: 0.25, want: minutes(2000.0 / 45), wantShare: 0.25,
		},
		// 1,000 gets take half of the budget: 0.8 - 0.1 - 0.5 = 0.2 is
		// left, 36 a minute.
		"GetModeObjectsGetWhatTheInstancesLeave": {
			instances: 1000, lists: 2000, objects: 10000, want: minutes(2000.0 / 36), wantShare: 0.2,
		},
		// 10,000 objects at three quarters of 12 a second.
		"TheObjectsShareOfTheReconcileRateSpacesTheirPolls": {
			listed: true, instances: 1000, lists: 20, objects: 10000, rate: 25, want: minutes(10000.0 / 9 / 60), wantShare: 0.5,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			split := budget.NewSplit(1)
			p := newPacing(pacingConfig{poll: 5 * time.Minute, perMinute: 180, reconcileRate: tc.rate, listed: tc.listed,
				others: func() int { return tc.objects }, objectShare: tc.share, split: split})
			p.lists = func() int { return tc.lists }
			for i := range tc.instances {
				p.interval(fmt.Sprintf("i-%d", i))
			}
			g.Expect(p.objectInterval()).To(BeNumerically("~", tc.want, time.Second))
			g.Expect(split.Objects()).To(BeNumerically("~", tc.wantShare, 1e-9))
			g.Expect(p.lastObjectInterval()).To(Equal(p.objectInterval()), "listings serve the objects for their interval")
		})
	}
}

// While the objects' writes (a burst of new databases and users) take their
// share of the budget, the listings that watch the unchanged objects give
// way, down to a tenth of it: their interval grows at once, and comes back
// once the writes end, no faster than time passes.
func TestObjectsListingsGiveWayToTheirWrites(t *testing.T) {
	g := NewWithT(t)
	minutes := func(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }
	g.Expect(listingsPerMinute(90, 0)).To(Equal(90.0))
	g.Expect(listingsPerMinute(90, 60)).To(Equal(30.0))
	g.Expect(listingsPerMinute(90, 200)).To(Equal(9.0), "at least a tenth")

	split := budget.NewSplit(1)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := budget.NewWindow(1000, time.Minute, budget.WithSplit(split), budget.WithClock(func() time.Time { return now }, nil))
	p := newPacing(pacingConfig{poll: 5 * time.Minute, perMinute: 180, listed: true, split: split})
	p.now = func() time.Time { return now }
	p.lists = func() int { return 2000 }
	g.Expect(p.objectInterval()).To(BeNumerically("~", minutes(2000.0/90), time.Second), "no writes: the whole share")

	tr := budget.NewTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}), w)
	for range 60 {
		req, err := http.NewRequestWithContext(budget.ForObjects(context.Background()), http.MethodPost, "http://cloudsql.invalid/insert", http.NoBody)
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := tr.RoundTrip(req)
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
	}
	now = now.Add(objectPlanEvery)
	g.Expect(p.objectInterval()).To(BeNumerically("~", minutes(2000.0/30), time.Second), "60 inserts a minute leave the listings 30")
	// The burst over, the interval shrinks no faster than time passes: the
	// listings read at its end do not all expire together.
	now = now.Add(time.Minute)
	g.Expect(p.objectInterval()).To(BeNumerically("~", minutes(2000.0/30-1), time.Second), "a minute shorter")
	now = now.Add(time.Hour)
	g.Expect(p.objectInterval()).To(BeNumerically("~", minutes(2000.0/90), time.Second), "back to the whole share")
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// While operations of the provider's run, a project is listed often enough to
// see each end within a fifth of the time it took, every 2 s at the most and
// every busy poll interval at the least; the operation that has run longest
// sets the pace, and an instance in the middle of something the provider did
// not start is listed at the busy poll interval.
func TestBusyListingsFollowTheLongestOperation(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second, listed: true})
	p.now = func() time.Time { return now }

	p.MarkChanged("a", true)
	g.Expect(p.listPeriod()).To(Equal(busyListFloor), "an operation just begun")
	now = now.Add(20 * time.Second)
	p.MarkChanged("b", true)
	g.Expect(p.listPeriod()).To(Equal(4*time.Second), "a's 20 s")
	now = now.Add(10 * time.Minute)
	g.Expect(p.listPeriod()).To(Equal(15*time.Second), "never less often than the busy poll interval")
	p.Settled("a", now)
	p.Settled("b", now)
	g.Expect(p.listPeriod()).To(Equal(150*time.Second), "steady again")

	p.MarkChanged("c", true)
	p.MarkBusy("d") // seen PENDING_CREATE: an import being created
	g.Expect(p.listPeriod()).To(Equal(15 * time.Second))
}

// An instance whose change a listing has seen does not hurry the listings
// until its reconcile has looked (it may wait for a worker); once it has, it
// counts again if it is still in the middle of something.
func TestASeenChangeDoesNotHurryListings(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second, listed: true})
	p.now = func() time.Time { return now }

	p.MarkChanged("a", true)
	g.Expect(p.listPeriod()).To(Equal(busyListFloor))
	p.sawChange("a")
	g.Expect(p.listPeriod()).To(Equal(150*time.Second), "nothing else is in the middle of something")
	p.Observing("a")
	g.Expect(p.listPeriod()).To(Equal(busyListFloor), "its reconcile looked, and it still runs")
}

// The reconcile that a listing brings when it sees an instance change while
// an insert, patch or delete of the provider's runs completes that write: it
// takes no slot of max_reconcile_rate. Other reconciles do.
func TestAVisitThatCompletesAWriteTakesNoSlot(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second, listed: true})
	p.Began("a")
	g.Expect(p.completesWrite("a")).To(BeFalse(), "no listing saw it change yet")
	p.sawChange("a", "b")
	g.Expect(p.completesWrite("a")).To(BeTrue())
	g.Expect(p.completesWrite("b")).To(BeFalse(), "b changed out of band: no write of the provider's runs")
	p.Observing("a")
	g.Expect(p.completesWrite("a")).To(BeFalse(), "its reconcile has looked")
}

// Once an operation was seen to end, no busy listing is scheduled before the
// writes under way have run for most of that time: nothing could show an
// end. Instances in the middle of something else hold nothing, and a
// quicker operation shortens the hold.
func TestListingsWaitForTheFastestOperationSeen(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second, listed: true})
	p.now = func() time.Time { return now }
	hold := func() time.Time {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.listingHoldLocked()
	}

	p.MarkChanged("a", true)
	p.Began("a")
	g.Expect(hold()).To(BeZero(), "no operation seen to end yet")
	now = now.Add(10 * time.Second)
	p.Settled("a", now)
	g.Expect(p.fastestOp).To(Equal(10 * time.Second))

	start := now
	p.MarkChanged("b", true)
	p.Began("b")
	now = now.Add(time.Second)
	p.MarkChanged("c", true)
	p.Began("c")
	g.Expect(hold()).To(Equal(start.Add(8*time.Second)), "b began first: 0.8 of 10 s after it")
	g.Expect(p.listPeriod()).To(Equal(150*time.Second), "held: listed at the steady period")
	now = start.Add(8 * time.Second)
	g.Expect(p.listPeriod()).To(Equal(busyListFloor), "the hold is over")
	now = start.Add(time.Second)

	p.MarkBusy("d") // seen PENDING_CREATE: an import being created
	g.Expect(hold()).To(BeZero(), "d's end may come any time")
	p.Settled("d", now)
	p.pollIntervalHook(15*time.Second)(&v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, time.Minute)
	g.Expect(hold()).To(Equal(start.Add(8 * time.Second)))

	// Past the hold, a listing comes when c, the last write, has run 10 s
	// if none began since, though a fifth of b's 12 s would be later.
	p.Settled("d", now)
	p.pollIntervalHook(15*time.Second)(&v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, time.Minute)
	now = start.Add(12 * time.Second)
	p.listingBegan(start.Add(10 * time.Second))
	g.Expect(p.listPeriod()).To(Equal(time.Second), "c began 1 s after b: 11 s after b, 1 s after the last listing")
	p.listingBegan(start.Add(11 * time.Second))
	g.Expect(p.listPeriod()).To(Equal(time.Duration(float64(12*time.Second)*busyListShare)), "that listing came")
	now = start.Add(time.Second)

	// The instance of a deleted object, gone 5 s after its delete.
	p.Deleted("b", start.Add(5*time.Second))
	g.Expect(p.fastestOp).To(Equal(5 * time.Second))
	g.Expect(hold()).To(Equal(start.Add(5*time.Second)), "c began 1 s after b: 0.8 of 5 s after it")

	p.Deleted("c", start.Add(time.Hour))
	g.Expect(p.fastestOp).To(Equal(5*time.Second), "the fastest is kept")
}

// crossplane-runtime's immediate requeue after a create or a delete is put off
// to the busy poll interval (the project's busy listings bring the object back
// sooner, when its operation ends), once; other requeues are left alone.
func TestACreateIsNotObservedAtOnce(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second})
	//lint:ignore SA1019 crossplane-runtime's managed reconciler answers Requeue after a create
	again := reconcile.Result{Requeue: true}
	b := &backoffToPoll{inner: fixedResult{res: again}, pacing: p, poll: 5 * time.Minute}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "a"}}

	p.MarkWritten(ObjectKey(&metav1.ObjectMeta{Namespace: "team-a", Name: "a"}))
	res, err := b.Reconcile(context.Background(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(reconcile.Result{RequeueAfter: 15 * time.Second, Priority: ptr.To(followUpPriority)}), "ahead of new objects")
	res, _ = b.Reconcile(context.Background(), req)
	g.Expect(res).To(Equal(again), "once: a conflict's requeue still comes at once")

	p.MarkWritten(ObjectKey(&metav1.ObjectMeta{Namespace: "team-a", Name: "a"}))
	b.inner = fixedResult{res: again, err: errors.New("cannot update the status")}
	res, _ = b.Reconcile(context.Background(), req)
	g.Expect(res).To(Equal(again), "an error keeps its backoff")

}

// An object whose insert is done comes back at once, as crossplane-runtime
// asks, but ahead of new objects: the visit reads the listing the insert
// joined, and makes it Ready.
func TestAMadeObjectIsConfirmedFirst(t *testing.T) {
	g := NewWithT(t)
	p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second})
	//lint:ignore SA1019 crossplane-runtime's managed reconciler answers Requeue after a create
	again := reconcile.Result{Requeue: true}
	b := &backoffToPoll{inner: fixedResult{res: again}, pacing: p, poll: 5 * time.Minute}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "orders"}}
	pacer := Pacer{p: p, gvk: v1alpha1.PostgresqlDatabaseGroupVersionKind}
	key := &metav1.ObjectMeta{Name: "orders"}

	pacer.Made(key)
	b.key = func(m metav1.Object) string { return kindKey(v1alpha1.PostgresqlDatabaseGroupVersionKind, m) }
	res, err := b.Reconcile(context.Background(), req)
	g.Expect(err).NotTo(HaveOccurred())
	//lint:ignore SA1019 crossplane-runtime's managed reconciler answers Requeue after a create
	g.Expect(res).To(Equal(reconcile.Result{Requeue: true, Priority: ptr.To(followUpPriority)}))
	res, _ = b.Reconcile(context.Background(), req)
	g.Expect(res).To(Equal(again), "once")

	pacer.Made(key)
	b.inner = fixedResult{res: again, err: errors.New("cannot update the status")}
	res, _ = b.Reconcile(context.Background(), req)
	g.Expect(res).To(Equal(again), "an error keeps its backoff")
}

// In controller-runtime's priority queue, an instance whose operation a
// listing saw end, and the visit after an insert, go before new objects that
// were queued earlier (which would each hold a worker waiting for the write
// budget), but not before each other: they keep their order.
func TestFollowUpsGoBeforeNewObjects(t *testing.T) {
	g := NewWithT(t)
	q := priorityqueue.New("follow-ups", func(o *priorityqueue.Opts[reconcile.Request]) { o.Log = logr.Discard() })
	defer q.ShutDown()
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: name}}
	}
	obj := func(name string) *nsv1alpha1.PostgresqlInstance {
		pi := &nsv1alpha1.PostgresqlInstance{}
		pi.SetNamespace("team-a")
		pi.SetName(name)
		return pi
	}
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, req("steady"))
	q.Add(req("new-1"))
	q.Add(req("new-2"))
	// A listing saw created-1's insert end; created-2's busy poll is due.
	q.Add(req("created-1")) // its visit after the insert, still waiting to be due
	enqueueFollowUp().Generic(context.Background(), ctrlevent.GenericEvent{Object: obj("created-1")}, q)
	b := &backoffToPoll{inner: fixedResult{}, pacing: newPacing(pacingConfig{busyPoll: time.Millisecond}), poll: time.Minute}
	b.pacing.MarkWritten(ObjectKey(obj("created-2")))
	res, err := b.Reconcile(context.Background(), req("created-2"))
	g.Expect(err).NotTo(HaveOccurred())
	q.AddWithOpts(priorityqueue.AddOpts{After: res.RequeueAfter, Priority: res.Priority}, req("created-2"))
	g.Eventually(q.Len).Should(Equal(5))

	var order []string
	for range 5 {
		r, _ := q.Get()
		order = append(order, r.Name)
		q.Done(r)
	}
	g.Expect(order).To(Equal([]string{"created-1", "created-2", "new-1", "new-2", "steady"}))
}

// While a visible change of the provider's is under way, an instance unlike
// its spec is not patched again, and its operations are listed only after
// twice the busy poll interval, then every half of the time taken since.
func TestOperationsAreListedLessOftenAsAChangeTakesLonger(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second})
	p.now = func() time.Time { return now }

	g.Expect(p.OpsCheckDue("a")).To(BeTrue(), "nothing under way")
	p.MarkChanged("a", false)
	g.Expect(p.OpsCheckDue("a")).To(BeTrue(), "a password change does not show in the instance")
	p.MarkChanged("a", true)
	now = now.Add(29 * time.Second)
	g.Expect(p.OpsCheckDue("a")).To(BeFalse(), "a patch of 29 s: its end shows in a listing")
	now = now.Add(time.Second)
	g.Expect(p.OpsCheckDue("a")).To(BeTrue())
	p.OpsChecked("a")
	now = now.Add(14 * time.Second)
	g.Expect(p.OpsCheckDue("a")).To(BeFalse(), "asked 14 s ago, of 44 s")
	now = now.Add(15 * time.Second)
	g.Expect(p.OpsCheckDue("a")).To(BeFalse(), "asked 29 s ago, of 59 s")
	now = now.Add(time.Second)
	g.Expect(p.OpsCheckDue("a")).To(BeTrue(), "asked 30 s ago, of 60 s")
	p.Settled("a", now.Add(time.Second))
	g.Expect(p.OpsCheckDue("a")).To(BeTrue(), "over")
}

// A write answered with a server error or a 429, or not answered at all, may
// have been carried out: the object comes back at the busy poll interval,
// whose visit looks first, not in the error backoff, whose gaps double. An
// error that says what is wrong (a bad request, a name taken) stays in the
// backoff, which its condition explains.
func TestAnUnsettledWriteComesBackAtTheBusyPoll(t *testing.T) {
	gvk := v1alpha1.SchemeGroupVersion.WithKind("PostgresqlDatabase")
	cases := map[string]struct {
		err     error
		retried bool
	}{
		"A503":          {err: &googleapi.Error{Code: http.StatusServiceUnavailable}, retried: true},
		"A500":          {err: errors.Wrap(&googleapi.Error{Code: http.StatusInternalServerError}, "cannot create database"), retried: true},
		"A429":          {err: &googleapi.Error{Code: http.StatusTooManyRequests}, retried: true},
		"NoAnswer":      {err: errors.Wrap(&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, "cannot create database"), retried: true},
		"ADeadline":     {err: context.DeadlineExceeded, retried: true},
		"ABadRequest":   {err: &googleapi.Error{Code: http.StatusBadRequest}},
		"ANameConflict": {err: &googleapi.Error{Code: http.StatusConflict}},
		"NoErrorAtAll":  {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p := newPacing(pacingConfig{poll: 5 * time.Minute, busyPoll: 15 * time.Second})
			obj := &nsv1alpha1.PostgresqlDatabase{}
			obj.SetNamespace("team-a")
			obj.SetName("orders")
			Pacer{p: p, gvk: gvk}.WriteFailed(obj, tc.err)

			//lint:ignore SA1019 crossplane-runtime's managed reconciler still answers Requeue after an error it recorded
			backoff := reconcile.Result{Requeue: true}
			b := &backoffToPoll{inner: fixedResult{res: backoff}, pacing: p, poll: 5 * time.Minute,
				key: func(m metav1.Object) string { return kindKey(gvk, m) }}
			res, err := b.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "orders"}})
			g.Expect(err).NotTo(HaveOccurred())
			if !tc.retried {
				g.Expect(res).To(Equal(backoff), "left to the error backoff")
				return
			}
			g.Expect(res.RequeueAfter).To(Equal(15*time.Second + relistSlack))
			//lint:ignore SA1019 as above
			g.Expect(res.Requeue).To(BeFalse())
			// The mark serves one visit.
			res, _ = b.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "orders"}})
			g.Expect(res).To(Equal(backoff))
		})
	}
}
