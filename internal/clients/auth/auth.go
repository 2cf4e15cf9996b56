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
)

// Scope is the OAuth scope of the Cloud SQL Admin API.
const Scope = sqladmin.SqlserviceAdminScope

const (
	errEmptyKey       = "is empty: it must hold the JSON key of a service account with roles/cloudsql.admin"
	errNotJSON        = "is not JSON: it must hold a service-account key file as `gcloud iam service-accounts keys create` writes it"
	errKeyType        = "has type %q: only service_account keys and external_account (workload identity federation) configurations are supported"
	errKeyField       = "has no %s: it is not a complete service-account key file"
	errPrivateKey     = "has a private_key that is not a PEM-encoded PKCS#8 or PKCS#1 RSA key"
	errDefaultCreds   = "cannot find the provider pod's own Google credentials (InjectedIdentity): is Workload Identity set up for its service account?"
	errUnknownSource  = "credentials source %q is not supported"
	errCredentialsFor = "cannot use the credentials"
)

// Credentials are what a ProviderConfig resolved to: the source, and the key JSON
// for the sources that carry one (Secret, Environment, Filesystem).
type Credentials struct {
	Source xpv2.CredentialsSource
	JSON   []byte
}

// CheckKey says what is wrong with a key JSON, or nil. Errors complete a sentence
// whose subject is where the key came from ("secret ns/name key key.json ...").
func CheckKey(data []byte) error {
	if len(data) == 0 {
		return errors.New(errEmptyKey)
	}
	var k struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
	}
	if err := json.Unmarshal(data, &k); err != nil {
		return errors.New(errNotJSON)
	}
	switch k.Type {
	case string(google.ExternalAccount):
		return nil
	case string(google.ServiceAccount):
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

// NewService returns a Cloud SQL Admin API client that authenticates with creds and
// sends its requests through base (which typically enforces the request budget).
// An empty endpoint means Google's; a non-empty one is a base URL, its path kept
// whole with or without a trailing slash (see baseURL). The client outlives any
// one reconcile, so its token source is not bound to the caller's context.
func NewService(creds Credentials, endpoint string, base http.RoundTripper) (*sqladmin.Service, error) {
	ctx := context.Background()
	var rt http.RoundTripper
	switch creds.Source {
	case xpv2.CredentialsSourceNone:
		rt = base
	case xpv2.CredentialsSourceInjectedIdentity:
		c, err := google.FindDefaultCredentials(ctx, Scope)
		if err != nil {
			return nil, errors.Wrap(err, errDefaultCreds)
		}
		rt = &oauth2.Transport{Source: c.TokenSource, Base: base}
	case xpv2.CredentialsSourceSecret, xpv2.CredentialsSourceEnvironment, xpv2.CredentialsSourceFilesystem:
		if err := CheckKey(creds.JSON); err != nil {
			return nil, err
		}
		var k struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(creds.JSON, &k)
		c, err := google.CredentialsFromJSONWithType(ctx, creds.JSON, google.CredentialsType(k.Type), Scope)
		if err != nil {
			return nil, errors.Wrap(err, errCredentialsFor)
		}
		rt = &oauth2.Transport{Source: c.TokenSource, Base: base}
	default:
		return nil, errors.Errorf(errUnknownSource, creds.Source)
	}
	opts := []option.ClientOption{option.WithHTTPClient(&http.Client{Transport: rt})}
	if endpoint != "" {
		opts = append(opts, option.WithEndpoint(baseURL(endpoint)))
	}
	return sqladmin.NewService(ctx, opts...)
}

// baseURL is endpoint with a trailing slash. The client resolves its request
// paths against the endpoint as a URL reference, which drops a last path
// segment without one (https://psc.example.com/sqladmin would be called at
// /sql/v1beta4/...), while the Cloud SQL Auth Proxy, which the injector gives the
// same endpoint, adds the slash: both must call the API at the same place.
func baseURL(endpoint string) string {
	if strings.HasSuffix(endpoint, "/") {
		return endpoint
	}
	return endpoint + "/"
}
