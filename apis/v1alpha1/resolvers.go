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
)

// These ResolveReferences are what angryjet would generate from
// +crossplane:generate:reference markers, written by hand: angryjet writes
// resolvers only for kinds whose spec embeds crossplane's ManagedResourceSpec or
// ClusterManagedResourceSpec, and a PostgresqlDatabase, PostgresqlUser or
// PostgresqlBackup spells its spec out because it has no providerConfigRef.
// Like angryjet's, they use crossplane-runtime's reference.APIResolver, so the
// usual semantics hold: a value already set is kept unless the reference's
// policy is resolve: Always, and a selector picks the first match.

// Errors of reference resolution, which the managed reconciler shows in the
// Synced condition.
const (
	errResolveInstance = "cannot resolve spec.forProvider.instanceRef or instanceSelector to a cluster-scoped PostgresqlInstance: create it, or correct the reference"
	errResolveOwner    = "cannot resolve spec.forProvider.ownerRef or ownerSelector to a cluster-scoped PostgresqlUser: create it, or correct the reference"
)

// ObjectName extracts the metadata.name of a referenced object: instance and
// owner hold the names of Kubernetes objects, whose Cloud SQL names the
// controllers read from the objects themselves.
func ObjectName() reference.ExtractValueFn {
	return func(mg resource.Managed) string {
		return mg.GetName()
	}
}

// ResolveReferences of this PostgresqlDatabase.
func (mg *PostgresqlDatabase) ResolveReferences(ctx context.Context, c client.Reader) error {
	r := reference.NewAPIResolver(c, mg)

	p := &mg.Spec.ForProvider
	if err := resolveInstance(ctx, r, &p.Instance, &p.InstanceRef, p.InstanceSelector); err != nil {
		return err
	}

	rsp, err := r.Resolve(ctx, reference.ResolutionRequest{
		CurrentValue: mg.Spec.ForProvider.Owner,
		Extract:      ObjectName(),
		Reference:    mg.Spec.ForProvider.OwnerRef,
		Selector:     mg.Spec.ForProvider.OwnerSelector,
		To: reference.To{
			List:    &PostgresqlUserList{},
			Managed: &PostgresqlUser{},
		},
	})
	if err != nil {
		return errors.Wrap(err, errResolveOwner)
	}
	mg.Spec.ForProvider.Owner = rsp.ResolvedValue
	mg.Spec.ForProvider.OwnerRef = rsp.ResolvedReference

	return nil
}

// ResolveReferences of this PostgresqlBackup.
func (mg *PostgresqlBackup) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	return resolveInstance(ctx, reference.NewAPIResolver(c, mg), &p.Instance, &p.InstanceRef, p.InstanceSelector)
}

// ResolveReferences of this PostgresqlUser.
func (mg *PostgresqlUser) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	return resolveInstance(ctx, reference.NewAPIResolver(c, mg), &p.Instance, &p.InstanceRef, p.InstanceSelector)
}

// resolveInstance resolves the cluster-scoped PostgresqlInstance that an
// object names with instance, instanceRef or instanceSelector, and sets the
// first two.
func resolveInstance(ctx context.Context, r *reference.APIResolver, instance *string, ref **xpv2.Reference, sel *xpv2.Selector) error {
	rsp, err := r.Resolve(ctx, reference.ResolutionRequest{
		CurrentValue: *instance,
		Extract:      ObjectName(),
		Reference:    *ref,
		Selector:     sel,
		To: reference.To{
			List:    &PostgresqlInstanceList{},
			Managed: &PostgresqlInstance{},
		},
	})
	if err != nil {
		return errors.Wrap(err, errResolveInstance)
	}
	*instance, *ref = rsp.ResolvedValue, rsp.ResolvedReference
	return nil
}
