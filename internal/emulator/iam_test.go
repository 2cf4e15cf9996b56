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

package emulator_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// loginScope is the scope of the access tokens of IAM database logins.
const loginScope = "https://www.googleapis.com/auth/sqlservice.login"

// accountTokens is a token source of the service account email, as a client
// holding the account's key has: each token comes from the emulator's token
// endpoint at baseURL. A test gets tokens of several accounts this way.
func accountTokens(g Gomega, ctx context.Context, baseURL, project, email string) oauth2.TokenSource {
	key, err := emulator.ServiceAccountKeyFor(project, email, baseURL+emulator.TokenPath)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	cfg, err := google.JWTConfigFromJSON(key, loginScope)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return cfg.TokenSource(ctx)
}

// accountToken is one access token of the account email.
func accountToken(g Gomega, ctx context.Context, baseURL, project, email string) string {
	tok, err := accountTokens(g, ctx, baseURL, project, email).Token()
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return tok.AccessToken
}

func TestServiceAccountKeyFor(t *testing.T) {
	g := NewWithT(t)
	var key struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		TokenURI    string `json:"token_uri"`
		PrivateKey  string `json:"private_key"`
	}
	b, err := emulator.ServiceAccountKeyFor(project, "app@test-project.iam.gserviceaccount.com", "http://emu/token")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(b, &key)).To(Succeed())
	g.Expect(key.Type).To(Equal("service_account"))
	g.Expect(key.ClientEmail).To(Equal("app@test-project.iam.gserviceaccount.com"))
	g.Expect(key.TokenURI).To(Equal("http://emu/token"))
	g.Expect(key.PrivateKey).To(HavePrefix("-----BEGIN PRIVATE KEY-----"))

	b, err = emulator.ServiceAccountKey(project, "http://emu/token")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(b, &key)).To(Succeed())
	g.Expect(key.ClientEmail).To(Equal("cloudsql-client@test-project.iam.gserviceaccount.com"), "ServiceAccountKey keeps its account")
}

// TestGenerateEphemeralCertWithAnAccessToken is automatic IAM database
// authentication's side of the Admin API: a certificate asked for with an
// access token is bound to it and lasts no longer than it, and a token the
// token endpoint did not issue, or that has expired, is refused.
func TestGenerateEphemeralCertWithAnAccessToken(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	e.g.Expect(err).NotTo(HaveOccurred())
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	e.g.Expect(err).NotTo(HaveOccurred())
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	generate := func(token string) (*sqladmin.SslCert, error) {
		resp, err := e.svc.Connect.GenerateEphemeralCert(project, "orders", &sqladmin.GenerateEphemeralCertRequest{
			PublicKey: pub, AccessToken: token,
		}).Context(e.ctx).Do()
		if err != nil {
			return nil, err
		}
		return resp.EphemeralCert, nil
	}

	// Issued at the epoch, the token lasts an hour by the emulator's clock.
	token := accountToken(e.g, e.ctx, e.url, project, "app@test-project.iam.gserviceaccount.com")
	e.clk.Advance(20 * time.Minute)
	cert, err := generate(token)
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(cert.ExpirationTime).To(Equal("2026-03-01T11:00:00.000Z"), "the certificate ends with the token, not an hour from now")
	block, _ := pem.Decode([]byte(cert.Cert))
	e.g.Expect(block).NotTo(BeNil())
	parsed, err := x509.ParseCertificate(block.Bytes)
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(parsed.NotAfter).To(Equal(epoch.Add(time.Hour)))

	cert, err = generate("")
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(cert.ExpirationTime).To(Equal("2026-03-01T11:20:00.000Z"), "without a token, an hour")

	for name, tok := range map[string]string{
		"NotIssuedHere": "ya29.not-from-the-emulator",
		"Malformed":     "emulator-",
	} {
		t.Run("Refuses"+name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := generate(tok)
			gerr := expectAPIError(g, err, http.StatusBadRequest, "invalid")
			g.Expect(gerr.Message).To(Equal("Invalid request: The access token is invalid or expired."))
		})
	}

	t.Run("RefusesAnExpiredToken", func(t *testing.T) {
		g := NewWithT(t)
		e.clk.Advance(40 * time.Minute)
		_, err := generate(token)
		gerr := expectAPIError(g, err, http.StatusBadRequest, "invalid")
		g.Expect(gerr.Message).To(Equal("Invalid request: The access token is invalid or expired."))
		// A new token of the account is good again.
		_, err = generate(accountToken(g, e.ctx, e.url, project, "app@test-project.iam.gserviceaccount.com"))
		g.Expect(err).NotTo(HaveOccurred())
	})
}
