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
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/instance"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

const (
	eventually = 20 * time.Second
	poll       = 50 * time.Millisecond
)

func containerNames(cs []corev1.Container) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return n
}

func envOf(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

func secret(g Gomega, ns, name string) *corev1.Secret {
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

func absent(ns, name string) func() bool {
	return func() bool {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
		return kerrors.IsNotFound(err)
	}
}

func TestAnnotatedPodIsStoredInjected(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "stored")
	namespace(t, "stored-app", nil)

	p := annotatedPod("stored-app", "web", "stored")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())

	got := &corev1.Pod{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
	g.Expect(containerNames(got.Spec.InitContainers)).To(Equal([]string{"cloudsql-pgpass-0", "cloudsql-pgpass-follow-0", podinject.ProxyContainerName}))
	proxy := got.Spec.InitContainers[2]
	g.Expect(proxy.RestartPolicy).To(Equal(ptr.To(corev1.ContainerRestartPolicyAlways)))
	g.Expect(proxy.Args).To(ContainElement("--health-check"))
	g.Expect(proxy.Args[len(proxy.Args)-1]).To(Equal(project + ":europe-west1:stored"))
	g.Expect(proxy.Args).ToNot(ContainElement("--private-ip"), "the instance has a public IP")
	g.Expect(proxy.Args).To(ContainElement("--sqladmin-api-endpoint="+endpoint), "the proxy calls the Admin API where ProviderConfig default says")
	g.Expect(proxy.StartupProbe).ToNot(BeNil())
	g.Expect(proxy.LivenessProbe).ToNot(BeNil())
	app := got.Spec.Containers[0]
	e := envOf(app)
	g.Expect(e).To(HaveKeyWithValue("PGHOST", "127.0.0.1"))
	g.Expect(e).To(HaveKeyWithValue("PGUSER", "postgres"))
	g.Expect(e).To(HaveKeyWithValue("PGPASSFILE", podinject.PgpassDir+"/pgpass-0"))
	g.Expect(e["PGPORT"]).To(MatchRegexp(`^\d{5}$`))

	// The password came along, alone, labelled with the instance.
	s := secret(g, "stored-app", podinject.CopyName(podinject.CopyPgpass, "stored"))
	g.Expect(s.Labels).To(HaveKeyWithValue(v1alpha1.LabelInstance, "stored"))
	g.Expect(s.Data).To(Equal(map[string][]byte{cloudsql.ConnectionKeyPgpass: []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, "pw-stored"))}))
	g.Expect(s.OwnerReferences).To(HaveLen(1))
	g.Expect(s.OwnerReferences[0].Kind).To(Equal(v1alpha1.PostgresqlInstanceKind))
	g.Expect(absent("stored-app", podinject.CopyName(podinject.CopyProxyCredentials, "stored"))()).To(BeTrue(), "ProviderConfig default has no proxy key")
	g.Expect(testutil.ToFloat64(metrics.Injections.WithLabelValues("stored-app", metrics.OutcomeInjected))).To(Equal(1.0))
}

func TestClassicSidecarOnTheSameAPIServer(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pods.use(t, false)
	readyInstance(t, "classic", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Status.AtProvider = v1alpha1.PostgresqlInstanceObservation{ConnectionName: project + ":europe-west1:classic", PrivateIP: "10.0.0.3"}
	})
	namespace(t, "classic-app", nil)
	p := annotatedPod("classic-app", "web", "classic")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	g.Expect(containerNames(p.Spec.Containers)).To(Equal([]string{podinject.ProxyContainerName, "cloudsql-pgpass-follow-0", "app"}))
	g.Expect(containerNames(p.Spec.InitContainers)).To(Equal([]string{"cloudsql-pgpass-0"}))
	g.Expect(p.Spec.Containers[0].RestartPolicy).To(BeNil())
	g.Expect(p.Spec.Containers[0].Lifecycle.PostStart.Exec.Command).To(ContainElement("wait"))
	g.Expect(p.Spec.Containers[0].Args).To(ContainElement("--private-ip"), "the instance has no public IP")
}

func TestUnannotatedPodIsNeverSentToTheWebhook(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "plain-app", nil)
	before := pods.calls.Load()
	p := plainPod("plain-app", "web")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	got := &corev1.Pod{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
	g.Expect(got.Annotations).To(BeEmpty())
	g.Expect(got.Spec.InitContainers).To(BeEmpty())
	g.Expect(containerNames(got.Spec.Containers)).To(Equal([]string{"app"}))
	g.Expect(got.Spec.Containers[0].Env).To(BeEmpty())
	g.Expect(got.Spec.Volumes).To(BeEmpty())
	g.Expect(pods.calls.Load()).To(Equal(before), "matchConditions must keep pods that do not ask for injection away from the webhook")
}

func TestKubeSystemIsSkipped(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	before := pods.calls.Load()
	p := annotatedPod("kube-system", "skipped", "does-not-exist")
	g.Expect(env.Client.Create(context.Background(), p)).To(Succeed())
	g.Expect(p.Annotations).ToNot(HaveKey(v1alpha1.AnnotationProxyInjected))
	g.Expect(pods.calls.Load()).To(Equal(before))
}

func TestMissingInstanceIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	namespace(t, "missing-app", nil)
	err := env.Client.Create(context.Background(), annotatedPod("missing-app", "web", "no-such-instance"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring("pod missing-app/web"),
		ContainSubstring(`annotation cloudsql.travelaudience.com/postgresqlinstance-name names PostgresqlInstance "no-such-instance", which exists neither in the pod's namespace missing-app (postgresqlinstances.cloudsql.m.travelaudience.com) nor cluster-scoped (postgresqlinstances.cloudsql.travelaudience.com)`),
		ContainSubstring("not its spec.forProvider.name"),
	)))
	g.Expect(testutil.ToFloat64(metrics.Injections.WithLabelValues("missing-app", metrics.OutcomeDenied))).To(Equal(1.0))
}

func TestInstanceNotReadyIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := readyInstance(t, "unready")
	pi.SetConditions(xpv2.Creating())
	g.Expect(env.Client.Status().Update(ctx, pi)).To(Succeed())
	namespace(t, "unready-app", nil)
	err := env.Client.Create(ctx, annotatedPod("unready-app", "web", "unready"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`PostgresqlInstance "unready" is not ready (Ready is False, reason Creating)`),
		ContainSubstring("kubectl get postgresqlinstances.cloudsql.travelaudience.com/unready"),
	)))
}

func TestDisallowedNamespaceIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "guarded", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{
			AllowedNamespaces: []string{"guarded-a"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "payments"}},
		}
	})
	namespace(t, "guarded-a", nil)
	namespace(t, "guarded-b", nil)
	namespace(t, "guarded-c", map[string]string{"team": "payments"})

	err := env.Client.Create(ctx, annotatedPod("guarded-b", "web", "guarded"))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`pod guarded-b/web: PostgresqlInstance "guarded" may not be used from namespace guarded-b`),
		ContainSubstring("spec.injection.allowedNamespaces [guarded-a]"),
		ContainSubstring("team=payments"),
	)))
	g.Expect(absent("guarded-b", podinject.CopyName(podinject.CopyPgpass, "guarded"))()).To(BeTrue(), "a denied namespace must not get the password")

	g.Expect(env.Client.Create(ctx, annotatedPod("guarded-a", "web", "guarded"))).To(Succeed())
	g.Expect(env.Client.Create(ctx, annotatedPod("guarded-c", "web", "guarded"))).To(Succeed(), "the label selector allows guarded-c")
}

func TestEmptyInjectionAllowsNoNamespace(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	readyInstance(t, "closed", func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.Injection = &v1alpha1.Injection{} })
	namespace(t, "closed-app", nil)
	err := env.Client.Create(context.Background(), annotatedPod("closed-app", "web", "closed"))
	g.Expect(err).To(MatchError(ContainSubstring("its spec.injection is empty, which allows no namespace")))
}

func TestInstanceNameTooLongForALabelIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	long := "long-" + strings.Repeat("n", 60)
	readyInstance(t, long, func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.ForProvider.Name = ptr.To("short-name")
		pi.Spec.Injection.AllowedNamespaces = []string{"long-app"}
	})
	namespace(t, "long-app", nil)
	err := env.Client.Create(context.Background(), annotatedPod("long-app", "web", long))
	g.Expect(err).To(MatchError(And(
		ContainSubstring(`PostgresqlInstance "`+long+`" cannot be injected`),
		ContainSubstring("a label value holds at most 63 characters"),
	)))
}

func TestDryRunCreatesNoSecret(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	readyInstance(t, "dry")
	namespace(t, "dry-app", nil)
	p := annotatedPod("dry-app", "web", "dry")
	g.Expect(env.Client.Create(context.Background(), p, client.DryRunAll)).To(Succeed())
	g.Expect(p.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"), "a dry run shows the injected pod")
	g.Expect(absent("dry-app", podinject.CopyName(podinject.CopyPgpass, "dry"))()).To(BeTrue())
}

func TestProxyKeyGoesToTheProxyOnly(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "keyed", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: pcProxyKey}
	})
	namespace(t, "keyed-app", nil)
	p := annotatedPod("keyed-app", "web", "keyed")
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())

	s := secret(g, "keyed-app", podinject.CopyName(podinject.CopyProxyCredentials, "keyed"))
	g.Expect(s.Data).To(Equal(map[string][]byte{podinject.ProxyCredentialsKey: []byte(`{"type":"service_account"}`)}))
	for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
		mounted := false
		for _, m := range c.VolumeMounts {
			mounted = mounted || m.Name == podinject.ProxyCredentialsVolumeName
		}
		g.Expect(mounted).To(Equal(c.Name == podinject.ProxyContainerName), "container %s", c.Name)
	}
}

func TestCopiesFollowTheInstance(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := readyInstance(t, "followed", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"followed-a", "followed-b"}}
		pi.Annotations = map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}
	})
	name := podinject.CopyName(podinject.CopyPgpass, "followed")
	for _, ns := range []string{"followed-a", "followed-b"} {
		namespace(t, ns, nil)
		g.Expect(env.Client.Create(ctx, annotatedPod(ns, "web", "followed"))).To(Succeed())
		secret(g, ns, name)
	}

	// A new password reaches every copy.
	cs := secret(g, secretNS, "followed-postgres")
	cs.Data[cloudsql.ConnectionKeyPgpass] = []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, "rotated"))
	g.Expect(env.Client.Update(ctx, cs)).To(Succeed())
	for _, ns := range []string{"followed-a", "followed-b"} {
		g.Eventually(func(g Gomega) {
			g.Expect(secret(g, ns, name).Data[cloudsql.ConnectionKeyPgpass]).To(Equal([]byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, "rotated"))))
		}, eventually, poll).Should(Succeed(), "namespace %s", ns)
	}

	// A namespace that may no longer use the instance loses its copy.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	pi.Spec.Injection.AllowedNamespaces = []string{"followed-a"}
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())
	g.Eventually(absent("followed-b", name), eventually, poll).Should(BeTrue())
	g.Consistently(absent("followed-a", name), time.Second, poll).Should(BeFalse())

	// The instance goes, and so do its copies.
	g.Expect(env.Client.Delete(ctx, pi)).To(Succeed())
	g.Eventually(absent("followed-a", name), eventually, poll).Should(BeTrue())
}

func TestNamespaceThatStopsMatchingLosesItsCopy(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "selected", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"db": "selected"}}}
	})
	namespace(t, "selected-app", map[string]string{"db": "selected"})
	g.Expect(env.Client.Create(ctx, annotatedPod("selected-app", "web", "selected"))).To(Succeed())
	name := podinject.CopyName(podinject.CopyPgpass, "selected")
	secret(g, "selected-app", name)

	ns := &corev1.Namespace{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "selected-app"}, ns)).To(Succeed())
	delete(ns.Labels, "db")
	g.Expect(env.Client.Update(ctx, ns)).To(Succeed())
	g.Eventually(absent("selected-app", name), eventually, poll).Should(BeTrue())
}

func TestProxyKeyCopiesGoWhenTheProviderConfigDropsTheKey(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "drops-key"},
		Spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: project, Endpoint: "http://127.0.0.1:1/"},
			Credentials:      v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
			ProxyCredentials: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: secretNS, Name: "proxy-key"}, Key: "key.json"}},
	})).To(Succeed())
	readyInstance(t, "dropped", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "drops-key"}
	})
	namespace(t, "dropped-app", nil)
	g.Expect(env.Client.Create(ctx, annotatedPod("dropped-app", "web", "dropped"))).To(Succeed())
	key := podinject.CopyName(podinject.CopyProxyCredentials, "dropped")
	// Let the reconciles that the new copies started finish, so that only the
	// change of the ProviderConfig can remove the key.
	g.Consistently(absent("dropped-app", key), time.Second, poll).Should(BeFalse())

	pc := &v1alpha1.ProviderConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "drops-key"}, pc)).To(Succeed())
	pc.Spec.ProxyCredentials = nil
	g.Expect(env.Client.Update(ctx, pc)).To(Succeed())
	g.Eventually(absent("dropped-app", key), eventually, poll).Should(BeTrue())
	g.Consistently(absent("dropped-app", podinject.CopyName(podinject.CopyPgpass, "dropped")), time.Second, poll).Should(BeFalse(), "the password stays")
}

// seedInstance puts an instance named name in the test project, as if created
// outside Kubernetes.
func seedInstance(g Gomega, name string) {
	g.Expect(emu.Seed(project, &sqladmin.DatabaseInstance{
		Name: name, DatabaseVersion: "POSTGRES_15", Region: "europe-west1",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	})).To(Succeed())
}

func TestDuplicateNameIsDeniedAtCreation(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	seedInstance(g, "taken-db")

	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "wants-taken"}}
	pi.Spec.ForProvider.Name = ptr.To("taken-db")
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: "wants-taken"}
	err := env.Client.Create(ctx, pi.DeepCopy())
	g.Expect(err).To(MatchError(And(
		ContainSubstring("PostgresqlInstance wants-taken: a Cloud SQL instance named taken-db already exists in project "+project),
		ContainSubstring(`spec.managementPolicies ["Observe"]`),
	)))
	// Named by metadata.name, the same.
	byMeta := pi.DeepCopy()
	byMeta.Name, byMeta.Spec.ForProvider.Name = "taken-db", nil
	g.Expect(env.Client.Create(ctx, byMeta)).To(MatchError(ContainSubstring("a Cloud SQL instance named taken-db already exists")))
	// A dry run asks Cloud SQL nothing, so that dry runs spend none of the
	// request budget: with no listing at hand (this webhook keeps none; see
	// dryrun_test.go for one that does), it is admitted with a warning, and
	// nothing is created.
	c, warned := warningClient(t)
	g.Expect(c.Create(ctx, pi.DeepCopy(), client.DryRunAll)).To(Succeed())
	g.Expect(warned.all()).To(ConsistOf(ContainSubstring("was not checked on this dry run: no listing of the project is at hand")))
	g.Expect(kerrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi.DeepCopy()))).To(BeTrue())

	// Observing the existing instance is what the name is for.
	observe := pi.DeepCopy()
	observe.Name = "observes-taken"
	observe.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	g.Expect(env.Client.Create(ctx, observe)).To(Succeed())

	free := pi.DeepCopy()
	free.Name, free.Spec.ForProvider.Name = "wants-free", ptr.To("free-db")
	g.Expect(env.Client.Create(ctx, free)).To(Succeed())
}

// A name check made while the controllers have spent the budget's share for
// reads and writes still runs: admission lookups keep a reserve of their own.
func TestNameCheckUsesTheAdmissionReserve(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	seedInstance(g, "taken-while-busy")
	w := budget.NewWindow(20, time.Hour, budget.WithWriteReserve(0.2), budget.WithAdmissionReserve(0.1))
	for range 16 {
		g.Expect(w.WaitRead(ctx)).To(Succeed(), "the controllers' polls")
	}
	for range 2 {
		g.Expect(w.Wait(ctx)).To(Succeed(), "the controllers' writes")
	}
	v := instance.New(env.Client, env.Client, env.Scheme, providerconfig.NewServiceCache(budget.NewTransport(nil, w)), instance.WithTimeout(2*time.Second))

	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "taken-while-busy"}}
	pi.SetGroupVersionKind(v1alpha1.PostgresqlInstanceGroupVersionKind)
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: pcDefault}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	raw, err := json.Marshal(pi)
	g.Expect(err).NotTo(HaveOccurred())
	resp := v.Handle(ctx, admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Name: pi.Name, Object: runtime.RawExtension{Raw: raw},
	}})
	g.Expect(resp.Allowed).To(BeFalse(), "admitted unchecked: %v", resp.Warnings)
	g.Expect(resp.Result.Message).To(ContainSubstring("a Cloud SQL instance named taken-while-busy already exists"))
}

func TestNameAndProjectTooLongIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	long := strings.Repeat("p", 29) + "1" // 30 characters, the longest project ID
	g.Expect(env.Client.Create(ctx, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "long-project"},
		Spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: long, Endpoint: "http://127.0.0.1:1/"},
			Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}},
	})).To(Succeed())
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "too-long"}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "long-project"}
	pi.Spec.ForProvider.Name = ptr.To("a" + strings.Repeat("b", 67)) // 68 + 30 = 98
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: "too-long"}
	g.Expect(env.Client.Create(ctx, pi)).To(MatchError(And(
		ContainSubstring("PostgresqlInstance too-long: Cloud SQL instance name a"+strings.Repeat("b", 67)+" (68 characters) and project ID "+long+" (30 characters)"),
		ContainSubstring("add up to 98 characters, more than the 97 Cloud SQL allows"),
	)))
}

func TestExternalNameIsValidated(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "bad-external", Annotations: map[string]string{"crossplane.io/external-name": "Bad_Name"}}}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: "bad-external"}
	g.Expect(env.Client.Create(context.Background(), pi)).To(MatchError(And(
		ContainSubstring(`PostgresqlInstance bad-external: annotation crossplane.io/external-name "Bad_Name" is not a valid Cloud SQL instance name`),
		ContainSubstring("set spec.forProvider.name (or the annotation crossplane.io/external-name) to a valid name"),
	)))

	// Without the annotation, metadata.name is the instance name and must be valid.
	dotted := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "team.db"}}
	dotted.Spec = pi.Spec
	g.Expect(env.Client.Create(context.Background(), dotted)).To(MatchError(
		ContainSubstring(`PostgresqlInstance team.db: metadata.name "team.db" is not a valid Cloud SQL instance name`)))

	// With a valid annotation, metadata.name may be anything Kubernetes accepts.
	imported := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "orders.prod", Annotations: map[string]string{"crossplane.io/external-name": "orders-prod"}}}
	imported.Spec = pi.Spec
	imported.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	g.Expect(env.Client.Create(context.Background(), imported)).To(Succeed())
}

func TestUnreachableCloudSQLAdmitsWithAWarning(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "unreachable"},
		Spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: project, Endpoint: "http://127.0.0.1:1/"},
			Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}},
	})).To(Succeed())
	c, w := warningClient(t)
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "unchecked"}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "unreachable"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: "unchecked"}
	g.Expect(c.Create(ctx, pi)).To(Succeed())
	g.Expect(w.all()).To(ContainElement(And(
		ContainSubstring("PostgresqlInstance unchecked: whether a Cloud SQL instance named unchecked exists in project "+project+" was not checked"),
		ContainSubstring("the controller reports the conflict"),
	)))
}

func TestDeletionNeedsTheAnnotation(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "guarded-delete"}}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: "guarded-delete"}
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())

	want := And(
		ContainSubstring("PostgresqlInstance guarded-delete may not be deleted: deleting it deletes Cloud SQL instance guarded-delete"),
		ContainSubstring("kubectl annotate postgresqlinstances.cloudsql.travelaudience.com guarded-delete cloudsql.travelaudience.com/allow-deletion=true"),
	)
	g.Expect(env.Client.Delete(ctx, pi)).To(MatchError(want))
	g.Expect(env.Client.Delete(ctx, pi, client.DryRunAll)).To(MatchError(want), "dry-run deletions are answered like real ones")

	pi.Annotations = map[string]string{v1alpha1.AnnotationAllowDeletion: "false"}
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, pi)).To(MatchError(want), "only \"true\" allows deletion")

	pi.Annotations[v1alpha1.AnnotationAllowDeletion] = "true"
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, pi)).To(Succeed())
	g.Expect(kerrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi))).To(BeTrue())
}

// TestExampleDeploymentIsInjected admits a pod of the example Deployment that
// users copy, against a ready example-minimal instance.
func TestExampleDeploymentIsInjected(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	objs, err := manifests.ReadFile(filepath.Join(controlplane.RepoRoot(), "examples", "deployment-with-proxy.yaml"))
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(objs).To(HaveLen(1))
	d := &appsv1.Deployment{}
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, d)).To(Succeed())

	readyInstance(t, d.Spec.Template.Annotations[v1alpha1.AnnotationInstanceName], func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection.AllowedNamespaces = []string{"example-app"}
	})
	namespace(t, "example-app", nil)
	p := &corev1.Pod{ObjectMeta: d.Spec.Template.ObjectMeta, Spec: d.Spec.Template.Spec}
	p.Namespace, p.Name = "example-app", "psql-client"
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	g.Expect(containerNames(p.Spec.InitContainers)).To(Equal([]string{"cloudsql-pgpass-70", "cloudsql-pgpass-follow-70", podinject.ProxyContainerName}))
	g.Expect(envOf(p.Spec.Containers[0])).To(HaveKeyWithValue("PGPASSFILE", podinject.PgpassDir+"/pgpass-70"))
	g.Expect(*p.Spec.InitContainers[0].SecurityContext.RunAsUser).To(BeEquivalentTo(70))
}

// A password the provider has stored but Cloud SQL has not confirmed is not handed
// to pods: it may never work.
func TestUnconfirmedPasswordIsNotHandedOut(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "repairing")
	namespace(t, "repairing-app", nil)
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: "repairing-postgres"}, s)).To(Succeed())
	s.Annotations = map[string]string{v1alpha1.AnnotationPasswordUnconfirmed: "true"}
	g.Expect(env.Client.Update(ctx, s)).To(Succeed())

	err := env.Client.Create(ctx, annotatedPod("repairing-app", "web", "repairing"))
	g.Expect(err).To(MatchError(ContainSubstring(`the provider is setting a new password for PostgresqlInstance "repairing"`)))
	g.Expect(absent("repairing-app", podinject.CopyName(podinject.CopyPgpass, "repairing"))()).To(BeTrue())
}
