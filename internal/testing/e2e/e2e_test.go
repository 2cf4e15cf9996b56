//go:build e2e

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

// Package e2e proves that an injected pod really connects: the provider binary
// with both webhooks, a real API server, the emulator backed by real PostgreSQL
// servers, the Cloud SQL Auth Proxy release the provider deploys (built from
// hack/proxy), and psql run with exactly the environment the injector wrote:
// as postgres (TestInjectedPodConnects), and as applications' own
// PostgresqlUsers on a shared instance (TestApplicationsShareAnInstance); and
// what recovery and upgrades keep of the rows written through the proxy
// (recovery_test.go).
// `make e2e` runs it (and `make test` runs `make e2e`); it needs
// KUBEBUILDER_ASSETS, CLOUD_SQL_PROXY and PostgreSQL's server, which those targets
// provide, and fails, never skips, without them.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/localpod"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/logtail"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/providerproc"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

const (
	project     = "e2e-project-123456"
	secretNS    = "crossplane-system"
	appNS       = "e2e-app"
	public      = "e2e-public"
	private     = "e2e-private"
	pcKey       = "with-proxy-key"
	keySecret   = "cloudsql-proxy-key"
	privateVPC  = "projects/" + project + "/global/networks/default"
	readyWithin = 3 * time.Minute
	teamNS      = "team-a" // of the namespaced instance
	otherTeamNS = "team-b"
	nsInstance  = "orders"
)

// world is everything the test started.
type world struct {
	t        *testing.T
	env      *controlplane.Env
	c        client.Client
	emu      *emulator.Server
	endpoint string
	proxyBin string
	dir      string
	provBin  string
	provider *providerproc.Process
}

func step(t *testing.T, format string, a ...any) {
	t.Helper()
	t.Logf("==> "+format, a...)
}

// newWorld starts the control plane with the provider's CRDs and webhook
// configurations, the emulator with its data plane, and the provider binary
// with both webhooks.
func newWorld(t *testing.T) *world {
	g := NewWithT(t)
	w := &world{t: t, dir: t.TempDir()}

	w.proxyBin = os.Getenv("CLOUD_SQL_PROXY")
	g.Expect(w.proxyBin).NotTo(BeEmpty(), "CLOUD_SQL_PROXY names the Cloud SQL Auth Proxy binary: run `make e2e`, which builds it from hack/proxy")
	g.Expect(w.proxyBin).To(BeAnExistingFile(), "run `make cloud-sql-proxy`")
	version, err := exec.Command(w.proxyBin, "--version").Output()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(version)).To(ContainSubstring(configfile.ProxyVersion), "the proxy under test is the release the provider deploys by default")
	pgCfg, err := postgres.Config{}.Resolve()
	g.Expect(err).NotTo(HaveOccurred(), "PostgreSQL's server is needed: run `make postgres`")

	// 1. Control plane, emulator with its data plane, the provider binary.
	step(t, "starting kube-apiserver and etcd with package/crds and package/webhookconfigurations")
	root := controlplane.RepoRoot()
	w.env, err = controlplane.Start(controlplane.WithWebhooks(envtest.WebhookInstallOptions{
		Paths: []string{filepath.Join(root, "package", "webhookconfigurations")},
	}))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = w.env.Stop() })
	w.c = w.env.Client

	step(t, "starting the Cloud SQL emulator with a PostgreSQL server per instance (%s); the proxy is %s", pgCfg.BinDir, strings.TrimSpace(string(version)))
	emuLog, err := os.Create(filepath.Join(w.dir, "emulator.log"))
	g.Expect(err).NotTo(HaveOccurred())
	w.emu = emulator.New(emulator.WithPostgres(pgCfg), emulator.WithDelays(3*time.Second, time.Second, 2*time.Second),
		emulator.WithRequestLog(emuLog))
	t.Cleanup(func() { _ = w.emu.Close() })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	hs := &http.Server{Handler: w.emu, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(lis) }()
	t.Cleanup(func() { _ = hs.Close() })
	w.endpoint = "http://" + lis.Addr().String() + "/"
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("emulator log (tail):\n%s", logtail.Tail(filepath.Join(w.dir, "emulator.log"), 40))
			if w.provider != nil {
				t.Logf("provider log (tail):\n%s", logtail.Tail(w.provider.Log, 60))
			}
		}
	})

	step(t, "building cmd/provider and starting it with both webhooks (sidecar_mode = auto: native sidecars on this API server)")
	w.provBin, err = providerproc.Build(w.dir)
	g.Expect(err).NotTo(HaveOccurred())
	w.startProvider(configfile.SidecarAuto)
	t.Cleanup(w.stopProvider)
	return w
}

func TestInjectedPodConnects(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t)

	// 2. ProviderConfigs, with and without proxy credentials; a public and a
	// private-IP-only instance.
	key, err := emulator.ServiceAccountKey(project, strings.TrimSuffix(w.endpoint, "/")+emulator.TokenPath)
	g.Expect(err).NotTo(HaveOccurred())
	keyRef := &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: secretNS, Name: keySecret}, Key: "key.json"}
	step(t, "creating ProviderConfig default (no credentials; proxies use the pod's identity) and %s (the provider and the proxies use a service-account key whose token_uri is the emulator)", pcKey)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: keySecret}, Data: map[string][]byte{
			"key.json": key,
		}},
		providerConfig("default", w.endpoint, nil),
		providerConfig(pcKey, w.endpoint, keyRef),
	} {
		g.Expect(w.c.Create(ctx, o)).To(Succeed())
	}

	step(t, "creating PostgresqlInstances %s (public IP) and %s (private IP only) and waiting for Ready", public, private)
	w.createWhenAdmitted(ctx, instance(public, "default", false))
	w.createWhenAdmitted(ctx, instance(private, pcKey, true))
	for _, n := range []string{public, private} {
		w.waitReady(ctx, &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	for _, n := range []string{public, private} {
		db, err := w.emu.Instance(project, n)
		g.Expect(err).NotTo(HaveOccurred())
		for _, ip := range db.IpAddresses {
			t.Logf("    %s: %s %s", n, ip.Type, ip.IpAddress)
			g.Expect(net.ParseIP(ip.IpAddress).IsLoopback()).To(BeTrue(), "data-plane addresses stay in 127.0.0.0/8")
		}
	}

	// 3-5. Annotated pods, admitted through the API server, run locally.
	step(t, "creating annotated pods through the API server: a native-sidecar pod and a pod running as user 1000")
	native := w.createPod(ctx, appNS, "native", public, nil)
	g.Expect(native.Spec.InitContainers).To(ContainElement(HaveField("Name", podinject.ProxyContainerName)), "on Kubernetes 1.35 the proxy is a native sidecar")
	asUser := w.createPod(ctx, appNS, "as-user-1000", private, &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true)})

	nativePod := w.connect(ctx, native, "")
	defer nativePod.Close()
	userPod := w.connect(ctx, asUser, "")
	defer userPod.Close()

	step(t, "a tampered password file is refused")
	w.tamper(ctx, userPod, asUser)

	step(t, "a client certificate issued for %s is refused by %s's server-side proxy", private, public)
	w.foreignCertificateRefused(ctx)

	step(t, "while %s is SUSPENDED, the native sidecar never passes its startup probe, so the application would not start", public)
	g.Expect(w.emu.SetInstanceState(project, public, emulator.StateSuspended)).To(Succeed())
	var suspendedOut bytes.Buffer
	_, err = nativePod.StartProxy(ctx, w.endpoint, &suspendedOut)
	g.Expect(err).To(MatchError(ContainSubstring("exited before its startup probe passed")), suspendedOut.String())
	g.Expect(suspendedOut.String()).To(ContainSubstring("Connection test failed"))
	t.Logf("    %v", err)
	g.Expect(w.emu.SetInstanceState(project, public, emulator.StateRunnable)).To(Succeed())

	// 6. The namespaced kind: an instance of team-a, through a ClusterProviderConfig
	// whose proxy key is copied into team-a, used by a pod of team-a only.
	step(t, "creating ClusterProviderConfig %s and the namespaced PostgresqlInstance %s/%s, and waiting for Ready", pcKey, teamNS, nsInstance)
	keyed := providerConfig(pcKey, w.endpoint, keyRef)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: teamNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: otherTeamNS}},
		// Lent to teamNS alone, as a platform team would.
		&nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pcKey}, Spec: nsv1alpha1.ClusterProviderConfigSpec{
			ProviderConfigSpec: keyed.Spec, Namespaces: &nsv1alpha1.NamespaceSelection{Names: []string{teamNS}},
		}},
	} {
		g.Expect(w.c.Create(ctx, o)).To(Succeed())
	}
	npi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: teamNS, Name: nsInstance}}
	npi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: pcKey}
	npi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: nsInstance + "-conn"}
	npi.Spec.ForProvider.Name = ptr.To("e2e-" + teamNS + "-" + nsInstance)
	npi.Spec.ForProvider.Networking.PublicIP = v1alpha1.PublicIP{Enabled: true}
	w.createWhenAdmitted(ctx, npi)
	w.waitReady(ctx, npi)
	g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: teamNS, Name: nsInstance + "-conn"}, &corev1.Secret{})).To(Succeed(), "the connection secret is in the instance's namespace")

	step(t, "a pod of %s that names %s connects through it; a pod of %s that names it is denied", teamNS, nsInstance, otherTeamNS)
	teamPod := w.createPod(ctx, teamNS, "orders-app", nsInstance, nil)
	g.Expect(teamPod.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.m.travelaudience.com/"+nsInstance))
	w.connect(ctx, teamPod, "").Close()
	err = w.c.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: otherTeamNS, Name: "orders-app", Annotations: map[string]string{v1alpha1.AnnotationInstanceName: nsInstance}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "postgres:15"}}},
	})
	g.Expect(err).To(MatchError(ContainSubstring("a namespaced PostgresqlInstance serves only pods of its own namespace")))
	t.Logf("    denied: %v", err)

	// 7. Restart, out-of-band change, self-healing password.
	step(t, "restarting the provider (now with sidecar_mode = classic)")
	w.stopProvider()
	w.startProvider(configfile.SidecarClassic)

	step(t, "changing %s out of band (backup start time); the provider reverts it", public)
	before, err := w.emu.Instance(project, public)
	g.Expect(err).NotTo(HaveOccurred())
	want := before.Settings.BackupConfiguration.StartTime
	g.Expect(w.emu.MutateInstance(project, public, func(db *sqladmin.DatabaseInstance) {
		db.Settings.BackupConfiguration.StartTime = "05:00"
	})).To(Succeed())
	g.Eventually(func() string {
		db, _ := w.emu.Instance(project, public)
		return db.Settings.BackupConfiguration.StartTime
	}).WithTimeout(90*time.Second).WithPolling(time.Second).Should(Equal(want), "the provider puts the backup start time back")
	t.Logf("    backup start time is %s again", want)
	w.connect(ctx, native, "connecting again after the restart and the revert").Close()

	step(t, "deleting the password from %s's connection secret: the provider sets a new one with users.update", public)
	w.newPassword(ctx, public)

	step(t, "a classic-sidecar pod admitted now connects with the new password")
	classic := w.createPod(ctx, appNS, "classic", public, nil)
	g.Expect(classic.Spec.Containers).To(ContainElement(HaveField("Name", podinject.ProxyContainerName)), "classic mode appends the proxy to the containers")
	w.connect(ctx, classic, "").Close()

	step(t, "the password file written before the change no longer works")
	w.refused(ctx, nativePod, "psql with the old password file")

	step(t, "a running pod follows two password changes of %s with no restart: its proxy and its password-file follower keep running while the kubelet's sync brings each new secret", public)
	w.follows(ctx, classic, public)
}

// newPassword deletes the password from the connection secret of instance
// and waits until the provider has set a new one, Cloud SQL has it and it
// is confirmed; it returns it.
func (w *world) newPassword(ctx context.Context, instance string) string {
	g := NewWithT(w.t)
	conn := &corev1.Secret{}
	g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: instance + "-conn"}, conn)).To(Succeed())
	oldPassword := string(conn.Data[cloudsql.ConnectionKeyPassword])
	g.Expect(oldPassword).NotTo(BeEmpty())
	delete(conn.Data, cloudsql.ConnectionKeyPassword)
	g.Expect(w.c.Update(ctx, conn)).To(Succeed())
	var newPassword string
	g.Eventually(func(g Gomega) {
		s := &corev1.Secret{}
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(conn), s)).To(Succeed())
		newPassword = string(s.Data[cloudsql.ConnectionKeyPassword])
		g.Expect(newPassword).NotTo(BeEmpty())
		g.Expect(newPassword).NotTo(Equal(oldPassword))
		g.Expect(w.emu.PasswordIs(project, instance, cloudsql.RootUser, newPassword)).To(BeTrue())
		// Confirmed once the provider saw its users.update's operation
		// done; until then the injector refuses new pods of the instance.
		g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPasswordUnconfirmed))
	}).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(Succeed())
	w.t.Logf("    the connection secret holds a new password, confirmed, and Cloud SQL has it")
	return newPassword
}

// follows runs pod's proxy, password-file writers and followers, and its
// psql; then, twice, changes the password of instance and syncs the pod's
// secret volumes as the kubelet does until the same running pod's next psql
// connects with the new password. Neither the proxy nor a follower exits.
func (w *world) follows(ctx context.Context, pod *corev1.Pod, instance string) {
	g := NewWithT(w.t)
	lp := w.loadPod(ctx, pod)
	var out bytes.Buffer
	proxy, err := lp.StartProxy(ctx, w.endpoint, &out)
	g.Expect(err).NotTo(HaveOccurred(), "proxy output:\n%s", out.String())
	defer func() { _ = proxy.Stop() }()
	g.Expect(lp.WritePasswordFiles(ctx)).To(Succeed())
	followers, err := lp.StartFollowers(ctx, &out)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() {
		for _, f := range followers {
			g.Expect(f.Stop()).To(Succeed(), "a follower ends with exit code 0 on SIGTERM")
		}
	}()
	psql := func(g Gomega) {
		got, err := w.runApp(ctx, lp)
		g.Expect(err).NotTo(HaveOccurred(), "psql: %s", got)
		g.Expect(strings.TrimSpace(got)).To(Equal(cloudsql.RootUser))
	}
	psql(g)
	for i := 1; i <= 2; i++ {
		w.newPassword(ctx, instance)
		confirmed := time.Now()
		g.Eventually(func(g Gomega) {
			g.Expect(lp.SyncSecrets(ctx, w.c)).To(Succeed())
			psql(g)
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed(), "output of the proxy and the followers:\n%s", out.String())
		w.t.Logf("    change %d: the running pod's psql connects again %s after the new password was confirmed (followers read the secret every %s)",
			i, time.Since(confirmed).Round(100*time.Millisecond), podinject.FollowEvery)
	}
	g.Expect(proxy.Running()).To(BeTrue(), "the proxy was not restarted")
	for _, f := range followers {
		g.Expect(f.Running()).To(BeTrue(), "the follower was not restarted")
	}
}

// startProvider runs the provider binary against the control plane, serving both
// webhooks where envtest registered them.
func (w *world) startProvider(sidecarMode string) {
	var err error
	w.provider, err = providerproc.Start(w.provBin, w.dir, w.env, fmt.Sprintf(`[reconcile]
poll_interval = "10s"
busy_poll_interval = "1s"

[proxy]
sidecar_mode = %q

# The with-proxy-key ProviderConfig's service-account key gets its tokens from the
# emulator's token_uri, not Google's.
[credentials]
allow_key_token_uri = true
`, sidecarMode))
	NewWithT(w.t).Expect(err).NotTo(HaveOccurred())
}

func (w *world) stopProvider() {
	w.provider.Stop()
	w.provider = nil
}

// createWhenAdmitted creates o, retrying while the provider's webhooks start.
func (w *world) createWhenAdmitted(ctx context.Context, o client.Object) {
	NewWithT(w.t).Expect(providerproc.CreateWhenAdmitted(ctx, w.c, o)).To(Succeed())
}

// conditioned is a PostgresqlInstance of either kind.
type conditioned interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

func (w *world) waitReady(ctx context.Context, pi conditioned) {
	g := NewWithT(w.t)
	g.Eventually(func(g Gomega) {
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
		g.Expect(pi.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), "%s: %s", pi.GetName(), pi.GetCondition(xpv2.TypeSynced).Message)
	}).WithTimeout(readyWithin).WithPolling(time.Second).Should(Succeed())
	w.t.Logf("    %s is Ready", client.ObjectKeyFromObject(pi))
}

// createPod creates an annotated pod whose application runs psql, and returns it
// as stored.
func (w *world) createPod(ctx context.Context, ns, name, instanceName string, sc *corev1.PodSecurityContext) *corev1.Pod {
	return w.createAnnotatedPod(ctx, ns, name, map[string]string{v1alpha1.AnnotationInstanceName: instanceName}, sc)
}

// createAnnotatedPod is createPod with the pod's annotations, which name its
// instance and may shape its proxy.
func (w *world) createAnnotatedPod(ctx context.Context, ns, name string, annotations map[string]string, sc *corev1.PodSecurityContext) *corev1.Pod {
	g := NewWithT(w.t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{
			SecurityContext: sc,
			Containers: []corev1.Container{{
				Name: "app", Image: "postgres:15",
				Command: []string{"psql", "--no-psqlrc", "--tuples-only", "--no-align", "--command", "select current_user"},
			}},
		},
	}
	w.createWhenAdmitted(ctx, pod)
	got := &corev1.Pod{}
	g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
	app, _ := findContainer(got, "app")
	proxy, _ := findContainer(got, podinject.ProxyContainerName)
	g.Expect(proxy).NotTo(BeNil())
	var envs []string
	for _, e := range app.Env {
		if strings.HasPrefix(e.Name, "PG") {
			envs = append(envs, e.Name+"="+e.Value)
		}
	}
	// libpq must dial exactly where the proxy listens: its TCP address, or
	// the Unix socket <PGHOST>/.s.PGSQL.<PGPORT>.
	env := envOf(got, "app")
	if annotations[v1alpha1.AnnotationProxyUnixSocket] == "true" {
		g.Expect(proxy.Args).To(ContainElement(HaveSuffix("?unix-socket-path="+env[podinject.EnvHost]+"/.s.PGSQL."+env[podinject.EnvPort])), "PGHOST and PGPORT name the proxy's socket")
	} else {
		g.Expect(proxy.Args).To(ContainElement("--address="+env[podinject.EnvHost]), "PGHOST names the proxy's --address")
		g.Expect(proxy.Args).To(ContainElement("--port="+env[podinject.EnvPort]), "PGPORT names the proxy's --port")
	}
	// Every configuration here has the emulator's endpoint, which the proxy
	// needs as much as the provider does.
	g.Expect(proxy.Args).To(ContainElement(podinject.ProxyEndpointFlag+"="+w.endpoint), "the proxy calls the Admin API at the configuration's endpoint")
	w.t.Logf("    pod %s/%s stored with app env %s", ns, name, strings.Join(envs, " "))
	return got
}

// connect runs the pod's injected containers and its application as local
// processes: the proxy until its startup probe passes, the password-file writers,
// then the application's psql, which must print postgres. The proxy stops before
// connect returns; the returned pod keeps its password files.
func (w *world) connect(ctx context.Context, pod *corev1.Pod, why string) *localpod.Pod {
	g := NewWithT(w.t)
	if why != "" {
		step(w.t, "%s", why)
	}
	lp, err := localpod.Load(ctx, w.c, pod, localpod.WithImage(configfile.ProxyImageRepository, w.proxyBin))
	g.Expect(err).NotTo(HaveOccurred())
	// Removed with the test even when a step below fails.
	w.t.Cleanup(func() { _ = lp.Close() })
	var proxyOut bytes.Buffer
	proxy, err := lp.StartProxy(ctx, w.endpoint, &proxyOut)
	g.Expect(err).NotTo(HaveOccurred(), "proxy output:\n%s", proxyOut.String())
	defer func() {
		_ = proxy.Stop()
		if w.t.Failed() {
			w.t.Logf("proxy output of pod %s:\n%s", pod.Name, proxyOut.String())
		}
	}()
	var endpoints []string
	for _, a := range proxy.Args {
		if strings.HasPrefix(a, podinject.ProxyEndpointFlag) {
			endpoints = append(endpoints, a)
		}
	}
	g.Expect(endpoints).To(Equal([]string{podinject.ProxyEndpointFlag + "=" + w.endpoint}), "the proxy runs with the pod's endpoint, which localpod does not add again")
	w.t.Logf("    pod %s: cloud-sql-proxy %s: startup probe passed", pod.Name, strings.Join(proxy.Args, " "))
	g.Expect(lp.WritePasswordFiles(ctx)).To(Succeed())
	out, err := w.runApp(ctx, lp)
	g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s", out, proxyOut.String())
	g.Expect(strings.TrimSpace(out)).To(Equal(cloudsql.RootUser))
	w.t.Logf("    pod %s: psql -c 'select current_user' printed: %s", pod.Name, strings.TrimSpace(out))
	return lp
}

// runApp runs the pod's container app, with extraArgs after its own.
func (w *world) runApp(ctx context.Context, lp *localpod.Pod, extraArgs ...string) (string, error) {
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return lp.Run(rctx, "app", extraArgs...)
}

// tamper rewrites the pod's password file with a wrong password (same owner and
// mode) and checks that psql is refused, then puts it back.
func (w *world) tamper(ctx context.Context, lp *localpod.Pod, pod *corev1.Pod) {
	g := NewWithT(w.t)
	app, _ := findContainer(pod, "app")
	var passfile, port string
	for _, e := range app.Env {
		switch e.Name {
		case podinject.EnvPassFile:
			passfile = e.Value
		case podinject.EnvPort:
			port = e.Value
		}
	}
	g.Expect(passfile).NotTo(BeEmpty())
	local, err := lp.LocalPath("app", passfile)
	g.Expect(err).NotTo(HaveOccurred())
	good, err := os.ReadFile(local)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(good)).To(HavePrefix(podinject.ProxyAddress+":"+port+":"), "the password file names the proxy's address alone")
	g.Expect(os.WriteFile(local, []byte(cloudsql.Pgpass(podinject.ProxyAddress, port, cloudsql.RootUser, "not-the-password")), 0o600)).To(Succeed())

	w.refused(ctx, lp, "psql with a tampered password file")
	g.Expect(os.WriteFile(local, good, 0o600)).To(Succeed())
}

// refused runs the pod's proxy and application and expects PostgreSQL to refuse
// the password.
func (w *world) refused(ctx context.Context, lp *localpod.Pod, what string) {
	g := NewWithT(w.t)
	var proxyOut bytes.Buffer
	proxy, err := lp.StartProxy(ctx, w.endpoint, &proxyOut)
	g.Expect(err).NotTo(HaveOccurred(), proxyOut.String())
	defer func() { _ = proxy.Stop() }()
	out, err := w.runApp(ctx, lp)
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("password authentication failed"))
	w.t.Logf("    %s: %s", what, firstLine(out))
}

// foreignCertificateRefused dials the public instance's server-side proxy with a
// client certificate that generateEphemeralCert issued for the private instance.
func (w *world) foreignCertificateRefused(ctx context.Context) {
	g := NewWithT(w.t)
	svc, err := sqladmin.NewService(ctx, optionsOf(w.endpoint)...)
	g.Expect(err).NotTo(HaveOccurred())
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	g.Expect(err).NotTo(HaveOccurred())
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := svc.Connect.GenerateEphemeralCert(project, private, &sqladmin.GenerateEphemeralCertRequest{
		PublicKey: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
	}).Context(ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	block, _ := pem.Decode([]byte(resp.EphemeralCert.Cert))
	g.Expect(block).NotTo(BeNil())

	target, err := svc.Connect.Get(project, public).Context(ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM([]byte(target.ServerCaCert.Cert))).To(BeTrue())
	var addr string
	for _, ip := range target.IpAddresses {
		if ip.Type == "PRIMARY" {
			addr = ip.IpAddress
		}
	}
	g.Expect(addr).NotTo(BeEmpty())
	foreign := &tls.Certificate{Certificate: [][]byte{block.Bytes}, PrivateKey: key}
	conn, err := tls.Dial("tcp", net.JoinHostPort(addr, fmt.Sprint(emulator.ServerProxyPort)), &tls.Config{
		// Sent whatever CAs the server names, so that it is the server that judges it.
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return foreign, nil },
		RootCAs:              roots,
		ServerName:           strings.TrimSuffix(target.DnsName, "."),
		MinVersion:           tls.VersionTLS13,
	})
	if err == nil {
		// TLS 1.3 clients learn of a refused certificate on their first read.
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		_ = conn.Close()
	}
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("certificate"))
	w.t.Logf("    refused: %v", err)
}

// providerConfig is a configuration of the emulator at endpoint. With a key,
// the provider and the proxies both authenticate with it, as they would with a
// key from Google (its token_uri is the emulator's); without one, the provider
// sends no credentials and the proxies use the pod's identity.
func providerConfig(name, endpoint string, key *xpv2.SecretKeySelector) *v1alpha1.ProviderConfig {
	creds := v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}
	if key != nil {
		creds = v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceSecret, CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: key}}
	}
	return &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ProviderConfigSpec{
			Project:          v1alpha1.Project{ProjectID: project, Endpoint: endpoint},
			Credentials:      creds,
			ProxyCredentials: key,
		},
	}
}

func instance(name, pc string, privateOnly bool) *v1alpha1.PostgresqlInstance {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: pc}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: name + "-conn"}
	// The provider allows no namespace by default.
	pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{appNS}}
	if privateOnly {
		pi.Spec.ForProvider.Networking.PrivateIP = v1alpha1.PrivateIP{Enabled: true, Network: privateVPC}
	} else {
		pi.Spec.ForProvider.Networking.PublicIP = v1alpha1.PublicIP{Enabled: true}
	}
	return pi
}

// optionsOf are the options of an Admin API client of the emulator at
// endpoint, which asks no credentials of the test.
func optionsOf(endpoint string) []option.ClientOption {
	return []option.ClientOption{option.WithEndpoint(endpoint), option.WithoutAuthentication()}
}

func findContainer(pod *corev1.Pod, name string) (*corev1.Container, bool) {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i], true
			}
		}
	}
	return nil, false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
