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

package webhook_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook"
)

func TestSupportsNativeSidecars(t *testing.T) {
	cases := map[string]struct {
		v    version.Info
		want bool
		err  string
	}{
		"1.28":          {v: version.Info{Major: "1", Minor: "28", GitVersion: "v1.28.9"}, want: false},
		"1.29":          {v: version.Info{Major: "1", Minor: "29", GitVersion: "v1.29.0"}, want: true},
		"1.35":          {v: version.Info{Major: "1", Minor: "35", GitVersion: "v1.35.4"}, want: true},
		"Managed29Plus": {v: version.Info{Major: "1", Minor: "29+", GitVersion: "v1.29.3-gke.1"}, want: true},
		"Managed27Plus": {v: version.Info{Major: "1", Minor: "27+", GitVersion: "v1.27.3-eks-1"}, want: false},
		"OnlyGit":       {v: version.Info{GitVersion: "v1.30.1"}, want: true},
		"OnlyOldGit":    {v: version.Info{GitVersion: "v1.26.0"}, want: false},
		"Nonsense":      {v: version.Info{GitVersion: "master"}, err: `cannot understand Kubernetes version "master"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := webhook.SupportsNativeSidecars(&tc.v)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestSidecarModeOverridesTheServerVersion(t *testing.T) {
	g := NewWithT(t)
	// A discovery client that cannot reach anything: forced modes must not ask.
	dc := discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: "http://127.0.0.1:1"})
	native, err := webhook.NativeSidecars(configfile.SidecarNative, dc)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(native).To(BeTrue())
	native, err = webhook.NativeSidecars(configfile.SidecarClassic, dc)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(native).To(BeFalse())
	_, err = webhook.NativeSidecars(configfile.SidecarAuto, dc)
	g.Expect(err).To(MatchError(ContainSubstring("cannot read the version of the Kubernetes API server")))
	_, err = webhook.NativeSidecars("sometimes", dc)
	g.Expect(err).To(MatchError(ContainSubstring(`unknown [proxy] sidecar_mode "sometimes"`)))
}

func TestCertDir(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	t.Setenv(webhook.EnvCertDir, "")

	dir, self, err := webhook.CertDir("/configured", t.TempDir(), nil, now)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect([]any{dir, self}).To(Equal([]any{"/configured", false}))

	t.Setenv(webhook.EnvCertDir, "/from-crossplane")
	dir, self, err = webhook.CertDir("", t.TempDir(), nil, now)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect([]any{dir, self}).To(Equal([]any{"/from-crossplane", false}))

	t.Setenv(webhook.EnvCertDir, "")
	fallback := filepath.Join(t.TempDir(), "certs")
	dir, self, err = webhook.CertDir("", fallback, []string{"provider.crossplane-system.svc", "127.0.0.1"}, now)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect([]any{dir, self}).To(Equal([]any{fallback, true}))

	// The certificate serves the hosts and is trusted through ca.crt.
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, webhook.CertName), filepath.Join(dir, webhook.KeyName))
	g.Expect(err).ToNot(HaveOccurred())
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	g.Expect(err).ToNot(HaveOccurred())
	ca, err := os.ReadFile(filepath.Join(dir, webhook.CAName))
	g.Expect(err).ToNot(HaveOccurred())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(ca)).To(BeTrue())
	for _, host := range []string{"provider.crossplane-system.svc", "127.0.0.1"} {
		_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, CurrentTime: now})
		g.Expect(err).ToNot(HaveOccurred(), host)
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "elsewhere.example.com", CurrentTime: now})
	g.Expect(err).To(HaveOccurred())
	info, err := os.Stat(filepath.Join(dir, webhook.KeyName))
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)))
}
