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

package providerconfig

import (
	"context"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

func TestForNamespacedEndpointsAndTenancy(t *testing.T) {
	s := runtime.NewScheme()
	if err := nsv1alpha1.SchemeBuilder.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	spec := func(endpoint string) nsv1alpha1.ProviderConfigSpec {
		return nsv1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "p", Endpoint: endpoint},
			Credentials: nsv1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: &xpv2.LocalSecretKeySelector{LocalSecretReference: xpv2.LocalSecretReference{Name: "s"}, Key: "k"}}}
	}
	type want struct {
		Err     string
		Refused bool
		Tenant  bool
	}
	cases := map[string]struct {
		reason   string
		kind     string
		endpoint string
		allowed  []string
		want     want
	}{
		"GoogleByDefault":    {reason: "Google's endpoint needs no allowing.", kind: nsv1alpha1.ProviderConfigKind, want: want{Tenant: true}},
		"NoneByDefault":      {reason: "By default no other endpoint is allowed.", kind: nsv1alpha1.ProviderConfigKind, endpoint: "http://10.0.0.1/", want: want{Refused: true, Err: `ProviderConfig "pc" of namespace team: spec.endpoint "http://10.0.0.1/" is not allowed for namespaced ProviderConfigs by [tenancy] namespaced_endpoints of the provider's configuration file (none)`}},
		"Listed":             {reason: "A listed endpoint is allowed, trailing slashes aside.", kind: nsv1alpha1.ProviderConfigKind, endpoint: "https://psc.example.com/sqladmin/", allowed: []string{"https://psc.example.com/sqladmin"}, want: want{Tenant: true}},
		"NotListed":          {reason: "Another path is another endpoint.", kind: nsv1alpha1.ProviderConfigKind, endpoint: "https://psc.example.com/other", allowed: []string{"https://psc.example.com/sqladmin"}, want: want{Refused: true, Err: "(https://psc.example.com/sqladmin)"}},
		"Any":                {reason: "* allows any endpoint.", kind: nsv1alpha1.ProviderConfigKind, endpoint: "http://anything/", allowed: []string{"*"}, want: want{Tenant: true}},
		"ClusterAnyEndpoint": {reason: "A ClusterProviderConfig is the platform's: its endpoint is not checked, and it is not a tenant's.", kind: nsv1alpha1.ClusterProviderConfigKind, endpoint: "http://10.0.0.1/"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := fake.NewClientBuilder().WithScheme(s).WithObjects(
				&nsv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "pc"}, Spec: spec(tc.endpoint)},
				&nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "pc"}, Spec: nsv1alpha1.ClusterProviderConfigSpec{ProviderConfigSpec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "p", Endpoint: tc.endpoint}}}},
			).Build()
			pc, err := ForNamespaced(context.Background(), kube, "team", xpv2.ProviderConfigReference{Kind: tc.kind, Name: "pc"}, WithNamespacedEndpoints(tc.allowed))
			got := want{Refused: IsRefused(err)}
			if err != nil {
				// The error holds the wanted part: compare that.
				got.Err = err.Error()
				if tc.want.Err != "" && strings.Contains(got.Err, tc.want.Err) {
					got.Err = tc.want.Err
				}
			} else {
				got.Tenant = Tenant(pc)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nForNamespaced(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
