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
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// A team's ProviderConfig holds an external_account key whose source is the
// provider's own service-account token and whose token_url is the team's: a
// dry-run create of an instance that uses it is denied, and neither the file's
// content nor anything else reaches the token_url.
func TestTenantExternalAccountKeyIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "tenant-wif", nil)

	token := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(token, []byte("the-provider's-own-token"), 0o600)).To(Succeed())
	var mu sync.Mutex
	var received []string
	stolen := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"x","token_type":"Bearer","expires_in":3600,"issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`))
	}))
	defer stolen.Close()
	key := `{"type":"external_account","audience":"//iam.googleapis.com/x","subject_token_type":"urn:ietf:params:oauth:token-type:jwt",` +
		`"token_url":"` + stolen.URL + `/token","credential_source":{"file":"` + token + `"}}`
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-wif", Name: "gcp"}, Data: map[string][]byte{"key.json": []byte(key)},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &nsv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-wif", Name: "team"},
		Spec: nsv1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: project, Endpoint: endpoint}, Credentials: nsv1alpha1.LocalCredentials{
			Source: xpv2.CredentialsSourceSecret, SecretRef: &xpv2.LocalSecretKeySelector{LocalSecretReference: xpv2.LocalSecretReference{Name: "gcp"}, Key: "key.json"},
		}},
	})).To(Succeed())

	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-wif", Name: "orders"}}
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "team"}
	pi.Spec.ForProvider.Name = ptr.To("tenant-wif-orders")
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "orders"}
	err := env.Client.Create(ctx, pi, client.DryRunAll)
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`PostgresqlInstance tenant-wif/orders is denied: ProviderConfig "team" of namespace tenant-wif: key "key.json" of secret tenant-wif/gcp has type "external_account"`),
		ContainSubstring("a namespaced ProviderConfig may only hold a service-account key"),
		ContainSubstring("workload identity federation (external_account) is only available through a ClusterProviderConfig that the platform team owns"),
	)))
	mu.Lock()
	defer mu.Unlock()
	g.Expect(received).To(BeEmpty(), "the tenant's token_url receives nothing")
}

// A team's ProviderConfig that names an endpoint [tenancy] namespaced_endpoints
// does not list is refused by the instance webhook and by the injector, which
// would give the endpoint to the pod's proxy.
func TestTenantEndpointIsRefused(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "tenant-endpoint", nil)
	g.Expect(env.Client.Create(ctx, &nsv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-endpoint", Name: "elsewhere"},
		Spec: nsv1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: project, Endpoint: "http://169.254.169.254/"},
			Credentials: nsv1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceNone}},
	})).To(Succeed())
	ref := &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "elsewhere"}

	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-endpoint", Name: "orders"}}
	pi.Spec.ProviderConfigReference = ref
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "orders"}
	g.Expect(env.Client.Create(ctx, pi.DeepCopy(), client.DryRunAll)).To(MatchError(And(
		ContainSubstring(`PostgresqlInstance tenant-endpoint/orders is denied: ProviderConfig "elsewhere" of namespace tenant-endpoint: spec.endpoint "http://169.254.169.254/" is not allowed`),
		ContainSubstring("[tenancy] namespaced_endpoints"),
	)))

	// An instance that only observes is read at that endpoint too: refused.
	observing := pi.DeepCopy()
	observing.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	g.Expect(env.Client.Create(ctx, observing, client.DryRunAll)).To(MatchError(
		ContainSubstring(`spec.endpoint "http://169.254.169.254/" is not allowed`)))

	// A configuration that names the endpoint after its instance was
	// admitted: a pod that asks for the instance is denied the endpoint.
	later := &nsv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-endpoint", Name: "later"},
		Spec: nsv1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: project, Endpoint: endpoint},
			Credentials: nsv1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceNone}},
	}
	g.Expect(env.Client.Create(ctx, later)).To(Succeed())
	readyNamespacedInstance(t, "tenant-endpoint", "observed", func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "later"}
		pi.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
		pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "observed-postgres"}
	})
	later.Spec.Endpoint = "http://169.254.169.254/"
	g.Expect(env.Client.Update(ctx, later)).To(Succeed())
	g.Expect(env.Client.Create(ctx, annotatedPod("tenant-endpoint", "web", "observed"))).To(MatchError(And(
		ContainSubstring(`spec.endpoint "http://169.254.169.254/" is not allowed for namespaced ProviderConfigs`),
		ContainSubstring(`ProviderConfig "later" of namespace tenant-endpoint`),
	)))
}
