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
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/spf13/afero"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/listcache"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/pgsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
)

const (
	errNoInstanceConfig = "PostgresqlInstance %s has no spec.providerConfigRef: its databases and users reach Cloud SQL through its configuration; set it there"
	errGetInstanceObj   = "cannot get PostgresqlInstance %s"
	errInstanceNotReady = "PostgresqlInstance %s is not ready (%s): the %s is created once it is; this is retried"
	errNoSQL            = "the provider has no way to run SQL on Cloud SQL instance %s: this is a bug of the provider's, please report it"
	errNoRootPassword   = "the password of user postgres of PostgresqlInstance %s is not in its connection secret yet: the provider logs in as postgres to give logins least privilege; it is retried"
)

// Kind is a managed kind of an instance's objects (its databases and users)
// that joins the core: its reconciles share the PostgresqlInstances' pacing,
// request budget, reconcile rate and Cloud SQL clients.
type Kind struct {
	// GroupKind and GVK name the kind.
	GroupKind string
	GVK       schema.GroupVersionKind
	// Object is an empty object of the kind.
	Object client.Object
	// Connector is managed.WithTypedExternalConnector of the kind's
	// connector.
	Connector managed.ReconcilerOption
	// Finalizer, when not nil, replaces the managed-resource finalizer (it
	// should embed one).
	Finalizer resource.Finalizer
	// Initializers run before each observation.
	Initializers []managed.Initializer
	// Listing is the kind of listing (listcache.KindDatabases or
	// KindUsers) that observes the kind's objects: the pacing counts one per
	// instance that has objects of the kind, from the start, not only once
	// each was made. Objects name their instance with InstanceKey.
	Listing string
	// Watches bring objects of the kind to a reconcile when objects of
	// other kinds change (a user, when a database it owns does).
	Watches []Watch
}

// Watch is a kind whose changes bring the objects Map names to a reconcile.
type Watch struct {
	Object client.Object
	Map    handler.MapFunc
	// Predicates choose the changes that do; none: changes of Object's
	// desired state (spec, labels, annotations) and its deletion.
	Predicates []predicate.Predicate
}

// SetupKind adds the controller of k to mgr. Its objects count in the fleet's
// reconciles, not in its Cloud SQL reads: what reading them costs is the
// listings of the core's Lists.
func (c *Core) SetupKind(mgr ctrl.Manager, k Kind) error {
	if err := c.objects.watch(mgr, k.Object); err != nil {
		return err
	}
	if err := c.needed.watch(mgr, k.Object, k.Listing); err != nil {
		return err
	}
	fin := k.Finalizer
	if fin == nil {
		fin = resource.NewAPIFinalizer(mgr.GetClient(), ManagedFinalizer)
	}
	naming, err := c.Referrers(mgr, k.Object, k.GVK, fieldInstance, instanceOf)
	if err != nil {
		return err
	}
	key := func(m metav1.Object) string { return kindKey(k.GVK, m) }
	return c.setup(mgr, kindSetup{
		groupKind: k.GroupKind, gvk: k.GVK, obj: k.Object, connect: k.Connector,
		key: key, poll: c.pacing.objectPollHook(key, c.o.BusyPollInterval),
		initializers: k.Initializers, finalizer: fin, watches: k.Watches,
		instances: c.wakes.kind(), naming: naming, objects: true,
	})
}

// neededListings counts the listings that the objects in the manager's
// cache need per interval: one per listing kind and instance with objects.
// The listings made so far (listcache.Cache.Active) fall short of it during
// the first pass, when an interval computed from them is too short: the
// listings would expire, and be made again, sooner than the fleet's interval.
type neededListings struct {
	mu sync.Mutex
	// objects counts the objects of each listing kind and instance.
	objects map[string]int
}

// watch counts the objects of obj's kind, observed by listings of kind
// listing ("": not counted).
func (n *neededListings) watch(mgr ctrl.Manager, obj client.Object, listing string) error {
	if listing == "" {
		return nil
	}
	inf, err := mgr.GetCache().GetInformer(context.Background(), obj)
	if err != nil {
		return errors.Wrap(err, errInformer)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { n.add(listing, o, 1) },
		UpdateFunc: func(old, o any) { n.move(listing, old, o) },
		DeleteFunc: func(o any) { n.add(listing, o, -1) },
	})
	return errors.Wrap(err, errInformer)
}

// listingKey is the listing that observes o: its kind and o's instance; ""
// while o names no instance.
func listingKey(listing string, o any) string {
	if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	i, ok := o.(interface{ InstanceKey() types.NamespacedName })
	if !ok || i.InstanceKey().Name == "" {
		return ""
	}
	return listing + "\x00" + i.InstanceKey().String()
}

func (n *neededListings) add(listing string, o any, d int) {
	k := listingKey(listing, o)
	if k == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.objects == nil {
		n.objects = map[string]int{}
	}
	n.objects[k] += d
	if n.objects[k] <= 0 {
		delete(n.objects, k)
	}
}

// move counts an object again when its instance is resolved or changes.
func (n *neededListings) move(listing string, old, o any) {
	if listingKey(listing, old) == listingKey(listing, o) {
		return
	}
	n.add(listing, old, -1)
	n.add(listing, o, 1)
}

// count is how many listings an interval of the objects' polls needs.
func (n *neededListings) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.objects)
}

// kindKey names an object of another kind than PostgresqlInstance in the
// pacing's bookkeeping, apart from the instances' keys.
func kindKey(gvk schema.GroupVersionKind, m metav1.Object) string {
	return gvk.Kind + "." + gvk.Group + ":" + ObjectKey(m)
}

// Lists serves the databases and users of Cloud SQL instances, one listing
// per instance and kind per interval of the fleet's polls.
func (c *Core) Lists() *listcache.Cache { return c.lists }

// Marks are what the external client of an object tells the core's pacing:
// Pacer leaves them; tests record them.
type Marks interface {
	Busy(m metav1.Object)
	Made(m metav1.Object)
	Stalled(m metav1.Object)
	Waiting(m metav1.Object)
	WriteFailed(m metav1.Object, err error)
	Observed(m metav1.Object, readAt time.Time)
}

// Pacer marks objects of one kind for the core's pacing. The zero Pacer
// marks nothing, for tests of a kind's external client alone.
type Pacer struct {
	p   *Pacing
	gvk schema.GroupVersionKind
}

// Pacer returns the pacer of objects of the kind gvk.
func (c *Core) Pacer(gvk schema.GroupVersionKind) Pacer { return Pacer{p: c.pacing, gvk: gvk} }

// Busy asks for the object's next visit soon: a change of the provider's
// is under way.
func (p Pacer) Busy(m metav1.Object) {
	if p.p != nil {
		p.p.markSoon(kindKey(p.gvk, m))
	}
}

// Made says that Cloud SQL accepted the object's insert in the reconcile
// under way: the visit that confirms it comes at followUpPriority, before
// new objects.
func (p Pacer) Made(m metav1.Object) {
	if p.p != nil {
		p.p.mu.Lock()
		defer p.p.mu.Unlock()
		p.p.made[kindKey(p.gvk, m)] = true
	}
}

// Stalled says that the last error repeats until the spec changes: the
// object comes back at the poll interval, not with the error backoff.
func (p Pacer) Stalled(m metav1.Object) {
	if p.p != nil {
		p.p.MarkStalled(kindKey(p.gvk, m))
	}
}

// WriteFailed says that Cloud SQL answered the object's write with err: one
// that a look may resolve (a server error, a 429, no answer) brings it back at
// the busy poll interval, not in the error backoff (Pacing.MarkWriteFailed).
func (p Pacer) WriteFailed(m metav1.Object, err error) {
	if p.p != nil {
		p.p.MarkWriteFailed(kindKey(p.gvk, m), err)
	}
}

// Observed records that m was observed from a listing of its instance read
// at readAt, for the metric of the time between two reads of an object.
func (p Pacer) Observed(m metav1.Object, readAt time.Time) {
	if p.p != nil {
		p.p.objectObserved(p.gvk.Kind, kindKey(p.gvk, m), readAt)
	}
}

// Waiting says that the last error waits on another object (its instance to
// be observed ready, its owner to be Ready, its databases to go), whose
// watch brings it back when that changes: until then it polls at the fleet's
// interval, at low priority, not in the error backoff nor at the busy poll
// interval, which would let 10,000 waiting objects take the reconcile rate
// that their instances' first observations need.
func (p Pacer) Waiting(m metav1.Object) {
	if p.p != nil {
		p.p.markWaiting(kindKey(p.gvk, m))
	}
}

// Settled says that what the object manages no longer changes by itself (a
// backup that ended): it is looked at again settledFactor times less often
// than the fleet's interval, still with jitter.
func (p Pacer) Settled(m metav1.Object) {
	if p.p != nil {
		p.p.mu.Lock()
		defer p.p.mu.Unlock()
		p.p.settled[kindKey(p.gvk, m)] = true
	}
}

// settledFactor is how many fleet intervals pass between two observations of
// a settled object.
const settledFactor = 10

// Forget drops what the pacing knows of a deleted object.
func (p Pacer) Forget(m metav1.Object) {
	if p.p != nil {
		p.p.Forget(kindKey(p.gvk, m))
	}
}

// objectPollHook is pollIntervalHook for the objects of other kinds: busy
// ones come back soon; those observed from a listing of their instance come
// back when that listing has served its interval, so that every object of
// the instance comes back together, the first of them lists for all, and
// each is observed from a listing one interval younger than the last
// (jitter would observe half of them from listings up to two intervals
// apart); the others come back at the objects' interval with jitter. They
// are not counted as instances.
func (p *Pacing) objectPollHook(key func(metav1.Object) string, busyInterval time.Duration) func(resource.Managed, time.Duration) time.Duration {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		k := key(mg)
		if p.take(p.busy, k) {
			p.take(p.settled, k)
			return min(busyInterval, poll)
		}
		if p.take(p.settled, k) {
			return jitter(settledFactor * max(poll, p.objectInterval()))
		}
		iv := max(poll, p.objectInterval())
		p.mu.Lock()
		readAt, listed := p.objectSeen[k]
		now := p.now()
		p.mu.Unlock()
		if !listed {
			return jitter(iv)
		}
		// The instances' listings are spread by when their objects first
		// came: a little lateness spreads a listing's objects no further
		// than a few seconds, and keeps them after its expiry.
		return max(readAt.Add(iv).Sub(now), min(minObjectWait, iv)) + lateBy(iv)
	}
}

// minObjectWait is the least time (or the interval, when shorter) before an
// object observed from a listing comes back: one observed from a listing
// about to expire waits for the next.
const minObjectWait = 5 * time.Second

// objectLateness is the most, as a share of the interval, that an object
// comes back after its instance's listing has expired.
const objectLateness = 0.02

// lateBy is a random time of up to objectLateness of d.
func lateBy(d time.Duration) time.Duration {
	return time.Duration(rand.Int64N(int64(float64(d)*objectLateness) + 1))
}

// InstanceConnection is how the objects of a PostgresqlInstance reach its
// Cloud SQL instance: through the instance's own configuration.
type InstanceConnection struct {
	// Service is the Cloud SQL Admin API client of the configuration.
	Service *sqladmin.Service
	// Project and Instance name the Cloud SQL instance.
	Project, Instance string
	// Source names the configuration, whose listings are shared.
	Source string
	// Config and Credentials are the configuration, as the cluster-scoped
	// kind's, and its resolved credentials (for the SQL connector).
	Config      *v1alpha1.ProviderConfig
	Credentials auth.Credentials
	// Observed is what the instance's object last observed of it.
	Observed v1alpha1.PostgresqlInstanceObservation
	// ImportPolicy is the instance's spec.tenancy.importPolicy, with its
	// kind's default: which objects may take over logins and databases
	// that no object holds.
	ImportPolicy v1alpha1.ObjectImportPolicy
	// NewSQL returns a client that runs SQL on the instance as postgres;
	// Connection sets it. Without it the instance takes no SQL.
	NewSQL func(ctx context.Context) (*pgsql.Client, error)
	// NewDialer returns the connector that reaches the instance; Connection
	// sets it. Without it the instance takes no SQL.
	NewDialer func() (pgsql.Dialer, error)
}

// Ready says whether the instance can take databases and users: Cloud SQL
// reports it RUNNABLE and its object observed it as its own (Observes).
func (c *InstanceConnection) Ready() bool {
	return c.Observed.State == StateRunnable && c.Observes()
}

// Observes says whether what the instance's object last observed is the
// Cloud SQL instance it names now: its connection name is
// project:region:instance. A name changed since (the crossplane.io/external-name
// annotation edited) names an instance the object has not shown to be its
// own, and nothing may be done on it for the object's sake.
func (c *InstanceConnection) Observes() bool {
	cn := c.Observed.ConnectionName
	return strings.HasPrefix(cn, c.Project+":") && strings.HasSuffix(cn, ":"+c.Instance)
}

// NotReady says that the instance (named instance, for the user) is not
// ready for the object (what: "login", "database") yet, and how it is.
func (c *InstanceConnection) NotReady(instance, what string) error {
	how := "its object has not observed it yet"
	switch {
	case c.Observed.ConnectionName != "" && !c.Observes():
		how = "its object last observed Cloud SQL instance " + c.Observed.ConnectionName + ", not " + c.Project + ":" + c.Instance +
			" (was its crossplane.io/external-name changed?), and it has not observed that one as its own"
	case c.Observed.State != "":
		how = "Cloud SQL reports it " + c.Observed.State
	}
	return errors.Errorf(errInstanceNotReady, instance, how, what)
}

// SQL returns a client that runs SQL on the instance as postgres, with the
// password kept in the instance's connection secret.
func (c *InstanceConnection) SQL(ctx context.Context) (*pgsql.Client, error) {
	if c.NewSQL == nil {
		return nil, errors.Errorf(errNoSQL, c.Instance)
	}
	return c.NewSQL(ctx)
}

// As returns a client that logs in to the instance as login with password:
// to ask PostgreSQL whether that is the login's password.
func (c *InstanceConnection) As(login, password string) (*pgsql.Client, error) {
	if c.NewDialer == nil {
		return nil, errors.Errorf(errNoSQL, c.Instance)
	}
	d, err := c.NewDialer()
	if err != nil {
		return nil, err
	}
	return pgsql.New(d, c.Observed.ConnectionName, password, pgsql.WithUser(login), pgsql.WithIPType(pgsql.IPTypeFor(c.Observed.PublicIP))), nil
}

// Connection resolves the configuration of the PostgresqlInstance of mg (a
// database or a user), of either kind (read by key: a namespaced one when its
// namespace is not empty), and returns how mg reaches its Cloud SQL instance,
// and the instance object. Its usage of the configuration is the instance's:
// it is not tracked again. A namespaced instance's ClusterProviderConfig must
// still be lent to its namespace, and a cluster-scoped instance that a
// namespaced mg names must admit mg's namespace (Options.AdmitsNamespace).
func (c *Core) Connection(ctx context.Context, kube client.Client, secrets client.Reader, mg client.Object, key types.NamespacedName) (*InstanceConnection, client.Object, error) {
	namespace, name := key.Namespace, key.Name
	var (
		obj Instance
		pc  *v1alpha1.ProviderConfig
		err error
	)
	if namespace == "" {
		pi := &v1alpha1.PostgresqlInstance{}
		if err := kube.Get(ctx, types.NamespacedName{Name: name}, pi); err != nil {
			return nil, nil, errors.Wrapf(err, errGetInstanceObj, name)
		}
		obj = pi
		if mg.GetNamespace() != "" && c.o.AdmitsNamespace != nil {
			// Checked at admission too, but a selector resolves only here,
			// and an allow-list may shrink after admission.
			if err := c.o.AdmitsNamespace(ctx, mg, pi); err != nil {
				return nil, pi, err
			}
		}
		ref := pi.GetProviderConfigReference()
		if ref == nil || ref.Name == "" {
			return nil, pi, errors.Errorf(errNoInstanceConfig, name)
		}
		if pc, err = platformConfig(ctx, kube, ref.Name); err != nil {
			return nil, pi, err
		}
	} else {
		pi := &nsv1alpha1.PostgresqlInstance{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, pi); err != nil {
			return nil, nil, errors.Wrapf(err, errGetInstanceObj, namespace+"/"+name)
		}
		obj = pi
		ref := pi.GetProviderConfigReference()
		if ref == nil || ref.Name == "" {
			return nil, pi, errors.Errorf(errNoInstanceConfig, namespace+"/"+name)
		}
		cfg, err := tenantConfig(ctx, kube, secrets, namespace, *ref, providerconfig.WithNamespacedEndpoints(c.o.NamespacedEndpoints))
		if err != nil {
			return nil, pi, err
		}
		pc = cfg.ProviderConfig
	}
	creds, err := providerconfig.Credentials(ctx, secrets, afero.NewOsFs(), pc)
	if err != nil {
		return nil, obj, err
	}
	svc, err := c.services.Get(pc, creds)
	if err != nil {
		return nil, obj, err
	}
	ic := &InstanceConnection{
		Service: svc, Project: pc.Spec.ProjectID, Instance: cloudsql.InstanceName(obj),
		Source: pc.Name, Config: pc, Credentials: creds, Observed: *obj.Observation(),
		ImportPolicy: importPolicy(obj),
	}
	ic.NewSQL = func(ctx context.Context) (*pgsql.Client, error) {
		pw, err := NewPasswords(kube, secrets, schema.GroupVersionKind{}).Get(ctx, obj)
		if err != nil {
			return nil, err
		}
		if pw.Value == "" {
			return nil, errors.Errorf(errNoRootPassword, ObjectKey(obj))
		}
		d, err := ic.NewDialer()
		if err != nil {
			return nil, err
		}
		return pgsql.New(d, ic.Observed.ConnectionName, pw.Value, pgsql.WithIPType(pgsql.IPTypeFor(ic.Observed.PublicIP))), nil
	}
	ic.NewDialer = func() (pgsql.Dialer, error) { return c.dialers.Get(pc, creds) }
	return ic, obj, nil
}

// ObjectConnection is Connection for mg, a database, user or backup of the
// instance key, with what their connectors share: noInstance is the error
// while mg names no instance yet, and released says that mg is deleted and its
// instance, or the instance's configuration, went first: nothing can reach
// what mg manages any more (Released is its client).
func (c *Core) ObjectConnection(ctx context.Context, kube client.Client, live client.Reader, mg resource.Managed, key types.NamespacedName, noInstance string) (conn *InstanceConnection, released bool, err error) {
	if key.Name == "" {
		return nil, false, errors.New(noInstance)
	}
	conn, _, err = c.Connection(ctx, kube, live, mg, key)
	if meta.WasDeleted(mg) && kerrors.IsNotFound(errors.Cause(err)) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, cloudsql.Truncated(err)
	}
	return conn, false, nil
}

// MayChange says whether mg's management policies let the provider change
// what it manages: an imported object that is only observed keeps what it
// has.
func MayChange(mg resource.Managed) bool {
	pols := mg.GetManagementPolicies()
	return len(pols) == 0 || slices.Contains(pols, xpv2.ManagementActionAll) || slices.Contains(pols, xpv2.ManagementActionUpdate)
}
