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

package providerconfig

import (
	"context"
	"fmt"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

const (
	errGetClusterConfig      = "cannot get ClusterProviderConfig %q named by spec.providerConfigRef"
	errGetNamespacedConfig   = "cannot get ProviderConfig %q of namespace %s named by spec.providerConfigRef"
	errNoConfigRef           = "spec.providerConfigRef is not set: name a ProviderConfig of this namespace, or a ClusterProviderConfig that the platform team lends to this namespace; no configuration is used implicitly"
	errUnknownProviderConfig = "spec.providerConfigRef.kind %q is not a kind of provider configuration: use ClusterProviderConfig or ProviderConfig"
)

// Names that the namespaced group's configurations take when read as the
// cluster-scoped kind's: unique among every kind's configurations, since they
// key the clients (ServiceCache) and the listings that reconciles share.
const (
	ClusterConfigPrefix = "ClusterProviderConfig/"
	ConfigPrefix        = "ProviderConfig/"
)

// Display names pc in messages as users know it (see Named): a configuration
// read through ForNamespaced by its kind, name and, for a namespaced
// ProviderConfig, namespace.
func Display(pc *v1alpha1.ProviderConfig) string {
	if name, ok := strings.CutPrefix(pc.Name, ClusterConfigPrefix); ok {
		return Named(nsv1alpha1.ClusterProviderConfigKind, name, "")
	}
	if key, ok := strings.CutPrefix(pc.Name, ConfigPrefix); ok {
		if ns, name, ok := strings.Cut(key, "/"); ok {
			return Named(nsv1alpha1.ProviderConfigKind, name, ns)
		}
	}
	return Named(v1alpha1.ProviderConfigKind, pc.Name, "")
}

// Named names a configuration in messages, the one way every message does: its
// kind and quoted name, and the namespace of a namespaced ProviderConfig
// (namespace is empty for the other kinds).
func Named(kind, name, namespace string) string {
	if namespace != "" {
		return fmt.Sprintf("%s %q of namespace %s", kind, name, namespace)
	}
	return fmt.Sprintf("%s %q", kind, name)
}

// NamespacedRef is the configuration a namespaced PostgresqlInstance uses: the
// one its spec.providerConfigRef names. There is no implicit one: without a
// reference it is the zero reference, which ForNamespaced refuses.
func NamespacedRef(ref *xpv2.ProviderConfigReference) xpv2.ProviderConfigReference {
	if ref == nil {
		return xpv2.ProviderConfigReference{}
	}
	return *ref
}

// NamedRef names ref, the configuration of a namespaced object of namespace ns.
func NamedRef(ns string, ref xpv2.ProviderConfigReference) string {
	if ref.Name == "" {
		return "no configuration (spec.providerConfigRef is not set)"
	}
	if ref.Kind == nsv1alpha1.ProviderConfigKind {
		return Named(ref.Kind, ref.Name, ns)
	}
	return Named(ref.Kind, ref.Name, "")
}

// ForNamespaced reads the configuration that a namespaced PostgresqlInstance of
// namespace ns names: a ClusterProviderConfig, or a ProviderConfig of ns. It
// returns it as the cluster-scoped kind's, named uniquely, with the secrets of a
// ProviderConfig named in its own namespace and no other. It does not check
// whether a ClusterProviderConfig admits ns: see CheckLent.
func ForNamespaced(ctx context.Context, kube client.Reader, ns string, ref xpv2.ProviderConfigReference) (*v1alpha1.ProviderConfig, error) {
	if ref.Name == "" {
		return nil, errors.New(errNoConfigRef)
	}
	switch ref.Kind {
	case nsv1alpha1.ClusterProviderConfigKind:
		cpc := &nsv1alpha1.ClusterProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Name: ref.Name}, cpc); err != nil {
			return nil, errors.Wrapf(err, errGetClusterConfig, ref.Name)
		}
		return FromClusterConfig(cpc), nil
	case nsv1alpha1.ProviderConfigKind:
		pc := &nsv1alpha1.ProviderConfig{}
		if err := kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, pc); err != nil {
			return nil, errors.Wrapf(err, errGetNamespacedConfig, ref.Name, ns)
		}
		return AsClusterConfig(pc), nil
	default:
		return nil, errors.Errorf(errUnknownProviderConfig, ref.Kind)
	}
}

// FromClusterConfig is a ClusterProviderConfig as the cluster-scoped kind's,
// named uniquely.
func FromClusterConfig(cpc *nsv1alpha1.ClusterProviderConfig) *v1alpha1.ProviderConfig {
	return &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterConfigPrefix + cpc.Name, UID: cpc.UID},
		Spec:       cpc.Spec.ProviderConfigSpec,
	}
}

// AsClusterConfig is a namespaced ProviderConfig as the cluster-scoped kind's,
// with its secrets named in its own namespace.
func AsClusterConfig(pc *nsv1alpha1.ProviderConfig) *v1alpha1.ProviderConfig {
	out := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigPrefix + pc.Namespace + "/" + pc.Name, UID: pc.UID},
		Spec: v1alpha1.ProviderConfigSpec{
			Project:     pc.Spec.Project,
			Credentials: v1alpha1.ProviderCredentials{Source: pc.Spec.Credentials.Source},
		},
	}
	if ref := pc.Spec.Credentials.SecretRef; ref != nil {
		out.Spec.Credentials.SecretRef = ref.ToSecretKeySelector(pc.Namespace)
	}
	if ref := pc.Spec.ProxyCredentials; ref != nil {
		out.Spec.ProxyCredentials = ref.ToSecretKeySelector(pc.Namespace)
	}
	return out
}
