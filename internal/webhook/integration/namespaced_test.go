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
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// The namespaced kind gets the cluster-scoped kind's checks: a name taken in the
// project of its ClusterProviderConfig is refused, and it is deleted only with
// the allow-deletion annotation, with messages that name its namespace.
func TestNamespacedInstanceIsValidated(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "team-x", nil)
	seedInstance(g, "taken-by-ns")

	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "team-x", Name: "wants-taken"}}
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: pcDefault}
	pi.Spec.ForProvider.Name = ptr.To("taken-by-ns")
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "wants-taken"}
	g.Expect(env.Client.Create(ctx, pi.DeepCopy())).To(MatchError(And(
		ContainSubstring("PostgresqlInstance team-x/wants-taken: a Cloud SQL instance named taken-by-ns already exists in project "+project),
		ContainSubstring(`(ClusterProviderConfig "default")`),
	)))

	guarded := pi.DeepCopy()
	guarded.Name, guarded.Spec.ForProvider.Name = "guarded", nil
	g.Expect(env.Client.Create(ctx, guarded)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, guarded)).To(MatchError(And(
		ContainSubstring("PostgresqlInstance team-x/guarded may not be deleted: deleting it deletes Cloud SQL instance guarded"),
		ContainSubstring("kubectl annotate -n team-x postgresqlinstances.cloudsql.m.travelaudience.com guarded cloudsql.travelaudience.com/allow-deletion=true"),
	)))
	guarded.Annotations = map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}
	g.Expect(env.Client.Update(ctx, guarded)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, guarded)).To(Succeed())
	g.Expect(kerrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(guarded), guarded))).To(BeTrue())
}

// A namespaced PostgresqlInstance may recover only from a cluster-scoped
// instance whose spec.injection admits its namespace: a copy holds all of
// its data and a postgres password, so spec.tenancy, which admits users and
// databases, does not suffice. The denial names the field and says what to do.
func TestNamespacedRecoveryNeedsAnAdmittedSource(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "recoverable", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Tenancy = &v1alpha1.Tenancy{AllowedNamespaces: []string{"recoverable-tenant"}}
	}) // injection admits recoverable-app
	for _, ns := range []string{"recoverable-app", "recoverable-other", "recoverable-tenant"} {
		namespace(t, ns, nil)
	}
	clone := func(ns string) *nsv1alpha1.PostgresqlInstance {
		pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "copy"}}
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: pcDefault}
		pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "copy"}
		pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
		pi.Spec.ForProvider.Name = ptr.To(ns + "-copy")
		pi.Spec.ForProvider.Source = &v1alpha1.Source{ClusterInstance: "recoverable"}
		return pi
	}
	for _, ns := range []string{"recoverable-other", "recoverable-tenant"} {
		g.Expect(env.Client.Create(ctx, clone(ns))).To(MatchError(And(
			ContainSubstring("PostgresqlInstance "+ns+"/copy: spec.forProvider.source.clusterInstance names the cluster-scoped PostgresqlInstance recoverable, whose spec.injection does not admit namespace "+ns),
			ContainSubstring("spec.tenancy admits users and databases only"),
			ContainSubstring("ask the instance's owner to add "+ns+" to spec.injection.allowedNamespaces"),
		)), "namespace %s", ns)
	}
	g.Expect(env.Client.Create(ctx, clone("recoverable-app"))).To(Succeed())

	// A backup the tenant may take of the shared instance is all of its
	// data too: it is not restored into the tenant's own instance.
	b := &nsv1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "recoverable-tenant", Name: "nightly"}}
	b.Spec.ForProvider.ClusterInstance = "recoverable"
	g.Expect(env.Client.Create(ctx, b)).To(Succeed())
	restore := clone("recoverable-tenant")
	restore.Name, restore.Spec.ForProvider.Source = "restored", &v1alpha1.Source{Backup: "nightly"}
	g.Expect(env.Client.Create(ctx, restore)).To(MatchError(ContainSubstring(
		"PostgresqlInstance recoverable-tenant/restored: spec.forProvider.source.backup (PostgresqlBackup recoverable-tenant/nightly) names the cluster-scoped PostgresqlInstance recoverable, whose spec.injection does not admit namespace recoverable-tenant")))
}

// readyNamespacedInstance creates a namespaced PostgresqlInstance in ns, through
// the validating webhook, and makes it look reconciled: Ready, with a connection
// name and a connection secret in ns holding a pgpass entry.
func readyNamespacedInstance(t testing.TB, ns, name string, fns ...func(*nsv1alpha1.PostgresqlInstance)) *nsv1alpha1.PostgresqlInstance {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: pcDefault}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	// Cloud SQL names are unique in a project, metadata.names only in a namespace.
	pi.Spec.ForProvider.Name = ptr.To(ns + "-" + name)
	for _, fn := range fns {
		fn(pi)
	}
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())
	pi.Status.AtProvider = v1alpha1.PostgresqlInstanceObservation{
		State: "RUNNABLE", ConnectionName: project + ":europe-west1:" + ns + "-" + name, PublicIP: "203.0.113.8",
	}
	pi.SetConditions(xpv2.Available())
	g.Expect(env.Client.Status().Update(ctx, pi)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-postgres"},
		Data:       map[string][]byte{cloudsql.ConnectionKeyPgpass: []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, "pw-"+ns+"-"+name))},
	})).To(Succeed())
	return pi
}

// secretVolume is the secret that pod's volume named name mounts, and its items.
func secretVolume(g Gomega, pod *corev1.Pod, name string) *corev1.SecretVolumeSource {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			g.Expect(v.Secret).ToNot(BeNil(), "volume %s", name)
			return v.Secret
		}
	}
	g.Expect(pod.Spec.Volumes).To(ContainElement(HaveField("Name", name)))
	return nil
}

// A namespaced instance serves the pods of its own namespace, with the
// connection secret it already has there, and no other namespace's.
func TestNamespacedInstanceServesItsOwnNamespace(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "team-a", nil)
	namespace(t, "team-b", nil)
	readyNamespacedInstance(t, "team-a", "db")

	for _, value := range []string{"db", "team-a/db"} {
		p := annotatedPod("team-a", "web-"+strings.ReplaceAll(value, "/", "-"), value)
		g.Expect(env.Client.Create(ctx, p)).To(Succeed(), value)
		g.Expect(p.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
		g.Expect(p.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.m.travelaudience.com/db"))
		g.Expect(secretVolume(g, p, podinject.PgpassSecretVolumeName).SecretName).To(Equal("db-postgres"), "the connection secret is mounted as it is")
		g.Expect(p.Spec.InitContainers).To(ContainElement(And(HaveField("Name", podinject.ProxyContainerName),
			HaveField("Args", ContainElement("--sqladmin-api-endpoint="+endpoint)))), "the endpoint of ClusterProviderConfig default")
	}
	for _, name := range []string{
		podinject.CopyName(podinject.CopyPgpass, "db"),
		podinject.NamespacedCopyName(podinject.CopyPgpass, "db"),
	} {
		g.Expect(absent("team-a", name)()).To(BeTrue(), "no copy of a secret that is in the namespace already: %s", name)
	}

	err := env.Client.Create(ctx, annotatedPod("team-b", "web", "db"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`pod team-b/web: annotation cloudsql.travelaudience.com/postgresqlinstance-name names PostgresqlInstance "db", which exists neither in the pod's namespace team-b`),
		ContainSubstring("a namespaced PostgresqlInstance serves only pods of its own namespace"),
	)))
	err = env.Client.Create(ctx, annotatedPod("team-b", "web", "team-a/db"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`pod team-b/web: annotation cloudsql.travelaudience.com/postgresqlinstance-name names "team-a/db", a PostgresqlInstance of namespace team-a`),
		ContainSubstring("serves only pods of its own namespace and this pod is in team-b"),
	)))
	l := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, l, client.InNamespace("team-b"))).To(Succeed())
	g.Expect(l.Items).To(BeEmpty(), "a denied namespace gets no secret")
}

// The proxy key of a ClusterProviderConfig is copied into the instance's
// namespace and kept current; a namespaced ProviderConfig's key is mounted as
// it is, from its own namespace.
func TestNamespacedInstanceProxyKeys(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "keys", nil)
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: "rotating-key"}, Data: map[string][]byte{"sa.json": []byte(`{"v":1}`)},
	})).To(Succeed())
	def := &nsv1alpha1.ClusterProviderConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: pcDefault}, def)).To(Succeed())
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "rotating"}, Spec: def.Spec}
	cpc.Spec.ProxyCredentials = &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: secretNS, Name: "rotating-key"}, Key: "sa.json"}
	g.Expect(env.Client.Create(ctx, cpc)).To(Succeed())
	readyNamespacedInstance(t, "keys", "shared-key", func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "rotating"}
	})
	g.Expect(env.Client.Create(ctx, annotatedPod("keys", "web", "shared-key"))).To(Succeed())
	name := podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "shared-key")
	g.Expect(secret(g, "keys", name).Data).To(Equal(map[string][]byte{podinject.ProxyCredentialsKey: []byte(`{"v":1}`)}))

	src := secret(g, secretNS, "rotating-key")
	src.Data["sa.json"] = []byte(`{"v":2}`)
	g.Expect(env.Client.Update(ctx, src)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(secret(g, "keys", name).Data[podinject.ProxyCredentialsKey]).To(Equal([]byte(`{"v":2}`)))
	}, eventually, poll).Should(Succeed(), "a new key reaches the copy")

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc)).To(Succeed())
	cpc.Spec.ProxyCredentials = nil
	g.Expect(env.Client.Update(ctx, cpc)).To(Succeed())
	g.Eventually(absent("keys", name), eventually, poll).Should(BeTrue(), "the copy goes with the key")

	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "keys", Name: "local-key"}, Data: map[string][]byte{"k.json": []byte(`{"local":true}`)},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &nsv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "keys", Name: "local"},
		// The emulator's URL written without the trailing slash, unlike every
		// other configuration's, so that the proxy's flag shows where it came from.
		Spec: nsv1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: project, Endpoint: strings.TrimSuffix(endpoint, "/")},
			Credentials:      nsv1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceNone},
			ProxyCredentials: &xpv2.LocalSecretKeySelector{LocalSecretReference: xpv2.LocalSecretReference{Name: "local-key"}, Key: "k.json"}},
	})).To(Succeed())
	readyNamespacedInstance(t, "keys", "local-key-db", func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "local"}
	})
	p := annotatedPod("keys", "local", "local-key-db")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	v := secretVolume(g, p, podinject.ProxyCredentialsVolumeName)
	g.Expect(v.SecretName).To(Equal("local-key"))
	g.Expect(v.Items).To(Equal([]corev1.KeyToPath{{Key: "k.json", Path: podinject.ProxyCredentialsKey}}))
	g.Expect(p.Spec.InitContainers).To(ContainElement(And(HaveField("Name", podinject.ProxyContainerName),
		HaveField("Args", ContainElement("--sqladmin-api-endpoint="+strings.TrimSuffix(endpoint, "/"))))), "the endpoint of the namespaced ProviderConfig, as written")
	g.Expect(absent("keys", podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "local-key-db"))()).To(BeTrue())
}

// A namespaced instance that is not ready is denied with the command that
// shows it, in its namespace and group.
func TestNamespacedInstanceNotReadyIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "unready-ns", nil)
	pi := readyNamespacedInstance(t, "unready-ns", "db")
	pi.SetConditions(xpv2.Creating())
	g.Expect(env.Client.Status().Update(ctx, pi)).To(Succeed())
	err := env.Client.Create(ctx, annotatedPod("unready-ns", "web", "db"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`PostgresqlInstance "db" of namespace unready-ns (cloudsql.m.travelaudience.com) is not ready (Ready is False, reason Creating)`),
		ContainSubstring("kubectl -n unready-ns get postgresqlinstances.cloudsql.m.travelaudience.com/db"),
	)))
}

// The namespaced examples work together: the example Deployment's pod, in the
// example instance's namespace, gets that instance.
func TestNamespacedExampleDeploymentIsInjected(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	read := func(file string, into any) {
		objs, err := manifests.ReadFile(filepath.Join(controlplane.RepoRoot(), "examples", "namespaced", file))
		g.Expect(err).ToNot(HaveOccurred())
		g.Expect(objs).To(HaveLen(1))
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, into)).To(Succeed())
	}
	ex := &nsv1alpha1.PostgresqlInstance{}
	read("postgresqlinstance.yaml", ex)
	d := &appsv1.Deployment{}
	read("deployment-with-proxy.yaml", d)
	g.Expect(d.Namespace).To(Equal(ex.Namespace))

	// Another namespace than the examples', which another test uses.
	const ns = "example-team"
	namespace(t, ns, nil)
	readyNamespacedInstance(t, ns, ex.Name, func(pi *nsv1alpha1.PostgresqlInstance) { pi.Spec = ex.Spec })
	p := &corev1.Pod{ObjectMeta: d.Spec.Template.ObjectMeta, Spec: d.Spec.Template.Spec}
	p.Namespace, p.Name = ns, "orders-api"
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	g.Expect(p.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.m.travelaudience.com/"+ex.Name))
	g.Expect(secretVolume(g, p, podinject.PgpassSecretVolumeName).SecretName).To(Equal(ex.Spec.WriteConnectionSecretToReference.Name))
	g.Expect(containerNames(p.Spec.InitContainers)).To(Equal([]string{"cloudsql-pgpass-70", "cloudsql-pgpass-follow-70", podinject.ProxyContainerName}))
}

// A ClusterProviderConfig's key copied for a namespaced instance goes when the
// instance turns to another configuration, and when the instance goes.
func TestNamespacedInstanceKeyCopyFollowsItsInstance(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "key-follows", nil)
	name := podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "db")
	copied := func(instance string) {
		g.Expect(env.Client.Create(ctx, annotatedPod("key-follows", "web-"+instance, instance))).To(Succeed())
		g.Expect(secret(g, "key-follows", podinject.NamespacedCopyName(podinject.CopyProxyCredentials, instance)).Data).To(HaveKey(podinject.ProxyCredentialsKey))
	}
	keyed := func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: pcProxyKey}
		pi.Annotations = map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}
	}

	pi := readyNamespacedInstance(t, "key-follows", "db", keyed)
	copied("db")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: pcDefault}
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())
	g.Eventually(absent("key-follows", name), eventually, poll).Should(BeTrue(), "a configuration without a key leaves no copy")

	gone := readyNamespacedInstance(t, "key-follows", "gone", keyed)
	copied("gone")
	g.Expect(env.Client.Delete(ctx, gone)).To(Succeed())
	g.Eventually(absent("key-follows", podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "gone")), eventually, poll).Should(BeTrue(), "the copy goes with its instance")
}

// A pod gets nothing (no proxy key copy, no password) of a namespaced instance
// whose ClusterProviderConfig no longer admits its namespace, and is told what
// the platform team must add.
func TestNamespacedInstanceOfAConfigNotLentGivesNothing(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "unlent", nil)
	def := &nsv1alpha1.ClusterProviderConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: pcProxyKey}, def)).To(Succeed())
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "revoked"}, Spec: def.Spec}
	cpc.Spec.Namespaces = &nsv1alpha1.NamespaceSelection{Names: []string{"unlent"}}
	g.Expect(env.Client.Create(ctx, cpc)).To(Succeed())
	readyNamespacedInstance(t, "unlent", "db", func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "revoked"}
	})

	// The platform team lends it to another namespace only.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc)).To(Succeed())
	cpc.Spec.Namespaces.Names = []string{"someone-else"}
	g.Expect(env.Client.Update(ctx, cpc)).To(Succeed())
	g.Expect(env.Client.Create(ctx, annotatedPod("unlent", "web", "db"))).To(MatchError(And(
		ContainSubstring(`ClusterProviderConfig "revoked" does not admit namespace unlent`),
		ContainSubstring("Ask the platform team to add unlent to the ClusterProviderConfig's spec.namespaces.names"),
	)))
	g.Expect(absent("unlent", podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "db"))()).To(BeTrue(), "no copy of the proxy key")

	cpc.Spec.Namespaces.Names = []string{"someone-else", "unlent"}
	g.Expect(env.Client.Update(ctx, cpc)).To(Succeed())
	g.Expect(env.Client.Create(ctx, annotatedPod("unlent", "web", "db"))).To(Succeed())
}

// A lending decided from a cache that has not seen a ClusterProviderConfig's
// spec.namespaces shrink yet is confirmed against the API server before the
// pod gets anything; a lending that cannot be read at all is an error the API
// server may retry, not a denial that says the configuration lends nothing.
func TestStaleLendingIsConfirmedLive(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "stale-lent", nil)
	def := &nsv1alpha1.ClusterProviderConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: pcProxyKey}, def)).To(Succeed())
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "stale-lending"}, Spec: def.Spec}
	cpc.Spec.Namespaces = &nsv1alpha1.NamespaceSelection{Names: []string{"stale-lent"}}
	g.Expect(env.Client.Create(ctx, cpc)).To(Succeed())
	pi := readyNamespacedInstance(t, "stale-lent", "db", func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "stale-lending"}
	})
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc)).To(Succeed())

	// The cache keeps the configuration as it was; the API server has it
	// lent to another namespace only.
	old := cpc.DeepCopy()
	cpc.Spec.Namespaces.Names = []string{"someone-else"}
	g.Expect(env.Client.Update(ctx, cpc)).To(Succeed())
	stale := fake.NewClientBuilder().WithScheme(env.Scheme).WithObjects(old, pi).WithStatusSubresource(pi).Build()

	resp := admit(g, injector(g, stale), "stale-lent", annotatedPod("", "web", "db"))
	g.Expect(resp.Allowed).To(BeFalse(), "a namespace no longer named gets nothing")
	g.Expect(resp.Result.Message).To(ContainSubstring(`ClusterProviderConfig "stale-lending" does not admit namespace stale-lent`))
	g.Expect(absent("stale-lent", podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "db"))()).To(BeTrue(), "no copy of the proxy key")

	// Neither the cache nor the API server can be read: an error, which
	// says what could not be read, not a denial.
	failing := cpcReadFails{Reader: stale}
	cfg, err := podinject.ConfigFrom(configfile.Defaults(), true)
	g.Expect(err).ToNot(HaveOccurred())
	inj := podinject.NewInjector(failing, cpcReadFails{Reader: env.Client}, env.Client, env.Scheme, cfg)
	resp = admit(g, inj, "stale-lent", annotatedPod("", "web", "db"))
	g.Expect(resp.Allowed).To(BeFalse())
	g.Expect(resp.Result.Code).To(Equal(int32(http.StatusInternalServerError)))
	g.Expect(resp.Result.Message).To(And(
		ContainSubstring(`pod stale-lent/web: cannot decide whether ClusterProviderConfig "stale-lending", which PostgresqlInstance "db" of namespace stale-lent`),
		ContainSubstring("is lent to namespace stale-lent"),
		ContainSubstring("the API server is unavailable"),
		Not(ContainSubstring("gets nothing"))))
}

// cpcReadFails is a reader whose reads of ClusterProviderConfigs fail, as
// they would while the API server is unavailable.
type cpcReadFails struct{ client.Reader }

func (r cpcReadFails) Get(ctx context.Context, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
	if _, ok := obj.(*nsv1alpha1.ClusterProviderConfig); ok {
		return kerrors.NewServiceUnavailable("the API server is unavailable")
	}
	return r.Reader.Get(ctx, key, obj, o...)
}

// A namespace that its ClusterProviderConfig stops admitting loses its copy of
// the platform's proxy key: by name, and by labels that stop matching.
func TestNamespacedInstanceKeyCopyGoesWithTheLending(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "lent-key", map[string]string{"cloudsql": "lent"})
	def := &nsv1alpha1.ClusterProviderConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: pcProxyKey}, def)).To(Succeed())
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "withdrawn"}, Spec: def.Spec}
	cpc.Spec.Namespaces = &nsv1alpha1.NamespaceSelection{Names: []string{"lent-key"}}
	g.Expect(env.Client.Create(ctx, cpc)).To(Succeed())
	readyNamespacedInstance(t, "lent-key", "db", func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "withdrawn"}
	})
	name := podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "db")
	copied := func(pod string) {
		g.Expect(env.Client.Create(ctx, annotatedPod("lent-key", pod, "db"))).To(Succeed())
		g.Expect(secret(g, "lent-key", name).Data).To(HaveKey(podinject.ProxyCredentialsKey))
	}
	lend := func(n *nsv1alpha1.NamespaceSelection) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc)).To(Succeed())
		cpc.Spec.Namespaces = n
		g.Expect(env.Client.Update(ctx, cpc)).To(Succeed())
	}

	copied("web-1")
	lend(&nsv1alpha1.NamespaceSelection{Names: []string{"someone-else"}})
	g.Eventually(absent("lent-key", name), eventually, poll).Should(BeTrue(), "the copy stays in a namespace no longer named")

	lend(&nsv1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"cloudsql": "lent"}}})
	copied("web-2")
	n := &corev1.Namespace{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "lent-key"}, n)).To(Succeed())
	n.Labels["cloudsql"] = "withdrawn"
	g.Expect(env.Client.Update(ctx, n)).To(Succeed())
	g.Eventually(absent("lent-key", name), eventually, poll).Should(BeTrue(), "the copy stays in a namespace whose labels no longer match")
}
