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
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
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
	cases := map[string]struct {
		data []byte
		want string
	}{
		"Valid":           {data: key(t, "https://oauth2.googleapis.com/token", nil)},
		"ExternalAccount": {data: []byte(`{"type":"external_account","audience":"x"}`)},
		"Empty":           {want: "is empty"},
		"NotJson":         {data: []byte("key.json"), want: "is not JSON"},
		"UserCredentials": {data: []byte(`{"type":"authorized_user"}`), want: `has type "authorized_user"`},
		"NoEmail":         {data: key(t, "x", map[string]any{"client_email": nil}), want: "has no client_email"},
		"NoPrivateKey":    {data: key(t, "x", map[string]any{"private_key": nil}), want: "has no private_key"},
		"BadPrivateKey":   {data: key(t, "x", map[string]any{"private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}), want: "not a PEM-encoded"},
		"PlaceholderKey":  {data: key(t, "x", map[string]any{"private_key": "replace me"}), want: "not a PEM-encoded"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckKey(tc.data)
			if tc.want == "" {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
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

	svc, err := NewService(Credentials{Source: xpv2.CredentialsSourceSecret, JSON: key(t, tokens.URL, nil)}, api.URL+"/", http.DefaultTransport)
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
