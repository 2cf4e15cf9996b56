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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	errConfigR = "cannot read %s of PostgresqlInstance %s"
	errLentR   = "cannot decide whether the ClusterProviderConfig of PostgresqlInstance %s still admits its namespace"
)

// Cache indexes of the namespaced instances' copies.
const (
	indexClusterConfig    = "podinject.clusterProviderConfig" // namespaced PostgresqlInstance: ClusterProviderConfig name
	indexClusterConfigKey = "podinject.clusterProxyKey"       // ClusterProviderConfig: namespace/name
)

// namespacedInstanceCopies keeps the proxy key copies of namespaced
// instances: they follow the key of the ClusterProviderConfig, and go when the
// configuration no longer names a key elsewhere or no longer admits the
// namespace.
var namespacedInstanceCopies = copySource{
	controller: "podinject-namespaced-replicas",
	apiVersion: nsv1alpha1.SchemeGroupVersion.String(),
	kind:       nsv1alpha1.PostgresqlInstanceKind,
	logKey:     "postgresqlinstance",
	object:     func() client.Object { return &nsv1alpha1.PostgresqlInstance{} },
	copyKey:    namespacedCopyKey,
	// Only the proxy key is ever copied for a namespaced instance.
	copyKind: func(secret, name string) string {
		if k := copyKind(secret, name, NamespacedCopyName); k == CopyProxyCredentials {
			return k
		}
		return ""
	},
	watch:   watchNamespacedInstances,
	desired: namespacedDesired,
}

// watchNamespacedInstances watches ClusterProviderConfigs, namespaces and the
// metadata of secrets, and finds the instances a key concerns through the
// ClusterProviderConfigs that name it.
func watchNamespacedInstances(ctx context.Context, mgr ctrl.Manager, r *CopyReconciler, b *builder.Builder) (*builder.Builder, error) {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &nsv1alpha1.PostgresqlInstance{}, indexClusterConfig, func(o client.Object) []string {
		if ref := o.(*nsv1alpha1.PostgresqlInstance).GetProviderConfigReference(); ref != nil && ref.Kind == nsv1alpha1.ClusterProviderConfigKind {
			return []string{ref.Name}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := idx.IndexField(ctx, &nsv1alpha1.ClusterProviderConfig{}, indexClusterConfigKey, func(o client.Object) []string {
		if sel := o.(*nsv1alpha1.ClusterProviderConfig).Spec.ProxyCredentials; sel != nil {
			return []string{sel.Namespace + "/" + sel.Name}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return b.
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.namespacedInstancesOf)).
		Watches(&nsv1alpha1.ClusterProviderConfig{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.namespacedInstancesUsing(ctx, o.GetName())
		})).
		// A namespace whose labels stop matching a ClusterProviderConfig's
		// selector loses the configuration, and its copies of the key.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.namespacedInstancesIn)), nil
}

// namespacedInstancesUsing maps a ClusterProviderConfig to the namespaced
// instances that name it.
func (r *CopyReconciler) namespacedInstancesUsing(ctx context.Context, config string) []reconcile.Request {
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

// namespacedInstancesIn maps a namespace to its namespaced instances.
func (r *CopyReconciler) namespacedInstancesIn(ctx context.Context, ns client.Object) []reconcile.Request {
	pis := &nsv1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis, client.InNamespace(ns.GetName())); err != nil {
		r.log.Info("Cannot find the namespaced instances of a changed namespace", "namespace", ns.GetName(), "error", err)
		return nil
	}
	return requestsFor(pis)
}

// namespacedInstancesOf maps a secret to the instances whose copies it may
// concern: the instance a copy names, and the instances of the
// ClusterProviderConfigs whose proxy key it is.
func (r *CopyReconciler) namespacedInstancesOf(ctx context.Context, s client.Object) []reconcile.Request {
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
		reqs = append(reqs, r.namespacedInstancesUsing(ctx, cpc.Name)...)
	}
	return reqs
}

// namespacedDesired is what the proxy key copy of a namespaced instance should
// be in each namespace (only ever its own).
func namespacedDesired(r *CopyReconciler, obj client.Object) desiredFunc {
	pi := obj.(*nsv1alpha1.PostgresqlInstance)
	t := namespacedTarget(pi)
	name := pi.Namespace + "/" + pi.Name
	return func(ctx context.Context, ns, _ string) (bool, *corev1.Secret, error) {
		// A namespace that its ClusterProviderConfig no longer admits keeps
		// no copy of the platform's key (decided live: deleting must not
		// follow a stale cache, and keeping one must not either).
		err := tenancy.CheckNamespacedRef(ctx, r.live, r.live, ns, pi.GetProviderConfigReference())
		if tenancy.IsNotLent(err) {
			r.log.Debug("Removing the proxy key copy of a namespace that its ClusterProviderConfig no longer admits",
				"namespace", ns, "postgresqlinstance", name, "reason", err.Error())
			return false, nil, nil
		}
		if err != nil {
			return true, nil, errors.Wrapf(err, errLentR, name)
		}
		pc, err := t.proxyConfig(ctx, r.cached, r.resolve...)
		if err == nil && pc.key == nil {
			// Confirm before deleting: the cache may lag behind a new
			// configuration.
			pc, err = t.proxyConfig(ctx, r.live, r.resolve...)
		}
		if err != nil {
			return true, nil, errors.Wrapf(err, errConfigR, pc.name, name)
		}
		sel := pc.key
		if sel == nil || sel.Namespace == ns {
			// No key any more, or one that pods now mount as it is.
			return false, nil, nil
		}
		v, err := r.secretKey(ctx, sel.Namespace, sel.Name, sel.Key)
		if err != nil || v == nil {
			// A key taken back leaves no copy of the old one.
			return err != nil, nil, errors.Wrapf(err, errSourceSecret, sel.Namespace, sel.Name, name)
		}
		return true, proxyKeyCopy(t, ns, v), nil
	}
}
