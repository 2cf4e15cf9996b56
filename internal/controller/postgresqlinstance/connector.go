package postgresqlinstance

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/spf13/afero"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
)

const (
	errTrackUsage        = "cannot track ProviderConfig usage"
	errNoProviderConfig  = "spec.providerConfigRef is not set: name the ProviderConfig that holds the project and credentials"
	errGetProviderConfig = "cannot get ProviderConfig %q named by spec.providerConfigRef"
)

// A connector turns a ProviderConfig into a Cloud SQL Admin API client. It keeps one
// client per ProviderConfig and reuses it across reconciles until the
// ProviderConfig or its credentials change.
type connector struct {
	kube     client.Client
	secrets  client.Reader // uncached, so that the provider does not cache every secret
	usage    resource.LegacyTracker
	services *providerconfig.ServiceCache
	pacing   *pacing
	fs       afero.Fs
	// observer is shared by every reconcile (observe = list); nil reads each
	// instance with instances.get.
	observer *observer.Observer
}

// Connect implements managed.TypedExternalConnector.
func (c *connector) Connect(ctx context.Context, mg *v1alpha1.PostgresqlInstance) (managed.TypedExternalClient[*v1alpha1.PostgresqlInstance], error) {
	if err := c.usage.Track(ctx, mg); err != nil {
		return nil, errors.Wrap(err, errTrackUsage)
	}
	ref := mg.GetProviderConfigReference()
	if ref == nil || ref.Name == "" {
		return nil, errors.New(errNoProviderConfig)
	}
	pc := &v1alpha1.ProviderConfig{}
	if err := c.kube.Get(ctx, types.NamespacedName{Name: ref.Name}, pc); err != nil {
		return nil, errors.Wrapf(err, errGetProviderConfig, ref.Name)
	}
	creds, err := providerconfig.Credentials(ctx, c.secrets, c.fs, pc)
	if err != nil {
		return nil, err
	}
	svc, err := c.services.Get(pc, creds)
	if err != nil {
		return nil, err
	}
	return &external{
		svc:      svc,
		project:  pc.Spec.ProjectID,
		secrets:  newSecretStore(c.kube, c.secrets),
		pacing:   c.pacing,
		observer: c.observer,
		source:   pc.Name,
	}, nil
}
