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
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// With a namespaced and a cluster-scoped instance of one name, a bare name in
// the namespaced one's namespace is denied with both named and how to pick
// each; <namespace>/<name> picks the namespace's own, /<name> the
// cluster-scoped one, and their copies never mix. In a namespace with no
// instance of that name, the bare name is the cluster-scoped one, as before.
func TestBareNameOfBothScopesIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "shadowed", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"shadow-ns", "shadow-other"}}
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: pcProxyKey}
	})
	namespace(t, "shadow-ns", nil)
	namespace(t, "shadow-other", nil)
	readyNamespacedInstance(t, "shadow-ns", "shadowed", func(pi *nsv1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: pcProxyKey}
	})

	err := env.Client.Create(ctx, annotatedPod("shadow-ns", "web", "shadowed"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`pod shadow-ns/web: annotation cloudsql.travelaudience.com/postgresqlinstance-name is "shadowed", which names both `+
			`PostgresqlInstance "shadowed" of namespace shadow-ns (cloudsql.m.travelaudience.com) and the cluster-scoped PostgresqlInstance "shadowed" (cloudsql.travelaudience.com)`),
		ContainSubstring(`set the annotation to "shadow-ns/shadowed" for the one of namespace shadow-ns, or to "/shadowed" for the cluster-scoped one`),
	)))
	for _, name := range []string{
		podinject.CopyName(podinject.CopyPgpass, "shadowed"),
		podinject.CopyName(podinject.CopyProxyCredentials, "shadowed"),
		podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "shadowed"),
	} {
		g.Expect(absent("shadow-ns", name)()).To(BeTrue(), "a denied pod copies nothing: %s", name)
	}

	own := annotatedPod("shadow-ns", "own", "shadow-ns/shadowed")
	g.Expect(env.Client.Create(ctx, own)).To(Succeed())
	g.Expect(own.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.m.travelaudience.com/shadowed"))
	g.Expect(own.Spec.InitContainers).To(ContainElement(HaveField("Args", ContainElement(project+":europe-west1:shadow-ns-shadowed"))))
	key := secret(g, "shadow-ns", podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "shadowed"))
	g.Expect(key.Labels).To(HaveKeyWithValue(nsv1alpha1.LabelInstance, "shadowed"))
	g.Expect(key.Labels).ToNot(HaveKey(v1alpha1.LabelInstance))
	g.Expect(key.OwnerReferences).To(ConsistOf(HaveField("APIVersion", nsv1alpha1.SchemeGroupVersion.String())))
	g.Expect(secretVolume(g, own, podinject.ProxyCredentialsVolumeName).SecretName).To(Equal(key.Name))
	g.Expect(secretVolume(g, own, podinject.PgpassSecretVolumeName).SecretName).To(Equal("shadowed-postgres"))

	shared := annotatedPod("shadow-ns", "shared", "/shadowed")
	g.Expect(env.Client.Create(ctx, shared)).To(Succeed())
	g.Expect(shared.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.travelaudience.com/shadowed"))
	g.Expect(shared.Spec.InitContainers).To(ContainElement(HaveField("Args", ContainElement(project+":europe-west1:shadowed"))))
	pgpass := secret(g, "shadow-ns", podinject.CopyName(podinject.CopyPgpass, "shadowed"))
	g.Expect(pgpass.Labels).To(HaveKeyWithValue(v1alpha1.LabelInstance, "shadowed"))
	g.Expect(pgpass.OwnerReferences).To(ConsistOf(HaveField("APIVersion", v1alpha1.SchemeGroupVersion.String())))
	g.Expect(secretVolume(g, shared, podinject.PgpassSecretVolumeName).SecretName).To(Equal(pgpass.Name))

	other := annotatedPod("shadow-other", "web", "shadowed")
	g.Expect(env.Client.Create(ctx, other)).To(Succeed(), "only the cluster-scoped one exists for this namespace")
	g.Expect(other.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.travelaudience.com/shadowed"))
	g.Expect(absent("shadow-other", podinject.NamespacedCopyName(podinject.CopyProxyCredentials, "shadowed"))()).To(BeTrue())

	err = env.Client.Create(ctx, annotatedPod("shadow-other", "web-2", "/shadow-ns-only"))
	g.Expect(err).To(MatchError(ContainSubstring(
		`pod shadow-other/web-2: annotation cloudsql.travelaudience.com/postgresqlinstance-name names the cluster-scoped PostgresqlInstance "shadow-ns-only" (postgresqlinstances.cloudsql.travelaudience.com), which does not exist`)))
}

// A cache that has seen only one of the two instances of a name decides
// nothing by itself: the other, new one is found through the API server, and
// the bare name is denied as ambiguous whichever scope the cache missed.
func TestStaleCacheHidesNoShadow(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	cpi := readyInstance(t, "late", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"late-ns"}}
	})
	namespace(t, "late-ns", nil)
	npi := readyNamespacedInstance(t, "late-ns", "late")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cpi), cpi)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(npi), npi)).To(Succeed())

	for name, seen := range map[string]client.Object{"namespaced-only": npi, "cluster-only": cpi} {
		stale := fake.NewClientBuilder().WithScheme(env.Scheme).WithObjects(seen.DeepCopyObject().(client.Object)).Build()
		resp := admit(g, injector(g, stale), "late-ns", annotatedPod("", "web", "late"))
		g.Expect(resp.Allowed).To(BeFalse(), "a cache that has seen the %s instance", name)
		g.Expect(resp.Result.Message).To(And(
			ContainSubstring(`which names both PostgresqlInstance "late" of namespace late-ns`),
			ContainSubstring(`the cluster-scoped PostgresqlInstance "late"`)), name)
	}
}

// The same holds for users: a bare name of a namespaced and a cluster-scoped
// PostgresqlUser is denied with both named, <namespace>/<name> connects as
// the namespace's own and /<name> as the cluster-scoped one.
func TestBareUserNameOfBothScopesIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "shadow-pg", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"shadow-users"}}
	})
	namespace(t, "shadow-users", nil)
	readyNamespacedInstance(t, "shadow-users", "local-pg")
	// Of different instances: the two are different logins.
	readyClusterUser(t, "shadowed-login", "shadow-pg", []string{"shared_app"})
	readyNamespacedUser(t, "shadow-users", "shadowed-login", onNamespaced("local-pg"), "local_app")

	err := env.Client.Create(ctx, userPod("shadow-users", "web", "shadowed-login", ""))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`pod shadow-users/web: annotation cloudsql.travelaudience.com/postgresqluser-name is "shadowed-login", which names both `+
			`PostgresqlUser "shadowed-login" of namespace shadow-users (cloudsql.m.travelaudience.com) and the cluster-scoped PostgresqlUser "shadowed-login" (cloudsql.travelaudience.com)`),
		ContainSubstring(`set the annotation to "shadow-users/shadowed-login" for the one of namespace shadow-users, or to "/shadowed-login" for the cluster-scoped one`),
	)))
	g.Expect(absent("shadow-users", podinject.UserCopyName("shadowed-login"))()).To(BeTrue(), "a denied pod copies no password")

	own := userPod("shadow-users", "own", "shadow-users/shadowed-login", "")
	g.Expect(env.Client.Create(ctx, own)).To(Succeed())
	g.Expect(own.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.m.travelaudience.com/local-pg"))
	g.Expect(envOf(own.Spec.Containers[0])).To(HaveKeyWithValue(podinject.EnvDatabase, "local_app"))
	g.Expect(secretVolume(g, own, podinject.PgpassSecretVolumeName).SecretName).To(Equal("shadowed-login-login"))

	shared := userPod("shadow-users", "shared", "/shadowed-login", "")
	g.Expect(env.Client.Create(ctx, shared)).To(Succeed())
	g.Expect(shared.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationInjectedInstance, "postgresqlinstances.cloudsql.travelaudience.com/shadow-pg"))
	g.Expect(envOf(shared.Spec.Containers[0])).To(HaveKeyWithValue(podinject.EnvDatabase, "shared_app"))
	g.Expect(secretVolume(g, shared, podinject.PgpassSecretVolumeName).SecretName).To(Equal(podinject.UserCopyName("shadowed-login")))
}
