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

package postgresqlinstance

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const errNoTypedProviderConfig = "spec.providerConfigRef is not set: name a ProviderConfig of this namespace, or a ClusterProviderConfig that the platform team lends to this namespace, that holds the project and credentials; no configuration is used implicitly"

// SetupNamespaced adds the controller of the namespaced PostgresqlInstance kind
// (cloudsql.m.travelaudience.com) to mgr. It shares the core's fleet, request
// budget, listings and clients with the cluster-scoped kind's.
func (c *Core) SetupNamespaced(mgr ctrl.Manager) error {
	return setupKind(c, mgr, &nsv1alpha1.PostgresqlInstance{}, nsv1alpha1.PostgresqlInstanceGroupKind, nsv1alpha1.PostgresqlInstanceGroupVersionKind,
		namespacedConfig(mgr.GetClient(), mgr.GetAPIReader(), providerconfig.WithNamespacedEndpoints(c.o.NamespacedEndpoints)), c.changed[true])
}

// namespacedConfig is the config of the namespaced kind: the ClusterProviderConfig
// it names, if that admits the instance's namespace (whose labels are read
// through live when its selector needs them), or the ProviderConfig of its own
// namespace, whose secrets are read from that namespace and no other, and whose
// endpoint o must allow. Through a ClusterProviderConfig, importing is allowed
// only where its spec.importPolicy says so; a namespace's own ProviderConfig
// may import.
func namespacedConfig(kube client.Client, live client.Reader, o ...providerconfig.ResolveOption) func(context.Context, *nsv1alpha1.PostgresqlInstance) (configuration, error) {
	usage := resource.NewProviderConfigUsageTracker(kube, &nsv1alpha1.ProviderConfigUsage{})
	track := func(ctx context.Context, mg *nsv1alpha1.PostgresqlInstance) error {
		if meta.WasDeleted(mg) {
			// Recorded while it lived. Once deleted it records nothing new:
			// in a namespace being deleted nothing can be created, and the
			// usage may be gone with it.
			return nil
		}
		return errors.Wrap(usage.Track(ctx, mg), errTrackUsage)
	}
	return func(ctx context.Context, mg *nsv1alpha1.PostgresqlInstance) (configuration, error) {
		ref := mg.GetProviderConfigReference()
		if ref == nil || ref.Name == "" {
			return configuration{}, errors.New(errNoTypedProviderConfig)
		}
		// A configuration that is not lent to the namespace must not be
		// held by its instances: checked before the usage is recorded.
		cfg, err := tenantConfig(ctx, kube, live, mg.GetNamespace(), *ref, o...)
		if err != nil {
			return configuration{}, err
		}
		return cfg, track(ctx, mg)
	}
}

// tenantConfig resolves the configuration ref of a namespaced instance of
// namespace ns: a ClusterProviderConfig lent to ns, whose spec.importPolicy
// says whether it may import, or a ProviderConfig of ns, which may.
func tenantConfig(ctx context.Context, kube client.Client, live client.Reader, ns string, ref xpv2.ProviderConfigReference, o ...providerconfig.ResolveOption) (configuration, error) {
	if ref.Kind == nsv1alpha1.ClusterProviderConfigKind {
		cpc, err := tenancy.LentClusterConfig(ctx, kube, live, ns, ref.Name)
		if err != nil {
			return configuration{}, err
		}
		cfg := configuration{pc: providerconfig.FromClusterConfig(cpc)}
		if !tenancy.ImportAllowed(cpc) {
			cfg.noImport = tenancy.ImportDenied(cpc)
		}
		return cfg, nil
	}
	pc, err := providerconfig.ForNamespaced(ctx, kube, ns, ref, o...)
	return configuration{pc: pc}, err
}
