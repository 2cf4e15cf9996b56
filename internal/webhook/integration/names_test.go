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
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// A second team admitted to a shared instance cannot name the first team's
// login or database, in either scope: the webhook answers with the object that
// already names it. The same object may be updated, and a name that is free
// again may be used.
func TestASecondObjectCannotNameATakenLoginOrDatabase(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "names-pg", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = nil
		pi.Spec.Tenancy = &v1alpha1.Tenancy{AllowedNamespaces: []string{"names-a", "names-b"}}
	})
	namespace(t, "names-a", nil)
	namespace(t, "names-b", nil)

	orders := namespacedUser("names-a", "orders-api", func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.ClusterInstance = "names-pg" })
	g.Expect(env.Client.Create(ctx, orders)).To(Succeed())
	db := namespacedDatabase("names-a", "orders", onClusterInstance("names-pg"), func(d *nsv1alpha1.PostgresqlDatabase) { d.Spec.ForProvider.Owner = "orders-api" })
	g.Expect(env.Client.Create(ctx, db)).To(Succeed())

	thief := namespacedUser("names-b", "thief", func(u *nsv1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.ClusterInstance, u.Spec.ForProvider.Name = "names-pg", ptr.To("orders-api")
	})
	g.Expect(env.Client.Create(ctx, thief)).To(MatchError(And(
		ContainSubstring("PostgresqlUser names-b/thief names login orders-api of PostgresqlInstance names-pg (cluster-scoped), which PostgresqlUser names-a/orders-api already names"),
		ContainSubstring("choose another name"),
	)))
	loot := namespacedDatabase("names-b", "loot", onClusterInstance("names-pg"), func(d *nsv1alpha1.PostgresqlDatabase) {
		d.Spec.ForProvider.Name = ptr.To("orders")
	})
	g.Expect(env.Client.Create(ctx, loot)).To(MatchError(ContainSubstring(
		"PostgresqlDatabase names-b/loot names database orders of PostgresqlInstance names-pg (cluster-scoped), which PostgresqlDatabase names-a/orders already names")))

	// The platform's own cluster-scoped objects are held to the same rule.
	cu := &v1alpha1.PostgresqlUser{}
	cu.Name = "platform-orders"
	cu.Spec.ForProvider.Instance, cu.Spec.ForProvider.Name = "names-pg", ptr.To("orders-api")
	cu.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: "platform-orders"}
	g.Expect(env.Client.Create(ctx, cu)).To(MatchError(ContainSubstring(
		"PostgresqlUser platform-orders names login orders-api of PostgresqlInstance names-pg (cluster-scoped), which PostgresqlUser names-a/orders-api already names")))

	// The holder itself may change, and once it is gone the name is free.
	orders.Labels = map[string]string{"tier": "gold"}
	g.Expect(env.Client.Update(ctx, orders)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, orders)).To(Succeed())
	thief.ResourceVersion = ""
	g.Expect(env.Client.Create(ctx, thief)).To(Succeed())
}

// Being admitted for users and databases (spec.tenancy) is not being given the
// instance's postgres password: a pod of such a namespace that names the
// instance is denied, with what to do instead, and the same pod naming its
// own user is injected. spec.injection still gives both.
func TestTenantsGetTheirOwnLoginsNotPostgres(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "tenant-pg", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"tenant-admin"}}
		pi.Spec.Tenancy = &v1alpha1.Tenancy{AllowedNamespaces: []string{"tenant-app"}}
	})
	namespace(t, "tenant-app", nil)
	namespace(t, "tenant-admin", nil)
	namespace(t, "tenant-none", nil)

	err := env.Client.Create(ctx, annotatedPod("tenant-app", "web", "tenant-pg"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`pod tenant-app/web: PostgresqlInstance "tenant-pg" may not be used from namespace tenant-app`),
		ContainSubstring("its pods never receive the instance's postgres password"),
		ContainSubstring("name a PostgresqlUser of this namespace with the annotation "+v1alpha1.AnnotationUserName),
	)))
	g.Expect(absent("tenant-app", podinject.CopyName(podinject.CopyPgpass, "tenant-pg"))()).To(BeTrue(), "no copy of postgres's password")

	readyNamespacedUser(t, "tenant-app", "app", onCluster("tenant-pg"), "app")
	p := userPod("tenant-app", "web", "app", "")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	g.Expect(p.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
	holdsNowhere(g, "tenant-app", "pw-tenant-pg", p)

	// spec.injection: postgres, and users and databases too.
	admin := annotatedPod("tenant-admin", "psql", "tenant-pg")
	g.Expect(env.Client.Create(ctx, admin)).To(Succeed())
	g.Expect(admin.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
	g.Expect(env.Client.Create(ctx, namespacedUser("tenant-admin", "ops", func(u *nsv1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.ClusterInstance = "tenant-pg"
	}))).To(Succeed())

	// Neither: no user, no pod.
	g.Expect(env.Client.Create(ctx, namespacedUser("tenant-none", "app", func(u *nsv1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.ClusterInstance = "tenant-pg"
	}))).To(MatchError(ContainSubstring("ask the instance's owner to add tenant-none to spec.tenancy.allowedNamespaces")))
	g.Expect(env.Client.Create(ctx, annotatedPod("tenant-none", "web", "tenant-pg"))).To(MatchError(ContainSubstring(
		"ask the instance's owner to add tenant-none to spec.injection.allowedNamespaces")))
}

// A tenant namespace's user pods need the proxy's key as much as the
// administrator's: its copy is kept where the instance admits users
// (spec.tenancy), not only where pods receive postgres.
func TestTenantsKeepTheProxyKey(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := readyInstance(t, "tenant-keyed", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: pcProxyKey}
		pi.Spec.Injection = &v1alpha1.Injection{}
		pi.Spec.Tenancy = &v1alpha1.Tenancy{AllowedNamespaces: []string{"tenant-keyed-app"}}
	})
	namespace(t, "tenant-keyed-app", nil)
	readyNamespacedUser(t, "tenant-keyed-app", "app", onCluster("tenant-keyed"), "app")
	g.Expect(env.Client.Create(ctx, userPod("tenant-keyed-app", "web", "app", ""))).To(Succeed())
	key := podinject.CopyName(podinject.CopyProxyCredentials, "tenant-keyed")
	secret(g, "tenant-keyed-app", key)

	// The instance changes, and the copy reconciler looks at every copy again:
	// the key stays, and postgres's password never comes.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Labels = map[string]string{"touched": "true"}
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())
	g.Consistently(absent("tenant-keyed-app", key), "5s", poll).Should(BeFalse(), "the proxy key's copy stays")
	g.Expect(absent("tenant-keyed-app", podinject.CopyName(podinject.CopyPgpass, "tenant-keyed"))()).To(BeTrue())

	// Out of spec.tenancy, the copy goes.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.Tenancy.AllowedNamespaces = []string{"someone-else"}
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())
	g.Eventually(absent("tenant-keyed-app", key), eventually, poll).Should(BeTrue(), "the copy goes with the namespace's admission")
}

// The name check selects, on the API server, the objects that name an
// instance: the CRDs declare those fields selectable, so a field selector
// on each is answered, and answers only the objects that name it.
func TestTheInstanceFieldsAreSelectable(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "select-a", nil)
	u := namespacedUser("select-a", "picked", func(u *nsv1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.InstanceRef = &xpv2.NamespacedReference{Name: "select-pg"}
	})
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
	for _, tc := range []struct {
		list   client.ObjectList
		fields []string
	}{
		{&v1alpha1.PostgresqlUserList{}, []string{"spec.forProvider.instance", "spec.forProvider.instanceRef.name"}},
		{&v1alpha1.PostgresqlDatabaseList{}, []string{"spec.forProvider.instance", "spec.forProvider.instanceRef.name"}},
		{&nsv1alpha1.PostgresqlUserList{}, []string{"spec.forProvider.instance", "spec.forProvider.instanceRef.name", "spec.forProvider.clusterInstance", "spec.forProvider.clusterInstanceRef.name"}},
		{&nsv1alpha1.PostgresqlDatabaseList{}, []string{"spec.forProvider.instance", "spec.forProvider.instanceRef.name", "spec.forProvider.clusterInstance", "spec.forProvider.clusterInstanceRef.name"}},
	} {
		for _, f := range tc.fields {
			g.Expect(env.Client.List(ctx, tc.list, client.MatchingFields{f: "select-pg"})).To(Succeed(), "%T selects by %s", tc.list, f)
		}
	}
	picked := &nsv1alpha1.PostgresqlUserList{}
	g.Expect(env.Client.List(ctx, picked, client.InNamespace("select-a"), client.MatchingFields{"spec.forProvider.instanceRef.name": "select-pg"})).To(Succeed())
	g.Expect(picked.Items).To(ConsistOf(HaveField("Name", "picked")))
	g.Expect(env.Client.List(ctx, picked, client.InNamespace("select-a"), client.MatchingFields{"spec.forProvider.instanceRef.name": "other-pg"})).To(Succeed())
	g.Expect(picked.Items).To(BeEmpty())
}
