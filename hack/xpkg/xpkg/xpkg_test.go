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

package xpkg_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/travelaudience/cloudsql-postgres-operator/hack/xpkg/xpkg"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
)

func TestImageIsMinimalAndNonRoot(t *testing.T) {
	g := NewWithT(t)
	img, err := xpkg.Image("tool", []byte("#!binary"), []byte("-----BEGIN CERTIFICATE-----\n"))
	g.Expect(err).ToNot(HaveOccurred())
	cfg, err := img.ConfigFile()
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(cfg.Config.Entrypoint).To(Equal([]string{"/usr/local/bin/tool"}))
	g.Expect(cfg.Config.User).To(Equal("65532:65532"))
	g.Expect(cfg.Config.Env).To(ContainElement("SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"))
	g.Expect(cfg.OS).To(Equal("linux"))

	files := map[string]bool{}
	rc := mutate.Extract(img)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	g.Expect(err).ToNot(HaveOccurred())
	for _, f := range []string{"usr/local/bin/tool", "etc/ssl/certs/ca-certificates.crt", "etc/passwd"} {
		files[f] = strings.Contains(string(data), f)
	}
	g.Expect(files).To(HaveEach(BeTrue()))
	g.Expect(string(data)).ToNot(ContainSubstring("bin/sh"), "the image must hold no shell")

	// The same inputs give the same image.
	again, err := xpkg.Image("tool", []byte("#!binary"), []byte("-----BEGIN CERTIFICATE-----\n"))
	g.Expect(err).ToNot(HaveOccurred())
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	g.Expect(d1).To(Equal(d2))
}

// TestPackages builds both packages as `make xpkg` does and checks what users would
// install: the objects parse, the provider holds exactly package/crds and the
// webhook configurations, and each runtime image's entrypoint runs --help.
func TestPackages(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	cli := os.Getenv("CROSSPLANE_CLI")
	if cli == "" {
		t.Fatal("CROSSPLANE_CLI is not set: run the tests with `make test`, which builds the Crossplane CLI from hack/crank")
	}
	root := controlplane.RepoRoot()
	out := t.TempDir()
	built := map[string]*xpkg.Contents{}
	for _, p := range xpkg.Packages {
		f, err := xpkg.Build(context.Background(), xpkg.BuildOptions{RepoRoot: root, OutDir: out, CrossplaneCLI: cli, Log: testWriter{t}}, p)
		g.Expect(err).ToNot(HaveOccurred())
		c, err := xpkg.Read(f)
		g.Expect(err).ToNot(HaveOccurred(), f)
		built[p.Name] = c
	}

	provider := built["provider-cloudsql-postgres"]
	g.Expect(provider.Objects[0].GetKind()).To(Equal("Provider"))
	g.Expect(provider.Objects[0].GetAPIVersion()).To(Equal("meta.pkg.crossplane.io/v1"))
	// safe-start: Crossplane may leave the PostgresqlInstance CRD out until a
	// ManagedResourceActivationPolicy activates it (the provider waits for it).
	caps, _, err := unstructured.NestedStringSlice(provider.Objects[0].Object, "spec", "capabilities")
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(caps).To(ContainElement("safe-start"))
	var crds, hooks []string
	for _, o := range provider.Objects[1:] {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			crds = append(crds, o.GetName())
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			hooks = append(hooks, o.GetKind())
		default:
			t.Errorf("the provider package holds an unexpected %s %s", o.GetKind(), o.GetName())
		}
	}
	g.Expect(crds).To(ConsistOf(names(g, filepath.Join(root, "package", "crds"), "CustomResourceDefinition")))
	g.Expect(hooks).To(ConsistOf("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"))

	// Development-only files (functions.yaml) stay out of what users install.
	g.Expect(string(provider.Files["/.up/examples.yaml"])).ToNot(ContainSubstring("render.crossplane.io"))
	g.Expect(string(provider.Files["/.up/examples.yaml"])).To(ContainSubstring("kind: PostgresqlInstance"))

	function := built["function-cloudsql-postgres"]
	g.Expect(function.Objects[0].GetKind()).To(Equal("Function"))
	g.Expect(function.Objects).To(HaveLen(1), "the function package holds only its meta object")

	installs(t, provider)

	for name, c := range built {
		g.Expect(c.Config.Config.User).To(Equal("65532:65532"), name)
		g.Expect(c.Config.Config.Entrypoint).To(HaveLen(1), name)
		bin, ok := c.Files[c.Config.Config.Entrypoint[0]]
		g.Expect(ok).To(BeTrue(), "%s: the entrypoint %s is not in the image", name, c.Config.Config.Entrypoint[0])
		path := filepath.Join(t.TempDir(), "entrypoint")
		g.Expect(os.WriteFile(path, bin, 0o755)).To(Succeed())
		help, err := exec.Command(path, "--help").CombinedOutput()
		g.Expect(err).ToNot(HaveOccurred(), "%s: %s --help: %s", name, c.Config.Config.Entrypoint[0], help)
	}
}

// names lists the metadata.names of the objects of a kind in a directory's YAML files.
func names(g Gomega, dir, kind string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	g.Expect(err).ToNot(HaveOccurred())
	var out []string
	for _, f := range files {
		objs, err := manifests.ReadFile(f)
		g.Expect(err).ToNot(HaveOccurred())
		for _, o := range objs {
			if o.GetKind() == kind {
				out = append(out, o.GetName())
			}
		}
	}
	sort.Strings(out)
	return out
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// installs follows the README's real-cluster steps as far as a local control plane
// allows: the CRDs from the built package (not from the repository) go into an API
// server that also has Crossplane's CRDs, then the install manifests and the
// examples are applied.
func installs(t *testing.T, provider *xpkg.Contents) {
	g := NewWithT(t)
	crossplaneCRDs := os.Getenv("CROSSPLANE_CRDS")
	if crossplaneCRDs == "" {
		t.Fatal("CROSSPLANE_CRDS is not set: run the tests with `make test`")
	}
	dir := t.TempDir()
	for _, o := range provider.Objects {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		b, err := o.MarshalJSON()
		g.Expect(err).ToNot(HaveOccurred())
		g.Expect(os.WriteFile(filepath.Join(dir, o.GetName()+".json"), b, 0o600)).To(Succeed())
	}
	env, err := controlplane.Start(controlplane.WithCRDsFrom(dir, crossplaneCRDs))
	g.Expect(err).ToNot(HaveOccurred())
	defer func() { _ = env.Stop() }()

	root := controlplane.RepoRoot()
	var files []string
	for _, glob := range []string{"examples/install/*.yaml", "examples/*.yaml", "examples/namespaced/*.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		g.Expect(err).ToNot(HaveOccurred())
		files = append(files, m...)
	}
	g.Expect(env.Client.Create(context.Background(), namespace("crossplane-system"))).To(Succeed())
	g.Expect(env.Client.Create(context.Background(), namespace("team-a"))).To(Succeed(), "the namespaced examples' namespace")
	for _, f := range files {
		objs, err := manifests.ReadFile(f)
		g.Expect(err).ToNot(HaveOccurred())
		for _, o := range objs {
			g.Expect(env.Client.Create(context.Background(), o)).To(Succeed(), "%s: %s %s", filepath.Base(f), o.GetKind(), o.GetName())
		}
	}
}
