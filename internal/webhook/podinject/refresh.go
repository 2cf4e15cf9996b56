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

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// RefresherName is the name of the Refresher's controller.
const RefresherName = "podinject-replicas"

const (
	errGetInstanceR  = "cannot read PostgresqlInstance %s"
	errListReplicas  = "cannot list the secrets copied for PostgresqlInstance %s"
	errPolicyR       = "cannot decide whether namespace %s may still use PostgresqlInstance %s"
	errSourceSecret  = "cannot read secret %s/%s, the source of the copies for PostgresqlInstance %s"
	errProviderConfR = "cannot read ProviderConfig %q of PostgresqlInstance %s"
	errIndex         = "cannot index PostgresqlInstances and ProviderConfigs by the secrets they name"
)

// A Refresher keeps the secrets that the injector copied into application
// namespaces in line with their sources. For each PostgresqlInstance it
//
//   - updates the pgpass copies when the connection secret's pgpass changes
//     (a new password), and the proxy key copies when the ProviderConfig's
//     spec.proxyCredentials secret changes;
//   - deletes the copies in namespaces that spec.injection (or the default) no
//     longer allows, the proxy key copies when the ProviderConfig no longer has
//     proxyCredentials or their secret is gone, and every copy of an instance
//     that is gone.
//
// A copy is a secret that the injector made: a copy's name and label, and an
// owner reference to the instance's UID. Others are left alone, whatever their
// name and labels say.
//
// Running pods keep the password file their init container wrote at start: a new
// password reaches them when they restart. Copies are not created here, only at
// admission, so that a namespace holds the password only once a pod asked for it.
type Refresher struct {
	cached client.Reader
	live   client.Reader
	// copies reads the cache of secrets' metadata (the client bypasses it:
	// secrets are never cached whole).
	copies client.Reader
	kube   client.Writer
	policy tenancy.Policy
	log    logging.Logger
}

// Cache indexes that map a secret to the instances it concerns.
const (
	indexConnectionSecret = "podinject.connectionSecret" // PostgresqlInstance: namespace/name
	indexProviderConfig   = "podinject.providerConfig"   // PostgresqlInstance: ProviderConfig name
	indexProxyKey         = "podinject.proxyKey"         // ProviderConfig: namespace/name
)

// SetupRefresher adds a Refresher to mgr. It watches PostgresqlInstances,
// ProviderConfigs, namespaces (whose labels may stop matching a
// namespaceSelector) and the metadata (only) of secrets, and finds the instances a
// secret concerns through cache indexes: connection secrets by
// spec.writeConnectionSecretToRef, proxy keys by the ProviderConfigs that name
// them, copies by their label.
func SetupRefresher(mgr ctrl.Manager, policy tenancy.Policy, o ...Option) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.PostgresqlInstance{}, indexConnectionSecret, func(o client.Object) []string {
		if ref := o.(*v1alpha1.PostgresqlInstance).GetWriteConnectionSecretToReference(); ref != nil {
			return []string{ref.Namespace + "/" + ref.Name}
		}
		return nil
	}); err != nil {
		return errors.Wrap(err, errIndex)
	}
	if err := idx.IndexField(ctx, &v1alpha1.PostgresqlInstance{}, indexProviderConfig, func(o client.Object) []string {
		return []string{pcName(o.(*v1alpha1.PostgresqlInstance))}
	}); err != nil {
		return errors.Wrap(err, errIndex)
	}
	if err := idx.IndexField(ctx, &v1alpha1.ProviderConfig{}, indexProxyKey, func(o client.Object) []string {
		if sel := o.(*v1alpha1.ProviderConfig).Spec.ProxyCredentials; sel != nil {
			return []string{sel.Namespace + "/" + sel.Name}
		}
		return nil
	}); err != nil {
		return errors.Wrap(err, errIndex)
	}
	if err := indexCopies(mgr); err != nil {
		return err
	}
	r := &Refresher{cached: mgr.GetClient(), live: mgr.GetAPIReader(), copies: mgr.GetCache(), kube: mgr.GetClient(), policy: policy, log: newOptions(o).log}
	return ctrl.NewControllerManagedBy(mgr).
		Named(RefresherName).
		For(&v1alpha1.PostgresqlInstance{}).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.instancesOf)).
		Watches(&v1alpha1.ProviderConfig{}, handler.EnqueueRequestsFromMapFunc(r.instancesUsing)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.instancesSelecting)).
		Complete(r)
}

// instancesUsing maps a ProviderConfig to its instances: their proxy key copies
// go when it no longer names a key.
func (r *Refresher) instancesUsing(ctx context.Context, pc client.Object) []reconcile.Request {
	pis := &v1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis, client.MatchingFields{indexProviderConfig: pc.GetName()}); err != nil {
		r.log.Info("Cannot find the instances of a changed ProviderConfig", "providerconfig", pc.GetName(), "error", err)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(pis.Items))
	for _, pi := range pis.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: pi.Name}})
	}
	return reqs
}

// instancesSelecting maps a namespace to the instances that select namespaces by
// label: a namespace whose labels changed may have lost its right to their copies.
func (r *Refresher) instancesSelecting(ctx context.Context, _ client.Object) []reconcile.Request {
	pis := &v1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis); err != nil {
		r.log.Info("Cannot list the instances to match a changed namespace", "error", err)
		return nil
	}
	var reqs []reconcile.Request
	for _, pi := range pis.Items {
		if pi.Spec.Injection != nil && pi.Spec.Injection.NamespaceSelector != nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: pi.Name}})
		}
	}
	return reqs
}

// instancesOf maps a secret to the instances whose copies it may concern.
func (r *Refresher) instancesOf(ctx context.Context, s client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	add := func(name string) {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	}
	if n := s.GetLabels()[v1alpha1.LabelInstance]; n != "" {
		add(n) // a copy
	}
	key := s.GetNamespace() + "/" + s.GetName()
	pis := &v1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis, client.MatchingFields{indexConnectionSecret: key}); err != nil {
		r.log.Info("Cannot find the instances whose connection secret changed", "secret", key, "error", err)
	}
	for _, pi := range pis.Items {
		add(pi.Name)
	}
	pcs := &v1alpha1.ProviderConfigList{}
	if err := r.cached.List(ctx, pcs, client.MatchingFields{indexProxyKey: key}); err != nil {
		r.log.Info("Cannot find the ProviderConfigs whose proxy key changed", "secret", key, "error", err)
	}
	for _, pc := range pcs.Items {
		pis := &v1alpha1.PostgresqlInstanceList{}
		if err := r.cached.List(ctx, pis, client.MatchingFields{indexProviderConfig: pc.Name}); err != nil {
			r.log.Info("Cannot find the instances whose proxy key changed", "providerconfig", pc.Name, "error", err)
		}
		for _, pi := range pis.Items {
			add(pi.Name)
		}
	}
	return reqs
}

// Reconcile brings the copies of one instance in line.
func (r *Refresher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := r.log.WithValues("postgresqlinstance", req.Name)
	pi := &v1alpha1.PostgresqlInstance{}
	err := r.cached.Get(ctx, req.NamespacedName, pi)
	if kerrors.IsNotFound(err) {
		// Confirm before deleting anything: the cache may lag behind.
		err = r.live.Get(ctx, req.NamespacedName, pi)
	}
	if err != nil && !kerrors.IsNotFound(err) {
		return reconcile.Result{}, errors.Wrapf(err, errGetInstanceR, req.Name)
	}
	gone := kerrors.IsNotFound(err)

	copies, err := listCopies(ctx, r.copies, "", clusterCopyKey(req.Name))
	if err != nil {
		return reconcile.Result{}, errors.Wrapf(err, errListReplicas, req.Name)
	}
	// Without the instance its UID is unknown: a reference to its kind and
	// name will do, as it does for the garbage collector, which deletes
	// secrets whose owner is gone.
	owner := metav1.OwnerReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.PostgresqlInstanceKind, Name: req.Name, UID: pi.UID}
	src := &sources{r: r, pi: pi}
	for i := range copies {
		s := &copies[i]
		if !ownedBy(s, owner, gone) {
			log.Debug("Leaving alone a secret named and labelled like a copy, which the injector did not make for this instance",
				"secret", s.Namespace+"/"+s.Name)
			continue
		}
		keep, want, err := r.desired(ctx, src, gone, s.Namespace, copyKind(s.Name, req.Name, ReplicaName))
		if err != nil {
			return reconcile.Result{}, err
		}
		if err := settle(ctx, r.live, r.kube, log, s, want, keep); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// desired says whether the copy of a kind in namespace ns should exist, and
// what it should hold (nil: leave its contents, because the source is not
// available yet).
func (r *Refresher) desired(ctx context.Context, src *sources, gone bool, ns, kind string) (bool, *corev1.Secret, error) {
	if gone {
		return false, nil, nil
	}
	pi := src.pi
	// postgres's password only where spec.injection allows; the proxy's key
	// also where the instance's users serve pods (spec.tenancy), whose
	// proxies need it as much.
	allows := r.policy.Allows
	if kind == ReplicaProxyCredentials {
		allows = r.policy.AdmitsObjects
	}
	ok, err := allows(ctx, pi, ns, tenancy.NamespaceGetter(r.cached))
	if err != nil {
		return false, nil, errors.Wrapf(err, errPolicyR, ns, pi.Name)
	}
	if !ok {
		return false, nil, nil
	}
	switch kind {
	case ReplicaPgpass:
		pgpass, err := src.pgpass(ctx)
		if err != nil || pgpass == nil {
			return true, nil, err
		}
		return true, pgpassReplica(clusterTarget(pi), ns, pgpass), nil
	case ReplicaProxyCredentials:
		key, err := src.proxyKey(ctx)
		switch {
		case err != nil:
			return true, nil, err
		case key == nil:
			// No key any more, or its secret is gone: the platform took it
			// back, and the namespace keeps no copy of the old one.
			return false, nil, nil
		}
		return true, proxyCredentialsReplica(clusterTarget(pi), ns, key), nil
	}
	return true, nil, nil
}

// sources reads the sources of an instance's copies once per reconcile.
type sources struct {
	r  *Refresher
	pi *v1alpha1.PostgresqlInstance

	pgpassRead bool
	pgpassVal  []byte

	keyRead bool
	keyVal  []byte
}

// pgpass is the connection secret's pgpass, or nil when there is none (yet).
func (s *sources) pgpass(ctx context.Context) ([]byte, error) {
	if s.pgpassRead {
		return s.pgpassVal, nil
	}
	ref := s.pi.GetWriteConnectionSecretToReference()
	if ref != nil {
		v, err := s.r.secretKey(ctx, ref.Namespace, ref.Name, cloudsql.ConnectionKeyPgpass, s.pi.Name)
		if err != nil {
			return nil, err
		}
		s.pgpassVal = v
	}
	s.pgpassRead = true
	return s.pgpassVal, nil
}

// proxyKey is the proxy's key, nil when the ProviderConfig names none or the
// secret or key it names is missing.
func (s *sources) proxyKey(ctx context.Context) ([]byte, error) {
	if s.keyRead {
		return s.keyVal, nil
	}
	pc, err := providerConfig(ctx, s.r.cached, s.pi)
	if err == nil && (pc == nil || pc.Spec.ProxyCredentials == nil) {
		// Confirm before the copies go: the cache may lag behind.
		pc, err = providerConfig(ctx, s.r.live, s.pi)
	}
	if err != nil {
		return nil, errors.Wrapf(err, errProviderConfR, pcName(s.pi), s.pi.Name)
	}
	if pc != nil && pc.Spec.ProxyCredentials != nil {
		sel := pc.Spec.ProxyCredentials
		if s.keyVal, err = s.r.secretKey(ctx, sel.Namespace, sel.Name, sel.Key, s.pi.Name); err != nil {
			return nil, err
		}
	}
	s.keyRead = true
	return s.keyVal, nil
}

// secretKey reads one key of a secret; nil when the secret or key is missing.
func (r *Refresher) secretKey(ctx context.Context, ns, name, key, instance string) ([]byte, error) {
	sec := &corev1.Secret{}
	err := r.live.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, sec)
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, errSourceSecret, ns, name, instance)
	}
	if len(sec.Data[key]) == 0 {
		return nil, nil
	}
	return sec.Data[key], nil
}
