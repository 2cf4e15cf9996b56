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

// Package listcache serves the databases and the users of Cloud SQL instances
// to the objects that manage them: one databases.list or users.list request
// per instance, shared by every object of that instance, at most once per
// maximum age. A fleet of instances with several databases and users each
// then costs a request per instance and kind per poll, not one per object.
package listcache

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"golang.org/x/sync/singleflight"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/intern"
)

const (
	errListDatabases = "cannot list the databases of Cloud SQL instance %s in project %s"
	errListUsers     = "cannot list the users of Cloud SQL instance %s in project %s"
	errStillListing  = "the listing of the %s of Cloud SQL instance %s in project %s has not come back before this reconcile's deadline: it waits for the request budget, which a fleet's first pass fills, and goes on for the next try"
)

// Kinds of listing.
const (
	KindDatabases = "databases"
	KindUsers     = "users"
)

// A Database is what a listing keeps of a database: what its object
// compares. The whole sqladmin.Database (its self link, etag, project,
// instance) would take five times the memory, a good part of the provider's
// in a fleet with 50,000 databases.
type Database struct {
	Name, Charset, Collation string
}

// A User is what a listing keeps of a login, as Database.
type User struct {
	Name, Type, IAMStatus string
}

func (d Database) name() string { return d.Name }
func (u User) name() string     { return u.Name }

// item is what a listing holds.
type item interface{ name() string }

// Key names one listing: the kind of what it lists, of which instance, in
// which project, read through which configuration (Source: the listings of
// two configurations are not shared, since their credentials may see
// different things).
type Key struct {
	Source, Project, Instance, Kind string
}

func (k Key) String() string {
	return k.Kind + "\x00" + k.Source + "\x00" + k.Project + "\x00" + k.Instance
}

// A Cache holds the last listing of each key. It is safe for concurrent use.
type Cache struct {
	now    func() time.Time
	maxAge func() time.Duration

	group singleflight.Group

	mu      sync.Mutex
	entries map[Key]*entry
	// gen counts each key's invalidations: a listing begun before the last
	// one is neither kept nor shared with callers that came after it.
	gen map[Key]uint64
}

type entry struct {
	items  any
	readAt time.Time
	// used is when an object last asked for the listing: a listing nobody
	// asked for in a while is dropped, and stops counting as a cost.
	used time.Time
}

// An Option configures a Cache.
type Option func(*Cache)

// WithClock makes the cache read time from now.
func WithClock(now func() time.Time) Option {
	return func(c *Cache) { c.now = now }
}

// New returns a cache whose listings serve for maxAge (read on every
// request, so that it can follow the pacing of the fleet).
func New(maxAge func() time.Duration, o ...Option) *Cache {
	c := &Cache{now: time.Now, maxAge: maxAge, entries: map[Key]*entry{}, gen: map[Key]uint64{}}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// Databases returns the databases of k's instance (k.Kind is set to
// KindDatabases) and when they were read: from a listing younger than the
// maximum age, or from one databases.list request shared by every caller
// that asks meanwhile.
func (c *Cache) Databases(ctx context.Context, svc *sqladmin.Service, k Key) ([]Database, time.Time, error) {
	k.Kind = KindDatabases
	v, at, err := c.get(ctx, k, func(ctx context.Context) (any, error) {
		resp, err := svc.Databases.List(k.Project, k.Instance).Context(ctx).Do()
		if err != nil {
			return nil, errors.Wrapf(err, errListDatabases, k.Instance, k.Project)
		}
		dbs := make([]Database, 0, len(resp.Items))
		for _, d := range resp.Items {
			if d != nil {
				dbs = append(dbs, Database{Name: d.Name, Charset: intern.String(d.Charset), Collation: intern.String(d.Collation)})
			}
		}
		return dbs, nil
	})
	dbs, _ := v.([]Database)
	return dbs, at, err
}

// Users is Databases for the users of k's instance (users.list).
func (c *Cache) Users(ctx context.Context, svc *sqladmin.Service, k Key) ([]User, time.Time, error) {
	k.Kind = KindUsers
	v, at, err := c.get(ctx, k, func(ctx context.Context) (any, error) {
		resp, err := svc.Users.List(k.Project, k.Instance).Context(ctx).Do()
		if err != nil {
			return nil, errors.Wrapf(err, errListUsers, k.Instance, k.Project)
		}
		users := make([]User, 0, len(resp.Items))
		for _, u := range resp.Items {
			if u != nil {
				users = append(users, User{Name: u.Name, Type: intern.String(u.Type), IAMStatus: intern.String(u.IamStatus)})
			}
		}
		return users, nil
	})
	users, _ := v.([]User)
	return users, at, err
}

// get serves k from its entry when young enough, else from fetch, which
// runs once for every caller waiting at the time. Errors are not kept.
func (c *Cache) get(ctx context.Context, k Key, fetch func(context.Context) (any, error)) (any, time.Time, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	if ok {
		e.used = now
		if now.Sub(e.readAt) < c.maxAge() {
			items, at := e.items, e.readAt
			c.mu.Unlock()
			return items, at, nil
		}
	}
	gen := c.gen[k]
	c.mu.Unlock()

	type result struct {
		items  any
		readAt time.Time
	}
	ch := c.group.DoChan(fmt.Sprintf("%s\x00%d", k, gen), func() (any, error) {
		// A listing that ended between this caller's look at the entries
		// and this flight serves it: no second request.
		c.mu.Lock()
		if e, ok := c.entries[k]; ok && c.gen[k] == gen && c.now().Sub(e.readAt) < c.maxAge() {
			items, at := e.items, e.readAt
			c.mu.Unlock()
			return result{items, at}, nil
		}
		c.mu.Unlock()
		// The listing began now: whatever changed after this is not in it.
		readAt := c.now()
		items, err := fetch(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if c.gen[k] == gen {
			c.entries[k] = &entry{items: items, readAt: readAt, used: c.now()}
		}
		c.mu.Unlock()
		return result{items, readAt}, nil
	})
	select {
	case <-ctx.Done():
		return nil, time.Time{}, errors.Wrapf(ctx.Err(), errStillListing, k.Kind, k.Instance, k.Project)
	case r := <-ch:
		if r.Err != nil {
			return nil, time.Time{}, r.Err
		}
		res := r.Val.(result)
		return res.items, res.readAt, nil
	}
}

// Invalidate drops k's listing, after a change of the provider's that it
// does not show: the next caller lists again.
func (c *Cache) Invalidate(k Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, k)
	c.gen[k]++
}

// InsertedDatabase records the answer op of a databases.insert that asked
// for d (k.Kind is set to KindDatabases). When Cloud SQL answered it DONE
// without an error, d joins k's listing: the object that made it is
// confirmed from the listing at hand, not from a listing of its own, and its
// instance's other objects go on being served from it (a listing begun
// before the insert is neither kept nor shared with later callers, since it
// may not show d). Otherwise the listing is dropped, as Invalidate does: the
// next caller lists again, and sees the operation's end. It says whether d
// is known made.
func (c *Cache) InsertedDatabase(k Key, op *sqladmin.Operation, d Database) bool {
	k.Kind = KindDatabases
	return inserted(c, k, op, d)
}

// InsertedUser is InsertedDatabase for a users.insert that asked for u.
func (c *Cache) InsertedUser(k Key, op *sqladmin.Operation, u User) bool {
	k.Kind = KindUsers
	return inserted(c, k, op, u)
}

// inserted is InsertedDatabase and InsertedUser for a listing of Ts. The
// entry's slice is never changed in place: callers may hold it. A listing
// that already shows the name (one stored between Cloud SQL's answer and
// this call) gets the inserted item in its place, never a second one.
func inserted[T item](c *Cache, k Key, op *sqladmin.Operation, it T) bool {
	if !cloudsql.OperationSucceeded(op) {
		c.Invalidate(k)
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen[k]++
	if e, ok := c.entries[k]; ok {
		items, _ := e.items.([]T)
		items = slices.DeleteFunc(slices.Clone(items), func(x T) bool { return x.name() == it.name() })
		e.items = append(items, it)
	}
	return true
}

// Active is how many listings some object asked for within the last period:
// what observing them all once costs in requests. Listings nobody asked for
// in that time are dropped.
func (c *Cache) Active(within time.Duration) int {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if now.Sub(e.used) > within {
			delete(c.entries, k)
		}
	}
	// Generations stay (a key per instance and kind): dropping one could let
	// a listing begun before an invalidation pass for a younger one.
	return len(c.entries)
}
