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

package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// key returns a service-account key JSON with a fresh RSA key, whose token_uri is
// tokenURI, with the given fields overridden.
func key(t *testing.T, tokenURI string, override map[string]any) []byte {
	t.Helper()
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	NewWithT(t).Expect(err).ToNot(HaveOccurred())
	der, err := x509.MarshalPKCS8PrivateKey(pk)
	NewWithT(t).Expect(err).ToNot(HaveOccurred())
	k := map[string]any{
		"type":           "service_account",
		"project_id":     "auth-project",
		"private_key_id": "abc",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   "admin@auth-project.iam.gserviceaccount.com",
		"token_uri":      tokenURI,
	}
	for f, v := range override {
		if v == nil {
			delete(k, f)
			continue
		}
		k[f] = v
	}
	b, _ := json.Marshal(k)
	return b
}

func TestCheckKey(t *testing.T) {
	external := func(source string) []byte {
		return []byte(`{"type":"external_account","audience":"x","token_url":"https://sts.example.com/token","credential_source":` + source + `}`)
	}
	type args struct {
		data    []byte
		tenant  bool
		sources bool
	}
	type want struct {
		Err     string
		Refused bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Valid":             {reason: "A complete service-account key is fine for the platform.", args: args{data: key(t, "https://oauth2.googleapis.com/token", nil)}},
		"TenantValid":       {reason: "A complete service-account key is fine for a tenant too.", args: args{data: key(t, "https://oauth2.googleapis.com/token", nil), tenant: true}},
		"TenantOwnTokenURI": {reason: "A tenant's token_uri is ignored (Google's is used), so it is no reason to refuse the key.", args: args{data: key(t, "http://127.0.0.1:1/token", nil), tenant: true}},
		"ExternalNoSource":  {reason: "The platform may use external_account without a credential_source.", args: args{data: []byte(`{"type":"external_account","audience":"x"}`)}},
		"ExternalFile": {reason: "A platform's external_account key may not read a file unless allowed.",
			args: args{data: external(`{"file":"/var/run/secrets/kubernetes.io/serviceaccount/token"}`)},
			want: want{Err: "whose credential_source reads a file", Refused: true}},
		"ExternalURL": {reason: "A platform's external_account key may not fetch a URL unless allowed.",
			args: args{data: external(`{"url":"http://169.254.169.254/computeMetadata/v1/"}`)},
			want: want{Err: "[credentials] allow_external_account_sources = true", Refused: true}},
		"ExternalExecutable": {reason: "Nor run a program.", args: args{data: external(`{"executable":{"command":"/bin/sh -c id"}}`)},
			want: want{Err: "runs a program", Refused: true}},
		"ExternalAWS": {reason: "Nor read AWS's metadata.", args: args{data: external(`{"environment_id":"aws1","region_url":"http://169.254.169.254/latest/meta-data/placement/availability-zone"}`)},
			want: want{Err: "reads a cloud's metadata or environment", Refused: true}},
		"ExternalOther": {reason: "Any other source field counts as a source.", args: args{data: external(`{"something_new":"x"}`)},
			want: want{Err: "sets something_new", Refused: true}},
		"ExternalFileAllowed": {reason: "The configuration file may allow the platform's sources.",
			args: args{data: external(`{"file":"/var/run/token"}`), sources: true}},
		"TenantExternal": {reason: "A tenant may never use external_account, even without a source.",
			args: args{data: []byte(`{"type":"external_account","audience":"x"}`), tenant: true},
			want: want{Err: `has type "external_account", but a namespaced ProviderConfig may only hold a service-account key`, Refused: true}},
		"TenantExternalAllowed": {reason: "allow_external_account_sources does not apply to tenants.",
			args: args{data: external(`{"file":"/var/run/secrets/kubernetes.io/serviceaccount/token"}`), tenant: true, sources: true},
			want: want{Err: "ClusterProviderConfig that the platform team owns", Refused: true}},
		"TenantImpersonated": {reason: "Nor any other type.", args: args{data: []byte(`{"type":"impersonated_service_account"}`), tenant: true},
			want: want{Err: `has type "impersonated_service_account"`, Refused: true}},
		"TenantNoType": {reason: "A key without a type is not a service-account key.", args: args{data: key(t, "x", map[string]any{"type": nil}), tenant: true},
			want: want{Err: `has type ""`, Refused: true}},
		"Empty":           {reason: "An empty key is broken, not refused.", want: want{Err: "is empty"}},
		"NotJson":         {reason: "So is one that is not JSON.", args: args{data: []byte("key.json")}, want: want{Err: "is not JSON"}},
		"UserCredentials": {reason: "The platform may not use user credentials.", args: args{data: []byte(`{"type":"authorized_user"}`)}, want: want{Err: `has type "authorized_user"`}},
		"NoEmail":         {reason: "A key without client_email is incomplete.", args: args{data: key(t, "x", map[string]any{"client_email": nil})}, want: want{Err: "has no client_email"}},
		"TenantNoEmail":   {reason: "A tenant's too.", args: args{data: key(t, "x", map[string]any{"client_email": nil}), tenant: true}, want: want{Err: "has no client_email"}},
		"NoPrivateKey":    {reason: "A key without private_key is incomplete.", args: args{data: key(t, "x", map[string]any{"private_key": nil})}, want: want{Err: "has no private_key"}},
		"BadPrivateKey":   {reason: "A private_key must be PEM.", args: args{data: key(t, "x", map[string]any{"private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"})}, want: want{Err: "not a PEM-encoded"}},
		"PlaceholderKey":  {reason: "A placeholder is not a key.", args: args{data: key(t, "x", map[string]any{"private_key": "replace me"})}, want: want{Err: "not a PEM-encoded"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckKey(tc.args.data, tc.args.tenant, WithExternalAccountSources(tc.args.sources))
			got := want{Refused: IsRefused(err)}
			if err != nil {
				got.Err = err.Error()
			}
			if tc.want.Err == "" {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s\nCheckKey(...): -want, +got:\n%s", tc.reason, diff)
				}
				return
			}
			if !strings.Contains(got.Err, tc.want.Err) || got.Refused != tc.want.Refused {
				t.Errorf("%s\nCheckKey(...): want an error containing %q (refused: %t), got %q (refused: %t)", tc.reason, tc.want.Err, tc.want.Refused, got.Err, got.Refused)
			}
		})
	}
}

// counter is an HTTP server that counts the requests it receives and the
// bodies they carry, standing in for a token_url or a metadata server of a
// key's choosing.
type counter struct {
	mu     sync.Mutex
	bodies []string
	*httptest.Server
}

func newCounter(t *testing.T) *counter {
	c := &counter{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.bodies = append(c.bodies, r.URL.Path+" "+string(b))
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"stolen","token_type":"Bearer","expires_in":3600,"issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`))
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *counter) received() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bodies...)
}

// A tenant's external_account key names the provider's own token file and a
// metadata URL as its source and a token_url of the tenant's: the provider
// must read neither and send nothing anywhere.
func TestTenantExternalAccountReadsNothing(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(secret, []byte("the-provider's-own-kubernetes-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	sources := map[string]func(metadata string) string{
		"File": func(string) string { return `{"file":"` + secret + `"}` },
		"URL":  func(metadata string) string { return `{"url":"` + metadata + `/computeMetadata/v1/token"}` },
	}
	for name, source := range sources {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			tokenURL, metadata := newCounter(t), newCounter(t)
			api := &authRecorder{next: emulator.New()}
			srv := httptest.NewServer(api)
			defer srv.Close()
			k := []byte(`{"type":"external_account","audience":"//iam.googleapis.com/x","subject_token_type":"urn:ietf:params:oauth:token-type:jwt",` +
				`"token_url":"` + tokenURL.URL + `/token","credential_source":` + source(metadata.URL) + `}`)

			svc, err := NewService(Credentials{Source: xpv2.CredentialsSourceSecret, JSON: k, Tenant: true, Where: `key "k" of secret team-x/s`}, srv.URL, nil)
			if err == nil {
				// Should a client be built, using it is what would send the
				// provider's token: the test makes that call so that a
				// key accepted here shows up as a request below.
				_, err = svc.Instances.Get("p", "i").Do()
			}
			g.Expect(tokenURL.received()).To(BeEmpty(), "the tenant's token_url receives nothing")
			g.Expect(metadata.received()).To(BeEmpty(), "the key's URL is not fetched")
			g.Expect(api.seen).To(BeEmpty(), "no request is made with such a key")
			g.Expect(err).To(MatchError(ContainSubstring(`key "k" of secret team-x/s has type "external_account", but a namespaced ProviderConfig may only hold a service-account key`)))
			g.Expect(IsRefused(err)).To(BeTrue())
		})
	}
}

// A platform's external_account key reads its credential_source only when the
// configuration file allows it.
func TestPlatformExternalAccountSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("subject-token-from-file"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, allowed := range []bool{false, true} {
		t.Run(fmt.Sprintf("allowed=%t", allowed), func(t *testing.T) {
			g := NewWithT(t)
			sts := newCounter(t)
			api := &authRecorder{next: emulator.New()}
			srv := httptest.NewServer(api)
			defer srv.Close()
			k := []byte(`{"type":"external_account","audience":"//iam.googleapis.com/x","subject_token_type":"urn:ietf:params:oauth:token-type:jwt",` +
				`"token_url":"` + sts.URL + `/token","credential_source":{"file":"` + file + `"}}`)
			svc, err := NewService(Credentials{Source: xpv2.CredentialsSourceSecret, JSON: k}, srv.URL, nil, WithExternalAccountSources(allowed))
			if !allowed {
				g.Expect(err).To(MatchError(ContainSubstring("credential_source reads a file")))
				g.Expect(IsRefused(err)).To(BeTrue())
				g.Expect(sts.received()).To(BeEmpty())
				return
			}
			g.Expect(err).ToNot(HaveOccurred())
			_, err = svc.Instances.List("auth-project").Do()
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(sts.received()).To(ConsistOf(ContainSubstring("subject-token-from-file")), "the platform's workload identity federation works when allowed")
			g.Expect(api.seen).To(Equal([]string{"Bearer stolen"}))
		})
	}
}

// tokenRecorder answers token requests with a token and remembers where they
// were sent.
type tokenRecorder struct {
	mu   sync.Mutex
	urls []string
}

func (r *tokenRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.urls = append(r.urls, req.URL.String())
	r.mu.Unlock()
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{"Content-Type": []string{"application/json"}}, Request: req,
		Body: io.NopCloser(strings.NewReader(`{"access_token":"google-token","token_type":"Bearer","expires_in":3600}`)),
	}, nil
}

// A service-account key whose token_uri names another server signs its
// assertions for Google's token endpoint, and only there: a tenant's always, a
// platform's unless the configuration file allows keys their own token_uri
// (whoever can write a platform key's Secret could otherwise point the
// provider at an internal URL and read its answer).
func TestKeyTokensGoToGoogle(t *testing.T) {
	cases := map[string]struct {
		reason  string
		tenant  bool
		allowed bool
		google  bool
	}{
		"Tenant":          {reason: "A tenant's key uses Google's token endpoint.", tenant: true, google: true},
		"TenantAllowed":   {reason: "allow_key_token_uri does not apply to tenants.", tenant: true, allowed: true, google: true},
		"Platform":        {reason: "A platform's key uses Google's token endpoint unless allowed otherwise.", google: true},
		"PlatformAllowed": {reason: "A platform's key keeps its token_uri (a private endpoint, an emulator) when allowed.", allowed: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			theirs := newCounter(t)
			tokens := &tokenRecorder{}
			api := &authRecorder{next: emulator.New()}
			srv := httptest.NewServer(api)
			defer srv.Close()

			creds := Credentials{Source: xpv2.CredentialsSourceSecret, JSON: key(t, theirs.URL+"/token", nil), Tenant: tc.tenant}
			svc, err := NewService(creds, srv.URL, nil, WithTokenTransport(tokens), WithKeyTokenURI(tc.allowed))
			g.Expect(err).ToNot(HaveOccurred())
			_, err = svc.Instances.List("auth-project").Do()
			g.Expect(err).ToNot(HaveOccurred())
			// The token transport answers every token request itself: where
			// it was sent is what the test looks at.
			want := "https://oauth2.googleapis.com/token"
			if !tc.google {
				want = theirs.URL + "/token"
			}
			g.Expect(tokens.urls).To(Equal([]string{want}), tc.reason)
			g.Expect(theirs.received()).To(BeEmpty())
			g.Expect(api.seen).To(Equal([]string{"Bearer google-token"}), tc.reason)
		})
	}
}

// A tenant's configuration may not lend the provider's own identity, however
// it was read.
func TestTenantSources(t *testing.T) {
	for _, src := range []xpv2.CredentialsSource{xpv2.CredentialsSourceInjectedIdentity, xpv2.CredentialsSourceEnvironment, xpv2.CredentialsSourceFilesystem} {
		_, err := NewService(Credentials{Source: src, JSON: key(t, "x", nil), Tenant: true}, "", nil)
		NewWithT(t).Expect(IsRefused(err)).To(BeTrue(), "source %s", src)
	}
}

// authRecorder serves the emulator and remembers the Authorization headers it saw.
type authRecorder struct {
	mu   sync.Mutex
	seen []string
	next http.Handler
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Header.Get("Authorization"))
	a.mu.Unlock()
	a.next.ServeHTTP(w, r)
}

func TestNewServiceWithKeyAuthenticates(t *testing.T) {
	g := NewWithT(t)
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.Expect(r.ParseForm()).To(Succeed())
		g.Expect(r.Form.Get("grant_type")).To(Equal("urn:ietf:params:oauth:grant-type:jwt-bearer"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"token-from-key","token_type":"Bearer","expires_in":3600}`))
	}))
	defer tokens.Close()
	rec := &authRecorder{next: emulator.New()}
	api := httptest.NewServer(rec)
	defer api.Close()

	// The configuration file lets the platform's keys keep their token_uri.
	svc, err := NewService(Credentials{Source: xpv2.CredentialsSourceSecret, JSON: key(t, tokens.URL, nil)}, api.URL+"/", http.DefaultTransport, WithKeyTokenURI(true))
	g.Expect(err).ToNot(HaveOccurred())
	_, err = svc.Instances.List("auth-project").Do()
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(rec.seen).To(Equal([]string{"Bearer token-from-key"}))
}

func TestNewServiceWithoutCredentials(t *testing.T) {
	g := NewWithT(t)
	rec := &authRecorder{next: emulator.New()}
	api := httptest.NewServer(rec)
	defer api.Close()
	svc, err := NewService(Credentials{Source: xpv2.CredentialsSourceNone}, api.URL+"/", http.DefaultTransport)
	g.Expect(err).ToNot(HaveOccurred())
	_, err = svc.Instances.List("auth-project").Do()
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(rec.seen).To(Equal([]string{""}))
}

func TestNewServiceRejectsBadKeys(t *testing.T) {
	g := NewWithT(t)
	_, err := NewService(Credentials{Source: xpv2.CredentialsSourceSecret, JSON: []byte("{}")}, "", nil)
	g.Expect(err).To(MatchError(ContainSubstring(`has type ""`)))
	_, err = NewService(Credentials{Source: "Magic"}, "", nil)
	g.Expect(err).To(MatchError(ContainSubstring(`credentials source "Magic" is not supported`)))
}

// An endpoint's path is kept whole, with or without a trailing slash, as the
// Cloud SQL Auth Proxy keeps it: the injector gives the proxy the same endpoint,
// and both must call the API at the same place.
func TestNewServiceKeepsTheEndpointsPath(t *testing.T) {
	for _, suffix := range []string{"", "/", "/sqladmin", "/sqladmin/"} {
		t.Run("endpoint ending in "+suffix, func(t *testing.T) {
			g := NewWithT(t)
			var mu sync.Mutex
			var paths []string
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				paths = append(paths, r.URL.Path)
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{}`))
			}))
			defer api.Close()
			svc, err := NewService(Credentials{Source: xpv2.CredentialsSourceNone}, api.URL+suffix, http.DefaultTransport)
			g.Expect(err).ToNot(HaveOccurred())
			_, err = svc.Instances.List("auth-project").Do()
			g.Expect(err).ToNot(HaveOccurred())
			want := "/sql/v1beta4/projects/auth-project/instances"
			if strings.HasPrefix(suffix, "/sqladmin") {
				want = "/sqladmin" + want
			}
			g.Expect(paths).To(Equal([]string{want}))
		})
	}
}

// A tenant's endpoint that redirects to another host does not get the
// provider to call it.
func TestTenantEndpointRedirects(t *testing.T) {
	g := NewWithT(t)
	elsewhere := newCounter(t)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/computeMetadata/v1/token", http.StatusFound)
	}))
	defer redirecting.Close()

	tenant := Credentials{Source: xpv2.CredentialsSourceNone, Tenant: true}
	svc, err := NewService(tenant, redirecting.URL, nil)
	g.Expect(err).ToNot(HaveOccurred())
	_, err = svc.Instances.List("auth-project").Do()
	g.Expect(err).To(MatchError(ContainSubstring("redirected to another host, " + strings.TrimPrefix(elsewhere.URL, "http://"))))
	g.Expect(elsewhere.received()).To(BeEmpty(), "the tenant's endpoint cannot send the provider elsewhere")

	// The platform's configurations are the platform's to point anywhere.
	svc, err = NewService(Credentials{Source: xpv2.CredentialsSourceNone}, redirecting.URL, nil)
	g.Expect(err).ToNot(HaveOccurred())
	_, _ = svc.Instances.List("auth-project").Do()
	g.Expect(elsewhere.received()).To(HaveLen(1))
}
