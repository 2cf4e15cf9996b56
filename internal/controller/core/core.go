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

// Package core is what the controllers of every managed kind share: the
// managed reconciler's setup, the pacing of one fleet within one request
// budget, the listings, referrers and wake-ups, the finalizer keeper, the
// released and namespace rules, and the password store. Each kind's package
// adds its own external client and connector.
package core

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/listcache"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/pgsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/ratewait"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	errInformer = "cannot watch PostgresqlInstances to size the fleet"
	errObserver = "cannot start the scheduled listings of Cloud SQL projects"
	errDialers  = "cannot arrange for the Cloud SQL connectors to close with the provider"
)

// Options configure the controller beyond crossplane-runtime's controller options.
type Options struct {
	controller.Options

	// Transport carries the Cloud SQL requests of the platform's
	// configurations (cluster-scoped ProviderConfigs, ClusterProviderConfigs),
	// within the request budget they share. Observations are spaced to fit
	// that budget's limit (budget.PerMinuteOf; none: not spaced). Each tenant
	// configuration's budget is as large as the platform's, and observations
	// are spaced for the whole fleet as if one budget served it: no budget
	// is overspent, though each may be underused.
	Transport http.RoundTripper
	// TenantTransport, when set, carries those of each tenant configuration
	// (a namespaced ProviderConfig, keyed by its name) within a budget of its
	// own (budget.Windows.Transport); else Transport carries them too.
	TenantTransport func(key string) http.RoundTripper
	// BusyPollInterval is how soon an instance is looked at again while an
	// operation of the provider's is under way.
	BusyPollInterval time.Duration
	// BackupHealthInterval is how often each instance's backup health is
	// read (backupRuns.list, and instances.getLatestRecoveryTime while
	// point-in-time recovery is on); DefaultBackupHealthInterval (an hour)
	// when zero. The reads of the fleet are spread over it, and it grows
	// when they would take more than budget.HealthShare of the budget.
	BackupHealthInterval time.Duration
	// Timeout bounds one reconcile.
	Timeout time.Duration
	// ObserveByList serves observations from one shared instances.list per
	// project (configfile.ObserveList) instead of an instances.get each.
	ObserveByList bool
	// MaxReconcileRate is how many reconciles a second the global rate limiter
	// starts, which observations are also spaced to fit; zero does not.
	MaxReconcileRate int
	// NamespacedEndpoints are the endpoints a namespaced ProviderConfig may
	// name ("*": any); none by default ([tenancy] namespaced_endpoints).
	NamespacedEndpoints []string
	// ExternalAccountSources lets the platform's configurations use
	// external_account keys with a credential_source ([credentials]
	// allow_external_account_sources).
	ExternalAccountSources bool
	// AdmitsNamespace, when set, says whether a cluster-scoped
	// PostgresqlInstance admits the namespace of mg, a namespaced
	// PostgresqlDatabase or PostgresqlUser that names it in
	// spec.forProvider.clusterInstance (its spec.tenancy or spec.injection,
	// as the object webhook reads them); nil admits every namespace.
	AdmitsNamespace func(ctx context.Context, mg client.Object, pi *v1alpha1.PostgresqlInstance) error
	// AdmitsSource, when set, says whether a cluster-scoped PostgresqlInstance
	// may be the source that mg, a namespaced PostgresqlInstance, recovers
	// from (field names where mg names it): a copy of all its data with a
	// postgres password, which needs what its spec.injection admits, not
	// its spec.tenancy; nil admits every namespace.
	AdmitsSource func(ctx context.Context, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error
	// KeyTokenURI lets the platform's service-account keys get their tokens
	// from their own token_uri rather than Google's ([credentials]
	// allow_key_token_uri).
	KeyTokenURI bool
	// ObjectShare is the most of the request budget and of
	// MaxReconcileRate that the requests and reconciles made for databases,
	// users and backups may take ([reconcile] object_share;
	// budget.DefaultObjectShare when zero): they get what the instances'
	// polls leave, up to it.
	ObjectShare float64
	// Split, when set, is what the windows of Transport (budget.WithSplit)
	// and TenantTransport (budget.WithSplitCap) cap the objects' requests
	// by: the pacing sets it.
	Split *budget.Split
	// RecordNamespace is the provider's own namespace, where it records
	// which object holds each login and database (tenancy.Records);
	// DefaultRecordNamespace when empty.
	RecordNamespace string
}

// DefaultRecordNamespace is where the records of who holds each login and
// database are kept when Options.RecordNamespace is empty: Crossplane's
// namespace.
const DefaultRecordNamespace = "crossplane-system"

// Core is what the controllers of both PostgresqlInstance kinds share: the
// pacing of observations (one fleet, one request budget), the scheduled
// listings of each project, and the Cloud SQL clients.
type Core struct {
	o        Options
	pacing   *Pacing
	observer *observer.Observer
	services *providerconfig.ServiceCache
	// fleet counts the PostgresqlInstances of both kinds whose controllers
	// started; objects counts the other kinds' (databases, users).
	fleet   *fleet
	objects *fleet
	// needed counts the listings of databases and users that the objects
	// need per interval.
	needed *neededListings
	// lists serves the databases and users of each Cloud SQL instance to
	// the objects that manage them, one listing per instance and kind.
	lists *listcache.Cache
	// dialers connect to instances for the SQL that gives logins least
	// privilege, one Cloud SQL connector per configuration.
	dialers *pgsql.DialerCache
	// changed carries, for each kind's controller, the objects whose
	// instances a scheduled listing found changed.
	changed map[bool]chan ctrlevent.GenericEvent // by namespaced
	// wakes brings the objects waiting on their instance back when it
	// changes.
	wakes *wakes
	// names records which object holds each login and database.
	names *tenancy.Records
	// indexes are the field indexes the kinds registered in the manager's
	// cache.
	indexes indexes
	// objectLimiter starts the reconciles of databases, users and backups
	// at their share of the reconcile rate, on top of the global limiter:
	// a burst of them leaves the instances theirs (nil: no limit).
	objectLimiter ratelimiter.RateLimiter
}

// New returns the shared part of the PostgresqlInstance controllers, and adds
// its scheduled listings (observe = list) to mgr.
func New(mgr ctrl.Manager, o Options) (*Core, error) {
	c := &Core{
		o:        o,
		services: providerconfig.NewServiceCache(o.Transport, serviceCacheOptions(o)...),
		// The connectors' Admin API requests are their objects'.
		dialers: pgsql.NewDialerCache(budget.ObjectsTransport(o.Transport), dialerCacheOptions(o)...),
		fleet:   &fleet{},
		objects: &fleet{},
		needed:  &neededListings{},
		wakes:   newWakes(o.Logger),
		names:   tenancy.NewRecords(mgr.GetClient(), mgr.GetAPIReader(), cmp.Or(o.RecordNamespace, DefaultRecordNamespace)),
		// Reconciled at once, not at their next poll.
		changed: map[bool]chan ctrlevent.GenericEvent{false: make(chan ctrlevent.GenericEvent, 1024), true: make(chan ctrlevent.GenericEvent, 1024)},
	}
	var pages func() int
	if o.ObserveByList {
		pages = func() int { return c.observer.TotalPages() }
	}
	c.pacing = newPacing(pacingConfig{
		poll: o.PollInterval, busyPoll: o.BusyPollInterval, perMinute: budget.PerMinuteOf(o.Transport),
		reconcileRate: o.MaxReconcileRate, listed: o.ObserveByList, log: o.Logger, pages: pages, objects: c.fleet.count,
		healthEvery: o.BackupHealthInterval,
		others:      c.objects.count, objectShare: o.ObjectShare, split: o.Split,
	})
	// A listing of an instance's databases or users serves its objects for
	// an interval of the objects' polls; those asked for in the last few
	// intervals are what the objects' polls cost.
	c.lists = listcache.New(c.pacing.lastObjectInterval)
	c.pacing.lists = func() int { return max(c.lists.Active(c.pacing.objectWatchExpiry()), c.needed.count()) }
	if o.GlobalRateLimiter != nil && o.MaxReconcileRate > 0 {
		c.objectLimiter = ratelimiter.NewGlobal(objectRate(o.MaxReconcileRate, cmp.Or(o.ObjectShare, budget.DefaultObjectShare)))
	}
	// The connectors hold certificates and refresh them in the background:
	// they go with the manager.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return c.dialers.Close()
	})); err != nil {
		return nil, errors.Wrap(err, errDialers)
	}
	if !o.ObserveByList {
		return c, nil
	}
	c.observer = observer.New(
		observer.WithSchedule(c.pacing.listPeriod, c.pacing.watchExpiry),
		observer.WithOnListing(func(ctx context.Context, l observer.Listing) {
			c.pacing.listingBegan(l.ReadAt)
			c.pacing.Observed(l.ReadAt, l.Objects...)
			c.pacing.sawChange(l.Changed...)
			for _, key := range l.Changed {
				ns, name, namespaced := strings.Cut(key, "/")
				if !namespaced {
					ns, name = "", key
				}
				obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
				select {
				case c.changed[namespaced] <- ctrlevent.GenericEvent{Object: obj}:
				case <-ctx.Done():
					return
				}
			}
		}))
	if err := mgr.Add(manager.RunnableFunc(c.observer.Run)); err != nil {
		return nil, errors.Wrap(err, errObserver)
	}
	return c, nil
}

// AdmitsSource says whether the cluster-scoped PostgresqlInstance pi may be
// the source of mg, a namespaced PostgresqlInstance (Options.AdmitsSource).
func (c *Core) AdmitsSource(ctx context.Context, mg client.Object, field string, pi *v1alpha1.PostgresqlInstance) error {
	if c.o.AdmitsSource == nil {
		return nil
	}
	return c.o.AdmitsSource(ctx, mg, field, pi)
}

// Observer is the core's shared listings of each project (observe = list),
// nil when every instance is read with instances.get.
func (c *Core) Observer() *observer.Observer { return c.observer }

// Services are the Cloud SQL Admin API clients, one per configuration.
func (c *Core) Services() *providerconfig.ServiceCache { return c.services }

// Pacing is the pacing of the fleet's observations, which the instances'
// external clients mark.
func (c *Core) Pacing() *Pacing { return c.pacing }

// BusyPollInterval is how old a listing may be to serve an instance in the
// middle of something, and a name check.
func (c *Core) BusyPollInterval() time.Duration { return c.o.BusyPollInterval }

// serviceCacheOptions are the Cloud SQL clients' options that o gives.
func serviceCacheOptions(o Options) []providerconfig.ServiceCacheOption {
	so := []providerconfig.ServiceCacheOption{providerconfig.WithAuth(auth.WithExternalAccountSources(o.ExternalAccountSources), auth.WithKeyTokenURI(o.KeyTokenURI))}
	if o.TenantTransport != nil {
		so = append(so, providerconfig.WithTenantTransport(o.TenantTransport))
	}
	return so
}

// dialerCacheOptions are the SQL connectors' options that o gives: their Admin
// API requests are authenticated and budgeted as the clients' are.
func dialerCacheOptions(o Options) []pgsql.DialerCacheOption {
	do := []pgsql.DialerCacheOption{pgsql.WithAuth(auth.WithExternalAccountSources(o.ExternalAccountSources), auth.WithKeyTokenURI(o.KeyTokenURI))}
	if o.TenantTransport != nil {
		do = append(do, pgsql.WithTenantTransport(func(key string) http.RoundTripper { return budget.ObjectsTransport(o.TenantTransport(key)) }))
	}
	return do
}

// InstanceKind is a PostgresqlInstance kind that joins the core: its
// objects are the fleet whose observations the pacing spaces within the
// request budget, and the scheduled listings of their projects find their
// changes.
type InstanceKind struct {
	// GroupKind and GVK name the kind.
	GroupKind string
	GVK       schema.GroupVersionKind
	// Object is an empty object of the kind.
	Object client.Object
	// Namespaced says which scheduled listings' changes bring its objects
	// back: the namespaced kind's or the cluster-scoped kind's.
	Namespaced bool
	// Connector is managed.WithTypedExternalConnector of the kind's
	// connector.
	Connector managed.ReconcilerOption
	// Initializers run before each observation.
	Initializers []managed.Initializer
	// Finalizer replaces the managed-resource finalizer (it should embed
	// one).
	Finalizer resource.Finalizer
}

// SetupInstanceKind adds the controller of k to mgr, with the core's fleet,
// pacing, listings and clients.
func (c *Core) SetupInstanceKind(mgr ctrl.Manager, k InstanceKind) error {
	if err := c.fleet.watch(mgr, k.Object); err != nil {
		return err
	}
	if err := c.wakes.watch(mgr, k.Object); err != nil {
		return err
	}
	return c.setup(mgr, kindSetup{
		groupKind: k.GroupKind, gvk: k.GVK, obj: k.Object, connect: k.Connector, changed: c.changed[k.Namespaced],
		key:          func(m metav1.Object) string { return ObjectKey(m) },
		poll:         c.pacing.pollIntervalHook(c.o.BusyPollInterval),
		initializers: k.Initializers,
		finalizer:    k.Finalizer,
	})
}

// kindSetup is what the managed reconciler of one kind needs beyond what the
// core gives every kind.
type kindSetup struct {
	groupKind string
	gvk       schema.GroupVersionKind
	obj       client.Object
	connect   managed.ReconcilerOption
	// changed, when not nil, brings the objects that a scheduled listing
	// found changed.
	changed chan ctrlevent.GenericEvent
	// key names an object in the pacing's bookkeeping.
	key func(metav1.Object) string
	// poll is the poll interval hook.
	poll         managed.PollIntervalHook
	initializers []managed.Initializer
	finalizer    resource.Finalizer
	watches      []Watch
	// instances, when not nil, brings the instances whose changes wake the
	// objects that naming maps them to (those that name them).
	instances chan ctrlevent.GenericEvent
	naming    handler.MapFunc
	// objects says that the kind's objects are an instance's (databases,
	// users, backups): their requests and reconciles take the objects'
	// shares of the budget and of the reconcile rate.
	objects bool
}

// setup adds the managed reconciler of one kind to mgr.
func (c *Core) setup(mgr ctrl.Manager, k kindSetup) error {
	o := c.o
	name := managed.ControllerName(k.groupKind)
	opts := []managed.ReconcilerOption{
		k.connect,
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		//lint:ignore SA1019 crossplane-runtime's event.NewAPIRecorder takes only the old API's record.EventRecorder, and GetEventRecorder's events.k8s.io Events are outside the RBAC Crossplane grants providers (core events only)
		managed.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))),
		managed.WithPollInterval(o.PollInterval),
		managed.WithPollIntervalHook(k.poll),
		managed.WithTimeout(o.Timeout),
		// The instance name is known before creation, so a create that crashed
		// half-way is observed on the next reconcile rather than refused.
		managed.WithDeterministicExternalName(true),
		// instances.get sees an instance as soon as instances.insert returns, so a
		// 404 means it is gone; the default grace period would also stall the
		// deletion of an instance created less than 30s before.
		managed.WithCreationGracePeriod(0),
		managed.WithManagementPolicies(),
		managed.WithInitializers(k.initializers...),
		managed.WithFinalizer(statusKeeper{Finalizer: k.finalizer, name: ManagedFinalizer}),
	}
	if o.MetricOptions != nil {
		opts = append(opts, managed.WithMetricRecorder(o.MetricOptions.MRMetrics))
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(k.gvk), opts...)
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(k.obj, builder.WithPredicates(desiredStateChanged(), notGone()))
	if k.changed != nil {
		b = b.WatchesRawSource(source.Channel(k.changed, enqueueFollowUp()))
	}
	if k.instances != nil {
		b = b.WatchesRawSource(source.Channel(k.instances, handler.EnqueueRequestsFromMapFunc(k.naming)))
	}
	for _, w := range k.watches {
		p := w.Predicates
		if len(p) == 0 {
			p = []predicate.Predicate{desiredStateChanged()}
		}
		b = b.Watches(w.Object, handler.EnqueueRequestsFromMapFunc(w.Map), builder.WithPredicates(p...))
	}
	paced := &backoffToPoll{inner: r, pacing: c.pacing, poll: o.PollInterval, key: k.key}
	var inner reconcile.Reconciler = paced
	limit := o.GlobalRateLimiter
	waits := []ratewait.Option{ratewait.WithExempt(func(req reconcile.Request) bool { return c.pacing.completesWrite(paced.keyOf(req)) })}
	if k.objects {
		// An instance's objects: their requests and reconciles take the
		// objects' shares, and those that wait poll at their interval.
		inner = forObjects{paced}
		paced.every = c.pacing.lastObjectInterval
		// They take the global rate's slots that the instances leave free,
		// never a place in its line: thousands of objects waiting for their
		// share must not delay the revert of an instance's drift.
		if global, ok := limit.(*workqueue.TypedBucketRateLimiter[string]); ok {
			limit = c.objectLimiter
			waits = append(waits, ratewait.WithYieldTo(global.Limiter))
		} else {
			limit = ratewait.Both(c.objectLimiter, limit)
		}
	}
	return b.Complete(ratewait.New(name, inner, limit, waits...))
}

// forObjects reconciles an instance's objects with a context that marks
// their Cloud SQL requests as the objects' (budget.ForObjects).
type forObjects struct{ inner reconcile.Reconciler }

func (r forObjects) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return r.inner.Reconcile(budget.ForObjects(ctx), req)
}

// fleet counts the PostgresqlInstances of every kind in the manager's cache,
// from their informers' events, without listing them: the whole fleet is known
// while most of it still waits for a first reconcile.
type fleet struct{ n atomic.Int64 }

// watch counts the objects of obj's kind too.
func (f *fleet) watch(mgr ctrl.Manager, obj client.Object) error {
	inf, err := mgr.GetCache().GetInformer(context.Background(), obj)
	if err != nil {
		return errors.Wrap(err, errInformer)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { f.n.Add(1) },
		DeleteFunc: func(any) { f.n.Add(-1) },
	})
	return errors.Wrap(err, errInformer)
}

func (f *fleet) count() int { return int(f.n.Load()) }
