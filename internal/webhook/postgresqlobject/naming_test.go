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

package postgresqlobject_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/postgresqlobject"
)

// selectable registers, on a fake client, the field indexes that the CRDs'
// selectable fields give the API server.
func selectable(b *fake.ClientBuilder) *fake.ClientBuilder {
	ref := func(r *xpv2.Reference) []string {
		if r == nil {
			return nil
		}
		return []string{r.Name}
	}
	nsRef := func(r *xpv2.NamespacedReference) []string {
		if r == nil {
			return nil
		}
		return []string{r.Name}
	}
	one := func(s string) []string { return []string{s} }
	return b.
		WithIndex(&v1alpha1.PostgresqlUser{}, "spec.forProvider.instance", func(o client.Object) []string { return one(o.(*v1alpha1.PostgresqlUser).Spec.ForProvider.Instance) }).
		WithIndex(&v1alpha1.PostgresqlUser{}, "spec.forProvider.instanceRef.name", func(o client.Object) []string { return ref(o.(*v1alpha1.PostgresqlUser).Spec.ForProvider.InstanceRef) }).
		WithIndex(&v1alpha1.PostgresqlDatabase{}, "spec.forProvider.instance", func(o client.Object) []string { return one(o.(*v1alpha1.PostgresqlDatabase).Spec.ForProvider.Instance) }).
		WithIndex(&v1alpha1.PostgresqlDatabase{}, "spec.forProvider.instanceRef.name", func(o client.Object) []string {
			return ref(o.(*v1alpha1.PostgresqlDatabase).Spec.ForProvider.InstanceRef)
		}).
		WithIndex(&nsv1alpha1.PostgresqlUser{}, "spec.forProvider.instance", func(o client.Object) []string { return one(o.(*nsv1alpha1.PostgresqlUser).Spec.ForProvider.Instance) }).
		WithIndex(&nsv1alpha1.PostgresqlUser{}, "spec.forProvider.instanceRef.name", func(o client.Object) []string {
			return nsRef(o.(*nsv1alpha1.PostgresqlUser).Spec.ForProvider.InstanceRef)
		}).
		WithIndex(&nsv1alpha1.PostgresqlUser{}, "spec.forProvider.clusterInstance", func(o client.Object) []string {
			return one(o.(*nsv1alpha1.PostgresqlUser).Spec.ForProvider.ClusterInstance)
		}).
		WithIndex(&nsv1alpha1.PostgresqlUser{}, "spec.forProvider.clusterInstanceRef.name", func(o client.Object) []string {
			return ref(o.(*nsv1alpha1.PostgresqlUser).Spec.ForProvider.ClusterInstanceRef)
		}).
		WithIndex(&nsv1alpha1.PostgresqlDatabase{}, "spec.forProvider.instance", func(o client.Object) []string {
			return one(o.(*nsv1alpha1.PostgresqlDatabase).Spec.ForProvider.Instance)
		}).
		WithIndex(&nsv1alpha1.PostgresqlDatabase{}, "spec.forProvider.instanceRef.name", func(o client.Object) []string {
			return nsRef(o.(*nsv1alpha1.PostgresqlDatabase).Spec.ForProvider.InstanceRef)
		}).
		WithIndex(&nsv1alpha1.PostgresqlDatabase{}, "spec.forProvider.clusterInstance", func(o client.Object) []string {
			return one(o.(*nsv1alpha1.PostgresqlDatabase).Spec.ForProvider.ClusterInstance)
		}).
		WithIndex(&nsv1alpha1.PostgresqlDatabase{}, "spec.forProvider.clusterInstanceRef.name", func(o client.Object) []string {
			return ref(o.(*nsv1alpha1.PostgresqlDatabase).Spec.ForProvider.ClusterInstanceRef)
		})
}

// listings records the field selectors of the listings a reader serves, and
// refuses them all (as an API server without selectable fields does) when
// unselectable.
type listings struct {
	mu           sync.Mutex
	selected     []string
	whole        int
	unselectable bool
}

func (l *listings) funcs() interceptor.Funcs {
	return interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		o := (&client.ListOptions{}).ApplyOptions(opts)
		l.mu.Lock()
		if o.FieldSelector == nil {
			l.whole++
		} else {
			l.selected = append(l.selected, o.FieldSelector.String())
		}
		l.mu.Unlock()
		if o.FieldSelector != nil && l.unselectable {
			return kerrors.NewBadRequest(`Unable to find "cloudsql.travelaudience.com/v1alpha1, Resource=postgresqlusers" that match label selector "", field selector "` + o.FieldSelector.String() + `": field label not supported: ` + o.FieldSelector.String())
		}
		return c.List(ctx, list, opts...)
	}}
}

// The namesake check asks the API server only for the objects that name the
// instance, by value or by reference, of each scope that may name it; an API
// server that cannot select by those fields is asked for every object, and
// the same namesakes are found.
func TestNamesakesAreListedByTheirInstance(t *testing.T) {
	t.Parallel()
	// Logins that other objects already hold: by value, by reference, and
	// through a namespaced object's clusterInstance. Several more name other
	// instances, which the selection never reads.
	named := func(login string) func(*nsv1alpha1.PostgresqlUser) {
		return func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Name = ptr.To(login) }
	}
	holders := []client.Object{
		nsUser(nsA, "by-value", named("alice"), func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Instance = "local" }),
		nsUser(nsA, "by-ref", named("bob"), func(u *nsv1alpha1.PostgresqlUser) {
			u.Spec.ForProvider.InstanceRef = &xpv2.NamespacedReference{Name: "local"}
		}),
		nsUser(nsB, "on-cluster", named("carol"), func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.ClusterInstance = "everyone" }),
		nsUser(nsB, "elsewhere", named("dave"), func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Instance = "local" }),
	}
	cases := map[string]struct {
		reason       string
		obj          client.Object
		unselectable bool
		wantDenied   string
		// wantSelected are the field selectors the check listed with.
		wantSelected []string
	}{
		"ByValue": {
			reason:       "A login another object of the namespace holds on the same instance, named by value, is denied.",
			obj:          nsUser(nsA, "new", named("alice"), func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Instance = "local" }),
			wantDenied:   "PostgresqlUser team-a/by-value",
			wantSelected: []string{"spec.forProvider.instance=local", "spec.forProvider.instanceRef.name=local"},
		},
		"ByReference": {
			reason:       "A holder that names the instance only by reference (not yet resolved) is found too.",
			obj:          nsUser(nsA, "new", named("bob"), func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Instance = "local" }),
			wantDenied:   "PostgresqlUser team-a/by-ref",
			wantSelected: []string{"spec.forProvider.instance=local", "spec.forProvider.instanceRef.name=local"},
		},
		"ClusterInstance": {
			reason: "For a cluster-scoped instance, the namespaced objects of every namespace that name it through clusterInstance are found.",
			obj: func() client.Object {
				u := clusterUser("new", "everyone")
				u.Spec.ForProvider.Name = ptr.To("carol")
				return u
			}(),
			wantDenied: "PostgresqlUser team-b/on-cluster",
			wantSelected: []string{
				"spec.forProvider.instance=everyone", "spec.forProvider.instanceRef.name=everyone",
				"spec.forProvider.clusterInstance=everyone", "spec.forProvider.clusterInstanceRef.name=everyone",
			},
		},
		"OtherNamespace": {
			reason:       "The same login on a namespaced instance of another namespace is another login.",
			obj:          nsUser(nsA, "new", named("dave"), func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Instance = "local" }),
			wantSelected: []string{"spec.forProvider.instance=local", "spec.forProvider.instanceRef.name=local"},
		},
		"Unselectable": {
			reason:       "An API server that cannot select by the fields is asked for every object of the namespace, and the holder is still found.",
			obj:          nsUser(nsA, "new", named("bob"), func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Instance = "local" }),
			unselectable: true,
			wantDenied:   "PostgresqlUser team-a/by-ref",
			wantSelected: []string{"spec.forProvider.instance=local"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			s := scheme(t)
			l := &listings{unselectable: tc.unselectable}
			r := selectable(fake.NewClientBuilder().WithScheme(s).WithObjects(append(world(), holders...)...)).WithInterceptorFuncs(l.funcs()).Build()
			resp := postgresqlobject.New(r, s, policy).Handle(context.Background(), request{op: admissionv1.Create, obj: tc.obj}.admission(t))
			if tc.wantDenied != "" {
				g.Expect(resp.Allowed).To(BeFalse(), tc.reason)
				g.Expect(resp.Result.Code).To(BeEquivalentTo(http.StatusForbidden), tc.reason)
				g.Expect(resp.Result.Message).To(And(ContainSubstring(tc.wantDenied), ContainSubstring("already names")), tc.reason)
			} else {
				g.Expect(resp.Allowed).To(BeTrue(), tc.reason)
				g.Expect(resp.Warnings).To(BeEmpty(), tc.reason)
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			for _, want := range tc.wantSelected {
				g.Expect(l.selected).To(ContainElement(want), tc.reason)
			}
			if tc.unselectable {
				g.Expect(l.whole).To(BeNumerically(">", 0), tc.reason)
			} else {
				g.Expect(l.whole).To(BeZero(), "%s: no listing of every object of a scope", tc.reason)
			}
		})
	}
}
