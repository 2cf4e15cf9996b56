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
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestAPIServerAcceptsTheNamespacedComposition creates what a platform team installs
// for the namespaced API (the v2 XRD, its Composition), the example
// PostgreSQLDatabase under the CRD Crossplane would make of the XRD, and what the
// function composes for it (the namespaced PostgresqlInstance for every size, the
// Secret before and after it holds data), on an API server with Crossplane's CRDs
// beside the provider's: each must be accepted and stored with every field it was
// sent.
func TestAPIServerAcceptsTheNamespacedComposition(t *testing.T) {
	ctx := context.Background()
	for _, f := range []string{"definition-v2.yaml", "composition-v2.yaml"} {
		for _, o := range readManifests(t, example(f)) {
			t.Run(f+"/"+o.GetKind(), func(t *testing.T) {
				createAndCompare(ctx, NewWithT(t), o)
			})
		}
	}
	ensureNamespace(t, dbNS)
	installNamespacedCompositeCRD(t)

	t.Run("XrV2Yaml", func(t *testing.T) {
		g := NewWithT(t)
		got := createAndCompare(ctx, g, readManifests(t, example("xr-v2.yaml"))[0])
		g.Expect(got.GetNamespace()).To(Equal(dbNS))
	})
	t.Run("Defaults", func(t *testing.T) {
		g := NewWithT(t)
		xr := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "platform.example.org/v1alpha1", "kind": "PostgreSQLDatabase",
			"metadata": map[string]any{"name": "defaulted", "namespace": dbNS},
			"spec":     map[string]any{},
		}}
		got := createAndCompare(ctx, g, xr)
		g.Expect(got.Object["spec"]).To(Equal(map[string]any{
			"size": "small", "region": "europe-west1", "version": "18", "networking": "public", "deletionPolicy": "Delete",
		}))
	})
	t.Run("NoAllowedNamespaces", func(t *testing.T) {
		g := NewWithT(t)
		xr := readManifests(t, example("xr-v2.yaml"))[0]
		xr.SetName("with-namespaces")
		g.Expect(unstructured.SetNestedStringSlice(xr.Object, []string{"*"}, "spec", "allowedNamespaces")).To(Succeed())
		g.Expect(env.Client.Create(ctx, xr)).To(Succeed())
		// The API server drops what the schema does not declare: the function
		// never sees the field.
		g.Expect(xr.Object["spec"]).NotTo(HaveKey("allowedNamespaces"))
	})

	sets := map[string]func(xr *unstructured.Unstructured){
		"PrivateOrphan": func(xr *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(xr.Object, "private", "spec", "networking")
			_ = unstructured.SetNestedField(xr.Object, vpc, "spec", "network")
			_ = unstructured.SetNestedField(xr.Object, "Orphan", "spec", "deletionPolicy")
		},
	}
	for _, tc := range sizeCases {
		sets[tc.name] = tc.set
	}
	for name, set := range sets {
		t.Run("PostgresqlInstance/"+name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := renderNamespaced(t, databaseFile(t, set))
			g.Expect(err).NotTo(HaveOccurred())
			_, _, u, _ := namespacedComposed(g, r)
			// The composite exists only in the files here (render leaves the
			// owner's uid empty, which the API server refuses).
			u.SetOwnerReferences(nil)
			got := createAndCompare(ctx, g, u)
			g.Expect(got.GetName()).To(HavePrefix(dbName + "-"))
			g.Expect(got.GetNamespace()).To(Equal(dbNS))
		})
	}

	t.Run("Secret", func(t *testing.T) {
		g := NewWithT(t)
		r, err := renderNamespaced(t, example("xr-v2.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		_, _, _, empty := namespacedComposed(g, r)
		empty.SetOwnerReferences(nil)
		createAndCompare(ctx, g, empty)

		publishConnectionSecret(t, dbNS, dbInstSecret, providerSecret())
		r, err = renderNamespaced(t, example("xr-v2.yaml"), "--observed-resources", observedNamespacedFile(t, g, "True"))
		g.Expect(err).NotTo(HaveOccurred())
		_, _, _, full := namespacedComposed(g, r)
		full.SetOwnerReferences(nil)
		// Crossplane applies the Secret it composed before; so does this.
		g.Expect(env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(full), client.FieldOwner("test"), client.ForceOwnership)).To(Succeed())
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(full.GroupVersionKind())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(full), got)).To(Succeed())
		g.Expect(got.Object["data"]).To(HaveLen(5))
		g.Expect(missing(full.Object, got.Object, "")).To(BeEmpty())
	})
}

// TestNamespacedCompositeRulesOnAPIServer checks the rules of definition-v2.yaml that
// only an update can break: region, version and private networking are for the life
// of the instance, size is not.
func TestNamespacedCompositeRulesOnAPIServer(t *testing.T) {
	ensureNamespace(t, dbNS)
	installNamespacedCompositeCRD(t)
	xr := readManifests(t, example("xr-v2.yaml"))[0]

	cases := lifetimeUpdates("PostgreSQLDatabase")
	cases["PrivateWithoutANetwork"] = specUpdate{
		to:   map[string]any{"networking": "private"},
		want: "spec.network: Invalid value: is required when networking is private",
	}
	checkUpdates(t, xr, "db", cases)
}

// installNamespacedCompositeCRD installs the CRD that Crossplane makes of
// definition-v2.yaml for the composite, once, and waits until it serves. The
// schema is the XRD's; Crossplane adds spec.crossplane (the composition's
// references) and status.conditions and status.crossplane, which are preserved here
// rather than declared, while every other unknown field is pruned as Crossplane's
// CRD prunes it.
func installNamespacedCompositeCRD(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()

	xrd := readManifests(t, example("definition-v2.yaml"))[0]
	g.Expect(xrd.GetAPIVersion()).To(Equal("apiextensions.crossplane.io/v2"))
	scope, _, _ := unstructured.NestedString(xrd.Object, "spec", "scope")
	g.Expect(scope).To(Equal("Namespaced"))
	versions, _, _ := unstructured.NestedSlice(xrd.Object, "spec", "versions")
	g.Expect(versions).To(HaveLen(1))
	version := versions[0].(map[string]any)
	schema, _, _ := unstructured.NestedMap(version, "schema", "openAPIV3Schema")
	preserved := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	g.Expect(unstructured.SetNestedField(schema, preserved, "properties", "spec", "properties", "crossplane")).To(Succeed())
	g.Expect(unstructured.SetNestedField(schema, preserved, "properties", "status", "properties", "crossplane")).To(Succeed())
	g.Expect(unstructured.SetNestedField(schema, map[string]any{
		"type": "array", "items": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
	}, "properties", "status", "properties", "conditions")).To(Succeed())
	group, _, _ := unstructured.NestedString(xrd.Object, "spec", "group")
	names, _, _ := unstructured.NestedMap(xrd.Object, "spec", "names")
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": xrd.GetName()},
		"spec": map[string]any{
			"group": group, "names": names, "scope": scope,
			"versions": []any{map[string]any{
				"name": version["name"], "served": true, "storage": true,
				"schema":       map[string]any{"openAPIV3Schema": schema},
				"subresources": map[string]any{"status": map[string]any{}},
			}},
		},
	}}
	if err := env.Client.Create(ctx, crd); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The CRD serves once it is established, which takes a moment.
	probe := &unstructured.Unstructured{}
	probe.SetAPIVersion(group + "/" + version["name"].(string))
	probe.SetKind(names["kind"].(string))
	g.Eventually(func() error {
		return client.IgnoreNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: dbNS, Name: "probe"}, probe))
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

// ensureNamespace creates the namespace name unless another test did.
func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if err := env.Client.Create(context.Background(), ns); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
