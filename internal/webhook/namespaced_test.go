package webhook_test

import (
	"context"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// The namespaced kind gets the cluster-scoped kind's checks: a name taken in the
// project of its ClusterProviderConfig is refused, and it is deleted only with
// the allow-deletion annotation, with messages that name its namespace.
func TestNamespacedInstanceIsValidated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	def := &v1alpha1.ProviderConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: pcDefault}, def)).To(Succeed())
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: def.Spec}
	g.Expect(env.Client.Create(ctx, cpc)).To(Succeed())
	namespace(t, "team-x", nil)
	seedInstance(g, "taken-by-ns")

	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "team-x", Name: "wants-taken"}}
	pi.Spec.ForProvider.Name = ptr.To("taken-by-ns")
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "wants-taken"}
	g.Expect(env.Client.Create(ctx, pi.DeepCopy())).To(MatchError(And(
		ContainSubstring("PostgresqlInstance team-x/wants-taken: a Cloud SQL instance named taken-by-ns already exists in project "+project),
		ContainSubstring("ClusterProviderConfig default"),
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
