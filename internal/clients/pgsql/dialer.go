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

package pgsql

import (
	"context"
	"net/http"
	"sync"
	"time"

	"cloud.google.com/go/cloudsqlconn"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"golang.org/x/oauth2"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
)

const (
	errNewHTTPClient = "%s: cannot make a Cloud SQL Admin API client for the Cloud SQL connector"
	errNewDialer     = "%s: cannot make a Cloud SQL connector"
	errNoToken       = "the Cloud SQL connector has no credentials of its own: its Admin API requests go through the provider's client, which authenticates them"
)

// IdleDialer is how long a DialerCache keeps a dialer that nothing asked for,
// as providerconfig.IdleService does Admin API clients.
const IdleDialer = providerconfig.IdleService

// A DialerCache keeps one Cloud SQL connector (*cloudsqlconn.Dialer) per
// ProviderConfig, keyed and rebuilt as providerconfig.ServiceCache keeps Admin
// API clients: a dialer is replaced when the configuration or its credentials
// change, dropped when unused for IdleDialer, and closed when replaced or
// dropped. Its Admin API requests (connectSettings, generateEphemeralCert) go
// through the same transport, budget and credentials as the provider's other
// Admin API requests. It is safe for concurrent use.
type DialerCache struct {
	transport http.RoundTripper
	tenant    func(key string) http.RoundTripper
	auth      []auth.Option
	extra     []cloudsqlconn.Option
	now       func() time.Time

	mu      sync.Mutex
	dialers map[string]cachedDialer
}

type cachedDialer struct {
	fingerprint [32]byte
	dialer      *cloudsqlconn.Dialer
	used        time.Time
}

// A DialerCacheOption configures a DialerCache.
type DialerCacheOption func(*DialerCache)

// WithAuth builds the dialers' Admin API clients with o (as
// providerconfig.WithAuth).
func WithAuth(o ...auth.Option) DialerCacheOption {
	return func(c *DialerCache) { c.auth = append(c.auth, o...) }
}

// WithTenantTransport sends the Admin API requests of each tenant
// configuration through fn(key), key being the configuration's name, as
// providerconfig.WithTenantTransport does.
func WithTenantTransport(fn func(key string) http.RoundTripper) DialerCacheOption {
	return func(c *DialerCache) { c.tenant = fn }
}

// WithDialerOptions adds options to every dialer the cache builds.
func WithDialerOptions(o ...cloudsqlconn.Option) DialerCacheOption {
	return func(c *DialerCache) { c.extra = append(c.extra, o...) }
}

// withClock replaces the cache's clock, for tests.
func withClock(now func() time.Time) DialerCacheOption {
	return func(c *DialerCache) { c.now = now }
}

// NewDialerCache returns a cache whose dialers send their Admin API requests
// through transport (typically the platform's request budget); nil means
// http.DefaultTransport.
func NewDialerCache(transport http.RoundTripper, o ...DialerCacheOption) *DialerCache {
	c := &DialerCache{transport: transport, dialers: map[string]cachedDialer{}, now: time.Now}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// Get returns the cached dialer for pc, or builds one when there is none or
// the configuration changed.
func (c *DialerCache) Get(pc *v1alpha1.ProviderConfig, creds auth.Credentials) (*cloudsqlconn.Dialer, error) {
	fp := providerconfig.Fingerprint(pc, creds)

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	cd, ok := c.dialers[pc.Name]
	if ok && cd.fingerprint == fp {
		cd.used = now
		c.dialers[pc.Name] = cd
		return cd.dialer, nil
	}
	if ok {
		// Sessions already open keep working; new ones take the new dialer.
		_ = cd.dialer.Close()
		delete(c.dialers, pc.Name)
	}
	for name, cd := range c.dialers {
		if now.Sub(cd.used) > IdleDialer {
			_ = cd.dialer.Close()
			delete(c.dialers, name)
		}
	}
	transport := c.transport
	if c.tenant != nil && providerconfig.Tenant(pc) {
		transport = c.tenant(pc.Name)
	}
	d, err := c.newDialer(pc, creds, transport)
	if err != nil {
		return nil, err
	}
	c.dialers[pc.Name] = cachedDialer{fingerprint: fp, dialer: d, used: now}
	return d, nil
}

// newDialer builds a connector whose Admin API client is the provider's: the
// same authenticated HTTP client over transport, at the configuration's
// endpoint.
func (c *DialerCache) newDialer(pc *v1alpha1.ProviderConfig, creds auth.Credentials, transport http.RoundTripper) (*cloudsqlconn.Dialer, error) {
	hc, err := auth.NewHTTPClient(creds, transport, c.auth...)
	if err != nil {
		return nil, errors.Wrapf(err, errNewHTTPClient, providerconfig.Display(pc))
	}
	opts := []cloudsqlconn.Option{
		cloudsqlconn.WithHTTPClient(hc),
		// Without credentials of its own the connector would look for the
		// pod's default credentials; the HTTP client above authenticates
		// every request, and this token source is never asked.
		cloudsqlconn.WithTokenSource(noToken{}),
		// Refresh certificates when a connection needs one rather than in
		// the background: the provider connects rarely, and a background
		// refresh would spend two Admin API requests per instance and hour
		// for every instance it ever connected to.
		cloudsqlconn.WithLazyRefresh(),
	}
	if pc.Spec.Endpoint != "" {
		opts = append(opts, cloudsqlconn.WithAdminAPIEndpoint(auth.BaseURL(pc.Spec.Endpoint)))
	}
	opts = append(opts, c.extra...)
	// The context only builds the Admin API client; the dialer outlives any
	// one reconcile.
	d, err := cloudsqlconn.NewDialer(context.Background(), opts...)
	if err != nil {
		return nil, errors.Wrapf(err, errNewDialer, providerconfig.Display(pc))
	}
	return d, nil
}

// Len is the number of dialers kept.
func (c *DialerCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.dialers)
}

// Close closes every dialer and empties the cache.
func (c *DialerCache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for name, cd := range c.dialers {
		if err := cd.dialer.Close(); err != nil {
			errs = append(errs, err)
		}
		delete(c.dialers, name)
	}
	return errors.Join(errs...)
}

// noToken is the connector's token source, which it never asks: see newDialer.
type noToken struct{}

func (noToken) Token() (*oauth2.Token, error) { return nil, errors.New(errNoToken) }
