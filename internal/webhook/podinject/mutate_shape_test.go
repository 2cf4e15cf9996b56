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

package podinject

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// shaped sets the Shape of the inputs.
func shaped(s Shape) func(*Inputs) { return func(x *Inputs) { x.Shape = s } }

func TestMutateShape(t *testing.T) {
	type check func(g Gomega, out *corev1.Pod)
	proxyArgs := func(want ...string) check {
		return func(g Gomega, out *corev1.Pod) {
			g.Expect(findContainer(out, ProxyContainerName).Args).To(ContainElements(want))
		}
	}
	noProxyArgs := func(prefixes ...string) check {
		return func(g Gomega, out *corev1.Pod) {
			for _, a := range findContainer(out, ProxyContainerName).Args {
				for _, p := range prefixes {
					g.Expect(a).ToNot(HavePrefix(p))
				}
			}
		}
	}
	appHas := func(name, value string) check {
		return func(g Gomega, out *corev1.Pod) {
			g.Expect(env(*findContainer(out, "app"))).To(HaveKeyWithValue(name, value))
		}
	}
	grace := func(want *int64) check {
		return func(g Gomega, out *corev1.Pod) { g.Expect(out.Spec.TerminationGracePeriodSeconds).To(Equal(want)) }
	}
	cases := map[string]struct {
		pod    *corev1.Pod
		x      Inputs
		checks []check
	}{
		"Resources": {
			pod: pod(),
			x: inputs(shaped(Shape{Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
			}})),
			checks: []check{func(g Gomega, out *corev1.Pod) {
				r := findContainer(out, ProxyContainerName).Resources
				g.Expect(r.Requests.Cpu().String()).To(Equal("200m"))
				g.Expect(r.Limits.Memory().String()).To(Equal("512Mi"))
			}},
		},
		"ClassicSigtermDelaysRaiseTheGracePeriod": {
			pod:    pod(),
			x:      inputs(classic, shaped(Shape{MinSigtermDelay: 20 * time.Second, MaxSigtermDelay: ptr.To(45 * time.Second)})),
			checks: []check{proxyArgs("--min-sigterm-delay=20s", "--max-sigterm-delay=45s"), grace(ptr.To[int64](65))},
		},
		"ClassicLongerGracePeriodStays": {
			pod:    pod(func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](300) }),
			x:      inputs(classic, shaped(Shape{MaxSigtermDelay: ptr.To(45 * time.Second)})),
			checks: []check{proxyArgs("--max-sigterm-delay=45s"), noProxyArgs("--min-sigterm-delay"), grace(ptr.To[int64](300))},
		},
		"ClassicDefaultGracePeriodIsThirtySeconds": {
			pod:    pod(),
			x:      inputs(classic, shaped(Shape{MaxSigtermDelay: ptr.To(25 * time.Second)})),
			checks: []check{proxyArgs("--max-sigterm-delay=25s"), grace(nil)},
		},
		"NativeDelaysComeAfterTheApplicationsTime": {
			pod:    pod(func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](20) }),
			x:      inputs(shaped(Shape{MaxSigtermDelay: ptr.To(25 * time.Second)})),
			checks: []check{proxyArgs("--max-sigterm-delay=25s"), grace(ptr.To[int64](45))},
		},
		"DatabaseURLKeepsTheApplicationsOwnAddress": {
			pod: pod(appEnv("PGHOST=pgbouncer"), withContainer(corev1.Container{Name: "worker", Image: "example.com/worker:1",
				Env: []corev1.EnvVar{{Name: "PGUSER", Value: "reporting"}}})),
			x: inputs(shaped(Shape{DatabaseURL: true})),
			checks: []check{func(g Gomega, out *corev1.Pod) {
				g.Expect(env(*findContainer(out, "app"))).ToNot(HaveKey(EnvDatabaseURL), "a URL to the proxy would bypass the container's own host")
				g.Expect(env(*findContainer(out, "worker"))).ToNot(HaveKey(EnvDatabaseURL), "a URL naming postgres would override the container's own login")
			}},
		},
		"MaxConnectionsLazyRefreshPSC": {
			pod:    pod(),
			x:      inputs(shaped(Shape{MaxConnections: 1, LazyRefresh: true, IPType: "psc"}), func(x *Inputs) { x.PSC = true }),
			checks: []check{proxyArgs("--max-connections=1", "--lazy-refresh", "--psc"), noProxyArgs("--private-ip")},
		},
		"Prometheus": {
			pod: pod(),
			x:   inputs(shaped(Shape{Prometheus: true})),
			checks: []check{proxyArgs("--prometheus"), func(g Gomega, out *corev1.Pod) {
				_, health := ports(g, out)
				g.Expect(findContainer(out, ProxyContainerName).Ports).To(Equal([]corev1.ContainerPort{{Name: ProxyMetricsPortName, ContainerPort: health, Protocol: corev1.ProtocolTCP}}))
			}},
		},
		"QuitEndpoint": {
			pod: pod(),
			x:   inputs(shaped(Shape{Quit: true})),
			checks: []check{proxyArgs("--quitquitquit"), func(g Gomega, out *corev1.Pod) {
				admin := adminPort(findContainer(out, ProxyContainerName))
				port, health := ports(g, out)
				g.Expect(admin).To(BeNumerically(">=", PortMin))
				g.Expect([]int32{port, health}).ToNot(ContainElement(admin))
				g.Expect(env(*findContainer(out, "app"))).To(HaveKeyWithValue(EnvQuitURLs, fmt.Sprintf("http://127.0.0.1:%d/quitquitquit", admin)))
				// A native follower ends with the pod: it keeps its script.
				g.Expect(findContainer(out, followerName(0)).Command[2]).To(Equal(followScript))
			}},
		},
		"QuitEndpointClassic": {
			pod: pod(),
			x:   inputs(classic, shaped(Shape{Quit: true})),
			checks: []check{func(g Gomega, out *corev1.Pod) {
				admin := adminPort(findContainer(out, ProxyContainerName))
				f := findContainer(out, followerName(0))
				g.Expect(f.Command[2]).To(Equal(followUntilQuitScript))
				g.Expect(f.Command[len(f.Command)-1]).To(Equal(fmt.Sprintf("%04X", admin)))
			}},
		},
		"UnixSocket": {
			pod: pod(withContainer(worker)),
			x:   inputs(shaped(Shape{UnixSocket: true, DatabaseURL: true}), asLogin("orders_app", "orders")),
			checks: []check{
				proxyArgs(testConnectionName + "?unix-socket-path=/var/run/cloudsql-socket/.s.PGSQL.5432"),
				appHas(EnvHost, SocketDir), appHas(EnvPort, "5432"),
				appHas(EnvDatabaseURL, "postgresql://orders_app@%2Fvar%2Frun%2Fcloudsql-socket:5432/orders"),
				func(g Gomega, out *corev1.Pod) {
					g.Expect(findContainer(out, ProxyContainerName).VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: SocketVolumeName, MountPath: SocketDir}))
					for _, c := range []string{"app", "worker"} {
						g.Expect(findContainer(out, c).VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: SocketVolumeName, MountPath: SocketDir, ReadOnly: true}))
					}
					g.Expect(findContainer(out, writerName(0)).Command[6:]).To(Equal([]string{SocketDir, "5432"}))
					g.Expect(out.Spec.Volumes).To(ContainElement(HaveField("Name", SocketVolumeName)))
				},
			},
		},
		"DatabaseURLOverTCP": {
			pod: pod(),
			x:   inputs(shaped(Shape{DatabaseURL: true})),
			checks: []check{func(g Gomega, out *corev1.Pod) {
				port, _ := ports(g, out)
				g.Expect(env(*findContainer(out, "app"))).To(HaveKeyWithValue(EnvDatabaseURL, fmt.Sprintf("postgresql://postgres@127.0.0.1:%d", port)))
			}},
		},
		"DatabaseURLKeepsTheApplicationsOwn": {
			pod:    pod(appEnv("DATABASE_URL=postgresql://elsewhere/db")),
			x:      inputs(shaped(Shape{DatabaseURL: true})),
			checks: []check{appHas(EnvDatabaseURL, "postgresql://elsewhere/db")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			out, err := Mutate(tc.pod, tc.x)
			g.Expect(err).ToNot(HaveOccurred())
			for _, c := range tc.checks {
				c(g, out)
			}
			// Applied again, as a reinvocation does, it changes nothing.
			again, err := Mutate(out, tc.x)
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(again).To(Equal(out))
		})
	}
}

// A container that another webhook adds after the first pass gets what the
// others got: the quit URL with the port drawn then, the socket.
func TestMutateShapeReinvocation(t *testing.T) {
	g := NewWithT(t)
	x := inputs(shaped(Shape{Quit: true, UnixSocket: true}))
	out, err := Mutate(pod(), x)
	g.Expect(err).ToNot(HaveOccurred())
	out.Spec.Containers = append(out.Spec.Containers, corev1.Container{Name: "added", Image: "example.com/added:1"})
	x.Rand = nil // another draw would give other ports
	again, err := Mutate(out, x)
	g.Expect(err).ToNot(HaveOccurred())
	added := findContainer(again, "added")
	g.Expect(env(*added)).To(Equal(env(*findContainer(again, "app"))))
	g.Expect(added.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: SocketVolumeName, MountPath: SocketDir, ReadOnly: true}))
}

func TestMutateShapeDenials(t *testing.T) {
	cases := map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"SocketVolumeTaken": {
			pod:  pod(func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{{Name: SocketVolumeName}} }),
			want: "volume name cloudsql-socket is reserved for the injector",
		},
		"SocketDirTaken": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "mine"}}
				findContainer(p, "app").VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: SocketDir}}
			}),
			want: "container app already mounts volume mine at /var/run/cloudsql-socket, where the injector mounts the proxy's Unix socket: move that mount",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Mutate(tc.pod, inputs(shaped(Shape{UnixSocket: true})))
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
	// A pod that asks for no socket may keep a volume of that name, as it
	// could before sockets existed.
	_, err := Mutate(pod(func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{{Name: SocketVolumeName}} }), inputs())
	NewWithT(t).Expect(err).ToNot(HaveOccurred())
}

// The classic follower of a pod with a quit endpoint, run by a real shell:
// it writes the password file, keeps going while the proxy's admin port
// listens, and ends with 0 once it closes, as the proxy's does when the
// application calls the quit URL.
func TestFollowerEndsWhenTheProxyQuits(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "pgpass")
	g.Expect(os.WriteFile(secret, []byte("127.0.0.1:*:*:postgres:secret\n"), 0o600)).To(Succeed())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).ToNot(HaveOccurred())
	port := l.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	file := filepath.Join(dir, "pgpass-1000")
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", followUntilQuitScript, "pgpass-follower", secret, file, "127.0.0.1", "20001", "1", fmt.Sprintf("%04X", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	g.Expect(cmd.Start()).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	g.Eventually(func() (string, error) { b, err := os.ReadFile(file); return string(b), err }, 10*time.Second, 100*time.Millisecond).
		Should(Equal("127.0.0.1:20001:*:postgres:secret\n"))
	g.Consistently(done, 3*time.Second).ShouldNot(Receive(), "the follower ended while the proxy still listened")
	g.Expect(l.Close()).To(Succeed())
	var exit error
	g.Eventually(done, 10*time.Second).Should(Receive(&exit), "the follower did not end once the proxy's admin port closed")
	g.Expect(exit).ToNot(HaveOccurred())
}

// With a Unix socket the password file has a second line, for localhost:
// libpq matches the socket's directory, drivers such as pgx and asyncpg
// look the password up as localhost's.
func TestSocketPasswordFileServesEveryDriver(t *testing.T) {
	g := NewWithT(t)
	out, err := Mutate(pod(), inputs(shaped(Shape{UnixSocket: true})))
	g.Expect(err).ToNot(HaveOccurred())
	w := findContainer(out, writerName(0))
	dir := t.TempDir()
	secret := filepath.Join(dir, "pgpass")
	g.Expect(os.WriteFile(secret, []byte("127.0.0.1:*:*:postgres:secret\n"), 0o600)).To(Succeed())
	file := filepath.Join(dir, "pgpass-0")
	args := append([]string{"-c", w.Command[2], "pgpass-writer", secret, file}, w.Command[6:]...)
	g.Expect(exec.Command("/bin/sh", args...).Run()).To(Succeed())
	got, err := os.ReadFile(file)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(string(got)).To(Equal("/var/run/cloudsql-socket:5432:*:postgres:secret\nlocalhost:5432:*:postgres:secret\n"))
	g.Expect(findContainer(out, followerName(0)).Command[2]).To(ContainSubstring(`localhost "$4"`))
}

// The follower's port is the one the proxy's admin server listens on, in the
// form /proc/net/tcp writes it.
func TestAdminPortHex(t *testing.T) {
	g := NewWithT(t)
	out, err := Mutate(pod(), inputs(classic, shaped(Shape{Quit: true})))
	g.Expect(err).ToNot(HaveOccurred())
	admin := adminPort(findContainer(out, ProxyContainerName))
	f := findContainer(out, followerName(0))
	n, err := strconv.ParseInt(f.Command[len(f.Command)-1], 16, 32)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(int32(n)).To(Equal(admin))
	g.Expect(slices.Contains(findContainer(out, ProxyContainerName).Args, "--admin-port="+strconv.Itoa(int(admin)))).To(BeTrue())
}
