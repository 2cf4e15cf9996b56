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

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// PostgresqlDatabases and PostgresqlUsers as the tests below create them.

func namespacedDatabase(ns, name string, fns ...func(*nsv1alpha1.PostgresqlDatabase)) *nsv1alpha1.PostgresqlDatabase {
	d := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, fn := range fns {
		fn(d)
	}
	return d
}

func namespacedUser(ns, name string, fns ...func(*nsv1alpha1.PostgresqlUser)) *nsv1alpha1.PostgresqlUser {
	u := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	u.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-login"}
	for _, fn := range fns {
		fn(u)
	}
	return u
}

func onClusterInstance(name string) func(*nsv1alpha1.PostgresqlDatabase) {
	return func(d *nsv1alpha1.PostgresqlDatabase) { d.Spec.ForProvider.ClusterInstance = name }
}

// A namespaced PostgresqlDatabase or PostgresqlUser may name a cluster-scoped
// PostgresqlInstance only when its spec.injection admits the namespace, as for
// pods; a selector is judged when its resolution is written; and an object
// admitted before the instance narrowed its allow-list can still be annotated
// and lose its finalizers.
func TestClusterInstanceMustAdmitTheNamespace(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := readyInstance(t, "shared") // admits shared-app
	namespace(t, "shared-app", nil)
	namespace(t, "shared-other", nil)

	admitted := namespacedDatabase("shared-app", "orders", onClusterInstance("shared"))
	g.Expect(env.Client.Create(ctx, admitted)).To(Succeed())
	g.Expect(env.Client.Create(ctx, namespacedUser("shared-app", "orders", func(u *nsv1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: "shared"}
	}))).To(Succeed())

	g.Expect(env.Client.Create(ctx, namespacedDatabase("shared-other", "orders", onClusterInstance("shared")))).To(MatchError(And(
		ContainSubstring("PostgresqlDatabase shared-other/orders: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance shared, which does not admit namespace shared-other"),
		ContainSubstring("ask the instance's owner to add shared-other to spec.tenancy.allowedNamespaces"),
		ContainSubstring("or use a PostgresqlInstance of namespace shared-other, with spec.forProvider.instance, instead"),
	)))
	g.Expect(env.Client.Create(ctx, namespacedUser("shared-other", "orders", func(u *nsv1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: "shared"}
	}))).To(MatchError(ContainSubstring(
		"PostgresqlUser shared-other/orders: spec.forProvider.clusterInstanceRef.name names the cluster-scoped PostgresqlInstance shared, which does not admit namespace shared-other")))

	// A selector names no instance at admission; the update that writes what
	// it resolved to (as the managed reconciler does) is judged.
	selecting := namespacedUser("shared-other", "selecting", func(u *nsv1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.ClusterInstanceSelector = &xpv2.Selector{MatchLabels: map[string]string{"team": "shared"}}
	})
	g.Expect(env.Client.Create(ctx, selecting)).To(Succeed())
	selecting.Spec.ForProvider.ClusterInstance = "shared"
	selecting.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: "shared"}
	g.Expect(env.Client.Update(ctx, selecting)).To(MatchError(ContainSubstring(
		"PostgresqlUser shared-other/selecting: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance shared, which does not admit namespace shared-other")))

	// The instance stops admitting shared-app: its database can still take
	// a finalizer and the allow-deletion annotation, and go.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.Injection.AllowedNamespaces = []string{"someone-else"}
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())
	admitted.Finalizers = []string{"finalizer.managedresource.crossplane.io"}
	admitted.Annotations = map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}
	g.Expect(env.Client.Update(ctx, admitted)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, admitted)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(admitted), admitted)).To(Succeed())
	admitted.Finalizers = nil
	g.Expect(env.Client.Update(ctx, admitted)).To(Succeed())
	g.Expect(kerrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(admitted), admitted))).To(BeTrue())
}

// A PostgresqlDatabase's owner must be a PostgresqlUser of its own instance,
// in both scopes; a user that does not exist yet may be named.
func TestDatabaseOwnerMustShareItsInstance(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	both := func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"owners-app"}}
	}
	readyInstance(t, "owners-a", both)
	readyInstance(t, "owners-b", both)
	namespace(t, "owners-app", nil)

	g.Expect(env.Client.Create(ctx, namespacedUser("owners-app", "alice", func(u *nsv1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.ClusterInstance = "owners-a"
	}))).To(Succeed())
	g.Expect(env.Client.Create(ctx, namespacedDatabase("owners-app", "elsewhere", onClusterInstance("owners-b"), func(d *nsv1alpha1.PostgresqlDatabase) {
		d.Spec.ForProvider.Owner = "alice"
	}))).To(MatchError(And(
		ContainSubstring("PostgresqlDatabase owners-app/elsewhere: spec.forProvider.owner names PostgresqlUser owners-app/alice, which belongs to PostgresqlInstance owners-a (cluster-scoped), not to owners-b (cluster-scoped), the database's instance"),
		ContainSubstring("name a PostgresqlUser of owners-b (cluster-scoped) in namespace owners-app, or create one"),
	)))
	g.Expect(env.Client.Create(ctx, namespacedDatabase("owners-app", "same", onClusterInstance("owners-a"), func(d *nsv1alpha1.PostgresqlDatabase) {
		d.Spec.ForProvider.Owner = "alice"
	}))).To(Succeed())
	g.Expect(env.Client.Create(ctx, namespacedDatabase("owners-app", "later", onClusterInstance("owners-b"), func(d *nsv1alpha1.PostgresqlDatabase) {
		d.Spec.ForProvider.Owner = "bob"
	}))).To(Succeed(), "a user that does not exist yet may be created next")

	// Naming another owner later is judged as well.
	unowned := namespacedDatabase("owners-app", "unowned", onClusterInstance("owners-b"))
	g.Expect(env.Client.Create(ctx, unowned)).To(Succeed())
	unowned.Spec.ForProvider.OwnerRef = &xpv2.NamespacedReference{Name: "alice"}
	g.Expect(env.Client.Update(ctx, unowned)).To(MatchError(ContainSubstring(
		"PostgresqlDatabase owners-app/unowned: spec.forProvider.ownerRef.name names PostgresqlUser owners-app/alice, which belongs to PostgresqlInstance owners-a (cluster-scoped)")))

	// The cluster-scoped kinds.
	carol := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "carol"}}
	carol.Spec.ForProvider.Instance = "owners-a"
	carol.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: "carol-login"}
	g.Expect(env.Client.Create(ctx, carol)).To(Succeed())
	clusterDB := func(name, inst string) *v1alpha1.PostgresqlDatabase {
		d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: name}}
		d.Spec.ForProvider.Instance = inst
		d.Spec.ForProvider.OwnerRef = &xpv2.Reference{Name: "carol"}
		return d
	}
	g.Expect(env.Client.Create(ctx, clusterDB("carols-elsewhere", "owners-b"))).To(MatchError(ContainSubstring(
		"PostgresqlDatabase carols-elsewhere: spec.forProvider.ownerRef.name names PostgresqlUser carol, which belongs to PostgresqlInstance owners-a (cluster-scoped), not to owners-b (cluster-scoped)")))
	g.Expect(env.Client.Create(ctx, clusterDB("carols", "owners-a"))).To(Succeed())
}

// A PostgresqlDatabase, of either scope, is deleted only with the
// allow-deletion annotation; a PostgresqlUser needs none; and a namespace being
// deleted is never kept Terminating by its databases.
func TestDatabaseDeletionNeedsTheAnnotation(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "guarded-app", nil)
	namespace(t, "guarded-leaving", nil)

	cdb := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: "guarded-db"}}
	cdb.Spec.ForProvider.Instance = "somewhere"
	g.Expect(env.Client.Create(ctx, cdb)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, cdb)).To(MatchError(And(
		ContainSubstring("PostgresqlDatabase guarded-db may not be deleted: deleting it drops PostgreSQL database guarded-db and its data"),
		ContainSubstring("kubectl annotate postgresqldatabases.cloudsql.travelaudience.com guarded-db cloudsql.travelaudience.com/allow-deletion=true"),
	)))

	ndb := namespacedDatabase("guarded-app", "orders", func(d *nsv1alpha1.PostgresqlDatabase) { d.Spec.ForProvider.Instance = "local" })
	g.Expect(env.Client.Create(ctx, ndb)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, ndb)).To(MatchError(And(
		ContainSubstring("PostgresqlDatabase guarded-app/orders may not be deleted: deleting it drops PostgreSQL database orders and its data"),
		ContainSubstring("kubectl annotate -n guarded-app postgresqldatabases.cloudsql.m.travelaudience.com orders cloudsql.travelaudience.com/allow-deletion=true"),
	)))

	for _, o := range []client.Object{cdb, ndb} {
		o.SetAnnotations(map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
		g.Expect(env.Client.Update(ctx, o)).To(Succeed())
		g.Expect(env.Client.Delete(ctx, o)).To(Succeed())
		g.Expect(kerrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o))).To(BeTrue())
	}

	user := namespacedUser("guarded-app", "orders", func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Instance = "local" })
	g.Expect(env.Client.Create(ctx, user)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, user)).To(Succeed())

	// envtest runs no namespace controller: the namespace stays Terminating,
	// and the test deletes its objects as that controller would.
	leaving := namespacedDatabase("guarded-leaving", "kept", func(d *nsv1alpha1.PostgresqlDatabase) { d.Spec.ForProvider.Instance = "local" })
	g.Expect(env.Client.Create(ctx, leaving)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, leaving)).To(MatchError(ContainSubstring("PostgresqlDatabase guarded-leaving/kept may not be deleted")))
	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "guarded-leaving"}})).To(Succeed())
	g.Expect(env.Client.Delete(ctx, leaving)).To(Succeed())
}

// A PostgresqlBackup, of either scope, is deleted only with the allow-deletion
// annotation, and a namespaced one may back up a cluster-scoped instance only
// when the instance admits its namespace.
func TestBackupAdmission(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "backed-up", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"backups-app"}}
	})
	namespace(t, "backups-app", nil)
	namespace(t, "backups-other", nil)
	nsBackup := func(ns, name string) *nsv1alpha1.PostgresqlBackup {
		b := &nsv1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		b.Spec.ForProvider.ClusterInstance = "backed-up"
		return b
	}

	g.Expect(env.Client.Create(ctx, nsBackup("backups-other", "nightly"))).To(MatchError(And(
		ContainSubstring("PostgresqlBackup backups-other/nightly: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance backed-up, which does not admit namespace backups-other"),
		ContainSubstring("or use a PostgresqlInstance of namespace backups-other, with spec.forProvider.instance, instead"),
	)))
	admitted := nsBackup("backups-app", "nightly")
	g.Expect(env.Client.Create(ctx, admitted)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, admitted)).To(MatchError(And(
		ContainSubstring("PostgresqlBackup backups-app/nightly may not be deleted: deleting it deletes the backup it took of its Cloud SQL instance"),
		ContainSubstring("kubectl annotate -n backups-app postgresqlbackups.cloudsql.m.travelaudience.com nightly cloudsql.travelaudience.com/allow-deletion=true"),
	)))

	cb := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: "backed-up-nightly", Annotations: map[string]string{"crossplane.io/external-name": "1700000000123"}}}
	cb.Spec.ForProvider.Instance = "backed-up"
	g.Expect(env.Client.Create(ctx, cb)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, cb)).To(MatchError(And(
		ContainSubstring("PostgresqlBackup backed-up-nightly may not be deleted: deleting it deletes backup run 1700000000123 of its Cloud SQL instance"),
		ContainSubstring("kubectl annotate postgresqlbackups.cloudsql.travelaudience.com backed-up-nightly cloudsql.travelaudience.com/allow-deletion=true"),
	)))

	// Nothing of a backup changes: the CRD says so, naming the field.
	cb.Spec.ForProvider.Description = ptr.To("another")
	g.Expect(env.Client.Update(ctx, cb)).To(MatchError(ContainSubstring("spec.forProvider.description: Invalid value")))

	for _, o := range []client.Object{admitted, cb} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
		meta.AddAnnotations(o, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
		g.Expect(env.Client.Update(ctx, o)).To(Succeed())
		g.Expect(env.Client.Delete(ctx, o)).To(Succeed())
		g.Expect(kerrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o))).To(BeTrue())
	}
}
