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

// Package webhook holds what the provider's admission webhooks share: the TLS
// certificate of their server and the choice between native and classic
// sidecars. The webhooks themselves are in the subpackages instance (the
// PostgresqlInstance validator), postgresqlobject (the PostgresqlDatabase and
// PostgresqlUser validator) and podinject (the pod injector, which can run
// without the rest of the provider: `provider injector`).
//
// package/webhookconfigurations registers them with the API server; the Crossplane
// package manager fills in their service and CA bundle, and the tests of this
// package install the same file into a real API server.
package webhook

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
)

// Files of a certificate directory, as the Crossplane package manager writes
// them into $WEBHOOK_TLS_CERT_DIR.
const (
	CertName = "tls.crt"
	KeyName  = "tls.key"
	// CAName is written next to a self-signed certificate: the caBundle to put
	// into the webhook configurations.
	CAName = "ca.crt"
)

// EnvCertDir is where the Crossplane package manager puts the webhook
// certificate of a provider.
const EnvCertDir = "WEBHOOK_TLS_CERT_DIR"

// NativeSidecarsMinor is the first minor version of Kubernetes 1 with native
// sidecars (init containers with restartPolicy Always) enabled by default.
const NativeSidecarsMinor = 29

const (
	errServerVersion = "cannot read the version of the Kubernetes API server to choose between native and classic sidecars; set [proxy] sidecar_mode to native or classic to skip this"
	errParseVersion  = "cannot understand Kubernetes version %q (major %q, minor %q); set [proxy] sidecar_mode to native or classic"
	errSidecarMode   = "unknown [proxy] sidecar_mode %q"
	errWriteCert     = "cannot write a self-signed webhook certificate into %s"
	errMakeCert      = "cannot make a self-signed webhook certificate"
)

// NativeSidecars says whether injected proxies run as native sidecars: always in
// mode native, never in mode classic, and in mode auto when the API server's
// version, read once through sv, is 1.29 or newer.
func NativeSidecars(mode string, sv discovery.ServerVersionInterface) (bool, error) {
	switch mode {
	case configfile.SidecarNative:
		return true, nil
	case configfile.SidecarClassic:
		return false, nil
	case configfile.SidecarAuto:
		info, err := sv.ServerVersion()
		if err != nil {
			return false, errors.Wrap(err, errServerVersion)
		}
		return SupportsNativeSidecars(info)
	}
	return false, errors.Errorf(errSidecarMode, mode)
}

// SupportsNativeSidecars reports whether a Kubernetes version has native
// sidecars on by default. Managed clusters report minors such as "29+".
func SupportsNativeSidecars(v *version.Info) (bool, error) {
	major, errMajor := strconv.Atoi(strings.TrimSuffix(v.Major, "+"))
	minor, errMinor := strconv.Atoi(strings.TrimSuffix(v.Minor, "+"))
	if errMajor != nil || errMinor != nil {
		// Some builds leave major and minor empty; the git version is v1.29.3 or
		// v1.29.3-gke.1.
		parts := strings.SplitN(strings.TrimPrefix(v.GitVersion, "v"), ".", 3)
		if len(parts) < 2 {
			return false, errors.Errorf(errParseVersion, v.GitVersion, v.Major, v.Minor)
		}
		major, errMajor = strconv.Atoi(parts[0])
		minor, errMinor = strconv.Atoi(parts[1])
		if errMajor != nil || errMinor != nil {
			return false, errors.Errorf(errParseVersion, v.GitVersion, v.Major, v.Minor)
		}
	}
	return major > 1 || (major == 1 && minor >= NativeSidecarsMinor), nil
}

// CertDir chooses the directory of the webhook server's certificate: configured
// ([webhook] cert_dir) when set, else $WEBHOOK_TLS_CERT_DIR (which the Crossplane
// package manager sets), else a self-signed certificate for hosts, made in
// fallback. selfSigned is true in the last case; the CA to trust is then
// fallback/ca.crt.
func CertDir(configured, fallback string, hosts []string, now time.Time) (dir string, selfSigned bool, err error) {
	if configured != "" {
		return configured, false, nil
	}
	if d := os.Getenv(EnvCertDir); d != "" {
		return d, false, nil
	}
	return fallback, true, SelfSigned(fallback, hosts, now)
}

// SelfSigned writes into dir a CA (ca.crt) and a certificate for hosts (DNS names
// or IP addresses) signed by it (tls.crt, tls.key), valid for a year from now.
// For standalone and demo use, where no one else provides a certificate.
func SelfSigned(dir string, hosts []string, now time.Time) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return errors.Wrap(err, errMakeCert)
	}
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "provider-cloudsql-postgres webhook CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return errors.Wrap(err, errMakeCert)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return errors.Wrap(err, errMakeCert)
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "provider-cloudsql-postgres webhook"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return errors.Wrap(err, errMakeCert)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return errors.Wrap(err, errMakeCert)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errors.Wrapf(err, errWriteCert, dir)
	}
	for name, b := range map[string]*pem.Block{
		CAName:   {Type: "CERTIFICATE", Bytes: caDER},
		CertName: {Type: "CERTIFICATE", Bytes: leafDER},
		KeyName:  {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(b), 0o600); err != nil {
			return errors.Wrapf(err, errWriteCert, dir)
		}
	}
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}
