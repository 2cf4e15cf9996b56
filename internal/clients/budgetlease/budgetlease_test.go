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

package budgetlease

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// A process saves its record in the Lease; the next one restores it and waits
// for what the first spent, plus what it may have sent unrecorded.
func TestTheNextProcessCountsWhatThePreviousSpent(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	env, err := controlplane.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "provider"}})).To(Succeed())
	key := types.NamespacedName{Namespace: "provider", Name: DefaultName}

	first := budget.NewWindow(30, time.Minute, budget.WithBurst(5))
	k := New(env.Client, env.Client, key, first, logging.NewNopLogger())
	g.Expect(k.save(ctx)).To(Succeed())
	g.Expect(env.Client.Get(ctx, key, &coordinationv1.Lease{})).NotTo(Succeed(), "nothing admitted: nothing saved")
	for range 5 {
		g.Expect(first.Wait(ctx)).To(Succeed())
	}
	g.Expect(k.save(ctx)).To(Succeed())
	l := &coordinationv1.Lease{}
	g.Expect(env.Client.Get(ctx, key, l)).To(Succeed())
	g.Expect(l.Annotations).To(HaveKey(AnnotationRecord))
	g.Expect(k.save(ctx)).To(Succeed(), "nothing new: nothing written")

	next := budget.NewWindow(30, time.Minute, budget.WithBurst(5))
	New(env.Client, env.Client, key, next, logging.NewNopLogger()).Restore(ctx)
	// 5 recorded, and 5 a second for the 2 seconds that may have gone unrecorded.
	g.Expect(next.Record().Admitted).To(HaveLen(15))

	// A Lease that holds no record, or one that cannot be read, restores nothing.
	l.Annotations[AnnotationRecord] = "not json"
	g.Expect(env.Client.Update(ctx, l)).To(Succeed())
	broken := budget.NewWindow(30, time.Minute)
	New(env.Client, env.Client, key, broken, logging.NewNopLogger()).Restore(ctx)
	g.Expect(broken.Record().Admitted).To(BeEmpty())
	missing := budget.NewWindow(30, time.Minute)
	New(env.Client, env.Client, types.NamespacedName{Namespace: "provider", Name: "other"}, missing, logging.NewNopLogger()).Restore(ctx)
	g.Expect(missing.Record().Admitted).To(BeEmpty())
}
