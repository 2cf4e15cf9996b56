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

package composetest

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/composepg"
)

// The PostgreSQLDatabase of examples/composition/xr-v2.yaml and what it is composed of.
const (
	dbName       = "orders-db"
	dbNS         = "team-orders"
	dbInstance   = dbName + "-q9z3l"
	dbSecret     = dbName + "-postgres"
	dbInstSecret = dbName + "-postgresqlinstance"
)

// renderNamespaced renders composition-v2.yaml for the PostgreSQLDatabase in xrPath,
// defaulted by definition-v2.yaml.
func renderNamespaced(t *testing.T, xrPath string, args ...string) (rendered, error) {
	t.Helper()
	return renderWith(t, example("composition-v2.yaml"), xrPath, append([]string{"--xrd", example("definition-v2.yaml")}, args...)...)
}

// databaseFile is examples/composition/xr-v2.yaml changed by fn.
func databaseFile(t *testing.T, fn func(xr *unstructured.Unstructured)) string {
	t.Helper()
	return exampleChanged(t, "xr-v2.yaml", fn)
}

// namespacedComposed returns the namespaced PostgresqlInstance of r, decoded strictly
// (a field the API type does not have is an error rather than something the API
// server would drop), and the Secret, both as rendered too.
func namespacedComposed(g Gomega, r rendered) (*nsv1alpha1.PostgresqlInstance, *corev1.Secret, *unstructured.Unstructured, *unstructured.Unstructured) {
	// render sorts by resource name: connection-secret, postgresqlinstance.
	g.ExpectWithOffset(1, r.composed).To(HaveLen(2), "the composition should compose the instance and the Secret")
	su, pu := r.composed[0], r.composed[1]
	g.ExpectWithOffset(1, pu.GetAnnotations()).To(HaveKeyWithValue("crossplane.io/composition-resource-name", string(composepg.ResourceName)))
	g.ExpectWithOffset(1, su.GetAnnotations()).To(HaveKeyWithValue("crossplane.io/composition-resource-name", string(composepg.ConnectionSecretResourceName)))
	pi := &nsv1alpha1.PostgresqlInstance{}
	decodeStrictly(g, pu, nsv1alpha1.SchemeGroupVersion.String(), nsv1alpha1.PostgresqlInstanceKind, pi)
	s := &corev1.Secret{}
	decodeStrictly(g, su, "v1", "Secret", s)
	return pi, s, pu, su
}

func TestRenderNamespacedEachSize(t *testing.T) {
	for _, tc := range sizeCases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := renderNamespaced(t, databaseFile(t, tc.set))
			g.Expect(err).NotTo(HaveOccurred())

			pi, s, pu, _ := namespacedComposed(g, r)
			expectSized(g, pi.Spec.ForProvider, tc.size)
			g.Expect(pi.GetNamespace()).To(Equal(dbNS))
			g.Expect(pi.GetProviderConfigReference()).To(Equal(&xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}))
			g.Expect(pi.GetWriteConnectionSecretToReference()).To(Equal(&xpv2.LocalSecretReference{Name: dbInstSecret}))
			// deletionPolicy Delete (the XRD's default) leaves the CRD's default.
			g.Expect(pi.GetManagementPolicies()).To(BeEmpty())
			g.Expect(pi.GetAnnotations()).To(HaveKeyWithValue(v1alpha1.AnnotationAllowDeletion, "true"))
			g.Expect(pi.GetGenerateName()).To(Equal(dbName + "-"))
			g.Expect(pi.GetOwnerReferences()).To(HaveLen(1))
			g.Expect(pi.GetOwnerReferences()[0].Name).To(Equal(dbName))
			g.Expect(pu.Object).NotTo(HaveKey("status"))

			// The Secret is there from the start, in the namespace, without data.
			g.Expect(s.GetName()).To(Equal(dbSecret))
			g.Expect(s.GetNamespace()).To(Equal(dbNS))
			g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
			g.Expect(s.Data).To(BeEmpty())
			g.Expect(s.GetOwnerReferences()).To(HaveLen(1))

			g.Expect(condition(r.composite, xpv2.TypeReady)).To(Equal(map[string]any{
				"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: connection-secret, postgresqlinstance",
			}))
			g.Expect(condition(r.composite, composepg.ConditionTypeSpecValid)).To(HaveKeyWithValue("status", "True"))
			g.Expect(r.composite.Object).To(HaveKeyWithValue("status", HaveKeyWithValue("connectionSecretName", dbSecret)))
			g.Expect(r.composite.Object["status"]).NotTo(HaveKey("instanceName"))
		})
	}
}

func TestRenderNamespacedOrphanAndPrivate(t *testing.T) {
	g := NewWithT(t)
	r, err := renderNamespaced(t, databaseFile(t, func(xr *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(xr.Object, "private", "spec", "networking")
		_ = unstructured.SetNestedField(xr.Object, vpc, "spec", "network")
		_ = unstructured.SetNestedField(xr.Object, "Orphan", "spec", "deletionPolicy")
	}))
	g.Expect(err).NotTo(HaveOccurred())

	pi, _, _, _ := namespacedComposed(g, r)
	g.Expect(pi.Spec.ForProvider.Networking).To(Equal(v1alpha1.Networking{PrivateIP: v1alpha1.PrivateIP{Enabled: true, Network: vpc}}))
	g.Expect(pi.GetManagementPolicies()).To(Equal(xpv2.ManagementPolicies{"Observe", "Create", "Update", "LateInitialize"}))
}

// observedNamespacedFile is what renderNamespaced composes for xr-v2.yaml, as
// Crossplane would observe it once created: the instance named, with its Ready
// condition, and the Secret as composed.
func observedNamespacedFile(t *testing.T, g Gomega, ready corev1.ConditionStatus) string {
	t.Helper()
	r, err := renderNamespaced(t, example("xr-v2.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	_, _, pu, su := namespacedComposed(g, r)
	observe(g, pu, dbInstance, ready)
	return writeManifests(t, "observed.yaml", su, pu)
}

// providerSecret is what the provider writes into the instance's connection secret.
func providerSecret() map[string][]byte {
	return map[string][]byte{
		"connectionName": []byte("my-project-1:europe-west1:" + dbInstance),
		"endpoint":       []byte("34.1.2.3"),
		"port":           []byte("5432"),
		"username":       []byte("postgres"),
		"password":       []byte("s3cret"),
		"pgpass":         []byte("*:*:*:postgres:s3cret"),
		"publicIP":       []byte("34.1.2.3"),
		"serverCACert":   []byte("-----BEGIN CERTIFICATE-----"),
	}
}

func TestRenderNamespacedReadyWithTheSecret(t *testing.T) {
	five := providerSecret()
	delete(five, "pgpass")
	delete(five, "publicIP")
	delete(five, "serverCACert")
	cases := map[string]struct {
		instance  corev1.ConditionStatus
		published map[string][]byte
		wantData  map[string][]byte
		wantReady map[string]any
	}{
		"TheInstanceReadyAndItsDetailsPublishedTheSecretHoldsTheFiveKeys": {
			instance:  corev1.ConditionTrue,
			published: providerSecret(),
			wantData:  five,
			wantReady: map[string]any{"type": "Ready", "status": "True", "reason": "Available"},
		},
		"TheInstanceReadyWithoutItsDetailsNoDataNotReady": {
			instance:  corev1.ConditionTrue,
			wantReady: map[string]any{"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: connection-secret"},
		},
		"TheDetailsPublishedWhileTheInstanceIsCreated": {
			instance:  corev1.ConditionFalse,
			published: providerSecret(),
			wantData:  five,
			wantReady: map[string]any{"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: postgresqlinstance"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			if tc.published != nil {
				publishConnectionSecret(t, dbNS, dbInstSecret, tc.published)
			}
			r, err := renderNamespaced(t, example("xr-v2.yaml"), "--observed-resources", observedNamespacedFile(t, g, tc.instance))
			g.Expect(err).NotTo(HaveOccurred())

			pi, s, _, _ := namespacedComposed(g, r)
			// The existing instance keeps its name, and the composite shows it.
			g.Expect(pi.GetName()).To(Equal(dbInstance))
			g.Expect(r.composite.Object).To(HaveKeyWithValue("status", HaveKeyWithValue("instanceName", dbInstance)))
			g.Expect(s.GetName()).To(Equal(dbSecret))
			if tc.wantData == nil {
				g.Expect(s.Data).To(BeEmpty())
			} else {
				g.Expect(s.Data).To(Equal(tc.wantData))
			}
			g.Expect(condition(r.composite, xpv2.TypeReady)).To(Equal(tc.wantReady))
		})
	}
}

func TestRenderNamespacedRefusesMistakes(t *testing.T) {
	checkMistakes(t, renderNamespaced, databaseFile, map[string]mistake{
		"AllowedNamespacesFromAnXRDThatStillDeclaresThem": {
			set: func(xr *unstructured.Unstructured) {
				_ = unstructured.SetNestedStringSlice(xr.Object, []string{"*"}, "spec", "allowedNamespaces")
			},
			want: "spec.allowedNamespaces of PostgreSQLDatabase team-orders/orders-db cannot be set: its PostgresqlInstance is namespaced and serves only pods of namespace team-orders",
		},
		"PrivateNetworkingWithoutANetwork": privateWithoutNetwork,
	})
}

// The namespaced API offers the claim API's parameters with the same schema, but for
// allowedNamespaces, and the same rules; only the messages name a PostgreSQLDatabase
// rather than a claim.
func TestNamespacedXRDHasTheClaimAPIsParameters(t *testing.T) {
	g := NewWithT(t)
	specOf := func(file string) map[string]any {
		xrd := readManifests(t, example(file))[0]
		versions, _, _ := unstructured.NestedSlice(xrd.Object, "spec", "versions")
		g.Expect(versions).To(HaveLen(1))
		spec, found, err := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(BeTrue(), file)
		return spec
	}
	messageless := func(v any) any {
		rules, _ := v.([]any)
		out := make([]any, 0, len(rules))
		for _, r := range rules {
			m := r.(map[string]any)
			out = append(out, map[string]any{"rule": m["rule"], "fieldPath": m["fieldPath"]})
		}
		return out
	}
	claimAPI, namespaced := specOf("definition.yaml"), specOf("definition-v2.yaml")
	g.Expect(messageless(namespaced["x-kubernetes-validations"])).To(Equal(messageless(claimAPI["x-kubernetes-validations"])))

	want := claimAPI["properties"].(map[string]any)
	got := namespaced["properties"].(map[string]any)
	g.Expect(want).To(HaveKey("allowedNamespaces"))
	delete(want, "allowedNamespaces")
	g.Expect(got).To(HaveLen(len(want)))
	for name, w := range want {
		wp, gp := w.(map[string]any), got[name].(map[string]any)
		for _, key := range []string{"type", "enum", "default", "pattern", "maxLength"} {
			if wp[key] == nil {
				g.Expect(gp).NotTo(HaveKey(key), "spec.%s", name)
				continue
			}
			g.Expect(gp[key]).To(Equal(wp[key]), "spec.%s: %s", name, key)
		}
		g.Expect(messageless(gp["x-kubernetes-validations"])).To(Equal(messageless(wp["x-kubernetes-validations"])), "spec.%s", name)
	}
}

func TestValidateNamespacedExample(t *testing.T) {
	g := NewWithT(t)
	out, err := validateWith(t, example("definition-v2.yaml")+","+repoPath("package", "crds"),
		example("xr-v2.yaml"), example("definition-v2.yaml"), example("composition-v2.yaml"))
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("Total 3 resources: 0 missing schemas, 3 success cases, 0 failure cases"))

	bad := databaseFile(t, func(xr *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(xr.Object, "huge", "spec", "size")
	})
	out, err = validateWith(t, example("definition-v2.yaml"), bad)
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring(`spec.size: Unsupported value: "huge": supported values: "small", "medium", "large"`))
}
