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
	"slices"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const (
	errIndex    = "cannot index %s by the object it names"
	errListKind = "cannot make a list of %s"

	// fieldInstance indexes the objects of other kinds by their instance.
	fieldInstance = "cloudsql.travelaudience.com/referrers-instance"
)

// FieldOwner indexes databases by their owner, a user of their own scope
// and namespace: the databases that a user's change brings back, and those
// whose names its connection secret offers.
const FieldOwner = "cloudsql.travelaudience.com/referrers-owner"

// OwnerOf is the PostgresqlUser that a PostgresqlDatabase of either kind
// names as its owner; an empty name while it names none.
func OwnerOf(o client.Object) types.NamespacedName {
	d, ok := o.(interface{ OwnerKey() types.NamespacedName })
	if !ok {
		return types.NamespacedName{}
	}
	return d.OwnerKey()
}

// OwnedBy selects, in a List of databases indexed by IndexOwners, those
// that name user as their owner.
func OwnedBy(user client.Object) client.MatchingFields {
	return client.MatchingFields{FieldOwner: client.ObjectKeyFromObject(user).String()}
}

// ReferrerKeys is the index function of objects that name another with
// ref: its namespace/name ("/name" when cluster-scoped), none while they
// name none.
func ReferrerKeys(ref func(client.Object) types.NamespacedName) client.IndexerFunc {
	return func(o client.Object) []string {
		k := ref(o)
		if k.Name == "" {
			return nil
		}
		return []string{k.String()}
	}
}

// indexes registers each field index of the manager's cache once. The
// databases' owner index is asked for by the databases' controller (its
// watch of users) and by the users' (a user's databases), each set up when
// its CRDs come, in either order; the cache refuses a second indexer of one
// name.
type indexes struct {
	mu   sync.Mutex
	done map[string]bool
}

func (x *indexes) field(fi client.FieldIndexer, obj client.Object, gvk schema.GroupVersionKind, field string, ref func(client.Object) types.NamespacedName) error {
	k := gvk.String() + "|" + field
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done[k] {
		return nil
	}
	if err := fi.IndexField(context.Background(), obj, field, ReferrerKeys(ref)); err != nil {
		return errors.Wrapf(err, errIndex, gvk.Kind)
	}
	if x.done == nil {
		x.done = map[string]bool{}
	}
	x.done[k] = true
	return nil
}

// IndexOwners indexes the databases of obj's kind (gvk) by their owner,
// under FieldOwner, for the List of a user's databases (OwnedBy); at most
// once per core, whichever of the users' and databases' controllers asks
// first.
func (c *Core) IndexOwners(mgr ctrl.Manager, obj client.Object, gvk schema.GroupVersionKind) error {
	return c.indexes.field(mgr.GetFieldIndexer(), obj, gvk, FieldOwner, OwnerOf)
}

// Owners indexes the databases of obj's kind by their owner (IndexOwners)
// and returns the map from a user to the databases that name it.
func (c *Core) Owners(mgr ctrl.Manager, obj client.Object, gvk schema.GroupVersionKind) (handler.MapFunc, error) {
	return c.Referrers(mgr, obj, gvk, FieldOwner, OwnerOf)
}

// Referrers indexes the objects of kind gvk (obj, an empty one) by the object
// that ref names, under field (unique per kind, always with the same ref; a
// second call only maps), and returns the map from such an object to its
// referrers: the watch that brings objects waiting on another (an instance to
// be observed, an owner to be Ready) back when it changes, at once, instead of
// polls that would take the reconcile rate while they wait. ref returns an
// empty name while an object names none.
func (c *Core) Referrers(mgr ctrl.Manager, obj client.Object, gvk schema.GroupVersionKind, field string, ref func(client.Object) types.NamespacedName) (handler.MapFunc, error) {
	if err := c.indexes.field(mgr.GetFieldIndexer(), obj, gvk, field, ref); err != nil {
		return nil, err
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if _, err := mgr.GetScheme().New(listGVK); err != nil {
		return nil, errors.Wrapf(err, errListKind, gvk.Kind)
	}
	reader, scheme, log := mgr.GetCache(), mgr.GetScheme(), mgr.GetLogger()
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		ro, _ := scheme.New(listGVK)
		l, ok := ro.(client.ObjectList)
		if !ok {
			return nil
		}
		key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
		// In place: only the names are read.
		if err := reader.List(ctx, l, client.MatchingFields{field: key.String()}, client.UnsafeDisableDeepCopy); err != nil {
			log.Info("cannot list the objects that name a changed object; they come back at their next poll", "kind", gvk.Kind, "object", key.String(), "error", err.Error())
			return nil
		}
		var reqs []reconcile.Request
		_ = meta.EachListItem(l, func(item runtime.Object) error {
			if m, ok := item.(client.Object); ok {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(m)})
			}
			return nil
		})
		return reqs
	}, nil
}

// wakes brings the objects of other kinds (databases, users) that wait on
// their instance back when it is observed ready or stops being so, changes
// its desired state, or goes. The instances' informers feed it, each kind's
// from the moment its controller starts (the kinds' CRDs may come later than
// one another), and each object kind's controller maps the instances it
// hears of to its objects that name them.
type wakes struct {
	mu    sync.Mutex
	kinds []chan ctrlevent.GenericEvent
	// changed chooses the instances' changes that wake objects.
	changed predicate.Predicate
	log     logging.Logger
}

func newWakes(log logging.Logger) *wakes {
	if log == nil {
		log = logging.NewNopLogger()
	}
	return &wakes{log: log, changed: ReadinessChanged(func(o client.Object) bool {
		i, ok := o.(Instance)
		if !ok {
			return false
		}
		obs := i.Observation()
		return obs.State == StateRunnable && obs.ConnectionName != ""
	})}
}

// kind returns the channel of a new object kind's instance wakes.
func (w *wakes) kind() chan ctrlevent.GenericEvent {
	// Reconciled at once, like the listings' changes.
	ch := make(chan ctrlevent.GenericEvent, 1024)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.kinds = append(w.kinds, ch)
	return ch
}

// watch feeds the changes of the instances of obj's kind to every object
// kind, as the informer hears of them.
func (w *wakes) watch(mgr ctrl.Manager, obj client.Object) error {
	inf, err := mgr.GetCache().GetInformer(context.Background(), obj)
	if err != nil {
		return errors.Wrap(err, errInformer)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, o any) {
			oo, _ := old.(client.Object)
			no, _ := o.(client.Object)
			if w.changed.Update(ctrlevent.UpdateEvent{ObjectOld: oo, ObjectNew: no}) {
				w.send(no)
			}
		},
		DeleteFunc: func(o any) {
			if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			if co, ok := o.(client.Object); ok {
				w.send(co)
			}
		},
	})
	return errors.Wrap(err, errInformer)
}

func (w *wakes) send(o client.Object) {
	if o == nil {
		return
	}
	w.mu.Lock()
	kinds := slices.Clone(w.kinds)
	w.mu.Unlock()
	for _, ch := range kinds {
		// Drained into the kind's work queue by its controller, which runs
		// only while this replica leads: a replica that does not lead, or a
		// burst larger than the buffer, drops the wake rather than stall the
		// informer that the webhooks read too. A dropped wake costs a wait
		// until the object's next poll.
		select {
		case ch <- ctrlevent.GenericEvent{Object: o}:
		default:
			w.log.Debug("Dropped a wake of the objects of a changed instance: they come back at their next poll", "instance", client.ObjectKeyFromObject(o).String())
		}
	}
}

// instanceOf is the instance an object of another kind names.
func instanceOf(o client.Object) types.NamespacedName {
	i, ok := o.(interface{ InstanceKey() types.NamespacedName })
	if !ok {
		return types.NamespacedName{}
	}
	return i.InstanceKey()
}

// ReadinessChanged passes the changes of an object that those waiting on it
// need: ready (what they wait for) turning either way, its desired state
// (spec, labels, annotations), and its deletion. Its creation does not pass:
// the objects that name it have their own first reconcile, and a new object is
// not ready yet.
func ReadinessChanged(ready func(client.Object) bool) predicate.Predicate {
	return predicate.Or(
		predicate.Funcs{
			CreateFunc: func(ctrlevent.CreateEvent) bool { return false },
			UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
				return e.ObjectOld != nil && e.ObjectNew != nil && ready(e.ObjectOld) != ready(e.ObjectNew)
			},
			DeleteFunc:  func(ctrlevent.DeleteEvent) bool { return true },
			GenericFunc: func(ctrlevent.GenericEvent) bool { return false },
		},
		predicate.And(predicate.Funcs{CreateFunc: func(ctrlevent.CreateEvent) bool { return false }}, desiredStateChanged()),
	)
}

// ConditionReady reports whether a managed resource's Ready condition is
// True: what objects that wait on another of the provider's kinds wait for.
func ConditionReady(o client.Object) bool {
	c, ok := o.(interface {
		GetCondition(xpv2.ConditionType) xpv2.Condition
	})
	return ok && c.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
}
