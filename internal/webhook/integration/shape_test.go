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

package integration_test

import (
	"context"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// podAsking is an annotated pod in ns for inst, with the proxy-* annotations kv
// (name, value, name, value...).
func podAsking(ns, name, inst string, kv ...string) *corev1.Pod {
	p := annotatedPod(ns, name, inst)
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

// A pod's proxy-* annotations reach its stored proxy, and the proxy-config
// annotation records them for the rollout.
func TestProxyShapeIsInjected(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "shaped", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Status.AtProvider = v1alpha1.PostgresqlInstanceObservation{
			State: "RUNNABLE", ConnectionName: project + ":europe-west1:shaped", PublicIP: "203.0.113.7", PrivateIP: "10.0.0.7",
		}
	})
	namespace(t, "shaped-app", nil)
	p := podAsking("shaped-app", "web", "shaped",
		v1alpha1.AnnotationProxyMemoryLimit, "512Mi", v1alpha1.AnnotationProxyCPURequest, "100m",
		v1alpha1.AnnotationProxyMaxSigtermDelay, "50s", v1alpha1.AnnotationProxyMaxConnections, "3",
		v1alpha1.AnnotationProxyIPType, "private", v1alpha1.AnnotationProxyUnixSocket, "true",
		v1alpha1.AnnotationProxyQuitEndpoint, "true", v1alpha1.AnnotationProxyPrometheus, "true",
		v1alpha1.AnnotationDatabaseURL, "true", v1alpha1.AnnotationProxyLazyRefresh, "true")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())

	got := &corev1.Pod{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
	var proxy corev1.Container
	for _, c := range got.Spec.InitContainers {
		if c.Name == podinject.ProxyContainerName {
			proxy = c
		}
	}
	g.Expect(proxy.Args).To(ContainElements("--max-sigterm-delay=50s", "--max-connections=3", "--private-ip", "--lazy-refresh", "--prometheus", "--quitquitquit",
		project+":europe-west1:shaped?unix-socket-path=/var/run/cloudsql-socket/.s.PGSQL.5432"))
	g.Expect(proxy.Resources.Limits.Memory().String()).To(Equal("512Mi"))
	g.Expect(proxy.Resources.Requests.Cpu().String()).To(Equal("100m"))
	g.Expect(proxy.Ports).To(ConsistOf(HaveField("Name", podinject.ProxyMetricsPortName)))
	// Native: the delays come after the application's own 30 s.
	g.Expect(got.Spec.TerminationGracePeriodSeconds).To(Equal(ptr.To[int64](80)))
	e := envOf(got.Spec.Containers[0])
	g.Expect(e).To(HaveKeyWithValue("PGHOST", podinject.SocketDir))
	g.Expect(e).To(HaveKeyWithValue("DATABASE_URL", "postgresql://postgres@%2Fvar%2Frun%2Fcloudsql-socket:5432"))
	g.Expect(e).To(HaveKeyWithValue("CSQL_PROXY_QUIT_URLS", MatchRegexp(`^http://127\.0\.0\.1:\d{5}/quitquitquit$`)))
	cfg, ok := podinject.ParseProxyConfig(got.Annotations[podinject.AnnotationProxyConfig])
	g.Expect(ok).To(BeTrue())
	g.Expect(cfg.Shape).To(Equal("cpu-request=100m,memory-request=64Mi,memory-limit=512Mi,max-sigterm-delay=50s,max-connections=3,lazy-refresh,unix-socket,prometheus,quit-endpoint,database-url,ip-type=private"))
}

// Each way a pod can ask too much, or ask wrongly, is denied at admission with
// a message that names the annotation and, for a cap, the cap and where it is
// set.
func TestProxyShapeDenials(t *testing.T) {
	controlplane.Need(t)
	ctx := context.Background()
	g := NewWithT(t)
	// A platform configuration that narrows the caps, for both kinds.
	def := &v1alpha1.ProviderConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: pcDefault}, def)).To(Succeed())
	limits := &v1alpha1.ProxyLimits{
		MaxMemoryLimit: ptr.To(resource.MustParse("300Mi")), MaxConnections: ptr.To[int64](5),
		MaxSigtermDelay: &metav1.Duration{Duration: 20e9}, IPTypes: []string{"public"},
	}
	limited := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "limited"}, Spec: def.Spec}
	limited.Spec.ProxyLimits = limits
	g.Expect(env.Client.Create(ctx, limited)).To(Succeed())
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "limited"}, Spec: lentToAll(def.Spec)}
	cpc.Spec.ProxyLimits = limits
	g.Expect(env.Client.Create(ctx, cpc)).To(Succeed())

	readyInstance(t, "capped")
	readyInstance(t, "narrowed", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "limited"}
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"capped-app"}}
		pi.Status.AtProvider = v1alpha1.PostgresqlInstanceObservation{
			State: "RUNNABLE", ConnectionName: project + ":europe-west1:narrowed", PublicIP: "203.0.113.9", PrivateIP: "10.0.0.9",
		}
	})
	namespace(t, "capped-app", nil)
	readyNamespacedInstance(t, "capped-app", "own", func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "limited"}
	})

	cases := map[string]struct {
		inst string
		kv   []string
		want []string
	}{
		"AboveTheFilesCap": {
			inst: "capped", kv: []string{v1alpha1.AnnotationProxyMemoryLimit, "2Gi"},
			want: []string{`pod capped-app/web: cannot inject the Cloud SQL Auth Proxy for PostgresqlInstance "capped" as the pod's annotations ask`,
				"annotation cloudsql.travelaudience.com/proxy-memory-limit is 2Gi, above the cap of 1Gi (proxy.max_memory_limit of the provider's configuration file)"},
		},
		"AboveTheProviderConfigsCap": {
			inst: "narrowed", kv: []string{v1alpha1.AnnotationProxyMaxConnections, "6"},
			want: []string{`annotation cloudsql.travelaudience.com/proxy-max-connections is 6, above the cap of 5 (spec.proxyLimits.maxConnections of ProviderConfig "limited"): ask for at most 5`},
		},
		"AboveTheClusterProviderConfigsCap": {
			inst: "capped-app/own", kv: []string{v1alpha1.AnnotationProxyMemoryLimit, "512Mi"},
			want: []string{`above the cap of 300Mi (spec.proxyLimits.maxMemoryLimit of ClusterProviderConfig "limited")`},
		},
		"SigtermDelayAboveTheCap": {
			inst: "narrowed", kv: []string{v1alpha1.AnnotationProxyMinSigtermDelay, "30s"},
			want: []string{`proxy-min-sigterm-delay is 30s, above the cap of 20s (spec.proxyLimits.maxSigtermDelay of ProviderConfig "limited")`},
		},
		"RequestAboveTheLimit": {
			inst: "capped", kv: []string{v1alpha1.AnnotationProxyCPURequest, "400m", v1alpha1.AnnotationProxyCPULimit, "200m"},
			want: []string{"annotation cloudsql.travelaudience.com/proxy-cpu-request asks for a cpu request of 400m, above the proxy's cpu limit of 200m: the API server would refuse the pod"},
		},
		"Malformed": {
			inst: "capped", kv: []string{v1alpha1.AnnotationProxyMaxSigtermDelay, "ten seconds"},
			want: []string{`annotation cloudsql.travelaudience.com/proxy-max-sigterm-delay is "ten seconds", which is not a duration of 0s or more`},
		},
		"NotABoolean": {
			inst: "capped", kv: []string{v1alpha1.AnnotationProxyUnixSocket, "yes"},
			want: []string{`annotation cloudsql.travelaudience.com/proxy-unix-socket is "yes": write "true" or "false"`},
		},
		"UnknownAnnotation": {
			inst: "capped", kv: []string{v1alpha1.Group + "/proxy-max-connection", "3"},
			want: []string{"annotation cloudsql.travelaudience.com/proxy-max-connection is not one the injector knows"},
		},
		"APathTheInstanceLacks": {
			inst: "capped", kv: []string{v1alpha1.AnnotationProxyIPType, "private"},
			want: []string{"annotation cloudsql.travelaudience.com/proxy-ip-type is private, but the instance has no private IP (status.atProvider.privateIp is empty)"},
		},
		"PSCTheInstanceLacks": {
			inst: "capped", kv: []string{v1alpha1.AnnotationProxyIPType, "psc"},
			want: []string{"has no Private Service Connect (status.atProvider.pscEnabled is not true)"},
		},
		"APathTheConfigurationForbids": {
			inst: "narrowed", kv: []string{v1alpha1.AnnotationProxyIPType, "private"},
			want: []string{`annotation cloudsql.travelaudience.com/proxy-ip-type is private, which spec.proxyLimits.ipTypes of ProviderConfig "limited"`, "(it allows public)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(ctx, podAsking("capped-app", "web", tc.inst, tc.kv...))
			g.Expect(err).To(HaveOccurred())
			for _, w := range tc.want {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
		})
	}
	// Within every cap, the same instances serve the pod.
	g.Expect(env.Client.Create(ctx, podAsking("capped-app", "within", "narrowed",
		v1alpha1.AnnotationProxyMaxConnections, "5", v1alpha1.AnnotationProxyMinSigtermDelay, "20s", v1alpha1.AnnotationProxyIPType, "public"))).To(Succeed())
	g.Expect(env.Client.Create(ctx, podAsking("capped-app", "within-own", "capped-app/own", v1alpha1.AnnotationProxyMemoryLimit, "300Mi"))).To(Succeed())
}

// A reinvocation after another webhook changed the pod's proxy-* annotations
// is denied: the proxy runs as the first pass made it, and the application
// would be told of a socket, a URL or a quit endpoint it does not have.
func TestProxyShapeChangedBetweenPassesIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "reshaped")
	namespace(t, "reshaped-app", nil)
	p := podAsking("reshaped-app", "web", "reshaped", v1alpha1.AnnotationProxyMaxConnections, "2")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())

	again := p.DeepCopy()
	again.Annotations[v1alpha1.AnnotationProxyUnixSocket] = "true"
	resp := admit(g, injector(g, env.Client), "reshaped-app", again)
	g.Expect(resp.Allowed).To(BeFalse())
	g.Expect(resp.Result.Message).To(ContainSubstring("pod reshaped-app/web: the pod's proxy-* annotations now ask for max-connections=2,unix-socket, " +
		"but another admission webhook changed them after the injector had made the proxy for max-connections=2"))

	same := admit(g, injector(g, env.Client), "reshaped-app", p.DeepCopy())
	g.Expect(same.Allowed).To(BeTrue(), "the same annotations again change nothing")
	g.Expect(same.Patches).To(BeEmpty())
}
