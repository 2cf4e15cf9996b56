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

package v1alpha1

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reference"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// These ResolveReferences are what angryjet would generate from
// +crossplane:generate:reference markers, written by hand for two reasons:
// angryjet writes resolvers only for kinds whose spec embeds crossplane's
// ManagedResourceSpec, and a namespaced PostgresqlDatabase, PostgresqlUser or
// PostgresqlBackup spells its spec out because it has no providerConfigRef;
// and angryjet resolves every reference of a namespaced kind with the
// namespaced resolver, while clusterInstanceRef names a cluster-scoped
// PostgresqlInstance, which crossplane-runtime's cluster resolver
// (reference.APIResolver, with no namespace) finds. References within the
// kind's own namespace use reference.APINamespacedResolver; the CRD's rules
// keep their namespace empty, so they resolve in the object's namespace.

// Errors of reference resolution, which the managed reconciler shows in the
// Synced condition.
const (
	errResolveInstance        = "cannot resolve spec.forProvider.instanceRef or instanceSelector to a PostgresqlInstance of this namespace: create it, or correct the reference"
	errResolveClusterInstance = "cannot resolve spec.forProvider.clusterInstanceRef or clusterInstanceSelector to a cluster-scoped PostgresqlInstance: create it, or correct the reference"
	errResolveOwner           = "cannot resolve spec.forProvider.ownerRef or ownerSelector to a PostgresqlUser of this namespace: create it, or correct the reference"
)

// ResolveReferences of this PostgresqlDatabase.
func (mg *PostgresqlDatabase) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	if err := resolveInstances(ctx, c, mg, instanceFields{&p.Instance, &p.InstanceRef, p.InstanceSelector,
		&p.ClusterInstance, &p.ClusterInstanceRef, p.ClusterInstanceSelector}); err != nil {
		return err
	}

	var err error
	p.Owner, p.OwnerRef, err = resolveLocal(ctx, c, mg, p.Owner, p.OwnerRef, p.OwnerSelector,
		reference.To{Managed: &PostgresqlUser{}, List: &PostgresqlUserList{}})
	if err != nil {
		return errors.Wrap(err, errResolveOwner)
	}

	return nil
}

// ResolveReferences of this PostgresqlUser.
func (mg *PostgresqlUser) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	return resolveInstances(ctx, c, mg, instanceFields{&p.Instance, &p.InstanceRef, p.InstanceSelector,
		&p.ClusterInstance, &p.ClusterInstanceRef, p.ClusterInstanceSelector})
}

// ResolveReferences of this PostgresqlBackup.
func (mg *PostgresqlBackup) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	return resolveInstances(ctx, c, mg, instanceFields{&p.Instance, &p.InstanceRef, p.InstanceSelector,
		&p.ClusterInstance, &p.ClusterInstanceRef, p.ClusterInstanceSelector})
}

// instanceFields are the fields by which a namespaced object names its
// PostgresqlInstance: of its namespace (instance*) or cluster-scoped
// (clusterInstance*).
type instanceFields struct {
	instance        *string
	instanceRef     **xpv2.NamespacedReference
	instanceSel     *xpv2.NamespacedSelector
	cluster         *string
	clusterRef      **xpv2.Reference
	clusterSelector *xpv2.Selector
}

// resolveInstances resolves the instance that from names with f, and sets
// the value and reference fields.
func resolveInstances(ctx context.Context, c client.Reader, from resource.Managed, f instanceFields) error {
	var err error
	*f.instance, *f.instanceRef, err = resolveLocal(ctx, c, from, *f.instance, *f.instanceRef, f.instanceSel,
		reference.To{Managed: &PostgresqlInstance{}, List: &PostgresqlInstanceList{}})
	if err != nil {
		return errors.Wrap(err, errResolveInstance)
	}
	*f.cluster, *f.clusterRef, err = resolveClusterInstance(ctx, c, from, *f.cluster, *f.clusterRef, f.clusterSelector)
	return errors.Wrap(err, errResolveClusterInstance)
}

// resolveLocal resolves a reference from a namespaced object to an object of
// its own namespace (the value, the reference or the selector given) as
// angryjet's generated code does: it returns the value and the reference to
// set, which are those given when there is nothing to resolve.
func resolveLocal(ctx context.Context, c client.Reader, from resource.Managed, value string, ref *xpv2.NamespacedReference, sel *xpv2.NamespacedSelector, to reference.To) (string, *xpv2.NamespacedReference, error) {
	rsp, err := reference.NewAPINamespacedResolver(c, from).Resolve(ctx, reference.NamespacedResolutionRequest{
		CurrentValue: value,
		Reference:    ref,
		Selector:     sel,
		To:           to,
		Extract:      clusterv1alpha1.ObjectName(),
		Namespace:    from.GetNamespace(),
	})
	if err != nil {
		return value, ref, err
	}
	return rsp.ResolvedValue, rsp.ResolvedReference, nil
}

// resolveClusterInstance resolves a reference from a namespaced object to a
// cluster-scoped PostgresqlInstance with crossplane-runtime's cluster resolver.
// Whether that instance admits the object's namespace is the admission
// webhook's and the controller's to check.
func resolveClusterInstance(ctx context.Context, c client.Reader, from resource.Managed, value string, ref *xpv2.Reference, sel *xpv2.Selector) (string, *xpv2.Reference, error) {
	rsp, err := reference.NewAPIResolver(c, from).Resolve(ctx, reference.ResolutionRequest{
		CurrentValue: value,
		Reference:    ref,
		Selector:     sel,
		To:           reference.To{Managed: &clusterv1alpha1.PostgresqlInstance{}, List: &clusterv1alpha1.PostgresqlInstanceList{}},
		Extract:      clusterv1alpha1.ObjectName(),
	})
	if err != nil {
		return value, ref, err
	}
	return rsp.ResolvedValue, rsp.ResolvedReference, nil
}
