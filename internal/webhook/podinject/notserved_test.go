package podinject

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
)

// notServed answers every read as an API server that serves no
// PostgresqlInstances does: the kind's CRD is not installed (safe-start, not
// activated).
type notServed struct{}

func (notServed) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return &apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: v1alpha1.Group, Kind: v1alpha1.PostgresqlInstanceKind}, SearchedVersions: []string{v1alpha1.Version}}
}

func (notServed) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return &apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: v1alpha1.Group, Kind: v1alpha1.PostgresqlInstanceKind}, SearchedVersions: []string{v1alpha1.Version}}
}

func TestDeniedWhileTheKindIsNotServed(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	cfg, err := ConfigFrom(configfile.Defaults(), true)
	g.Expect(err).NotTo(HaveOccurred())
	inj := NewInjector(notServed{}, notServed{}, nil, scheme, cfg)

	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "team-a", Annotations: map[string]string{v1alpha1.AnnotationInstanceName: "orders"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
	raw, err := json.Marshal(pod)
	g.Expect(err).NotTo(HaveOccurred())
	resp := inj.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: "team-a", Object: runtime.RawExtension{Raw: raw},
	}})
	g.Expect(resp.Allowed).To(BeFalse())
	g.Expect(resp.Result.Code).To(Equal(int32(http.StatusForbidden)), "a denial the user can act on, not a server error")
	g.Expect(resp.Result.Message).To(And(
		ContainSubstring("team-a/app"),
		ContainSubstring(`PostgresqlInstance "orders"`),
		ContainSubstring("activate the ManagedResourceDefinition postgresqlinstances.cloudsql.travelaudience.com")))
}
