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

package core

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// The finalizer's Update answers with the stored status; what the observation
// before it wrote must still be in the object the managed reconciler writes
// the status of next.
func TestAddingTheFinalizerKeepsTheObservation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(v1alpha1.SchemeBuilder.AddToScheme(scheme)).To(Succeed())
	stored := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "app"}}
	kube := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithStatusSubresource(stored).Build()
	k := statusKeeper{Finalizer: resource.NewAPIFinalizer(kube, ManagedFinalizer), name: ManagedFinalizer}

	u := &v1alpha1.PostgresqlUser{}
	g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(stored), u)).To(Succeed())
	// What a first observation writes.
	u.Status.AtProvider.Name = "app"
	u.SetConditions(xpv2.Available())
	g.Expect(k.AddFinalizer(ctx, u)).To(Succeed())
	g.Expect(u.GetFinalizers()).To(ConsistOf(ManagedFinalizer))
	g.Expect(u.Status.AtProvider.Name).To(Equal("app"))
	g.Expect(u.GetCondition(xpv2.TypeReady).Reason).To(Equal(xpv2.ReasonAvailable))

	// Written next, as the managed reconciler does, it is stored.
	g.Expect(kube.Status().Update(ctx, u)).To(Succeed())
	got := &v1alpha1.PostgresqlUser{}
	g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(stored), got)).To(Succeed())
	g.Expect(got.Status.AtProvider.Name).To(Equal("app"))
	g.Expect(got.GetFinalizers()).To(ConsistOf(ManagedFinalizer))

	// Once it is there, nothing is written.
	u.Status.AtProvider.Name = "changed"
	rv := u.GetResourceVersion()
	g.Expect(k.AddFinalizer(ctx, u)).To(Succeed())
	g.Expect(u.GetResourceVersion()).To(Equal(rv))
	g.Expect(u.Status.AtProvider.Name).To(Equal("changed"))
}
