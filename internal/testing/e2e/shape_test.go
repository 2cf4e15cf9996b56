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

package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/localpod"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

const shaped = "e2e-shaped"

// urlApp is a container added to the local copy of the shaped pod: the
// application's, but with nothing of libpq's environment other than
// PGPASSFILE, so that only DATABASE_URL can lead psql to the proxy.
const urlApp = "url-app"

// TestProxyShapedByAnnotations runs a pod whose annotations shape its proxy
// (proxy-max-connections: "1", proxy-prometheus, database-url) with the real
// proxy and psql: a second session is refused while the first is open, and
// accepted once it has ended; the proxy serves Prometheus metrics on its
// health-check port; psql reaches the database with DATABASE_URL alone.
func TestProxyShapedByAnnotations(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t)

	step(t, "creating ProviderConfig default and PostgresqlInstance %s, and waiting for Ready", shaped)
	for _, o := range []client.Object{
		// Where the instance's connection secret goes.
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}},
		providerConfig("default", w.endpoint, nil),
	} {
		g.Expect(w.c.Create(ctx, o)).To(Succeed())
	}
	w.createWhenAdmitted(ctx, instance(shaped, "default", false))
	w.waitReady(ctx, &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: shaped}})

	step(t, "creating a pod annotated %s: \"1\", %s: \"true\" and %s: \"true\"", v1alpha1.AnnotationProxyMaxConnections, v1alpha1.AnnotationProxyPrometheus, v1alpha1.AnnotationDatabaseURL)
	pod := w.createAnnotatedPod(ctx, appNS, "shaped", map[string]string{
		v1alpha1.AnnotationInstanceName:        shaped,
		v1alpha1.AnnotationProxyMaxConnections: "1",
		v1alpha1.AnnotationProxyPrometheus:     "true",
		v1alpha1.AnnotationDatabaseURL:         "true",
	}, nil)
	proxyC, _ := findContainer(pod, podinject.ProxyContainerName)
	g.Expect(proxyC.Args).To(ContainElements("--max-connections=1", "--prometheus"))
	var metricsPort int32
	for _, p := range proxyC.Ports {
		if p.Name == podinject.ProxyMetricsPortName {
			metricsPort = p.ContainerPort
		}
	}
	g.Expect(proxyC.Args).To(ContainElement("--http-port="+strconv.Itoa(int(metricsPort))), "the port %s is the health-check port, where --prometheus serves", podinject.ProxyMetricsPortName)
	env := envOf(pod, "app")
	g.Expect(env).To(HaveKeyWithValue(podinject.EnvDatabaseURL, "postgresql://"+cloudsql.RootUser+"@"+podinject.ProxyAddress+":"+env[podinject.EnvPort]),
		"the proxy's address and port and the login, without the password")
	t.Logf("    proxy args %s; DATABASE_URL=%s", strings.Join(proxyC.Args, " "), env[podinject.EnvDatabaseURL])

	lp := w.loadPod(ctx, withURLApp(pod))
	out := &localpod.Output{}
	proxy, err := lp.StartProxy(ctx, w.endpoint, out)
	g.Expect(err).NotTo(HaveOccurred(), "proxy output:\n%s", out)
	defer func() {
		_ = proxy.Stop()
		if t.Failed() {
			t.Logf("proxy output:\n%s", out)
		}
	}()
	g.Expect(lp.WritePasswordFiles(ctx)).To(Succeed())

	step(t, "with one session open, the proxy refuses a second (--max-connections=1); once it has ended, a new session is accepted")
	w.maxConnections(ctx, lp, out)

	step(t, "GET http://127.0.0.1:%d/metrics: the proxy's Prometheus metrics", metricsPort)
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(int(metricsPort)) + "/metrics")
	g.Expect(err).NotTo(HaveOccurred())
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(resp.Header.Get("Content-Type")).To(HavePrefix("text/plain"), "Prometheus's text format")
	var metrics []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "cloudsqlconn_") {
			metrics = append(metrics, l)
		}
	}
	// Two sessions were accepted above: the dialer has counted them.
	g.Expect(metrics).To(ContainElement(HavePrefix("cloudsqlconn_dial_latency")), "%s", body)
	t.Logf("    200, %d bytes; e.g. %s", len(body), strings.Join(firstN(metrics, 3), "; "))

	step(t, "psql \"$DATABASE_URL\", with no PGHOST, PGPORT or PGUSER: the password comes from PGPASSFILE")
	got, err := lp.Run(ctx, urlApp)
	g.Expect(err).NotTo(HaveOccurred(), "psql: %s", got)
	g.Expect(strings.TrimSpace(got)).To(Equal(cloudsql.RootUser))
	t.Logf("    psql printed: %s", strings.TrimSpace(got))

	step(t, "a pod annotated %s: \"true\": its psql reaches the proxy's Unix socket %s/.s.PGSQL.%s", v1alpha1.AnnotationProxyUnixSocket, podinject.SocketDir, podinject.SocketPort)
	w.unixSocket(ctx)
}

// unixSocket runs a pod whose proxy listens on a Unix socket, and its psql
// with the injected PGHOST (the socket's directory), PGPORT and PGPASSFILE.
func (w *world) unixSocket(ctx context.Context) {
	g := NewWithT(w.t)
	pod := w.createAnnotatedPod(ctx, appNS, "socket", map[string]string{
		v1alpha1.AnnotationInstanceName:    shaped,
		v1alpha1.AnnotationProxyUnixSocket: "true",
		v1alpha1.AnnotationDatabaseURL:     "true",
	}, nil)
	env := envOf(pod, "app")
	g.Expect(env).To(HaveKeyWithValue(podinject.EnvHost, podinject.SocketDir))
	g.Expect(env).To(HaveKeyWithValue(podinject.EnvPort, podinject.SocketPort))
	lp := w.loadPod(ctx, withURLApp(pod))
	out := &localpod.Output{}
	proxy, err := lp.StartProxy(ctx, w.endpoint, out)
	g.Expect(err).NotTo(HaveOccurred(), "proxy output:\n%s", out)
	defer func() { _ = proxy.Stop() }()
	socketDir, err := lp.LocalPath("app", podinject.SocketDir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(filepath.Join(socketDir, ".s.PGSQL."+podinject.SocketPort)).To(BeAnExistingFile(), "the proxy made its socket in the volume the application mounts")

	g.Expect(lp.WritePasswordFiles(ctx)).To(Succeed())
	passfile, err := lp.LocalPath("app", env[podinject.EnvPassFile])
	g.Expect(err).NotTo(HaveOccurred())
	line, err := os.ReadFile(passfile)
	g.Expect(err).NotTo(HaveOccurred())
	// libpq matches a socket connection's password line by the socket's
	// directory as PGHOST names it.
	rest, ok := strings.CutPrefix(string(line), podinject.SocketDir+":"+podinject.SocketPort+":")
	g.Expect(ok).To(BeTrue(), "the password file names the socket's directory and port: %s", strings.SplitN(string(line), ":", 3)[:2])
	// Here the socket's directory is the volume's local directory, which
	// localpod puts in the application's PGHOST but not in the writer's
	// arguments (it does not mount the socket): the line follows it, as it
	// would name /var/run/cloudsql-socket in the pod.
	g.Expect(os.WriteFile(passfile, []byte(socketDir+":"+podinject.SocketPort+":"+rest), 0o600)).To(Succeed())

	got, err := w.runApp(ctx, lp)
	g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s", got, out)
	g.Expect(strings.TrimSpace(got)).To(Equal(cloudsql.RootUser))
	w.t.Logf("    psql printed: %s", strings.TrimSpace(got))

	// DATABASE_URL writes the socket's directory percent-encoded, which
	// localpod cannot map to the local volume: psql given it alone must
	// look for the very socket the proxy makes in the pod.
	got, err = lp.Run(ctx, urlApp)
	g.Expect(err).To(HaveOccurred(), "there is no %s on this machine: %s", podinject.SocketDir, got)
	g.Expect(got).To(ContainSubstring(`connection to server on socket "` + podinject.SocketDir + "/.s.PGSQL." + podinject.SocketPort + `" failed`))
	w.t.Logf("    psql \"$DATABASE_URL\" (%s): %s", env[podinject.EnvDatabaseURL], firstLine(got))
}

// maxConnections holds a session of the pod's psql open and expects the
// proxy to refuse a second: it accepts the connection and closes it at once
// (cloud-sql-proxy's internal/proxy), which psql reports as a server that
// closed the connection. Once the first session ends, a new one succeeds.
func (w *world) maxConnections(ctx context.Context, lp *localpod.Pod, proxyOut *localpod.Output) {
	g := NewWithT(w.t)
	// \warn writes to stderr, unbuffered, once psql has logged in: the
	// session is open, and holds the proxy's one connection, while it sleeps.
	held := &localpod.Output{}
	holder, err := lp.Start(ctx, "app", held, "--command", `\warn held`, "--command", "select pg_sleep(300)")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = holder.Stop() }()
	g.Eventually(held.String).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).Should(ContainSubstring("held"), "the first session logs in")

	got, err := w.runApp(ctx, lp)
	g.Expect(err).To(HaveOccurred(), "a second session while the first is open: %s", got)
	g.Expect(got).To(ContainSubstring("server closed the connection unexpectedly"))
	g.Eventually(proxyOut.String).Should(ContainSubstring("max connections (1) exceeded, refusing new connection"))
	g.Expect(holder.Running()).To(BeTrue(), "the first session is still open: %s", held)
	w.t.Logf("    second session: %s", firstLine(got))
	w.t.Logf("    proxy: max connections (1) exceeded, refusing new connection")

	_ = holder.Stop()
	// The proxy counts the first connection until it has closed both ends.
	start := time.Now()
	g.Eventually(func(g Gomega) {
		got, err := w.runApp(ctx, lp)
		g.Expect(err).NotTo(HaveOccurred(), "psql: %s", got)
		g.Expect(strings.TrimSpace(got)).To(Equal(cloudsql.RootUser))
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
	w.t.Logf("    once the first session ended, a new one printed %s (%s later)", cloudsql.RootUser, time.Since(start).Round(100*time.Millisecond))
}

// withURLApp is a copy of pod with urlApp beside its application: the same
// mounts, PGPASSFILE and DATABASE_URL, and psql given the URL alone.
func withURLApp(pod *corev1.Pod) *corev1.Pod {
	p := pod.DeepCopy()
	app, _ := findContainer(p, "app")
	c := *app.DeepCopy()
	c.Name = urlApp
	c.Env = nil
	for _, e := range app.Env {
		if e.Name == podinject.EnvPassFile || e.Name == podinject.EnvDatabaseURL {
			c.Env = append(c.Env, e)
		}
	}
	c.Command = []string{"sh", "-c", `exec psql --no-psqlrc --tuples-only --no-align --command "select current_user" "$` + podinject.EnvDatabaseURL + `"`}
	p.Spec.Containers = append(p.Spec.Containers, c)
	return p
}

// envOf is the literal env of container name of pod.
func envOf(pod *corev1.Pod, name string) map[string]string {
	c, _ := findContainer(pod, name)
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

func firstN(s []string, n int) []string {
	return s[:min(n, len(s))]
}
