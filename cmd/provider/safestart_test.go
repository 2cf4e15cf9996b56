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

package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// beProvider makes the test binary run the provider's main instead of the
// tests: TestSafeStart runs the provider as a process of its own, as a pod would.
const beProvider = "CLOUDSQL_POSTGRES_TEST_BE_PROVIDER"

func TestMain(m *testing.M) {
	if os.Getenv(beProvider) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSafeStart starts the provider in a cluster that serves none of its kinds,
// as Crossplane's safe-start allows, then installs the namespaced group's CRDs
// (what a ManagedResourceActivationPolicy that activates only them leaves),
// then the cluster-scoped ProviderConfig CRDs, then the cluster-scoped
// PostgresqlInstance CRD: each controller starts when its kinds are served,
// and an instance of each kind created then becomes Ready.
func TestSafeStart(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	env, err := controlplane.Start(controlplane.WithCRDsFrom())
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	c := env.Client
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: defaultNamespace}})).To(Succeed())

	emu := httptest.NewServer(emulator.New(emulator.WithDelays(time.Second, time.Second, time.Second)))
	t.Cleanup(emu.Close)

	health, metrics := freeAddr(g), freeAddr(g)
	prov := startProvider(t, g, env, "[reconcile]\npoll_interval = \"10s\"\nbusy_poll_interval = \"1s\"\n",
		"--metrics-bind-address", metrics, "--metrics-secure=false", "--health-probe-bind-address", health)

	// No CRD of the provider's: it starts, stays up and says it is healthy.
	g.Eventually(func() (int, error) {
		resp, err := http.Get("http://" + health + "/healthz")
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(http.StatusOK))
	g.Consistently(prov.done, 5*time.Second).ShouldNot(BeClosed(), "the provider must wait for its CRDs, not exit")
	g.Expect(startedControllers(g, metrics)).To(ConsistOf("crd-gate"), "no controller but the CRD gate may start before its kinds are served")

	crds := filepath.Join(controlplane.RepoRoot(), "package", "crds")
	namespacedFirst(t, g, env, crds, emu.URL, metrics)

	// The ProviderConfig kinds: their controller starts and takes the
	// ProviderConfig into use accounting.
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{
		filepath.Join(crds, "cloudsql.travelaudience.com_providerconfigs.yaml"),
		filepath.Join(crds, "cloudsql.travelaudience.com_providerconfigusages.yaml"),
	}})
	g.Expect(err).NotTo(HaveOccurred())
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ProviderConfigSpec{
		Project: v1alpha1.Project{ProjectID: "safe-start-123456", Endpoint: emu.URL + "/"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
	}}
	g.Expect(c.Create(ctx, pc)).To(Succeed())
	g.Eventually(func() ([]string, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(pc), pc)
		return pc.GetFinalizers(), err
	}, 30*time.Second, 200*time.Millisecond).ShouldNot(BeEmpty(), "the ProviderConfig controller did not start once its CRDs were established")
	g.Expect(prov.done).NotTo(BeClosed(), "the provider must keep waiting for the PostgresqlInstance CRD")
	g.Expect(startedControllers(g, metrics)).To(ConsistOf(append(namespacedControllers, "providerconfig/providerconfig.cloudsql.travelaudience.com")))

	// The PostgresqlInstance kind: its controller starts, and an instance
	// becomes Ready with its connection secret.
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{
		filepath.Join(crds, "cloudsql.travelaudience.com_postgresqlinstances.yaml"),
	}})
	g.Expect(err).NotTo(HaveOccurred())
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "safe-start"}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "default"}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: defaultNamespace, Name: "safe-start-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	g.Eventually(func() error { return c.Create(ctx, pi) }, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	waitReady(g, c, pi)
	g.Expect(meta.GetExternalName(pi)).To(Equal("safe-start"))
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: defaultNamespace, Name: "safe-start-postgres"}, &corev1.Secret{})).To(Succeed())
	g.Expect(startedControllers(g, metrics)).To(ContainElement("managed/postgresqlinstance.cloudsql.travelaudience.com"))

	// A signal still stops it cleanly.
	g.Expect(prov.proc.Signal(syscall.SIGTERM)).To(Succeed())
	g.Eventually(prov.done, 30*time.Second).Should(BeClosed())
	g.Expect(prov.err).To(BeNil())
}

// namespacedControllers are the controllers that run once the namespaced
// group's CRDs are installed, and the CRD gate.
var namespacedControllers = []string{
	"crd-gate",
	"providerconfig/providerconfig.cloudsql.m.travelaudience.com",
	"providerconfig/clusterproviderconfig.cloudsql.m.travelaudience.com",
	"managed/postgresqlinstance.cloudsql.m.travelaudience.com",
	"managed/postgresqldatabase.cloudsql.m.travelaudience.com",
	"managed/postgresqluser.cloudsql.m.travelaudience.com",
	"managed/postgresqlbackup.cloudsql.m.travelaudience.com",
}

// namespacedFirst installs the namespaced group's CRDs alone: their
// controllers start, none of the cluster-scoped kinds', and a namespaced
// instance becomes Ready with its connection secret in its namespace.
func namespacedFirst(t *testing.T, g Gomega, env *controlplane.Env, crds, endpoint, metrics string) {
	t.Helper()
	ctx := context.Background()
	c := env.Client
	paths, err := filepath.Glob(filepath.Join(crds, nsv1alpha1.Group+"_*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(paths).To(HaveLen(8))
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: paths})
	g.Expect(err).NotTo(HaveOccurred())
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: nsv1alpha1.ClusterProviderConfigSpec{
		ProviderConfigSpec: v1alpha1.ProviderConfigSpec{
			Project: v1alpha1.Project{ProjectID: "safe-start-123456", Endpoint: endpoint + "/"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
		},
		Namespaces: &nsv1alpha1.NamespaceSelection{Names: []string{"team-a"}},
	}}
	g.Eventually(func() error { return c.Create(ctx, cpc) }, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})).To(Succeed())
	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "safe-start-ns"}}
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "default"}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "safe-start-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	g.Eventually(func() error { return c.Create(ctx, pi) }, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	waitReady(g, c, pi)
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "safe-start-postgres"}, &corev1.Secret{})).To(Succeed())
	g.Expect(startedControllers(g, metrics)).To(ConsistOf(namespacedControllers), "only the namespaced group's controllers may start")
}

// waitReady waits until the PostgresqlInstance, of either kind, is Ready.
func waitReady(g Gomega, c client.Client, pi interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}) {
	g.Eventually(func() (corev1.ConditionStatus, error) {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(pi), pi)
		return pi.GetCondition(xpv2.TypeReady).Status, err
	}, 90*time.Second, 500*time.Millisecond).Should(Equal(corev1.ConditionTrue),
		func() string { return fmt.Sprintf("conditions: %+v", pi.GetCondition(xpv2.TypeReady)) })
}

// startedControllers names the controllers that the provider started, from the
// controller_runtime_max_concurrent_reconciles metric each sets as it starts.
func startedControllers(g Gomega, metrics string) []string {
	resp, err := http.Get("http://" + metrics + "/metrics")
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	var started []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), `controller_runtime_max_concurrent_reconciles{controller="`)
		if name, _, found := strings.Cut(rest, `"`); ok && found {
			started = append(started, name)
		}
	}
	g.Expect(sc.Err()).NotTo(HaveOccurred())
	return started
}

// A providerProcess is the provider's main running as a process of its own.
type providerProcess struct {
	proc *os.Process
	// done is closed when it has exited, with err.
	done chan struct{}
	err  error
}

// startProvider runs the provider against env, with the configuration file
// config and args beyond the kubeconfig and namespace, serving no webhooks,
// until the test ends; its log is printed when the test fails.
func startProvider(t *testing.T, g Gomega, env *controlplane.Env, config string, args ...string) *providerProcess {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig(), 0o600)).To(Succeed())
	cfg := filepath.Join(dir, "config.toml")
	g.Expect(os.WriteFile(cfg, []byte(config), 0o600)).To(Succeed())
	out, err := os.Create(filepath.Join(dir, "provider.log"))
	g.Expect(err).NotTo(HaveOccurred())
	prov := exec.Command(os.Args[0], append([]string{"--config", cfg, "--kubeconfig", kubeconfig, "--namespace", defaultNamespace,
		"--instance-webhook=false", "--pod-injector=false"}, args...)...)
	prov.Env = append(os.Environ(), beProvider+"=1")
	prov.Stdout, prov.Stderr = out, out
	g.Expect(prov.Start()).To(Succeed())
	p := &providerProcess{proc: prov.Process, done: make(chan struct{})}
	go func() { p.err = prov.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.proc.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = p.proc.Kill()
		}
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			t.Logf("provider log:\n%s", b)
		}
	})
	return p
}

func freeAddr(g Gomega) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}
