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

// Package providerconfig turns a ProviderConfig into what talking to Cloud SQL needs:
// its resolved credentials and a Cloud SQL Admin API client, cached per
// ProviderConfig. The controller and the PostgresqlInstance admission webhook share it
// so that both read credentials the same way and explain the same mistakes.
package providerconfig

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/spf13/afero"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
)

const (
	errGetSecret       = "%s: cannot read secret %s/%s named by spec.credentials.secretRef"
	errBadKey          = "%s: %s"
	errReadCredentials = "%s: cannot read the credentials of source %s"
	errNewService      = "%s: cannot create a Cloud SQL Admin API client"
	errTenantSource    = "%s: credentials source %s cannot be used by a namespaced ProviderConfig: use Secret with a service-account key, or a ClusterProviderConfig that the platform team owns"
)

// IsRefused reports whether err says that a configuration may not use its
// credentials or endpoint: a key of a kind it may not hold, an endpoint the
// configuration file does not allow it. Retrying does not help; admission
// denies such instances.
func IsRefused(err error) bool { return auth.IsRefused(err) }

// Credentials resolves the credentials of pc, naming the secret, key, variable or
// file whenever they cannot be used. secrets should be an uncached reader, so that
// reading one key does not cache every secret of the cluster.
func Credentials(ctx context.Context, secrets client.Reader, fs afero.Fs, pc *v1alpha1.ProviderConfig) (auth.Credentials, error) {
	cd := pc.Spec.Credentials
	creds := auth.Credentials{Source: cd.Source, Tenant: Tenant(pc)}
	var where string
	switch {
	case creds.Tenant && cd.Source != xpv2.CredentialsSourceSecret && cd.Source != xpv2.CredentialsSourceNone:
		// The CRD allows neither; a configuration read some other way must
		// not lend a tenant the provider's own identity, environment or files.
		return creds, auth.Refusal(errors.Errorf(errTenantSource, Display(pc), cd.Source))
	case cd.Source == xpv2.CredentialsSourceNone, cd.Source == xpv2.CredentialsSourceInjectedIdentity:
		return creds, nil
	case cd.Source == xpv2.CredentialsSourceSecret:
		ref := cd.SecretRef
		s := &corev1.Secret{}
		if err := secrets.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
			return creds, errors.Wrapf(err, errGetSecret, Display(pc), ref.Namespace, ref.Name)
		}
		creds.JSON = s.Data[ref.Key]
		where = fmt.Sprintf("key %q of secret %s/%s", ref.Key, ref.Namespace, ref.Name)
	case cd.Source == xpv2.CredentialsSourceEnvironment:
		b, err := resource.ExtractEnv(ctx, os.Getenv, cd.CommonCredentialSelectors)
		if err != nil {
			return creds, errors.Wrapf(err, errReadCredentials, Display(pc), cd.Source)
		}
		creds.JSON = b
		where = fmt.Sprintf("environment variable %s", cd.Env.Name)
	case cd.Source == xpv2.CredentialsSourceFilesystem:
		b, err := resource.ExtractFs(ctx, fs, cd.CommonCredentialSelectors)
		if err != nil {
			return creds, errors.Wrapf(err, errReadCredentials, Display(pc), cd.Source)
		}
		creds.JSON = b
		where = fmt.Sprintf("file %s", cd.Fs.Path)
	}
	creds.Where = where
	// Whether a platform's external_account configuration may use its
	// credential_source is the client's to say (auth.WithExternalAccountSources);
	// everything else about the key is said here, naming where it is.
	if err := auth.CheckKey(creds.JSON, creds.Tenant, auth.WithExternalAccountSources(true)); err != nil {
		return creds, auth.Restate(err, errors.Errorf(errBadKey, Display(pc), where+" "+err.Error()))
	}
	return creds, nil
}

// A ServiceCache keeps one Cloud SQL Admin API client per ProviderConfig and
// reuses it until the ProviderConfig or its credentials change. Clients unused
// for IdleService are dropped, so that configurations that are gone (a team's
// throwaway ProviderConfigs, say) do not stay in memory. It is safe for
// concurrent use.
type ServiceCache struct {
	transport http.RoundTripper
	tenant    func(key string) http.RoundTripper
	auth      []auth.Option
	now       func() time.Time

	mu       sync.Mutex
	services map[string]cachedService
}

// IdleService is how long a ServiceCache keeps a client that no reconcile or
// admission asked for: far longer than any poll interval in use, so that only
// configurations nothing uses any more are dropped (a dropped one is rebuilt
// when needed again, at the cost of one token).
const IdleService = time.Hour

type cachedService struct {
	fingerprint [32]byte
	svc         *sqladmin.Service
	used        time.Time
}

// A ServiceCacheOption configures a ServiceCache.
type ServiceCacheOption func(*ServiceCache)

// WithAuth builds the clients with o (for example
// auth.WithExternalAccountSources).
func WithAuth(o ...auth.Option) ServiceCacheOption {
	return func(c *ServiceCache) { c.auth = append(c.auth, o...) }
}

// WithTenantTransport sends the requests of each tenant configuration (Tenant:
// a namespaced ProviderConfig's, which spends its team's own quota) through
// fn(key), key being the configuration's name (ProviderConfig/<ns>/<name>),
// rather than through the platform's transport: typically
// budget.Windows.Transport, a request budget of its own, so that a team
// cannot spend the platform's budget or another team's.
func WithTenantTransport(fn func(key string) http.RoundTripper) ServiceCacheOption {
	return func(c *ServiceCache) { c.tenant = fn }
}

// NewServiceCache returns a cache whose clients send their requests through
// transport (typically the platform's request budget); nil means
// http.DefaultTransport.
func NewServiceCache(transport http.RoundTripper, o ...ServiceCacheOption) *ServiceCache {
	c := &ServiceCache{transport: transport, services: map[string]cachedService{}, now: time.Now}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// Fingerprint identifies what a client built for pc with creds depends on: the
// configuration's identity, source, endpoint and key. Caches of clients (this
// one, the Cloud SQL connector's dialers) rebuild a client when it changes.
func Fingerprint(pc *v1alpha1.ProviderConfig, creds auth.Credentials) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%t\x00", pc.UID, creds.Source, pc.Spec.Endpoint, creds.Tenant)
	h.Write(creds.JSON)
	var fp [32]byte
	copy(fp[:], h.Sum(nil))
	return fp
}

// Get returns the cached client for pc, or builds one when there is none or the
// configuration changed.
func (c *ServiceCache) Get(pc *v1alpha1.ProviderConfig, creds auth.Credentials) (*sqladmin.Service, error) {
	fp := Fingerprint(pc, creds)

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if cs, ok := c.services[pc.Name]; ok && cs.fingerprint == fp {
		cs.used = now
		c.services[pc.Name] = cs
		return cs.svc, nil
	}
	for name, cs := range c.services {
		if now.Sub(cs.used) > IdleService {
			delete(c.services, name)
		}
	}
	transport := c.transport
	if c.tenant != nil && Tenant(pc) {
		transport = c.tenant(pc.Name)
	}
	svc, err := auth.NewService(creds, pc.Spec.Endpoint, transport, c.auth...)
	if err != nil {
		return nil, errors.Wrapf(err, errNewService, Display(pc))
	}
	c.services[pc.Name] = cachedService{fingerprint: fp, svc: svc, used: now}
	return svc, nil
}
