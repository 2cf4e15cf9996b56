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

package podinject

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// The denial of a pod whose user annotation names no user says where the
// injector looked, and which kinds this cluster does not serve.
func TestUserNotFound(t *testing.T) {
	for name, tc := range map[string]struct {
		value string
		res   resolution[userTarget]
		want  []string
	}{
		"BothServed": {
			value: "app", res: resolution[userTarget]{namespacedServed: true, clusterServed: true},
			want: []string{`annotation cloudsql.travelaudience.com/postgresqluser-name names PostgresqlUser "app", which exists neither in the pod's namespace team-b (postgresqlusers.cloudsql.m.travelaudience.com) nor cluster-scoped (postgresqlusers.cloudsql.travelaudience.com)`, "a namespaced PostgresqlUser serves only pods of its own namespace"},
		},
		"OnlyTheClusterScopedKindServed": {
			value: "app", res: resolution[userTarget]{clusterServed: true},
			want: []string{"neither in the pod's namespace team-b (that kind is not served in this cluster) nor cluster-scoped (postgresqlusers.cloudsql.travelaudience.com)"},
		},
		"NoneServed": {
			value: "app", res: resolution[userTarget]{},
			want: []string{"this cluster serves no PostgresqlUsers", "activate the ManagedResourceDefinition postgresqlusers.cloudsql.m.travelaudience.com or postgresqlusers.cloudsql.travelaudience.com"},
		},
		"NamespaceNamedServed": {
			value: "team-b/app", res: resolution[userTarget]{namespacedServed: true},
			want: []string{`names PostgresqlUser "app" of namespace team-b (postgresqlusers.cloudsql.m.travelaudience.com), which does not exist`},
		},
		"NamespaceNamedNotServed": {
			value: "team-b/app", res: resolution[userTarget]{clusterServed: true},
			want: []string{"this cluster does not serve namespaced PostgresqlUsers", "activate the ManagedResourceDefinition postgresqlusers.cloudsql.m.travelaudience.com"},
		},
		"ClusterScopedNamedServed": {
			value: "/app", res: resolution[userTarget]{namespacedServed: true, clusterServed: true},
			want: []string{`names the cluster-scoped PostgresqlUser "app" (postgresqlusers.cloudsql.travelaudience.com), which does not exist`},
		},
		"ClusterScopedNamedNotServed": {
			value: "/app", res: resolution[userTarget]{namespacedServed: true},
			want: []string{"this cluster does not serve cluster-scoped PostgresqlUsers", "activate the ManagedResourceDefinition postgresqlusers.cloudsql.travelaudience.com "},
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			l, ok := parseAnnotation(tc.value)
			g.Expect(ok).To(BeTrue())
			msg := tc.res.notFound(userKind, "team-b/web", "team-b", tc.value, l)
			g.Expect(msg).To(HavePrefix("pod team-b/web: "))
			for _, w := range tc.want {
				g.Expect(msg).To(ContainSubstring(w))
			}
		})
	}
}

// A user's login is the name observed, else the name asked for, else the
// object's name; its databases are those its status and its connection
// secret list, once each, in order.
func TestUserLoginAndDatabases(t *testing.T) {
	type want struct {
		login     string
		databases []string
	}
	named := func(u *v1alpha1.PostgresqlUser) { u.Spec.ForProvider.Name = ptr.To("orders_app") }
	observed := func(u *v1alpha1.PostgresqlUser) { u.Status.AtProvider.Name = "orders_rw" }
	owns := func(dbs ...string) func(*v1alpha1.PostgresqlUser) {
		return func(u *v1alpha1.PostgresqlUser) { u.Status.AtProvider.Databases = dbs }
	}
	cases := map[string]struct {
		reason string
		user   []func(*v1alpha1.PostgresqlUser)
		secret string
		want   want
	}{
		"TheObjectsName": {
			reason: "A user that names no login and was not observed yet logs in as metadata.name, which the controller gives the login.",
			want:   want{login: "app"},
		},
		"TheNameAskedFor": {
			reason: "spec.forProvider.name is the login before it is observed.",
			user:   []func(*v1alpha1.PostgresqlUser){named},
			want:   want{login: "orders_app"},
		},
		"TheNameObserved": {
			reason: "status.atProvider.name is the login once observed.",
			user:   []func(*v1alpha1.PostgresqlUser){named, observed},
			want:   want{login: "orders_rw"},
		},
		"DatabasesOfTheStatusAndTheSecret": {
			reason: "Either source may be a poll behind the other: the databases are both, sorted, each once.",
			user:   []func(*v1alpha1.PostgresqlUser){owns("reports", "orders")},
			secret: "orders, archive,",
			want:   want{login: "app", databases: []string{"archive", "orders", "reports"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "app"}}
			for _, fn := range tc.user {
				fn(u)
			}
			cs := &corev1.Secret{Data: map[string][]byte{cloudsql.ConnectionKeyDatabases: []byte(tc.secret)}}
			ut := clusterUser(u)
			got := want{login: ut.login(), databases: ut.databases(cs)}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("\n%s\nlogin and databases: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// A cluster-scoped user's own allow-list admits only the namespaces it names;
// without one its instance's decides.
func TestUserAllows(t *testing.T) {
	u := &v1alpha1.PostgresqlUser{}
	g := NewWithT(t)
	g.Expect(userAllows(u, "team-a")).To(BeTrue(), "no spec.forProvider.injection")
	u.Spec.ForProvider.Injection = &v1alpha1.UserInjection{}
	g.Expect(userAllows(u, "team-a")).To(BeTrue(), "an empty allowedNamespaces")
	u.Spec.ForProvider.Injection.AllowedNamespaces = []string{"team-b"}
	g.Expect(userAllows(u, "team-a")).To(BeFalse())
	g.Expect(userAllows(u, "team-b")).To(BeTrue())
}

// The copies of users, cluster-scoped instances and namespaced instances never
// share a name, whatever the names of the users and instances.
func TestUserCopiesHaveNamesOfTheirOwn(t *testing.T) {
	g := NewWithT(t)
	for _, n := range []string{"app", "user-pgpass-app", "m-pgpass-app", strings.Repeat("a", 300)} {
		name := UserCopyName(n)
		g.Expect(len(name)).To(BeNumerically("<=", maxNameLength))
		for _, other := range []string{n, "user-" + n, "user-pgpass-" + n} {
			g.Expect(copyKind(name, other, CopyName)).To(BeEmpty(), "user %s, instance %s", n, other)
			g.Expect(copyKind(name, other, NamespacedCopyName)).To(BeEmpty(), "user %s, namespaced instance %s", n, other)
		}
	}
	s := userPgpassCopy(clusterUser(&v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "app", UID: "uid-1"}}), "team-a", []byte("line"))
	g.Expect(copyKeys(s)).To(Equal([]string{userCopyKey("app")}))
	g.Expect(s.Labels).To(Equal(map[string]string{v1alpha1.LabelUser: "app", LabelCopyKind: CopyPgpass}))
	g.Expect(s.OwnerReferences).To(Equal([]metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "PostgresqlUser", Name: "app", UID: "uid-1"}}))
	g.Expect(copyLabel(s)).To(Equal(v1alpha1.LabelUser))
	g.Expect(namespacedUser(&nsv1alpha1.PostgresqlUser{}).label()).To(Equal(nsv1alpha1.LabelUser))
}
