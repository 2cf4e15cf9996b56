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
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1" // the API identifies certificates by SHA-1 fingerprint.
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

const (
	errGenerateCAKey = "generating the CA key of %s:%s"
	errSignCA        = "self-signing the CA of %s:%s"
)

// Certificate lifetimes.
const (
	caLifetime            = 10 * 365 * 24 * time.Hour
	ephemeralCertLifetime = time.Hour
	serverCertLifetime    = 365 * 24 * time.Hour
	// clockSkewAllowance backdates certificates so that a peer whose clock
	// is slightly behind still accepts them.
	clockSkewAllowance = 5 * time.Minute
)

// The subject Cloud SQL gives its per-instance server CA.
const (
	caCommonName   = "Google Cloud SQL Server CA"
	caOrganization = "Google, Inc"
	caCountry      = "US"
)

// oidDNQualifier is the dnQualifier attribute (2.5.4.46), which Cloud SQL
// sets to a unique ID in the subject of each instance's CA.
var oidDNQualifier = asn1.ObjectIdentifier{2, 5, 4, 46}

// certAuthority is an instance's server CA: a real self-signed ECDSA P-256
// certificate that signs ephemeral client certificates and server
// certificates.
type certAuthority struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	pem     string
	subject string
}

func newCertAuthority(project, instance string, now time.Time) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errors.Wrapf(err, errGenerateCAKey, project, instance)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	dnq := fmt.Sprintf("%032x", serial)[:16]
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			Country:      []string{caCountry},
			Organization: []string{caOrganization},
			CommonName:   caCommonName,
			ExtraNames:   []pkix.AttributeTypeAndValue{{Type: oidDNQualifier, Value: dnq}},
		},
		NotBefore:             now.Add(-clockSkewAllowance),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, errors.Wrapf(err, errSignCA, project, instance)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certAuthority{
		cert:    cert,
		key:     key,
		pem:     encodeCertPEM(der),
		subject: fmt.Sprintf(`C=%s,O=Google\, Inc,CN=%s,dnQualifier=%s`, caCountry, caCommonName, dnq),
	}, nil
}

// sslCert is the CA as the API shows it in serverCaCert.
func (ca *certAuthority) sslCert(instance string) *sqladmin.SslCert {
	return &sqladmin.SslCert{
		Kind:             "sql#sslCert",
		Cert:             ca.pem,
		CertSerialNumber: ca.cert.SerialNumber.String(),
		CommonName:       ca.subject,
		CreateTime:       formatTime(ca.cert.NotBefore.Add(clockSkewAllowance)),
		ExpirationTime:   formatTime(ca.cert.NotAfter),
		Instance:         instance,
		Sha1Fingerprint:  sha1Fingerprint(ca.cert.Raw),
	}
}

// sign issues a certificate for pub signed by the CA.
func (ca *certAuthority) sign(pub crypto.PublicKey, tmpl *x509.Certificate) (*x509.Certificate, string, error) {
	serial, err := randomSerial()
	if err != nil {
		return nil, "", err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		return nil, "", err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, "", err
	}
	return cert, encodeCertPEM(der), nil
}

// ephemeralCert signs a client certificate for pub, valid for d (at most an
// hour, as on the real API) and, unless it is zero, until notAfter at the
// latest (the expiry of the access token it is bound to).
func (ca *certAuthority) ephemeralCert(instance string, pub crypto.PublicKey, now time.Time, d time.Duration, notAfter time.Time) (*sqladmin.SslCert, error) {
	if d <= 0 || d > ephemeralCertLifetime {
		d = ephemeralCertLifetime
	}
	end := now.Add(d)
	if !notAfter.IsZero() && notAfter.Before(end) {
		end = notAfter
	}
	cert, certPEM, err := ca.sign(pub, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "cloudsql-emulator-client"},
		NotBefore:   now.Add(-clockSkewAllowance),
		NotAfter:    end,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	return &sqladmin.SslCert{
		Kind:             "sql#sslCert",
		Cert:             certPEM,
		CertSerialNumber: cert.SerialNumber.String(),
		CommonName:       cert.Subject.CommonName,
		CreateTime:       formatTime(now),
		ExpirationTime:   formatTime(cert.NotAfter),
		Instance:         instance,
		Sha1Fingerprint:  sha1Fingerprint(cert.Raw),
	}, nil
}

// serverCert issues a TLS server certificate whose common name is
// "project:instance", which is what Cloud SQL connectors verify for
// instances with a Google-managed internal CA.
func (ca *certAuthority) serverCert(project, instance string, dnsNames []string, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert, _, err := ca.sign(&key.PublicKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: project + ":" + instance},
		DNSNames:    dnsNames,
		NotBefore:   now.Add(-clockSkewAllowance),
		NotAfter:    now.Add(serverCertLifetime),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{cert.Raw, ca.cert.Raw}, PrivateKey: key, Leaf: cert}, nil
}

// parsePublicKeyPEM accepts a PEM block of type "PUBLIC KEY" or "RSA PUBLIC
// KEY" holding a PKIX or a PKCS#1 key. Cloud SQL connectors label PKIX keys
// "RSA PUBLIC KEY" (the Go connector does), so the label doesn't decide the
// encoding.
func parsePublicKeyPEM(s string) (crypto.PublicKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errInvalid("public_key is not a PEM-encoded public key.")
	}
	if block.Type != "PUBLIC KEY" && block.Type != "RSA PUBLIC KEY" {
		return nil, errInvalid("public_key has PEM type %q; use PUBLIC KEY or RSA PUBLIC KEY.", block.Type)
	}
	if pub, err := x509.ParsePKIXPublicKey(block.Bytes); err == nil {
		return pub, nil
	}
	pub, err := x509.ParsePKCS1PublicKey(block.Bytes)
	if err != nil {
		return nil, errInvalid("public_key is neither a PKIX nor a PKCS#1 public key: %v.", err)
	}
	return pub, nil
}

func encodeCertPEM(der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func sha1Fingerprint(der []byte) string {
	sum := sha1.Sum(der) // fingerprint, not a security boundary.
	return hex.EncodeToString(sum[:])
}

func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}
