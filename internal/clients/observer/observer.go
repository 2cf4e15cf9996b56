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

// Package observer keeps one shared view of each project's Cloud SQL instances,
// read with instances.list: one page of up to 500 instances observes what 500
// instances.get would, so a fleet's polling costs grow with N/500 instead of N.
//
// A view is refreshed on demand, by the first reconcile that finds it too old (the
// others wait for that one listing instead of starting their own, or are served
// meanwhile from the last one while its last page is young enough), and on a
// schedule while some object watches an instance of the project (Watch, Run): each
// scheduled listing is compared with the one before, and the objects whose
// instances changed are reported, so that an out-of-band change is noticed within
// one listing period however many objects share the project and however seldom
// each is reconciled. When no object watches a project, nothing lists it.
package observer

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/url"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// PageSize is how many instances one instances.list page asks for: Cloud SQL's
// default and the most that keeps an answer small (its maximum is 1,000).
const PageSize = 500

// MaxPages bounds the pages of one listing. Each page is bounded in size (see
// package sizelimit), but an endpoint that always sends a nextPageToken would
// otherwise be listed forever, into memory. Cloud SQL allows a project a few
// thousand instances, a few pages of PageSize: 100 pages (50,000 instances) is
// far above any real project.
const MaxPages = 100

const (
	errList         = "cannot list the Cloud SQL instances of project %s"
	errDecode       = "cannot read Cloud SQL instance %s from a listing of its project"
	errTooManyPages = "the listing through provider configuration %q at %s went on past %d pages of %d instances, more than Cloud SQL holds for any project: the provider stopped it; check that the configuration's spec.endpoint names a Cloud SQL Admin API"
)

// retryAfter is how long a failed listing answers for the listings it would
// start: callers get its error (a 403 sends them to instances.get) instead of
// each trying again.
const retryAfter = 30 * time.Second

// retryFirst is how long a listing that failed for a passing reason (a 429, a
// 5xx, no answer) answers for when the one before it succeeded; each next
// failure in a row answers twice as long, up to retryAfter. A storm of errors
// fails a listing now and then although most of its requests go through, and
// every observation of the project waits for the next listing.
const retryFirst = 2 * time.Second

// refreshTimeout bounds one listing, which runs apart from the reconcile that
// started it: many wait for it, and one of them ending must not fail it for all.
const refreshTimeout = 5 * time.Minute

// tick is how often Run looks for views due for a scheduled listing: a
// small share of the shortest listing period (2 s while operations run), so
// that a listing due a little after one tick does not wait a whole tick more.
const tick = 200 * time.Millisecond

// Observer holds the views, one per source (a ProviderConfig: one project's
// endpoint and credentials) and project.
type Observer struct {
	now func() time.Time
	// period is how often Run lists a watched project; nil never.
	period func() time.Duration
	// expiry is how long a watch lasts without being renewed; nil forever.
	expiry func() time.Duration
	// onListing hears of every successful listing of a watched project.
	onListing func(context.Context, Listing)

	mu      sync.Mutex
	views   map[key]*view
	watches map[string]watch // by object
	expired time.Time        // when watches were last expired
}

// watch is an object's interest in one instance of a view.
type watch struct {
	view     key
	instance string
	renewed  time.Time
}

// Listing is what a listing of a watched project tells about the objects that
// watch its instances.
type Listing struct {
	// ReadAt is when the listing began.
	ReadAt time.Time
	// Objects watch an instance that the listing includes: each was observed.
	Objects []string
	// Changed watch an instance that differs from the previous listing of the
	// project: it changed, appeared or vanished since (one still being
	// created is reported once its creation ends).
	Changed []string
}

type key struct {
	source  string
	project string
}

// view is the latest listing of one project.
type view struct {
	mu sync.Mutex
	// started is when the listing that produced instances began: a change made
	// before then is in it; ended is when its last page came.
	started, ended time.Time
	// instances holds each listed instance packed: its JSON deflated, about
	// a ninth of the memory of the decoded object (10,000 instances are about
	// 10 MB rather than 85), a fresh copy for every caller, and a cheap
	// comparison with the previous listing.
	instances map[string]packed
	// refreshing is closed when the listing under way ends; nil when none runs.
	refreshing chan struct{}
	err        error
	failedAt   time.Time
	// retryIn is how long err answers (retryAfter, or less for a passing
	// failure), and failures how many listings in a row failed.
	retryIn  time.Duration
	failures int
	pages    int
	// complete is false when a page warned that the result may lack instances
	// (an unreachable region, say): then absence proves nothing.
	complete bool
	// watched counts the objects that watch an instance of the view, and svc is
	// the client the latest of them was given, for scheduled listings. Both are
	// guarded by the Observer's mu.
	watched int
	svc     *sqladmin.Service
}

// An Option configures an Observer.
type Option func(*Observer)

// WithClock replaces the wall clock, for tests.
func WithClock(now func() time.Time) Option {
	return func(o *Observer) { o.now = now }
}

// WithSchedule lists every watched project again when its view is period old
// (Run does), and ends a watch that was not renewed for expiry.
func WithSchedule(period, expiry func() time.Duration) Option {
	return func(o *Observer) { o.period, o.expiry = period, expiry }
}

// WithOnListing calls fn after every successful listing of a watched project.
// fn may block until ctx ends; no reconcile waits for it.
func WithOnListing(fn func(ctx context.Context, l Listing)) Option {
	return func(o *Observer) { o.onListing = fn }
}

// New returns an Observer with no views.
func New(opts ...Option) *Observer {
	o := &Observer{now: time.Now, views: map[key]*view{}, watches: map[string]watch{}}
	for _, fn := range opts {
		fn(o)
	}
	return o
}

// Result is what a view says of one instance.
type Result struct {
	// Listed is true when a listing that fits the call's bounds answered; false
	// tells the caller to ask instances.get.
	Listed bool
	// Instance is the instance as listed, the caller's own copy; nil when the
	// listing lacks it.
	Instance *sqladmin.DatabaseInstance
	// Complete says that Cloud SQL sent no warning that the listing may lack
	// instances; only then may a caller read anything into an absence.
	Complete bool
	// ReadAt is when the listing that produced it began.
	ReadAt time.Time
}

// Instance returns what the view of source's project says of instance name,
// from a listing that began after notBefore and at most maxAge ago (or, while
// the next listing is under way, whose last page came at most maxAge ago),
// listing the project with svc again (once for every caller waiting) when the
// view is older.
func (o *Observer) Instance(ctx context.Context, svc *sqladmin.Service, source, project, name string, notBefore time.Time, maxAge time.Duration) (Result, error) {
	if !notBefore.Before(o.now()) {
		return Result{}, nil // nothing listed yet can show a change made now
	}
	v := o.view(source, project)
	called := o.now()
	// A listing that serves this call must begin after notBefore; one under way
	// may have begun before, so the caller may wait for one more. Past that (a
	// clock that stands still), the caller is told to ask instances.get.
	for range 3 {
		v.mu.Lock()
		now := o.now()
		// A listing that began after the call is as fresh as the call can want,
		// however long its pages took. While the next listing is under way,
		// the last one serves for maxAge after its last page came: a project
		// listed at the pace the objects leave the instances (10,000
		// instances are 20 pages, about 25 s) would otherwise hold every
		// worker for a whole listing per reconcile, and the fleet's first
		// pass would go at workers per listing (4 a second), not at the
		// reconcile rate.
		recent := now.Sub(v.started) <= maxAge || !v.started.Before(called) ||
			(v.refreshing != nil && now.Sub(v.ended) <= maxAge)
		if v.instances != nil && v.started.After(notBefore) && recent {
			return v.resultUnlock(name)
		}
		if v.err != nil && now.Sub(v.failedAt) < v.retryIn && v.refreshing == nil {
			err := v.err
			v.mu.Unlock()
			return Result{}, err
		}
		wait := v.refreshing
		if wait == nil {
			// This caller starts the listing for everyone.
			wait = o.startLocked(context.WithoutCancel(ctx), svc, key{source: source, project: project}, v)
		}
		v.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
		v.mu.Lock()
		err := v.err
		fresh := v.instances != nil && v.started.After(notBefore)
		v.mu.Unlock()
		if err != nil && !fresh {
			return Result{}, err
		}
	}
	return Result{}, nil
}

// Peek returns what the view of source's project says of instance name when a
// listing that began after notBefore is at hand, and a Result that is not
// Listed otherwise. It never lists, waits or makes a view: a caller that may
// spend no request (a dry run) reads what the others' requests bought.
func (o *Observer) Peek(source, project, name string, notBefore time.Time) (Result, error) {
	o.mu.Lock()
	v, ok := o.views[key{source: source, project: project}]
	o.mu.Unlock()
	if !ok {
		return Result{}, nil
	}
	v.mu.Lock()
	if v.instances == nil || !v.started.After(notBefore) {
		v.mu.Unlock()
		return Result{}, nil
	}
	return v.resultUnlock(name)
}

// resultUnlock is what v's listing says of instance name; v.mu must be held,
// and is released before the instance is decoded.
func (v *view) resultUnlock(name string) (Result, error) {
	r := Result{Listed: true, Complete: v.complete, ReadAt: v.started}
	p, ok := v.instances[name]
	v.mu.Unlock()
	if !ok {
		return r, nil
	}
	i, err := p.instance()
	if err != nil {
		return r, errors.Wrapf(err, errDecode, name)
	}
	r.Instance = i
	return r, nil
}

// startLocked starts a listing of v, which runs apart from whoever asked for it;
// v.mu must be held. It returns what closes when the listing ends.
func (o *Observer) startLocked(ctx context.Context, svc *sqladmin.Service, k key, v *view) chan struct{} {
	v.refreshing = make(chan struct{})
	rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	go func() {
		defer cancel()
		o.refresh(rctx, svc, k, v)
	}()
	return v.refreshing
}

// Watch records that object needs instance of source's project observed: while
// any object watches one of its instances, Run lists the project every period,
// with svc (the latest given), and reports the objects whose instances changed.
// A watch is renewed by calling Watch again, and moves when the object names
// another instance or project.
func (o *Observer) Watch(svc *sqladmin.Service, source, project, instance, object string) {
	k := key{source: source, project: project}
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.watches[object]; ok {
		o.unwatchLocked(object, w)
	}
	v := o.viewLocked(k)
	v.watched++
	v.svc = svc
	o.watches[object] = watch{view: k, instance: instance, renewed: o.now()}
}

// Unwatch ends object's watch, if any: its object is gone.
func (o *Observer) Unwatch(object string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.watches[object]; ok {
		o.unwatchLocked(object, w)
	}
}

func (o *Observer) unwatchLocked(object string, w watch) {
	delete(o.watches, object)
	if v, ok := o.views[w.view]; ok {
		v.watched--
	}
}

// Watched is how many objects watch an instance.
func (o *Observer) Watched() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.watches)
}

// Run lists every watched project once a period, until ctx ends. It is the only
// scheduler: one goroutine for every view, and one more per listing under way.
func (o *Observer) Run(ctx context.Context) error {
	wait.UntilWithContext(ctx, o.schedule, tick)
	return nil
}

// expireEvery bounds how often schedule walks every watch for expired ones.
const expireEvery = time.Minute

// schedule starts a listing of every watched view that is a period old, and
// ends the watches not renewed within the expiry.
func (o *Observer) schedule(ctx context.Context) {
	if o.period == nil {
		return
	}
	period := o.period()
	type due struct {
		k   key
		v   *view
		svc *sqladmin.Service
	}
	var views []due
	o.mu.Lock()
	now := o.now()
	if o.expiry != nil && now.Sub(o.expired) >= expireEvery {
		o.expired = now
		expiry := o.expiry()
		for obj, w := range o.watches {
			if now.Sub(w.renewed) > expiry {
				o.unwatchLocked(obj, w)
			}
		}
	}
	for k, v := range o.views {
		if v.watched > 0 && v.svc != nil {
			views = append(views, due{k, v, v.svc})
		}
	}
	o.mu.Unlock()
	for _, d := range views {
		d.v.mu.Lock()
		failing := d.v.err != nil && now.Sub(d.v.failedAt) < d.v.retryIn
		if d.v.refreshing == nil && !failing && now.Sub(d.v.started) >= period {
			o.startLocked(ctx, d.svc, d.k, d.v)
		}
		d.v.mu.Unlock()
	}
}

// Pages is how many instances.list pages the last listing of source's project
// took.
func (o *Observer) Pages(source, project string) int {
	v := o.view(source, project)
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.pages
}

// RetryIn is how long until the view of source's project, whose last
// listing failed, is listed again on demand; 0 when the last listing
// succeeded, or its failure no longer answers.
func (o *Observer) RetryIn(source, project string) time.Duration {
	v := o.view(source, project)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err == nil {
		return 0
	}
	return max(0, v.failedAt.Add(v.retryIn).Sub(o.now()))
}

// TotalPages is how many pages one listing of every view takes, at least one
// each: what listing every project once costs.
func (o *Observer) TotalPages() int {
	o.mu.Lock()
	views := make([]*view, 0, len(o.views))
	for _, v := range o.views {
		views = append(views, v)
	}
	o.mu.Unlock()
	n := 0
	for _, v := range views {
		v.mu.Lock()
		n += max(v.pages, 1)
		v.mu.Unlock()
	}
	return n
}

func (o *Observer) view(source, project string) *view {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.viewLocked(key{source: source, project: project})
}

func (o *Observer) viewLocked(k key) *view {
	v, ok := o.views[k]
	if !ok {
		v = &view{}
		o.views[k] = v
	}
	return v
}

// refresh lists every instance of the project, page by page, and replaces the
// view when the whole listing succeeded. A failed listing keeps the previous view
// (callers that need a newer one get the error).
func (o *Observer) refresh(ctx context.Context, svc *sqladmin.Service, k key, v *view) {
	started := o.now()
	// The view the listing replaces: an instance that did not change keeps its
	// bytes, so that a steady fleet's listing holds one copy of each instance,
	// not two, while it is read.
	v.mu.Lock()
	held, lastPages := v.instances, v.pages
	v.mu.Unlock()
	if lastPages <= 1 {
		// One page answers the webhook's name checks as well as the
		// controllers: when a burst of writes fills the budget's share of
		// reads and writes, it may use the admission reserve, so that the
		// listing that sees those writes done is not kept waiting by them.
		ctx = budget.ForEveryone(ctx)
	}
	all := make(map[string]packed, len(held))
	var pk packer
	pages, complete := 0, true
	err := svc.Instances.List(k.project).MaxResults(PageSize).Pages(ctx, func(page *sqladmin.InstancesListResponse) error {
		pages++
		if pages > MaxPages {
			return errors.Errorf(errTooManyPages, k.source, svc.BasePath, MaxPages, PageSize)
		}
		if len(page.Warnings) > 0 {
			complete = false
		}
		for _, inst := range page.Items {
			if inst == nil {
				continue
			}
			raw, err := json.Marshal(inst)
			if err != nil {
				return errors.Wrapf(err, errDecode, inst.Name)
			}
			sum := sha256.Sum256(raw)
			if prev, ok := held[inst.Name]; ok && prev.sum == sum {
				all[inst.Name] = prev
				continue
			}
			p, err := pk.pack(raw, sum)
			if err != nil {
				return errors.Wrapf(err, errDecode, inst.Name)
			}
			all[inst.Name] = p
		}
		return nil
	})
	v.mu.Lock()
	previous := v.instances
	if err != nil {
		v.failures++
		v.err, v.failedAt, v.retryIn = errors.Wrapf(err, errList, k.project), o.now(), retryWait(err, v.failures)
	} else {
		v.err, v.instances, v.started, v.ended, v.pages, v.complete, v.failures = nil, all, started, o.now(), pages, complete, 0
	}
	close(v.refreshing)
	v.refreshing = nil
	v.mu.Unlock()
	if err == nil && o.onListing != nil {
		if l := o.compare(k, previous, all, started); len(l.Objects)+len(l.Changed) > 0 {
			o.onListing(ctx, l)
		}
	}
}

// retryWait is how long a listing that failed with err, the failures-th in a
// row, answers for.
func retryWait(err error, failures int) time.Duration {
	var unanswered *url.Error
	if !cloudsql.IsRetryable(err) && !errors.As(err, &unanswered) {
		return retryAfter
	}
	return min(retryAfter, retryFirst<<min(failures-1, 5))
}

// compare tells, of the objects that watch an instance of view k, which a
// listing observed and which watch an instance that is not as the previous
// listing had it. After the first listing, nothing is reported changed: every
// object is reconciled once anyway when the provider starts.
func (o *Observer) compare(k key, previous, current map[string]packed, readAt time.Time) Listing {
	type watcher struct{ object, instance string }
	var watchers []watcher
	o.mu.Lock()
	for obj, w := range o.watches {
		if w.view == k {
			watchers = append(watchers, watcher{obj, w.instance})
		}
	}
	o.mu.Unlock()
	l := Listing{ReadAt: readAt}
	for _, w := range watchers {
		cur, listed := current[w.instance]
		if listed {
			l.Objects = append(l.Objects, w.object)
		}
		if previous == nil {
			continue
		}
		if prev, ok := previous[w.instance]; (ok != listed || prev.sum != cur.sum) && !(listed && inTransition(cur)) {
			l.Changed = append(l.Changed, w.object)
		}
	}
	return l
}

// Cloud SQL's states of an instance being created and being deleted.
const (
	statePendingCreate = "PENDING_CREATE"
	statePendingDelete = "PENDING_DELETE"
)

// inTransition says whether a listed instance is still being created or
// deleted: its object knows that already (it inserted or deleted it, or
// waits for it to exist), and waking it for each step would only reconcile a
// burst of creates or deletes again and again. The end is reported: the
// instance created, or gone. An instance deleted out of band is reported
// gone, a minute later than its PENDING_DELETE would have been.
func inTransition(p packed) bool {
	raw, err := p.json()
	if err != nil {
		return false
	}
	var i struct {
		State string `json:"state"`
	}
	return json.Unmarshal(raw, &i) == nil && (i.State == statePendingCreate || i.State == statePendingDelete)
}
