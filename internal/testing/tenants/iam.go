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

package tenants

import (
	"context"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// IAM is the application that logs in with IAM database authentication on
// the shared instance: its namespaced PostgresqlUser (CLOUD_IAM_SERVICE_ACCOUNT)
// names service account Account, whose key its pods' proxy authenticates
// with (what Workload Identity gives a pod on GKE), and owns its
// PostgresqlDatabase; no password exists. Namespace also holds the key of
// another service account, Intruder.
type IAM struct {
	// Namespace is where its user, database, keys and pods are.
	Namespace string
	// User and Database are the metadata.names of its PostgresqlUser and
	// PostgresqlDatabase; Database is also the database's name.
	User, Database string
	// Account is the user's service account; Intruder is another one of
	// the same project.
	Account, Intruder string
	// KeySecret and IntruderSecret hold, under podinject.ProxyCredentialsKey,
	// the keys of Account and Intruder.
	KeySecret, IntruderSecret string
}

// IAMApp is the IAM application of project.
func IAMApp(project string) IAM {
	account := func(name string) string { return name + "@" + project + ".iam" + v1alpha1.ServiceAccountEmailSuffix }
	return IAM{
		Namespace: "analytics", User: "analytics-iam", Database: "analytics",
		Account: account("analytics"), Intruder: account("intruder"),
		KeySecret: "analytics-sa", IntruderSecret: "intruder-sa",
	}
}

// InstanceFlag is the database flag the shared instance needs for IAM
// logins (spec.forProvider.flags).
const InstanceFlag = podinject.IAMAuthenticationFlag

// Login is the user's login, as Cloud SQL names a service account's: its
// email without .gserviceaccount.com.
func (a IAM) Login() string { return strings.TrimSuffix(a.Account, v1alpha1.ServiceAccountEmailSuffix) }

// Objects are the application's namespace, the two keys (whose token_uri is
// tokenURL, the emulator's token endpoint), its PostgresqlUser and its
// PostgresqlDatabase on the cluster-scoped PostgresqlInstance instance, in
// the order they are created. Deleting the database is allowed.
func (a IAM) Objects(project, instance, tokenURL string) ([]client.Object, error) {
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.Namespace}}}
	for _, k := range []struct{ secret, account string }{{a.KeySecret, a.Account}, {a.IntruderSecret, a.Intruder}} {
		key, err := emulator.ServiceAccountKeyFor(project, k.account, tokenURL)
		if err != nil {
			return nil, err
		}
		objs = append(objs, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: k.secret},
			Data:       map[string][]byte{podinject.ProxyCredentialsKey: key},
		})
	}
	u := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.User}}
	u.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: instance}
	u.Spec.ForProvider.Type = v1alpha1.UserTypeCloudIAMServiceAccount
	u.Spec.ForProvider.IAMPrincipal = a.Account
	d := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.Database,
		Annotations: map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}}}
	d.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: instance}
	d.Spec.ForProvider.OwnerRef = &xpv2.NamespacedReference{Name: a.User}
	return append(objs, u, d), nil
}

// PodAnnotations make a pod connect as the user, its proxy authenticating
// with the key in secret key.
func (a IAM) PodAnnotations(key string) map[string]string {
	return map[string]string{v1alpha1.AnnotationUserName: a.User, v1alpha1.AnnotationProxyCredentialsSecret: key}
}

// Use is what psql runs, with PsqlFlags and the injected environment, to use
// the application's database: it creates a table, inserts a row and prints
// who and where it is and how many rows the table has.
func (a IAM) Use() []string {
	return []string{"--command", "CREATE TABLE IF NOT EXISTS events (id serial PRIMARY KEY); INSERT INTO events DEFAULT VALUES; " +
		"SELECT current_user || ' ' || current_database() || ' ' || count(*) FROM events"}
}

// Used is the start of what Use prints: the login and its database.
func (a IAM) Used() string { return a.Login() + " " + a.Database + " " }

// Refused is what psql prints when the proxy logs in with the key of
// another account than the user's.
func (a IAM) Refused() string {
	return `Cloud SQL IAM service account authentication failed for user "` + a.Login() + `"`
}

// Script is Use as a shell script for a pod's container; with refused, it
// expects psql to fail instead, prints what it said and exits 0 only then
// (the caller reads why it failed, Refused, from the output).
func (a IAM) Script(refused bool) string {
	psql := "psql " + strings.Join(quoteAll(PsqlFlags), " ") + " " + strings.Join(quoteAll(a.Use()), " ")
	if !refused {
		return "exec " + psql + "\n"
	}
	return "if " + psql + " 2>&1; then exit 1; fi\n"
}

// CheckNoPassword returns an error unless the secrets of the application's
// namespace are exactly its two keys, and none holds a password or a
// password file; else it returns their names.
func (a IAM) CheckNoPassword(ctx context.Context, c client.Reader) ([]string, error) {
	l := &corev1.SecretList{}
	if err := c.List(ctx, l, client.InNamespace(a.Namespace)); err != nil {
		return nil, errors.Wrapf(err, errListSecrets, a.Namespace)
	}
	var names []string
	for _, s := range l.Items {
		names = append(names, s.Name)
		for _, k := range []string{cloudsql.ConnectionKeyPassword, cloudsql.ConnectionKeyPgpass} {
			if len(s.Data[k]) > 0 {
				return names, errors.Errorf("secret %s/%s holds a %s", a.Namespace, s.Name, k)
			}
		}
	}
	slices.Sort(names)
	if want := []string{a.KeySecret, a.IntruderSecret}; !slices.Equal(names, want) {
		return names, errors.Errorf("namespace %s holds secrets %v, not only the keys %v", a.Namespace, names, want)
	}
	return names, nil
}
