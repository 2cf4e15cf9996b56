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
	"fmt"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
)

// Resources of the two PostgresqlInstance kinds, as kubectl takes them: with
// both groups installed, `kubectl get postgresqlinstance` alone picks one.
const (
	clusterResource    = "postgresqlinstances." + v1alpha1.Group
	namespacedResource = "postgresqlinstances." + nsv1alpha1.Group
)

// instance is what the injector reads of a PostgresqlInstance of either kind.
type instance interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
	SetConditions(...xpv2.Condition)
	Observation() *v1alpha1.PostgresqlInstanceObservation
	ConnectionSecret() *xpv2.SecretReference
	Parameters() *v1alpha1.PostgresqlInstanceParameters
	GetManagementPolicies() xpv2.ManagementPolicies
}

// IAMAuthenticationFlag, in spec.forProvider.flags, turns IAM database
// authentication on for a Cloud SQL instance; without it Cloud SQL logs no
// IAM user in.
const IAMAuthenticationFlag = iamFlagName + "=" + iamFlagOn

const (
	iamFlagName = "cloudsql.iam_authentication"
	iamFlagOn   = "on"
)

// iamLoginsRefused says whether Cloud SQL refuses every IAM login to t:
// the provider manages its flags (its management policies let it update
// the instance) and spec.forProvider.flags does not turn IAM database
// authentication on. An instance it only observes is not judged: its spec
// need not list the flags it has.
func (t target) iamLoginsRefused() bool {
	pols := t.pi.GetManagementPolicies()
	if len(pols) > 0 && !slices.Contains(pols, xpv2.ManagementActionAll) && !slices.Contains(pols, xpv2.ManagementActionUpdate) {
		return false
	}
	for _, f := range t.pi.Parameters().Flags {
		name, value, _ := strings.Cut(f, "=")
		if strings.TrimSpace(name) == iamFlagName {
			return strings.TrimSpace(value) != iamFlagOn
		}
	}
	return true
}

// kindNames are what messages, kubectl and the copies of secrets call a kind
// that comes in both scopes.
type kindNames struct {
	kind                                string
	clusterResource, namespacedResource string
	clusterLabel, namespacedLabel       string
}

// instanceNames name the PostgresqlInstance kinds.
var instanceNames = kindNames{
	kind: v1alpha1.PostgresqlInstanceKind, clusterResource: clusterResource, namespacedResource: namespacedResource,
	clusterLabel: v1alpha1.LabelInstance, namespacedLabel: nsv1alpha1.LabelInstance,
}

// scoped is an object of a kind of both scopes, as messages, kubectl and the
// copies of its secrets name it.
type scoped struct {
	obj           client.Object
	clusterScoped bool
	names         kindNames
}

// name is the object's metadata.name.
func (s scoped) name() string { return s.obj.GetName() }

// String names the object in messages: the cluster-scoped kind as it always
// was, the namespaced kind with its group and namespace.
func (s scoped) String() string {
	if s.clusterScoped {
		return fmt.Sprintf("%s %q", s.names.kind, s.name())
	}
	return fmt.Sprintf("%s %q of namespace %s (%s)", s.names.kind, s.name(), s.obj.GetNamespace(), nsv1alpha1.Group)
}

// resource is the object as `kubectl get` takes it in the pod's namespace,
// and, for an instance, the value of AnnotationInjectedInstance on the pods it
// was injected into.
func (s scoped) resource() string {
	if s.clusterScoped {
		return s.names.clusterResource + "/" + s.name()
	}
	return s.names.namespacedResource + "/" + s.name()
}

// kubectlGet is the command that shows the object.
func (s scoped) kubectlGet() string {
	if s.clusterScoped {
		return "kubectl get " + s.resource()
	}
	return "kubectl -n " + s.obj.GetNamespace() + " get " + s.resource()
}

// owner is the owner reference of the secrets copied for the object, so that
// the garbage collector removes them with it.
func (s scoped) owner() metav1.OwnerReference {
	gv := nsv1alpha1.SchemeGroupVersion
	if s.clusterScoped {
		gv = v1alpha1.SchemeGroupVersion
	}
	return metav1.OwnerReference{APIVersion: gv.String(), Kind: s.names.kind, Name: s.name(), UID: s.obj.GetUID()}
}

// label is the label whose value, the object's name, marks its copies. The
// scopes have different labels, so that the copies of a namespaced object and
// of a cluster-scoped one of the same name never mix.
func (s scoped) label() string {
	if s.clusterScoped {
		return s.names.clusterLabel
	}
	return s.names.namespacedLabel
}

// A target is the PostgresqlInstance that a pod's annotation resolved to.
type target struct {
	scoped
	pi instance
	// cluster is pi when it is cluster-scoped: its spec.injection decides which
	// namespaces may use it. A namespaced instance serves its own namespace only.
	cluster *v1alpha1.PostgresqlInstance
}

func clusterTarget(pi *v1alpha1.PostgresqlInstance) target {
	return target{scoped: scoped{obj: pi, clusterScoped: true, names: instanceNames}, pi: pi, cluster: pi}
}

func namespacedTarget(pi *nsv1alpha1.PostgresqlInstance) target {
	return target{scoped: scoped{obj: pi, names: instanceNames}, pi: pi}
}

// copyName is the name of the copy of a kind for the instance.
func (t target) copyName(kind string) string {
	if t.cluster != nil {
		return CopyName(kind, t.name())
	}
	return NamespacedCopyName(kind, t.name())
}

// proxyConfig is what the proxy takes from the configuration of an instance.
type proxyConfig struct {
	// name names the configuration in messages.
	name string
	// key is where the proxy's service-account key is; nil when the
	// configuration names none or does not exist (the controller reports a
	// missing configuration on the instance; the proxy then needs no key).
	key *xpv2.SecretKeySelector
	// endpoint is the configuration's Cloud SQL Admin API endpoint, empty for
	// Google's.
	endpoint string
	// limits narrow what pods may ask of their proxy; nil narrows nothing.
	limits *v1alpha1.ProxyLimits
}

// proxyConfig reads what the proxy takes from the instance's configuration, of
// either kind; o are the rules for namespaced ProviderConfigs.
func (t target) proxyConfig(ctx context.Context, r client.Reader, o ...providerconfig.ResolveOption) (proxyConfig, error) {
	if t.cluster != nil {
		pc := proxyConfig{name: providerconfig.Named(v1alpha1.ProviderConfigKind, pcName(t.cluster), "")}
		cfg, err := providerConfig(ctx, r, t.cluster)
		if err != nil || cfg == nil {
			return pc, err
		}
		pc.key, pc.endpoint, pc.limits = cfg.Spec.ProxyCredentials, cfg.Spec.Endpoint, cfg.Spec.ProxyLimits
		return pc, nil
	}
	ref := providerconfig.NamespacedRef(t.pi.(*nsv1alpha1.PostgresqlInstance).GetProviderConfigReference())
	pc := proxyConfig{name: providerconfig.NamedRef(t.pi.GetNamespace(), ref)}
	cfg, err := providerconfig.ForNamespaced(ctx, r, t.pi.GetNamespace(), ref, o...)
	if kerrors.IsNotFound(err) {
		return pc, nil
	}
	if err != nil {
		return pc, err
	}
	pc.key, pc.endpoint, pc.limits = cfg.Spec.ProxyCredentials, cfg.Spec.Endpoint, cfg.Spec.ProxyLimits
	return pc, nil
}

// A lookup is what the annotation's value asks for.
type lookup struct {
	// namespace, when set, is the namespace that the value named (namespace/name):
	// only a namespaced object of it will do.
	namespace string
	name      string
	// cluster is set when the value was /name: only the cluster-scoped
	// object will do, however the pod's namespace names its own.
	cluster bool
}

// parseAnnotation reads the annotation's value: name, namespace/name, or
// /name. It reports false for a value of none of these forms.
func parseAnnotation(v string) (lookup, bool) {
	if name, ok := strings.CutPrefix(v, "/"); ok {
		// A subdomain holds no "/": "/" and "//name" are refused here.
		return lookup{name: name, cluster: true}, len(validation.IsDNS1123Subdomain(name)) == 0
	}
	l := lookup{name: v}
	if ns, name, ok := strings.Cut(v, "/"); ok {
		l = lookup{namespace: ns, name: name}
		if len(validation.IsDNS1123Label(ns)) > 0 {
			return l, false
		}
	}
	return l, len(validation.IsDNS1123Subdomain(l.name)) == 0
}

// resolve looks the instance named by l up for a pod of namespace ns, as
// resolveScoped does.
func resolve(ctx context.Context, r, live client.Reader, ns string, l lookup) (resolution[target], error) {
	return resolveScoped(ctx, r, live, ns, l, &nsv1alpha1.PostgresqlInstance{}, namespacedTarget, &v1alpha1.PostgresqlInstance{}, clusterTarget)
}
