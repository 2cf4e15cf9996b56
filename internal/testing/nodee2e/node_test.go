//go:build node

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

// Package nodee2e runs injected pods on a real kubelet (package nodetest): the
// Cloud SQL Auth Proxy as a native sidecar with its probes, the password-file
// writer as an init container of the application's user, psql in an init
// container and in the main container, as a non-root user with read-only root
// file systems, connecting through the proxy to the emulator's PostgreSQL;
// and applications that share the instance, each connecting as its own
// PostgresqlUser to its own PostgresqlDatabase and refused the others'.
// `make node-e2e` runs it, as root; it fails, never skips, where it cannot run.
package nodee2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/logtail"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/nodetest"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/nodetest/images"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/providerproc"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/tenants"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

const (
	project   = "node-e2e-123456"
	secretNS  = "crossplane-system"
	appNS     = "app"
	deniedNS  = "elsewhere"
	instName  = "orders"
	keySecret = "cloudsql-proxy-key"
	appUser   = 1000
	podDone   = 3 * time.Minute
)

func TestMain(m *testing.M) { os.Exit(nodetest.Main(m)) }

// world is what the test started inside the node's namespace.
type world struct {
	t        *testing.T
	g        Gomega
	node     *nodetest.Node
	c        client.Client
	kube     *kubernetes.Clientset
	endpoint string
	provider *providerproc.Process
	provBin  string
	dir      string
}

func TestInjectedPodRunsOnAKubelet(t *testing.T) {
	w := &world{t: t, g: NewWithT(t), dir: t.TempDir()}
	ctx := context.Background()

	proxyBin := os.Getenv("CLOUD_SQL_PROXY")
	w.g.Expect(proxyBin).NotTo(BeEmpty(), "CLOUD_SQL_PROXY names the Cloud SQL Auth Proxy binary: run make node-e2e")
	pgCfg, err := postgres.Config{}.Resolve()
	w.g.Expect(err).NotTo(HaveOccurred(), "PostgreSQL's server is needed: run make postgres")

	step(t, "building the images (pause, the proxy, the password-file writer, an application with psql)")
	imgDir := filepath.Join(w.dir, "images")
	w.g.Expect(os.MkdirAll(imgDir, 0o700)).To(Succeed())
	pause, err := images.Pause(imgDir)
	w.g.Expect(err).NotTo(HaveOccurred())
	proxy, err := images.Proxy(imgDir, proxyBin)
	w.g.Expect(err).NotTo(HaveOccurred())
	writer, err := images.Writer(imgDir)
	w.g.Expect(err).NotTo(HaveOccurred())
	app, err := images.App(imgDir)
	w.g.Expect(err).NotTo(HaveOccurred())

	step(t, "starting kube-apiserver, etcd, containerd, the kubelet and the Job controller in the node's network namespace")
	w.node, err = nodetest.Start(nodetest.Options{
		SandboxImage: pause.Ref,
		Images:       []string{pause.Tarball, proxy.Tarball, writer.Tarball, app.Tarball},
		// Jobs of injected pods complete (jobQuitsItsProxy).
		JobController: true,
		ControlPlane: []controlplane.Option{controlplane.WithWebhooks(envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(controlplane.RepoRoot(), "package", "webhookconfigurations")},
		})},
	})
	if w.node != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("node logs:\n%s", w.node.Logs(40))
			}
			_ = w.node.Stop()
		})
	}
	w.g.Expect(err).NotTo(HaveOccurred())
	w.c = w.node.Env.Client
	w.kube = kubernetes.NewForConfigOrDie(w.node.Env.Config)

	step(t, "starting the Cloud SQL emulator on the node's address, its instances on %s", nodetest.DataPlane)
	emuLog, err := os.Create(filepath.Join(w.dir, "emulator.log"))
	w.g.Expect(err).NotTo(HaveOccurred())
	emu := emulator.New(emulator.WithPostgres(pgCfg), emulator.WithDelays(2*time.Second, time.Second, time.Second),
		emulator.WithDataPlaneAddresses(nodetest.DataPlane), emulator.WithRequestLog(emuLog))
	t.Cleanup(func() {
		if t.Failed() {
			// A PostgreSQL that did not start shows in pods only as a closed connection.
			t.Logf("emulator log (tail):\n%s", logtail.Tail(emuLog.Name(), 40))
		}
		_ = emu.Close()
	})
	lis, err := net.Listen("tcp", net.JoinHostPort(nodetest.NodeIP, "0"))
	w.g.Expect(err).NotTo(HaveOccurred())
	hs := &http.Server{Handler: emu, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(lis) }()
	t.Cleanup(func() { _ = hs.Close() })
	w.endpoint = "http://" + lis.Addr().String() + "/"

	step(t, "building the provider and starting it with native sidecars, the proxy image %s and the writer image %s", proxy.Ref, writer.Ref)
	w.provBin, err = providerproc.Build(w.dir)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.startProvider(configfile.SidecarNative, proxy.Ref, writer.Ref)
	t.Cleanup(w.stopProvider)

	step(t, "a ProviderConfig whose proxies use a service-account key (its token_uri is the emulator), and a Ready instance that %s may use", appNS)
	key, err := emulator.ServiceAccountKey(project, strings.TrimSuffix(w.endpoint, "/")+emulator.TokenPath)
	w.g.Expect(err).NotTo(HaveOccurred())
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: instName}}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: instName + "-conn"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: append([]string{appNS, iamApp.Namespace}, tenants.Namespaces(tenants.Apps)...)}
	pi.Spec.ForProvider.Flags = []string{tenants.InstanceFlag}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: deniedNS}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: keySecret}, Data: map[string][]byte{"key.json": key}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ProviderConfigSpec{
			Project:     v1alpha1.Project{ProjectID: project, Endpoint: w.endpoint},
			Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
			ProxyCredentials: &xpv2.SecretKeySelector{
				SecretReference: xpv2.SecretReference{Namespace: secretNS, Name: keySecret}, Key: "key.json",
			},
		}},
	}
	for _, ns := range tenants.Namespaces(tenants.Apps) {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	for _, o := range objs {
		w.g.Expect(w.c.Create(ctx, o)).To(Succeed())
	}
	w.createWhenAdmitted(ctx, pi)
	w.g.Eventually(func(g Gomega) {
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
		g.Expect(pi.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), pi.GetCondition(xpv2.TypeSynced).Message)
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

	step(t, "a pod of %s runs psql in an init container after the native sidecar and in its main container, as user %d, read-only", appNS, appUser)
	pod := w.createPod(ctx, appNS, "native", app.Ref, true)
	w.g.Expect(pod.Spec.InitContainers[0].Name).NotTo(Equal("migrate"), "the injected containers come first")
	w.waitPhase(ctx, pod, corev1.PodSucceeded)
	for _, c := range []string{"migrate", "app"} {
		w.g.Expect(w.logs(ctx, pod, c)).To(Equal("postgres"), "container %s", c)
	}
	w.expectProxyServed(ctx, pod)
	w.socketConnects(ctx, "socket-native", app.Ref, false)

	step(t, "a pod of %s, which the instance does not allow, is denied", deniedNS)
	err = w.c.Create(ctx, w.podSpec(deniedNS, "denied", app.Ref, false))
	w.g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf(`may not be used from namespace %s`, deniedNS))))

	w.applicationsShareTheInstance(ctx, app.Ref)
	w.passwordsFollow(ctx, app.Ref)
	w.iamLogin(ctx, app.Ref)

	step(t, "restarting the provider with classic sidecars: the main container connects, the proxy keeps running")
	w.stopProvider()
	w.startProvider(configfile.SidecarClassic, proxy.Ref, writer.Ref)
	classic := w.createPod(ctx, appNS, "classic", app.Ref, false)
	w.g.Expect(classic.Spec.Containers[0].Name).To(Equal(podinject.ProxyContainerName), "the kubelet starts containers in order")
	w.g.Eventually(func(g Gomega) {
		got := &corev1.Pod{}
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(classic), got)).To(Succeed())
		st := containerStatus(got.Status.ContainerStatuses, "app")
		g.Expect(st).NotTo(BeNil())
		g.Expect(st.State.Terminated).NotTo(BeNil(), "app has not finished: %+v", st.State)
		g.Expect(st.State.Terminated.ExitCode).To(BeZero(), w.logs(ctx, got, "app"))
	}).WithTimeout(podDone).WithPolling(time.Second).Should(Succeed())
	w.g.Expect(w.logs(ctx, classic, "app")).To(Equal("postgres"))
	got := &corev1.Pod{}
	w.g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(classic), got)).To(Succeed())
	proxySt := containerStatus(got.Status.ContainerStatuses, podinject.ProxyContainerName)
	w.g.Expect(proxySt).NotTo(BeNil())
	w.g.Expect(proxySt.State.Running).NotTo(BeNil(), "a classic sidecar keeps running after the application")
	w.g.Expect(proxySt.RestartCount).To(BeZero())
	w.expectNoEvent(ctx, got, "FailedPostStartHook")
	w.expectNoEvent(ctx, got, "Unhealthy")

	w.jobQuitsItsProxy(ctx, app.Ref)
	w.socketConnects(ctx, "socket-classic", app.Ref, true)
}

func step(t *testing.T, format string, a ...any) {
	t.Helper()
	t.Logf("==> "+format, a...)
}

// podSpec is a pod that runs psql (in an init container too, when init) as
// appUser with read-only root file systems, requesting the instance.
func (w *world) podSpec(ns, name, image string, init bool) *corev1.Pod {
	psql := func(name string) corev1.Container {
		return corev1.Container{
			Name: name, Image: image, ImagePullPolicy: corev1.PullNever,
			Command: []string{"psql", "--no-psqlrc", "--tuples-only", "--no-align", "--command", "select current_user"},
			SecurityContext: &corev1.SecurityContext{
				ReadOnlyRootFilesystem:   ptr.To(true),
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{v1alpha1.AnnotationInstanceName: instName}},
		Spec: corev1.PodSpec{
			// No scheduler and no token controller: the pod names its node
			// and mounts no service account token.
			NodeName:                     nodetest.NodeName,
			AutomountServiceAccountToken: ptr.To(false),
			RestartPolicy:                corev1.RestartPolicyNever,
			SecurityContext:              &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](appUser), RunAsNonRoot: ptr.To(true)},
			Containers:                   []corev1.Container{psql("app")},
		},
	}
	if init {
		pod.Spec.InitContainers = []corev1.Container{psql("migrate")}
	}
	return pod
}

func (w *world) createPod(ctx context.Context, ns, name, image string, init bool) *corev1.Pod {
	pod := w.podSpec(ns, name, image, init)
	w.createWhenAdmitted(ctx, pod)
	got := &corev1.Pod{}
	w.g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	w.g.Expect(got.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
	return got
}

// waitPhase waits for the pod to reach phase, and fails early when it fails.
func (w *world) waitPhase(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase) {
	w.g.Eventually(func(g Gomega) {
		got := &corev1.Pod{}
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
		if got.Status.Phase == corev1.PodFailed {
			g.Expect(got.Status.Phase).NotTo(Equal(corev1.PodFailed), "%s", w.describe(ctx, got))
		}
		g.Expect(got.Status.Phase).To(Equal(phase), "%s", w.describe(ctx, got))
	}).WithTimeout(podDone).WithPolling(time.Second).Should(Succeed())
}

// expectProxyServed checks what the native sidecar did in a pod that has
// finished: it was never restarted, no probe of it failed while the
// application ran, and it exited 0 when the kubelet stopped it after the
// application. That the init container after it ran at all shows that its
// startup probe passed: a native sidecar's startup gates what follows. A
// liveness probe that the kubelet sends while it stops the sidecars (the
// proxy no longer listens) fails without harm, and is not counted.
func (w *world) expectProxyServed(ctx context.Context, pod *corev1.Pod) {
	got := &corev1.Pod{}
	w.g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	st := containerStatus(got.Status.InitContainerStatuses, podinject.ProxyContainerName)
	w.g.Expect(st).NotTo(BeNil())
	w.g.Expect(st.RestartCount).To(BeZero(), w.logs(ctx, got, podinject.ProxyContainerName))
	w.g.Expect(st.State.Terminated).NotTo(BeNil())
	w.g.Expect(st.State.Terminated.ExitCode).To(BeZero(), "the proxy exits 0 on SIGTERM")
	app := containerStatus(got.Status.ContainerStatuses, "app")
	w.g.Expect(app).NotTo(BeNil())
	w.g.Expect(app.State.Terminated).NotTo(BeNil())
	w.expectNoEventBefore(ctx, got, "Unhealthy", app.State.Terminated.FinishedAt.Time)
}

// expectNoEventBefore is expectNoEvent for the events first seen before
// until (the API's times are in whole seconds).
func (w *world) expectNoEventBefore(ctx context.Context, pod *corev1.Pod, reason string, until time.Time) {
	events := &corev1.EventList{}
	w.g.Expect(w.c.List(ctx, events, client.InNamespace(pod.Namespace))).To(Succeed())
	for _, e := range events.Items {
		if e.InvolvedObject.Name != pod.Name || e.Reason != reason {
			continue
		}
		if !e.FirstTimestamp.Time.Before(until.Truncate(time.Second)) {
			w.t.Logf("    %s/%s: %s at %s, once the application had ended at %s (the kubelet stopping the sidecars): %s",
				pod.Namespace, pod.Name, reason, e.FirstTimestamp.Format(time.TimeOnly), until.Format(time.TimeOnly), e.Message)
			continue
		}
		w.g.Expect(e.Reason).NotTo(Equal(reason), e.Message)
	}
}

// expectNoEvent checks that the kubelet recorded no event of reason for the pod
// (Unhealthy: a failed probe; FailedPostStartHook: a failed postStart hook).
func (w *world) expectNoEvent(ctx context.Context, pod *corev1.Pod, reason string) {
	events := &corev1.EventList{}
	w.g.Expect(w.c.List(ctx, events, client.InNamespace(pod.Namespace))).To(Succeed())
	for _, e := range events.Items {
		if e.InvolvedObject.Name == pod.Name {
			w.g.Expect(e.Reason).NotTo(Equal(reason), e.Message)
		}
	}
}

func containerStatus(sts []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range sts {
		if sts[i].Name == name {
			return &sts[i]
		}
	}
	return nil
}

// logs is what a container of the pod printed, trimmed.
func (w *world) logs(ctx context.Context, pod *corev1.Pod, container string) string {
	rc, err := w.kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container}).Stream(ctx)
	if err != nil {
		return "cannot read the logs: " + err.Error()
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return strings.TrimSpace(string(b))
}

// describe is the pod's container states and logs, for failure messages.
func (w *world) describe(ctx context.Context, pod *corev1.Pod) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "pod %s/%s phase %s\n", pod.Namespace, pod.Name, pod.Status.Phase)
	for _, st := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		fmt.Fprintf(&b, "  %s: %+v restarts %d\n    logs: %s\n", st.Name, st.State, st.RestartCount, w.logs(ctx, pod, st.Name))
	}
	return b.String()
}

// createWhenAdmitted creates o, retrying while the provider's webhooks start.
func (w *world) createWhenAdmitted(ctx context.Context, o client.Object) {
	w.g.Expect(providerproc.CreateWhenAdmitted(ctx, w.c, o)).To(Succeed())
}

// startProvider runs the provider binary with both webhooks, the sidecar mode
// and the images given.
func (w *world) startProvider(mode, proxyImage, writerImage string) {
	var err error
	w.provider, err = providerproc.Start(w.provBin, w.dir, w.node.Env, fmt.Sprintf(`[reconcile]
poll_interval = "10s"
busy_poll_interval = "1s"

[proxy]
image = %q
sidecar_mode = %q

[injection]
pgpass_writer_image = %q
default_allowed_namespaces = []
`, proxyImage, mode, writerImage))
	w.g.Expect(err).NotTo(HaveOccurred())
	p, t := w.provider, w.t
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("provider log %s (tail):\n%s", p.Log, logtail.Tail(p.Log, 40))
		}
	})
}

func (w *world) stopProvider() {
	w.provider.Stop()
	w.provider = nil
}
