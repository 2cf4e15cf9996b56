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
)

// TokenPath is where the emulator serves an OAuth 2.0 token endpoint for
// service-account keys: a key whose token_uri is <emulator>/token gets access
// tokens here, as from oauth2.googleapis.com/token, so a client configured with
// a key file (the Auth Proxy's --credentials-file) authenticates for real.
const TokenPath = "/token"

// jwtBearerGrant is the grant type service-account keys use (RFC 7523).
const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// tokenLifetime is how long the access tokens it issues say they last.
const tokenLifetime = 3600

// serveToken exchanges a signed JWT assertion for an access token. It checks the
// grant type and that the assertion is a JWT naming its issuer (the service
// account); it does not verify the signature, since no key is registered here.
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
	if iss := jwtIssuer(r.PostForm.Get("assertion")); iss == "" {
		fail(http.StatusBadRequest, "invalid_grant", "assertion must be a JWT with an iss claim")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": "emulator-" + rand.Text(),
		"token_type":   "Bearer",
		"expires_in":   tokenLifetime,
	})
}

// ServiceAccountKey returns a service-account key file (JSON, with a new RSA
// key) for project whose token_uri is tokenURL, normally the emulator's URL
// followed by TokenPath. A client configured with it (the Auth Proxy's
// --credentials-file, a ProviderConfig's secret) authenticates against the
// emulator as it would against Google.
func ServiceAccountKey(project, tokenURL string) ([]byte, error) {
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
		"client_email":   "cloudsql-client@" + project + ".iam.gserviceaccount.com",
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
