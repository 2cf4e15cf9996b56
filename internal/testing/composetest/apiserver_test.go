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
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestAPIServerAcceptsTheComposition creates what a platform team installs (the XRD,
// both Compositions, the Function) and what the function composes for every size, on
// an API server that has Crossplane's CRDs beside the provider's: each must be
// accepted, and stored with every field it was sent (an API server silently drops
// fields its schema does not know).
func TestAPIServerAcceptsTheComposition(t *testing.T) {
	ctx := context.Background()
	for _, f := range []string{"definition.yaml", "composition.yaml", "composition-patch-and-transform.yaml", "functions.yaml"} {
		for _, o := range readManifests(t, example(f)) {
			t.Run(f+"/"+o.GetKind(), func(t *testing.T) {
				createAndCompare(ctx, NewWithT(t), o)
			})
		}
	}

	sets := map[string]func(xr *unstructured.Unstructured){
		"Private": func(xr *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(xr.Object, "private", "spec", "networking")
			_ = unstructured.SetNestedField(xr.Object, vpc, "spec", "network")
			_ = unstructured.SetNestedStringSlice(xr.Object, []string{"*"}, "spec", "allowedNamespaces")
		},
	}
	for _, tc := range sizeCases {
		sets[tc.name] = tc.set
	}
	for name, set := range sets {
		t.Run("PostgresqlInstance/"+name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := render(t, compositeFile(t, set), "--xrd", example("definition.yaml"))
			g.Expect(err).NotTo(HaveOccurred())
			_, u := instanceOf(g, r)
			// The composite exists only in the files here, so nothing may own the
			// instance (render leaves the owner's uid empty, which the API server
			// refuses); the rest is created as Crossplane would create it.
			u.SetOwnerReferences(nil)
			got := createAndCompare(ctx, g, u)
			g.Expect(got.GetName()).To(HavePrefix(xrName + "-"))
		})
	}
}

// createAndCompare creates o and checks that the stored object holds every field of o.
func createAndCompare(ctx context.Context, g Gomega, o *unstructured.Unstructured) *unstructured.Unstructured {
	sent := o.DeepCopy()
	g.ExpectWithOffset(1, env.Client.Create(ctx, o)).To(Succeed())
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(o.GroupVersionKind())
	g.ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKeyFromObject(o), got)).To(Succeed())
	g.ExpectWithOffset(1, missing(sent.Object, got.Object, "")).To(BeEmpty(), "fields the API server did not store")
	return got
}

// missing lists the paths of want that got does not hold with the same value.
func missing(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		gm, ok := got.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for k, v := range w {
			out = append(out, missing(v, gm[k], path+"."+k)...)
		}
		return out
	case []any:
		gl, ok := got.([]any)
		if !ok || len(gl) != len(w) {
			return []string{path}
		}
		var out []string
		for i := range w {
			out = append(out, missing(w[i], gl[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return []string{strings.TrimPrefix(path, ".")}
		}
		return nil
	}
}

// TestClaimRulesOnAPIServer installs the XRD's schema as Crossplane would for the
// claim (a namespaced CRD; Crossplane adds fields of its own to spec, which are
// preserved here rather than declared) and checks the rules that only an update can
// break: region, version and private networking are for the life of the instance,
// size is not.
func TestClaimRulesOnAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	xrd := readManifests(t, example("definition.yaml"))[0]
	versions, _, _ := unstructured.NestedSlice(xrd.Object, "spec", "versions")
	g.Expect(versions).To(HaveLen(1))
	version := versions[0].(map[string]any)
	schema, _, _ := unstructured.NestedMap(version, "schema", "openAPIV3Schema")
	g.Expect(unstructured.SetNestedField(schema, true, "properties", "spec", "x-kubernetes-preserve-unknown-fields")).To(Succeed())
	group, _, _ := unstructured.NestedString(xrd.Object, "spec", "group")
	names, _, _ := unstructured.NestedMap(xrd.Object, "spec", "claimNames")
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": names["plural"].(string) + "." + group},
		"spec": map[string]any{
			"group": group, "names": names, "scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": version["name"], "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": schema},
			}},
		},
	}}
	g.Expect(env.Client.Create(ctx, crd)).To(Succeed())

	claim := readManifests(t, example("claim.yaml"))[0]
	// The namespaced composite's tests use the same namespace.
	ensureNamespace(t, claim.GetNamespace())
	// The CRD serves once it is established, which takes a moment.
	g.Eventually(func() error { return env.Client.Create(ctx, claim.DeepCopy()) }).WithTimeout(30 * time.Second).Should(Succeed())

	checkUpdates(t, claim, "claim", lifetimeUpdates("claim"))
}

// specUpdate is an update of a spec that the API server must refuse with an error
// holding want, or accept when want is empty. from is set when the object is
// created, to when it is updated (see setSpec).
type specUpdate struct {
	from, to map[string]any
	want     string
}

// lifetimeUpdates are the updates that the rules of both XRDs decide: region,
// version and private networking are for the life of the instance, size is not.
// The refusals ask for a new noun.
func lifetimeUpdates(noun string) map[string]specUpdate {
	return map[string]specUpdate{
		"AnotherRegion": {
			to:   map[string]any{"region": "us-central1"},
			want: "spec.region: Invalid value: \"us-central1\": is immutable (a Cloud SQL instance cannot move); create a new " + noun + " in the new region and migrate the data",
		},
		"LowerVersion": {
			to:   map[string]any{"version": "17"},
			want: "spec.version: Invalid value: \"17\": cannot go down (Cloud SQL upgrades a major version in place but never downgrades); to go back, restore the backup taken before the upgrade into a new " + noun,
		},
		"HigherVersion": {
			from: map[string]any{"version": "16"},
			to:   map[string]any{"version": "17"},
		},
		"PrivateBackToPublic": {
			from: map[string]any{"networking": "private", "network": vpc},
			to:   map[string]any{"networking": "public", "network": nil},
			want: "spec.networking: Invalid value: cannot change from private to public; Cloud SQL cannot remove a private IP",
		},
		"AnotherSize": {
			to: map[string]any{"size": "large"},
		},
		"PublicToPrivate": {
			to: map[string]any{"networking": "private", "network": vpc},
		},
	}
}

// checkUpdates creates a copy of o for every case, named prefix-1, prefix-2 and so
// on so that no two cases share an object, and checks how the API server takes the
// case's update of it.
func checkUpdates(t *testing.T, o *unstructured.Unstructured, prefix string, cases map[string]specUpdate) {
	t.Helper()
	ctx := context.Background()
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := o.DeepCopy()
			c.SetName(fmt.Sprintf("%s-%d", prefix, i))
			setSpec(g, c, tc.from)
			g.Expect(env.Client.Create(ctx, c)).To(Succeed())
			setSpec(g, c, tc.to)
			err := env.Client.Update(ctx, c)
			if tc.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tc.want))
		})
	}
}

// setSpec sets (or, for nil, removes) fields of o's spec.
func setSpec(g Gomega, o *unstructured.Unstructured, fields map[string]any) {
	for k, v := range fields {
		if v == nil {
			unstructured.RemoveNestedField(o.Object, "spec", k)
			continue
		}
		g.ExpectWithOffset(1, unstructured.SetNestedField(o.Object, v, "spec", k)).To(Succeed())
	}
}
