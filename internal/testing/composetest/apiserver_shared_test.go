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

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestAPIServerAcceptsTheSharedComposition creates what a platform team installs
// for databases on a shared instance (both shared Compositions, the instance) and
// what the function composes with them for a claim and for a namespaced composite,
// before and after the user exists, with either deletion policy: the provider's
// CRDs must accept every PostgresqlUser and PostgresqlDatabase (their rules on
// names, instances and connection secrets) and store every field they were sent.
func TestAPIServerAcceptsTheSharedComposition(t *testing.T) {
	ctx := context.Background()
	for _, f := range []string{"composition-shared.yaml", "composition-shared-v2.yaml", "shared-instance.yaml"} {
		for _, o := range readManifests(t, example(f)) {
			t.Run(f+"/"+o.GetKind(), func(t *testing.T) {
				createAndCompare(ctx, NewWithT(t), o)
			})
		}
	}
	ensureNamespace(t, dbNS)

	orphan := func(xr *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(xr.Object, "Orphan", "spec", "deletionPolicy")
	}
	cases := map[string]struct {
		render   func(t *testing.T, xrPath string, args ...string) (rendered, error)
		file     func(t *testing.T, fn func(xr *unstructured.Unstructured)) string
		set      func(xr *unstructured.Unstructured)
		observed func(t *testing.T, g Gomega) string
		prefix   string
	}{
		"Claim":       {render: renderShared, file: compositeFile, prefix: xrName},
		"ClaimOrphan": {render: renderShared, file: compositeFile, set: orphan, prefix: xrName},
		"ClaimOwned": {render: renderShared, file: compositeFile, prefix: xrName, observed: func(t *testing.T, g Gomega) string {
			return observedSharedFile(t, g, renderShared, example("xr.yaml"), sharedUser, sharedDB, corev1.ConditionTrue, corev1.ConditionFalse)
		}},
		"Namespaced":       {render: renderSharedNamespaced, file: databaseFile, prefix: dbName},
		"NamespacedOrphan": {render: renderSharedNamespaced, file: databaseFile, set: orphan, prefix: dbName},
		"NamespacedOwned": {render: renderSharedNamespaced, file: databaseFile, prefix: dbName, observed: func(t *testing.T, g Gomega) string {
			return observedSharedFile(t, g, renderSharedNamespaced, example("xr-v2.yaml"), nsSharedUser, nsSharedDB, corev1.ConditionTrue, corev1.ConditionFalse)
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			set := tc.set
			if set == nil {
				set = func(*unstructured.Unstructured) {}
			}
			var args []string
			if tc.observed != nil {
				args = []string{"--observed-resources", tc.observed(t, g)}
			}
			r, err := tc.render(t, tc.file(t, set), args...)
			g.Expect(err).NotTo(HaveOccurred())
			var kinds []string
			for _, u := range r.composed {
				if u.GetKind() == "Secret" {
					continue
				}
				kinds = append(kinds, u.GetKind())
				// The composite exists only in the files here (render leaves
				// the owner's uid empty, which the API server refuses); an
				// observed object gets a name of its own here, as Crossplane
				// would have generated it.
				u.SetOwnerReferences(nil)
				if u.GetName() != "" {
					u.SetName("")
					u.SetGenerateName(tc.prefix + "-")
				}
				got := createAndCompare(ctx, g, u)
				g.Expect(got.GetName()).To(HavePrefix(tc.prefix + "-"))
			}
			g.Expect(kinds).To(ConsistOf("PostgresqlUser", "PostgresqlDatabase"))
		})
	}
}
