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
	"fmt"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// The lifecycle tests run for the namespaced kind too (see kinds_test.go);
// these are about what only it has: provider configurations of two kinds, one
// of which belongs to a namespace.

// A namespaced PostgresqlInstance whose providerConfigRef names a configuration
// that does not exist is told so, with the kind and, for a ProviderConfig, the
// namespace it was looked for in; a ProviderConfig of that name in another
// namespace is never used (its credentials are that namespace's). Nothing is
// asked of Cloud SQL. Once the configuration exists, the instance is created
// through it, and the use is recorded in the object's namespace.
func TestMissingProviderConfigIsNamed(t *testing.T) {
	cases := map[string]struct {
		ref  func(h *harness) xpv2.ProviderConfigReference
		want func(h *harness, ns string) string
		// make makes the configuration that ref names.
		make func(h *harness, ns string)
	}{
		"ProviderConfigOfAnotherNamespace": {
			ref: func(h *harness) xpv2.ProviderConfigReference {
				h.localProviderConfig(teamB.namespace(h))
				return xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: h.pc}
			},
			want: func(h *harness, ns string) string {
				return fmt.Sprintf("cannot get ProviderConfig %q of namespace %s named by spec.providerConfigRef", h.pc, ns)
			},
			make: func(h *harness, ns string) { h.localProviderConfig(ns) },
		},
		"ClusterProviderConfig": {
			ref: func(h *harness) xpv2.ProviderConfigReference {
				return xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: h.pc + "-missing"}
			},
			want: func(h *harness, _ string) string {
				return fmt.Sprintf("cannot get ClusterProviderConfig %q named by spec.providerConfigRef", h.pc+"-missing")
			},
			make: func(h *harness, _ string) {
				cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: h.pc + "-missing"}, Spec: h.clusterProviderConfigSpec()}
				h.g.Expect(env.Client.Create(h.ctx, cpc)).To(Succeed())
				h.t.Cleanup(func() { _ = env.Client.Delete(h.ctx, cpc) })
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			a := h.of(teamA)
			ns := teamA.namespace(h)
			ref := c.ref(h)
			h.g.Expect(env.Client.Create(h.ctx, a.instance("orders", func(p object) {
				p.(*nsv1alpha1.PostgresqlInstance).Spec.ProviderConfigReference = &ref
			}))).To(Succeed())
			h.g.Eventually(func() xpv2.Condition { return a.condition("orders", xpv2.TypeSynced) }, 30*time.Second, 50*time.Millisecond).Should(And(
				HaveField("Status", corev1.ConditionFalse),
				HaveField("Message", And(ContainSubstring(c.want(h, ns)), ContainSubstring("not found"))),
			))
			h.g.Expect(h.requests()).To(Equal(0), "Cloud SQL was called without the configuration the object names")

			c.make(h, ns)
			a.poke("orders", 1)
			a.waitReady("orders")
			usages := &nsv1alpha1.ProviderConfigUsageList{}
			h.g.Expect(env.Client.List(h.ctx, usages, client.InNamespace(ns))).To(Succeed())
			h.g.Expect(usages.Items).To(ConsistOf(And(
				HaveField("ProviderConfigReference", ref),
				HaveField("ResourceReference.Name", "orders"),
			)))
		})
	}
}

// A namespaced PostgresqlInstance that names a ClusterProviderConfig not lent
// to its namespace is told so, with what the platform team must add; nothing is
// asked of Cloud SQL and no usage is recorded. Once the namespace is labelled
// to match the configuration's selector (read live), the instance is created.
func TestClusterProviderConfigNotLentIsRefused(t *testing.T) {
	h := newHarness(t)
	a := h.of(teamA)
	ns := teamA.namespace(h)
	name := h.pc + "-lent"
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: h.clusterProviderConfigSpec()}
	cpc.Spec.Namespaces = &nsv1alpha1.NamespaceSelection{Names: []string{"someone-else"}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"lent": name}}}
	h.g.Expect(env.Client.Create(h.ctx, cpc)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(h.ctx, cpc) })

	ref := xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: name}
	h.g.Expect(env.Client.Create(h.ctx, a.instance("orders", func(p object) {
		p.(*nsv1alpha1.PostgresqlInstance).Spec.ProviderConfigReference = &ref
	}))).To(Succeed())
	h.g.Eventually(func() xpv2.Condition { return a.condition("orders", xpv2.TypeSynced) }, 30*time.Second, 50*time.Millisecond).Should(And(
		HaveField("Status", corev1.ConditionFalse),
		HaveField("Message", And(
			ContainSubstring(fmt.Sprintf("ClusterProviderConfig %q does not admit namespace %s", name, ns)),
			ContainSubstring("it admits only spec.namespaces.names [someone-else] and spec.namespaces.selector lent="+name),
			ContainSubstring(fmt.Sprintf("Ask the platform team to add %s to the ClusterProviderConfig's spec.namespaces.names", ns)),
		)),
	))
	h.g.Expect(h.requests()).To(Equal(0), "Cloud SQL was called through a configuration not lent to the namespace")
	usages := &nsv1alpha1.ProviderConfigUsageList{}
	h.g.Expect(env.Client.List(h.ctx, usages, client.InNamespace(ns))).To(Succeed())
	h.g.Expect(usages.Items).To(BeEmpty(), "a configuration not lent is not held by the namespace's instances")

	n := &corev1.Namespace{}
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKey{Name: ns}, n)).To(Succeed())
	n.Labels = map[string]string{"lent": name}
	h.g.Expect(env.Client.Update(h.ctx, n)).To(Succeed())
	a.poke("orders", 1)
	a.waitReady("orders")
}

// A namespaced PostgresqlInstance deleted with its namespace, without the
// allow-deletion annotation, lets go of its Cloud SQL instance: the object goes
// (so that the namespace can finish terminating), the instance and its data
// stay, and nothing deletes it, even though the namespace controller has
// deleted the configuration's usages already. With the annotation, it is
// deleted as usual; an annotated one whose configuration went first lets go of
// its instance too, since nothing can delete it any more.
func TestNamespaceDeletionKeepsUnannotatedInstances(t *testing.T) {
	for _, k := range []namespacedKind{{team: "gone"}, {team: "gone-local", local: true}} {
		t.Run(k.String(), func(t *testing.T) {
			h := newHarness(t)
			// A namespace of its own: envtest never finishes deleting one
			// (no namespace controller), so it stays Terminating.
			a := h.of(k)
			ns := k.namespace(h)
			annotated := func(p object) {
				meta.AddAnnotations(p, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
			}
			a.create(a.instance("kept"))
			a.create(a.instance("deleted", annotated))
			a.create(a.instance("stranded", annotated))

			h.g.Expect(env.Client.Delete(h.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			// What the namespace controller does next: delete every object
			// in it, in no particular order.
			h.g.Expect(env.Client.DeleteAllOf(h.ctx, &nsv1alpha1.ProviderConfigUsage{}, client.InNamespace(ns))).To(Succeed())
			for _, name := range []string{"kept", "deleted"} {
				h.g.Expect(env.Client.Delete(h.ctx, a.get(name))).To(Succeed())
			}
			a.waitGone("kept")
			h.g.Eventually(func() int { return h.calls("instances.delete", "deleted") }, 30*time.Second, 50*time.Millisecond).Should(Equal(1))
			a.waitGone("deleted")
			h.g.Expect(h.calls("instances.delete", "kept")).To(Equal(0), "the Cloud SQL instance of an unannotated object was deleted with its namespace")
			_, err := h.svc().Instances.Get(h.project, "kept").Do()
			h.g.Expect(err).ToNot(HaveOccurred(), "the Cloud SQL instance is gone")

			if k.local {
				// The namespace's own configuration goes before the last
				// instance: that one cannot delete its Cloud SQL instance.
				pc := &nsv1alpha1.ProviderConfig{}
				h.g.Expect(env.Client.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: h.pc}, pc)).To(Succeed())
				pc.Finalizers = nil
				h.g.Expect(env.Client.Update(h.ctx, pc)).To(Succeed())
				h.g.Expect(client.IgnoreNotFound(env.Client.Delete(h.ctx, pc))).To(Succeed())
				// Gone for the controller too: its cache can lag the API
				// server, and a configuration still cached would delete.
				h.g.Eventually(func() bool {
					return apierrors.IsNotFound(h.seen(client.ObjectKey{Namespace: ns, Name: h.pc}, &nsv1alpha1.ProviderConfig{}))
				}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
			}
			h.g.Expect(env.Client.Delete(h.ctx, a.get("stranded"))).To(Succeed())
			a.waitGone("stranded")
			if k.local {
				h.g.Expect(h.calls("instances.delete", "stranded")).To(Equal(0))
			} else {
				h.g.Expect(h.calls("instances.delete", "stranded")).To(Equal(1))
			}
		})
	}
}
