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
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// UserRefresherName is the name of the UserRefresher's controller.
const UserRefresherName = "podinject-user-replicas"

const (
	errGetUserR     = "cannot read PostgresqlUser %s"
	errListUserCopy = "cannot list the secrets copied for PostgresqlUser %s"
	errGetUserInstR = "cannot read PostgresqlInstance %s, the instance of PostgresqlUser %s"
	errPolicyUserR  = "cannot decide whether namespace %s may still use PostgresqlInstance %s, the instance of PostgresqlUser %s"
	errUserSourceR  = "cannot read secret %s/%s, the connection secret of PostgresqlUser %s"
	errIndexUsers   = "cannot index PostgresqlUsers by the secrets and instances they name"
)

// Cache indexes of the UserRefresher.
const (
	indexUserSecret   = "podinject.userConnectionSecret" // cluster-scoped PostgresqlUser: namespace/name
	indexUserInstance = "podinject.userInstance"         // cluster-scoped PostgresqlUser: its instance's name
)

// A UserRefresher keeps the copies of cluster-scoped PostgresqlUsers'
// passwords, which the injector made in application namespaces, in line with
// their sources. For each user it
//
//   - updates the copies when the pgpass of the user's connection secret
//     changes (a new password);
//   - deletes the copies in namespaces that the user's
//     spec.forProvider.injection.allowedNamespaces, or its instance's
//     spec.injection (or the default), no longer allows;
//   - deletes every copy of a user that is gone, whose instance is gone, or
//     that is no longer a BUILT_IN login.
//
// Only copies that the injector made (name, label and an owner reference to
// the user's UID) are written or deleted, as for instances. The garbage
// collector would delete the copies of a deleted user too (they are owned by
// it), but only once it runs and notices; the refresher removes them as soon
// as the user is gone, and takes them away from namespaces that may no longer
// use it, which the garbage collector never does.
//
// A namespaced PostgresqlUser's password is never copied: its connection
// secret is in its namespace, the only one whose pods it serves, and is
// mounted as it is.
type UserRefresher struct {
	cached client.Reader
	live   client.Reader
	copies client.Reader // the cache of secrets' metadata
	kube   client.Writer
	policy tenancy.Policy
	log    logging.Logger
}

// SetupUserRefresher adds a UserRefresher to mgr. It watches cluster-scoped
// PostgresqlUsers and PostgresqlInstances, namespaces (whose labels may stop
// matching an instance's namespaceSelector) and the metadata of secrets.
func SetupUserRefresher(mgr ctrl.Manager, policy tenancy.Policy, o ...Option) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.PostgresqlUser{}, indexUserSecret, func(o client.Object) []string {
		if ref := o.(*v1alpha1.PostgresqlUser).GetWriteConnectionSecretToReference(); ref != nil {
			return []string{ref.Namespace + "/" + ref.Name}
		}
		return nil
	}); err != nil {
		return errors.Wrap(err, errIndexUsers)
	}
	if err := idx.IndexField(ctx, &v1alpha1.PostgresqlUser{}, indexUserInstance, func(o client.Object) []string {
		if n := o.(*v1alpha1.PostgresqlUser).InstanceKey().Name; n != "" {
			return []string{n}
		}
		return nil
	}); err != nil {
		return errors.Wrap(err, errIndexUsers)
	}
	if err := indexCopies(mgr); err != nil {
		return err
	}
	r := &UserRefresher{cached: mgr.GetClient(), live: mgr.GetAPIReader(), copies: mgr.GetCache(), kube: mgr.GetClient(), policy: policy, log: newOptions(o).log}
	return ctrl.NewControllerManagedBy(mgr).
		Named(UserRefresherName).
		For(&v1alpha1.PostgresqlUser{}).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.usersOf)).
		// An instance whose spec.injection shrinks takes its users' copies
		// away from the namespaces it no longer allows; one that goes takes
		// them all.
		Watches(&v1alpha1.PostgresqlInstance{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.usersOfInstance(ctx, o.GetName())
		})).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.usersSelecting)).
		Complete(r)
}

// usersOfInstance maps an instance to its cluster-scoped users.
func (r *UserRefresher) usersOfInstance(ctx context.Context, instance string) []reconcile.Request {
	us := &v1alpha1.PostgresqlUserList{}
	if err := r.cached.List(ctx, us, client.MatchingFields{indexUserInstance: instance}); err != nil {
		r.log.Info("Cannot find the users of a changed instance", "postgresqlinstance", instance, "error", err)
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(us.Items))
	for _, u := range us.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: u.Name}})
	}
	return reqs
}

// usersSelecting maps a namespace to the users of the instances that select
// namespaces by label.
func (r *UserRefresher) usersSelecting(ctx context.Context, _ client.Object) []reconcile.Request {
	pis := &v1alpha1.PostgresqlInstanceList{}
	if err := r.cached.List(ctx, pis); err != nil {
		r.log.Info("Cannot list the instances to match a changed namespace", "error", err)
		return nil
	}
	var reqs []reconcile.Request
	for _, pi := range pis.Items {
		if pi.Spec.Injection != nil && pi.Spec.Injection.NamespaceSelector != nil {
			reqs = append(reqs, r.usersOfInstance(ctx, pi.Name)...)
		}
	}
	return reqs
}

// usersOf maps a secret to the users whose copies it may concern: the user a
// copy names, and the users whose connection secret it is.
func (r *UserRefresher) usersOf(ctx context.Context, s client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	if n := s.GetLabels()[v1alpha1.LabelUser]; n != "" {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: n}})
	}
	key := s.GetNamespace() + "/" + s.GetName()
	us := &v1alpha1.PostgresqlUserList{}
	if err := r.cached.List(ctx, us, client.MatchingFields{indexUserSecret: key}); err != nil {
		r.log.Info("Cannot find the users whose connection secret changed", "secret", key, "error", err)
	}
	for _, u := range us.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: u.Name}})
	}
	return reqs
}

// Reconcile brings the copies of one cluster-scoped user in line.
func (r *UserRefresher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := r.log.WithValues("postgresqluser", req.Name)
	u := &v1alpha1.PostgresqlUser{}
	err := r.cached.Get(ctx, req.NamespacedName, u)
	if kerrors.IsNotFound(err) {
		// Confirm before deleting anything: the cache may lag behind.
		err = r.live.Get(ctx, req.NamespacedName, u)
	}
	if err != nil && !kerrors.IsNotFound(err) {
		return reconcile.Result{}, errors.Wrapf(err, errGetUserR, req.Name)
	}
	gone := kerrors.IsNotFound(err)

	copies, err := listCopies(ctx, r.copies, "", userCopyKey(req.Name))
	if err != nil || len(copies) == 0 {
		return reconcile.Result{}, errors.Wrapf(err, errListUserCopy, req.Name)
	}
	// Without the user its UID is unknown: its kind and name will do, as for
	// instances (see Refresher.Reconcile).
	owner := metav1.OwnerReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.PostgresqlUserKind, Name: req.Name, UID: u.UID}
	src := &userSources{r: r, u: u}
	for i := range copies {
		s := &copies[i]
		if !ownedBy(s, owner, gone) {
			log.Debug("Leaving alone a secret named and labelled like a copy, which the injector did not make for this user",
				"secret", s.Namespace+"/"+s.Name)
			continue
		}
		keep, want, err := r.desired(ctx, src, gone, s.Namespace)
		if err != nil {
			return reconcile.Result{}, err
		}
		if err := settle(ctx, r.live, r.kube, log, s, want, keep); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// desired says whether the copy of the user's password in namespace ns should
// exist, and what it should hold (nil: leave its contents, because the source
// is not available yet).
func (r *UserRefresher) desired(ctx context.Context, src *userSources, gone bool, ns string) (bool, *corev1.Secret, error) {
	if gone {
		return false, nil, nil
	}
	ut := clusterUser(src.u)
	if ut.loginType() != v1alpha1.UserTypeBuiltIn || !userAllows(src.u, ns) {
		return false, nil, nil
	}
	pi, err := src.instance(ctx)
	if err != nil || pi == nil {
		// An error keeps the copy until the instance can be read; no
		// instance (any more) takes it away.
		return err != nil, nil, err
	}
	ok, err := r.policy.AdmitsObjects(ctx, pi, ns, tenancy.NamespaceGetter(r.cached))
	if err != nil {
		return true, nil, errors.Wrapf(err, errPolicyUserR, ns, pi.Name, src.u.Name)
	}
	if !ok {
		return false, nil, nil
	}
	pgpass, err := src.pgpass(ctx)
	if err != nil || pgpass == nil {
		return true, nil, err
	}
	return true, userPgpassReplica(ut, ns, pgpass), nil
}

// userSources reads the sources of a user's copies once per reconcile.
type userSources struct {
	r *UserRefresher
	u *v1alpha1.PostgresqlUser

	instanceRead bool
	instanceVal  *v1alpha1.PostgresqlInstance

	pgpassRead bool
	pgpassVal  []byte
}

// instance is the user's PostgresqlInstance, nil when it names none or it is
// gone (confirmed through the API server).
func (s *userSources) instance(ctx context.Context) (*v1alpha1.PostgresqlInstance, error) {
	if s.instanceRead {
		return s.instanceVal, nil
	}
	key := s.u.InstanceKey()
	if key.Name != "" {
		pi := &v1alpha1.PostgresqlInstance{}
		err := s.r.cached.Get(ctx, key, pi)
		if kerrors.IsNotFound(err) {
			err = s.r.live.Get(ctx, key, pi)
		}
		switch {
		case err == nil:
			s.instanceVal = pi
		case !kerrors.IsNotFound(err):
			return nil, errors.Wrapf(err, errGetUserInstR, key.Name, s.u.Name)
		}
	}
	s.instanceRead = true
	return s.instanceVal, nil
}

// pgpass is the user's connection secret's pgpass, or nil when there is none
// (yet).
func (s *userSources) pgpass(ctx context.Context) ([]byte, error) {
	if s.pgpassRead {
		return s.pgpassVal, nil
	}
	if ref := s.u.GetWriteConnectionSecretToReference(); ref != nil {
		sec := &corev1.Secret{}
		err := s.r.live.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, sec)
		if err != nil && !kerrors.IsNotFound(err) {
			return nil, errors.Wrapf(err, errUserSourceR, ref.Namespace, ref.Name, s.u.Name)
		}
		if len(sec.Data[cloudsql.ConnectionKeyPgpass]) > 0 {
			s.pgpassVal = sec.Data[cloudsql.ConnectionKeyPgpass]
		}
	}
	s.pgpassRead = true
	return s.pgpassVal, nil
}
