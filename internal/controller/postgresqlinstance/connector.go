package postgresqlinstance

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/spf13/afero"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
)

const (
	errTrackUsage        = "cannot track ProviderConfig usage"
	errNoProviderConfig  = "spec.providerConfigRef is not set: name the ProviderConfig that holds the project and credentials"
	errGetProviderConfig = "cannot get ProviderConfig %q named by spec.providerConfigRef"
	errGetSecret         = "ProviderConfig %s: cannot read secret %s/%s named by spec.credentials.secretRef"
	errBadKey            = "ProviderConfig %s: %s"
	errReadCredentials   = "ProviderConfig %s: cannot read the credentials of source %s"
	errNewService        = "ProviderConfig %s: cannot create a Cloud SQL Admin API client"
)

// A connector turns a ProviderConfig into a Cloud SQL Admin API client. It keeps one
// client per ProviderConfig and reuses it across reconciles until the
// ProviderConfig or its credentials change.
type connector struct {
	kube      client.Client
	secrets   client.Reader // uncached, so that the provider does not cache every secret
	usage     resource.LegacyTracker
	transport http.RoundTripper
	pacing    *pacing
	fs        afero.Fs

	mu       sync.Mutex
	services map[string]cachedService
}

type cachedService struct {
	fingerprint [32]byte
	svc         *sqladmin.Service
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
	creds, err := c.credentials(ctx, pc)
	if err != nil {
		return nil, err
	}
	svc, err := c.service(pc, creds)
	if err != nil {
		return nil, err
	}
	return &external{
		svc:     svc,
		project: pc.Spec.ProjectID,
		secrets: newSecretStore(c.kube, c.secrets),
		pacing:  c.pacing,
	}, nil
}

// credentials resolves the ProviderConfig's credentials, naming the secret, key,
// variable or file whenever they cannot be used.
func (c *connector) credentials(ctx context.Context, pc *v1alpha1.ProviderConfig) (auth.Credentials, error) {
	cd := pc.Spec.Credentials
	creds := auth.Credentials{Source: cd.Source}
	var where string
	switch cd.Source {
	case xpv2.CredentialsSourceNone, xpv2.CredentialsSourceInjectedIdentity:
		return creds, nil
	case xpv2.CredentialsSourceSecret:
		ref := cd.SecretRef
		s := &corev1.Secret{}
		if err := c.secrets.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
			return creds, errors.Wrapf(err, errGetSecret, pc.Name, ref.Namespace, ref.Name)
		}
		creds.JSON = s.Data[ref.Key]
		where = fmt.Sprintf("key %q of secret %s/%s", ref.Key, ref.Namespace, ref.Name)
	case xpv2.CredentialsSourceEnvironment:
		b, err := resource.ExtractEnv(ctx, os.Getenv, cd.CommonCredentialSelectors)
		if err != nil {
			return creds, errors.Wrapf(err, errReadCredentials, pc.Name, cd.Source)
		}
		creds.JSON = b
		where = fmt.Sprintf("environment variable %s", cd.Env.Name)
	case xpv2.CredentialsSourceFilesystem:
		b, err := resource.ExtractFs(ctx, c.fs, cd.CommonCredentialSelectors)
		if err != nil {
			return creds, errors.Wrapf(err, errReadCredentials, pc.Name, cd.Source)
		}
		creds.JSON = b
		where = fmt.Sprintf("file %s", cd.Fs.Path)
	}
	if err := auth.CheckKey(creds.JSON); err != nil {
		return creds, errors.Errorf(errBadKey, pc.Name, where+" "+err.Error())
	}
	return creds, nil
}

// service returns the cached client for the ProviderConfig, or builds one when
// there is none or the configuration changed.
func (c *connector) service(pc *v1alpha1.ProviderConfig, creds auth.Credentials) (*sqladmin.Service, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", pc.UID, creds.Source, pc.Spec.Endpoint)
	h.Write(creds.JSON)
	var fp [32]byte
	copy(fp[:], h.Sum(nil))

	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.services[pc.Name]; ok && cs.fingerprint == fp {
		return cs.svc, nil
	}
	svc, err := auth.NewService(creds, pc.Spec.Endpoint, c.transport)
	if err != nil {
		return nil, errors.Wrapf(err, errNewService, pc.Name)
	}
	if c.services == nil {
		c.services = map[string]cachedService{}
	}
	c.services[pc.Name] = cachedService{fingerprint: fp, svc: svc}
	return svc, nil
}
