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
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

func TestConnectSettings(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", withVersion("POSTGRES_16"), withTier("db-perf-optimized-N-2"))
	db := e.get("orders")

	cs, err := e.svc.Connect.Get(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(cs.Kind).To(Equal("sql#connectSettings"))
	e.g.Expect(cs.ServerCaCert.Cert).To(Equal(db.ServerCaCert.Cert))
	e.g.Expect(cs.ServerCaCert.Sha1Fingerprint).To(Equal(db.ServerCaCert.Sha1Fingerprint))
	e.g.Expect(cs.IpAddresses).To(Equal(db.IpAddresses))
	e.g.Expect(cs.Region).To(Equal(region))
	e.g.Expect(cs.DatabaseVersion).To(Equal("POSTGRES_16"))
	e.g.Expect(cs.BackendType).To(Equal("SECOND_GEN"))
	e.g.Expect(cs.PscEnabled).To(BeFalse())
	e.g.Expect(cs.DnsName).To(HaveSuffix("." + region + ".sql.goog."))

	_, err = e.svc.Connect.Get(project, "nope").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
}

func TestGenerateEphemeralCertIsSignedByTheInstanceCA(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.insert("billing")
	caPool := func(name string) *x509.CertPool {
		pool := x509.NewCertPool()
		e.g.Expect(pool.AppendCertsFromPEM([]byte(e.get(name).ServerCaCert.Cert))).To(BeTrue())
		return pool
	}

	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	e.g.Expect(err).NotTo(HaveOccurred())
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	e.g.Expect(err).NotTo(HaveOccurred())
	pkix := func(pub crypto.PublicKey) string {
		der, err := x509.MarshalPKIXPublicKey(pub)
		e.g.Expect(err).NotTo(HaveOccurred())
		return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	}
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)}))

	// The Go connector (and so the Auth Proxy) labels a PKIX key "RSA PUBLIC KEY".
	rsaPKIXDer, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	e.g.Expect(err).NotTo(HaveOccurred())
	connectorStyle := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: rsaPKIXDer}))

	for name, pubPEM := range map[string]string{
		"ECDSAPKIX":              pkix(&ecKey.PublicKey),
		"RSAPKIX":                pkix(&rsaKey.PublicKey),
		"RSAPKCS1":               pkcs1,
		"RSAPKIXLabelledAsPKCS1": connectorStyle,
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			resp, err := e.svc.Connect.GenerateEphemeralCert(project, "orders", &sqladmin.GenerateEphemeralCertRequest{
				PublicKey: pubPEM, ValidDuration: "600s",
			}).Do()
			g.Expect(err).NotTo(HaveOccurred())
			block, _ := pem.Decode([]byte(resp.EphemeralCert.Cert))
			g.Expect(block).NotTo(BeNil())
			cert, err := x509.ParseCertificate(block.Bytes)
			g.Expect(err).NotTo(HaveOccurred())
			_, err = cert.Verify(x509.VerifyOptions{
				Roots:       caPool("orders"),
				CurrentTime: epoch,
				KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cert.NotAfter).To(Equal(epoch.Add(10 * time.Minute)))
			// Another instance's CA doesn't vouch for it.
			_, err = cert.Verify(x509.VerifyOptions{Roots: caPool("billing"), CurrentTime: epoch,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
			g.Expect(err).To(HaveOccurred())
			g.Expect(resp.EphemeralCert.ExpirationTime).To(Equal("2026-03-01T10:10:00.000Z"))
		})
	}

	t.Run("TheLifetimeIsAtMostAnHour", func(t *testing.T) {
		g := NewWithT(t)
		resp, err := e.svc.Connect.GenerateEphemeralCert(project, "orders", &sqladmin.GenerateEphemeralCertRequest{
			PublicKey: pkix(&ecKey.PublicKey), ValidDuration: "86400s",
		}).Do()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(resp.EphemeralCert.ExpirationTime).To(Equal("2026-03-01T11:00:00.000Z"))
	})

	for name, req := range map[string]*sqladmin.GenerateEphemeralCertRequest{
		"NoKey":        {},
		"NotPEM":       {PublicKey: "ssh-ed25519 AAAA"},
		"WrongPEMType": {PublicKey: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2}}))},
		"GarbageKey":   {PublicKey: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2}}))},
		"BadDuration":  {PublicKey: pkix(&ecKey.PublicKey), ValidDuration: "soon"},
	} {
		t.Run("Rejects"+name, func(t *testing.T) {
			_, err := e.svc.Connect.GenerateEphemeralCert(project, "orders", req).Do()
			var reason = "invalid"
			if name == "NoKey" {
				reason = "required"
			}
			expectAPIError(NewWithT(t), err, http.StatusBadRequest, reason)
		})
	}

	_, err = e.svc.Connect.GenerateEphemeralCert(project, "nope", &sqladmin.GenerateEphemeralCertRequest{
		PublicKey: pkix(&ecKey.PublicKey),
	}).Do()
	expectAPIError(e.g, err, http.StatusNotFound, "instanceDoesNotExist")
}

func TestServerCertificateChainsToTheInstanceCA(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	cert, err := e.emu.ServerCertificate(project, "orders")
	e.g.Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	e.g.Expect(pool.AppendCertsFromPEM([]byte(e.get("orders").ServerCaCert.Cert))).To(BeTrue())
	e.g.Expect(cert.Leaf.Subject.CommonName).To(Equal("test-project:orders"))
	_, err = cert.Leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: epoch, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.emu.ServerCertificate(project, "nope")
	e.g.Expect(err).To(HaveOccurred())
}
