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
// instances, through crossplane-runtime's managed reconciler and the core
// every kind shares.
package postgresqlinstance

import (
	"context"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/spf13/afero"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
)

const (
	errListCopies    = "cannot list the secrets copied into other namespaces for this instance"
	errDeleteCopy    = "cannot delete secret %s/%s copied for this instance"
	errSetExtName    = "cannot record the Cloud SQL instance name in the crossplane.io/external-name annotation"
	errReleaseSecret = "cannot release connection secret %s/%s from the deleted PostgresqlInstance (deletionPolicy Orphan keeps the instance, so its password must stay)"
	errReadSecret    = "cannot read connection secret %s/%s"
)

// SetupCluster adds the controller of the cluster-scoped PostgresqlInstance kind
// (cloudsql.travelaudience.com) to mgr, in core c.
func SetupCluster(mgr ctrl.Manager, c *core.Core) error {
	return setupKind(mgr, c, &v1alpha1.PostgresqlInstance{}, v1alpha1.PostgresqlInstanceGroupKind, v1alpha1.PostgresqlInstanceGroupVersionKind,
		false, c.ClusterConfig(mgr.GetClient()))
}

// SetupNamespaced adds the controller of the namespaced PostgresqlInstance kind
// (cloudsql.m.travelaudience.com) to mgr. It shares the core's fleet, request
// budget, listings and clients with the cluster-scoped kind's.
func SetupNamespaced(mgr ctrl.Manager, c *core.Core) error {
	return setupKind(mgr, c, &nsv1alpha1.PostgresqlInstance{}, nsv1alpha1.PostgresqlInstanceGroupKind, nsv1alpha1.PostgresqlInstanceGroupVersionKind,
		true, c.NamespacedConfig(mgr.GetClient(), mgr.GetAPIReader()))
}

// setupKind adds the controller of one PostgresqlInstance kind to mgr, with the
// core's fleet, pacing, listings and clients, and the kind's configuration.
func setupKind[T core.Instance](mgr ctrl.Manager, c *core.Core, obj T, groupKind string, gvk schema.GroupVersionKind,
	namespaced bool, config func(context.Context, T) (core.Configuration, error)) error {
	conn := &connector[T]{
		kube:     mgr.GetClient(),
		secrets:  mgr.GetAPIReader(),
		services: c.Services(),
		pacing:   c.Pacing(),
		fs:       afero.NewOsFs(),
		observer: c.Observer(),
		owner:    gvk,
		config:   config,
		connection: func(ctx context.Context, mg client.Object, key types.NamespacedName) (*core.InstanceConnection, client.Object, error) {
			return c.Connection(ctx, mgr.GetClient(), mgr.GetAPIReader(), mg, key)
		},
		clones:       c.Clones(gvk),
		admitsSource: c.AdmitsSource,
	}
	return c.SetupInstanceKind(mgr, core.InstanceKind{
		GroupKind: groupKind, GVK: gvk, Object: obj, Namespaced: namespaced,
		Connector:    managed.WithTypedExternalConnector[T](conn),
		Initializers: []managed.Initializer{managed.InitializerFn(externalNameInitializer(mgr.GetClient()))},
		Finalizer: &copyCleaner{
			APIFinalizer: resource.NewAPIFinalizer(mgr.GetClient(), core.ManagedFinalizer),
			kube:         mgr.GetClient(),
			reader:       mgr.GetAPIReader(),
			pacing:       c.Pacing(),
			observer:     c.Observer(),
			observe: func(ctx context.Context, obj resource.Object) error {
				mg, ok := obj.(T)
				if !ok {
					return nil
				}
				ext, err := conn.Connect(ctx, mg)
				if err != nil {
					return err
				}
				_, err = ext.Observe(ctx, mg)
				return err
			},
		},
	})
}

// externalNameInitializer records the effective instance name in the
// crossplane.io/external-name annotation (spec.forProvider.name when set), so that
// the annotation never names another instance than the one managed.
func externalNameInitializer(kube client.Client) func(context.Context, resource.Managed) error {
	return func(ctx context.Context, mg resource.Managed) error {
		pi, ok := mg.(core.Instance)
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

// copyCleaner runs, before the finalizer goes, what must happen whatever the
// deletion policy: the secrets that the injector copied into application
// namespaces are deleted (they hold the password and outlive the instance
// otherwise), and when the Cloud SQL instance stays (Orphan) the connection secret
// is released from its owner, so that garbage collection does not take the only
// copy of a password that still works.
type copyCleaner struct {
	*resource.APIFinalizer
	kube client.Client
	// reader reads secrets without caching every secret of the cluster.
	reader client.Reader
	pacing *core.Pacing
	// observer, when observing by listing, stops listing for the object.
	observer *observer.Observer
	// observe observes a deleted object through its external client, which
	// puts back a deletion protection that a delete lifted (keepProtected).
	observe func(ctx context.Context, obj resource.Object) error
}

// RemoveFinalizer cleans up, then removes the finalizer.
func (f *copyCleaner) RemoveFinalizer(ctx context.Context, obj resource.Object) error {
	if pi, ok := obj.(core.Instance); ok && f.observe != nil && !deletesInstance(pi) && pi.GetAnnotations()[v1alpha1.AnnotationAllowDeletion] == "true" {
		// It was deleted allowed to delete, and now keeps its instance
		// (deletionPolicy Orphan, or no Delete policy): the delete may have
		// lifted the instance's deletion protection, which must be on again
		// before the object goes and nothing watches the instance.
		if err := f.observe(ctx, obj); err != nil {
			return err
		}
	}
	// A namespaced instance's copies are in its namespace, under its group's label.
	opts := []client.ListOption{client.MatchingLabels{v1alpha1.LabelInstance: obj.GetName()}}
	if ns := obj.GetNamespace(); ns != "" {
		opts = []client.ListOption{client.InNamespace(ns), client.MatchingLabels{nsv1alpha1.LabelInstance: obj.GetName()}}
	}
	list := &corev1.SecretList{}
	if err := f.reader.List(ctx, list, opts...); err != nil {
		return errors.Wrap(err, errListCopies)
	}
	for i := range list.Items {
		s := &list.Items[i]
		// The label alone is not enough: anyone who can write a secret can set it.
		if !ownedBy(s, obj.GetUID()) {
			continue
		}
		if err := f.kube.Delete(ctx, s); resource.IgnoreNotFound(err) != nil {
			return errors.Wrapf(err, errDeleteCopy, s.Namespace, s.Name)
		}
	}
	if pi, ok := obj.(core.Instance); ok && !deletesInstance(pi) {
		if err := f.releaseConnectionSecret(ctx, pi); err != nil {
			return err
		}
	}
	f.pacing.Forget(core.ObjectKey(obj))
	if f.observer != nil {
		f.observer.Unwatch(core.ObjectKey(obj))
	}
	return f.APIFinalizer.RemoveFinalizer(ctx, obj)
}

// releaseConnectionSecret removes the instance's owner reference from its
// connection secret.
func (f *copyCleaner) releaseConnectionSecret(ctx context.Context, pi core.Instance) error {
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
func deletesInstance(pi core.Instance) bool {
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
