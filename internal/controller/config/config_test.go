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

package config

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// A burst of usages brings one reconcile of their configuration, a second
// after the first of them, rather than one each.
func TestABurstOfUsagesIsCountedOnce(t *testing.T) {
	g := NewWithT(t)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h := settled{&resource.EnqueueRequestForProviderConfig{}}
	start := time.Now()
	for _, n := range []string{"a", "b", "c"} {
		pcu := &v1alpha1.ProviderConfigUsage{ObjectMeta: metav1.ObjectMeta{Name: n}}
		pcu.SetProviderConfigReference(xpv2.Reference{Name: "default"})
		h.Create(context.Background(), ctrlevent.CreateEvent{Object: pcu}, q)
	}
	g.Expect(q.Len()).To(BeZero(), "nothing at once")
	r, _ := q.Get()
	g.Expect(time.Since(start)).To(BeNumerically(">=", usageSettle))
	g.Expect(r).To(Equal(reconcile.Request{NamespacedName: types.NamespacedName{Name: "default"}}))
	q.Done(r)
	g.Consistently(q.Len, 2*usageSettle).Should(BeZero(), "once for the three")
}
