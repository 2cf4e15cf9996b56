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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
)

// defaultLimits are the caps of the default configuration file.
func defaultLimits(t *testing.T) (corev1.ResourceRequirements, Limits) {
	t.Helper()
	cfg, err := ConfigFrom(configfile.Defaults(), true)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.ProxyResources, cfg.Limits
}

// noDelays are the default caps with proxy.max_sigterm_delay = "0s".
func noDelays(Limits) Limits {
	p := configfile.Defaults().Proxy
	p.MaxSigtermDelay = configfile.Duration{}
	l, _ := LimitsFrom(p)
	return l
}

func TestParseShapeAnnotations(t *testing.T) {
	base, limits := defaultLimits(t)
	q := resource.MustParse
	all := Paths{Public: true, Private: true, PSC: true}
	withRes := func(fn func(r *corev1.ResourceRequirements)) *corev1.ResourceRequirements {
		r := base.DeepCopy()
		fn(r)
		return r
	}
	type want struct {
		shape Shape
		// errs are parts of the message, every one of which it must hold.
		errs []string
	}
	cases := map[string]struct {
		annotations map[string]string
		paths       Paths
		limits      func(Limits) Limits
		want        want
	}{
		"NoAnnotations": {want: want{shape: Shape{}}},
		"OtherAnnotationsOfTheGroup": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCredentialsSecret: "key", v1alpha1.AnnotationProxyInjected: "true", v1alpha1.AnnotationInstanceName: "db"},
			want:        want{shape: Shape{}},
		},
		"UnknownProxyAnnotation": {
			annotations: map[string]string{v1alpha1.Group + "/proxy-memroy-limit": "1Gi"},
			want:        want{errs: []string{"annotation cloudsql.travelaudience.com/proxy-memroy-limit is not one the injector knows", v1alpha1.AnnotationProxyMemoryLimit}},
		},

		"CPURequestAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPURequest: "100m"},
			want:        want{shape: Shape{Resources: withRes(func(r *corev1.ResourceRequirements) { r.Requests[corev1.ResourceCPU] = q("100m") })}},
		},
		"CPURequestAtCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPURequest: "500m"},
			want:        want{shape: Shape{Resources: withRes(func(r *corev1.ResourceRequirements) { r.Requests[corev1.ResourceCPU] = q("500m") })}},
		},
		"CPURequestAboveCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPURequest: "501m"},
			want:        want{errs: []string{"annotation cloudsql.travelaudience.com/proxy-cpu-request is 501m, above the cap of 500m (proxy.max_cpu_request of the provider's configuration file): ask for at most 500m"}},
		},
		"CPURequestMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPURequest: "lots"},
			want:        want{errs: []string{`annotation cloudsql.travelaudience.com/proxy-cpu-request is "lots", which is not a Kubernetes quantity above 0`}},
		},
		"CPURequestZero": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPURequest: "0"},
			want:        want{errs: []string{`proxy-cpu-request is "0", which is not a Kubernetes quantity above 0`}},
		},
		"CPULimitAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPULimit: "250m"},
			want:        want{shape: Shape{Resources: withRes(func(r *corev1.ResourceRequirements) { r.Limits[corev1.ResourceCPU] = q("250m") })}},
		},
		"CPULimitAtCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPULimit: "1"},
			want:        want{shape: Shape{Resources: withRes(func(r *corev1.ResourceRequirements) { r.Limits[corev1.ResourceCPU] = q("1") })}},
		},
		"CPULimitAboveCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPULimit: "1100m"},
			want:        want{errs: []string{"proxy-cpu-limit is 1100m, above the cap of 1 (proxy.max_cpu_limit of the provider's configuration file)"}},
		},
		"CPULimitMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPULimit: "-1"},
			want:        want{errs: []string{`proxy-cpu-limit is "-1", which is not a Kubernetes quantity above 0`}},
		},
		"CPULimitBelowTheRequest": {
			annotations: map[string]string{v1alpha1.AnnotationProxyCPULimit: "10m"},
			want: want{errs: []string{"annotation cloudsql.travelaudience.com/proxy-cpu-limit is 10m, below the proxy's cpu request of 50m (proxy.cpu_request of the provider's configuration file): " +
				"the API server would refuse the pod; set cloudsql.travelaudience.com/proxy-cpu-request to at most 10m too, or raise the limit"}},
		},
		"MemoryRequestAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryRequest: "128Mi"},
			want:        want{shape: Shape{Resources: withRes(func(r *corev1.ResourceRequirements) { r.Requests[corev1.ResourceMemory] = q("128Mi") })}},
		},
		"MemoryRequestAtCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryRequest: "256Mi"},
			want:        want{shape: Shape{Resources: withRes(func(r *corev1.ResourceRequirements) { r.Requests[corev1.ResourceMemory] = q("256Mi") })}},
		},
		"MemoryRequestAboveCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryRequest: "2Gi", v1alpha1.AnnotationProxyMemoryLimit: "2Gi"},
			want: want{errs: []string{
				"proxy-memory-request is 2Gi, above the cap of 256Mi (proxy.max_memory_request of the provider's configuration file)",
				"proxy-memory-limit is 2Gi, above the cap of 1Gi (proxy.max_memory_limit of the provider's configuration file)",
			}},
		},
		"MemoryRequestMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryRequest: "64 MB"},
			want:        want{errs: []string{`proxy-memory-request is "64 MB", which is not a Kubernetes quantity`}},
		},
		"MemoryRequestUpToTheFilesLimit": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryRequest: "256Mi"},
			limits:      func(l Limits) Limits { return l },
			want:        want{shape: Shape{Resources: withRes(func(r *corev1.ResourceRequirements) { r.Requests[corev1.ResourceMemory] = q("256Mi") })}},
		},
		"MemoryLimitAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryLimit: "512Mi"},
			want:        want{shape: Shape{Resources: withRes(func(r *corev1.ResourceRequirements) { r.Limits[corev1.ResourceMemory] = q("512Mi") })}},
		},
		"MemoryLimitAtCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryLimit: "1Gi"},
			want:        want{shape: Shape{Resources: withRes(func(r *corev1.ResourceRequirements) { r.Limits[corev1.ResourceMemory] = q("1Gi") })}},
		},
		"MemoryLimitAboveCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryLimit: "1025Mi"},
			want:        want{errs: []string{"proxy-memory-limit is 1025Mi, above the cap of 1Gi"}},
		},
		"MemoryLimitMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryLimit: ""},
			want:        want{errs: []string{`proxy-memory-limit is "", which is not a Kubernetes quantity above 0`}},
		},
		"MemoryLimitBelowTheFilesRequest": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMemoryLimit: "32Mi"},
			want:        want{errs: []string{"proxy-memory-limit is 32Mi, below the proxy's memory request of 64Mi (proxy.memory_request", "set cloudsql.travelaudience.com/proxy-memory-request to at most 32Mi"}},
		},

		"MinSigtermDelayAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMinSigtermDelay: "5s"},
			want:        want{shape: Shape{MinSigtermDelay: 5 * time.Second}},
		},
		"MinSigtermDelayAtCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMinSigtermDelay: "1m"},
			want:        want{shape: Shape{MinSigtermDelay: time.Minute}},
		},
		"MinSigtermDelayAboveCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMinSigtermDelay: "61s"},
			want:        want{errs: []string{"proxy-min-sigterm-delay is 61s, above the cap of 1m0s (proxy.max_sigterm_delay of the provider's configuration file)"}},
		},
		"MinSigtermDelayMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMinSigtermDelay: "5"},
			want:        want{errs: []string{`proxy-min-sigterm-delay is "5", which is not a duration of 0s or more: write it like 30s or 2m`}},
		},
		"MaxSigtermDelayAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxSigtermDelay: "0s"},
			want:        want{shape: Shape{MaxSigtermDelay: ptr.To(time.Duration(0))}},
		},
		"MaxSigtermDelayAtCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxSigtermDelay: "60s"},
			want:        want{shape: Shape{MaxSigtermDelay: ptr.To(time.Minute)}},
		},
		"MaxSigtermDelayAboveCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxSigtermDelay: "2m"},
			want:        want{errs: []string{"proxy-max-sigterm-delay is 2m, above the cap of 1m0s"}},
		},
		"MaxSigtermDelayMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxSigtermDelay: "-5s"},
			want:        want{errs: []string{`proxy-max-sigterm-delay is "-5s", which is not a duration of 0s or more`}},
		},

		"NoDelayAllowedWithACapOf0s": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxSigtermDelay: "1s"},
			limits:      noDelays,
			want:        want{errs: []string{"proxy-max-sigterm-delay is 1s, above the cap of 0s (proxy.max_sigterm_delay of the provider's configuration file)"}},
		},
		"ZeroDelayWithACapOf0s": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxSigtermDelay: "0s"},
			limits:      noDelays,
			want:        want{shape: Shape{MaxSigtermDelay: ptr.To(time.Duration(0))}},
		},

		"ACapBelowTheDefaultDelayBindsEveryPod": {
			limits: func(l Limits) Limits {
				return l.Narrow(&v1alpha1.ProxyLimits{MaxSigtermDelay: &metav1.Duration{Duration: 5 * time.Second}}, `ClusterProviderConfig "quick"`)
			},
			want: want{shape: Shape{MaxSigtermDelay: ptr.To(5 * time.Second)}},
		},

		"MaxConnectionsAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxConnections: "1"},
			want:        want{shape: Shape{MaxConnections: 1}},
		},
		"MaxConnectionsAtCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxConnections: "20"},
			limits: func(l Limits) Limits {
				return l.Narrow(&v1alpha1.ProxyLimits{MaxConnections: ptr.To[int64](20)}, `ClusterProviderConfig "shared"`)
			},
			want: want{shape: Shape{MaxConnections: 20}},
		},
		"MaxConnectionsAboveCap": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxConnections: "21"},
			limits: func(l Limits) Limits {
				return l.Narrow(&v1alpha1.ProxyLimits{MaxConnections: ptr.To[int64](20)}, `ClusterProviderConfig "shared"`)
			},
			want: want{errs: []string{`proxy-max-connections is 21, above the cap of 20 (spec.proxyLimits.maxConnections of ClusterProviderConfig "shared"): ask for at most 20`}},
		},
		"MaxConnectionsCapIsTheDefault": {
			limits: func(l Limits) Limits {
				return l.Narrow(&v1alpha1.ProxyLimits{MaxConnections: ptr.To[int64](20)}, `ClusterProviderConfig "shared"`)
			},
			want: want{shape: Shape{MaxConnections: 20}},
		},
		"MaxConnectionsMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxConnections: "0"},
			want:        want{errs: []string{`proxy-max-connections is "0", which is not a whole number of 1 or more`}},
		},

		"LazyRefreshAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyLazyRefresh: "true"},
			want:        want{shape: Shape{LazyRefresh: true}},
		},
		"LazyRefreshOff": {
			annotations: map[string]string{v1alpha1.AnnotationProxyLazyRefresh: "false"},
			want:        want{shape: Shape{}},
		},
		"LazyRefreshMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyLazyRefresh: "yes"},
			want:        want{errs: []string{`annotation cloudsql.travelaudience.com/proxy-lazy-refresh is "yes": write "true" or "false"`}},
		},
		"UnixSocketAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyUnixSocket: "true"},
			want:        want{shape: Shape{UnixSocket: true}},
		},
		"UnixSocketMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyUnixSocket: "True"},
			want:        want{errs: []string{`proxy-unix-socket is "True": write "true" or "false"`}},
		},
		"PrometheusAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyPrometheus: "true"},
			want:        want{shape: Shape{Prometheus: true}},
		},
		"PrometheusMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyPrometheus: "1"},
			want:        want{errs: []string{`proxy-prometheus is "1": write "true" or "false"`}},
		},
		"QuitEndpointAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyQuitEndpoint: "true"},
			want:        want{shape: Shape{Quit: true}},
		},
		"QuitEndpointMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyQuitEndpoint: "on"},
			want:        want{errs: []string{`proxy-quit-endpoint is "on": write "true" or "false"`}},
		},
		"DatabaseURLAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationDatabaseURL: "true"},
			want:        want{shape: Shape{DatabaseURL: true}},
		},
		"DatabaseURLMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationDatabaseURL: "DATABASE_URL"},
			want:        want{errs: []string{`annotation cloudsql.travelaudience.com/database-url is "DATABASE_URL": write "true" or "false"`}},
		},

		"IPTypePrivate": {
			annotations: map[string]string{v1alpha1.AnnotationProxyIPType: "private"},
			paths:       all,
			want:        want{shape: Shape{IPType: "private"}},
		},
		"IPTypePSC": {
			annotations: map[string]string{v1alpha1.AnnotationProxyIPType: "psc"},
			paths:       all,
			want:        want{shape: Shape{IPType: "psc"}},
		},
		"IPTypeTheInstanceLacks": {
			annotations: map[string]string{v1alpha1.AnnotationProxyIPType: "psc"},
			paths:       Paths{Public: true, Private: true},
			want:        want{errs: []string{"annotation cloudsql.travelaudience.com/proxy-ip-type is psc, but the instance has no Private Service Connect (status.atProvider.pscEnabled is not true)"}},
		},
		"IPTypePrivateTheInstanceLacks": {
			annotations: map[string]string{v1alpha1.AnnotationProxyIPType: "private"},
			paths:       Paths{Public: true},
			want:        want{errs: []string{"proxy-ip-type is private, but the instance has no private IP (status.atProvider.privateIp is empty)"}},
		},
		"IPTypeNotAllowed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyIPType: "public"},
			paths:       all,
			limits: func(l Limits) Limits {
				return l.Narrow(&v1alpha1.ProxyLimits{IPTypes: []string{"private", "psc"}}, `ProviderConfig "team" of namespace team-a`)
			},
			want: want{errs: []string{`proxy-ip-type is public, which spec.proxyLimits.ipTypes of ProviderConfig "team" of namespace team-a (within proxy.ip_types of the provider's configuration file) does not allow (it allows private, psc)`}},
		},
		"IPTypeMalformed": {
			annotations: map[string]string{v1alpha1.AnnotationProxyIPType: "PRIVATE"},
			paths:       all,
			want:        want{errs: []string{`proxy-ip-type is "PRIVATE": write public, private or psc`}},
		},
		"EveryProblemAtOnce": {
			annotations: map[string]string{v1alpha1.AnnotationProxyMaxConnections: "x", v1alpha1.AnnotationProxyUnixSocket: "y"},
			want:        want{errs: []string{"proxy-max-connections", "proxy-unix-socket", "; "}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			l := limits
			if tc.limits != nil {
				l = tc.limits(l)
			}
			paths := tc.paths
			if paths == (Paths{}) {
				paths = Paths{Public: true}
			}
			got, err := ParseShape(tc.annotations, base, l, paths)
			if len(tc.want.errs) > 0 {
				g.Expect(err).To(HaveOccurred())
				for _, part := range tc.want.errs {
					g.Expect(err.Error()).To(ContainSubstring(part))
				}
				g.Expect(got).To(Equal(Shape{}))
				return
			}
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(got).To(Equal(tc.want.shape))
		})
	}
}

// A provider configuration narrows the file's caps and never widens them.
func TestLimitsNarrowOnly(t *testing.T) {
	base, limits := defaultLimits(t)
	g := NewWithT(t)
	wider := limits.Narrow(&v1alpha1.ProxyLimits{
		MaxMemoryLimit:  ptr.To(resource.MustParse("8Gi")),
		MaxSigtermDelay: &metav1.Duration{Duration: time.Hour},
		IPTypes:         []string{"public", "private", "psc"},
	}, `ClusterProviderConfig "wide"`)
	_, err := ParseShape(map[string]string{v1alpha1.AnnotationProxyMemoryLimit: "2Gi"}, base, wider, Paths{Public: true})
	g.Expect(err).To(MatchError(ContainSubstring("above the cap of 1Gi (proxy.max_memory_limit of the provider's configuration file)")))
	_, err = ParseShape(map[string]string{v1alpha1.AnnotationProxyMaxSigtermDelay: "2m"}, base, wider, Paths{Public: true})
	g.Expect(err).To(MatchError(ContainSubstring("above the cap of 1m0s (proxy.max_sigterm_delay")))

	narrower := limits.Narrow(&v1alpha1.ProxyLimits{MaxMemoryLimit: ptr.To(resource.MustParse("300Mi"))}, `ClusterProviderConfig "tight"`)
	_, err = ParseShape(map[string]string{v1alpha1.AnnotationProxyMemoryLimit: "512Mi"}, base, narrower, Paths{Public: true})
	g.Expect(err).To(MatchError(ContainSubstring(`above the cap of 300Mi (spec.proxyLimits.maxMemoryLimit of ClusterProviderConfig "tight")`)))

	// A path the file does not allow stays refused, whatever the
	// configuration lists.
	fileOnlyPublic := limits
	fileOnlyPublic.ipTypes.max = []string{"public"}
	l := fileOnlyPublic.Narrow(&v1alpha1.ProxyLimits{IPTypes: []string{"private"}}, `ClusterProviderConfig "x"`)
	_, err = ParseShape(map[string]string{v1alpha1.AnnotationProxyIPType: "private"}, base, l, Paths{Public: true, Private: true})
	g.Expect(err).To(MatchError(ContainSubstring("(it allows none)")))
}

// A request asked for above the configuration file's limit names that limit.
func TestParseShapeRequestAboveTheFilesLimit(t *testing.T) {
	base, limits := defaultLimits(t)
	base.Limits[corev1.ResourceMemory] = resource.MustParse("128Mi")
	_, err := ParseShape(map[string]string{v1alpha1.AnnotationProxyMemoryRequest: "200Mi"}, base, limits, Paths{Public: true})
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("annotation cloudsql.travelaudience.com/proxy-memory-request asks for a memory request of 200Mi, " +
		"above the proxy's memory limit of 128Mi (proxy.memory_limit of the provider's configuration file): the API server would refuse the pod; " +
		"set cloudsql.travelaudience.com/proxy-memory-limit to at least 200Mi too")))
}

func TestShapeString(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Shape{}.String()).To(BeEmpty())
	s := Shape{
		Resources:       &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
		MinSigtermDelay: 5 * time.Second, MaxSigtermDelay: ptr.To(30 * time.Second), MaxConnections: 3,
		LazyRefresh: true, UnixSocket: true, Prometheus: true, Quit: true, DatabaseURL: true, IPType: "private",
	}
	g.Expect(s.String()).To(Equal("cpu-request=100m,min-sigterm-delay=5s,max-sigterm-delay=30s,max-connections=3,lazy-refresh,unix-socket,prometheus,quit-endpoint,database-url,ip-type=private"))
	g.Expect(s.gracePeriod()).To(Equal(int64(35)))
	g.Expect(Shape{MinSigtermDelay: 1500 * time.Millisecond}.gracePeriod()).To(Equal(int64(12)))
	g.Expect(Shape{}.gracePeriod()).To(Equal(int64(0)))
}

// The rollout's cache key tells apart pods that the injector would answer
// differently: an unknown proxy-* annotation (denied), an empty value and an
// absent one; and ignores what the injector writes on every pod.
func TestRequestKey(t *testing.T) {
	g := NewWithT(t)
	base := map[string]string{v1alpha1.AnnotationInstanceName: "db"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{v1alpha1.AnnotationInstanceName: "db"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	g.Expect(requestKey("a", with(v1alpha1.Group+"/proxy-foo", "1"))).ToNot(Equal(requestKey("a", base)))
	g.Expect(requestKey("a", with(v1alpha1.AnnotationProxyLazyRefresh, ""))).ToNot(Equal(requestKey("a", base)))
	g.Expect(requestKey("a", with(v1alpha1.AnnotationDatabaseURL, "true"))).ToNot(Equal(requestKey("a", base)))
	g.Expect(requestKey("b", base)).ToNot(Equal(requestKey("a", base)))
	g.Expect(requestKey("a", with(AnnotationProxyConfig, `{"image":"x"}`, v1alpha1.AnnotationProxyInjected, "true", "other", "x"))).To(Equal(requestKey("a", base)))
}
