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

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"
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

func endpoint(e string) func(*Inputs) { return func(x *Inputs) { x.AdminAPIEndpoint = e } }

// pod is an annotated pod with one container, changed by fns.
func pod(fns ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", Annotations: map[string]string{v1alpha1.AnnotationInstanceName: "db"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{app}},
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

// Containers as the input has them: app is pod()'s, cases add the others.
var (
	app     = corev1.Container{Name: "app", Image: "example.com/app:1"}
	migrate = corev1.Container{Name: "migrate", Image: "example.com/migrate:1"}
	worker  = corev1.Container{Name: "worker", Image: "example.com/worker:1", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](3000)}}
)

// Changes to a pod, made to the input and, where Mutate keeps them, to the
// wanted pod as well.

func withInit(c corev1.Container) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.InitContainers = append(p.Spec.InitContainers, c) }
}

func withContainer(c corev1.Container) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, c) }
}

// appEnv sets the variables of container app, each NAME=value.
func appEnv(vars ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		c := findContainer(p, "app")
		c.Env = nil
		for _, v := range vars {
			name, value, _ := strings.Cut(v, "=")
			c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
		}
	}
}

// runAs1000 has the pod's containers run as user 1000, unless they say otherwise.
func runAs1000(p *corev1.Pod) {
	p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true), FSGroup: ptr.To[int64](2000)}
}

// The ports that the source of inputs(), seeded with PCG(1, 2), draws for pod():
// the proxy's port, then its health check port. checkPod checks in every case
// that the ports are in [PortMin, PortMax], differ and are not the pod's own.
const (
	drawnPort   int32 = 29823
	drawnHealth int32 = 27870
)

// takesTheDrawnPorts has app declare the port drawn (and PortMax on the node)
// and probe the health check port drawn.
func takesTheDrawnPorts(p *corev1.Pod) {
	c := findContainer(p, "app")
	c.Ports = []corev1.ContainerPort{{ContainerPort: drawnPort}, {ContainerPort: 8080, HostPort: PortMax}}
	c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(drawnHealth)}}}
}

// injected is what Mutate makes of pod() with inputs(), changed by fns: the
// writer of user 0's password file and its follower, then the proxy as a native sidecar, run
// before app, which gets the libpq settings and the password files.
func injected(fns ...func(*corev1.Pod)) *corev1.Pod {
	p := pod()
	p.Annotations[v1alpha1.AnnotationProxyInjected] = "true"
	p.Spec.InitContainers = []corev1.Container{writer(0), follower(0), nativeProxy(drawnPort, drawnHealth)}
	p.Spec.Containers = []corev1.Container{settled(app, 0)}
	p.Spec.Volumes = []corev1.Volume{
		{Name: "cloudsql-pgpass", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi")),
		}}},
		{Name: "cloudsql-pgpass-secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "cloudsql-pgpass-db", Items: []corev1.KeyToPath{{Key: "pgpass", Path: "pgpass"}}, DefaultMode: ptr.To[int32](0o444),
		}}},
	}
	for _, fn := range fns {
		fn(p)
	}
	return p
}

// writer writes the password file of user uid, as that user, from the secret,
// for the proxy at the port drawn first.
func writer(uid int64) corev1.Container { return writerFor(uid, drawnPort) }

// writerFor writes the password file of user uid for the proxy at port.
func writerFor(uid int64, port int32) corev1.Container {
	u := strconv.FormatInt(uid, 10)
	return corev1.Container{
		Name:  "cloudsql-pgpass-" + u,
		Image: testWriterImage,
		Command: []string{"/bin/sh", "-c", writeScript, "pgpass-writer", "/var/run/cloudsql-postgres-secret/pgpass", "/var/run/cloudsql-postgres/pgpass-" + u,
			"127.0.0.1", strconv.Itoa(int(port))},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "cloudsql-pgpass-secret", MountPath: "/var/run/cloudsql-postgres-secret", ReadOnly: true},
			{Name: "cloudsql-pgpass", MountPath: "/var/run/cloudsql-postgres"},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")},
		},
		SecurityContext:          restrictedAs(uid),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// follower rewrites user uid's password file when the secret changes, as a
// native sidecar, for the proxy at the port drawn first.
func follower(uid int64) corev1.Container { return followerFor(uid, drawnPort) }

// followerFor is follower for the proxy at port.
func followerFor(uid int64, port int32) corev1.Container {
	u := strconv.FormatInt(uid, 10)
	c := writerFor(uid, port)
	c.Name = "cloudsql-pgpass-follow-" + u
	c.Command = []string{"/bin/sh", "-c", followScript, "pgpass-follower", "/var/run/cloudsql-postgres-secret/pgpass", "/var/run/cloudsql-postgres/pgpass-" + u,
		"127.0.0.1", strconv.Itoa(int(port)), "5"}
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	return c
}

// nativeProxy is the proxy as a native sidecar, listening on port and serving
// its health checks on health.
func nativeProxy(port, health int32) corev1.Container {
	probe := func(path string, period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(health), Scheme: corev1.URISchemeHTTP}},
			PeriodSeconds: period, TimeoutSeconds: 5, FailureThreshold: failures, SuccessThreshold: 1,
		}
	}
	return corev1.Container{
		Name:  "cloudsql-proxy",
		Image: testProxyImage,
		Args: []string{
			"--address=127.0.0.1", "--port=" + strconv.Itoa(int(port)),
			"--health-check", "--http-address=0.0.0.0", "--http-port=" + strconv.Itoa(int(health)),
			"--exit-zero-on-sigterm", "--max-sigterm-delay=10s", "--structured-logs",
			"--run-connection-test", testConnectionName,
		},
		RestartPolicy:            ptr.To(corev1.ContainerRestartPolicyAlways),
		StartupProbe:             probe("/startup", 1, 60),
		LivenessProbe:            probe("/liveness", 10, 3),
		Resources:                inputs().ProxyResources,
		SecurityContext:          restrictedAs(65532),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// restrictedAs is the "restricted" security context of the injected containers.
func restrictedAs(uid int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr.To(uid),
		RunAsNonRoot:             ptr.To(uid != 0),
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// settled is container c of the pod with the libpq settings of user uid and
// the password files mounted read-only.
func settled(c corev1.Container, uid int64) corev1.Container {
	c.Env = append(slices.Clone(c.Env),
		corev1.EnvVar{Name: "PGHOST", Value: "127.0.0.1"},
		corev1.EnvVar{Name: "PGPORT", Value: strconv.Itoa(int(drawnPort))},
		corev1.EnvVar{Name: "PGUSER", Value: "postgres"},
		corev1.EnvVar{Name: "PGPASSFILE", Value: "/var/run/cloudsql-postgres/pgpass-" + strconv.FormatInt(uid, 10)},
	)
	c.VolumeMounts = append(slices.Clone(c.VolumeMounts), corev1.VolumeMount{Name: "cloudsql-pgpass", MountPath: "/var/run/cloudsql-postgres", ReadOnly: true})
	return c
}

// Changes to the wanted pod.

// classicProxy runs the proxy as the first container instead, which the
// kubelet starts first and, through its postStart hook, lets app start only
// once it listens; without a connection test, whose failure would stop a Job's
// proxy; and kubectl logs and exec still choose app.
func classicProxy(p *corev1.Pod) {
	i := slices.IndexFunc(p.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == "cloudsql-proxy" })
	proxy := p.Spec.InitContainers[i]
	p.Spec.InitContainers = slices.Delete(p.Spec.InitContainers, i, i+1)
	proxy.RestartPolicy = nil
	proxy.Args = slices.DeleteFunc(proxy.Args, func(a string) bool { return a == "--run-connection-test" })
	proxy.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{
		"/cloud-sql-proxy", "wait", "--http-address=127.0.0.1", "--http-port=" + strconv.Itoa(int(drawnHealth)), "--max=60s",
	}}}}
	// The followers run beside the application, after the proxy.
	var followers []corev1.Container
	p.Spec.InitContainers = slices.DeleteFunc(p.Spec.InitContainers, func(c corev1.Container) bool {
		if !strings.HasPrefix(c.Name, "cloudsql-pgpass-follow-") {
			return false
		}
		c.RestartPolicy = nil
		followers = append(followers, c)
		return true
	})
	p.Spec.Containers = slices.Insert(p.Spec.Containers, 0, append([]corev1.Container{proxy}, followers...)...)
	p.Annotations["kubectl.kubernetes.io/default-container"] = "app"
}

// proxyFlags adds flags to the proxy's, after --structured-logs.
func proxyFlags(flags ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		c := findContainer(p, "cloudsql-proxy")
		c.Args = slices.Insert(c.Args, slices.Index(c.Args, "--structured-logs")+1, flags...)
	}
}

// proxyCredentials gives the proxy, and no other container, the key in the
// secret of withCreds.
func proxyCredentials(p *corev1.Pod) {
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "cloudsql-proxy-credentials", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: "cloudsql-proxy-credentials-db", Items: []corev1.KeyToPath{{Key: "credentials.json", Path: "credentials.json"}}, DefaultMode: ptr.To[int32](0o444),
	}}})
	c := findContainer(p, "cloudsql-proxy")
	c.Args = slices.Insert(c.Args, len(c.Args)-1, "--credentials-file=/var/run/cloudsql-proxy/credentials.json")
	c.VolumeMounts = []corev1.VolumeMount{{Name: "cloudsql-proxy-credentials", MountPath: "/var/run/cloudsql-proxy", ReadOnly: true}}
}

// withPorts has the proxy listen on port and health rather than on the ports
// drawn first. It replaces the proxy, so it comes before other changes to it.
func withPorts(port, health int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		*findContainer(p, "cloudsql-proxy") = nativeProxy(port, health)
		*findContainer(p, "cloudsql-pgpass-0") = writerFor(0, port)
		*findContainer(p, "cloudsql-pgpass-follow-0") = followerFor(0, port)
		findContainer(p, "app").Env[1] = corev1.EnvVar{Name: "PGPORT", Value: strconv.Itoa(int(port))} // second, as settled puts it
	}
}

// userSecret is the copy of a cluster-scoped PostgresqlUser's password.
const userSecret = "cloudsql-user-pgpass-app"

// asLogin has the pod connect as login, to database db (none when empty),
// with that login's password.
func asLogin(login, db string) func(*Inputs) {
	return func(x *Inputs) { x.User, x.Database, x.PgpassSecret = login, db, userSecret }
}

// asUser has the pod's own containers, as settled made them, connect as login
// to database db (no PGDATABASE when empty) with the password file written
// from that login's secret. It comes after the changes that add containers.
func asUser(login, db string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for i := range cs {
				if isInjected(cs[i].Name) {
					continue
				}
				for j := range cs[i].Env {
					if cs[i].Env[j].Name == EnvUser {
						cs[i].Env[j].Value = login
					}
				}
				if db != "" {
					cs[i].Env = append(cs[i].Env, corev1.EnvVar{Name: EnvDatabase, Value: db})
				}
			}
		}
		userVolume(p)
	}
}

// asIAM has the pod log in as login, an IAM user's, to database db, with
// the proxy's identity and no password.
func asIAM(login, db string) func(*Inputs) {
	return func(x *Inputs) { x.User, x.Database, x.PgpassSecret, x.IAMAuthN = login, db, "", true }
}

// iamInjected is what Mutate makes of pod(fns...) for an IAM login as
// asIAM("app@my-project-123.iam", "orders") has it: the proxy, which logs
// in for it, and the libpq settings, without a password file, a writer, a
// follower or their volumes.
func iamInjected(fns ...func(*corev1.Pod)) *corev1.Pod {
	p := injected(fns...)
	p.Spec.InitContainers = slices.DeleteFunc(p.Spec.InitContainers, func(c corev1.Container) bool { return c.Name != ProxyContainerName })
	p.Spec.Containers = slices.DeleteFunc(p.Spec.Containers, func(c corev1.Container) bool { return strings.HasPrefix(c.Name, FollowerContainerPrefix) })
	p.Spec.Volumes = slices.DeleteFunc(p.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Name == PgpassVolumeName || v.Name == PgpassSecretVolumeName
	})
	if len(p.Spec.Volumes) == 0 {
		p.Spec.Volumes = nil
	}
	if len(p.Spec.InitContainers) == 0 {
		p.Spec.InitContainers = nil
	}
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			if c.Name == ProxyContainerName {
				c.Args = slices.Insert(c.Args, slices.Index(c.Args, "--structured-logs")+1, ProxyIAMAuthNFlag)
				continue
			}
			if isInjected(c.Name) {
				continue
			}
			c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == PgpassVolumeName })
			if len(c.VolumeMounts) == 0 {
				c.VolumeMounts = nil
			}
			c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == EnvPassFile })
			for j := range c.Env {
				if c.Env[j].Name == EnvUser {
					c.Env[j].Value = "app@my-project-123.iam"
				}
			}
			c.Env = append(c.Env, corev1.EnvVar{Name: EnvDatabase, Value: "orders"})
		}
	}
	return p
}

// userVolume has the writers read the user's password rather than the
// instance's.
func userVolume(p *corev1.Pod) {
	for i := range p.Spec.Volumes {
		if p.Spec.Volumes[i].Name == PgpassSecretVolumeName {
			p.Spec.Volumes[i].Secret.SecretName = userSecret
		}
	}
}

func TestMutate(t *testing.T) {
	type args struct {
		pod *corev1.Pod
		x   Inputs
	}
	type want struct {
		pod *corev1.Pod
		err error
	}
	// Pods that Mutate leaves as they are.
	ownProxy := withContainer(corev1.Container{Name: "proxy", Image: "gcr.io/cloudsql-docker/gce-proxy:1.33.2"})
	markedInjected := func(p *corev1.Pod) { p.Annotations[v1alpha1.AnnotationProxyInjected] = "true" }
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NativeSidecar": {
			reason: "The proxy should run as a native sidecar after the writer of the password file, both as restricted users, and app should get the libpq settings and the password files.",
			args:   args{pod: pod(), x: inputs()},
			want:   want{pod: injected()},
		},
		"AnIAMLogin": {
			reason: "An IAM login should get the proxy with --auto-iam-authn, PGUSER and PGDATABASE, and no password file, writer, follower or volume for one.",
			args:   args{pod: pod(), x: inputs(asIAM("app@my-project-123.iam", "orders"))},
			want:   want{pod: iamInjected()},
		},
		"AnIAMLoginWithAClassicProxy": {
			reason: "An IAM login without native sidecars should get the classic proxy with --auto-iam-authn and no follower beside the application.",
			args:   args{pod: pod(), x: inputs(classic, asIAM("app@my-project-123.iam", "orders"))},
			want:   want{pod: iamInjected(classicProxy)},
		},
		"AnIAMLoginWithCredentials": {
			reason: "An IAM login's proxy should authenticate with the credentials it is given, which only it mounts.",
			args:   args{pod: pod(), x: inputs(withCreds, asIAM("app@my-project-123.iam", "orders"))},
			want:   want{pod: iamInjected(proxyCredentials)},
		},
		"AnIAMLoginNeedsNoUser": {
			reason: "A non-root container without runAsUser should be injected for an IAM login: there is no file whose owner the injector must know.",
			args: args{pod: pod(func(p *corev1.Pod) { p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)} }),
				x: inputs(asIAM("app@my-project-123.iam", "orders"))},
			want: want{pod: iamInjected(func(p *corev1.Pod) { p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)} })},
		},
		"ClassicSidecar": {
			reason: "Without native sidecars the proxy should be the first container, which the kubelet starts first and which holds app back until it listens, with no connection test and no libpq settings, and kubectl should keep choosing app.",
			args:   args{pod: pod(), x: inputs(classic)},
			want:   want{pod: injected(classicProxy)},
		},
		"PortsThePodDeclaresOrProbesAreAvoided": {
			reason: "The proxy should not listen on a port that the pod declares or probes: with the same draw as NativeSidecar, each port should move on to the next free one.",
			args:   args{pod: pod(takesTheDrawnPorts), x: inputs()},
			want:   want{pod: injected(withPorts(drawnPort+1, drawnHealth+1), takesTheDrawnPorts)},
		},
		"VariablesTheContainerSetsKeepTheirValues": {
			reason: "A libpq variable that a container sets should keep its value and not be set twice; the others should be added after the container's.",
			args:   args{pod: pod(appEnv("PGUSER=app", "PGPASSFILE=/etc/app/pgpass", "OTHER=x")), x: inputs()},
			want: want{pod: injected(appEnv(
				"PGUSER=app", "PGPASSFILE=/etc/app/pgpass", "OTHER=x", "PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(int(drawnPort)),
			))},
		},
		"AContainerThatSetsPGPORTKeepsItsAddressNoPGHOST": {
			reason: "A container that sets PGPORT should keep its address and get no PGHOST, which with its port would reach nothing.",
			args:   args{pod: pod(appEnv("PGPORT=5432")), x: inputs()},
			want:   want{pod: injected(appEnv("PGPORT=5432", "PGUSER=postgres", "PGPASSFILE=/var/run/cloudsql-postgres/pgpass-0"))},
		},
		"AContainerThatSetsPGHOSTKeepsItsAddressNoPGPORT": {
			reason: "A container that sets PGHOST should keep its address and get no PGPORT, which with its host would reach nothing.",
			args:   args{pod: pod(appEnv("PGHOST=db.example.com")), x: inputs()},
			want:   want{pod: injected(appEnv("PGHOST=db.example.com", "PGUSER=postgres", "PGPASSFILE=/var/run/cloudsql-postgres/pgpass-0"))},
		},
		"InitContainersGetTheSettingsAndRunAfterTheProxy": {
			reason: "The pod's init containers should get the libpq settings and run after the native sidecar, which is up by then.",
			args:   args{pod: pod(withInit(migrate)), x: inputs()},
			want:   want{pod: injected(withInit(settled(migrate, 0)))},
		},
		"InitContainersInClassicMode": {
			reason: "Without native sidecars the pod's init containers should still get the libpq settings and run after the writer.",
			args:   args{pod: pod(withInit(migrate)), x: inputs(classic)},
			want:   want{pod: injected(classicProxy, withInit(settled(migrate, 0)))},
		},
		"PrivateOnlyInstance": {
			reason: "For an instance without a public IP the proxy should connect to its private IP.",
			args:   args{pod: pod(), x: inputs(private)},
			want:   want{pod: injected(proxyFlags("--private-ip"))},
		},
		"TheConfigurationsEndpoint": {
			reason: "The proxy should reach the Admin API at the configuration's endpoint, given once as one argument, with the other flags before the connection name.",
			args:   args{pod: pod(), x: inputs(private, withCreds, endpoint(testEndpoint))},
			want:   want{pod: injected(proxyFlags("--private-ip", "--sqladmin-api-endpoint="+testEndpoint), proxyCredentials)},
		},
		"AnEndpointWithoutATrailingSlashIsPassedAsWritten": {
			reason: "An endpoint without a trailing slash should be passed as written: the proxy adds the slash itself.",
			args:   args{pod: pod(), x: inputs(classic, endpoint("https://sqladmin-psc.p.googleapis.com"))},
			want:   want{pod: injected(classicProxy, proxyFlags("--sqladmin-api-endpoint=https://sqladmin-psc.p.googleapis.com"))},
		},
		"NoEndpointGooglesNoFlag": {
			reason: "Without an endpoint in the configuration the proxy should get no endpoint flag, and use Google's.",
			args:   args{pod: pod(), x: inputs(withCreds)},
			want:   want{pod: injected(proxyCredentials)},
		},
		"ProxyCredentialsAreMountedIntoTheProxyOnly": {
			reason: "The proxy's key should be mounted into the proxy and into no other container, init containers included.",
			args:   args{pod: pod(withInit(migrate)), x: inputs(withCreds)},
			want:   want{pod: injected(withInit(settled(migrate, 0)), proxyCredentials)},
		},
		"NoProxyCredentials": {
			reason: "Without a key the proxy should authenticate as the pod: no key volume, mount or flag.",
			args:   args{pod: pod(), x: inputs()},
			want:   want{pod: injected()},
		},
		"OnePasswordFilePerUser": {
			reason: "Each user that the pod's containers run as should get a password file, written as that user, in the order of the users.",
			args:   args{pod: pod(runAs1000, withContainer(worker)), x: inputs()},
			want: want{pod: injected(runAs1000, func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{writer(1000), writer(3000), follower(1000), follower(3000), nativeProxy(drawnPort, drawnHealth)}
				p.Spec.Containers = []corev1.Container{settled(app, 1000), settled(worker, 3000)}
			})},
		},
		"NonRootWithoutAUserIsDenied": {
			reason: "A container that must run as non-root without saying as whom should be denied: the owner of its password file is unknown.",
			args: args{pod: pod(func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}
			}), x: inputs()},
			want: want{err: errors.New("container app must run as non-root but sets no runAsUser, so the injector cannot tell which user must own the password file " +
				"(libpq only reads a file its user owns with mode 0600): set securityContext.runAsUser on the container or the pod")},
		},
		"APodWithItsOwnProxyIsLeftAsItIs": {
			reason: "A pod that runs a proxy of its own should be left as it is.",
			args:   args{pod: pod(ownProxy), x: inputs()},
			want:   want{pod: pod(ownProxy)},
		},
		"APodMarkedInjectedWithoutTheProxyIsLeftAsItIs": {
			reason: "A pod marked injected that runs no injected proxy should be left as it is.",
			args:   args{pod: pod(markedInjected), x: inputs()},
			want:   want{pod: pod(markedInjected)},
		},
		"ReservedContainerName": {
			reason: "A pod with a container named as the injector's should be denied.",
			args:   args{pod: pod(func(p *corev1.Pod) { p.Spec.Containers[0].Name = "cloudsql-proxy" }), x: inputs()},
			want:   want{err: errors.New("container name cloudsql-proxy is reserved for the injector: rename the pod's container")},
		},
		"ReservedVolumeName": {
			reason: "A pod with a volume named as the injector's should be denied.",
			args: args{pod: pod(func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "cloudsql-pgpass", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			}), x: inputs()},
			want: want{err: errors.New("volume name cloudsql-pgpass is reserved for the injector: rename the pod's volume")},
		},
		"MountPathTaken": {
			reason: "A pod that mounts a volume where the password files go should be denied.",
			args: args{pod: pod(func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/run/cloudsql-postgres"}}
			}), x: inputs()},
			want: want{err: errors.New("container app already mounts volume data at /var/run/cloudsql-postgres, where the injector mounts the password file: move that mount")},
		},
		"Windows": {
			reason: "A pod that runs on Windows should be denied: the proxy sidecar does not run there.",
			args:   args{pod: pod(func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} }), x: inputs()},
			want:   want{err: errors.New("the pod runs on Windows (spec.os.name), which the Cloud SQL Auth Proxy sidecar does not support")},
		},
		"AUserLogsInAsItselfToItsDatabase": {
			reason: "A pod that names a PostgresqlUser should get the instance's proxy as any other, and every container, init containers included, that login, its database and the password file written from that login's secret.",
			args:   args{pod: pod(withInit(migrate)), x: inputs(asLogin("app", "orders"))},
			want:   want{pod: injected(withInit(settled(migrate, 0)), asUser("app", "orders"))},
		},
		"AUserWithAClassicSidecar": {
			reason: "A PostgresqlUser's pod should get the classic sidecar as an instance's does, with the user's settings.",
			args:   args{pod: pod(), x: inputs(classic, asLogin("app", "orders"))},
			want:   want{pod: injected(classicProxy, asUser("app", "orders"))},
		},
		"AUserGetsTheProxyFlagsOfItsInstance": {
			reason: "A PostgresqlUser's pod should get the proxy flags and key of its instance's configuration, as an instance's pod does.",
			args:   args{pod: pod(), x: inputs(private, withCreds, endpoint(testEndpoint), asLogin("app", "orders"))},
			want:   want{pod: injected(proxyFlags("--private-ip", "--sqladmin-api-endpoint="+testEndpoint), proxyCredentials, asUser("app", "orders"))},
		},
		"AUserThatOwnsNoDatabaseGetsNoPGDATABASE": {
			reason: "Without a database the pod should get no PGDATABASE, and connect where its own settings say.",
			args:   args{pod: pod(), x: inputs(asLogin("app", ""))},
			want:   want{pod: injected(asUser("app", ""))},
		},
		"AUserVariablesTheContainerSetsKeepTheirValues": {
			reason: "A container that sets PGUSER or PGDATABASE itself should keep its values, as with an instance.",
			args:   args{pod: pod(appEnv("PGDATABASE=reports", "PGUSER=reader")), x: inputs(asLogin("app", "orders"))},
			want: want{pod: injected(appEnv(
				"PGDATABASE=reports", "PGUSER=reader", "PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(int(drawnPort)), "PGPASSFILE=/var/run/cloudsql-postgres/pgpass-0",
			), userVolume)},
		},
		"AUserWithOnePasswordFilePerUnixUser": {
			reason: "Each Unix user of the pod's containers should get a password file of the login, written as that user.",
			args:   args{pod: pod(runAs1000, withContainer(worker)), x: inputs(asLogin("app", "orders"))},
			want: want{pod: injected(runAs1000, func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{writer(1000), writer(3000), follower(1000), follower(3000), nativeProxy(drawnPort, drawnHealth)}
				p.Spec.Containers = []corev1.Container{settled(app, 1000), settled(worker, 3000)}
			}, asUser("app", "orders"))},
		},
		"HostNetwork": {
			reason: "A pod on the node's network should be denied: the proxy would listen where the node's other pods do.",
			args:   args{pod: pod(func(p *corev1.Pod) { p.Spec.HostNetwork = true }), x: inputs()},
			want: want{err: errors.New("the pod uses the node's network (spec.hostNetwork: true): the Cloud SQL Auth Proxy sidecar would listen on the node's loopback, " +
				"on a port that other pods and services of the node may use, and serve its health checks on every address of the node; " +
				"run the pod without hostNetwork, or run a proxy of your own and remove the annotation")},
		},
	}
	quantities := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.args.pod.DeepCopy()
			got, err := Mutate(tc.args.pod, tc.args.x)
			if diff := cmp.Diff(before, tc.args.pod, quantities); diff != "" {
				t.Errorf("\n%s\nMutate(...): changed its argument, -before, +after:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.err, err, test.EquateErrors()); diff != "" {
				t.Errorf("\n%s\nMutate(...): -want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.pod, got, quantities); diff != "" {
				t.Errorf("\n%s\nMutate(...): -want, +got:\n%s", tc.reason, diff)
			}
			// What holds of every injected pod (checkPod): among others, its
			// ports are in [PortMin, PortMax], differ and are not the pod's own.
			if err == nil && !equality.Semantic.DeepEqual(got, tc.args.pod) {
				if err := checkPod(tc.args.pod, got); err != nil {
					t.Errorf("\n%s\nMutate(...): invalid pod: %v", tc.reason, err)
				}
			}
		})
	}
}

// A container that another webhook adds to the pod of a PostgresqlUser after
// the injection gets that user's login and database, not postgres.
func TestMutateReinvocationOfAUser(t *testing.T) {
	g := NewWithT(t)
	x := inputs(asLogin("app", "orders"))
	first, err := Mutate(pod(), x)
	g.Expect(err).ToNot(HaveOccurred())
	changed := first.DeepCopy()
	changed.Spec.Containers = append(changed.Spec.Containers, corev1.Container{Name: "late", Image: "example.com/late:1"})
	completed, err := Mutate(changed, x)
	g.Expect(err).ToNot(HaveOccurred())
	port, _ := ports(g, first)
	g.Expect(env(completed.Spec.Containers[len(completed.Spec.Containers)-1])).To(Equal(map[string]string{
		EnvHost: ProxyAddress, EnvPort: strconv.Itoa(int(port)), EnvUser: "app", EnvPassFile: PgpassDir + "/pgpass-0", EnvDatabase: "orders",
	}))
	g.Expect(completed.Spec.Volumes).To(Equal(first.Spec.Volumes))
	g.Expect(checkPod(changed, completed)).To(Succeed())
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
			g.Expect(findContainer(completed, "cloudsql-pgpass-4242").Command).To(Equal(writerFor(4242, port).Command), "the new user's file names the proxy's port")
			g.Expect(findContainer(completed, "cloudsql-pgpass-follow-4242").Command).To(Equal(followerFor(4242, port).Command), "and so does its follower's")
			g.Expect(findContainer(completed, "cloudsql-pgpass-0")).ToNot(BeNil())
			g.Expect(completed.Spec.Volumes).To(Equal(first.Spec.Volumes))
			g.Expect(checkPod(changed, completed)).To(Succeed())
		})
	}
}
