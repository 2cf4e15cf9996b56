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
	"encoding/json"
	"net/http"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// What one namespace can do to another's access, and to the platform's secrets,
// through the injector.

// An instance without spec.injection serves no namespace: the provider's
// default allows none.
func TestInstanceWithoutInjectionServesNoNamespace(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	readyInstance(t, "unnamed", func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.Injection = nil })
	namespace(t, "unnamed-app", nil)
	err := env.Client.Create(context.Background(), annotatedPod("unnamed-app", "web", "unnamed"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`PostgresqlInstance "unnamed" may not be used from namespace unnamed-app`),
		ContainSubstring("[injection] default_allowed_namespaces ([] (none))"),
		ContainSubstring("spec.injection.allowedNamespaces"),
	)))
	g.Expect(absent("unnamed-app", podinject.CopyName(podinject.CopyPgpass, "unnamed"))()).To(BeTrue(), "no namespace gets the password by default")
}

// admit sends a pod to inj as the API server would for namespace ns.
func admit(g Gomega, inj admission.Handler, ns string, pod *corev1.Pod) admission.Response {
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	raw, err := json.Marshal(pod)
	g.Expect(err).ToNot(HaveOccurred())
	return inj.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: types.UID("req-" + pod.Name), Operation: admissionv1.Create, Namespace: ns, Object: runtime.RawExtension{Raw: raw},
	}})
}

func injector(g Gomega, cached client.Reader) *podinject.Injector {
	cfg, err := podinject.ConfigFrom(configfile.Defaults(), true)
	g.Expect(err).ToNot(HaveOccurred())
	return podinject.NewInjector(cached, env.Client, env.Client, env.Scheme, cfg)
}

// A request for one namespace that carries a pod of another did not come from
// the API server (which puts the request's namespace in the pod, or leaves it
// empty): it is refused, and nothing is copied into either namespace.
func TestForgedPodNamespaceIsRefused(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	readyInstance(t, "forged")
	namespace(t, "forged-app", nil)
	namespace(t, "forged-other", nil)
	inj := injector(g, env.Client)

	resp := admit(g, inj, "forged-other", annotatedPod("forged-app", "web", "forged"))
	g.Expect(resp.Allowed).To(BeFalse())
	g.Expect(resp.Result.Code).To(Equal(int32(http.StatusForbidden)))
	g.Expect(resp.Result.Message).To(And(
		ContainSubstring("pod forged-app/web"),
		ContainSubstring("the admission request is for namespace forged-other but the pod's metadata.namespace is forged-app"),
	))
	for _, ns := range []string{"forged-app", "forged-other"} {
		g.Expect(absent(ns, podinject.CopyName(podinject.CopyPgpass, "forged"))()).To(BeTrue(), "nothing is copied into %s", ns)
	}

	// Without metadata.namespace, the pod is the request's.
	resp = admit(g, inj, "forged-app", annotatedPod("", "web", "forged"))
	g.Expect(resp.Allowed).To(BeTrue(), "%v", resp.Result)
	g.Expect(resp.Patches).ToNot(BeEmpty())
}

// An allow decided from a cache that has not seen spec.injection shrink yet is
// confirmed against the API server before the password is copied.
func TestStaleAllowIsConfirmedLive(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	pi := readyInstance(t, "stale", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"stale-app", "stale-closed"}}
	})
	namespace(t, "stale-app", nil)
	namespace(t, "stale-closed", nil)
	// The cache keeps the instance as it was; the API server has it closed
	// to stale-closed.
	old := pi.DeepCopy()
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.Injection.AllowedNamespaces = []string{"stale-app"}
	g.Expect(env.Client.Update(context.Background(), pi)).To(Succeed())
	stale := fake.NewClientBuilder().WithScheme(env.Scheme).WithObjects(old).WithStatusSubresource(old).Build()
	inj := injector(g, stale)

	resp := admit(g, inj, "stale-closed", annotatedPod("", "web", "stale"))
	g.Expect(resp.Allowed).To(BeFalse())
	g.Expect(resp.Result.Message).To(ContainSubstring(`PostgresqlInstance "stale" may not be used from namespace stale-closed`))
	g.Expect(absent("stale-closed", podinject.CopyName(podinject.CopyPgpass, "stale"))()).To(BeTrue(), "the password must not reach a namespace the instance no longer allows")

	resp = admit(g, inj, "stale-app", annotatedPod("", "web", "stale"))
	g.Expect(resp.Allowed).To(BeTrue(), "%v", resp.Result)
}

// Secrets that a tenant made with a copy's name and labels, in a namespace the
// instance allows and in one it does not, are neither written nor deleted:
// only the copies the injector made (owner reference to the instance's UID)
// are. The kind of a copy is its name's, whatever its label says.
func TestTenantMadeCopiesAreLeftAlone(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := readyInstance(t, "lured", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"lured-app", "lured-open"}}
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: pcProxyKey}
	})
	namespace(t, "lured-app", nil)
	namespace(t, "lured-open", nil)
	namespace(t, "lured-closed", nil)
	// A copy the injector made: it shows when the copy reconciler has run.
	g.Expect(env.Client.Create(ctx, annotatedPod("lured-app", "web", "lured"))).To(Succeed())
	pgpass, key := podinject.CopyName(podinject.CopyPgpass, "lured"), podinject.CopyName(podinject.CopyProxyCredentials, "lured")

	forged := func(ns, name, kind string, owners ...metav1.OwnerReference) *corev1.Secret {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners,
				Labels: map[string]string{v1alpha1.LabelInstance: "lured", podinject.LabelCopyKind: kind}},
			Data: map[string][]byte{"mine": []byte("tenant data")},
		}
		g.Expect(env.Client.Create(ctx, s)).To(Succeed())
		return s
	}
	otherUID := metav1.OwnerReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.PostgresqlInstanceKind, Name: "lured", UID: "0c6f0b5e-0000-4000-8000-000000000000"}
	made := []*corev1.Secret{
		// Allowed namespace, no pod asked: a refresher of earlier releases filled these.
		forged("lured-open", pgpass, podinject.CopyPgpass),
		forged("lured-open", key, podinject.CopyPgpass), // a key's name, a password's label
		// An owner reference naming the instance, but not its UID.
		forged("lured-closed", pgpass, podinject.CopyPgpass, otherUID),
		// A namespace the instance does not allow: a refresher of earlier releases deleted it.
		forged("lured-closed", key, podinject.CopyProxyCredentials),
	}

	// A new password and a change of the instance make the copy reconciler run.
	cs := secret(g, secretNS, "lured-postgres")
	cs.Data[cloudsql.ConnectionKeyPgpass] = []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, "rotated"))
	g.Expect(env.Client.Update(ctx, cs)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(secret(g, "lured-app", pgpass).Data[cloudsql.ConnectionKeyPgpass]).To(Equal(cs.Data[cloudsql.ConnectionKeyPgpass]))
	}, eventually, poll).Should(Succeed(), "the injector's own copy is refreshed")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.Injection.AllowedNamespaces = append(pi.Spec.Injection.AllowedNamespaces, "lured-later")
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())

	g.Consistently(func(g Gomega) {
		for _, m := range made {
			s := secret(g, m.Namespace, m.Name)
			g.Expect(s.UID).To(Equal(m.UID), "%s/%s is the tenant's", m.Namespace, m.Name)
			g.Expect(s.Data).To(Equal(m.Data), "%s/%s holds what its tenant wrote", m.Namespace, m.Name)
		}
	}, 2*time.Second, poll).Should(Succeed())
}

// A proxy key copied into a namespace follows its source: a new key replaces
// it, and it goes when the namespace loses access or the key's secret goes.
func TestProxyKeyCopiesFollowTheirSource(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	keySecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: "revoked-key"}, Data: map[string][]byte{"key.json": []byte(`{"v":1}`)}}
	g.Expect(env.Client.Create(ctx, keySecret)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "revoked-key"},
		Spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: project, Endpoint: "http://127.0.0.1:1/"},
			Credentials:      v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
			ProxyCredentials: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: secretNS, Name: "revoked-key"}, Key: "key.json"}},
	})).To(Succeed())
	pi := readyInstance(t, "revoked", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"revoked-a", "revoked-b"}}
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "revoked-key"}
	})
	key := podinject.CopyName(podinject.CopyProxyCredentials, "revoked")
	for _, ns := range []string{"revoked-a", "revoked-b"} {
		namespace(t, ns, nil)
		g.Expect(env.Client.Create(ctx, annotatedPod(ns, "web", "revoked"))).To(Succeed())
		g.Expect(secret(g, ns, key).Data).To(Equal(map[string][]byte{podinject.ProxyCredentialsKey: []byte(`{"v":1}`)}))
	}

	// A new key reaches every copy.
	keySecret.Data["key.json"] = []byte(`{"v":2}`)
	g.Expect(env.Client.Update(ctx, keySecret)).To(Succeed())
	for _, ns := range []string{"revoked-a", "revoked-b"} {
		g.Eventually(func(g Gomega) {
			g.Expect(secret(g, ns, key).Data[podinject.ProxyCredentialsKey]).To(Equal([]byte(`{"v":2}`)))
		}, eventually, poll).Should(Succeed(), "namespace %s", ns)
	}

	// A namespace that loses access loses the key.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.Injection.AllowedNamespaces = []string{"revoked-a"}
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())
	g.Eventually(absent("revoked-b", key), eventually, poll).Should(BeTrue())

	// The platform deletes the key: no copy of it stays.
	g.Expect(env.Client.Delete(ctx, keySecret)).To(Succeed())
	g.Eventually(absent("revoked-a", key), eventually, poll).Should(BeTrue())
	g.Consistently(absent("revoked-a", podinject.CopyName(podinject.CopyPgpass, "revoked")), time.Second, poll).Should(BeFalse(), "the password stays")
}

// The copy reconciler finds copies in the cache of secrets' metadata: refreshing
// copies lists no secrets at the API server (each list walked every secret of
// the cluster).
func TestRefreshingListsNoSecrets(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "counted")
	namespace(t, "counted-app", nil)
	g.Expect(env.Client.Create(ctx, annotatedPod("counted-app", "web", "counted"))).To(Succeed())
	name := podinject.CopyName(podinject.CopyPgpass, "counted")

	before := secretLists.Load()
	for i, pw := range []string{"one", "two", "three"} {
		cs := secret(g, secretNS, "counted-postgres")
		cs.Data[cloudsql.ConnectionKeyPgpass] = []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, pw))
		g.Expect(env.Client.Update(ctx, cs)).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(secret(g, "counted-app", name).Data[cloudsql.ConnectionKeyPgpass]).To(Equal(cs.Data[cloudsql.ConnectionKeyPgpass]))
		}, eventually, poll).Should(Succeed(), "refresh %d", i)
	}
	g.Expect(secretLists.Load()-before).To(BeZero(), "lists of secrets sent to the API server while refreshing")
}

// The cache of secrets' metadata holds no last applied configuration, which
// kubectl apply fills with the secret's whole data.
func TestSecretMetadataCacheHoldsNoAppliedData(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "applied", nil)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "applied", Name: "applied", Annotations: map[string]string{
		corev1.LastAppliedConfigAnnotation: `{"apiVersion":"v1","kind":"Secret","data":{"password":"c2VjcmV0"}}`,
		"example.com/kept":                 "yes",
	}}, Data: map[string][]byte{"password": []byte("secret")}}
	g.Expect(env.Client.Create(ctx, s)).To(Succeed())

	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	g.Eventually(func() error { return cached.Get(ctx, client.ObjectKeyFromObject(s), m) }, eventually, poll).Should(Succeed())
	g.Expect(m.Annotations).To(Equal(map[string]string{"example.com/kept": "yes"}))
	g.Expect(m.ManagedFields).To(BeEmpty())
}
