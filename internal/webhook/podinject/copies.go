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

package podinject

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	errGetSource  = "cannot read %s %s"
	errListCopied = "cannot list the secrets copied for %s %s"
	errIndex      = "cannot index the objects whose secrets are copied by the secrets and objects they name"
)

// A Source is a kind of object whose secrets the injector copies into
// application namespaces; one copy reconciler keeps the copies of each.
type Source int

// The sources of copies.
const (
	// InstanceCopies are the copies of cluster-scoped PostgresqlInstances:
	// the pgpass of the postgres login from the connection secret, and the
	// proxy's key that their ProviderConfig names.
	InstanceCopies Source = iota
	// NamespacedInstanceCopies are the copies of namespaced
	// PostgresqlInstances: only the proxy's key of a ClusterProviderConfig,
	// which sits in a namespace of its own. A namespaced instance's password
	// and a namespaced ProviderConfig's key are in the instance's namespace
	// and are mounted as they are.
	NamespacedInstanceCopies
	// UserCopies are the copies of cluster-scoped PostgresqlUsers' pgpass. A
	// namespaced user's connection secret is in the only namespace whose pods
	// it serves, and is mounted as it is.
	UserCopies
)

// Name is the name of the source's copy reconciler, as metrics and logs show
// the controller.
func (s Source) Name() string { return copySources[s].controller }

// A copySource says what a copy reconciler needs to know of one Source.
type copySource struct {
	// controller is the controller's name, which metrics show: the names
	// (with their word "replicas") predate the copy reconciler and stay.
	controller string
	// apiVersion and kind are those of the objects copied from.
	apiVersion, kind string
	// logKey names the object in logs.
	logKey string
	// object returns an empty object of the kind.
	object func() client.Object
	// copyKey is the value of indexCopyOf of the copies of the object name.
	copyKey func(name string) string
	// copyKind is the kind of copy a secret of this name is of the object
	// name, "" when it is none that this source keeps.
	copyKind func(secret, name string) string
	// watch adds the cache indexes, and the watches of what the copies
	// follow besides the object: its secrets, configurations, namespaces.
	watch func(ctx context.Context, mgr ctrl.Manager, r *CopyReconciler, b *builder.Builder) (*builder.Builder, error)
	// desired returns, for one reconcile of obj (which exists), what a copy
	// of a kind in a namespace should be: see desiredFunc.
	desired func(r *CopyReconciler, obj client.Object) desiredFunc
}

// A desiredFunc says whether the copy of kind in namespace ns should exist,
// and what it should hold (nil: leave its contents, because the source is not
// available yet).
type desiredFunc func(ctx context.Context, ns, kind string) (keep bool, want *corev1.Secret, err error)

var copySources = [...]copySource{
	InstanceCopies:           instanceCopies,
	NamespacedInstanceCopies: namespacedInstanceCopies,
	UserCopies:               userCopies,
}

// A CopyReconciler keeps the secrets that the injector copied into
// application namespaces for the objects of one Source in line with their
// sources: it updates a copy when its source changes (a new password, a new
// key), and deletes it when the namespace may no longer use the object, when
// the source is taken back, and when the object is gone.
//
// A copy is a secret that the injector made: a copy's name and label, and an
// owner reference to the object's UID. Others are left alone, whatever their
// name and labels say.
//
// Running pods keep the password file their init container wrote at start: a
// new password reaches them when they restart. Copies are not created here,
// only at admission, so that a namespace holds a password only once a pod
// asked for it.
type CopyReconciler struct {
	src    copySource
	cached client.Reader
	live   client.Reader
	// copies reads the cache of secrets' metadata (the client bypasses it:
	// secrets are never cached whole).
	copies client.Reader
	kube   client.Writer
	policy tenancy.Policy
	log    logging.Logger
	// resolve are the rules for namespaced ProviderConfigs (their endpoints).
	resolve []providerconfig.ResolveOption
}

// SetupCopies adds the copy reconciler of src to mgr. It watches the source's
// objects, the metadata (only) of secrets, and what decides the copies: the
// configurations that name proxy keys, the instances of users, and namespaces,
// whose labels may stop matching a selector.
func SetupCopies(mgr ctrl.Manager, src Source, policy tenancy.Policy, o ...Option) error {
	s := copySources[src]
	opts := newOptions(o)
	r := &CopyReconciler{src: s, cached: mgr.GetClient(), live: mgr.GetAPIReader(), copies: mgr.GetCache(), kube: mgr.GetClient(),
		policy: policy, log: opts.log, resolve: opts.resolve}
	if err := indexCopies(mgr); err != nil {
		return err
	}
	b, err := s.watch(context.Background(), mgr, r, ctrl.NewControllerManagedBy(mgr).Named(s.controller).For(s.object()))
	if err != nil {
		return errors.Wrap(err, errIndex)
	}
	return b.Complete(r)
}

// Reconcile brings the copies of one object in line.
func (r *CopyReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	name := objectName(req.NamespacedName)
	log := r.log.WithValues(r.src.logKey, name)
	obj := r.src.object()
	err := r.cached.Get(ctx, req.NamespacedName, obj)
	if kerrors.IsNotFound(err) {
		// Confirm before deleting anything: the cache may lag behind.
		err = r.live.Get(ctx, req.NamespacedName, obj)
	}
	if err != nil && !kerrors.IsNotFound(err) {
		return reconcile.Result{}, errors.Wrapf(err, errGetSource, r.src.kind, name)
	}
	gone := kerrors.IsNotFound(err)

	copies, err := listCopies(ctx, r.copies, req.Namespace, r.src.copyKey(req.Name))
	if err != nil {
		return reconcile.Result{}, errors.Wrapf(err, errListCopied, r.src.kind, name)
	}
	// Without the object its UID is unknown: a reference to its kind and
	// name will do, as it does for the garbage collector, which deletes
	// secrets whose owner is gone.
	owner := metav1.OwnerReference{APIVersion: r.src.apiVersion, Kind: r.src.kind, Name: req.Name, UID: obj.GetUID()}
	var desired desiredFunc
	if !gone {
		desired = r.src.desired(r, obj)
	}
	for i := range copies {
		s := &copies[i]
		kind := r.src.copyKind(s.Name, req.Name)
		if kind == "" || !ownedBy(s, owner, gone) {
			log.Debug("Leaving alone a secret named and labelled like a copy, which the injector did not make for this object",
				"secret", s.Namespace+"/"+s.Name)
			continue
		}
		keep, want := false, (*corev1.Secret)(nil)
		if !gone {
			if keep, want, err = desired(ctx, s.Namespace, kind); err != nil {
				return reconcile.Result{}, err
			}
		}
		if err := settle(ctx, r.live, r.kube, log, s, want, keep); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// objectName names an object in messages: namespace/name, or its name alone
// when it is cluster-scoped.
func objectName(n types.NamespacedName) string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.String()
}

// secretKey reads one key of a secret through the API server; nil when the
// secret or the key is missing.
func (r *CopyReconciler) secretKey(ctx context.Context, ns, name, key string) ([]byte, error) {
	sec := &corev1.Secret{}
	err := r.live.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, sec)
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || len(sec.Data[key]) == 0 {
		return nil, err
	}
	return sec.Data[key], nil
}

// A lazy reads a source once per reconcile, when a copy first needs it.
type lazy[T any] struct {
	read func(context.Context) (T, error)
	done bool
	val  T
}

func (l *lazy[T]) get(ctx context.Context) (T, error) {
	if l.done {
		return l.val, nil
	}
	v, err := l.read(ctx)
	if err != nil {
		return v, err
	}
	l.val, l.done = v, true
	return v, nil
}
