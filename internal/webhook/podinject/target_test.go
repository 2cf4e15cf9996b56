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
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/travelaudience/cloudsql-postgres-operator/apis"
	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

func TestParseAnnotation(t *testing.T) {
	for value, want := range map[string]struct {
		reason string
		l      lookup
		ok     bool
	}{
		"orders":              {reason: "A bare name is either scope's.", l: lookup{name: "orders"}, ok: true},
		"orders.eu":           {reason: "A metadata.name is a DNS subdomain.", l: lookup{name: "orders.eu"}, ok: true},
		"team-a/orders":       {reason: "namespace/name is the namespaced object only.", l: lookup{namespace: "team-a", name: "orders"}, ok: true},
		"/orders":             {reason: "/name is the cluster-scoped object only.", l: lookup{name: "orders", cluster: true}, ok: true},
		"/orders.eu":          {reason: "/name takes any metadata.name.", l: lookup{name: "orders.eu", cluster: true}, ok: true},
		"team-a/":             {reason: "A namespace without a name names nothing."},
		"/":                   {reason: "A slash alone names nothing."},
		"//orders":            {reason: "A second leading slash is not part of a name."},
		"/team-a/orders":      {reason: "A cluster-scoped object has no namespace."},
		"team-a/orders/extra": {reason: "A name holds no slash."},
		"a/b/c":               {reason: "Two slashes are neither form."},
		"Orders":              {reason: "A metadata.name is lowercase."},
		"/Orders":             {reason: "So is a cluster-scoped one's."},
		"team.a/orders":       {reason: "A namespace is a DNS label, without dots."},
	} {
		t.Run(value, func(t *testing.T) {
			g := NewWithT(t)
			l, ok := parseAnnotation(value)
			g.Expect(ok).To(Equal(want.ok), want.reason)
			if ok {
				g.Expect(l).To(Equal(want.l), want.reason)
			}
		})
	}
}

// countingReader counts the reads it passes on.
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, o...)
}

// A bare name picks the one object of either scope that exists, and neither
// when both do; namespace/name and /name pick their scope's whatever the other
// holds. A miss of the cache that would decide is confirmed live, so that a
// new object of either scope is never passed over; what is found in a synced
// cache costs no read of the API server beyond that.
func TestResolveScoped(t *testing.T) {
	const ns = "team-a"
	scheme := kruntime.NewScheme()
	NewWithT(t).Expect(apis.AddToScheme(scheme)).To(Succeed())
	nsPI := func() client.Object {
		return &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"}}
	}
	clusterPI := func() client.Object {
		return &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "orders"}}
	}
	type want struct {
		found, ambiguous bool
		// clusterScoped is the scope of what was found.
		clusterScoped bool
		// liveGets are the reads that went past the cache.
		liveGets int
	}
	cases := map[string]struct {
		reason      string
		value       string
		cached, new []func() client.Object // new: created since the cache last heard
		want        want
	}{
		"OnlyNamespaced": {
			reason: "A bare name of an object of the pod's namespace only resolves to it, once the API server confirms there is no cluster-scoped one.",
			value:  "orders", cached: []func() client.Object{nsPI},
			want: want{found: true, liveGets: 1},
		},
		"OnlyClusterScoped": {
			reason: "A bare name of a cluster-scoped object only resolves to it, once the API server confirms the namespace has none, as before.",
			value:  "orders", cached: []func() client.Object{clusterPI},
			want: want{found: true, clusterScoped: true, liveGets: 1},
		},
		"Both": {
			reason: "A bare name of two objects picks neither, without asking the API server: the denial is confirmed by the caller's pass through it.",
			value:  "orders", cached: []func() client.Object{nsPI, clusterPI},
			want: want{ambiguous: true},
		},
		"NewClusterScopedOne": {
			reason: "A cluster-scoped object the cache has not seen yet must not be passed over for the namespaced one.",
			value:  "orders", cached: []func() client.Object{nsPI}, new: []func() client.Object{clusterPI},
			want: want{ambiguous: true, liveGets: 1},
		},
		"NewNamespacedOne": {
			reason: "Nor a namespaced one the cache has not seen yet for the cluster-scoped one.",
			value:  "orders", cached: []func() client.Object{clusterPI}, new: []func() client.Object{nsPI},
			want: want{ambiguous: true, liveGets: 1},
		},
		"Neither": {
			reason: "A bare name of nothing finds nothing; the cluster-scoped miss is left to the caller's pass through the API server.",
			value:  "orders",
			want:   want{liveGets: 1},
		},
		"ExplicitlyNamespaced": {
			reason: "namespace/name is the namespaced object, whatever is cluster-scoped, and costs no read of the API server.",
			value:  ns + "/orders", cached: []func() client.Object{nsPI, clusterPI},
			want: want{found: true},
		},
		"ExplicitlyClusterScoped": {
			reason: "/name is the cluster-scoped object, whatever the namespace holds, and costs no read of the API server.",
			value:  "/orders", cached: []func() client.Object{nsPI, clusterPI},
			want: want{found: true, clusterScoped: true},
		},
		"ExplicitlyClusterScopedMissing": {
			reason: "/name never falls back to the namespace's own object.",
			value:  "/orders", cached: []func() client.Object{nsPI},
			want: want{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			cb, lb := fake.NewClientBuilder().WithScheme(scheme), fake.NewClientBuilder().WithScheme(scheme)
			for _, o := range tc.cached {
				cb, lb = cb.WithObjects(o()), lb.WithObjects(o())
			}
			for _, o := range tc.new {
				lb = lb.WithObjects(o())
			}
			live := &countingReader{Reader: lb.Build()}
			l, ok := parseAnnotation(tc.value)
			g.Expect(ok).To(BeTrue())
			res, err := resolve(context.Background(), cb.Build(), live, ns, l)
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(res.found).To(Equal(tc.want.found), tc.reason)
			g.Expect(res.ambiguous).To(Equal(tc.want.ambiguous), tc.reason)
			if res.found {
				g.Expect(res.value.clusterScoped).To(Equal(tc.want.clusterScoped), tc.reason)
			}
			if res.ambiguous {
				g.Expect(res.value.clusterScoped).To(BeFalse(), tc.reason)
				g.Expect(res.cluster.clusterScoped).To(BeTrue(), tc.reason)
			}
			g.Expect(live.gets).To(Equal(tc.want.liveGets), tc.reason)
		})
	}
}

// The denial of a pod whose bare name names an object of either scope names
// both and says how to write each.
func TestAmbiguousDenial(t *testing.T) {
	g := NewWithT(t)
	l, _ := parseAnnotation("orders")
	res := resolution[target]{
		namespacedServed: true, clusterServed: true, ambiguous: true,
		value:   namespacedTarget(&nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "orders"}}),
		cluster: clusterTarget(&v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "orders"}}),
	}
	g.Expect(res.denial(instanceKind, "team-b/web", "team-b", "orders", l)).To(Equal(
		`pod team-b/web: annotation cloudsql.travelaudience.com/postgresqlinstance-name is "orders", which names both ` +
			`PostgresqlInstance "orders" of namespace team-b (cloudsql.m.travelaudience.com) and the cluster-scoped ` +
			`PostgresqlInstance "orders" (cloudsql.travelaudience.com): a bare name picks neither when both exist; ` +
			`set the annotation to "team-b/orders" for the one of namespace team-b, or to "/orders" for the cluster-scoped one`))
}

// The denial of a pod whose annotation names no instance says where the
// injector looked, and which kinds this cluster does not serve.
func TestNotFound(t *testing.T) {
	for name, tc := range map[string]struct {
		value string
		res   resolution[target]
		want  []string
	}{
		"BothServed": {
			value: "orders", res: resolution[target]{namespacedServed: true, clusterServed: true},
			want: []string{"neither in the pod's namespace team-b (postgresqlinstances.cloudsql.m.travelaudience.com) nor cluster-scoped (postgresqlinstances.cloudsql.travelaudience.com)", "serves only pods of its own namespace"},
		},
		"OnlyTheClusterScopedKindServed": {
			value: "orders", res: resolution[target]{clusterServed: true},
			want: []string{"neither in the pod's namespace team-b (that kind is not served in this cluster) nor cluster-scoped (postgresqlinstances.cloudsql.travelaudience.com)"},
		},
		"OnlyTheNamespacedKindServed": {
			value: "orders", res: resolution[target]{namespacedServed: true},
			want: []string{"nor cluster-scoped (that kind is not served in this cluster)"},
		},
		"NoneServed": {
			value: "orders", res: resolution[target]{},
			want: []string{"this cluster serves no PostgresqlInstances"},
		},
		"NamespaceNamedServed": {
			value: "team-b/orders", res: resolution[target]{namespacedServed: true},
			want: []string{`names PostgresqlInstance "orders" of namespace team-b (postgresqlinstances.cloudsql.m.travelaudience.com), which does not exist`},
		},
		"NamespaceNamedNotServed": {
			value: "team-b/orders", res: resolution[target]{clusterServed: true},
			want: []string{"this cluster does not serve namespaced PostgresqlInstances", "activate the ManagedResourceDefinition postgresqlinstances.cloudsql.m.travelaudience.com"},
		},
		"ClusterScopedNamedServed": {
			value: "/orders", res: resolution[target]{namespacedServed: true, clusterServed: true},
			want: []string{`names the cluster-scoped PostgresqlInstance "orders" (postgresqlinstances.cloudsql.travelaudience.com), which does not exist`},
		},
		"ClusterScopedNamedNotServed": {
			value: "/orders", res: resolution[target]{namespacedServed: true},
			want: []string{"this cluster does not serve cluster-scoped PostgresqlInstances", "activate the ManagedResourceDefinition postgresqlinstances.cloudsql.travelaudience.com "},
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			l, ok := parseAnnotation(tc.value)
			g.Expect(ok).To(BeTrue())
			msg := tc.res.notFound(instanceKind, "team-b/web", "team-b", tc.value, l)
			g.Expect(msg).To(HavePrefix("pod team-b/web: "))
			for _, w := range tc.want {
				g.Expect(msg).To(ContainSubstring(w))
			}
		})
	}
}

// The proxy gets the endpoint of its instance's configuration, whichever kind
// that is, and no endpoint flag when the configuration has none or is missing.
func TestProxyGetsTheConfigurationsEndpoint(t *testing.T) {
	const ns = "team-a"
	scheme := kruntime.NewScheme()
	NewWithT(t).Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	NewWithT(t).Expect(apis.AddToScheme(scheme)).To(Succeed())
	project := func(endpoint string) v1alpha1.Project {
		return v1alpha1.Project{ProjectID: "my-project-123", Endpoint: endpoint}
	}
	clusterPI := func(pc string) target {
		pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "db"}}
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: pc}
		pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: "crossplane-system", Name: "db-conn"}
		pi.Status.AtProvider.ConnectionName = testConnectionName
		return clusterTarget(pi)
	}
	namespacedPI := func(ref *xpv2.ProviderConfigReference) target {
		pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
		pi.Spec.ProviderConfigReference = ref
		pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "db-conn"}
		pi.Status.AtProvider.ConnectionName = testConnectionName
		return namespacedTarget(pi)
	}
	cases := map[string]struct {
		config client.Object // nil: the configuration does not exist
		t      target
		want   string
	}{
		"ProviderConfigWithAnEndpoint": {
			config: &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "pc"}, Spec: v1alpha1.ProviderConfigSpec{Project: project(testEndpoint)}},
			t:      clusterPI("pc"), want: testEndpoint,
		},
		"ProviderConfigWithoutOne": {
			config: &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "pc"}, Spec: v1alpha1.ProviderConfigSpec{Project: project("")}},
			t:      clusterPI("pc"),
		},
		"MissingProviderConfig": {t: clusterPI("pc")},
		"ClusterProviderConfigWithAnEndpoint": {
			config: &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "cpc"}, Spec: nsv1alpha1.ClusterProviderConfigSpec{ProviderConfigSpec: v1alpha1.ProviderConfigSpec{Project: project(testEndpoint)}}},
			t:      namespacedPI(&xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "cpc"}), want: testEndpoint,
		},
		"ClusterProviderConfigWithoutOne": {
			config: &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "cpc"}, Spec: nsv1alpha1.ClusterProviderConfigSpec{ProviderConfigSpec: v1alpha1.ProviderConfigSpec{Project: project("")}}},
			t:      namespacedPI(&xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "cpc"}),
		},
		"NamespacedProviderConfigWithAnEndpoint": {
			config: &nsv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}, Spec: nsv1alpha1.ProviderConfigSpec{Project: project("https://sqladmin-psc.p.googleapis.com")}},
			t:      namespacedPI(&xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "local"}), want: "https://sqladmin-psc.p.googleapis.com",
		},
		"NamespacedProviderConfigWithoutOne": {
			config: &nsv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}, Spec: nsv1alpha1.ProviderConfigSpec{Project: project("")}},
			t:      namespacedPI(&xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "local"}),
		},
		"MissingNamespacedProviderConfig": {t: namespacedPI(&xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "local"})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			sr := tc.t.pi.ConnectionSecret()
			b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: sr.Namespace, Name: sr.Name},
				Data:       map[string][]byte{cloudsql.ConnectionKeyPgpass: []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, "pw"))},
			})
			if tc.config != nil {
				b = b.WithObjects(tc.config)
			}
			kube := b.Build()
			i := NewInjector(kube, kube, kube, scheme, Config{ProxyImage: testProxyImage, WriterImage: testWriterImage},
				WithNamespacedEndpoints([]string{"https://sqladmin-psc.p.googleapis.com"}))
			x, resp := i.prepare(context.Background(), ns+"/web", ns, tc.t, nil)
			g.Expect(resp).To(BeNil())
			g.Expect(x.AdminAPIEndpoint).To(Equal(tc.want))

			out, err := Mutate(pod(), x.Inputs)
			g.Expect(err).ToNot(HaveOccurred())
			var want []string
			if tc.want != "" {
				want = []string{"--sqladmin-api-endpoint=" + tc.want}
			}
			g.Expect(endpointFlags(findContainer(out, ProxyContainerName).Args)).To(Equal(want))
		})
	}
}
