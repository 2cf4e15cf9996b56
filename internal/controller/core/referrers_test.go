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

package core

import (
	"context"
	"reflect"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// The owner index keys a database by its owner's namespace/name, which is
// what OwnedBy asks of a user: the two must agree, or a user finds none.
func TestOwnerIndex(t *testing.T) {
	db := func(owner string) *v1alpha1.PostgresqlDatabase {
		d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: "orders"}}
		d.Spec.ForProvider.Owner, d.Spec.ForProvider.Instance = owner, "shared"
		return d
	}
	nsdb := func(owner string) *nsv1alpha1.PostgresqlDatabase {
		d := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "orders"}}
		d.Spec.ForProvider.Owner, d.Spec.ForProvider.Instance = owner, "pg"
		return d
	}
	cases := []struct {
		name string
		obj  client.Object
		// user, when set, is the user whose OwnedBy must select obj.
		user client.Object
		want []string
	}{
		{name: "ClusterScoped", obj: db("app"), user: &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, want: []string{"/app"}},
		{name: "ClusterScopedWithoutOwner", obj: db(""), want: nil},
		{name: "Namespaced", obj: nsdb("app"), user: &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "app"}}, want: []string{"team/app"}},
		{name: "NamespacedWithoutOwner", obj: nsdb(""), want: nil},
		// Users name no owner: a kind without OwnerKey yields no key.
		{name: "NotADatabase", obj: &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := ReferrerKeys(OwnerOf)(tc.obj)
			g.Expect(got).To(Equal(tc.want))
			if tc.user != nil {
				g.Expect(got).To(ContainElement(OwnedBy(tc.user)[FieldOwner]))
			}
		})
	}
	// A user of the same name in another namespace, or cluster-scoped, does
	// not select a namespaced database.
	g := NewWithT(t)
	keys := ReferrerKeys(OwnerOf)(nsdb("app"))
	g.Expect(keys).NotTo(ContainElement(OwnedBy(&nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "app"}})[FieldOwner]))
	g.Expect(keys).NotTo(ContainElement(OwnedBy(&v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "app"}})[FieldOwner]))
}

// recordingIndexer counts the indexes registered, and refuses a second of
// one name, as the manager's cache does.
type recordingIndexer struct {
	fields map[string]int
	fail   error
}

func (r *recordingIndexer) IndexField(_ context.Context, obj client.Object, field string, _ client.IndexerFunc) error {
	if r.fail != nil {
		return r.fail
	}
	// Empty objects carry no GVK: their Go type tells the kinds apart.
	t := reflect.TypeOf(obj).Elem()
	k := t.PkgPath() + "." + t.Name() + " " + field
	if r.fields[k] > 0 {
		return errors.New("indexer conflict")
	}
	r.fields[k]++
	return nil
}

// The users' and databases' controllers both ask for the owner index, in
// either order: each kind's is registered once.
func TestIndexesRegisterOnce(t *testing.T) {
	g := NewWithT(t)
	r := &recordingIndexer{fields: map[string]int{}}
	var x indexes
	for range 2 {
		g.Expect(x.field(r, &v1alpha1.PostgresqlDatabase{}, v1alpha1.PostgresqlDatabaseGroupVersionKind, FieldOwner, OwnerOf)).To(Succeed())
		g.Expect(x.field(r, &nsv1alpha1.PostgresqlDatabase{}, nsv1alpha1.PostgresqlDatabaseGroupVersionKind, FieldOwner, OwnerOf)).To(Succeed())
	}
	g.Expect(r.fields).To(HaveLen(2))

	// A registration that failed is tried again.
	var y indexes
	r.fail = errors.New("boom")
	g.Expect(y.field(r, &v1alpha1.PostgresqlDatabase{}, v1alpha1.PostgresqlDatabaseGroupVersionKind, fieldInstance, instanceOf)).NotTo(Succeed())
	r.fail = nil
	g.Expect(y.field(r, &v1alpha1.PostgresqlDatabase{}, v1alpha1.PostgresqlDatabaseGroupVersionKind, fieldInstance, instanceOf)).To(Succeed())
}
