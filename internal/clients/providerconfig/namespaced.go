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
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
)

const (
	errGetClusterConfig      = "cannot get ClusterProviderConfig %q named by spec.providerConfigRef"
	errGetNamespacedConfig   = "cannot get ProviderConfig %q of namespace %s named by spec.providerConfigRef"
	errNoConfigRef           = "spec.providerConfigRef is not set: name a ProviderConfig of this namespace, or a ClusterProviderConfig that the platform team lends to this namespace; no configuration is used implicitly"
	errUnknownProviderConfig = "spec.providerConfigRef.kind %q is not a kind of provider configuration: use ClusterProviderConfig or ProviderConfig"
	errEndpointNotAllowed    = "%s: spec.endpoint %q is not allowed for namespaced ProviderConfigs by [tenancy] namespaced_endpoints of the provider's configuration file (%s): remove spec.endpoint to use Google's Cloud SQL Admin API, or ask the platform team to allow the endpoint there or to offer it through a ClusterProviderConfig"
)

// AnnotationTenant marks a configuration that asClusterConfig made of a
// namespaced ProviderConfig: its credentials and endpoint are a namespace's
// team's, not the platform's (see Tenant). It exists only in memory: the
// provider never writes a configuration it resolved. A platform that sets it
// on a cluster-scoped ProviderConfig only restricts that configuration.
const AnnotationTenant = "cloudsql.travelaudience.com/tenant-owned"

// Tenant reports whether pc is a namespace's team's configuration (a
// namespaced ProviderConfig) rather than the platform's (a cluster-scoped
// ProviderConfig or a ClusterProviderConfig): its key may only be a
// service-account key, used with Google's token endpoint.
func Tenant(pc *v1alpha1.ProviderConfig) bool {
	return pc.GetAnnotations()[AnnotationTenant] == "true"
}

// A ResolveOption configures how ForNamespaced resolves a configuration.
type ResolveOption func(*resolve)

type resolve struct {
	// endpoints a namespaced ProviderConfig may name, without trailing slashes.
	endpoints []string
}

// WithNamespacedEndpoints allows a namespaced ProviderConfig's spec.endpoint
// to name one of the base URLs in urls; "*" allows any. By default it may
// name none: a namespaced ProviderConfig uses Google's endpoint.
func WithNamespacedEndpoints(urls []string) ResolveOption {
	return func(r *resolve) {
		r.endpoints = make([]string, 0, len(urls))
		for _, u := range urls {
			r.endpoints = append(r.endpoints, strings.TrimRight(u, "/"))
		}
	}
}

// endpointAllowed reports whether a namespaced ProviderConfig may name
// endpoint. The endpoint is where the provider sends the tenant's key and
// reads answers that become messages, and the base URL the injector gives the
// Cloud SQL Auth Proxies of that namespace: the platform decides which.
func (r resolve) endpointAllowed(endpoint string) bool {
	if endpoint == "" {
		return true
	}
	e := strings.TrimRight(endpoint, "/")
	return slices.ContainsFunc(r.endpoints, func(a string) bool { return a == "*" || a == e })
}

func (r resolve) allowed() string {
	if len(r.endpoints) == 0 {
		return "none"
	}
	return strings.Join(r.endpoints, ", ")
}

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
// ProviderConfig named in its own namespace and no other. A ProviderConfig
// whose spec.endpoint the options do not allow is refused (see IsRefused). It
// does not check whether a ClusterProviderConfig admits ns: see tenancy.CheckLent.
func ForNamespaced(ctx context.Context, kube client.Reader, ns string, ref xpv2.ProviderConfigReference, o ...ResolveOption) (*v1alpha1.ProviderConfig, error) {
	if ref.Name == "" {
		return nil, errors.New(errNoConfigRef)
	}
	var r resolve
	for _, fn := range o {
		fn(&r)
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
		if !r.endpointAllowed(pc.Spec.Endpoint) {
			return nil, auth.Refusal(errors.Errorf(errEndpointNotAllowed, Named(nsv1alpha1.ProviderConfigKind, pc.Name, pc.Namespace), pc.Spec.Endpoint, r.allowed()))
		}
		return asClusterConfig(pc), nil
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

// asClusterConfig is a namespaced ProviderConfig as the cluster-scoped kind's,
// with its secrets named in its own namespace, marked as a tenant's (see
// Tenant). It does not check spec.endpoint: ForNamespaced does.
func asClusterConfig(pc *nsv1alpha1.ProviderConfig) *v1alpha1.ProviderConfig {
	out := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name: ConfigPrefix + pc.Namespace + "/" + pc.Name, UID: pc.UID,
			Annotations: map[string]string{AnnotationTenant: "true"},
		},
		Spec: v1alpha1.ProviderConfigSpec{
			Project:     pc.Spec.Project,
			Credentials: v1alpha1.ProviderCredentials{Source: pc.Spec.Credentials.Source},
			ProxyLimits: pc.Spec.ProxyLimits,
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
