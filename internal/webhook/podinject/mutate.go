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
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// Names the injector gives to what it adds to a pod. A pod that asks for
// injection may not use them for anything else.
const (
	// ProxyContainerName is the Cloud SQL Auth Proxy container.
	ProxyContainerName = "cloudsql-proxy"
	// WriterContainerPrefix starts the names of the init containers that write
	// the password file, one per user the pod's containers run as
	// (cloudsql-pgpass-1000, cloudsql-pgpass-0, ...).
	WriterContainerPrefix = "cloudsql-pgpass-"
	// FollowerContainerPrefix starts the names of the sidecars that rewrite a
	// user's password file when its secret changes, one per writer
	// (cloudsql-pgpass-follow-1000, ...).
	FollowerContainerPrefix = "cloudsql-pgpass-follow-"
	// PgpassVolumeName is the in-memory emptyDir holding the password files.
	PgpassVolumeName = "cloudsql-pgpass"
	// PgpassSecretVolumeName is the copied secret the password files are
	// written from; only the writers and followers mount it.
	PgpassSecretVolumeName = "cloudsql-pgpass-secret"
	// ProxyCredentialsVolumeName is the proxy's service-account key; only the
	// proxy container mounts it.
	ProxyCredentialsVolumeName = "cloudsql-proxy-credentials"
	// SocketVolumeName is the in-memory emptyDir holding the proxy's Unix
	// socket, for pods that ask for one (AnnotationProxyUnixSocket).
	SocketVolumeName = "cloudsql-socket"

	// PgpassDir is where application containers find their password file,
	// pgpass-<uid>, read-only.
	PgpassDir = "/var/run/cloudsql-postgres"
	// PgpassSecretDir is where the writers read the copied secret.
	PgpassSecretDir = "/var/run/cloudsql-postgres-secret"
	// ProxyCredentialsDir is where the proxy reads its key.
	ProxyCredentialsDir = "/var/run/cloudsql-proxy"
	// ProxyCredentialsKey is the key of the proxy's service-account key in the
	// copied secret, and its file name.
	ProxyCredentialsKey = "credentials.json"
	// SocketDir is the directory of the proxy's Unix socket, .s.PGSQL.5432,
	// and what PGHOST names in pods that ask for one: a path without a ':',
	// which a password file could not name, and short, since a socket's path
	// holds at most 107 bytes.
	SocketDir = "/var/run/cloudsql-socket"
	// SocketPort is what PGPORT names with a Unix socket: libpq finds the
	// socket as .s.PGSQL.<port>, and the proxy names it for 5432.
	SocketPort = cloudsql.Port
)

// The variables libpq reads, which the injector adds to every container.
const (
	EnvHost     = "PGHOST"
	EnvPort     = "PGPORT"
	EnvUser     = "PGUSER"
	EnvPassFile = "PGPASSFILE"
	// EnvDatabase is added only for a PostgresqlUser (Inputs.Database).
	EnvDatabase = "PGDATABASE"
	// EnvDatabaseURL is added to pods that ask for it
	// (AnnotationDatabaseURL): a postgresql:// URL without the password.
	EnvDatabaseURL = "DATABASE_URL"
	// EnvQuitURLs is added to pods that ask for the proxy's quit endpoint
	// (AnnotationProxyQuitEndpoint): the URLs an application POSTs to when
	// it is done, separated by spaces, as Google's proxy operator names them.
	EnvQuitURLs = "CSQL_PROXY_QUIT_URLS"
)

// ProxyMetricsPortName names the proxy container's port that serves
// Prometheus metrics at /metrics, in pods that ask for them.
const ProxyMetricsPortName = "proxy-metrics"

// The proxy listens on 127.0.0.1:<port> and serves its health checks on
// <health port>, both drawn at random from [PortMin, PortMax], a high range below
// Linux's ephemeral ports (32768 and up), so that neither collides with the
// source port of an outgoing connection.
const (
	PortMin = 20000
	PortMax = 32767
)

// ProxyAddress is where the proxy listens and what PGHOST names: an address, not
// "localhost", which the kubelet's /etc/hosts also maps to ::1 (where nothing
// listens) and an image or hostAliases may map elsewhere or not at all.
const ProxyAddress = cloudsql.ProxyAddress

// ProxyUser is the user the proxy runs as: nonroot of its distroless image.
const ProxyUser int64 = 65532

// ProxyIAMAuthNFlag makes the proxy log every connection in with IAM database
// authentication, as the identity it authenticates with.
const ProxyIAMAuthNFlag = "--auto-iam-authn"

// ProxyEndpointFlag is the proxy's flag for the Cloud SQL Admin API endpoint,
// which it gets from the instance's configuration (Inputs.AdminAPIEndpoint).
const ProxyEndpointFlag = "--sqladmin-api-endpoint"

// Value of AnnotationProxyInjected on injected pods.
const injectedValue = "true"

// Errors that deny a pod. They complete the sentence "cannot inject the Cloud SQL
// Auth Proxy: ...", so each says what to change.
const (
	errWindows     = "the pod runs on Windows (spec.os.name), which the Cloud SQL Auth Proxy sidecar does not support"
	errHostNetwork = "the pod uses the node's network (spec.hostNetwork: true): the Cloud SQL Auth Proxy sidecar would listen on the node's loopback, " +
		"on a port that other pods and services of the node may use, and serve its health checks on every address of the node; " +
		"run the pod without hostNetwork, or run a proxy of your own and remove the annotation"
	errContainerTaken   = "container name %s is reserved for the injector: rename the pod's container"
	errVolumeTaken      = "volume name %s is reserved for the injector: rename the pod's volume"
	errMountTaken       = "container %s already mounts volume %s at %s, where the injector mounts the password file: move that mount"
	errUnknownUser      = "container %s must run as non-root but sets no runAsUser, so the injector cannot tell which user must own the password file (libpq only reads a file its user owns with mode 0600): set securityContext.runAsUser on the container or the pod"
	errNoFreePorts      = "every port between %d and %d is used by the pod"
	errSocketMountTaken = "container %s already mounts volume %s at %s, where the injector mounts the proxy's Unix socket: move that mount"
	errProxyPorts       = "the pod is marked %s=true but its %s container has no --port and --http-port arguments: remove the annotation and the container, and create the pod again"
)

// ProxyBinary is the Cloud SQL Auth Proxy's path in its images (the
// entrypoint of Google's images, distroless and alpine alike).
const ProxyBinary = "/cloud-sql-proxy"

// annotationDefaultContainer names the container that kubectl logs and exec
// choose when none is given.
const annotationDefaultContainer = "kubectl.kubernetes.io/default-container"

// Inputs are what Mutate needs besides the pod.
type Inputs struct {
	// ConnectionName of the instance, project:region:name.
	ConnectionName string
	// PrivateIP makes the proxy connect to the instance's private IP, for
	// instances without a public one.
	PrivateIP bool
	// AdminAPIEndpoint is the spec.endpoint of the instance's configuration,
	// passed as the proxy's --sqladmin-api-endpoint: the proxy fetches the
	// instance's certificates and addresses from the Cloud SQL Admin API, and
	// must reach it where the provider does (a Private Service Connect endpoint
	// in a cluster without a route to Google's, or an emulator). Empty leaves
	// the proxy on Google's public endpoint.
	AdminAPIEndpoint string
	// Instance names the PostgresqlInstance in AnnotationInjectedInstance;
	// empty sets no such annotation.
	Instance string
	// PgpassSecret is the secret in the pod's namespace holding key pgpass.
	PgpassSecret string
	// User is the login that PGUSER names, the one PgpassSecret holds the
	// password of; empty means postgres, the instance's administrator.
	User string
	// Database is what PGDATABASE names; empty sets no PGDATABASE (libpq
	// then takes the login's name).
	Database string
	// IAMAuthN makes the proxy log in as User with the identity it
	// authenticates with (--auto-iam-authn), for a PostgresqlUser of an IAM
	// type: the pod gets no password file, no writers and no PgpassSecret.
	IAMAuthN bool
	// ProxyCredentialsSecret is the secret in the pod's namespace holding the
	// proxy's service-account key under ProxyCredentialsSecretKey; empty when
	// the proxy authenticates as the pod (Workload Identity).
	ProxyCredentialsSecret string
	// ProxyCredentialsSecretKey is the key of ProxyCredentialsSecret; empty
	// means ProxyCredentialsKey, the key of the injector's copies.
	ProxyCredentialsSecretKey string
	// ProxyCredentialsHash is KeyHash of the key in ProxyCredentialsSecret,
	// which ProxyConfigOf records; Mutate does not read it.
	ProxyCredentialsHash string

	// ProxyImage is the Cloud SQL Auth Proxy v2 image.
	ProxyImage string
	// WriterImage runs the init containers that write the password file; it
	// needs /bin/sh.
	WriterImage string
	// Native runs the proxy as a native sidecar (an init container with
	// restartPolicy Always, Kubernetes 1.29 and later), else as a container.
	Native bool
	// ProxyResources are the proxy container's requests and limits, unless
	// Shape has its own.
	ProxyResources corev1.ResourceRequirements
	// Shape is what the pod's annotations ask of the proxy (ParseShape);
	// the zero Shape is the proxy every pod gets.
	Shape Shape
	// PSC makes the proxy connect through Private Service Connect.
	PSC bool

	// Rand draws the ports; nil uses math/rand/v2's global source.
	Rand *rand.Rand
}

func (x Inputs) proxyCredentialsSecretKey() string {
	if x.ProxyCredentialsSecretKey != "" {
		return x.ProxyCredentialsSecretKey
	}
	return ProxyCredentialsKey
}

// Mutate returns pod with the Cloud SQL Auth Proxy and the libpq settings added
// (see the package documentation). It never changes its argument. Mutate is
// idempotent: applied to its own output it returns it unchanged, and applied to a
// pod injected earlier and changed since (a reinvocation after another webhook
// added a container) it only completes the new parts. A pod that runs a proxy of
// its own, or carries the proxy-injected annotation without the injector's proxy,
// is returned as it is. The error says why the pod cannot be injected.
func Mutate(in *corev1.Pod, x Inputs) (*corev1.Pod, error) {
	pod := in.DeepCopy()
	if LeftAsIs(pod, x.ProxyImage) {
		return pod, nil
	}
	injected := pod.Annotations[v1alpha1.AnnotationProxyInjected] == injectedValue
	proxy := findContainer(pod, ProxyContainerName)
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return nil, errors.New(errWindows)
	}
	if pod.Spec.HostNetwork {
		return nil, errors.New(errHostNetwork)
	}

	var port, admin int32
	if injected {
		// The proxy already runs: only its ports are needed again (for the
		// containers added since), but both must be there.
		var ok bool
		if port, _, ok = proxyPorts(proxy); !ok {
			return nil, errors.Errorf(errProxyPorts, v1alpha1.AnnotationProxyInjected, ProxyContainerName)
		}
		admin = adminPort(proxy)
	} else {
		if err := checkReservedNames(pod, x); err != nil {
			return nil, err
		}
		n := 2
		if x.Shape.Quit {
			n = 3
		}
		drawn, err := pickPorts(pod, x.Rand, n)
		if err != nil {
			return nil, err
		}
		port = drawn[0]
		healthPort := drawn[1]
		if x.Shape.Quit {
			admin = drawn[2]
		}
		// The kubelet kills the proxy when the grace period ends, whatever
		// its delays still had to wait. A classic proxy gets SIGTERM with
		// the application, a native one once the application has ended,
		// within the same period: then the delays come after the
		// application's own time.
		own := ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, corev1.DefaultTerminationGracePeriodSeconds)
		switch g := x.Shape.gracePeriod(); {
		case g == 0:
		case x.Native:
			pod.Spec.TerminationGracePeriodSeconds = ptr.To(own + g)
		case g > own:
			pod.Spec.TerminationGracePeriodSeconds = ptr.To(g)
		}
		c := proxyContainer(x, port, healthPort, admin)
		if x.Native {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			pod.Spec.InitContainers = slices.Insert(pod.Spec.InitContainers, 0, c)
		} else {
			// The kubelet starts containers in order, and the next only once
			// the postStart hook of the one before has returned: first, and
			// waiting until the proxy listens, the proxy holds the
			// application back until it can connect. Appended, the proxy
			// started with the application, whose first connection was
			// refused (seen on a real kubelet).
			c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{
				ProxyBinary, "wait", "--http-address=" + ProxyAddress, "--http-port=" + strconv.Itoa(int(healthPort)), "--max=60s",
			}}}}
			if pod.Annotations[annotationDefaultContainer] == "" && len(pod.Spec.Containers) > 0 {
				// kubectl logs and exec keep going to the application.
				if pod.Annotations == nil {
					pod.Annotations = map[string]string{}
				}
				pod.Annotations[annotationDefaultContainer] = pod.Spec.Containers[0].Name
			}
			pod.Spec.Containers = slices.Insert(pod.Spec.Containers, 0, c)
		}
	}

	ensureVolumes(pod, x)
	users := map[int64]bool{}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			if isInjected(c.Name) {
				continue
			}
			if x.Shape.UnixSocket {
				if err := ensureSocketMount(c); err != nil {
					return nil, err
				}
			}
			if x.IAMAuthN {
				// No file to own: the proxy logs in for every user.
				ensureEnv(c, port, admin, 0, x)
				continue
			}
			uid, err := userOf(pod, c)
			if err != nil {
				return nil, err
			}
			users[uid] = true
			if err := ensureMount(c); err != nil {
				return nil, err
			}
			ensureEnv(c, port, admin, uid, x)
		}
	}
	if !x.IAMAuthN {
		ensureWriters(pod, users, port, admin, x)
	}

	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[v1alpha1.AnnotationProxyInjected] = injectedValue
	if x.Instance != "" {
		pod.Annotations[v1alpha1.AnnotationInjectedInstance] = x.Instance
	}
	return pod, nil
}

// LeftAsIs reports whether Mutate returns pod unchanged whatever its other
// inputs: the pod runs a Cloud SQL Auth Proxy of its own (v1, v2 or proxyImage), or
// is marked injected without the injector's proxy.
func LeftAsIs(pod *corev1.Pod, proxyImage string) bool {
	if pod.Annotations[v1alpha1.AnnotationProxyInjected] == injectedValue {
		return findContainer(pod, ProxyContainerName) == nil
	}
	return runsProxy(pod, proxyImage)
}

// PgpassFile is the password file of containers running as uid.
func PgpassFile(uid int64) string {
	return PgpassDir + "/pgpass-" + strconv.FormatInt(uid, 10)
}

func writerName(uid int64) string {
	return WriterContainerPrefix + strconv.FormatInt(uid, 10)
}

func followerName(uid int64) string {
	return FollowerContainerPrefix + strconv.FormatInt(uid, 10)
}

// isInjected reports whether a container name is one the injector gives.
func isInjected(name string) bool {
	if name == ProxyContainerName {
		return true
	}
	for _, prefix := range []string{FollowerContainerPrefix, WriterContainerPrefix} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			if _, err := strconv.ParseInt(rest, 10, 64); err == nil {
				return true
			}
		}
	}
	return false
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

// runsProxy reports whether a container of the pod runs a Cloud SQL Auth Proxy
// (v1 or v2, or the configured image), in which case the pod brought its own.
func runsProxy(pod *corev1.Pod, configured string) bool {
	want := Repository(configured)
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			repo := Repository(c.Image)
			base := repo[strings.LastIndex(repo, "/")+1:]
			if repo == want || base == "cloud-sql-proxy" || base == "gce-proxy" {
				return true
			}
		}
	}
	return false
}

// Repository is an image reference without its tag and digest.
func Repository(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image
}

func checkReservedNames(pod *corev1.Pod, x Inputs) error {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if isInjected(c.Name) {
				return errors.Errorf(errContainerTaken, c.Name)
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		switch v.Name {
		case PgpassVolumeName, PgpassSecretVolumeName, ProxyCredentialsVolumeName:
			return errors.Errorf(errVolumeTaken, v.Name)
		case SocketVolumeName:
			// Reserved only where it is used: a pod that had a volume of
			// this name before sockets existed is injected as it was.
			if x.Shape.UnixSocket {
				return errors.Errorf(errVolumeTaken, v.Name)
			}
		}
	}
	return nil
}

// proxyPorts reads the ports of an injected proxy from its arguments.
func proxyPorts(c *corev1.Container) (port, health int32, ok bool) {
	for _, a := range c.Args {
		if v, found := strings.CutPrefix(a, "--port="); found {
			if p, err := strconv.ParseInt(v, 10, 32); err == nil {
				port = int32(p)
			}
		}
		if v, found := strings.CutPrefix(a, "--http-port="); found {
			if p, err := strconv.ParseInt(v, 10, 32); err == nil {
				health = int32(p)
			}
		}
	}
	return port, health, port > 0 && health > 0
}

// adminPort reads the port of an injected proxy's admin server (its quit
// endpoint) from its arguments; 0 when it has none.
func adminPort(c *corev1.Container) int32 {
	for _, a := range c.Args {
		if v, found := strings.CutPrefix(a, "--admin-port="); found {
			if p, err := strconv.ParseInt(v, 10, 32); err == nil {
				return int32(p)
			}
		}
	}
	return 0
}

// pickPorts draws n different ports in [PortMin, PortMax] that no container
// of the pod declares or probes: the proxy's, its health check's and, when
// n is 3, its admin server's.
func pickPorts(pod *corev1.Pod, r *rand.Rand, n int) ([]int32, error) {
	used := usedPorts(pod)
	size := PortMax - PortMin + 1
	intN := rand.IntN
	if r != nil {
		intN = r.IntN
	}
	pick := func() (int32, error) {
		start := intN(size)
		for i := range size {
			p := int32(PortMin + (start+i)%size)
			if !used[p] {
				used[p] = true
				return p, nil
			}
		}
		return 0, errors.Errorf(errNoFreePorts, PortMin, PortMax)
	}
	drawn := make([]int32, n)
	for i := range drawn {
		p, err := pick()
		if err != nil {
			return nil, err
		}
		drawn[i] = p
	}
	return drawn, nil
}

func usedPorts(pod *corev1.Pod) map[int32]bool {
	used := map[int32]bool{}
	probe := func(p *corev1.Probe) {
		if p == nil {
			return
		}
		switch {
		case p.HTTPGet != nil && p.HTTPGet.Port.Type == intstr.Int:
			used[p.HTTPGet.Port.IntVal] = true
		case p.TCPSocket != nil && p.TCPSocket.Port.Type == intstr.Int:
			used[p.TCPSocket.Port.IntVal] = true
		case p.GRPC != nil:
			used[p.GRPC.Port] = true
		}
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, p := range c.Ports {
				used[p.ContainerPort] = true
				used[p.HostPort] = true
			}
			probe(c.StartupProbe)
			probe(c.LivenessProbe)
			probe(c.ReadinessProbe)
		}
	}
	return used
}

func proxyContainer(x Inputs, port, health, admin int32) corev1.Container {
	sh := x.Shape
	args := []string{
		"--address=" + ProxyAddress,
		"--port=" + strconv.Itoa(int(port)),
		// The kubelet probes the pod's IP, so the health check server cannot
		// listen on localhost only; it serves nothing but /startup, /liveness
		// and /readiness.
		"--health-check",
		"--http-address=0.0.0.0",
		"--http-port=" + strconv.Itoa(int(health)),
		// A sidecar stopped with its pod has done nothing wrong; a non-zero
		// exit would mark Jobs failed.
		"--exit-zero-on-sigterm",
		// Lets connections that are still open finish when the pod stops
		// (classic sidecars are stopped together with the application).
		"--max-sigterm-delay=" + durationFlag(sh.maxSigtermDelay()),
		"--structured-logs",
	}
	if sh.MinSigtermDelay > 0 {
		args = append(args, "--min-sigterm-delay="+durationFlag(sh.MinSigtermDelay))
	}
	if sh.MaxConnections > 0 {
		args = append(args, "--max-connections="+strconv.FormatInt(sh.MaxConnections, 10))
	}
	if sh.LazyRefresh {
		args = append(args, "--lazy-refresh")
	}
	if sh.Prometheus {
		// On the health-check server, which listens on the pod's IP.
		args = append(args, "--prometheus")
	}
	if sh.Quit {
		// The admin server listens on the pod's loopback only.
		args = append(args, "--quitquitquit", "--admin-port="+strconv.Itoa(int(admin)))
	}
	if x.PrivateIP {
		args = append(args, "--private-ip")
	}
	if x.PSC {
		args = append(args, "--psc")
	}
	if x.IAMAuthN {
		args = append(args, ProxyIAMAuthNFlag)
	}
	if x.AdminAPIEndpoint != "" {
		// As written in the configuration: the proxy adds a missing trailing
		// slash itself, as the provider's client does (auth.NewService).
		args = append(args, ProxyEndpointFlag+"="+x.AdminAPIEndpoint)
	}
	if x.Native {
		// The proxy's /startup answers as soon as it listens, reachable instance
		// or not; with a connection test first, it answers only once the instance
		// takes a TLS connection (and the proxy exits, to be restarted, if not).
		// A native sidecar's startup gates the application's containers, which
		// then connect on their first try.
		args = append(args, "--run-connection-test")
	}
	var mounts []corev1.VolumeMount
	if x.ProxyCredentialsSecret != "" {
		args = append(args, "--credentials-file="+ProxyCredentialsDir+"/"+ProxyCredentialsKey)
		mounts = []corev1.VolumeMount{{Name: ProxyCredentialsVolumeName, MountPath: ProxyCredentialsDir, ReadOnly: true}}
	}
	instance := x.ConnectionName
	if sh.UnixSocket {
		// The socket replaces the instance's TCP listener (--port stays, for
		// the reinvocations that read it): the proxy creates
		// SocketDir/.s.PGSQL.5432, mode 0777, for every user of the pod.
		instance += "?unix-socket-path=" + SocketDir + "/.s.PGSQL." + SocketPort
		mounts = append(mounts, corev1.VolumeMount{Name: SocketVolumeName, MountPath: SocketDir})
	}
	args = append(args, instance)
	probe := func(path string, period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromInt32(health), Scheme: corev1.URISchemeHTTP,
			}},
			PeriodSeconds:    period,
			TimeoutSeconds:   5,
			FailureThreshold: failures,
			SuccessThreshold: 1,
		}
	}
	resources := x.ProxyResources
	if sh.Resources != nil {
		resources = *sh.Resources
	}
	var ports []corev1.ContainerPort
	if sh.Prometheus {
		ports = []corev1.ContainerPort{{Name: ProxyMetricsPortName, ContainerPort: health, Protocol: corev1.ProtocolTCP}}
	}
	return corev1.Container{
		Name:  ProxyContainerName,
		Image: x.ProxyImage,
		Args:  args,
		Ports: ports,
		// With a native sidecar, the application's containers start only once
		// this passes (see --run-connection-test).
		StartupProbe:             probe("/startup", 1, 60),
		LivenessProbe:            probe("/liveness", 10, 3),
		Resources:                *resources.DeepCopy(),
		VolumeMounts:             mounts,
		SecurityContext:          restricted(ProxyUser),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// durationFlag writes d as the proxy's duration flags take it, in whole
// seconds where it has no fraction (10s, not 10.000s).
func durationFlag(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// restricted is a security context that meets the "restricted" Pod Security
// Standard when uid is not 0.
func restricted(uid int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr.To(uid),
		RunAsNonRoot:             ptr.To(uid != 0),
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// userOf is the user container c runs as, as far as the pod spec tells: its
// runAsUser, else the pod's. Without either the image decides, which admission
// cannot see; root is assumed then, unless runAsNonRoot rules it out.
func userOf(pod *corev1.Pod, c *corev1.Container) (int64, error) {
	var uid *int64
	nonRoot := false
	if psc := pod.Spec.SecurityContext; psc != nil {
		uid = psc.RunAsUser
		nonRoot = ptr.Deref(psc.RunAsNonRoot, false)
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = *sc.RunAsNonRoot
		}
	}
	switch {
	case uid != nil:
		return *uid, nil
	case nonRoot:
		return 0, errors.Errorf(errUnknownUser, c.Name)
	default:
		return 0, nil
	}
}

func ensureVolumes(pod *corev1.Pod, x Inputs) {
	has := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		has[v.Name] = true
	}
	add := func(v corev1.Volume) {
		if !has[v.Name] {
			pod.Spec.Volumes = append(pod.Spec.Volumes, v)
		}
	}
	if !x.IAMAuthN {
		add(corev1.Volume{Name: PgpassVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi")),
		}}})
		// Mode 0444: the writers run as the application's users, not as the
		// secret's owner (root). Only the writers mount this volume.
		add(corev1.Volume{Name: PgpassSecretVolumeName, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  x.PgpassSecret,
			Items:       []corev1.KeyToPath{{Key: cloudsql.ConnectionKeyPgpass, Path: cloudsql.ConnectionKeyPgpass}},
			DefaultMode: ptr.To[int32](0o444),
		}}})
	}
	if x.Shape.UnixSocket {
		add(corev1.Volume{Name: SocketVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi")),
		}}})
	}
	if x.ProxyCredentialsSecret != "" {
		add(corev1.Volume{Name: ProxyCredentialsVolumeName, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  x.ProxyCredentialsSecret,
			Items:       []corev1.KeyToPath{{Key: x.proxyCredentialsSecretKey(), Path: ProxyCredentialsKey}},
			DefaultMode: ptr.To[int32](0o444),
		}}})
	}
}

// ensureMount mounts the password files' directory into c, read-only.
func ensureMount(c *corev1.Container) error {
	return ensureReadOnlyMount(c, PgpassVolumeName, PgpassDir, errMountTaken)
}

// ensureSocketMount mounts the proxy's socket directory into c, read-only
// (connecting to a socket does not write to its file system).
func ensureSocketMount(c *corev1.Container) error {
	return ensureReadOnlyMount(c, SocketVolumeName, SocketDir, errSocketMountTaken)
}

// ensureReadOnlyMount mounts volume at path into c unless c mounts it
// already; a mount of another volume at path is the error taken names.
func ensureReadOnlyMount(c *corev1.Container, volume, path, taken string) error {
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			return nil
		}
		if m.MountPath == path {
			return errors.Errorf(taken, c.Name, m.Name, m.MountPath)
		}
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volume, MountPath: path, ReadOnly: true})
	return nil
}

// proxyHostPort is where the application reaches the proxy: its TCP address
// and port, or the directory of its Unix socket and the port that names the
// socket.
func proxyHostPort(port int32, x Inputs) (string, string) {
	if x.Shape.UnixSocket {
		return SocketDir, SocketPort
	}
	return ProxyAddress, strconv.Itoa(int(port))
}

// databaseURL is DATABASE_URL for login and database (empty: libpq's
// default, the login's name) at the proxy, without a password: libpq
// finds it in PGPASSFILE, or the proxy logs in with IAM.
func databaseURL(host, port, login, database string) string {
	h := host + ":" + port
	if strings.HasPrefix(host, "/") {
		// A socket directory is written percent-encoded in the host part.
		h = url.PathEscape(host) + ":" + port
	}
	u := "postgresql://" + url.User(login).String() + "@" + h
	if database != "" {
		u += "/" + url.PathEscape(database)
	}
	return u
}

// ensureEnv adds the libpq variables that the container does not set in env.
// A variable the container sets keeps its value, so that an application that
// chose another user or file keeps its choice; variables from envFrom are
// overridden, because env takes precedence over envFrom. PGHOST and PGPORT are
// one address: a container that sets either keeps its own and gets neither,
// since the proxy's port on another host (or another port on the proxy's
// host) reaches nothing.
func ensureEnv(c *corev1.Container, port, admin int32, uid int64, x Inputs) {
	set := map[string]bool{}
	for _, e := range c.Env {
		set[e.Name] = true
	}
	ownAddress := set[EnvHost] || set[EnvPort]
	login := x.User
	if login == "" {
		login = cloudsql.RootUser
	}
	host, hostPort := proxyHostPort(port, x)
	vars := []corev1.EnvVar{
		{Name: EnvHost, Value: host},
		{Name: EnvPort, Value: hostPort},
		{Name: EnvUser, Value: login},
	}
	if !x.IAMAuthN {
		vars = append(vars, corev1.EnvVar{Name: EnvPassFile, Value: PgpassFile(uid)})
	}
	if x.Database != "" {
		vars = append(vars, corev1.EnvVar{Name: EnvDatabase, Value: x.Database})
	}
	// A container that chose its own address, login or database keeps
	// them: a URL would override them for the frameworks that read it.
	ownChoice := ownAddress || set[EnvUser] || set[EnvDatabase]
	if x.Shape.DatabaseURL && !ownChoice {
		vars = append(vars, corev1.EnvVar{Name: EnvDatabaseURL, Value: databaseURL(host, hostPort, login, x.Database)})
	}
	if x.Shape.Quit && admin > 0 {
		vars = append(vars, corev1.EnvVar{Name: EnvQuitURLs, Value: "http://" + ProxyAddress + ":" + strconv.Itoa(int(admin)) + "/quitquitquit"})
	}
	for _, e := range vars {
		address := e.Name == EnvHost || e.Name == EnvPort
		if !set[e.Name] && !(address && ownAddress) {
			c.Env = append(c.Env, e)
		}
	}
}

// writeScript writes the password file $2 from the pgpass line in $1, for the
// proxy's address only: host $3 and port $4 replace the line's first two fields
// (the connection secret's line names the proxy's host and any port; the port
// is the pod's own). libpq then sends the password to no other server, such as
// one that a container's own PGHOST or a connection string names. The shell's
// builtins do it all: the writer image needs /bin/sh alone.
const writeScript = `umask 077 && { IFS= read -r line || [ -n "$line" ]; } < "$1" && printf '%s:%s:%s\n' "$3" "$4" "${line#*:*:}" > "$2"`

// followScript is writeScript again every $5 seconds, for as long as the pod
// runs: when the kubelet brings a new password into the mounted secret (a
// password set by the provider, a rotation), the file follows it, and a
// running application's next connection uses it, with no restart. A new line
// is written beside the file and renamed over it, so that libpq never reads a
// file half written. The wait is a background sleep so that SIGTERM (which
// a shell that is PID 1 otherwise ignores) ends it at once: the pod does not
// wait its grace period for it. It needs sleep and mv besides /bin/sh.
const followScript = `trap 'exit 0' TERM INT
umask 077
last=
while :; do
  if { IFS= read -r line || [ -n "$line" ]; } < "$1" && [ "$line" != "$last" ]; then
    printf '%s:%s:%s\n' "$3" "$4" "${line#*:*:}" > "$2.new" && mv -f "$2.new" "$2" && last=$line
  fi
  sleep "$5" & wait $!
done`

// followUntilQuitScript is followScript that also ends, with 0, once the
// proxy no longer listens on its admin port (its hexadecimal number is $6):
// the proxy has quit, through its quit endpoint, and a classic follower must
// not keep a Job's pod running. Gone means absent at two checks in a row
// after it listened, or at twelve (a minute) when it never did: a classic
// follower starts only once the proxy runs, so an admin port that never
// listens will not. Containers of a pod share its network, and
// /proc/net/tcp lists the sockets of that network: the shell's builtins read
// it, as they do the password.
const followUntilQuitScript = `trap 'exit 0' TERM INT
umask 077
last=
seen=
gone=0
listening() {
  for f in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$f" ] || continue
    while read -r _ local _ state _; do
      [ "${local##*:}" = "$1" ] && [ "$state" = 0A ] && return 0
    done < "$f"
  done
  return 1
}
while :; do
  if { IFS= read -r line || [ -n "$line" ]; } < "$1" && [ "$line" != "$last" ]; then
    printf '%s:%s:%s\n' "$3" "$4" "${line#*:*:}" > "$2.new" && mv -f "$2.new" "$2" && last=$line
  fi
  if listening "$6"; then
    seen=1 gone=0
  else
    gone=$((gone + 1))
    if { [ -n "$seen" ] && [ "$gone" -ge 2 ]; } || [ "$gone" -ge 12 ]; then
      exit 0
    fi
  fi
  sleep "$5" & wait $!
done`

// pgpassFields are what the scripts print, with the format '%s:%s:%s\n',
// for the line of host $3 and port $4.
const pgpassFields = `"$3" "$4" "${line#*:*:}"`

// withLocalhostLine makes script write a second line, for localhost and the
// same port: drivers that do not use libpq (pgx, asyncpg) look a Unix
// socket's password up as localhost's, where libpq looks it up by the
// socket's directory. printf repeats its format for the second line. Only a
// pod's own loopback matches it, where no proxy of the pod listens then.
func withLocalhostLine(script string) string {
	return strings.ReplaceAll(script, pgpassFields, pgpassFields+` localhost "$4" "${line#*:*:}"`)
}

// FollowEvery is how often a follower reads the mounted secret: a new password
// reaches the file within it of the kubelet's update of the secret volume
// (which comes within the kubelet's sync period, about a minute by default).
const FollowEvery = 5 * time.Second

// ensureWriters adds an init container per user that writes that user's password
// file: libpq ignores a password file that its group or others may read, and a
// secret volume cannot give a file to a non-root user without that (fsGroup even
// adds group read). The writers run first, before the proxy and the pod's own
// init containers, as the user whose file they write, for the proxy's port.
//
// Each writer has a follower, which rewrites the file when the secret changes
// for as long as the pod runs: a native sidecar right after the writers when
// sidecars are native (it ends with the pod's other containers, so a Job
// still completes), else a container beside the application's (which, like
// the classic proxy, keeps running after them). The writer stays, so that the
// file is there before anything else starts, without a startup probe.
func ensureWriters(pod *corev1.Pod, users map[int64]bool, port, admin int32, x Inputs) {
	uids := make([]int64, 0, len(users))
	for uid := range users {
		if findContainer(pod, writerName(uid)) == nil {
			uids = append(uids, uid)
		}
	}
	slices.Sort(uids)
	var writers, followers []corev1.Container
	host, hostPort := proxyHostPort(port, x)
	write, follow, followUntilQuit := writeScript, followScript, followUntilQuitScript
	if x.Shape.UnixSocket {
		write, follow, followUntilQuit = withLocalhostLine(write), withLocalhostLine(follow), withLocalhostLine(followUntilQuit)
	}
	for _, uid := range uids {
		args := []string{PgpassSecretDir + "/" + cloudsql.ConnectionKeyPgpass, PgpassFile(uid), host, hostPort}
		writers = append(writers, writerContainer(writerName(uid), x.WriterImage, uid,
			append([]string{"/bin/sh", "-c", write, "pgpass-writer"}, args...), "10m"))
		followArgs := append(append([]string{"/bin/sh", "-c", follow, "pgpass-follower"}, args...), strconv.Itoa(int(FollowEvery.Seconds())))
		if !x.Native && admin > 0 {
			// A classic follower would keep a Job's pod running after its
			// proxy has quit: it ends once the proxy's admin port closes.
			followArgs = []string{"/bin/sh", "-c", followUntilQuit, "pgpass-follower"}
			followArgs = append(append(followArgs, args...), strconv.Itoa(int(FollowEvery.Seconds())), fmt.Sprintf("%04X", admin))
		}
		f := writerContainer(followerName(uid), x.WriterImage, uid, followArgs, "1m")
		if x.Native {
			f.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		followers = append(followers, f)
	}
	if x.Native {
		// After every writer: a native sidecar's start waits for nothing.
		pod.Spec.InitContainers = slices.Insert(pod.Spec.InitContainers, 0, append(writers, followers...)...)
		return
	}
	pod.Spec.InitContainers = slices.Insert(pod.Spec.InitContainers, 0, writers...)
	// Classic followers go after the proxy, which the kubelet must start
	// first (its postStart hook holds the application back).
	at := 0
	if len(pod.Spec.Containers) > 0 && pod.Spec.Containers[0].Name == ProxyContainerName {
		at = 1
	}
	pod.Spec.Containers = slices.Insert(pod.Spec.Containers, at, followers...)
}

// writerContainer is a writer or follower of uid's password file: it runs as
// uid, reads the copied secret and writes in the password files' volume.
func writerContainer(name, image string, uid int64, command []string, cpu string) corev1.Container {
	return corev1.Container{
		Name:    name,
		Image:   image,
		Command: command,
		VolumeMounts: []corev1.VolumeMount{
			{Name: PgpassSecretVolumeName, MountPath: PgpassSecretDir, ReadOnly: true},
			{Name: PgpassVolumeName, MountPath: PgpassDir},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")},
		},
		SecurityContext:          restricted(uid),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}
