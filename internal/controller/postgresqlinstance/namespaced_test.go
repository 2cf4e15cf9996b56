package postgresqlinstance_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// namespaced makes a namespaced PostgresqlInstance in ns, with its connection
// secret beside it, and deletes it (waiting for its finalizer) when the test ends.
func (h *harness) namespaced(ns, name string, ref xpv2.ProviderConfigReference) *nsv1alpha1.PostgresqlInstance {
	h.t.Helper()
	h.g.Expect(client.IgnoreAlreadyExists(env.Client.Create(h.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	pi.Spec.ProviderConfigReference = &ref
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	h.g.Expect(env.Client.Create(h.ctx, pi)).To(Succeed())
	h.t.Cleanup(func() {
		_ = env.Client.Delete(h.ctx, pi)
		h.g.Eventually(func() bool {
			return kerrors.IsNotFound(env.Client.Get(h.ctx, client.ObjectKeyFromObject(pi), &nsv1alpha1.PostgresqlInstance{}))
		}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "namespaced instance %s/%s kept its finalizer", ns, name)
	})
	return pi
}

func (h *harness) namespacedCondition(pi *nsv1alpha1.PostgresqlInstance, ct xpv2.ConditionType) func() (xpv2.Condition, error) {
	return func() (xpv2.Condition, error) {
		got := &nsv1alpha1.PostgresqlInstance{}
		err := env.Client.Get(h.ctx, client.ObjectKeyFromObject(pi), got)
		return got.GetCondition(ct), err
	}
}

// A namespaced PostgresqlInstance is created through a ClusterProviderConfig,
// with its secret in its own namespace; one of another namespace that maps to
// the same Cloud SQL name, through a ProviderConfig of its own namespace, never
// touches the first one's instance; deleting the first deletes its instance.
func TestNamespacedInstance(t *testing.T) {
	h := newHarness(t)
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: h.pc}, Spec: v1alpha1.ProviderConfigSpec{
		Project:     v1alpha1.Project{ProjectID: h.project, Endpoint: h.srvURL},
		Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
	}}
	h.g.Expect(env.Client.Create(h.ctx, cpc)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(h.ctx, cpc) })

	teamA := h.namespaced("team-a", "orders", xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: h.pc})
	h.g.Eventually(h.namespacedCondition(teamA, xpv2.TypeReady), 30*time.Second, 100*time.Millisecond).
		Should(HaveField("Status", corev1.ConditionTrue))
	sec := &corev1.Secret{}
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKey{Namespace: "team-a", Name: "orders-postgres"}, sec)).To(Succeed())
	h.g.Expect(sec.Data).To(HaveKey(cloudsql.ConnectionKeyPassword))
	h.g.Expect(sec.Data[cloudsql.ConnectionKeyEndpoint]).NotTo(BeEmpty())
	h.g.Expect(metav1.GetControllerOf(sec)).To(HaveField("UID", teamA.GetUID()), "the connection secret belongs to the namespaced instance")
	db, err := h.emu.Instance(h.project, "orders")
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(db.Settings.UserLabels).To(HaveKeyWithValue(v1alpha1.OwnerUIDLabelKey, string(teamA.GetUID())))

	// Another namespace, another kind of provider configuration, the same
	// Cloud SQL name: refused, and the first one's instance is left alone.
	pcB := &nsv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "default"}, Spec: nsv1alpha1.ProviderConfigSpec{
		Project:     v1alpha1.Project{ProjectID: h.project, Endpoint: h.srvURL},
		Credentials: nsv1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceNone},
	}}
	h.g.Expect(client.IgnoreAlreadyExists(env.Client.Create(h.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}}))).To(Succeed())
	h.g.Expect(env.Client.Create(h.ctx, pcB)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(h.ctx, pcB) })
	writes := h.writes()
	teamB := h.namespaced("team-b", "orders", xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "default"})
	h.g.Eventually(h.namespacedCondition(teamB, xpv2.TypeSynced), 30*time.Second, 100*time.Millisecond).
		Should(And(HaveField("Status", corev1.ConditionFalse), HaveField("Message", ContainSubstring(fmt.Sprintf("Cloud SQL instance orders in project %s belongs to another PostgresqlInstance (uid %s)", h.project, teamA.GetUID())))))
	h.g.Expect(h.writes()).To(Equal(writes), "the second object must not write to the first one's instance")
	db, err = h.emu.Instance(h.project, "orders")
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(db.Settings.UserLabels).To(HaveKeyWithValue(v1alpha1.OwnerUIDLabelKey, string(teamA.GetUID())))

	// Deleting the first deletes its instance.
	h.g.Expect(env.Client.Delete(h.ctx, teamA)).To(Succeed())
	h.g.Eventually(func() error { _, err := h.emu.Instance(h.project, "orders"); return err }, 30*time.Second, 100*time.Millisecond).
		Should(HaveOccurred(), "the instance of the deleted namespaced PostgresqlInstance must go")
	h.g.Expect(meta.GetExternalName(teamB)).To(BeEmpty())
}
