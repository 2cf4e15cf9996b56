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

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	errGetUserInstR = "cannot read PostgresqlInstance %s, the instance of PostgresqlUser %s"
	errPolicyUserR  = "cannot decide whether namespace %s may still use PostgresqlInstance %s, the instance of PostgresqlUser %s"
	errUserSourceR  = "cannot read secret %s/%s, the connection secret of PostgresqlUser %s"
)

// Cache indexes of the users' copies.
const (
	indexUserSecret   = "podinject.userConnectionSecret" // cluster-scoped PostgresqlUser: namespace/name
	indexUserInstance = "podinject.userInstance"         // cluster-scoped PostgresqlUser: its instance's name
)

// userCopies keeps the copies of cluster-scoped users' passwords: they follow
// the pgpass of the user's connection secret (a new password), and go from
// namespaces that the user's spec.forProvider.injection.allowedNamespaces, or
// its instance, no longer allows, and everywhere when the user's instance is
// gone or the user is no longer a BUILT_IN login. The garbage collector would
// delete the copies of a deleted user too (they are owned by it), but only
// once it runs and notices, and never takes them from namespaces that may no
// longer use the user.
var userCopies = copySource{
	controller: "podinject-user-replicas",
	apiVersion: v1alpha1.SchemeGroupVersion.String(),
	kind:       v1alpha1.PostgresqlUserKind,
	logKey:     "postgresqluser",
	object:     func() client.Object { return &v1alpha1.PostgresqlUser{} },
	copyKey:    userCopyKey,
	copyKind: func(secret, name string) string {
		if secret == UserCopyName(name) {
			return CopyPgpass
		}
		return ""
	},
	watch:   watchUsers,
	desired: userDesired,
}

// watchUsers watches cluster-scoped PostgresqlInstances, whose spec.injection
// may shrink or which may go, namespaces and the metadata of secrets.
func watchUsers(ctx context.Context, mgr ctrl.Manager, r *CopyReconciler, b *builder.Builder) (*builder.Builder, error) {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.PostgresqlUser{}, indexUserSecret, func(o client.Object) []string {
		if ref := o.(*v1alpha1.PostgresqlUser).GetWriteConnectionSecretToReference(); ref != nil {
			return []string{ref.Namespace + "/" + ref.Name}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := idx.IndexField(ctx, &v1alpha1.PostgresqlUser{}, indexUserInstance, func(o client.Object) []string {
		if n := o.(*v1alpha1.PostgresqlUser).InstanceKey().Name; n != "" {
			return []string{n}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return b.
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.usersOf)).
		Watches(&v1alpha1.PostgresqlInstance{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.usersOfInstance(ctx, o.GetName())
		})).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
			return r.instancesSelecting(ctx, func(pi *v1alpha1.PostgresqlInstance) []reconcile.Request { return r.usersOfInstance(ctx, pi.Name) })
		})), nil
}

// usersOfInstance maps an instance to its cluster-scoped users.
func (r *CopyReconciler) usersOfInstance(ctx context.Context, instance string) []reconcile.Request {
	return r.users(ctx, client.MatchingFields{indexUserInstance: instance}, "Cannot find the users of a changed instance", "postgresqlinstance", instance)
}

// usersOf maps a secret to the users whose copies it may concern: the user a
// copy names, and the users whose connection secret it is.
func (r *CopyReconciler) usersOf(ctx context.Context, s client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	if n := s.GetLabels()[v1alpha1.LabelUser]; n != "" {
		reqs = append(reqs, clusterRequests(n)...)
	}
	key := s.GetNamespace() + "/" + s.GetName()
	return append(reqs, r.users(ctx, client.MatchingFields{indexUserSecret: key}, "Cannot find the users whose connection secret changed", "secret", key)...)
}

// users are the requests of the cluster-scoped users that match; a failed
// list is logged with msg and what.
func (r *CopyReconciler) users(ctx context.Context, match client.MatchingFields, msg string, what ...any) []reconcile.Request {
	us := &v1alpha1.PostgresqlUserList{}
	if err := r.cached.List(ctx, us, match); err != nil {
		r.log.Info(msg, append(what, "error", err)...)
		return nil
	}
	names := make([]string, 0, len(us.Items))
	for _, u := range us.Items {
		names = append(names, u.Name)
	}
	return clusterRequests(names...)
}

// userDesired is what the copies of a cluster-scoped user's password should
// be.
func userDesired(r *CopyReconciler, obj client.Object) desiredFunc {
	u := obj.(*v1alpha1.PostgresqlUser)
	ut := clusterUser(u)
	instance := &lazy[*v1alpha1.PostgresqlInstance]{read: func(ctx context.Context) (*v1alpha1.PostgresqlInstance, error) {
		key := u.InstanceKey()
		if key.Name == "" {
			return nil, nil
		}
		pi := &v1alpha1.PostgresqlInstance{}
		err := r.cached.Get(ctx, key, pi)
		if kerrors.IsNotFound(err) {
			// Confirm before the copies go: the cache may lag behind.
			err = r.live.Get(ctx, key, pi)
		}
		if kerrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, errors.Wrapf(err, errGetUserInstR, key.Name, u.Name)
		}
		return pi, nil
	}}
	pgpass := &lazy[[]byte]{read: func(ctx context.Context) ([]byte, error) {
		ref := u.GetWriteConnectionSecretToReference()
		if ref == nil {
			return nil, nil
		}
		v, err := r.secretKey(ctx, ref.Namespace, ref.Name, cloudsql.ConnectionKeyPgpass)
		return v, errors.Wrapf(err, errUserSourceR, ref.Namespace, ref.Name, u.Name)
	}}
	return func(ctx context.Context, ns, _ string) (bool, *corev1.Secret, error) {
		if ut.loginType() != v1alpha1.UserTypeBuiltIn || !userAllows(u, ns) {
			return false, nil, nil
		}
		pi, err := instance.get(ctx)
		if err != nil || pi == nil {
			// An error keeps the copy until the instance can be read; no
			// instance (any more) takes it away.
			return err != nil, nil, err
		}
		ok, err := r.policy.AdmitsObjects(ctx, pi, ns, tenancy.NamespaceGetter(r.cached))
		if err != nil {
			return true, nil, errors.Wrapf(err, errPolicyUserR, ns, pi.Name, u.Name)
		}
		if !ok {
			return false, nil, nil
		}
		v, err := pgpass.get(ctx)
		if err != nil || v == nil {
			return true, nil, err
		}
		return true, userPgpassCopy(ut, ns, v), nil
	}
}
