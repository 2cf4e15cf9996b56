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

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod annotations that shape the injected Cloud SQL Auth Proxy of one
// workload, within the caps of the provider's configuration file
// ([proxy]) and of the instance's provider configuration
// (spec.proxyLimits). Their values are part of the API; a pod without them
// gets the proxy every pod gets.
const (
	// AnnotationProxyCPURequest, AnnotationProxyCPULimit,
	// AnnotationProxyMemoryRequest and AnnotationProxyMemoryLimit are the
	// proxy container's requests and limits (Kubernetes quantities), in place
	// of the configuration file's.
	AnnotationProxyCPURequest    = Group + "/proxy-cpu-request"
	AnnotationProxyCPULimit      = Group + "/proxy-cpu-limit"
	AnnotationProxyMemoryRequest = Group + "/proxy-memory-request"
	AnnotationProxyMemoryLimit   = Group + "/proxy-memory-limit"

	// AnnotationProxyMinSigtermDelay is how long the proxy still accepts new
	// connections after SIGTERM (--min-sigterm-delay, a duration such as
	// 5s), for applications that connect while they drain.
	AnnotationProxyMinSigtermDelay = Group + "/proxy-min-sigterm-delay"
	// AnnotationProxyMaxSigtermDelay is how long, at most, the proxy then
	// waits for open connections to close (--max-sigterm-delay); 10s without
	// it. The pod's terminationGracePeriodSeconds is raised to the sum of
	// both delays when it is shorter.
	AnnotationProxyMaxSigtermDelay = Group + "/proxy-max-sigterm-delay"

	// AnnotationProxyMaxConnections caps the connections the proxy holds at
	// once (--max-connections); it refuses the ones beyond.
	AnnotationProxyMaxConnections = Group + "/proxy-max-connections"

	// AnnotationProxyLazyRefresh "true" makes the proxy fetch the instance's
	// certificate only when a connection needs it (--lazy-refresh), for pods
	// whose CPU is throttled so that a background refresh may not run.
	AnnotationProxyLazyRefresh = Group + "/proxy-lazy-refresh"

	// AnnotationProxyUnixSocket "true" makes the proxy listen on a Unix
	// socket instead of TCP: PGHOST then names its directory.
	AnnotationProxyUnixSocket = Group + "/proxy-unix-socket"

	// AnnotationProxyIPType is the path the proxy takes to the instance:
	// public, private (--private-ip) or psc (--psc, Private Service
	// Connect). Without it the proxy takes the public IP, or the private one
	// of an instance without a public IP.
	AnnotationProxyIPType = Group + "/proxy-ip-type"

	// AnnotationProxyPrometheus "true" makes the proxy serve Prometheus
	// metrics at /metrics on its health-check port, which the proxy
	// container then declares as the port named proxy-metrics.
	AnnotationProxyPrometheus = Group + "/proxy-prometheus"

	// AnnotationProxyQuitEndpoint "true" opens the proxy's /quitquitquit
	// endpoint (--quitquitquit) on a port of the pod's loopback, and gives
	// the application the URL to call in CSQL_PROXY_QUIT_URLS, so that a
	// Job's pod ends when its application does, also where the proxy is a
	// classic sidecar.
	AnnotationProxyQuitEndpoint = Group + "/proxy-quit-endpoint"

	// AnnotationDatabaseURL "true" gives the application DATABASE_URL, a
	// postgresql:// URL of the proxy's address, login and database, without
	// the password (libpq reads it from PGPASSFILE).
	AnnotationDatabaseURL = Group + "/database-url"
)

// IP types a pod may ask its proxy to take (AnnotationProxyIPType).
const (
	ProxyIPTypePublic  = "public"
	ProxyIPTypePrivate = "private"
	ProxyIPTypePSC     = "psc"
)

// ProxyLimits bound what the pods of the instances that use a provider
// configuration may ask of their Cloud SQL Auth Proxy with the
// cloudsql.travelaudience.com/proxy-* annotations. They can only narrow the
// caps of the provider's configuration file ([proxy]), never widen them.
type ProxyLimits struct {
	// MaxCPURequest caps proxy-cpu-request, for example 500m.
	// +optional
	MaxCPURequest *resource.Quantity `json:"maxCPURequest,omitempty"`

	// MaxCPULimit caps proxy-cpu-limit.
	// +optional
	MaxCPULimit *resource.Quantity `json:"maxCPULimit,omitempty"`

	// MaxMemoryRequest caps proxy-memory-request, for example 256Mi.
	// +optional
	MaxMemoryRequest *resource.Quantity `json:"maxMemoryRequest,omitempty"`

	// MaxMemoryLimit caps proxy-memory-limit.
	// +optional
	MaxMemoryLimit *resource.Quantity `json:"maxMemoryLimit,omitempty"`

	// MaxSigtermDelay caps proxy-min-sigterm-delay and
	// proxy-max-sigterm-delay, each, for example 60s: together they bound how
	// long a pod's end, and so a node's drain, may wait for its proxy.
	// +optional
	MaxSigtermDelay *metav1.Duration `json:"maxSigtermDelay,omitempty"`

	// MaxConnections caps proxy-max-connections; a pod that does not ask
	// gets this many.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConnections *int64 `json:"maxConnections,omitempty"`

	// IPTypes are the paths to the instance that pods may ask for with
	// proxy-ip-type: public, private, psc. When omitted, any of them; an
	// empty list is refused, since a client that drops empty lists would
	// turn it into any.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +kubebuilder:validation:items:Enum=public;private;psc
	IPTypes []string `json:"ipTypes,omitempty"`
}
