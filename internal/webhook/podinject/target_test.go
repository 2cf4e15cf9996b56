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
		l  lookup
		ok bool
	}{
		"orders":              {lookup{name: "orders"}, true},
		"orders.eu":           {lookup{name: "orders.eu"}, true},
		"team-a/orders":       {lookup{namespace: "team-a", name: "orders"}, true},
		"team-a/":             {lookup{namespace: "team-a"}, false},
		"/orders":             {lookup{name: "orders"}, false},
		"team-a/orders/extra": {lookup{namespace: "team-a", name: "orders/extra"}, false},
		"Orders":              {lookup{name: "Orders"}, false},
		"team.a/orders":       {lookup{namespace: "team.a", name: "orders"}, false},
	} {
		t.Run(value, func(t *testing.T) {
			g := NewWithT(t)
			l, ok := parseAnnotation(value)
			g.Expect(ok).To(Equal(want.ok))
			if ok {
				g.Expect(l).To(Equal(want.l))
			}
		})
	}
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
