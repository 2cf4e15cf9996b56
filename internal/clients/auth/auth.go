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

// Package auth builds Cloud SQL Admin API clients from the credentials a
// ProviderConfig names, and explains what is wrong with credentials that cannot work.
package auth

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/sizelimit"
)

// Scope is the OAuth scope of the Cloud SQL Admin API.
const Scope = sqladmin.SqlserviceAdminScope

// TokenURL is Google's OAuth 2.0 token endpoint, the only one to which the
// provider sends a service-account key's assertions unless WithKeyTokenURI
// lets the platform's keys use their own token_uri (a tenant's never may).
const TokenURL = google.JWTTokenURL

const (
	errEmptyKey       = "is empty: it must hold the JSON key of a service account with roles/cloudsql.admin"
	errNotJSON        = "is not JSON: it must hold a service-account key file as `gcloud iam service-accounts keys create` writes it"
	errKeyType        = "has type %q: only service_account keys and external_account (workload identity federation) configurations are supported"
	errTenantKeyType  = "has type %q, but a namespaced ProviderConfig may only hold a service-account key (type service_account, as `gcloud iam service-accounts keys create` writes it): put such a key in the secret; workload identity federation (external_account) is only available through a ClusterProviderConfig that the platform team owns"
	errTenantSource   = "credentials source %s cannot be used by a namespaced ProviderConfig: use Secret with a service-account key, or a ClusterProviderConfig that the platform team owns"
	errExternalSource = "is an external_account configuration whose credential_source %s: the provider reads no file, URL, program or cloud metadata named by a key unless its configuration file sets [credentials] allow_external_account_sources = true; use source InjectedIdentity (Workload Identity) or a service-account key instead"
	errKeyField       = "has no %s: it is not a complete service-account key file"
	errPrivateKey     = "has a private_key that is not a PEM-encoded PKCS#8 or PKCS#1 RSA key"
	errDefaultCreds   = "cannot find the provider pod's own Google credentials (InjectedIdentity): is Workload Identity set up for its service account?"
	errUnknownSource  = "credentials source %q is not supported"
	errCredentialsFor = "cannot use the credentials"
	errRedirects      = "the endpoint redirected 10 times: the provider stopped following it"
	errRedirect       = "the endpoint at %s redirected to another host, %s: a namespaced ProviderConfig's endpoint is called only at its own host; set its spec.endpoint to the URL that answers"
)

// Credentials are what a ProviderConfig resolved to: the source, and the key JSON
// for the sources that carry one (Secret, Environment, Filesystem).
type Credentials struct {
	Source xpv2.CredentialsSource
	JSON   []byte
	// Tenant is true for credentials that a namespace's team wrote (those of
	// a namespaced ProviderConfig) rather than the platform team. They are
	// used only as a service-account key, whatever type the JSON claims, and
	// only with Google's token endpoint: an external_account configuration
	// would make the provider read a file or URL of its choosing (its own
	// Kubernetes token, the metadata server) and send it to a token_url of
	// the tenant's.
	Tenant bool
	// Where names where the key came from in messages, for example
	// `key "key.json" of secret ns/name`.
	Where string
}

// An Option configures how keys are checked and clients built.
type Option func(*options)

type options struct {
	externalSources bool
	keyTokenURI     bool
	tokenTransport  http.RoundTripper
}

// WithExternalAccountSources lets platform-owned external_account
// configurations (workload identity federation) read their subject token from
// their credential_source: a file, a URL, a program or a cloud's metadata.
// Tenants' keys never may.
func WithExternalAccountSources(allowed bool) Option {
	return func(o *options) { o.externalSources = allowed }
}

// WithKeyTokenURI lets the service-account keys of platform-owned
// configurations get their tokens from the token_uri they hold (an emulator, a
// private endpoint). Without it every service-account key gets its tokens from
// Google's endpoint (TokenURL): a key Secret that someone else can write would
// otherwise make the provider send signed assertions to a URL of their choosing
// and show its answers in messages. Tenants' keys never may.
func WithKeyTokenURI(allowed bool) Option {
	return func(o *options) { o.keyTokenURI = allowed }
}

// WithTokenTransport is how token requests are sent (http.DefaultTransport
// otherwise); their answers are bounded like Cloud SQL's.
func WithTokenTransport(rt http.RoundTripper) Option {
	return func(o *options) { o.tokenTransport = rt }
}

func newOptions(o []Option) options {
	opts := options{tokenTransport: http.DefaultTransport}
	for _, fn := range o {
		fn(&opts)
	}
	return opts
}

// A refusedError is a key or source that the configuration it came from may
// not use: no retry or outage explains it, so admission denies it.
type refusedError struct{ error }

// Refused marks the error as a refusal (see IsRefused).
func (refusedError) Refused() bool { return true }

func (e refusedError) Unwrap() error { return e.error }

// Refusal marks err as a refusal (see IsRefused); nil stays nil.
func Refusal(err error) error {
	if err == nil {
		return nil
	}
	return refusedError{err}
}

// Restate is as, another wording of err, marked as a refusal when err is one.
func Restate(err, as error) error {
	if IsRefused(err) {
		return Refusal(as)
	}
	return as
}

// IsRefused reports whether err says that a configuration may not use its
// credentials or endpoint (any error in err's chain with a Refused method that
// says so), as opposed to credentials that are broken or an API that cannot be
// reached.
func IsRefused(err error) bool {
	var r interface{ Refused() bool }
	return errors.As(err, &r) && r.Refused()
}

// keyFile is what CheckKey reads of a key JSON.
type keyFile struct {
	Type             string          `json:"type"`
	ClientEmail      string          `json:"client_email"`
	PrivateKey       string          `json:"private_key"`
	CredentialSource json.RawMessage `json:"credential_source"`
}

// CheckKey says what is wrong with a key JSON, or nil. Errors complete a sentence
// whose subject is where the key came from ("secret ns/name key key.json ...").
// A tenant's key (see Credentials.Tenant) must be a service-account key; a
// platform's may also be an external_account configuration, without a
// credential_source unless WithExternalAccountSources allows it.
func CheckKey(data []byte, tenant bool, o ...Option) error {
	opts := newOptions(o)
	if len(data) == 0 {
		return errors.New(errEmptyKey)
	}
	var k keyFile
	if err := json.Unmarshal(data, &k); err != nil {
		return errors.New(errNotJSON)
	}
	switch {
	case k.Type == string(google.ServiceAccount):
	case tenant:
		return refusedError{errors.Errorf(errTenantKeyType, k.Type)}
	case k.Type == string(google.ExternalAccount):
		if src := sourceKind(k.CredentialSource); src != "" && !opts.externalSources {
			return refusedError{errors.Errorf(errExternalSource, src)}
		}
		return nil
	default:
		return errors.Errorf(errKeyType, k.Type)
	}
	if k.ClientEmail == "" {
		return errors.Errorf(errKeyField, "client_email")
	}
	if k.PrivateKey == "" {
		return errors.Errorf(errKeyField, "private_key")
	}
	block, _ := pem.Decode([]byte(k.PrivateKey))
	if block == nil {
		return errors.New(errPrivateKey)
	}
	if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
			return errors.New(errPrivateKey)
		}
	}
	return nil
}

// sourceKind says what an external_account configuration's credential_source
// makes the provider read, or "" when it has none. Every kind reads something
// of the provider's pod (a file, a URL such as the metadata server, a program,
// AWS's metadata or environment), so any field counts.
func sourceKind(raw json.RawMessage) string {
	var src map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &src) != nil {
		// null, or not an object: the client library refuses it itself.
		return ""
	}
	for _, k := range []struct{ field, says string }{
		{"file", "reads a file"},
		{"url", "fetches a URL"},
		{"executable", "runs a program"},
		{"environment_id", "reads a cloud's metadata or environment"},
		{"certificate", "reads certificate files"},
	} {
		if v, ok := src[k.field]; ok && string(v) != "null" {
			return k.says
		}
	}
	for f, v := range src {
		if string(v) != "null" {
			return "sets " + f
		}
	}
	return ""
}

// NewService returns a Cloud SQL Admin API client that authenticates with creds and
// sends its requests through base (which typically enforces the request budget).
// Every answer, token endpoints' included, is bounded (see package sizelimit).
// An empty endpoint means Google's; a non-empty one is a base URL, its path kept
// whole with or without a trailing slash (see BaseURL). The client outlives any
// one reconcile, so its token source is not bound to the caller's context.
func NewService(creds Credentials, endpoint string, base http.RoundTripper, o ...Option) (*sqladmin.Service, error) {
	hc, err := NewHTTPClient(creds, base, o...)
	if err != nil {
		return nil, err
	}
	svcOpts := []option.ClientOption{option.WithHTTPClient(hc)}
	if endpoint != "" {
		svcOpts = append(svcOpts, option.WithEndpoint(BaseURL(endpoint)))
	}
	return sqladmin.NewService(tokenContext(newOptions(o)), svcOpts...)
}

// NewHTTPClient returns the HTTP client that NewService's Cloud SQL Admin API
// client uses: it authenticates with creds, sends its requests through base and
// bounds every answer. Other clients of the Admin API (the Cloud SQL connector,
// whose connectSettings and generateEphemeralCert requests spend the same
// budget) use it so that they authenticate and count as NewService's do.
func NewHTTPClient(creds Credentials, base http.RoundTripper, o ...Option) (*http.Client, error) {
	opts := newOptions(o)
	ctx := tokenContext(opts)
	var rt http.RoundTripper
	if base == nil {
		base = http.DefaultTransport
	}
	base = sizelimit.New(base)
	switch {
	case creds.Tenant && creds.Source != xpv2.CredentialsSourceSecret && creds.Source != xpv2.CredentialsSourceNone:
		return nil, refusedError{errors.Errorf(errTenantSource, creds.Source)}
	case creds.Source == xpv2.CredentialsSourceNone:
		rt = base
	case creds.Source == xpv2.CredentialsSourceInjectedIdentity:
		c, err := google.FindDefaultCredentials(ctx, Scope)
		if err != nil {
			return nil, errors.Wrap(err, errDefaultCreds)
		}
		rt = &oauth2.Transport{Source: c.TokenSource, Base: base}
	case creds.Source == xpv2.CredentialsSourceSecret, creds.Source == xpv2.CredentialsSourceEnvironment, creds.Source == xpv2.CredentialsSourceFilesystem:
		ts, err := tokenSource(ctx, creds, opts)
		if err != nil {
			return nil, err
		}
		rt = &oauth2.Transport{Source: ts, Base: base}
	default:
		return nil, errors.Errorf(errUnknownSource, creds.Source)
	}
	hc := &http.Client{Transport: rt}
	if creds.Tenant {
		// A tenant's endpoint that redirects elsewhere would have the
		// provider call, and show the answers of, an internal URL that no
		// rule about endpoints names.
		hc.CheckRedirect = sameHost
	}
	return hc, nil
}

// tokenContext is the context of token sources: token requests go through a
// client of ours rather than http.DefaultClient, so that their answers are
// bounded too.
func tokenContext(opts options) context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: sizelimit.New(opts.tokenTransport)})
}

// tokenSource is the token source of a key: a tenant's is read as a
// service-account key and sends its assertions to Google's token endpoint
// whatever token_uri it holds; a platform's is read as the type it has,
// service_account or external_account, never another, and a platform's
// service-account key uses Google's token endpoint too unless WithKeyTokenURI
// allows its own.
func tokenSource(ctx context.Context, creds Credentials, opts options) (oauth2.TokenSource, error) {
	if err := CheckKey(creds.JSON, creds.Tenant, WithExternalAccountSources(opts.externalSources)); err != nil {
		return nil, located(err, creds.Where)
	}
	var k keyFile
	_ = json.Unmarshal(creds.JSON, &k)
	if creds.Tenant || (k.Type == string(google.ServiceAccount) && !opts.keyTokenURI) {
		cfg, err := google.JWTConfigFromJSON(creds.JSON, Scope)
		if err != nil {
			return nil, errors.Wrap(err, errCredentialsFor)
		}
		cfg.TokenURL = TokenURL
		return cfg.TokenSource(ctx), nil
	}
	t := google.ServiceAccount
	if k.Type == string(google.ExternalAccount) {
		t = google.ExternalAccount
	}
	c, err := google.CredentialsFromJSONWithType(ctx, creds.JSON, t, Scope)
	if err != nil {
		return nil, errors.Wrap(err, errCredentialsFor)
	}
	return c.TokenSource, nil
}

// sameHost refuses a redirect to a host other than the first request's.
func sameHost(req *http.Request, via []*http.Request) error {
	if len(via) > 0 && req.URL.Host != via[0].URL.Host {
		return errors.Errorf(errRedirect, via[0].URL.Host, req.URL.Host)
	}
	if len(via) >= 10 {
		return errors.New(errRedirects)
	}
	return nil
}

// located is err, a sentence without its subject, about the key at where.
func located(err error, where string) error {
	if where == "" {
		return err
	}
	return Restate(err, errors.New(where+" "+err.Error()))
}

// BaseURL is endpoint with a trailing slash. The client resolves its request
// paths against the endpoint as a URL reference, which drops a last path
// segment without one (https://psc.example.com/sqladmin would be called at
// /sql/v1beta4/...), while the Cloud SQL Auth Proxy, which the injector gives the
// same endpoint, adds the slash: both must call the API at the same place.
func BaseURL(endpoint string) string {
	if strings.HasSuffix(endpoint, "/") {
		return endpoint
	}
	return endpoint + "/"
}
