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

package v1alpha1_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	clusterv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// The kinds are what crossplane-runtime's reconcilers take.
var (
	_ resource.ModernManaged            = &v1alpha1.PostgresqlInstance{}
	_ resource.ProviderConfig           = &v1alpha1.ProviderConfig{}
	_ resource.ProviderConfig           = &v1alpha1.ClusterProviderConfig{}
	_ resource.TypedProviderConfigUsage = &v1alpha1.ProviderConfigUsage{}
	_ resource.TypedProviderConfigUsage = &v1alpha1.ClusterProviderConfigUsage{}
)

var env *controlplane.Env

const team = "team-a"

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // make unit: the tests that need a control plane skip
	}
	var err error
	if env, err = controlplane.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot stop the test control plane:", err)
	}
	os.Exit(code)
}

// instance is the smallest valid namespaced PostgresqlInstance.
func instance(name string) *v1alpha1.PostgresqlInstance {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "shared"}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	return pi
}

func denied(g Gomega, err error, fragments ...string) {
	g.ExpectWithOffset(1, err).To(HaveOccurred(), "the API server accepted an object it should reject")
	for _, f := range fragments {
		g.ExpectWithOffset(1, err.Error()).To(ContainSubstring(f))
	}
}

func TestNamespacedInstance(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}})).To(Succeed())

	// The same defaults as the cluster-scoped kind, from the one shared type.
	pi := instance("defaults")
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())
	g.Expect(pi.Spec.ForProvider.Version).To(Equal("18"))
	g.Expect(pi.Spec.ForProvider.Resources.InstanceType).To(Equal("db-custom-1-3840"))
	g.Expect(pi.Spec.ManagementPolicies).To(ConsistOf(xpv2.ManagementActionAll))

	cases := map[string]struct {
		change    func(pi *v1alpha1.PostgresqlInstance)
		fragments []string
	}{
		"NoProviderConfig": {
			// No configuration is used implicitly: none is defaulted.
			change: func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.ProviderConfigReference = nil },
			fragments: []string{"spec.providerConfigRef", "is required: name the configuration that holds the project and credentials",
				"no configuration is used implicitly"},
		},
		"NoConnectionSecret": {
			change:    func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.WriteConnectionSecretToReference = nil },
			fragments: []string{"spec.writeConnectionSecretToRef", "is required when the provider may create the instance"},
		},
		"AKindOfProviderConfigThatDoesNotExist": {
			change: func(pi *v1alpha1.PostgresqlInstance) {
				pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "Secret", Name: "x"}
			},
			fragments: []string{"spec.providerConfigRef.kind", "must be ClusterProviderConfig"},
		},
		"AnEmptyProviderConfigName": {
			change: func(pi *v1alpha1.PostgresqlInstance) {
				pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ProviderConfig"}
			},
			fragments: []string{"spec.providerConfigRef.name", "must name a ClusterProviderConfig that the platform team lends to this namespace, or a ProviderConfig of this namespace"},
		},
		"TheSharedForProviderRules": {
			change:    func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.ForProvider.Networking.PublicIP.Enabled = false },
			fragments: []string{"spec.forProvider.networking", "enable at least one of networking.publicIp and networking.privateIp"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			pi := instance("bad")
			tc.change(pi)
			denied(g, env.Client.Create(ctx, pi), tc.fragments...)
		})
	}

	// Immutable like the cluster-scoped kind's.
	pi.Spec.ForProvider.Version = "17"
	denied(g, env.Client.Update(ctx, pi), "spec.forProvider.version", "is immutable (was 18)")
}

func TestProviderConfigs(t *testing.T) {
	controlplane.Need(t)
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}))).To(Succeed())
	project := clusterv1alpha1.Project{ProjectID: "team-a-123456"}
	cases := map[string]struct {
		creds     v1alpha1.LocalCredentials
		fragments []string
	}{
		"AKeyOfASecretOfItsNamespace": {creds: v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: &xpv2.LocalSecretKeySelector{LocalSecretReference: xpv2.LocalSecretReference{Name: "gcp"}, Key: "key.json"}}},
		"ASecretWithoutAReference": {
			creds:     v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret},
			fragments: []string{"spec.credentials.secretRef", "is required when source is Secret"},
		},
		"TheProvidersOwnIdentityBelongsToThePlatform": {
			creds:     v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceInjectedIdentity},
			fragments: []string{"spec.credentials.source", "Unsupported value", "Secret", "None"},
		},
		"NoCredentialsWithoutAnEndpoint": {
			creds:     v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceNone},
			fragments: []string{"spec.credentials.source", "None is only allowed together with spec.endpoint"},
		},
	}
	i := 0
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			i++
			pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: fmt.Sprintf("pc-%d", i)},
				Spec: v1alpha1.ProviderConfigSpec{Project: project, Credentials: tc.creds}}
			err := env.Client.Create(ctx, pc)
			if len(tc.fragments) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			denied(g, err, tc.fragments...)
		})
	}

	// A ClusterProviderConfig has the cluster-scoped ProviderConfig's spec.
	cpc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ClusterProviderConfigSpec{ProviderConfigSpec: clusterv1alpha1.ProviderConfigSpec{
		Project: project, Credentials: clusterv1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity},
	}}}
	g.Expect(env.Client.Create(ctx, cpc)).To(Succeed())
	// It lends itself to no namespace unless told, and forbids importing.
	g.Expect(cpc.Spec.Namespaces).To(BeNil())
	g.Expect(cpc.Spec.ImportPolicy).To(Equal(v1alpha1.ImportDeny))
	for name, tc := range map[string]struct {
		lend      v1alpha1.NamespaceSelection
		fragments []string
	}{
		"NotANamespaceName": {
			lend:      v1alpha1.NamespaceSelection{Names: []string{"Team_A"}},
			fragments: []string{"spec.namespaces.names[0]", "must be a namespace name"},
		},
		"NoWildcard": {
			lend:      v1alpha1.NamespaceSelection{Names: []string{"*"}},
			fragments: []string{"spec.namespaces.names[0]", "must be a namespace name"},
		},
		"UnknownOperator": {
			lend: v1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "team", Operator: "Matches", Values: []string{"a"}},
			}}},
			fragments: []string{"spec.namespaces.selector.matchExpressions", "each operator must be In, NotIn, Exists or DoesNotExist"},
		},
	} {
		bad := cpc.DeepCopy()
		bad.ObjectMeta = metav1.ObjectMeta{Name: "lent-" + strings.ToLower(name)}
		bad.Spec.Namespaces = &tc.lend
		denied(g, env.Client.Create(ctx, bad), tc.fragments...)
	}
	cpc2 := cpc.DeepCopy()
	cpc2.ObjectMeta = metav1.ObjectMeta{Name: "secret-without-namespace"}
	cpc2.Spec.Credentials = clusterv1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceSecret}
	denied(g, env.Client.Create(ctx, cpc2), "spec.credentials.secretRef", "is required when source is Secret")
}
