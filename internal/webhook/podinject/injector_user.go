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
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// Denials of pods that name a PostgresqlUser. Each names the pod and the user,
// and says what to do. A user is named as userTarget.String does.
const (
	errBothAnnotations         = "pod %s: annotations %s and %s are both set, but a pod connects with one login: keep only %s to connect as that PostgresqlUser, which reaches only its own databases, or only %s to connect as postgres, the instance's administrator"
	errDatabaseWithoutUser     = "pod %s: annotation %s picks a database of the PostgresqlUser that annotation %s names, but the pod names a PostgresqlInstance with %s instead: name a PostgresqlUser, or remove %s"
	errEmptyUserAnnotation     = "pod %s: annotation %s is empty: set it to the metadata.name of a PostgresqlUser, or remove it"
	errBadUserAnnotation       = "pod %s: annotation %s is %q, which names no PostgresqlUser: set it to the metadata.name of a PostgresqlUser, to <namespace>/<name> of a namespaced one in the pod's own namespace, or to /<name> of a cluster-scoped one"
	errNoUser                  = "pod %s: annotation %s names PostgresqlUser %q, which exists neither in the pod's namespace %s (%s) nor cluster-scoped (%s): a namespaced PostgresqlUser serves only pods of its own namespace; create one here, or set the annotation to the metadata.name of an existing PostgresqlUser (not its spec.forProvider.name)"
	errNoNamespacedUser        = "pod %s: annotation %s names PostgresqlUser %q of namespace %s (%s), which does not exist: create it, or set the annotation to the metadata.name of an existing PostgresqlUser (not its spec.forProvider.name)"
	errNoClusterUser           = "pod %s: annotation %s names the cluster-scoped PostgresqlUser %q (%s), which does not exist: create it, or set the annotation to the metadata.name of an existing PostgresqlUser (not its spec.forProvider.name)"
	errUserOtherNamespace      = "pod %s: annotation %s names %q, a PostgresqlUser of namespace %s, but a namespaced PostgresqlUser serves only pods of its own namespace and this pod is in %s: use a PostgresqlUser of namespace %s, or a cluster-scoped one (as /<name>) that allows %s"
	errGetUser                 = "pod %s: cannot read PostgresqlUser %q named by annotation %s"
	errUserKindNotServed       = "pod %s: annotation %s names PostgresqlUser %q, but this cluster serves no PostgresqlUsers: activate the ManagedResourceDefinition postgresqlusers.cloudsql.m.travelaudience.com or postgresqlusers.cloudsql.travelaudience.com (with a ManagedResourceActivationPolicy), or remove the annotation"
	errNamespacedUserNotServed = "pod %s: annotation %s names %q, a namespaced PostgresqlUser, but this cluster does not serve namespaced PostgresqlUsers: activate the ManagedResourceDefinition postgresqlusers.cloudsql.m.travelaudience.com (with a ManagedResourceActivationPolicy), or name a cluster-scoped PostgresqlUser as /<name>"
	errClusterUserNotServed    = "pod %s: annotation %s is %q, which names a cluster-scoped PostgresqlUser, but this cluster does not serve cluster-scoped PostgresqlUsers: activate the ManagedResourceDefinition postgresqlusers.cloudsql.travelaudience.com (with a ManagedResourceActivationPolicy), or name a PostgresqlUser of the pod's namespace as <namespace>/<name>"
	errUserNotAllowed          = "pod %s: %s may not be used from namespace %s: its spec.forProvider.injection.allowedNamespaces is %s; ask the user's owner to add %s to it"
	errIAMOff                  = "pod %s: %s logs in with IAM database authentication (spec.forProvider.type %s), which %s does not turn on, so Cloud SQL would refuse the pod's every connection: add %s to the instance's spec.forProvider.flags"
	errUserNoInstance          = "pod %s: %s belongs to no PostgresqlInstance yet (%s is empty): wait until its instance reference is resolved, then create the pod again"
	errUserInstanceMissing     = "pod %s: %s belongs to %s (%s), which does not exist: create that instance, or use another PostgresqlUser"
	errUserInstanceServed      = "pod %s: %s belongs to %s (%s), but this cluster does not serve that kind: activate its ManagedResourceDefinition (with a ManagedResourceActivationPolicy)"
	errGetUserInstance         = "pod %s: cannot read %s, the instance of %s"
	errUserViaInstance         = "%s (%s is the instance of %s, %s)"
	errUserNoSecretRef         = "pod %s: %s has no spec.writeConnectionSecretToRef, so there is no password to give the pod: set it on the user"
	errUserNoPgpass            = "pod %s: connection secret %s/%s of %s holds no %s yet: wait until the provider has created the login and published its connection details, then create the pod again"
	errNotOwned                = "pod %s: annotation %s is %q, which is not a database that %s owns: it may name %s; set it to one of them, or remove it to use the user's default database"
	errUserLongName            = "pod %s: %s cannot be injected: the copies of its password in namespaces are labelled %s=<its name>, and a label value holds at most 63 characters; use a PostgresqlUser with a shorter metadata.name (spec.forProvider.name may stay as it is)"
)

// usableUser returns the user that the annotation's value names for a pod of
// namespace ns, and its instance, if the pod may use them and both are ready,
// else the denial. As usableInstance, it decides from the cache and confirms
// through the API server every denial, and every allow that copies a password
// into ns (a cluster-scoped user, or instance, whose allow-list may have just
// shrunk).
func (i *Injector) usableUser(ctx context.Context, ref, ns, value string) (userTarget, target, *admission.Response) {
	fail := func(r admission.Response) (userTarget, target, *admission.Response) {
		return userTarget{}, target{}, &r
	}
	l, ok := parseAnnotation(value)
	if !ok {
		return fail(admission.Denied(fmt.Sprintf(errBadUserAnnotation, ref, v1alpha1.AnnotationUserName, value)))
	}
	if l.namespace != "" && l.namespace != ns {
		return fail(admission.Denied(fmt.Sprintf(errUserOtherNamespace, ref, v1alpha1.AnnotationUserName, value, l.namespace, ns, ns, ns)))
	}
	var deny admission.Response
	for _, r := range []client.Reader{i.cached, i.live} {
		ut, t, confirm, resp := i.admitUser(ctx, r, ref, ns, value, l)
		if resp != nil {
			deny = *resp
			continue
		}
		if confirm && r != i.live {
			continue
		}
		return ut, t, nil
	}
	return fail(deny)
}

// admitUser is one pass of usableUser, reading through r.
func (i *Injector) admitUser(ctx context.Context, r client.Reader, ref, ns, value string, l lookup) (userTarget, target, bool, *admission.Response) {
	fail := func(resp admission.Response) (userTarget, target, bool, *admission.Response) {
		return userTarget{}, target{}, false, &resp
	}
	res, err := resolveUser(ctx, r, i.live, ns, l)
	if err != nil {
		return fail(admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errGetUser, ref, value, v1alpha1.AnnotationUserName)))
	}
	if !res.found {
		return fail(admission.Denied(res.denial(userKind, ref, ns, value, l)))
	}
	ut := res.value
	if ut.cluster != nil && !userAllows(ut.cluster, ns) {
		return fail(admission.Denied(fmt.Sprintf(errUserNotAllowed, ref, ut, ns, tenancy.QuoteList(ut.cluster.Spec.ForProvider.Injection.AllowedNamespaces), ns)))
	}
	if why := notReadyCondition(ut.u); why != "" {
		return fail(admission.Denied(fmt.Sprintf(errNotReady, ref, ut, why, ut.kubectlGet())))
	}
	key := ut.u.InstanceKey()
	if key.Name == "" {
		return fail(admission.Denied(fmt.Sprintf(errUserNoInstance, ref, ut, ut.instanceField())))
	}
	t, found, err := instanceOf(ctx, r, ut)
	switch {
	case apimeta.IsNoMatchError(err):
		return fail(admission.Denied(fmt.Sprintf(errUserInstanceServed, ref, ut, instanceString(key), ut.instanceField())))
	case err != nil:
		return fail(admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errGetUserInstance, ref, instanceString(key), ut)))
	case !found:
		return fail(admission.Denied(fmt.Sprintf(errUserInstanceMissing, ref, ut, instanceString(key), ut.instanceField())))
	}
	confirm, resp := i.admitInstance(ctx, r, ref, ns, t, true)
	if resp != nil {
		// The pod named a user: say how the instance came into it.
		resp.Result.Message = fmt.Sprintf(errUserViaInstance, resp.Result.Message, t, ut, ut.instanceField())
		return fail(*resp)
	}
	return ut, t, confirm || ut.cluster != nil, nil
}

// instanceString names the instance a user's key names, as target.String
// would once it is read.
func instanceString(key types.NamespacedName) string {
	if key.Namespace == "" {
		return fmt.Sprintf("PostgresqlInstance %q", key.Name)
	}
	return fmt.Sprintf("PostgresqlInstance %q of namespace %s (%s)", key.Name, key.Namespace, nsv1alpha1.Group)
}

// prepareUser reads what the pod needs of user ut and its instance t: the
// login, the database, the user's password (never the instance's), and the
// proxy's key. A namespaced user's connection secret is in the pod's
// namespace, and is mounted as it is; a cluster-scoped user's password is
// always copied there, so that the copy reconciler can take it away from a
// namespace that may no longer use the user. A user of an IAM type has no
// password: the proxy logs in as the identity it authenticates with.
func (i *Injector) prepareUser(ctx context.Context, ref, ns string, ut userTarget, t target, annotations map[string]string) (prepared, *admission.Response) {
	fail := func(r admission.Response) (prepared, *admission.Response) { return prepared{}, &r }

	sr := ut.u.ConnectionSecret()
	if sr == nil && !ut.iam() {
		return fail(admission.Denied(fmt.Sprintf(errUserNoSecretRef, ref, ut)))
	}
	cs := &corev1.Secret{}
	if sr != nil {
		// An IAM login's secret, when it has one, lists only its databases.
		err := i.live.Get(ctx, types.NamespacedName{Namespace: sr.Namespace, Name: sr.Name}, cs)
		if err != nil && !kerrors.IsNotFound(err) {
			return fail(admission.Errored(http.StatusInternalServerError, errors.Wrapf(err, errGetSecret, ref, sr.Namespace, sr.Name, ut)))
		}
	}
	pgpass := cs.Data[cloudsql.ConnectionKeyPgpass]
	if !ut.iam() {
		if len(pgpass) == 0 {
			return fail(admission.Denied(fmt.Sprintf(errUserNoPgpass, ref, sr.Namespace, sr.Name, ut, cloudsql.ConnectionKeyPgpass)))
		}
		if cs.GetAnnotations()[v1alpha1.AnnotationPasswordUnconfirmed] == "true" {
			return fail(admission.Denied(fmt.Sprintf(errUnconfirmed, ref, ut)))
		}
	}
	dbs := ut.databases(cs)
	db, named := annotations[v1alpha1.AnnotationDatabaseName]
	switch {
	case named && !slices.Contains(dbs, db):
		may := "no database yet (status.atProvider.databases and key " + cloudsql.ConnectionKeyDatabases + " of its connection secret are empty)"
		if len(dbs) > 0 {
			may = "only " + strings.Join(dbs, ", ")
		}
		return fail(admission.Denied(fmt.Sprintf(errNotOwned, ref, v1alpha1.AnnotationDatabaseName, db, ut, may)))
	case !named:
		db = string(cs.Data[cloudsql.ConnectionKeyDatabase])
		if db == "" && len(dbs) > 0 {
			db = dbs[0]
		}
	}

	if ut.iam() && t.iamLoginsRefused() {
		return fail(admission.Denied(fmt.Sprintf(errIAMOff, ref, ut, ut.loginType(), t, IAMAuthenticationFlag)))
	}
	x := prepared{Inputs: i.inputs(t)}
	x.User, x.Database, x.IAMAuthN = ut.login(), db, ut.iam()
	switch {
	case x.IAMAuthN:
	case ut.cluster != nil:
		if len(validation.IsValidLabelValue(ut.name())) > 0 {
			return fail(admission.Denied(fmt.Sprintf(errUserLongName, ref, ut, ut.label())))
		}
		x.PgpassSecret = UserCopyName(ut.name())
		x.copies = append(x.copies, userPgpassCopy(ut, ns, pgpass))
	default:
		x.PgpassSecret = sr.Name
	}
	if resp := i.prepareProxy(ctx, ref, ns, t, &x, annotations); resp != nil {
		return fail(*resp)
	}
	return x, nil
}
