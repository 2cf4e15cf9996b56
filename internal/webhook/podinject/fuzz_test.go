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
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/fuzzbytes"
)

// FuzzMutate builds pods from the fuzzer's bytes (names, images, ports, users,
// variables, mounts, deliberately including the injector's reserved names and
// other proxies), with any Admin API endpoint, and checks that Mutate never
// panics, never changes its argument, and either says why it cannot inject or
// returns a valid pod that it leaves as it is when applied again. `go test` runs
// the seeds below; `go test -fuzz FuzzMutate ./internal/webhook/podinject`
// searches further.
func FuzzMutate(f *testing.F) {
	f.Add([]byte{}, true, false, false, "", uint64(1))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, false, true, true, testEndpoint, uint64(2))
	f.Add([]byte("containers with ports, users and variables"), true, true, false, "https://sqladmin-psc.p.googleapis.com", uint64(3))
	f.Add([]byte{0, 0, 3, 0, 5, 2, 1, 7, 7, 7, 1, 0, 200, 3, 2, 1, 4, 4, 4, 4, 9, 9}, true, false, true, "", uint64(4))
	f.Add([]byte{7, 1, 2, 2, 0, 1, 3, 3, 255, 255, 0, 1, 1, 6, 6, 2, 2, 0, 0, 1, 1, 5}, false, false, true, testEndpoint, uint64(5))
	f.Add([]byte("\x00\x01\x02\x03cloudsql-proxy\xff\xfe\xfdgce-proxy runAsNonRoot PGPASSFILE"), true, true, true, "", uint64(6))
	// And a few hundred more, drawn once from a fixed source, so that `go test`
	// alone reaches every branch.
	r := rand.New(rand.NewPCG(42, 42))
	endpoints := []string{"", testEndpoint, "https://sqladmin-psc.p.googleapis.com"}
	for i := range 300 {
		b := make([]byte, r.IntN(96))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		f.Add(b, i%2 == 0, i%3 == 0, i%5 == 0, endpoints[i%7%3], r.Uint64())
	}
	f.Fuzz(func(t *testing.T, data []byte, native, privateIP, creds bool, endpoint string, seed uint64) {
		in := genPod(&gen{fuzzbytes.New(data)})
		x := inputs(func(x *Inputs) {
			x.Native, x.PrivateIP, x.AdminAPIEndpoint = native, privateIP, endpoint
			// One pod in four logs in with IAM (the seed decides, so that
			// the corpus keeps its shape).
			if seed%4 == 3 {
				asIAM("app@my-project-123.iam", "orders")(x)
			}
			if creds {
				withCreds(x)
			}
			x.Rand = rand.New(rand.NewPCG(seed, seed))
			// One pod in three shapes its proxy (again by the seed).
			if seed%3 == 1 {
				x.Shape = shapeOf(seed)
			}
		})
		before := in.DeepCopy()
		out, err := Mutate(in, x)
		if !equality.Semantic.DeepEqual(in, before) {
			t.Fatal("Mutate changed its argument")
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error must say why the pod cannot be injected")
			}
			return
		}
		if equality.Semantic.DeepEqual(out, in) {
			return // a pod with a proxy of its own, or marked injected
		}
		if err := checkPod(in, out); err != nil {
			t.Fatalf("invalid pod: %v\ninput: %+v\noutput: %+v", err, in.Spec, out.Spec)
		}
		again, err := Mutate(out, x)
		if err != nil {
			t.Fatalf("Mutate refused its own output: %v", err)
		}
		if !equality.Semantic.DeepEqual(again, out) {
			t.Fatal("Mutate is not idempotent")
		}
		if in.Annotations[v1alpha1.AnnotationProxyInjected] == "true" {
			return
		}
		// A new proxy has the endpoint once, or not at all.
		var want []string
		if endpoint != "" {
			want = []string{ProxyEndpointFlag + "=" + endpoint}
		}
		if got := endpointFlags(findContainer(out, ProxyContainerName).Args); !slices.Equal(got, want) {
			t.Fatalf("endpoint %q: the proxy has %q", endpoint, got)
		}
		// The same draw for a pod that declares the ports drawn must give others.
		port, health, _ := proxyPorts(findContainer(out, ProxyContainerName))
		taken := in.DeepCopy()
		if len(taken.Spec.Containers) == 0 {
			return
		}
		c := &taken.Spec.Containers[0]
		c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: port}, corev1.ContainerPort{ContainerPort: 1, HostPort: health})
		x.Rand = rand.New(rand.NewPCG(seed, seed))
		moved, err := Mutate(taken, x)
		if err != nil {
			t.Fatalf("declaring two more ports made the pod fail: %v", err)
		}
		if err := checkPod(taken, moved); err != nil {
			t.Fatalf("invalid pod once the drawn ports are declared: %v", err)
		}
	})
}

// checkPod checks the invariants of an injected pod out made from in: those of
// a valid pod that the injector could break (unique container and volume names,
// mounts of existing volumes at distinct paths, no variable set twice) and those of
// the injection (one proxy, on ports nothing else uses, the annotation, the libpq
// settings and a password file writer for every user).
func checkPod(in, out *corev1.Pod) error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, errors.Errorf(format, a...)) }

	all := slices.Concat(out.Spec.InitContainers, out.Spec.Containers)
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.Name] {
			fail("container name %q is used twice", c.Name)
		}
		seen[c.Name] = true
	}
	volumes := map[string]bool{}
	for _, v := range out.Spec.Volumes {
		if volumes[v.Name] {
			fail("volume name %q is used twice", v.Name)
		}
		volumes[v.Name] = true
	}
	for _, c := range all {
		paths := map[string]bool{}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				fail("container %s mounts volume %q, which the pod does not have", c.Name, m.Name)
			}
			if paths[m.MountPath] {
				fail("container %s mounts two volumes at %s", c.Name, m.MountPath)
			}
			paths[m.MountPath] = true
		}
	}
	if out.Annotations[v1alpha1.AnnotationProxyInjected] != "true" {
		fail("annotation %s is not true", v1alpha1.AnnotationProxyInjected)
	}

	var proxies []corev1.Container
	for _, c := range all {
		if c.Name == ProxyContainerName {
			proxies = append(proxies, c)
		}
	}
	if len(proxies) != 1 {
		return errors.Join(append(errs, errors.Errorf("%d proxy containers", len(proxies)))...)
	}
	// An IAM login has no password file: nothing writes one, and no
	// container is pointed at one.
	iam := slices.Contains(proxies[0].Args, ProxyIAMAuthNFlag)
	if iam {
		for _, c := range all {
			if isInjected(c.Name) && c.Name != ProxyContainerName {
				fail("an IAM login's pod has container %s", c.Name)
			}
		}
		for _, name := range []string{PgpassVolumeName, PgpassSecretVolumeName} {
			if volumes[name] && !slices.ContainsFunc(in.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == name }) {
				fail("an IAM login's pod has volume %s", name)
			}
		}
	}
	port, health, ok := proxyPorts(&proxies[0])
	if !ok {
		return errors.Join(append(errs, errors.New("the proxy has no ports"))...)
	}
	if port == health {
		fail("the proxy and its health check share port %d", port)
	}
	for _, p := range []int32{port, health} {
		if p < PortMin || p > PortMax {
			fail("port %d is outside [%d, %d]", p, PortMin, PortMax)
		}
	}
	// Ports are checked against the input: on a reinvocation the output's own
	// proxy is among the input's containers.
	user := in.DeepCopy()
	for _, cs := range []*[]corev1.Container{&user.Spec.InitContainers, &user.Spec.Containers} {
		*cs = slices.DeleteFunc(*cs, func(c corev1.Container) bool { return isInjected(c.Name) })
	}
	used := declaredPorts(user)
	if used[port] || used[health] {
		fail("ports %d and %d: one is declared or probed by the pod (%v)", port, health, used)
	}

	// The pod's own containers stay, in order, and gain only settings.
	var kept []corev1.Container
	for _, c := range all {
		if !isInjected(c.Name) {
			kept = append(kept, c)
		}
	}
	orig := slices.Concat(user.Spec.InitContainers, user.Spec.Containers)
	if len(kept) != len(orig) {
		return errors.Join(append(errs, errors.Errorf("the pod had %d containers of its own, now %d", len(orig), len(kept)))...)
	}
	for i, c := range kept {
		o := orig[i]
		if c.Name != o.Name || c.Image != o.Image {
			fail("container %d was %s (%s), is %s (%s)", i, o.Name, o.Image, c.Name, c.Image)
		}
		count := func(env []corev1.EnvVar, name string) int {
			n := 0
			for _, e := range env {
				if e.Name == name {
					n++
				}
			}
			return n
		}
		// PGHOST and PGPORT are added together, and only to a container that
		// sets neither.
		ownAddress := count(o.Env, EnvHost)+count(o.Env, EnvPort) > 0
		for _, name := range []string{EnvHost, EnvPort, EnvUser, EnvPassFile} {
			had, has := count(o.Env, name), count(c.Env, name)
			want := max(had, 1)
			if ownAddress && (name == EnvHost || name == EnvPort) || iam && name == EnvPassFile {
				want = had
			}
			if has != want {
				fail("container %s sets %s %d times (had %d)", c.Name, name, has, had)
			}
		}
		for _, e := range c.Env {
			if e.Name == EnvPassFile && count(o.Env, EnvPassFile) == 0 {
				uid, err := strconv.ParseInt(strings.TrimPrefix(e.Value, PgpassDir+"/pgpass-"), 10, 64)
				if err != nil {
					fail("container %s: PGPASSFILE %s is not a file of the injector", c.Name, e.Value)
					continue
				}
				w := findContainer(out, writerName(uid))
				if w == nil || w.SecurityContext == nil || ptr.Deref(w.SecurityContext.RunAsUser, -1) != uid {
					fail("container %s: nothing writes %s as user %d", c.Name, e.Value, uid)
				}
				f := findContainer(out, followerName(uid))
				if f == nil || f.SecurityContext == nil || ptr.Deref(f.SecurityContext.RunAsUser, -1) != uid {
					fail("container %s: nothing follows the secret into %s as user %d", c.Name, e.Value, uid)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// declaredPorts are the ports that the containers of pod declare or probe,
// computed independently of usedPorts, which the check would otherwise trust.
func declaredPorts(pod *corev1.Pod) map[int32]bool {
	m := map[int32]bool{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, p := range c.Ports {
			m[p.ContainerPort], m[p.HostPort] = true, true
		}
		for _, pr := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
			switch {
			case pr == nil:
			case pr.HTTPGet != nil:
				m[pr.HTTPGet.Port.IntVal] = true
			case pr.TCPSocket != nil:
				m[pr.TCPSocket.Port.IntVal] = true
			case pr.GRPC != nil:
				m[pr.GRPC.Port] = true
			}
		}
	}
	return m
}

// gen turns the fuzzer's bytes into choices.
type gen struct{ *fuzzbytes.Choices }

// Pools of values: the common ones, and rarer ones that meet the injector's own
// names, images and paths or that it must refuse. A choice past the end of the
// fuzzer's bytes is 0, the first common value.
var (
	containerNames = []string{"app", "web", "worker", "migrate", "sidecar"}
	reservedNames  = []string{ProxyContainerName, WriterContainerPrefix + "0", WriterContainerPrefix + "x"}
	images         = []string{"example.com/app:1", "nginx", "localhost:5000/app@sha256:0123", testWriterImage + "x"}
	proxyImages    = []string{"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.8.0", "gcr.io/cloudsql-docker/gce-proxy:1.33.2", testProxyImage}
	volumeNamePool = []string{"data", "cache", "config"}
	reservedVols   = []string{PgpassVolumeName, PgpassSecretVolumeName, ProxyCredentialsVolumeName}
	mountPaths     = []string{"/data", "/var/run", ProxyCredentialsDir, "/tmp", PgpassSecretDir}
	envNames       = []string{EnvHost, EnvPort, EnvUser, EnvPassFile, "OTHER"}
	uids           = []int64{1000, 0, 65532, 2147483647}
)

// rare picks from rare one time in eight, else from common.
func (g *gen) rare(common, rare []string) string {
	if g.Intn(8) == 7 {
		return g.Pick(rare...)
	}
	return g.Pick(common...)
}

func (g *gen) port() int32 {
	switch g.Intn(4) {
	case 0:
		return int32(1 + g.Byte()<<8 + g.Byte())
	default:
		return int32(PortMin + (g.Byte()<<8+g.Byte())%(PortMax-PortMin+1))
	}
}

func (g *gen) securityContext() *corev1.SecurityContext {
	switch g.Intn(8) {
	case 0, 1, 2:
		return nil
	case 3, 4:
		return &corev1.SecurityContext{RunAsUser: ptr.To(uids[g.Intn(len(uids))])}
	case 5:
		return &corev1.SecurityContext{RunAsNonRoot: ptr.To(false)}
	case 6:
		return &corev1.SecurityContext{RunAsUser: ptr.To(uids[g.Intn(len(uids))]), RunAsNonRoot: ptr.To(true)}
	default:
		return &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)} // without a user: refused
	}
}

func (g *gen) container(name string, volumes []string) corev1.Container {
	c := corev1.Container{Name: name, Image: g.rare(images, proxyImages), SecurityContext: g.securityContext()}
	for range g.Intn(4) {
		c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: g.port(), HostPort: []int32{0, g.port()}[g.Intn(2)]})
	}
	for range g.Intn(5) {
		c.Env = append(c.Env, corev1.EnvVar{Name: g.Pick(envNames...), Value: strconv.Itoa(g.Byte())})
	}
	paths := map[string]bool{}
	for range g.Intn(3) {
		if len(volumes) == 0 {
			break
		}
		p := g.rare(mountPaths, []string{PgpassDir})
		if paths[p] {
			continue
		}
		paths[p] = true
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: g.Pick(volumes...), MountPath: p})
	}
	switch g.Intn(4) {
	case 0:
		c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(g.port())}}}
	case 1:
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}}
	case 2:
		c.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: g.port()}}}
	}
	return c
}

// genPod builds a pod whose container and volume names are unique, as the API
// server requires of every pod it sends to the webhook.
func genPod(g *gen) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Namespace: "fuzz", Annotations: map[string]string{v1alpha1.AnnotationInstanceName: "db"}}}
	if g.Intn(16) == 15 {
		p.Annotations[v1alpha1.AnnotationProxyInjected] = "true"
	}
	switch g.Intn(4) {
	case 1:
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To(uids[g.Intn(len(uids))]), FSGroup: ptr.To[int64](2000)}
	case 2:
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	case 3:
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000)}
	}
	if g.Intn(32) == 31 {
		p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
	}
	if g.Intn(32) == 31 {
		p.Spec.HostNetwork = true
	}
	var volumes []string
	for range g.Intn(4) {
		n := g.rare(volumeNamePool, reservedVols)
		if slices.Contains(volumes, n) {
			continue
		}
		volumes = append(volumes, n)
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	used := map[string]bool{}
	add := func(to *[]corev1.Container) {
		n := g.rare(containerNames, reservedNames)
		if used[n] {
			return
		}
		used[n] = true
		*to = append(*to, g.container(n, volumes))
	}
	for range g.Intn(3) {
		add(&p.Spec.InitContainers)
	}
	for range 1 + g.Intn(3) {
		add(&p.Spec.Containers)
	}
	return p
}

// shapeOf is a Shape drawn from the bits of seed: every choice that changes
// the pod (a socket and its mounts, a third port, variables, the grace
// period) in some combination.
func shapeOf(seed uint64) Shape {
	bit := func(n uint) bool { return seed>>n&1 == 1 }
	s := Shape{
		UnixSocket: bit(10), Quit: bit(11), Prometheus: bit(12), DatabaseURL: bit(13), LazyRefresh: bit(14),
		MaxConnections:  int64(seed >> 15 % 4),
		MinSigtermDelay: time.Duration(seed>>17%3) * 10 * time.Second,
	}
	if bit(19) {
		s.MaxSigtermDelay = ptr.To(time.Duration(seed>>20%4) * 15 * time.Second)
	}
	return s
}
