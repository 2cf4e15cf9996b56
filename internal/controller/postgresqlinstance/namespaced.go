package postgresqlinstance

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/spf13/afero"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

const (
	errNoTypedProviderConfig  = "spec.providerConfigRef is not set: name a ClusterProviderConfig, or a ProviderConfig of this namespace, that holds the project and credentials"
	errGetClusterConfig       = "cannot get ClusterProviderConfig %q named by spec.providerConfigRef"
	errGetNamespacedConfig    = "cannot get ProviderConfig %q of namespace %s named by spec.providerConfigRef"
	errUnknownProviderConfig  = "spec.providerConfigRef.kind %q is not a kind of provider configuration: use ClusterProviderConfig or ProviderConfig"
	clusterConfigSourcePrefix = "ClusterProviderConfig/"
	configSourcePrefix        = "ProviderConfig/"
)

// SetupNamespaced adds the controller of the namespaced PostgresqlInstance kind
// (cloudsql.m.travelaudience.com) to mgr. It shares the core's fleet, request
// budget, listings and clients with the cluster-scoped kind's.
func (c *Core) SetupNamespaced(mgr ctrl.Manager) error {
	if err := c.fleet.watch(mgr, &nsv1alpha1.PostgresqlInstance{}); err != nil {
		return err
	}
	conn := &connector[*nsv1alpha1.PostgresqlInstance]{
		kube:     mgr.GetClient(),
		secrets:  mgr.GetAPIReader(),
		services: c.services,
		pacing:   c.pacing,
		fs:       afero.NewOsFs(),
		observer: c.observer,
		owner:    nsv1alpha1.PostgresqlInstanceGroupVersionKind,
		config:   namespacedConfig(mgr.GetClient()),
	}
	return c.setup(mgr, nsv1alpha1.PostgresqlInstanceGroupKind, nsv1alpha1.PostgresqlInstanceGroupVersionKind, &nsv1alpha1.PostgresqlInstance{},
		managed.WithTypedExternalConnector[*nsv1alpha1.PostgresqlInstance](conn), c.changed[true])
}

// namespacedConfig is the config of the namespaced kind: the ClusterProviderConfig
// it names, or the ProviderConfig of its own namespace, whose secrets are read
// from that namespace and no other.
func namespacedConfig(kube client.Client) func(context.Context, *nsv1alpha1.PostgresqlInstance) (*v1alpha1.ProviderConfig, error) {
	usage := resource.NewProviderConfigUsageTracker(kube, &nsv1alpha1.ProviderConfigUsage{})
	return func(ctx context.Context, mg *nsv1alpha1.PostgresqlInstance) (*v1alpha1.ProviderConfig, error) {
		ref := mg.GetProviderConfigReference()
		if ref == nil || ref.Name == "" {
			return nil, errors.New(errNoTypedProviderConfig)
		}
		if err := usage.Track(ctx, mg); err != nil {
			return nil, errors.Wrap(err, errTrackUsage)
		}
		switch ref.Kind {
		case nsv1alpha1.ClusterProviderConfigKind:
			cpc := &nsv1alpha1.ClusterProviderConfig{}
			if err := kube.Get(ctx, types.NamespacedName{Name: ref.Name}, cpc); err != nil {
				return nil, errors.Wrapf(err, errGetClusterConfig, ref.Name)
			}
			return &v1alpha1.ProviderConfig{
				ObjectMeta: metav1.ObjectMeta{Name: clusterConfigSourcePrefix + cpc.Name, UID: cpc.UID},
				Spec:       cpc.Spec,
			}, nil
		case nsv1alpha1.ProviderConfigKind:
			pc := &nsv1alpha1.ProviderConfig{}
			if err := kube.Get(ctx, types.NamespacedName{Namespace: mg.GetNamespace(), Name: ref.Name}, pc); err != nil {
				return nil, errors.Wrapf(err, errGetNamespacedConfig, ref.Name, mg.GetNamespace())
			}
			return asClusterConfig(pc), nil
		default:
			return nil, errors.Errorf(errUnknownProviderConfig, ref.Kind)
		}
	}
}

// asClusterConfig is a namespaced ProviderConfig as the cluster-scoped kind's,
// with its secrets named in its own namespace.
func asClusterConfig(pc *nsv1alpha1.ProviderConfig) *v1alpha1.ProviderConfig {
	out := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: configSourcePrefix + pc.Namespace + "/" + pc.Name, UID: pc.UID},
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
