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
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/postgresqlobject"
)

// The namespaces, instances and users every case can see.
const (
	nsA     = "team-a" // labelled tier=gold
	nsB     = "team-b"
	nsGoing = "team-going" // being deleted
)

var (
	errBoom = errors.New("boom")
	// policy admits team-d to instances without spec.injection.
	policy = tenancy.Policy{DefaultAllowedNamespaces: []string{"team-d"}}
)

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, v1alpha1.SchemeBuilder.AddToScheme, nsv1alpha1.SchemeBuilder.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func clusterInstance(name string, inj *v1alpha1.Injection) *v1alpha1.PostgresqlInstance {
	return &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PostgresqlInstanceSpec{Injection: inj}}
}

// tenantInstance is a cluster-scoped instance that admits namespaces for
// users and databases by t alone.
func tenantInstance(name string, t *v1alpha1.Tenancy) *v1alpha1.PostgresqlInstance {
	return &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PostgresqlInstanceSpec{Injection: &v1alpha1.Injection{}, Tenancy: t}}
}

// world is what the API server holds in every case.
func world() []client.Object {
	now := metav1.NewTime(time.Unix(1_700_000_000, 0))
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsA, Labels: map[string]string{"tier": "gold"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsB}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsGoing, DeletionTimestamp: &now, Finalizers: []string{"kubernetes"}}},
		clusterInstance("open", &v1alpha1.Injection{AllowedNamespaces: []string{nsA}}),
		clusterInstance("closed", &v1alpha1.Injection{AllowedNamespaces: []string{nsB}}),
		clusterInstance("everyone", &v1alpha1.Injection{AllowedNamespaces: []string{"*"}}),
		clusterInstance("gold", &v1alpha1.Injection{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}),
		clusterInstance("bad-selector", &v1alpha1.Injection{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Bogus"}}}}),
		clusterInstance("no-injection", nil),
		nsUser(nsA, "on-open", func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.ClusterInstance = "open" }),
		nsUser(nsA, "on-local", func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Instance = "local" }),
		nsUser(nsA, "on-local-ref", func(u *nsv1alpha1.PostgresqlUser) {
			u.Spec.ForProvider.InstanceRef = &xpv2.NamespacedReference{Name: "local"}
		}),
		nsUser(nsA, "unresolved", func(u *nsv1alpha1.PostgresqlUser) {
			u.Spec.ForProvider.InstanceSelector = &xpv2.NamespacedSelector{MatchLabels: map[string]string{"a": "b"}}
		}),
		clusterUser("on-shared", "shared"),
		clusterUser("on-other", "other"),
	}
}

func nsDatabase(ns, name string, fns ...func(*nsv1alpha1.PostgresqlDatabase)) *nsv1alpha1.PostgresqlDatabase {
	d := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	d.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	for _, fn := range fns {
		fn(d)
	}
	return d
}

func nsUser(ns, name string, fns ...func(*nsv1alpha1.PostgresqlUser)) *nsv1alpha1.PostgresqlUser {
	u := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, fn := range fns {
		fn(u)
	}
	return u
}

func clusterDatabase(name string, fns ...func(*v1alpha1.PostgresqlDatabase)) *v1alpha1.PostgresqlDatabase {
	d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: name}}
	d.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	d.Spec.DeletionPolicy = xpv2.DeletionDelete
	for _, fn := range fns {
		fn(d)
	}
	return d
}

func clusterUser(name, inst string) *v1alpha1.PostgresqlUser {
	u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: name}}
	u.Spec.ForProvider.Instance = inst
	return u
}

// nsBackup is a namespaced PostgresqlBackup of the cluster-scoped instance
// clusterInstance.
func nsBackup(ns, name, clusterInstance string) *nsv1alpha1.PostgresqlBackup {
	b := &nsv1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	b.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	b.Spec.ForProvider.ClusterInstance = clusterInstance
	return b
}

func clusterBackup(name string, fns ...func(*v1alpha1.PostgresqlBackup)) *v1alpha1.PostgresqlBackup {
	b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: name}}
	b.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	b.Spec.DeletionPolicy = xpv2.DeletionDelete
	b.Spec.ForProvider.Instance = "shared"
	for _, fn := range fns {
		fn(b)
	}
	return b
}

func onCluster(name string) func(*nsv1alpha1.PostgresqlDatabase) {
	return func(d *nsv1alpha1.PostgresqlDatabase) { d.Spec.ForProvider.ClusterInstance = name }
}

func ownedBy(name string) func(*nsv1alpha1.PostgresqlDatabase) {
	return func(d *nsv1alpha1.PostgresqlDatabase) { d.Spec.ForProvider.Owner = name }
}

func annotated(o client.Object) client.Object {
	o.SetAnnotations(map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
	return o
}

// request is an admission request of op about obj (and old, for an update),
// for the namespace of obj.
type request struct {
	op       admissionv1.Operation
	obj, old client.Object
	// namespace, when set, is the request's namespace instead of obj's.
	namespace string
}

func (r request) admission(t *testing.T) admission.Request {
	t.Helper()
	raw := func(o client.Object) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	subject := r.obj
	if subject == nil {
		subject = r.old
	}
	gvks, _, err := scheme(t).ObjectKinds(subject)
	if err != nil {
		t.Fatal(err)
	}
	gvk := gvks[0]
	ns := subject.GetNamespace()
	if r.namespace != "" {
		ns = r.namespace
	}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "a-review", Operation: r.op, Namespace: ns, Name: subject.GetName(),
		Kind: metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
	}}
	if r.op == admissionv1.Delete {
		req.OldObject = raw(r.obj)
		return req
	}
	req.Object, req.OldObject = raw(r.obj), raw(r.old)
	return req
}

// verdict is what a case checks of a response: whether it allows, its code,
// and substrings of its message and warnings.
type verdict struct {
	Allowed  bool
	Code     int32
	Message  []string
	Warnings []string
}

func verdictOf(r admission.Response, want verdict) verdict {
	got := verdict{Allowed: r.Allowed}
	if r.Result != nil {
		got.Code = r.Result.Code
	}
	// Only the substrings the case expects are compared, so that each case
	// says what it is about.
	msg := ""
	if r.Result != nil {
		msg = r.Result.Message
	}
	for _, s := range want.Message {
		if strings.Contains(msg, s) {
			got.Message = append(got.Message, s)
		} else {
			got.Message = append(got.Message, "MISSING from "+msg)
		}
	}
	all := strings.Join(r.Warnings, "\n")
	for _, s := range want.Warnings {
		if strings.Contains(all, s) {
			got.Warnings = append(got.Warnings, s)
		} else {
			got.Warnings = append(got.Warnings, "MISSING from "+all)
		}
	}
	if len(want.Warnings) == 0 && len(r.Warnings) > 0 {
		got.Warnings = r.Warnings
	}
	return got
}

func TestHandle(t *testing.T) {
	t.Parallel()
	deleting := metav1.NewTime(time.Unix(1_700_000_000, 0))
	allowed := verdict{Allowed: true, Code: http.StatusOK}
	denied := func(msg ...string) verdict { return verdict{Code: http.StatusForbidden, Message: msg} }
	notAdmittedA := func(kind, name, field, inst string) []string {
		return []string{
			kind + " " + nsA + "/" + name + ": " + field + " names the cluster-scoped PostgresqlInstance " + inst + ", which does not admit namespace " + nsA,
			"ask the instance's owner to add " + nsA + " to spec.tenancy.allowedNamespaces",
			"or use a PostgresqlInstance of namespace " + nsA + ", with spec.forProvider.instance, instead",
		}
	}

	cases := map[string]struct {
		reason string
		reader client.Reader
		req    request
		want   verdict
	}{
		// The allow-list of a cluster-scoped instance.
		"ClusterInstanceAdmitsTheNamespace": {
			reason: "A namespaced database may name a cluster-scoped instance whose spec.injection lists its namespace.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("open"))},
			want:   allowed,
		},
		"ClusterInstanceAdmitsEveryNamespace": {
			reason: "spec.injection.allowedNamespaces [*] admits every namespace.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsB, "db", onCluster("everyone"))},
			want:   allowed,
		},
		"ClusterInstanceSelectsTheNamespace": {
			reason: "spec.injection.namespaceSelector admits a namespace whose labels match.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("gold"))},
			want:   allowed,
		},
		"ClusterInstanceDoesNotSelectTheNamespace": {
			reason: "spec.injection.namespaceSelector does not admit a namespace whose labels do not match; the message says how to be admitted.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsB, "db", onCluster("gold"))},
			want: denied("PostgresqlDatabase team-b/db: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance gold, which does not admit namespace team-b",
				"or to label the namespace to match spec.injection.namespaceSelector"),
		},
		"ClusterInstanceDoesNotAdmitTheNamespace": {
			reason: "A namespaced database may not name a cluster-scoped instance whose spec.injection leaves its namespace out.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("closed"))},
			want:   denied(notAdmittedA("PostgresqlDatabase", "db", "spec.forProvider.clusterInstance", "closed")...),
		},
		"ClusterInstanceRefDoesNotAdmitTheNamespace": {
			reason: "clusterInstanceRef is judged before the controller resolves it, and the message names that field.",
			req: request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: "closed"}
			})},
			want: denied(notAdmittedA("PostgresqlDatabase", "db", "spec.forProvider.clusterInstanceRef.name", "closed")...),
		},
		"ClusterInstanceRefAlwaysResolvedIsJudgedToo": {
			reason: "A clusterInstanceRef beside clusterInstance (with resolve policy Always it wins) must admit the namespace too.",
			req: request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("open"), func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: "closed"}
			})},
			want: denied(notAdmittedA("PostgresqlDatabase", "db", "spec.forProvider.clusterInstanceRef.name", "closed")...),
		},
		"ClusterInstanceSelectorIsLeftToTheController": {
			reason: "A clusterInstanceSelector names no instance yet: it is admitted, and judged when its resolution is written.",
			req: request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.ClusterInstanceSelector = &xpv2.Selector{MatchLabels: map[string]string{"shared": "true"}}
			})},
			want: allowed,
		},
		"DefaultPolicyAdmits": {
			reason: "An instance without spec.injection admits the namespaces of [injection] default_allowed_namespaces.",
			req:    request{op: admissionv1.Create, obj: nsDatabase("team-d", "db", onCluster("no-injection"))},
			want:   allowed,
		},
		"DefaultPolicyDenies": {
			reason: "An instance without spec.injection admits no namespace outside [injection] default_allowed_namespaces.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("no-injection"))},
			want:   denied("which does not admit namespace team-a", "[injection] default_allowed_namespaces [team-d]"),
		},
		"LocalInstanceIsNotLookedUp": {
			reason: "An instance of the object's own namespace has no allow-list to obey: only the objects that may name the same database are read.",
			reader: &test.MockClient{MockGet: test.NewMockGetFn(errBoom), MockList: test.NewMockListFn(nil)},
			req: request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.Instance = "local"
			})},
			want: allowed,
		},
		"MissingClusterInstanceIsAdmittedWithAWarning": {
			reason: "A cluster-scoped instance that does not exist yet cannot be judged: admitted with a warning that the controller checks it.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("later"))},
			want: verdict{Allowed: true, Code: http.StatusOK, Warnings: []string{
				"PostgresqlDatabase team-a/db: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance later, which does not exist (yet)",
			}},
		},
		"UnreadableClusterInstanceIsAdmittedWithAWarning": {
			reason: "A cluster-scoped instance that cannot be read is admitted with a warning; the controller checks it.",
			reader: &test.MockClient{MockGet: test.NewMockGetFn(errBoom), MockList: test.NewMockListFn(nil)},
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("open"))},
			want: verdict{Allowed: true, Code: http.StatusOK, Warnings: []string{
				"PostgresqlDatabase team-a/db: whether the cluster-scoped PostgresqlInstance open named by spec.forProvider.clusterInstance admits namespace team-a was not checked (boom)",
			}},
		},
		"InvalidNamespaceSelectorIsAdmittedWithAWarning": {
			reason: "An instance whose namespaceSelector is invalid cannot be judged: admitted with a warning.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("bad-selector"))},
			want: verdict{Allowed: true, Code: http.StatusOK, Warnings: []string{
				"PostgresqlInstance bad-selector: spec.injection.namespaceSelector is invalid",
			}},
		},
		"UserClusterInstanceDoesNotAdmitTheNamespace": {
			reason: "A namespaced user obeys the same allow-list, with a message that names it.",
			req: request{op: admissionv1.Create, obj: nsUser(nsA, "app", func(u *nsv1alpha1.PostgresqlUser) {
				u.Spec.ForProvider.ClusterInstance = "closed"
			})},
			want: denied(notAdmittedA("PostgresqlUser", "app", "spec.forProvider.clusterInstance", "closed")...),
		},
		"UserClusterInstanceRefAdmitsTheNamespace": {
			reason: "A namespaced user may name a cluster-scoped instance that admits its namespace.",
			req: request{op: admissionv1.Create, obj: nsUser(nsA, "app", func(u *nsv1alpha1.PostgresqlUser) {
				u.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: "open"}
			})},
			want: allowed,
		},
		"UpdateKeepingTheInstanceIsNotJudgedAgain": {
			reason: "An update that keeps the instance (an annotation, a finalizer) is admitted even when the instance no longer admits the namespace.",
			req: request{op: admissionv1.Update,
				obj: annotated(nsDatabase(nsA, "db", onCluster("closed"))), old: nsDatabase(nsA, "db", onCluster("closed"))},
			want: allowed,
		},
		"UpdateResolvingASelectorIsJudged": {
			reason: "The update that writes the instance a clusterInstanceSelector resolved to is judged.",
			req: request{op: admissionv1.Update, obj: nsUser(nsA, "app", func(u *nsv1alpha1.PostgresqlUser) {
				u.Spec.ForProvider.ClusterInstance = "closed"
				u.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: "closed"}
			}), old: nsUser(nsA, "app")},
			want: denied(notAdmittedA("PostgresqlUser", "app", "spec.forProvider.clusterInstance", "closed")...),
		},
		"UpdateOfAnObjectBeingDeleted": {
			reason: "An object being deleted must be able to lose its finalizers, whatever it names.",
			req: request{op: admissionv1.Update, obj: nsDatabase(nsA, "db", onCluster("closed"), func(d *nsv1alpha1.PostgresqlDatabase) {
				d.DeletionTimestamp = &deleting
			}), old: nsDatabase(nsA, "db")},
			want: allowed,
		},
		// The owner of a database.
		"OwnerOfTheSameInstance": {
			reason: "A database may be owned by a user of its own instance.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("open"), ownedBy("on-open"))},
			want:   allowed,
		},
		"OwnerRefOfTheSameInstanceByRef": {
			reason: "A user whose instanceRef names the database's instance belongs to it.",
			req: request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", ownedBy("on-local-ref"), func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.Instance = "local"
			})},
			want: allowed,
		},
		"OwnerOfAnotherInstance": {
			reason: "A database may not be owned by a user of another instance; the message names the field, the user and both instances.",
			req: request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", ownedBy("on-open"), func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.Instance = "local"
			})},
			want: denied("PostgresqlDatabase team-a/db: spec.forProvider.owner names PostgresqlUser team-a/on-open, which belongs to PostgresqlInstance open (cluster-scoped), not to team-a/local, the database's instance",
				"name a PostgresqlUser of team-a/local in namespace team-a, or create one"),
		},
		"OwnerRefOfAnotherInstance": {
			reason: "ownerRef is judged before the controller resolves it, and the message names that field.",
			req: request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("open"), func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.OwnerRef = &xpv2.NamespacedReference{Name: "on-local"}
			})},
			want: denied("PostgresqlDatabase team-a/db: spec.forProvider.ownerRef.name names PostgresqlUser team-a/on-local, which belongs to PostgresqlInstance team-a/local, not to open (cluster-scoped)"),
		},
		"OwnerThatDoesNotExistYet": {
			reason: "A user that does not exist yet may be created next: admitted.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("open"), ownedBy("later"))},
			want:   allowed,
		},
		"OwnerOfAnotherNamespaceIsNotFound": {
			reason: "The owner is looked up in the database's namespace only: a user of that name elsewhere does not count.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsB, "db", onCluster("everyone"), ownedBy("on-local"))},
			want:   allowed,
		},
		"OwnerWhoseInstanceIsUnresolved": {
			reason: "A user whose instance only a selector names cannot be compared: admitted, the controller checks it.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", onCluster("open"), ownedBy("unresolved"))},
			want:   allowed,
		},
		"DatabaseWhoseInstanceIsUnresolved": {
			reason: "A database whose instance only a selector names cannot be compared with its owner's: admitted.",
			req: request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", ownedBy("on-local"), func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.ClusterInstanceSelector = &xpv2.Selector{MatchLabels: map[string]string{"shared": "true"}}
			})},
			want: allowed,
		},
		"UnreadableOwnerIsAdmittedWithAWarning": {
			reason: "A user that cannot be read is admitted with a warning; the controller checks it.",
			reader: &test.MockClient{MockGet: test.NewMockGetFn(errBoom), MockList: test.NewMockListFn(nil)},
			req: request{op: admissionv1.Create, obj: nsDatabase(nsA, "db", ownedBy("on-open"), func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.Instance = "local"
			})},
			want: verdict{Allowed: true, Code: http.StatusOK, Warnings: []string{
				"PostgresqlDatabase team-a/db: whether PostgresqlUser on-open named by spec.forProvider.owner belongs to the database's instance was not checked (boom)",
			}},
		},
		"UpdateChangingTheOwner": {
			reason: "An update that names another owner is judged.",
			req: request{op: admissionv1.Update,
				obj: nsDatabase(nsA, "db", onCluster("open"), ownedBy("on-local")),
				old: nsDatabase(nsA, "db", onCluster("open"), ownedBy("on-open"))},
			want: denied("spec.forProvider.owner names PostgresqlUser team-a/on-local, which belongs to PostgresqlInstance team-a/local"),
		},
		"UpdateResolvingTheInstance": {
			reason: "The update that writes the database's resolved instance judges the owner it had already.",
			req: request{op: admissionv1.Update,
				obj: nsDatabase(nsA, "db", onCluster("open"), ownedBy("on-local")),
				old: nsDatabase(nsA, "db", ownedBy("on-local"))},
			want: denied("spec.forProvider.owner names PostgresqlUser team-a/on-local"),
		},
		"ClusterOwnerOfAnotherInstance": {
			reason: "A cluster-scoped database may not be owned by a cluster-scoped user of another instance.",
			req: request{op: admissionv1.Create, obj: clusterDatabase("db", func(d *v1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.Instance = "shared"
				d.Spec.ForProvider.OwnerRef = &xpv2.Reference{Name: "on-other"}
			})},
			want: denied("PostgresqlDatabase db: spec.forProvider.ownerRef.name names PostgresqlUser on-other, which belongs to PostgresqlInstance other (cluster-scoped), not to shared (cluster-scoped)",
				"name a PostgresqlUser of shared (cluster-scoped) in the cluster scope"),
		},
		"ClusterOwnerOfTheSameInstance": {
			reason: "A cluster-scoped database may be owned by a cluster-scoped user of its instance.",
			req: request{op: admissionv1.Create, obj: clusterDatabase("db", func(d *v1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.Instance = "shared"
				d.Spec.ForProvider.Owner = "on-shared"
			})},
			want: allowed,
		},
		"ClusterUserIsNotJudged": {
			reason: "A cluster-scoped user has no allow-list to obey.",
			reader: &test.MockClient{MockGet: test.NewMockGetFn(errBoom), MockList: test.NewMockListFn(nil)},
			req:    request{op: admissionv1.Create, obj: clusterUser("app", "closed")},
			want:   allowed,
		},
		// The deletion guard.
		"DeleteDatabaseWithoutTheAnnotation": {
			reason: "A database is deleted only with the allow-deletion annotation; the message says how to give it.",
			req:    request{op: admissionv1.Delete, obj: nsDatabase(nsA, "db", onCluster("open"))},
			want: denied("PostgresqlDatabase team-a/db may not be deleted: deleting it drops PostgreSQL database db and its data",
				"`kubectl annotate -n team-a postgresqldatabases.cloudsql.m.travelaudience.com db cloudsql.travelaudience.com/allow-deletion=true`, then delete it again"),
		},
		"DeleteClusterDatabaseWithoutTheAnnotation": {
			reason: "The cluster-scoped kind is guarded alike, named by its database's name in PostgreSQL.",
			req: request{op: admissionv1.Delete, obj: clusterDatabase("db", func(d *v1alpha1.PostgresqlDatabase) {
				d.Spec.ForProvider.Name = ptr.To("orders")
			})},
			want: denied("PostgresqlDatabase db may not be deleted: deleting it drops PostgreSQL database orders and its data",
				"`kubectl annotate postgresqldatabases.cloudsql.travelaudience.com db cloudsql.travelaudience.com/allow-deletion=true`"),
		},
		"DeleteOrphanedDatabaseWithoutTheAnnotation": {
			reason: "With deletionPolicy Orphan the database stays, but the guard still holds, as for instances.",
			req: request{op: admissionv1.Delete, obj: clusterDatabase("db", func(d *v1alpha1.PostgresqlDatabase) {
				d.Spec.DeletionPolicy = xpv2.DeletionOrphan
			})},
			want: denied("PostgresqlDatabase db may not be deleted: deleting it stops managing PostgreSQL database db, which stays with its data"),
		},
		"DeleteObservedDatabaseWithoutTheAnnotation": {
			reason: "Without Delete among the management policies the database stays, but the guard still holds.",
			req: request{op: admissionv1.Delete, obj: nsDatabase(nsA, "db", func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
			})},
			want: denied("deleting it stops managing PostgreSQL database db, which stays with its data"),
		},
		"DeleteDatabaseWithTheAnnotation": {
			reason: "A database that carries the annotation is deleted.",
			req:    request{op: admissionv1.Delete, obj: annotated(nsDatabase(nsA, "db"))},
			want:   verdict{Allowed: true, Code: http.StatusOK, Message: []string{"deletion allowed by annotation cloudsql.travelaudience.com/allow-deletion"}},
		},
		"DeleteDatabaseWithTheAnnotationFalse": {
			reason: "Only the value true allows deletion.",
			req: request{op: admissionv1.Delete, obj: nsDatabase(nsA, "db", func(d *nsv1alpha1.PostgresqlDatabase) {
				d.Annotations = map[string]string{v1alpha1.AnnotationAllowDeletion: "yes"}
			})},
			want: denied("PostgresqlDatabase team-a/db may not be deleted"),
		},
		"DeleteDatabaseOfATerminatingNamespace": {
			reason: "A namespace being deleted is not kept Terminating: its databases go without the annotation, and their databases are kept.",
			req:    request{op: admissionv1.Delete, obj: nsDatabase(nsGoing, "db")},
			want: verdict{Allowed: true, Code: http.StatusOK, Message: []string{
				"namespace team-going is being deleted: the PostgresqlDatabase goes, and PostgreSQL database db is kept",
			}},
		},
		"BackupOfAClusterInstanceThatAdmitsTheNamespace": {
			reason: "A namespaced backup may name a cluster-scoped instance that admits its namespace; a backup names no login or database, so no namesake is looked for.",
			req:    request{op: admissionv1.Create, obj: nsBackup(nsA, "nightly", "open")},
			want:   allowed,
		},
		"BackupOfAClusterInstanceThatDoesNotAdmitTheNamespace": {
			reason: "A namespaced backup may not name a cluster-scoped instance that does not admit its namespace: the message names the object and the field.",
			req:    request{op: admissionv1.Create, obj: nsBackup(nsA, "nightly", "closed")},
			want: denied("PostgresqlBackup team-a/nightly: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance closed, which does not admit namespace team-a",
				"or use a PostgresqlInstance of namespace team-a, with spec.forProvider.instance, instead"),
		},
		"BackupMovedToAClusterInstanceThatDoesNotAdmitTheNamespace": {
			reason: "An update that names another cluster-scoped instance is judged too (the CRD refuses it as well).",
			req:    request{op: admissionv1.Update, obj: nsBackup(nsA, "nightly", "closed"), old: nsBackup(nsA, "nightly", "open")},
			want:   denied("PostgresqlBackup team-a/nightly: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance closed"),
		},
		"DeleteBackupWithoutTheAnnotation": {
			reason: "A backup holds data: its deletion is guarded as a database's, and the message names the backup run.",
			req: request{op: admissionv1.Delete, obj: clusterBackup("nightly", func(b *v1alpha1.PostgresqlBackup) {
				b.SetAnnotations(map[string]string{"crossplane.io/external-name": "1700000000123"})
			})},
			want: denied("PostgresqlBackup nightly may not be deleted: deleting it deletes backup run 1700000000123 of its Cloud SQL instance",
				"`kubectl annotate postgresqlbackups.cloudsql.travelaudience.com nightly cloudsql.travelaudience.com/allow-deletion=true`"),
		},
		"DeleteOrphanedBackupWithoutTheAnnotation": {
			reason: "With deletionPolicy Orphan the backup stays, but the guard still holds.",
			req: request{op: admissionv1.Delete, obj: clusterBackup("nightly", func(b *v1alpha1.PostgresqlBackup) {
				b.Spec.DeletionPolicy = xpv2.DeletionOrphan
			})},
			want: denied("PostgresqlBackup nightly may not be deleted: deleting it stops managing the backup it took, which Cloud SQL keeps"),
		},
		"DeleteNamespacedBackupWithoutTheAnnotation": {
			reason: "The namespaced kind is guarded the same way.",
			req:    request{op: admissionv1.Delete, obj: nsBackup(nsA, "nightly", "open")},
			want: denied("PostgresqlBackup team-a/nightly may not be deleted",
				"`kubectl annotate -n team-a postgresqlbackups.cloudsql.m.travelaudience.com nightly cloudsql.travelaudience.com/allow-deletion=true`"),
		},
		"DeleteBackupWithTheAnnotation": {
			reason: "A backup that carries the annotation is deleted.",
			req:    request{op: admissionv1.Delete, obj: annotated(nsBackup(nsA, "nightly", "open"))},
			want:   verdict{Allowed: true, Code: http.StatusOK, Message: []string{"deletion allowed by annotation cloudsql.travelaudience.com/allow-deletion"}},
		},
		"DeleteBackupOfATerminatingNamespace": {
			reason: "A namespace being deleted is not kept Terminating: its backups go without the annotation, and the backup runs are kept.",
			req:    request{op: admissionv1.Delete, obj: nsBackup(nsGoing, "nightly", "open")},
			want: verdict{Allowed: true, Code: http.StatusOK, Message: []string{
				"namespace team-going is being deleted: the PostgresqlBackup goes, and the backup it took is kept (it is deleted only with the allow-deletion annotation)",
			}},
		},
		"DeleteUser": {
			reason: "A user needs no annotation to be deleted.",
			req:    request{op: admissionv1.Delete, obj: nsUser(nsA, "app")},
			want:   allowed,
		},
		// Requests the API server never sends.
		"ObjectOfAnotherNamespace": {
			reason: "A request whose object is of another namespace is refused.",
			req:    request{op: admissionv1.Create, obj: nsDatabase(nsB, "db", onCluster("open")), namespace: nsA},
			want:   denied(`the PostgresqlDatabase's metadata.namespace "team-b" differs from the admission request's namespace "team-a"`),
		},
		"DeletionOfAnotherNamespace": {
			reason: "A deletion whose object is of another namespace is refused, annotation or not.",
			req:    request{op: admissionv1.Delete, obj: annotated(nsDatabase(nsB, "db")), namespace: nsA},
			want:   denied(`differs from the admission request's namespace "team-a"`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := scheme(t)
			r := tc.reader
			if r == nil {
				r = selectable(fake.NewClientBuilder().WithScheme(s).WithObjects(world()...)).Build()
			}
			v := postgresqlobject.New(r, s, policy)
			got := verdictOf(v.Handle(context.Background(), tc.req.admission(t)), tc.want)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nHandle(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// Requests of other kinds, or whose object cannot be decoded, are errors.
func TestHandleBadRequests(t *testing.T) {
	t.Parallel()
	v := postgresqlobject.New(fake.NewClientBuilder().WithScheme(scheme(t)).Build(), scheme(t), policy)
	cases := map[string]struct {
		reason string
		req    admission.Request
		want   string
	}{
		"OtherKind": {
			reason: "An instance is not this webhook's to judge.",
			req: admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
				Kind: metav1.GroupVersionKind{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.PostgresqlInstanceKind}}},
			want: "this webhook judges PostgresqlDatabases, PostgresqlUsers and PostgresqlBackups, not PostgresqlInstance.cloudsql.travelaudience.com",
		},
		"Garbage": {
			reason: "An object that is not JSON is an error, not a panic.",
			req: admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
				Kind:   metav1.GroupVersionKind{Group: nsv1alpha1.Group, Version: nsv1alpha1.Version, Kind: nsv1alpha1.PostgresqlUserKind},
				Object: runtime.RawExtension{Raw: []byte("{not json")}}},
			want: "cannot decode the PostgresqlUser",
		},
		"EmptyUpdate": {
			reason: "An update without objects is an error, not a panic.",
			req: admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Update,
				Kind: metav1.GroupVersionKind{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.PostgresqlDatabaseKind}}},
			want: "cannot decode the PostgresqlDatabase",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := v.Handle(context.Background(), tc.req)
			got := ""
			if !r.Allowed && r.Result != nil && r.Result.Code == http.StatusBadRequest && strings.Contains(r.Result.Message, tc.want) {
				got = tc.want
			} else if r.Result != nil {
				got = r.Result.Message
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nHandle(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCheckClusterInstance(t *testing.T) {
	t.Parallel()
	type want struct {
		notAdmitted bool
		err         bool
		msg         string
	}
	db := nsDatabase(nsA, "db")
	cases := map[string]struct {
		reason     string
		namespaces client.Reader
		obj        client.Object
		pi         *v1alpha1.PostgresqlInstance
		want       want
	}{
		"Admitted": {
			reason: "An instance whose allow-list names the namespace admits it.",
			obj:    db, pi: clusterInstance("open", &v1alpha1.Injection{AllowedNamespaces: []string{nsA}}),
		},
		"AdmittedByTenancy": {
			reason: "spec.tenancy admits a namespace for users and databases, without spec.injection.",
			obj:    db, pi: tenantInstance("tenanted", &v1alpha1.Tenancy{AllowedNamespaces: []string{nsA}}),
		},
		"AdmittedByTenancySelector": {
			reason: "spec.tenancy's selector admits the namespaces it matches.",
			obj:    db, pi: tenantInstance("tenanted", &v1alpha1.Tenancy{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}),
		},
		"NotAdmittedDatabase": {
			reason: "An instance whose allow-list leaves the namespace out does not admit it; the error names the object, the field and the instance.",
			obj:    db, pi: clusterInstance("closed", &v1alpha1.Injection{AllowedNamespaces: []string{nsB}}),
			want: want{notAdmitted: true, err: true, msg: "PostgresqlDatabase team-a/db: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance closed, which does not admit namespace team-a: " +
				"it admits only spec.injection.allowedNamespaces [team-b]; ask the instance's owner to add team-a to spec.tenancy.allowedNamespaces (its users and databases, without the postgres password) (the platform team decides); " +
				"or use a PostgresqlInstance of namespace team-a, with spec.forProvider.instance, instead"},
		},
		"NotAdmittedUser": {
			reason: "A user is named as a user.",
			obj:    nsUser(nsA, "app"), pi: clusterInstance("closed", &v1alpha1.Injection{}),
			want: want{notAdmitted: true, err: true, msg: "PostgresqlUser team-a/app: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance closed, which does not admit namespace team-a: " +
				"it admits no namespace; ask the instance's owner to add team-a to spec.tenancy.allowedNamespaces (its users and databases, without the postgres password) (the platform team decides); " +
				"or use a PostgresqlInstance of namespace team-a, with spec.forProvider.instance, instead"},
		},
		"NamespaceUnreadable": {
			reason:     "A namespace that cannot be read for a namespaceSelector is an error, not a denial.",
			namespaces: &test.MockClient{MockGet: test.NewMockGetFn(errBoom)},
			obj:        db, pi: clusterInstance("gold", &v1alpha1.Injection{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}),
			want: want{err: true, msg: "cannot decide whether PostgresqlInstance gold admits namespace team-a: cannot read namespace team-a to match it against spec.injection.namespaceSelector of PostgresqlInstance gold: boom"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := tc.namespaces
			if r == nil {
				r = selectable(fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(world()...)).Build()
			}
			err := postgresqlobject.CheckClusterInstance(context.Background(), policy, r, tc.obj, "spec.forProvider.clusterInstance", tc.pi)
			got := want{notAdmitted: postgresqlobject.IsNotAdmitted(err), err: err != nil}
			if err != nil {
				got.msg = err.Error()
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("\n%s\nCheckClusterInstance(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
