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

package emulator

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// TokenPath is where the emulator serves an OAuth 2.0 token endpoint for
// service-account keys: a key whose token_uri is <emulator>/token gets access
// tokens here, as from oauth2.googleapis.com/token, so a client configured with
// a key file (the Auth Proxy's --credentials-file) authenticates for real.
const TokenPath = "/token"

// jwtBearerGrant is the grant type service-account keys use (RFC 7523).
const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// tokenLifetime is how long the access tokens it issues last, by the
// emulator's clock, as Google's do.
const tokenLifetime = time.Hour

// maxGrants bounds each of the emulator's memories of access tokens and of the
// client certificates bound to one, so that a long run cannot fill the memory
// when its clock stands still: the grant that expires first makes room.
const maxGrants = 50000

// grant is what an access token stands for: its account (the service
// account's email) until it expires.
type grant struct {
	account string
	expiry  time.Time
}

// validAt reports whether the grant still holds at now.
func (g grant) validAt(now time.Time) bool { return now.Before(g.expiry) }

// grantStore remembers grants by key: an access token, or the serial number
// of a client certificate bound to one. Expired grants go whenever one is
// added. The zero value is ready; it is safe for concurrent use.
type grantStore struct {
	mu sync.Mutex
	m  map[string]grant
	// limit is how many grants it holds at most; zero means maxGrants.
	limit int
}

// add remembers g under key, forgetting those expired at now and, when the
// store is full, the one that expires first.
func (st *grantStore) add(key string, g grant, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.m == nil {
		st.m = map[string]grant{}
	}
	for k, old := range st.m {
		if !old.validAt(now) {
			delete(st.m, k)
		}
	}
	limit := st.limit
	if limit <= 0 {
		limit = maxGrants
	}
	if _, ok := st.m[key]; !ok && len(st.m) >= limit {
		first := ""
		for k, old := range st.m {
			if first == "" || old.expiry.Before(st.m[first].expiry) {
				first = k
			}
		}
		delete(st.m, first)
	}
	st.m[key] = g
}

// get is the grant under key, expired or not, if it is remembered.
func (st *grantStore) get(key string) (grant, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	g, ok := st.m[key]
	return g, ok
}

// serveToken exchanges a signed JWT assertion for an access token. It checks the
// grant type and that the assertion is a JWT naming its issuer (the service
// account); it does not verify the signature, since no key is registered here.
// It remembers the token's account and expiry, which IAM database
// authentication checks (see iamauth.go).
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, errCode, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": errCode, "error_description": desc})
	}
	if r.Method != http.MethodPost {
		fail(http.StatusMethodNotAllowed, "invalid_request", "use POST")
		return
	}
	if err := r.ParseForm(); err != nil {
		fail(http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if g := r.PostForm.Get("grant_type"); g != jwtBearerGrant {
		fail(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be "+jwtBearerGrant)
		return
	}
	iss := jwtIssuer(r.PostForm.Get("assertion"))
	if iss == "" {
		fail(http.StatusBadRequest, "invalid_grant", "assertion must be a JWT with an iss claim")
		return
	}
	now := s.Now()
	token := "emulator-" + rand.Text()
	s.tokens.add(token, grant{account: iss, expiry: now.Add(tokenLifetime)}, now)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": token,
		"token_type":   "Bearer",
		"expires_in":   int(tokenLifetime / time.Second),
	})
}

// ServiceAccountKey returns a service-account key file (JSON, with a new RSA
// key) of the account cloudsql-client@<project>.iam.gserviceaccount.com whose
// token_uri is tokenURL, normally the emulator's URL followed by TokenPath. A
// client configured with it (the Auth Proxy's --credentials-file, a
// ProviderConfig's secret) authenticates against the emulator as it would
// against Google.
func ServiceAccountKey(project, tokenURL string) ([]byte, error) {
	return ServiceAccountKeyFor(project, "cloudsql-client@"+project+".iam.gserviceaccount.com", tokenURL)
}

// ServiceAccountKeyFor is ServiceAccountKey for the service account email, so
// that a test can hold the keys of several accounts. The access tokens the
// emulator issues for the key are the account's: with IAM database
// authentication, they log in as the account's CLOUD_IAM_SERVICE_ACCOUNT user
// (its email without .gserviceaccount.com).
func ServiceAccountKeyFor(project, email, tokenURL string) ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     project,
		"private_key_id": rand.Text(),
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   email,
		"client_id":      fmt.Sprint(projectNumber(project)),
		"token_uri":      tokenURL,
	})
}

// jwtIssuer is the iss claim of a compact JWT, or empty when it isn't one.
func jwtIssuer(assertion string) string {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	return claims.Iss
}
