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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// NamespacedRefresherName is the name of the NamespacedRefresher's controller.
const NamespacedRefresherName = "podinject-namespaced-replicas"

const (
	errConfigR = "cannot read %s of PostgresqlInstance %s"
	errLentR   = "cannot decide whether the ClusterProviderConfig of PostgresqlInstance %s still admits its namespace"
)

// Cache indexes of the NamespacedRefresher.
const (
	indexClusterConfig    = "podinject.clusterProviderConfig" // namespaced PostgresqlInstance: ClusterProviderConfig name
	indexClusterConfigKey = "podinject.clusterProxyKey"       // ClusterProviderConfig: namespace/name
)

// A NamespacedRefresher keeps the copies that the injector made for namespaced
// PostgresqlInstances in line with their sources. A namespaced instance's
// password and a namespaced ProviderConfig's proxy key are in the instance's
// namespace and are mounted as they are; only the proxy key of a
// ClusterProviderConfig, in a namespace of its own, is copied. The refresher
// updates those copies when the key changes, and deletes them when the
// instance is gone, its configuration no longer names a key elsewhere, or its
// ClusterProviderConfig no longer admits the namespace.
type NamespacedRefresher struct {
	cached client.Reader
	live   client.Reader
	copies client.Reader // the cache of secrets' metadata
	kube   client.Writer
	log    logging.Logger
	// resolve are the rules for namespaced ProviderConfigs (their endpoints).
	resolve []providerconfig.ResolveOption
}

// SetupNamespacedRefresher adds a NamespacedRefresher to mgr. It watches
// namespaced PostgresqlInstances, ClusterProviderConfigs and the metadata of
// secrets.
func SetupNamespacedRefresher(mgr ctrl.Manager, o ...Option) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &nsv1alpha1.PostgresqlInstance{}, indexClusterConfig, func(o client.Object) []string {
		if ref := o.(*nsv1alpha1.PostgresqlInstance).GetProviderConfigReference(); ref != nil && ref.Kind == nsv1alpha1.ClusterProviderConfigKind {
			return []string{ref.Name}
		}
		return nil
	}); err != nil {
		return errors.Wrap(err, errIndex)
	}
	if err := idx.IndexField(ctx, &nsv1alpha1.ClusterProviderConfig{}, indexClusterConfigKey, func(o client.Object) []string {
		if sel := o.(*nsv1alpha1.ClusterProviderConfig).Spec.ProxyCredentials; sel != nil {
			return []string{sel.Namespace + "/" + sel.Name}
		}
		return nil
	}); err != nil {
		return errors.Wrap(err, errIndex)
	}
	if err := indexCopies(mgr); err != nil {
		return err
	}
	opts := newOptions(o)
	r := &NamespacedRefresher{cached: mgr.GetClient(), live: mgr.GetAPIReader(), copies: mgr.GetCache(), kube: mgr.GetClient(), log: opts.log, resolve: opts.resolve}
	return ctrl.NewControllerManagedBy(mgr).
		Named(NamespacedRefresherName).
		For(&nsv1alpha1.PostgresqlInstance{}).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.instancesOf)).
		Watches(&nsv1alpha1.ClusterProviderConfig{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.instancesUsing(ctx, o.GetName())
		})).
		// A namespace whose labels stop matching a ClusterProviderConfig's
		// selector loses the configuration, and its copies of the key.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.instancesIn)).
		Complete(r)
}

// instancesUsing maps a ClusterProviderConfig to the namespaced instances that
// name it.
func (r *NamespacedRefresher) instancesUsing(ctx context.Context, config string) []reconcile.Request {
	pis := &nsv1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis, client.MatchingFields{indexClusterConfig: config}); err != nil {
		r.log.Info("Cannot find the namespaced instances of a changed ClusterProviderConfig", "clusterproviderconfig", config, "error", err)
		return nil
	}
	return requestsFor(pis)
}

// requestsFor are the reconcile requests of pis.
func requestsFor(pis *nsv1alpha1.PostgresqlInstanceList) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(pis.Items))
	for _, pi := range pis.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pi.Namespace, Name: pi.Name}})
	}
	return reqs
}

// instancesIn maps a namespace to its namespaced instances.
func (r *NamespacedRefresher) instancesIn(ctx context.Context, ns client.Object) []reconcile.Request {
	pis := &nsv1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis, client.InNamespace(ns.GetName())); err != nil {
		r.log.Info("Cannot find the namespaced instances of a changed namespace", "namespace", ns.GetName(), "error", err)
		return nil
	}
	return requestsFor(pis)
}

// instancesOf maps a secret to the instances whose copies it may concern: the
// instance a copy names, and the instances of the ClusterProviderConfigs whose
// proxy key it is.
func (r *NamespacedRefresher) instancesOf(ctx context.Context, s client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	if n := s.GetLabels()[nsv1alpha1.LabelInstance]; n != "" {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.GetNamespace(), Name: n}})
	}
	key := s.GetNamespace() + "/" + s.GetName()
	cpcs := &nsv1alpha1.ClusterProviderConfigList{}
	if err := r.cached.List(ctx, cpcs, client.MatchingFields{indexClusterConfigKey: key}); err != nil {
		r.log.Info("Cannot find the ClusterProviderConfigs whose proxy key changed", "secret", key, "error", err)
	}
	for _, cpc := range cpcs.Items {
		reqs = append(reqs, r.instancesUsing(ctx, cpc.Name)...)
	}
	return reqs
}

// Reconcile brings the copies of one namespaced instance in line.
func (r *NamespacedRefresher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pi := &nsv1alpha1.PostgresqlInstance{}
	err := r.cached.Get(ctx, req.NamespacedName, pi)
	if kerrors.IsNotFound(err) {
		// Confirm before deleting anything: the cache may lag behind.
		err = r.live.Get(ctx, req.NamespacedName, pi)
	}
	if err != nil && !kerrors.IsNotFound(err) {
		return reconcile.Result{}, errors.Wrapf(err, errGetInstanceR, req.String())
	}
	gone := kerrors.IsNotFound(err)

	copies, err := listCopies(ctx, r.copies, req.Namespace, namespacedCopyKey(req.Name))
	if err != nil {
		return reconcile.Result{}, errors.Wrapf(err, errListReplicas, req.String())
	}
	t := namespacedTarget(pi)
	owner := metav1.OwnerReference{APIVersion: nsv1alpha1.SchemeGroupVersion.String(), Kind: nsv1alpha1.PostgresqlInstanceKind, Name: req.Name, UID: pi.UID}
	for i := range copies {
		s := &copies[i]
		// Only the proxy key is ever copied for a namespaced instance, and
		// only a copy the injector made (see ownedBy) is written or deleted.
		if copyKind(s.Name, req.Name, NamespacedReplicaName) != ReplicaProxyCredentials || !ownedBy(s, owner, gone) {
			r.log.Debug("Leaving alone a secret named and labelled like a copy, which the injector did not make for this instance",
				"secret", s.Namespace+"/"+s.Name, "postgresqlinstance", req.String())
			continue
		}
		want, keep, err := r.desired(ctx, t, gone, s.Namespace)
		if err != nil {
			return reconcile.Result{}, err
		}
		if err := settle(ctx, r.live, r.kube, r.log, s, want, keep); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// desired is what the proxy key copy of t in ns should hold (nil: leave it as
// it is, because the source is missing), and whether it should exist at all.
func (r *NamespacedRefresher) desired(ctx context.Context, t target, gone bool, ns string) (*corev1.Secret, bool, error) {
	if gone {
		return nil, false, nil
	}
	// A namespace that its ClusterProviderConfig no longer admits keeps no
	// copy of the platform's key (decided live: deleting must not follow a
	// stale cache, and keeping one must not either).
	if npi, ok := t.pi.(*nsv1alpha1.PostgresqlInstance); ok {
		err := tenancy.CheckNamespacedRef(ctx, r.live, r.live, ns, npi.GetProviderConfigReference())
		if tenancy.IsNotLent(err) {
			r.log.Debug("Removing the proxy key copy of a namespace that its ClusterProviderConfig no longer admits",
				"namespace", ns, "postgresqlinstance", ns+"/"+t.name(), "reason", err.Error())
			return nil, false, nil
		}
		if err != nil {
			return nil, true, errors.Wrapf(err, errLentR, ns+"/"+t.name())
		}
	}
	pc, err := t.proxyConfig(ctx, r.cached, r.resolve...)
	if err == nil && pc.key == nil {
		// Confirm before deleting: the cache may lag behind a new configuration.
		pc, err = t.proxyConfig(ctx, r.live, r.resolve...)
	}
	if err != nil {
		return nil, true, errors.Wrapf(err, errConfigR, pc.name, t.pi.GetNamespace()+"/"+t.name())
	}
	sel := pc.key
	if sel == nil || sel.Namespace == ns {
		// No key any more, or one that pods now mount as it is.
		return nil, false, nil
	}
	s := &corev1.Secret{}
	err = r.live.Get(ctx, types.NamespacedName{Namespace: sel.Namespace, Name: sel.Name}, s)
	if kerrors.IsNotFound(err) || (err == nil && len(s.Data[sel.Key]) == 0) {
		// The platform took the key back: no copy of the old one stays.
		return nil, false, nil
	}
	if err != nil {
		return nil, true, errors.Wrapf(err, errSourceSecret, sel.Namespace, sel.Name, t.pi.GetNamespace()+"/"+t.name())
	}
	return proxyCredentialsReplica(t, ns, s.Data[sel.Key]), true, nil
}
