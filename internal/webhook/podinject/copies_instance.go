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

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	errPolicyR       = "cannot decide whether namespace %s may still use PostgresqlInstance %s"
	errSourceSecret  = "cannot read secret %s/%s, the source of the copies for PostgresqlInstance %s"
	errProviderConfR = "cannot read ProviderConfig %q of PostgresqlInstance %s"
)

// Cache indexes that map a secret to the instances it concerns.
const (
	indexConnectionSecret = "podinject.connectionSecret" // PostgresqlInstance: namespace/name
	indexProviderConfig   = "podinject.providerConfig"   // PostgresqlInstance: ProviderConfig name
	indexProxyKey         = "podinject.proxyKey"         // ProviderConfig: namespace/name
)

// instanceCopies keeps the copies of cluster-scoped instances: the pgpass
// copies follow the connection secret's pgpass (a new password), the proxy
// key copies the ProviderConfig's spec.proxyCredentials secret. Copies go
// from namespaces that spec.injection (or the default) no longer allows, the
// proxy key copies also when the ProviderConfig no longer names a key or its
// secret is gone.
var instanceCopies = copySource{
	controller: "podinject-replicas",
	apiVersion: v1alpha1.SchemeGroupVersion.String(),
	kind:       v1alpha1.PostgresqlInstanceKind,
	logKey:     "postgresqlinstance",
	object:     func() client.Object { return &v1alpha1.PostgresqlInstance{} },
	copyKey:    clusterCopyKey,
	copyKind:   func(secret, name string) string { return copyKind(secret, name, CopyName) },
	watch:      watchInstances,
	desired:    instanceDesired,
}

// watchInstances finds the instances a secret concerns through cache indexes:
// connection secrets by spec.writeConnectionSecretToRef, proxy keys by the
// ProviderConfigs that name them, copies by their label.
func watchInstances(ctx context.Context, mgr ctrl.Manager, r *CopyReconciler, b *builder.Builder) (*builder.Builder, error) {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.PostgresqlInstance{}, indexConnectionSecret, func(o client.Object) []string {
		if ref := o.(*v1alpha1.PostgresqlInstance).GetWriteConnectionSecretToReference(); ref != nil {
			return []string{ref.Namespace + "/" + ref.Name}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := idx.IndexField(ctx, &v1alpha1.PostgresqlInstance{}, indexProviderConfig, func(o client.Object) []string {
		return []string{pcName(o.(*v1alpha1.PostgresqlInstance))}
	}); err != nil {
		return nil, err
	}
	if err := idx.IndexField(ctx, &v1alpha1.ProviderConfig{}, indexProxyKey, func(o client.Object) []string {
		if sel := o.(*v1alpha1.ProviderConfig).Spec.ProxyCredentials; sel != nil {
			return []string{sel.Namespace + "/" + sel.Name}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return b.
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.instancesOf)).
		// Proxy key copies go when the ProviderConfig no longer names a key.
		Watches(&v1alpha1.ProviderConfig{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, pc client.Object) []reconcile.Request {
			return r.instancesUsing(ctx, pc.GetName())
		})).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
			return r.instancesSelecting(ctx, func(pi *v1alpha1.PostgresqlInstance) []reconcile.Request { return clusterRequests(pi.Name) })
		})), nil
}

// clusterRequests are the reconcile requests of cluster-scoped objects.
func clusterRequests(names ...string) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(names))
	for _, n := range names {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: n}})
	}
	return reqs
}

// instancesUsing maps a ProviderConfig to its instances.
func (r *CopyReconciler) instancesUsing(ctx context.Context, pc string) []reconcile.Request {
	pis := &v1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis, client.MatchingFields{indexProviderConfig: pc}); err != nil {
		r.log.Info("Cannot find the instances of a changed ProviderConfig", "providerconfig", pc, "error", err)
		return nil
	}
	var reqs []reconcile.Request
	for _, pi := range pis.Items {
		reqs = append(reqs, clusterRequests(pi.Name)...)
	}
	return reqs
}

// instancesSelecting maps a namespace, through the instances that select
// namespaces by label, to the requests that each of them makes: a namespace
// whose labels changed may have lost its right to their copies.
func (r *CopyReconciler) instancesSelecting(ctx context.Context, requests func(*v1alpha1.PostgresqlInstance) []reconcile.Request) []reconcile.Request {
	pis := &v1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis); err != nil {
		r.log.Info("Cannot list the instances to match a changed namespace", "error", err)
		return nil
	}
	var reqs []reconcile.Request
	for i := range pis.Items {
		if inj := pis.Items[i].Spec.Injection; inj != nil && inj.NamespaceSelector != nil {
			reqs = append(reqs, requests(&pis.Items[i])...)
		}
	}
	return reqs
}

// instancesOf maps a secret to the instances whose copies it may concern.
func (r *CopyReconciler) instancesOf(ctx context.Context, s client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	if n := s.GetLabels()[v1alpha1.LabelInstance]; n != "" {
		reqs = append(reqs, clusterRequests(n)...) // a copy
	}
	key := s.GetNamespace() + "/" + s.GetName()
	pis := &v1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis, client.MatchingFields{indexConnectionSecret: key}); err != nil {
		r.log.Info("Cannot find the instances whose connection secret changed", "secret", key, "error", err)
	}
	for _, pi := range pis.Items {
		reqs = append(reqs, clusterRequests(pi.Name)...)
	}
	pcs := &v1alpha1.ProviderConfigList{}
	if err := r.cached.List(ctx, pcs, client.MatchingFields{indexProxyKey: key}); err != nil {
		r.log.Info("Cannot find the ProviderConfigs whose proxy key changed", "secret", key, "error", err)
	}
	for _, pc := range pcs.Items {
		reqs = append(reqs, r.instancesUsing(ctx, pc.Name)...)
	}
	return reqs
}

// instanceDesired is what the copies of a cluster-scoped instance should be.
// The postgres password goes only where spec.injection allows; the proxy's
// key also where the instance's users serve pods (spec.tenancy), whose
// proxies need it as much.
func instanceDesired(r *CopyReconciler, obj client.Object) desiredFunc {
	pi := obj.(*v1alpha1.PostgresqlInstance)
	pgpass := &lazy[[]byte]{read: func(ctx context.Context) ([]byte, error) {
		ref := pi.GetWriteConnectionSecretToReference()
		if ref == nil {
			return nil, nil
		}
		v, err := r.secretKey(ctx, ref.Namespace, ref.Name, cloudsql.ConnectionKeyPgpass)
		return v, errors.Wrapf(err, errSourceSecret, ref.Namespace, ref.Name, pi.Name)
	}}
	key := &lazy[[]byte]{read: func(ctx context.Context) ([]byte, error) { return r.proxyKey(ctx, pi) }}
	return func(ctx context.Context, ns, kind string) (bool, *corev1.Secret, error) {
		allows := r.policy.Allows
		if kind == CopyProxyCredentials {
			allows = r.policy.AdmitsObjects
		}
		ok, err := allows(ctx, pi, ns, tenancy.NamespaceGetter(r.cached))
		if err != nil {
			return false, nil, errors.Wrapf(err, errPolicyR, ns, pi.Name)
		}
		if !ok {
			return false, nil, nil
		}
		if kind == CopyPgpass {
			v, err := pgpass.get(ctx)
			if err != nil || v == nil {
				return true, nil, err
			}
			return true, pgpassCopy(clusterTarget(pi), ns, v), nil
		}
		v, err := key.get(ctx)
		if err != nil || v == nil {
			// No key any more, or its secret is gone: the platform took
			// it back, and the namespace keeps no copy of the old one.
			return err != nil, nil, err
		}
		return true, proxyKeyCopy(clusterTarget(pi), ns, v), nil
	}
}

// proxyKey is the proxy's key of pi, nil when its ProviderConfig names none or
// the secret or key it names is missing.
func (r *CopyReconciler) proxyKey(ctx context.Context, pi *v1alpha1.PostgresqlInstance) ([]byte, error) {
	pc, err := providerConfig(ctx, r.cached, pi)
	if err == nil && (pc == nil || pc.Spec.ProxyCredentials == nil) {
		// Confirm before the copies go: the cache may lag behind.
		pc, err = providerConfig(ctx, r.live, pi)
	}
	if err != nil {
		return nil, errors.Wrapf(err, errProviderConfR, pcName(pi), pi.Name)
	}
	if pc == nil || pc.Spec.ProxyCredentials == nil {
		return nil, nil
	}
	sel := pc.Spec.ProxyCredentials
	v, err := r.secretKey(ctx, sel.Namespace, sel.Name, sel.Key)
	return v, errors.Wrapf(err, errSourceSecret, sel.Namespace, sel.Name, pi.Name)
}
