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
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// userPassword is the password of login in the tests' connection secrets.
func userPassword(login string) string { return "pw-user-" + login }

// loginSecret is the connection secret of a user whose login is login and
// who owns dbs, as the controller publishes it.
func loginSecret(ns, name, login string, dbs ...string) *corev1.Secret {
	first := ""
	if len(dbs) > 0 {
		first = dbs[0]
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data: map[string][]byte{
			cloudsql.ConnectionKeyUsername:  []byte(login),
			cloudsql.ConnectionKeyPassword:  []byte(userPassword(login)),
			cloudsql.ConnectionKeyPgpass:    []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", login, userPassword(login))),
			cloudsql.ConnectionKeyDatabase:  []byte(first),
			cloudsql.ConnectionKeyDatabases: []byte(strings.Join(dbs, ",")),
		},
	}
}

// onCluster has a namespaced user belong to a cluster-scoped instance.
func onCluster(instance string) func(*nsv1alpha1.PostgresqlUser) {
	return func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.ClusterInstance = instance }
}

// onNamespaced has a namespaced user belong to an instance of its namespace.
func onNamespaced(instance string) func(*nsv1alpha1.PostgresqlUser) {
	return func(u *nsv1alpha1.PostgresqlUser) { u.Spec.ForProvider.Instance = instance }
}

// readyNamespacedUser creates a namespaced PostgresqlUser of ns, logging in
// as its name, on the instance that on names, and makes it look reconciled:
// Ready, owning dbs, with its connection secret in ns.
func readyNamespacedUser(t testing.TB, ns, name string, on func(*nsv1alpha1.PostgresqlUser), dbs ...string) *nsv1alpha1.PostgresqlUser {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	u := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	on(u)
	u.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-login"}
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	u.Status.AtProvider = v1alpha1.PostgresqlUserObservation{Instance: u.InstanceKey().Name, Name: name, Type: v1alpha1.UserTypeBuiltIn, Databases: dbs}
	u.SetConditions(xpv2.Available())
	g.Expect(env.Client.Status().Update(ctx, u)).To(Succeed())
	g.Expect(env.Client.Create(ctx, loginSecret(ns, name+"-login", name, dbs...))).To(Succeed())
	return u
}

// readyClusterUser creates a cluster-scoped PostgresqlUser of the instance,
// logging in as its name, changed by fns, and makes it look reconciled: Ready,
// owning dbs, with its connection secret in the provider's namespace.
func readyClusterUser(t testing.TB, name, instance string, dbs []string, fns ...func(*v1alpha1.PostgresqlUser)) *v1alpha1.PostgresqlUser {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: name}}
	u.Spec.ForProvider.Instance = instance
	u.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: name + "-login"}
	for _, fn := range fns {
		fn(u)
	}
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	u.Status.AtProvider = v1alpha1.PostgresqlUserObservation{Instance: instance, Name: name, Type: v1alpha1.UserTypeBuiltIn, Databases: dbs}
	u.SetConditions(xpv2.Available())
	g.Expect(env.Client.Status().Update(ctx, u)).To(Succeed())
	if u.Spec.WriteConnectionSecretToReference != nil {
		g.Expect(env.Client.Create(ctx, loginSecret(secretNS, name+"-login", name, dbs...))).To(Succeed())
	}
	return u
}

// userPod is a pod in ns that requests user, and database db unless empty.
func userPod(ns, name, user, db string) *corev1.Pod {
	p := plainPod(ns, name)
	p.Annotations = map[string]string{v1alpha1.AnnotationUserName: user}
	if db != "" {
		p.Annotations[v1alpha1.AnnotationDatabaseName] = db
	}
	return p
}

// holdsNowhere checks that no secret of namespace ns, and no part of pod,
// holds password.
func holdsNowhere(g Gomega, ns, password string, pod *corev1.Pod) {
	l := &corev1.SecretList{}
	g.Expect(env.Client.List(context.Background(), l, client.InNamespace(ns))).To(Succeed())
	for _, s := range l.Items {
		for k, v := range s.Data {
			g.Expect(bytes.Contains(v, []byte(password))).To(BeFalse(), "secret %s/%s key %s holds the password", ns, s.Name, k)
		}
	}
	raw, err := json.Marshal(pod)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(string(raw)).ToNot(ContainSubstring(password))
}

// A namespaced PostgresqlUser's pod gets the proxy of the user's instance and
// that login, its database and its password, mounted from the user's own
// connection secret; the instance's postgres password reaches no object of
// the namespace; another namespace's pod cannot name the user; a database the
// user does not own is denied, and so is a pod that names both a user and an
// instance.
func TestNamespacedUserPodGetsItsLoginOnly(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "shared-pg", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"shop-a", "shop-b"}}
	})
	namespace(t, "shop-a", nil)
	namespace(t, "shop-b", nil)
	readyNamespacedUser(t, "shop-a", "orders", onCluster("shared-pg"), "orders", "orders_archive")

	for i, db := range []string{"", "orders_archive"} {
		p := userPod("shop-a", "web-"+strconv.Itoa(i), "orders", db)
		g.Expect(env.Client.Create(ctx, p)).To(Succeed(), "database %q", db)
		g.Expect(p.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
		g.Expect(p.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.travelaudience.com/shared-pg"))
		want := "orders"
		if db != "" {
			want = db
		}
		g.Expect(envOf(p.Spec.Containers[0])).To(And(
			HaveKeyWithValue(podinject.EnvUser, "orders"),
			HaveKeyWithValue(podinject.EnvDatabase, want),
			HaveKeyWithValue(podinject.EnvHost, cloudsql.ProxyAddress),
		))
		g.Expect(p.Spec.InitContainers).To(ContainElement(And(HaveField("Name", podinject.ProxyContainerName),
			HaveField("Args", ContainElement(project+":europe-west1:shared-pg")))), "the proxy of the user's instance")
		v := secretVolume(g, p, podinject.PgpassSecretVolumeName)
		g.Expect(v.SecretName).To(Equal("orders-login"), "the user's own connection secret, mounted as it is")
		g.Expect(v.Items).To(Equal([]corev1.KeyToPath{{Key: cloudsql.ConnectionKeyPgpass, Path: cloudsql.ConnectionKeyPgpass}}))
		holdsNowhere(g, "shop-a", "pw-shared-pg", p)
	}
	g.Expect(absent("shop-a", podinject.CopyName(podinject.CopyPgpass, "shared-pg"))()).To(BeTrue(), "no copy of the instance's password")

	err := env.Client.Create(ctx, userPod("shop-a", "other-db", "orders", "billing"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`pod shop-a/other-db: annotation cloudsql.travelaudience.com/postgresql-database is "billing", which is not a database that PostgresqlUser "orders" of namespace shop-a (cloudsql.m.travelaudience.com) owns`),
		ContainSubstring("it may name only orders, orders_archive"),
	)))
	both := userPod("shop-a", "both", "orders", "")
	both.Annotations[v1alpha1.AnnotationInstanceName] = "shared-pg"
	g.Expect(env.Client.Create(ctx, both)).To(MatchError(And(
		ContainSubstring("annotations cloudsql.travelaudience.com/postgresqlinstance-name and cloudsql.travelaudience.com/postgresqluser-name are both set"),
		ContainSubstring("keep only cloudsql.travelaudience.com/postgresqluser-name"),
	)))

	err = env.Client.Create(ctx, userPod("shop-b", "web", "orders", ""))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`pod shop-b/web: annotation cloudsql.travelaudience.com/postgresqluser-name names PostgresqlUser "orders", which exists neither in the pod's namespace shop-b`),
		ContainSubstring("a namespaced PostgresqlUser serves only pods of its own namespace"),
	)))
	err = env.Client.Create(ctx, userPod("shop-b", "web", "shop-a/orders", ""))
	g.Expect(err).To(MatchError(ContainSubstring(`names "shop-a/orders", a PostgresqlUser of namespace shop-a, but a namespaced PostgresqlUser serves only pods of its own namespace and this pod is in shop-b`)))
	l := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, l, client.InNamespace("shop-b"))).To(Succeed())
	g.Expect(l.Items).To(BeEmpty(), "a denied namespace gets no secret")
}

// A namespaced PostgresqlUser of a namespaced instance of its namespace gets
// that instance's proxy (and the proxy key its ClusterProviderConfig lends)
// with the user's login and password.
func TestNamespacedUserOfANamespacedInstance(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "local-shop", nil)
	readyNamespacedInstance(t, "local-shop", "db", func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: pcProxyKey}
	})
	readyNamespacedUser(t, "local-shop", "cart", onNamespaced("db"), "cart")

	p := userPod("local-shop", "web", "cart", "")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	g.Expect(p.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.m.travelaudience.com/db"))
	g.Expect(envOf(p.Spec.Containers[0])).To(And(HaveKeyWithValue(podinject.EnvUser, "cart"), HaveKeyWithValue(podinject.EnvDatabase, "cart")))
	g.Expect(p.Spec.InitContainers).To(ContainElement(HaveField("Args", ContainElement(project+":europe-west1:local-shop-db"))))
	g.Expect(secretVolume(g, p, podinject.PgpassSecretVolumeName).SecretName).To(Equal("cart-login"))
	g.Expect(secretVolume(g, p, podinject.ProxyCredentialsVolumeName).SecretName).To(Equal(podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "db")))
	g.Expect(env.Client.Create(ctx, userPod("local-shop", "not-its-db", "cart", "local-shop-db"))).To(MatchError(
		ContainSubstring(`is "local-shop-db", which is not a database that PostgresqlUser "cart" of namespace local-shop (cloudsql.m.travelaudience.com) owns: it may name only cart`)))
}

// A cluster-scoped PostgresqlUser serves the namespaces of its own allow-list
// that its instance allows too. Its password is copied into each, and the
// copies follow a new password, leave a namespace that the user stops
// allowing, and go with the user.
func TestClusterUserCopiesFollowTheUser(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "pool", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"pool-a", "pool-b", "pool-c"}}
	})
	u := readyClusterUser(t, "pool-app", "pool", []string{"app"}, func(u *v1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.Injection = &v1alpha1.UserInjection{AllowedNamespaces: []string{"pool-a", "pool-b", "pool-d"}}
	})
	for _, ns := range []string{"pool-a", "pool-b", "pool-c", "pool-d"} {
		namespace(t, ns, nil)
	}
	name := podinject.UserCopyName("pool-app")
	for _, ns := range []string{"pool-a", "pool-b"} {
		p := userPod(ns, "web", "pool-app", "")
		g.Expect(env.Client.Create(ctx, p)).To(Succeed(), ns)
		g.Expect(envOf(p.Spec.Containers[0])).To(And(HaveKeyWithValue(podinject.EnvUser, "pool-app"), HaveKeyWithValue(podinject.EnvDatabase, "app")))
		g.Expect(secretVolume(g, p, podinject.PgpassSecretVolumeName).SecretName).To(Equal(name))
		c := secret(g, ns, name)
		g.Expect(c.Data).To(Equal(map[string][]byte{cloudsql.ConnectionKeyPgpass: []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", "pool-app", userPassword("pool-app")))}))
		g.Expect(c.Labels).To(HaveKeyWithValue(v1alpha1.LabelUser, "pool-app"))
		g.Expect(c.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "PostgresqlUser"), HaveField("Name", "pool-app"), HaveField("UID", u.UID))))
		holdsNowhere(g, ns, "pw-pool", p)
	}
	g.Expect(env.Client.Create(ctx, userPod("pool-c", "web", "pool-app", ""))).To(MatchError(And(
		ContainSubstring(`pod pool-c/web: PostgresqlUser "pool-app" may not be used from namespace pool-c: its spec.forProvider.injection.allowedNamespaces is [pool-a, pool-b, pool-d]`),
		ContainSubstring("ask the user's owner to add pool-c to it"),
	)), "the user's list narrows the instance's")
	g.Expect(env.Client.Create(ctx, userPod("pool-d", "web", "pool-app", ""))).To(MatchError(And(
		ContainSubstring(`pod pool-d/web: PostgresqlInstance "pool" may not be used from namespace pool-d`),
		ContainSubstring(`(PostgresqlInstance "pool" is the instance of PostgresqlUser "pool-app", spec.forProvider.instance)`),
	)), "the user's list cannot widen the instance's")
	for _, ns := range []string{"pool-c", "pool-d"} {
		g.Expect(absent(ns, name)()).To(BeTrue(), "no copy in denied namespace %s", ns)
	}

	// A new password reaches every copy.
	rotated := []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", "pool-app", "rotated"))
	cs := secret(g, secretNS, "pool-app-login")
	cs.Data[cloudsql.ConnectionKeyPgpass] = rotated
	g.Expect(env.Client.Update(ctx, cs)).To(Succeed())
	for _, ns := range []string{"pool-a", "pool-b"} {
		g.Eventually(func(g Gomega) {
			g.Expect(secret(g, ns, name).Data[cloudsql.ConnectionKeyPgpass]).To(Equal(rotated))
		}, eventually, poll).Should(Succeed(), "namespace %s", ns)
	}

	// A namespace that the user stops allowing loses its copy.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
	u.Spec.ForProvider.Injection.AllowedNamespaces = []string{"pool-a"}
	g.Expect(env.Client.Update(ctx, u)).To(Succeed())
	g.Eventually(absent("pool-b", name), eventually, poll).Should(BeTrue())
	g.Consistently(absent("pool-a", name), time.Second, poll).Should(BeFalse())

	// The user goes, and so do its copies.
	g.Expect(env.Client.Delete(ctx, u)).To(Succeed())
	g.Eventually(absent("pool-a", name), eventually, poll).Should(BeTrue())
}

// A cluster-scoped user without an allow-list of its own serves the
// namespaces of its instance's, and its copies leave a namespace that the
// instance stops allowing.
func TestClusterUserFollowsItsInstancesAllowList(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := readyInstance(t, "wide", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"wide-a", "wide-b"}}
	})
	readyClusterUser(t, "wide-app", "wide", []string{"app"})
	name := podinject.UserCopyName("wide-app")
	for _, ns := range []string{"wide-a", "wide-b"} {
		namespace(t, ns, nil)
		g.Expect(env.Client.Create(ctx, userPod(ns, "web", "wide-app", ""))).To(Succeed(), ns)
		secret(g, ns, name)
	}
	namespace(t, "wide-c", nil)
	g.Expect(env.Client.Create(ctx, userPod("wide-c", "web", "wide-app", ""))).To(MatchError(
		ContainSubstring(`pod wide-c/web: PostgresqlInstance "wide" may not be used from namespace wide-c`)))

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.Injection.AllowedNamespaces = []string{"wide-a"}
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())
	g.Eventually(absent("wide-b", name), eventually, poll).Should(BeTrue())
	g.Consistently(absent("wide-a", name), time.Second, poll).Should(BeFalse())
}

// Users that cannot be injected are denied with what to do: a user that is
// not ready, a user whose instance does not exist.
func TestUsersThatCannotBeInjectedAreDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "deny-pg", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"*"}}
	})
	namespace(t, "deny-app", nil)

	u := readyClusterUser(t, "deny-unready", "deny-pg", []string{"app"})
	u.SetConditions(xpv2.Creating())
	g.Expect(env.Client.Status().Update(ctx, u)).To(Succeed())
	g.Expect(env.Client.Create(ctx, userPod("deny-app", "unready", "deny-unready", ""))).To(MatchError(And(
		ContainSubstring(`PostgresqlUser "deny-unready" is not ready (Ready is False, reason Creating)`),
		ContainSubstring("kubectl get postgresqlusers.cloudsql.travelaudience.com/deny-unready"),
	)))

	readyClusterUser(t, "deny-orphan", "no-such-pg", []string{"app"})
	g.Expect(env.Client.Create(ctx, userPod("deny-app", "orphan", "deny-orphan", ""))).To(MatchError(
		ContainSubstring(`PostgresqlUser "deny-orphan" belongs to PostgresqlInstance "no-such-pg" (spec.forProvider.instance), which does not exist`)))

	g.Expect(env.Client.Create(ctx, userPod("deny-app", "missing", "no-such-user", ""))).To(MatchError(
		ContainSubstring(`names PostgresqlUser "no-such-user", which exists neither in the pod's namespace deny-app`)))

	l := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, l, client.InNamespace("deny-app"))).To(Succeed())
	g.Expect(l.Items).To(BeEmpty(), "a denied pod's namespace gets no secret")
}

// The injector reads both kinds of PostgresqlUser, and copies a cluster-scoped
// one's password, with exactly the RBAC that cluster/deploy/provider.yaml
// grants the provider's service account (envtest enforces RBAC); the rollout
// watches pods with what rollout.yaml adds (TestMain applies both), and may
// restart no workload of a namespace that does not bind its role.
func TestInjectorReadsUsersWithTheShippedRBAC(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	objs, err := manifests.ReadFile(filepath.Join(controlplane.RepoRoot(), "cluster", "deploy", "provider.yaml"))
	g.Expect(err).ToNot(HaveOccurred())
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding":
			if err := env.Client.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
	}
	rc := rest.CopyConfig(env.Config)
	rc.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:crossplane-system:provider-cloudsql-postgres"}
	as, err := client.New(rc, client.Options{Scheme: env.Scheme})
	g.Expect(err).ToNot(HaveOccurred())
	cfg, err := podinject.ConfigFrom(configfile.Defaults(), true)
	g.Expect(err).ToNot(HaveOccurred())
	inj := podinject.NewInjector(as, as, as, env.Scheme, cfg)

	readyInstance(t, "rbac-pg", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"rbac-app"}}
	})
	namespace(t, "rbac-app", nil)
	readyNamespacedUser(t, "rbac-app", "local", onCluster("rbac-pg"), "local")
	readyClusterUser(t, "shared", "rbac-pg", []string{"shared"})
	for _, user := range []string{"local", "shared"} {
		resp := admit(g, inj, "rbac-app", userPod("rbac-app", "web-"+user, user, ""))
		g.Expect(resp.Allowed).To(BeTrue(), "user %s: %v", user, resp.Result)
		g.Expect(resp.Patches).ToNot(BeEmpty(), "user %s", user)
	}
	secret(g, "rbac-app", podinject.UserCopyName("shared"))

	// And the rollout may watch pods, but restart nothing in rbac-app, which
	// binds no role; a user without the rules may not watch either, and is
	// told what is missing.
	missing, err := podinject.RolloutDenied(ctx, as)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(missing).To(BeEmpty())
	missing, err = podinject.RolloutDeniedIn(ctx, as, "rbac-app")
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(missing).To(ContainElements("get pods", "patch apps/deployments", "patch apps/statefulsets", "patch apps/daemonsets"))
	nobody := rest.CopyConfig(env.Config)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:crossplane-system:nobody"}
	nc, err := client.New(nobody, client.Options{Scheme: env.Scheme})
	g.Expect(err).ToNot(HaveOccurred())
	missing, err = podinject.RolloutDenied(ctx, nc)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(missing).To(ConsistOf("list pods", "watch pods"))
}

// A pod of an IAM user gets the proxy with --auto-iam-authn and PGUSER of the
// principal's login, and no password: no file, no writer, no copy, and not
// the configuration's proxy key either, since the proxy's identity is the
// login. Credentials of the pod's own (the annotation) are mounted for the
// proxy alone, once they exist.
func TestIAMUsersAreInjectedWithoutAPassword(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "iam-pg", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: pcProxyKey}
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"iam-app"}}
		pi.Spec.ForProvider.Flags = []string{"log_connections=on", podinject.IAMAuthenticationFlag}
	})
	namespace(t, "iam-app", nil)
	login := "orders@" + project + ".iam"
	u := readyClusterUser(t, "iam-orders", "iam-pg", []string{"orders"}, func(u *v1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.Type = v1alpha1.UserTypeCloudIAMServiceAccount
		u.Spec.ForProvider.IAMPrincipal = login + v1alpha1.ServiceAccountEmailSuffix
		u.Spec.WriteConnectionSecretToReference = nil
	})
	u.Status.AtProvider.Name, u.Status.AtProvider.Type = "", v1alpha1.UserTypeCloudIAMServiceAccount
	g.Expect(env.Client.Status().Update(ctx, u)).To(Succeed())

	p := userPod("iam-app", "web", "iam-orders", "")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	proxy := container(g, p, podinject.ProxyContainerName)
	g.Expect(proxy.Args).To(ContainElement(podinject.ProxyIAMAuthNFlag))
	g.Expect(strings.Join(proxy.Args, " ")).ToNot(ContainSubstring("--credentials-file"), "never the configuration's key")
	app := container(g, p, "app")
	g.Expect(app.Env).To(ContainElements(
		corev1.EnvVar{Name: podinject.EnvUser, Value: login},
		corev1.EnvVar{Name: podinject.EnvDatabase, Value: "orders"},
	))
	g.Expect(app.Env).ToNot(ContainElement(HaveField("Name", podinject.EnvPassFile)))
	g.Expect(app.VolumeMounts).To(BeEmpty())
	for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
		g.Expect(c.Name).ToNot(HavePrefix(podinject.WriterContainerPrefix))
	}
	g.Expect(p.Spec.Volumes).To(BeEmpty())
	l := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, l, client.InNamespace("iam-app"))).To(Succeed())
	g.Expect(l.Items).To(BeEmpty(), "no password, and no key, is copied for an IAM login")

	own := userPod("iam-app", "own-key", "iam-orders", "")
	own.Annotations[v1alpha1.AnnotationProxyCredentialsSecret] = "orders-sa"
	g.Expect(env.Client.Create(ctx, own)).To(MatchError(ContainSubstring(
		`pod iam-app/own-key: annotation ` + v1alpha1.AnnotationProxyCredentialsSecret + ` names secret iam-app/orders-sa, which does not exist or has no key credentials.json`)))
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "iam-app", Name: "orders-sa"},
		Data:       map[string][]byte{podinject.ProxyCredentialsKey: []byte(`{"type":"service_account"}`)},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, own)).To(Succeed())
	proxy = container(g, own, podinject.ProxyContainerName)
	g.Expect(proxy.Args).To(ContainElements(podinject.ProxyIAMAuthNFlag, "--credentials-file="+podinject.ProxyCredentialsDir+"/"+podinject.ProxyCredentialsKey))
	g.Expect(secretVolume(g, own, podinject.ProxyCredentialsVolumeName).SecretName).To(Equal("orders-sa"))

	// A reinvocation after another webhook renamed the user to a BUILT_IN
	// one: the proxy already logs in with IAM, and no writer may join it.
	readyClusterUser(t, "iam-builtin", "iam-pg", []string{"orders"}, func(u *v1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.Injection = &v1alpha1.UserInjection{AllowedNamespaces: []string{"iam-app"}}
	})
	again := p.DeepCopy()
	again.Annotations[v1alpha1.AnnotationUserName] = "iam-builtin"
	resp := admit(g, injector(g, env.Client), "iam-app", again)
	g.Expect(resp.Allowed).To(BeFalse())
	g.Expect(resp.Result.Message).To(ContainSubstring(`PostgresqlUser "iam-builtin" logs in with a password, but another admission webhook changed the pod's annotations after the injector had given its proxy the arguments to log in with IAM database authentication`))

	bad := userPod("iam-app", "bad-key", "iam-orders", "")
	bad.Annotations[v1alpha1.AnnotationProxyCredentialsSecret] = "Not/A/Name"
	g.Expect(env.Client.Create(ctx, bad)).To(MatchError(ContainSubstring(`is "Not/A/Name", which is not the name of a Secret`)))

	// On an instance whose flags do not turn IAM logins on, Cloud SQL would
	// refuse every connection: the pod is denied, and told what to add.
	readyInstance(t, "iam-off", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"iam-app"}}
	})
	off := readyClusterUser(t, "iam-off-orders", "iam-off", nil, func(u *v1alpha1.PostgresqlUser) {
		u.Spec.ForProvider.Type = v1alpha1.UserTypeCloudIAMServiceAccount
		u.Spec.ForProvider.IAMPrincipal = login + v1alpha1.ServiceAccountEmailSuffix
		u.Spec.WriteConnectionSecretToReference = nil
	})
	off.Status.AtProvider.Name = login
	g.Expect(env.Client.Status().Update(ctx, off)).To(Succeed())
	g.Expect(env.Client.Create(ctx, userPod("iam-app", "flag-off", "iam-off-orders", ""))).To(MatchError(And(
		ContainSubstring(`PostgresqlUser "iam-off-orders" logs in with IAM database authentication (spec.forProvider.type CLOUD_IAM_SERVICE_ACCOUNT), which PostgresqlInstance "iam-off" does not turn on`),
		ContainSubstring("add cloudsql.iam_authentication=on to the instance's spec.forProvider.flags"))))
}

// container is the (init) container of pod called name.
func container(g Gomega, pod *corev1.Pod, name string) corev1.Container {
	for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
		if c.Name == name {
			return c
		}
	}
	g.Expect(name).To(BeEmpty(), "pod %s/%s has no container %s", pod.Namespace, pod.Name, name)
	return corev1.Container{}
}
