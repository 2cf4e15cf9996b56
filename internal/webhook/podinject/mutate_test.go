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
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

const (
	testConnectionName = "my-project-123:europe-west1:db"
	testProxyImage     = "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0"
	testWriterImage    = "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0-alpine"
	testEndpoint       = "http://127.0.0.1:8085/"
)

// inputs are the Inputs of most cases; fns change them.
func inputs(fns ...func(*Inputs)) Inputs {
	x := Inputs{
		ConnectionName: testConnectionName,
		PgpassSecret:   "cloudsql-pgpass-db",
		ProxyImage:     testProxyImage,
		WriterImage:    testWriterImage,
		Native:         true,
		ProxyResources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
		},
		Rand: rand.New(rand.NewPCG(1, 2)),
	}
	for _, fn := range fns {
		fn(&x)
	}
	return x
}

func classic(x *Inputs)   { x.Native = false }
func private(x *Inputs)   { x.PrivateIP = true }
func withCreds(x *Inputs) { x.ProxyCredentialsSecret = "cloudsql-proxy-credentials-db" }

// pod is an annotated pod with one container, changed by fns.
func pod(fns ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", Annotations: map[string]string{v1alpha1.AnnotationInstanceName: "db"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
	}
	for _, fn := range fns {
		fn(p)
	}
	return p
}

func env(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

func names(cs []corev1.Container) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return n
}

func volumeNames(p *corev1.Pod) []string {
	var n []string
	for _, v := range p.Spec.Volumes {
		n = append(n, v.Name)
	}
	return n
}

func mountsOf(c corev1.Container) map[string]corev1.VolumeMount {
	m := map[string]corev1.VolumeMount{}
	for _, vm := range c.VolumeMounts {
		m[vm.Name] = vm
	}
	return m
}

// endpointFlags are the arguments that set the proxy's Admin API endpoint.
func endpointFlags(args []string) []string {
	var flags []string
	for _, a := range args {
		if strings.HasPrefix(a, ProxyEndpointFlag) {
			flags = append(flags, a)
		}
	}
	return flags
}

// ports returns the proxy's port and health-check port.
func ports(g Gomega, p *corev1.Pod) (int32, int32) {
	c := findContainer(p, ProxyContainerName)
	g.ExpectWithOffset(1, c).ToNot(BeNil())
	port, health, ok := proxyPorts(c)
	g.ExpectWithOffset(1, ok).To(BeTrue())
	return port, health
}

func TestMutate(t *testing.T) {
	cases := map[string]struct {
		pod   *corev1.Pod
		in    Inputs
		check func(g Gomega, in, out *corev1.Pod)
		err   string
	}{
		"NativeSidecar": {
			pod: pod(),
			in:  inputs(),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(out.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
				g.Expect(names(out.Spec.InitContainers)).To(Equal([]string{"cloudsql-pgpass-0", ProxyContainerName}))
				g.Expect(names(out.Spec.Containers)).To(Equal([]string{"app"}))
				proxy := out.Spec.InitContainers[1]
				g.Expect(proxy.RestartPolicy).To(Equal(ptr.To(corev1.ContainerRestartPolicyAlways)))
				g.Expect(proxy.Image).To(Equal(testProxyImage))
				port, health := ports(g, out)
				g.Expect(port).To(And(BeNumerically(">=", PortMin), BeNumerically("<=", PortMax)))
				g.Expect(health).To(And(BeNumerically(">=", PortMin), BeNumerically("<=", PortMax), Not(Equal(port))))
				g.Expect(proxy.Args).To(Equal([]string{
					"--address=127.0.0.1", "--port=" + strconv.Itoa(int(port)),
					"--health-check", "--http-address=0.0.0.0", "--http-port=" + strconv.Itoa(int(health)),
					"--exit-zero-on-sigterm", "--max-sigterm-delay=10s", "--structured-logs",
					"--run-connection-test", testConnectionName,
				}))
				g.Expect(proxy.StartupProbe.HTTPGet.Path).To(Equal("/startup"))
				g.Expect(proxy.StartupProbe.HTTPGet.Port).To(Equal(intstr.FromInt32(health)))
				g.Expect(proxy.LivenessProbe.HTTPGet.Path).To(Equal("/liveness"))
				g.Expect(proxy.LivenessProbe.HTTPGet.Port).To(Equal(intstr.FromInt32(health)))
				sc := proxy.SecurityContext
				g.Expect(*sc.RunAsNonRoot).To(BeTrue())
				g.Expect(*sc.RunAsUser).To(Equal(ProxyUser))
				g.Expect(*sc.ReadOnlyRootFilesystem).To(BeTrue())
				g.Expect(*sc.AllowPrivilegeEscalation).To(BeFalse())
				g.Expect(sc.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
				g.Expect(sc.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
				g.Expect(proxy.Resources.Requests.Cpu().String()).To(Equal("50m"))
				g.Expect(proxy.Resources.Limits.Memory().String()).To(Equal("256Mi"))
				g.Expect(proxy.VolumeMounts).To(BeEmpty())

				app := out.Spec.Containers[0]
				g.Expect(env(app)).To(Equal(map[string]string{
					EnvHost: ProxyAddress, EnvPort: strconv.Itoa(int(port)), EnvUser: "postgres", EnvPassFile: PgpassDir + "/pgpass-0",
				}))
				g.Expect(app.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: PgpassVolumeName, MountPath: PgpassDir, ReadOnly: true}}))
				g.Expect(volumeNames(out)).To(Equal([]string{PgpassVolumeName, PgpassSecretVolumeName}))
				g.Expect(out.Spec.Volumes[0].EmptyDir.Medium).To(Equal(corev1.StorageMediumMemory))
				g.Expect(out.Spec.Volumes[1].Secret.SecretName).To(Equal("cloudsql-pgpass-db"))

				w := out.Spec.InitContainers[0]
				g.Expect(w.Image).To(Equal(testWriterImage))
				g.Expect(w.Command).To(ContainElements(PgpassSecretDir+"/pgpass", PgpassDir+"/pgpass-0"))
				g.Expect(w.Command[2]).To(ContainSubstring("umask 077"))
				g.Expect(*w.SecurityContext.RunAsUser).To(BeEquivalentTo(0))
				g.Expect(mountsOf(w)).To(HaveKeyWithValue(PgpassSecretVolumeName, HaveField("ReadOnly", true)))
				g.Expect(mountsOf(w)).To(HaveKeyWithValue(PgpassVolumeName, HaveField("ReadOnly", false)))
			},
		},
		"ClassicSidecar": {
			pod: pod(),
			in:  inputs(classic),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(names(out.Spec.InitContainers)).To(Equal([]string{"cloudsql-pgpass-0"}))
				g.Expect(names(out.Spec.Containers)).To(Equal([]string{ProxyContainerName, "app"}), "the kubelet starts containers in order")
				proxy := out.Spec.Containers[0]
				g.Expect(proxy.RestartPolicy).To(BeNil())
				g.Expect(env(out.Spec.Containers[1])).To(HaveKey(EnvPort))
				g.Expect(env(proxy)).To(BeEmpty(), "the proxy needs no libpq settings")
				g.Expect(proxy.Args).NotTo(ContainElement("--run-connection-test"),
					"exiting on a failed test could leave a Job's pod without a proxy")
				_, health, _ := proxyPorts(&proxy)
				g.Expect(proxy.Lifecycle.PostStart.Exec.Command).To(Equal([]string{
					ProxyBinary, "wait", "--http-address=127.0.0.1", "--http-port=" + strconv.Itoa(int(health)), "--max=60s",
				}), "the application starts once the proxy listens")
				g.Expect(out.Annotations).To(HaveKeyWithValue("kubectl.kubernetes.io/default-container", "app"))
			},
		},
		"PortsThePodDeclaresOrProbesAreAvoided": {
			// With the same random source, the first draw gives the ports that
			// the pod below declares; the injector must draw others.
			pod: func() *corev1.Pod {
				first, err := Mutate(pod(), inputs())
				if err != nil {
					panic(err)
				}
				port, health, _ := proxyPorts(findContainer(first, ProxyContainerName))
				return pod(func(p *corev1.Pod) {
					p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port}, {ContainerPort: 8080, HostPort: PortMax}}
					p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(health)}}}
				})
			}(),
			in: inputs(),
			check: func(g Gomega, in, out *corev1.Pod) {
				port, health := ports(g, out)
				declared := []int32{in.Spec.Containers[0].Ports[0].ContainerPort, PortMax, in.Spec.Containers[0].LivenessProbe.TCPSocket.Port.IntVal}
				g.Expect(declared).ToNot(ContainElement(port))
				g.Expect(declared).ToNot(ContainElement(health))
				g.Expect(port).ToNot(Equal(health))
			},
		},
		"VariablesTheContainerSetsKeepTheirValues": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PGUSER", Value: "app"}, {Name: "PGPASSFILE", Value: "/etc/app/pgpass"}, {Name: "OTHER", Value: "x"}}
			}),
			in: inputs(),
			check: func(g Gomega, _, out *corev1.Pod) {
				c := out.Spec.Containers[0]
				port, _ := ports(g, out)
				g.Expect(c.Env).To(HaveLen(5), "no variable may appear twice")
				g.Expect(env(c)).To(Equal(map[string]string{
					"PGUSER": "app", "PGPASSFILE": "/etc/app/pgpass", "OTHER": "x", EnvHost: ProxyAddress, EnvPort: strconv.Itoa(int(port)),
				}))
			},
		},
		"AContainerThatSetsPGPORTKeepsItsAddressNoPGHOST": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PGPORT", Value: "5432"}}
			}),
			in: inputs(),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(env(out.Spec.Containers[0])).To(Equal(map[string]string{
					"PGPORT": "5432", EnvUser: "postgres", EnvPassFile: PgpassDir + "/pgpass-0",
				}))
			},
		},
		"AContainerThatSetsPGHOSTKeepsItsAddressNoPGPORT": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PGHOST", Value: "db.example.com"}}
			}),
			in: inputs(),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(env(out.Spec.Containers[0])).To(Equal(map[string]string{
					"PGHOST": "db.example.com", EnvUser: "postgres", EnvPassFile: PgpassDir + "/pgpass-0",
				}))
			},
		},
		"InitContainersGetTheSettingsAndRunAfterTheProxy": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "example.com/migrate:1"}}
			}),
			in: inputs(),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(names(out.Spec.InitContainers)).To(Equal([]string{"cloudsql-pgpass-0", ProxyContainerName, "migrate"}))
				port, _ := ports(g, out)
				g.Expect(env(out.Spec.InitContainers[2])).To(HaveKeyWithValue(EnvPort, strconv.Itoa(int(port))))
				g.Expect(mountsOf(out.Spec.InitContainers[2])).To(HaveKey(PgpassVolumeName))
			},
		},
		"InitContainersInClassicMode": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "example.com/migrate:1"}}
			}),
			in: inputs(classic),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(names(out.Spec.InitContainers)).To(Equal([]string{"cloudsql-pgpass-0", "migrate"}))
				g.Expect(env(out.Spec.InitContainers[1])).To(HaveKey(EnvHost))
			},
		},
		"PrivateOnlyInstance": {
			pod: pod(),
			in:  inputs(private),
			check: func(g Gomega, _, out *corev1.Pod) {
				args := findContainer(out, ProxyContainerName).Args
				g.Expect(args).To(ContainElement("--private-ip"))
				g.Expect(args[len(args)-1]).To(Equal(testConnectionName))
			},
		},
		"TheConfigurationsEndpoint": {
			pod: pod(),
			in:  inputs(private, withCreds, func(x *Inputs) { x.AdminAPIEndpoint = testEndpoint }),
			check: func(g Gomega, _, out *corev1.Pod) {
				args := findContainer(out, ProxyContainerName).Args
				g.Expect(endpointFlags(args)).To(Equal([]string{"--sqladmin-api-endpoint=" + testEndpoint}), "once, the flag and its value one argument")
				g.Expect(args).To(ContainElements("--private-ip", "--credentials-file="+ProxyCredentialsDir+"/"+ProxyCredentialsKey))
				g.Expect(args[len(args)-1]).To(Equal(testConnectionName), "flags come before the instance")
			},
		},
		"AnEndpointWithoutATrailingSlashIsPassedAsWritten": {
			pod: pod(),
			in:  inputs(classic, func(x *Inputs) { x.AdminAPIEndpoint = "https://sqladmin-psc.p.googleapis.com" }),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(endpointFlags(findContainer(out, ProxyContainerName).Args)).To(Equal([]string{"--sqladmin-api-endpoint=https://sqladmin-psc.p.googleapis.com"}))
			},
		},
		"NoEndpointGooglesNoFlag": {
			pod: pod(),
			in:  inputs(withCreds),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(endpointFlags(findContainer(out, ProxyContainerName).Args)).To(BeEmpty())
			},
		},
		"ProxyCredentialsAreMountedIntoTheProxyOnly": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "example.com/migrate:1"}}
			}),
			in: inputs(withCreds),
			check: func(g Gomega, _, out *corev1.Pod) {
				proxy := findContainer(out, ProxyContainerName)
				g.Expect(proxy.Args).To(ContainElement("--credentials-file=" + ProxyCredentialsDir + "/" + ProxyCredentialsKey))
				g.Expect(proxy.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: ProxyCredentialsVolumeName, MountPath: ProxyCredentialsDir, ReadOnly: true}}))
				g.Expect(volumeNames(out)).To(ContainElement(ProxyCredentialsVolumeName))
				for _, c := range slices.Concat(out.Spec.InitContainers, out.Spec.Containers) {
					if c.Name != ProxyContainerName {
						g.Expect(mountsOf(c)).ToNot(HaveKey(ProxyCredentialsVolumeName), "container %s", c.Name)
					}
				}
			},
		},
		"NoProxyCredentials": {
			pod: pod(),
			in:  inputs(),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(volumeNames(out)).ToNot(ContainElement(ProxyCredentialsVolumeName))
				g.Expect(findContainer(out, ProxyContainerName).Args).ToNot(ContainElement(HavePrefix("--credentials-file")))
			},
		},
		"OnePasswordFilePerUser": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true), FSGroup: ptr.To[int64](2000)}
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "worker", Image: "example.com/worker:1",
					SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](3000)}})
			}),
			in: inputs(),
			check: func(g Gomega, _, out *corev1.Pod) {
				g.Expect(names(out.Spec.InitContainers)).To(Equal([]string{"cloudsql-pgpass-1000", "cloudsql-pgpass-3000", ProxyContainerName}))
				g.Expect(*out.Spec.InitContainers[0].SecurityContext.RunAsUser).To(BeEquivalentTo(1000))
				g.Expect(*out.Spec.InitContainers[0].SecurityContext.RunAsNonRoot).To(BeTrue())
				g.Expect(*out.Spec.InitContainers[1].SecurityContext.RunAsUser).To(BeEquivalentTo(3000))
				g.Expect(env(out.Spec.Containers[0])).To(HaveKeyWithValue(EnvPassFile, PgpassDir+"/pgpass-1000"))
				g.Expect(env(out.Spec.Containers[1])).To(HaveKeyWithValue(EnvPassFile, PgpassDir+"/pgpass-3000"))
			},
		},
		"NonRootWithoutAUserIsDenied": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}
			}),
			in:  inputs(),
			err: "container app must run as non-root but sets no runAsUser",
		},
		"APodWithItsOwnProxyIsLeftAsItIs": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "proxy", Image: "gcr.io/cloudsql-docker/gce-proxy:1.33.2"})
			}),
			in: inputs(),
			check: func(g Gomega, in, out *corev1.Pod) {
				g.Expect(out).To(Equal(in))
			},
		},
		"APodMarkedInjectedWithoutTheProxyIsLeftAsItIs": {
			pod: pod(func(p *corev1.Pod) { p.Annotations[v1alpha1.AnnotationProxyInjected] = "true" }),
			in:  inputs(),
			check: func(g Gomega, in, out *corev1.Pod) {
				g.Expect(out).To(Equal(in))
			},
		},
		"ReservedContainerName": {
			pod: pod(func(p *corev1.Pod) { p.Spec.Containers[0].Name = ProxyContainerName }),
			in:  inputs(),
			err: "container name cloudsql-proxy is reserved for the injector",
		},
		"ReservedVolumeName": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: PgpassVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			}),
			in:  inputs(),
			err: "volume name cloudsql-pgpass is reserved for the injector",
		},
		"MountPathTaken": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: PgpassDir}}
			}),
			in:  inputs(),
			err: "container app already mounts volume data at /var/run/cloudsql-postgres",
		},
		"Windows": {
			pod: pod(func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} }),
			in:  inputs(),
			err: "the pod runs on Windows",
		},
		"HostNetwork": {
			pod: pod(func(p *corev1.Pod) { p.Spec.HostNetwork = true }),
			in:  inputs(),
			err: "the pod uses the node's network (spec.hostNetwork: true)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			before := tc.pod.DeepCopy()
			out, err := Mutate(tc.pod, tc.in)
			g.Expect(tc.pod).To(Equal(before), "Mutate must not change its argument")
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).ToNot(HaveOccurred())
			tc.check(g, tc.pod, out)
			if !equality.Semantic.DeepEqual(out, tc.pod) {
				g.Expect(checkPod(tc.pod, out)).To(Succeed())
			}
		})
	}
}

func TestMutateReinvocation(t *testing.T) {
	for _, native := range []bool{true, false} {
		t.Run("native="+strconv.FormatBool(native), func(t *testing.T) {
			g := NewWithT(t)
			x := inputs(func(x *Inputs) { x.Native = native; x.AdminAPIEndpoint = testEndpoint })
			first, err := Mutate(pod(), x)
			g.Expect(err).ToNot(HaveOccurred())

			// Reinvoked on its own output (another draw of the random source
			// would give other ports, a configuration changed since another
			// endpoint): nothing changes.
			again, err := Mutate(first, x)
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(again).To(Equal(first))
			again, err = Mutate(first, inputs(func(x *Inputs) {
				x.Native, x.Rand, x.AdminAPIEndpoint = native, rand.New(rand.NewPCG(9, 9)), "https://sqladmin-psc.p.googleapis.com/"
			}))
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(again).To(Equal(first))

			// Another webhook added a container, running as another user, after
			// the injection: only that container is completed, with the ports
			// already chosen.
			changed := first.DeepCopy()
			changed.Spec.Containers = append(changed.Spec.Containers, corev1.Container{Name: "late", Image: "example.com/late:1",
				SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](4242)}})
			completed, err := Mutate(changed, x)
			g.Expect(err).ToNot(HaveOccurred())
			port, health := ports(g, first)
			p2, h2 := ports(g, completed)
			g.Expect([]int32{p2, h2}).To(Equal([]int32{port, health}))
			late := completed.Spec.Containers[len(completed.Spec.Containers)-1]
			g.Expect(env(late)).To(Equal(map[string]string{
				EnvHost: ProxyAddress, EnvPort: strconv.Itoa(int(port)), EnvUser: "postgres", EnvPassFile: PgpassDir + "/pgpass-4242",
			}))
			g.Expect(findContainer(completed, "cloudsql-pgpass-4242")).ToNot(BeNil())
			g.Expect(findContainer(completed, "cloudsql-pgpass-0")).ToNot(BeNil())
			g.Expect(completed.Spec.Volumes).To(Equal(first.Spec.Volumes))
			g.Expect(checkPod(changed, completed)).To(Succeed())
		})
	}
}
