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
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// Databases and users that wait for their instance do not poll it: they are
// observed as soon as it is observed ready, though the poll interval is an
// hour. In a fleet of thousands, polling waiters would take the reconcile rate
// that the instances' own first observations need.
func TestObjectsComeBackWhenTheirInstanceIsReady(t *testing.T) {
	// The instance takes 3 s to create: its objects wait for it.
	h := newHarness(t, withEmulator(emulator.WithDelays(3*time.Second, 0, 0)))
	name := "wake-" + h.id[:6]
	h.g.Expect(env.Client.Create(h.ctx, h.instance(name))).To(Succeed())

	observeOnly := xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: name + "-app"}}
	u.Spec.ForProvider.Instance = name
	// Without a password, which an imported BUILT_IN login would need in its
	// connection secret.
	u.Spec.ForProvider.Type, u.Spec.ForProvider.IAMPrincipal = v1alpha1.UserTypeCloudIAMUser, "app@example.com"
	u.Spec.ManagementPolicies = observeOnly
	d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: name + "-orders"}}
	d.Spec.ForProvider.Instance = name
	d.Spec.ManagementPolicies = observeOnly
	for _, o := range []resource.Managed{u, d} {
		h.g.Expect(env.Client.Create(h.ctx, o)).To(Succeed())
		t.Cleanup(func() {
			o.SetFinalizers(nil)
			_ = env.Client.Update(h.ctx, o)
			_ = env.Client.Delete(h.ctx, o)
		})
	}
	// What they import exists once the instance does.
	h.g.Eventually(func() error {
		return h.emu.SeedUser(h.project, name, &sqladmin.User{Name: "app@example.com", Type: v1alpha1.UserTypeCloudIAMUser})
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	h.g.Expect(h.emu.SeedDatabase(h.project, name, &sqladmin.Database{Name: d.Name})).To(Succeed())

	// Both wait for the instance, not for a poll an hour away.
	h.g.Eventually(func(g Gomega) {
		got := &v1alpha1.PostgresqlUser{}
		g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(u), got)).To(Succeed())
		g.Expect(got.GetCondition(xpv2.TypeSynced).Message).To(ContainSubstring("is not ready"))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	h.waitReady(name)
	for _, o := range []resource.Managed{u, d} {
		h.g.Eventually(func(g Gomega) {
			got := o.DeepCopyObject().(resource.Managed)
			g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(o), got)).To(Succeed())
			g.Expect(got.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), "%+v", got.GetCondition(xpv2.TypeSynced))
		}, 30*time.Second, 50*time.Millisecond).Should(Succeed(), "%s comes back when its instance is ready", o.GetName())
	}
}
