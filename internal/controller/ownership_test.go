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

package controller_test

import (
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// TestNamesBelongToTheirObjects is a second team, admitted to the same shared
// instance, naming the first team's login and database. The admission webhook
// is not running here, as when it is down or two objects race it: the
// controllers alone must keep the first team's login and data from the second.
func TestNamesBelongToTheirObjects(t *testing.T) {
	w := newWorld(t)
	g := w.g
	shared := "shared-" + w.id
	pi := w.clusterInstance(shared)
	w.waitReady(pi)

	// The first team: a login and a database that it owns, with a row in it.
	login, db := "orders-api-"+w.id, "orders-"+w.id
	a := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: w.team, Name: "orders-api"}}
	a.Spec.ForProvider.ClusterInstance, a.Spec.ForProvider.Name = shared, ptr.To(login)
	a.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "orders-api-login"})
	w.create(a)
	adb := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: w.team, Name: "orders", Annotations: map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}}}
	adb.Spec.ForProvider.ClusterInstance, adb.Spec.ForProvider.Name, adb.Spec.ForProvider.Owner = shared, ptr.To(db), "orders-api"
	w.create(adb)
	w.waitReady(a)
	w.waitReady(adb)
	sec := w.secret(w.team, "orders-api-login")
	icn, password := string(sec.Data[cloudsql.ConnectionKeyConnectionName]), string(sec.Data[cloudsql.ConnectionKeyPassword])
	conn, err := w.login(icn, login, password, db)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = conn.Exec(w.ctx, "CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders VALUES (42)")
	g.Expect(err).NotTo(HaveOccurred())
	_ = conn.Close(w.ctx)

	// The second team names both.
	other := "other-" + w.id
	g.Expect(env.Client.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})).To(Succeed())
	updatesBefore := w.calls(emulator.MethodUsersUpdate, shared)
	b := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "thief"}}
	b.Spec.ForProvider.ClusterInstance, b.Spec.ForProvider.Name = shared, ptr.To(login)
	b.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "thief-login"})
	w.create(b)
	bdb := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "loot", Annotations: map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}}}
	bdb.Spec.ForProvider.ClusterInstance, bdb.Spec.ForProvider.Name, bdb.Spec.ForProvider.Owner = shared, ptr.To(db), "thief"
	w.create(bdb)

	c := w.waitSynced(b, corev1.ConditionFalse, "login "+login, "PostgresqlUser "+w.team+"/orders-api")
	t.Logf("the second team's user: %s", c.Message)
	c = w.waitSynced(bdb, corev1.ConditionFalse, "database "+db, "PostgresqlDatabase "+w.team+"/orders")
	t.Logf("the second team's database: %s", c.Message)
	// A few polls more: nothing changes.
	time.Sleep(2 * poll)

	g.Expect(w.calls(emulator.MethodUsersUpdate, shared)).To(Equal(updatesBefore), "no users.update reaches Cloud SQL for a login another object owns")
	g.Expect(w.emu.PasswordIs(w.project, shared, login, password)).To(BeTrue(), "the first team's password still works")
	g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
	g.Expect(b.GetCondition("Ready").Status).NotTo(Equal(corev1.ConditionTrue))
	bsec := &corev1.Secret{}
	if err := env.Client.Get(w.ctx, client.ObjectKey{Namespace: other, Name: "thief-login"}, bsec); err == nil {
		g.Expect(string(bsec.Data[cloudsql.ConnectionKeyPassword])).NotTo(Equal(password), "the first team's password never reaches the second team")
	}
	w.checkOwner(icn, login, password, db)

	// Deleting the second team's objects touches neither the login nor the
	// database.
	deletesBefore := w.deletes(shared, db)
	g.Expect(env.Client.Delete(w.ctx, bdb)).To(Succeed())
	g.Expect(env.Client.Delete(w.ctx, b)).To(Succeed())
	w.waitGone(bdb)
	w.waitGone(b)
	g.Expect(w.deletes(shared, db)).To(Equal(deletesBefore), "no databases.delete of a database another object owns")
	g.Expect(w.calls(emulator.MethodUsersDelete, shared)).To(Equal(0), "no users.delete of a login another object owns")
	g.Expect(w.emu.PasswordIs(w.project, shared, login, password)).To(BeTrue())
	w.checkOwner(icn, login, password, db)
}

// checkOwner logs in as login to db and reads the row the first team wrote,
// and that login still owns db.
func (w *world) checkOwner(icn, login, password, db string) {
	w.t.Helper()
	conn, err := w.login(icn, login, password, db)
	w.g.Expect(err).NotTo(HaveOccurred(), "the first team still logs in to its database")
	defer func() { _ = conn.Close(w.ctx) }()
	var id int
	w.g.Expect(conn.QueryRow(w.ctx, "SELECT id FROM orders").Scan(&id)).To(Succeed())
	w.g.Expect(id).To(Equal(42))
	var owner string
	w.g.Expect(conn.QueryRow(w.ctx, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1", db).Scan(&owner)).To(Succeed())
	w.g.Expect(owner).To(Equal(login), "no ALTER DATABASE ... OWNER TO reached PostgreSQL")
}

// deletes counts the world's databases.delete of database db of instance.
func (w *world) deletes(instance, db string) int {
	n := 0
	for _, r := range w.emu.Requests() {
		if r.Project == w.project && r.Method == emulator.MethodDatabasesDelete && r.Instance == instance && strings.HasSuffix(r.Path, "/databases/"+db) {
			n++
		}
	}
	return n
}

// TestImportingALoginIsExplicit is a login made outside the provider (with
// gcloud): a namespaced PostgresqlUser does not take it over until the
// instance's spec.tenancy.importPolicy allows it; a cluster-scoped one does
// under the default policy, and no second object takes it from the first.
func TestImportingALoginIsExplicit(t *testing.T) {
	w := newWorld(t)
	g := w.g
	shared := "import-" + w.id
	pi := w.clusterInstance(shared)
	w.waitReady(pi)
	svc := w.svc()
	for _, login := range []string{"legacy", "platform-legacy"} {
		_, err := svc.Users.Insert(w.project, shared, &sqladmin.User{Name: login, Password: "made-by-hand"}).Do()
		g.Expect(err).NotTo(HaveOccurred())
	}

	updatesBefore := w.calls(emulator.MethodUsersUpdate, shared)
	u := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: w.team, Name: "legacy"}}
	u.Spec.ForProvider.ClusterInstance = shared
	u.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "legacy-login"})
	w.create(u)
	c := w.waitSynced(u, corev1.ConditionFalse, "login legacy", "no PostgresqlUser or PostgresqlDatabase holds it", "spec.tenancy.importPolicy of PostgresqlInstance "+shared+" is ClusterScoped")
	t.Log(c.Message)
	time.Sleep(poll)
	g.Expect(w.calls(emulator.MethodUsersUpdate, shared)).To(Equal(updatesBefore), "no password is reset before the import is allowed")
	g.Expect(w.emu.PasswordIs(w.project, shared, "legacy", "made-by-hand")).To(BeTrue())

	g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.Tenancy = &v1alpha1.Tenancy{ImportPolicy: v1alpha1.ObjectImportAllow}
	g.Expect(env.Client.Update(w.ctx, pi)).To(Succeed())
	w.waitReady(u)
	g.Expect(w.emu.PasswordIs(w.project, shared, "legacy", "made-by-hand")).To(BeFalse(), "the imported login has the provider's password")

	// The platform's object imports under the default policy; a second one,
	// cluster-scoped too, does not take it from the first.
	g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.Tenancy = nil
	g.Expect(env.Client.Update(w.ctx, pi)).To(Succeed())
	platformUser := func(name string) *v1alpha1.PostgresqlUser {
		u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: name}}
		u.Spec.ForProvider.Instance, u.Spec.ForProvider.Name = shared, ptr.To("platform-legacy")
		u.SetWriteConnectionSecretToReference(&xpv2.SecretReference{Namespace: secretNamespace, Name: name})
		w.create(u)
		w.objects = append(w.objects, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: name}})
		return u
	}
	first := platformUser("legacy-1-" + w.id)
	w.waitReady(first)
	second := platformUser("legacy-2-" + w.id)
	w.waitSynced(second, corev1.ConditionFalse, "login platform-legacy", "PostgresqlUser legacy-1-"+w.id+" (cluster-scoped")
}
