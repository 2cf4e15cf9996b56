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

// Package postgresqlinstance reconciles PostgresqlInstances with Cloud SQL
// instances, through crossplane-runtime's managed reconciler.
package postgresqlinstance

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
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/spf13/afero"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/listcache"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/pgsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/ratewait"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	errListReplicas  = "cannot list the secrets copied into other namespaces for this instance"
	errDeleteReplica = "cannot delete secret %s/%s copied for this instance"
	errSetExtName    = "cannot record the Cloud SQL instance name in the crossplane.io/external-name annotation"
	errInformer      = "cannot watch PostgresqlInstances to size the fleet"
	errObserver      = "cannot start the scheduled listings of Cloud SQL projects"
	errDialers       = "cannot arrange for the Cloud SQL connectors to close with the provider"
	errReleaseSecret = "cannot release connection secret %s/%s from the deleted PostgresqlInstance (deletionPolicy Orphan keeps the instance, so its password must stay)"
)

// Options configure the controller beyond crossplane-runtime's controller options.
type Options struct {
	controller.Options

	// Transport carries the Cloud SQL requests of the platform's
	// configurations (cluster-scoped ProviderConfigs, ClusterProviderConfigs),
	// within the request budget they share.
	Transport http.RoundTripper
	// TenantTransport, when set, carries those of each tenant configuration
	// (a namespaced ProviderConfig, keyed by its name) within a budget of its
	// own (budget.Windows.Transport); else Transport carries them too.
	TenantTransport func(key string) http.RoundTripper
	// BusyPollInterval is how soon an instance is looked at again while an
	// operation of the provider's is under way.
	BusyPollInterval time.Duration
	// Timeout bounds one reconcile.
	Timeout time.Duration
	// ObserveByList serves observations from one shared instances.list per
	// project (configfile.ObserveList) instead of an instances.get each.
	ObserveByList bool
	// RequestsPerMinute is the request budget, which observations are spaced to
	// fit; zero does not space them. Each tenant configuration's budget is as
	// large as the platform's, and observations are spaced for the whole
	// fleet as if one budget served it: no budget is overspent, though
	// each may be underused.
	RequestsPerMinute int
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
	// KeyTokenURI lets the platform's service-account keys get their tokens
	// from their own token_uri rather than Google's ([credentials]
	// allow_key_token_uri).
	KeyTokenURI bool
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
	pacing   *pacing
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
}

// NewCore returns the shared part of the PostgresqlInstance controllers, and adds
// its scheduled listings (observe = list) to mgr.
func NewCore(mgr ctrl.Manager, o Options) (*Core, error) {
	c := &Core{
		o:        o,
		services: providerconfig.NewServiceCache(o.Transport, serviceCacheOptions(o)...),
		dialers:  pgsql.NewDialerCache(o.Transport, dialerCacheOptions(o)...),
		fleet:    &fleet{},
		objects:  &fleet{},
		needed:   &neededListings{},
		wakes:    newWakes(o.Logger),
		names:    tenancy.NewRecords(mgr.GetClient(), mgr.GetAPIReader(), cmp.Or(o.RecordNamespace, DefaultRecordNamespace)),
		// Reconciled at once, not at their next poll.
		changed: map[bool]chan ctrlevent.GenericEvent{false: make(chan ctrlevent.GenericEvent, 1024), true: make(chan ctrlevent.GenericEvent, 1024)},
	}
	var pages func() int
	if o.ObserveByList {
		pages = func() int { return c.observer.TotalPages() }
	}
	c.pacing = newPacing(pacingConfig{
		poll: o.PollInterval, busyPoll: o.BusyPollInterval, perMinute: o.RequestsPerMinute,
		reconcileRate: o.MaxReconcileRate, listed: o.ObserveByList, log: o.Logger, pages: pages, objects: c.fleet.count,
		others: c.objects.count,
	})
	// A listing of an instance's databases or users serves its objects for
	// an interval of the fleet's polls; those asked for in the last few
	// intervals are what the fleet's polls cost on top of the instances'.
	c.lists = listcache.New(c.pacing.effectiveInterval)
	c.pacing.lists = func() int { return max(c.lists.Active(c.pacing.watchExpiry()), c.needed.count()) }
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
			c.pacing.observed(l.ReadAt, l.Objects...)
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

// Observer is the core's shared listings of each project (observe = list),
// nil when every instance is read with instances.get.
func (c *Core) Observer() *observer.Observer { return c.observer }

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
		do = append(do, pgsql.WithTenantTransport(o.TenantTransport))
	}
	return do
}

// Setup adds the controller of the cluster-scoped PostgresqlInstance kind
// (cloudsql.travelaudience.com) to mgr, with a core of its own.
func Setup(mgr ctrl.Manager, o Options) error {
	c, err := NewCore(mgr, o)
	if err != nil {
		return err
	}
	return c.SetupCluster(mgr)
}

// SetupCluster adds the controller of the cluster-scoped PostgresqlInstance kind
// (cloudsql.travelaudience.com) to mgr.
func (c *Core) SetupCluster(mgr ctrl.Manager) error {
	return setupKind(c, mgr, &v1alpha1.PostgresqlInstance{}, v1alpha1.PostgresqlInstanceGroupKind, v1alpha1.PostgresqlInstanceGroupVersionKind,
		legacyConfig(mgr.GetClient()), c.changed[false])
}

// setupKind adds the controller of one PostgresqlInstance kind to mgr, with the
// core's fleet, pacing, listings and clients, and the kind's configuration.
func setupKind[T instance](c *Core, mgr ctrl.Manager, obj T, groupKind string, gvk schema.GroupVersionKind,
	config func(context.Context, T) (configuration, error), changed chan ctrlevent.GenericEvent) error {
	if err := c.fleet.watch(mgr, obj); err != nil {
		return err
	}
	if err := c.wakes.watch(mgr, obj); err != nil {
		return err
	}
	conn := &connector[T]{
		kube:     mgr.GetClient(),
		secrets:  mgr.GetAPIReader(),
		services: c.services,
		pacing:   c.pacing,
		fs:       afero.NewOsFs(),
		observer: c.observer,
		owner:    gvk,
		config:   config,
	}
	return c.setup(mgr, kindSetup{
		groupKind: groupKind, gvk: gvk, obj: obj, connect: managed.WithTypedExternalConnector[T](conn), changed: changed,
		key:          func(m metav1.Object) string { return objectKey(m) },
		poll:         c.pacing.pollIntervalHook(c.o.BusyPollInterval),
		initializers: []managed.Initializer{managed.InitializerFn(externalNameInitializer(mgr.GetClient()))},
		finalizer: &replicaCleaner{
			APIFinalizer: resource.NewAPIFinalizer(mgr.GetClient(), managedFinalizer),
			kube:         mgr.GetClient(),
			reader:       mgr.GetAPIReader(),
			pacing:       c.pacing,
			observer:     c.observer,
		},
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
		managed.WithFinalizer(statusKeeper{Finalizer: k.finalizer, name: managedFinalizer}),
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
	return b.Complete(ratewait.New(name, paced, o.GlobalRateLimiter,
		ratewait.WithExempt(func(req reconcile.Request) bool { return c.pacing.completesWrite(paced.keyOf(req)) })))
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

// externalNameInitializer records the effective instance name in the
// crossplane.io/external-name annotation (spec.forProvider.name when set), so that
// the annotation never names another instance than the one managed.
func externalNameInitializer(kube client.Client) func(context.Context, resource.Managed) error {
	return func(ctx context.Context, mg resource.Managed) error {
		pi, ok := mg.(instance)
		if !ok {
			return nil
		}
		want := cloudsql.InstanceName(pi)
		if meta.GetExternalName(pi) == want {
			return nil
		}
		meta.SetExternalName(pi, want)
		return errors.Wrap(kube.Update(ctx, pi), errSetExtName)
	}
}

// replicaCleaner runs, before the finalizer goes, what must happen whatever the
// deletion policy: the secrets that the injector copied into application
// namespaces are deleted (they hold the password and outlive the instance
// otherwise), and when the Cloud SQL instance stays (Orphan) the connection secret
// is released from its owner, so that garbage collection does not take the only
// copy of a password that still works.
type replicaCleaner struct {
	*resource.APIFinalizer
	kube client.Client
	// reader reads secrets without caching every secret of the cluster.
	reader client.Reader
	pacing *pacing
	// observer, when observing by listing, stops listing for the object.
	observer *observer.Observer
}

// RemoveFinalizer cleans up, then removes the finalizer.
func (f *replicaCleaner) RemoveFinalizer(ctx context.Context, obj resource.Object) error {
	// A namespaced instance's copies are in its namespace, under its group's label.
	opts := []client.ListOption{client.MatchingLabels{v1alpha1.LabelInstance: obj.GetName()}}
	if ns := obj.GetNamespace(); ns != "" {
		opts = []client.ListOption{client.InNamespace(ns), client.MatchingLabels{nsv1alpha1.LabelInstance: obj.GetName()}}
	}
	list := &corev1.SecretList{}
	if err := f.reader.List(ctx, list, opts...); err != nil {
		return errors.Wrap(err, errListReplicas)
	}
	for i := range list.Items {
		s := &list.Items[i]
		// The label alone is not enough: anyone who can write a secret can set it.
		if !ownedBy(s, obj.GetUID()) {
			continue
		}
		if err := f.kube.Delete(ctx, s); resource.IgnoreNotFound(err) != nil {
			return errors.Wrapf(err, errDeleteReplica, s.Namespace, s.Name)
		}
	}
	if pi, ok := obj.(instance); ok && !deletesInstance(pi) {
		if err := f.releaseConnectionSecret(ctx, pi); err != nil {
			return err
		}
	}
	f.pacing.forget(objectKey(obj))
	if f.observer != nil {
		f.observer.Unwatch(objectKey(obj))
	}
	return f.APIFinalizer.RemoveFinalizer(ctx, obj)
}

// releaseConnectionSecret removes the instance's owner reference from its
// connection secret.
func (f *replicaCleaner) releaseConnectionSecret(ctx context.Context, pi instance) error {
	ref := pi.ConnectionSecret()
	if ref == nil {
		return nil
	}
	s := &corev1.Secret{}
	err := f.reader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s)
	if kerrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return errors.Wrapf(err, errReadSecret, ref.Namespace, ref.Name)
	}
	kept := s.OwnerReferences[:0]
	for _, o := range s.OwnerReferences {
		if o.UID != pi.GetUID() {
			kept = append(kept, o)
		}
	}
	if len(kept) == len(s.OwnerReferences) {
		return nil
	}
	s.OwnerReferences = kept
	return errors.Wrapf(f.kube.Update(ctx, s), errReleaseSecret, ref.Namespace, ref.Name)
}

// deletesInstance says whether deleting pi deletes its Cloud SQL instance, as
// crossplane-runtime decides it: the deletion policy counts while the management
// policies are the default, else the Delete policy does.
func deletesInstance(pi instance) bool {
	pols := pi.GetManagementPolicies()
	if len(pols) == 0 || (len(pols) == 1 && pols[0] == xpv2.ManagementActionAll) {
		// The namespaced kind has no deletion policy: its management
		// policies alone decide.
		if o, ok := pi.(resource.Orphanable); ok {
			return o.GetDeletionPolicy() != xpv2.DeletionOrphan
		}
		return true
	}
	for _, p := range pols {
		if p == xpv2.ManagementActionDelete || p == xpv2.ManagementActionAll {
			return true
		}
	}
	return false
}

func ownedBy(o client.Object, uid types.UID) bool {
	for _, r := range o.GetOwnerReferences() {
		if r.UID == uid {
			return true
		}
	}
	return false
}
