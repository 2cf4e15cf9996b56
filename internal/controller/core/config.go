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

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	errTrackUsage            = "cannot track ProviderConfig usage"
	errNoProviderConfig      = "spec.providerConfigRef is not set: name the ProviderConfig that holds the project and credentials"
	errGetProviderConfig     = "cannot get ProviderConfig %q named by spec.providerConfigRef"
	errNoTypedProviderConfig = "spec.providerConfigRef is not set: name a ProviderConfig of this namespace, or a ClusterProviderConfig that the platform team lends to this namespace, that holds the project and credentials; no configuration is used implicitly"
)

// A Configuration is the provider configuration an instance uses, as the
// cluster-scoped kind's, and what it forbids.
type Configuration struct {
	ProviderConfig *v1alpha1.ProviderConfig
	// NoImport, when not nil, says why the instance may not import a Cloud
	// SQL instance that no PostgresqlInstance created (observe it, or take
	// it over), and what to do.
	NoImport error
}

// ClusterConfig is the configuration of the cluster-scoped instance kind: its
// ProviderConfig, whose usage it records. Its name is unique among every
// kind's configurations (it keys the clients and the listings they share).
func (c *Core) ClusterConfig(kube client.Client) func(context.Context, *v1alpha1.PostgresqlInstance) (Configuration, error) {
	usage := resource.NewLegacyProviderConfigUsageTracker(kube, &v1alpha1.ProviderConfigUsage{})
	return func(ctx context.Context, mg *v1alpha1.PostgresqlInstance) (Configuration, error) {
		if err := usage.Track(ctx, mg); err != nil {
			return Configuration{}, errors.Wrap(err, errTrackUsage)
		}
		ref := mg.GetProviderConfigReference()
		if ref == nil || ref.Name == "" {
			return Configuration{}, errors.New(errNoProviderConfig)
		}
		pc, err := platformConfig(ctx, kube, ref.Name)
		// Cluster-scoped instances are the platform team's: they may import.
		return Configuration{ProviderConfig: pc}, err
	}
}

// platformConfig reads the cluster-scoped ProviderConfig name.
func platformConfig(ctx context.Context, kube client.Reader, name string) (*v1alpha1.ProviderConfig, error) {
	pc := &v1alpha1.ProviderConfig{}
	if err := kube.Get(ctx, types.NamespacedName{Name: name}, pc); err != nil {
		return nil, errors.Wrapf(err, errGetProviderConfig, name)
	}
	return pc, nil
}

// NamespacedConfig is the configuration of the namespaced instance kind: the ClusterProviderConfig
// it names, if that admits the instance's namespace (whose labels are read
// through live when its selector needs them), or the ProviderConfig of its own
// namespace, whose secrets are read from that namespace and no other, and whose
// endpoint Options.NamespacedEndpoints must allow. Through a ClusterProviderConfig, importing is allowed
// only where its spec.importPolicy says so; a namespace's own ProviderConfig
// may import.
func (c *Core) NamespacedConfig(kube client.Client, live client.Reader) func(context.Context, *nsv1alpha1.PostgresqlInstance) (Configuration, error) {
	o := providerconfig.WithNamespacedEndpoints(c.o.NamespacedEndpoints)
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
	return func(ctx context.Context, mg *nsv1alpha1.PostgresqlInstance) (Configuration, error) {
		ref := mg.GetProviderConfigReference()
		if ref == nil || ref.Name == "" {
			return Configuration{}, errors.New(errNoTypedProviderConfig)
		}
		// A configuration that is not lent to the namespace must not be
		// held by its instances: checked before the usage is recorded.
		cfg, err := tenantConfig(ctx, kube, live, mg.GetNamespace(), *ref, o)
		if err != nil {
			return Configuration{}, err
		}
		return cfg, track(ctx, mg)
	}
}

// tenantConfig resolves the configuration ref of a namespaced instance of
// namespace ns: a ClusterProviderConfig lent to ns, whose spec.importPolicy
// says whether it may import, or a ProviderConfig of ns, which may.
func tenantConfig(ctx context.Context, kube client.Client, live client.Reader, ns string, ref xpv2.ProviderConfigReference, o ...providerconfig.ResolveOption) (Configuration, error) {
	if ref.Kind == nsv1alpha1.ClusterProviderConfigKind {
		cpc, err := tenancy.LentClusterConfig(ctx, kube, live, ns, ref.Name)
		if err != nil {
			return Configuration{}, err
		}
		cfg := Configuration{ProviderConfig: providerconfig.FromClusterConfig(cpc)}
		if !tenancy.ImportAllowed(cpc) {
			cfg.NoImport = tenancy.ImportDenied(cpc)
		}
		return cfg, nil
	}
	pc, err := providerconfig.ForNamespaced(ctx, kube, ns, ref, o...)
	return Configuration{ProviderConfig: pc}, err
}
