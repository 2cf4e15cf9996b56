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
	"context"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// Resources of the two PostgresqlUser kinds, as kubectl takes them.
const (
	clusterUserResource    = "postgresqlusers." + v1alpha1.Group
	namespacedUserResource = "postgresqlusers." + nsv1alpha1.Group
)

// user is what the injector reads of a PostgresqlUser of either kind.
type user interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
	Observation() *v1alpha1.PostgresqlUserObservation
	ConnectionSecret() *xpv2.SecretReference
	Settings() *v1alpha1.PostgresqlUserSettings
	InstanceKey() types.NamespacedName
}

// userNames name the PostgresqlUser kinds.
var userNames = kindNames{
	kind: v1alpha1.PostgresqlUserKind, clusterResource: clusterUserResource, namespacedResource: namespacedUserResource,
	clusterLabel: v1alpha1.LabelUser, namespacedLabel: nsv1alpha1.LabelUser,
}

// A userTarget is the PostgresqlUser that a pod's annotation resolved to.
type userTarget struct {
	scoped
	u user
	// cluster is u when it is cluster-scoped: its
	// spec.forProvider.injection, and its instance's spec.injection, decide
	// which namespaces may use it. A namespaced user serves its own namespace
	// only.
	cluster *v1alpha1.PostgresqlUser
}

func clusterUser(u *v1alpha1.PostgresqlUser) userTarget {
	return userTarget{scoped: scoped{obj: u, clusterScoped: true, names: userNames}, u: u, cluster: u}
}

func namespacedUser(u *nsv1alpha1.PostgresqlUser) userTarget {
	return userTarget{scoped: scoped{obj: u, names: userNames}, u: u}
}

// login is the user's name in PostgreSQL: as observed, else as the
// controller names it (from the IAM principal, spec.forProvider.name or
// metadata.name).
func (ut userTarget) login() string {
	if n := ut.u.Observation().Name; n != "" {
		return n
	}
	return cloudsql.UserName(ut.u.Settings(), ut.name())
}

// iam says whether the user logs in with IAM database authentication.
func (ut userTarget) iam() bool {
	return ut.loginType() != v1alpha1.UserTypeBuiltIn
}

// loginType is the user's type, BUILT_IN unless it says otherwise.
func (ut userTarget) loginType() string {
	if t := ut.u.Settings().Type; t != "" {
		return t
	}
	return v1alpha1.UserTypeBuiltIn
}

// instanceField is the field of the user that names its instance.
func (ut userTarget) instanceField() string {
	if ut.cluster == nil && ut.u.InstanceKey().Namespace == "" {
		return "spec.forProvider.clusterInstance"
	}
	return "spec.forProvider.instance"
}

// databases are the databases the user owns, as its status and its
// connection secret (key databases) list them, sorted. Both come from the
// controller; either may be a poll behind the other.
func (ut userTarget) databases(cs *corev1.Secret) []string {
	dbs := slices.Clone(ut.u.Observation().Databases)
	for _, d := range strings.Split(string(cs.Data[cloudsql.ConnectionKeyDatabases]), ",") {
		if d = strings.TrimSpace(d); d != "" {
			dbs = append(dbs, d)
		}
	}
	slices.Sort(dbs)
	return slices.Compact(dbs)
}

// UserCopyName is the name of the copy of a cluster-scoped PostgresqlUser's
// password in application namespaces: cloudsql-user-pgpass-<user>, shortened
// with a hash when the user's name is too long for that. No copy of an
// instance has that prefix, so a user and an instance of one name never claim
// the same secret.
func UserCopyName(user string) string {
	return copyName("cloudsql-user-"+CopyPgpass+"-", user)
}

// userPgpassCopy is the copy of the password file of ut in ns.
func userPgpassCopy(ut userTarget, ns string, pgpass []byte) *corev1.Secret {
	data := map[string][]byte{cloudsql.ConnectionKeyPgpass: pgpass}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   ns,
			Name:        UserCopyName(ut.name()),
			Labels:      map[string]string{ut.label(): ut.name(), LabelCopyKind: CopyPgpass},
			Annotations: map[string]string{AnnotationDataHash: dataHash(data)},
			// The garbage collector removes the copies with the user even
			// when the provider does not run.
			OwnerReferences: []metav1.OwnerReference{ut.owner()},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
}

// resolveUser looks the user named by l up for a pod of namespace ns, as
// resolveScoped does.
func resolveUser(ctx context.Context, r, live client.Reader, ns string, l lookup) (resolution[userTarget], error) {
	return resolveScoped(ctx, r, live, ns, l, &nsv1alpha1.PostgresqlUser{}, namespacedUser, &v1alpha1.PostgresqlUser{}, clusterUser)
}

// instanceOf reads the PostgresqlInstance that ut belongs to through r. found
// is false when it does not exist; err is a failed read, or an
// IsNoMatchError when its kind is not served.
func instanceOf(ctx context.Context, r client.Reader, ut userTarget) (t target, found bool, err error) {
	key := ut.u.InstanceKey()
	if key.Namespace == "" {
		pi := &v1alpha1.PostgresqlInstance{}
		err = r.Get(ctx, key, pi)
		t = clusterTarget(pi)
	} else {
		pi := &nsv1alpha1.PostgresqlInstance{}
		err = r.Get(ctx, key, pi)
		t = namespacedTarget(pi)
	}
	if kerrors.IsNotFound(err) {
		return t, false, nil
	}
	return t, err == nil, err
}

// userAllows reports whether a cluster-scoped user's own allow-list admits
// namespace ns: its spec.forProvider.injection.allowedNamespaces when it has
// one, else every namespace (its instance's spec.injection decides then).
func userAllows(u *v1alpha1.PostgresqlUser, ns string) bool {
	inj := u.Spec.ForProvider.Injection
	return inj == nil || len(inj.AllowedNamespaces) == 0 || slices.Contains(inj.AllowedNamespaces, ns)
}
