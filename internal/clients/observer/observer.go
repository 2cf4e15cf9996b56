// Package observer keeps one shared view of each project's Cloud SQL instances,
// read with instances.list: one page of up to 500 instances observes what 500
// instances.get would, so a fleet's polling costs grow with N/500 instead of N.
//
// A view is refreshed on demand, by the first reconcile that finds it too old; the
// others wait for that one listing instead of starting their own. When no reconcile
// asks, nothing is listed: the lister runs only while some instance of the project
// needs observing.
package observer

import (
	"context"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// PageSize is how many instances one instances.list page asks for: Cloud SQL's
// default and the most that keeps an answer small (its maximum is 1,000).
const PageSize = 500

const errList = "cannot list the Cloud SQL instances of project %s"

// retryAfter is how long a failed listing answers for the listings it would
// start: callers get its error (a 403 sends them to instances.get) instead of
// each trying again.
const retryAfter = 30 * time.Second

// refreshTimeout bounds one listing, which runs apart from the reconcile that
// started it: many wait for it, and one of them ending must not fail it for all.
const refreshTimeout = 5 * time.Minute

// Observer holds the views, one per source (a ProviderConfig: one project's
// endpoint and credentials) and project.
type Observer struct {
	now func() time.Time

	mu    sync.Mutex
	views map[key]*view
}

type key struct {
	source  string
	project string
}

// view is the latest listing of one project.
type view struct {
	mu sync.Mutex
	// started is when the listing that produced instances began: a change made
	// before then is in it.
	started   time.Time
	instances map[string]*sqladmin.DatabaseInstance
	// refreshing is closed when the listing under way ends; nil when none runs.
	refreshing chan struct{}
	err        error
	failedAt   time.Time
	pages      int
	// complete is false when a page warned that the result may lack instances
	// (an unreachable region, say): then absence proves nothing.
	complete bool
}

// An Option configures an Observer.
type Option func(*Observer)

// WithClock replaces the wall clock, for tests.
func WithClock(now func() time.Time) Option {
	return func(o *Observer) { o.now = now }
}

// New returns an Observer with no views.
func New(opts ...Option) *Observer {
	o := &Observer{now: time.Now, views: map[key]*view{}}
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
	// Instance is the instance as listed; nil when the listing lacks it.
	Instance *sqladmin.DatabaseInstance
	// Complete says that Cloud SQL sent no warning that the listing may lack
	// instances; only then may a caller read anything into an absence.
	Complete bool
	// ReadAt is when the listing that produced it began.
	ReadAt time.Time
}

// Instance returns what the view of source's project says of instance name,
// from a listing that began after notBefore and at most maxAge ago, listing the
// project with svc again (once for every caller waiting) when the view is older.
// The instance it returns is shared: callers must not change it.
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
		// however long its pages took.
		recent := now.Sub(v.started) <= maxAge || !v.started.Before(called)
		if v.instances != nil && v.started.After(notBefore) && recent {
			r := Result{Listed: true, Instance: v.instances[name], Complete: v.complete, ReadAt: v.started}
			v.mu.Unlock()
			return r, nil
		}
		if v.err != nil && now.Sub(v.failedAt) < retryAfter && v.refreshing == nil {
			err := v.err
			v.mu.Unlock()
			return Result{}, err
		}
		wait := v.refreshing
		if wait == nil {
			// This caller starts the listing for everyone.
			v.refreshing = make(chan struct{})
			wait = v.refreshing
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
			go func() {
				defer cancel()
				o.refresh(rctx, svc, project, v)
			}()
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

// Pages is how many instances.list pages the last listing of source's project
// took.
func (o *Observer) Pages(source, project string) int {
	v := o.view(source, project)
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.pages
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
	k := key{source: source, project: project}
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
func (o *Observer) refresh(ctx context.Context, svc *sqladmin.Service, project string, v *view) {
	started := o.now()
	all := map[string]*sqladmin.DatabaseInstance{}
	pages, complete := 0, true
	err := svc.Instances.List(project).MaxResults(PageSize).Pages(ctx, func(page *sqladmin.InstancesListResponse) error {
		pages++
		if len(page.Warnings) > 0 {
			complete = false
		}
		for _, inst := range page.Items {
			if inst != nil {
				all[inst.Name] = inst
			}
		}
		return nil
	})
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil {
		v.err, v.failedAt = errors.Wrapf(err, errList, project), o.now()
	} else {
		v.err, v.instances, v.started, v.pages, v.complete = nil, all, started, pages, complete
	}
	close(v.refreshing)
	v.refreshing = nil
}
