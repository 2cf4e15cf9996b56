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
	"encoding/json"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// A pod that names an instance, or a user, while their kinds are not served is
// denied with what to do, not answered with a server error.
func TestDeniedWhileTheKindIsNotServed(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	// An API server without the provider's CRDs, as with safe-start before the
	// kind is activated: reads of PostgresqlInstances find no such kind.
	env, err := controlplane.Start(controlplane.WithCRDsFrom())
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	cfg, err := ConfigFrom(configfile.Defaults(), true)
	g.Expect(err).NotTo(HaveOccurred())
	inj := NewInjector(env.Client, env.Client, env.Client, env.Scheme, cfg)

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
		ContainSubstring("this cluster serves no PostgresqlInstances"),
		ContainSubstring("activate the ManagedResourceDefinition postgresqlinstances.cloudsql.m.travelaudience.com or postgresqlinstances.cloudsql.travelaudience.com")))

	// The same for a pod that names a PostgresqlUser.
	pod.Annotations = map[string]string{v1alpha1.AnnotationUserName: "orders-app"}
	raw, err = json.Marshal(pod)
	g.Expect(err).NotTo(HaveOccurred())
	resp = inj.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: "team-a", Object: runtime.RawExtension{Raw: raw},
	}})
	g.Expect(resp.Allowed).To(BeFalse())
	g.Expect(resp.Result.Code).To(Equal(int32(http.StatusForbidden)), "a denial the user can act on, not a server error")
	g.Expect(resp.Result.Message).To(And(
		ContainSubstring("team-a/app"),
		ContainSubstring(`PostgresqlUser "orders-app"`),
		ContainSubstring("this cluster serves no PostgresqlUsers"),
		ContainSubstring("activate the ManagedResourceDefinition postgresqlusers.cloudsql.m.travelaudience.com or postgresqlusers.cloudsql.travelaudience.com")))
}
