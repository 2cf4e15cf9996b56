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

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// backupWait bounds each wait for a backup's controller.
const backupWait = 30 * time.Second

// backup stores a PostgresqlBackup, and removes it, finalizer and all, when
// the test ends: envtest runs no garbage collector.
func (h *harness) backup(b client.Object) {
	h.t.Helper()
	h.g.Expect(env.Client.Create(h.ctx, b)).To(Succeed())
	h.t.Cleanup(func() {
		if err := env.Client.Get(h.ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return
		}
		b.SetFinalizers(nil)
		_ = env.Client.Update(h.ctx, b)
		_ = env.Client.Delete(h.ctx, b)
	})
}

// backupCondition waits until b's condition of type ct has status, with a
// message that holds each of says, and returns b as it is then.
func (h *harness) backupCondition(b client.Object, ct xpv2.ConditionType, status corev1.ConditionStatus, says ...string) {
	h.t.Helper()
	h.g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		c := b.(interface {
			GetCondition(xpv2.ConditionType) xpv2.Condition
		}).GetCondition(ct)
		g.Expect(c.Status).To(Equal(status), "%+v", c)
		for _, s := range says {
			g.Expect(c.Message).To(ContainSubstring(s))
		}
	}, backupWait, 50*time.Millisecond).Should(Succeed())
}

// runs are the backup runs the emulator lists for instance: status and ID.
func (h *harness) runs(instance string) map[string]string {
	h.t.Helper()
	l, err := h.svc().BackupRuns.List(h.project, instance).Do()
	h.g.Expect(err).NotTo(HaveOccurred())
	out := map[string]string{}
	for _, r := range l.Items {
		out[cloudsql.BackupRunID(r.Id)] = r.Status
	}
	return out
}

// A PostgresqlBackup takes one backup of its instance, becomes Ready once it
// is SUCCESSFUL with its ID in the status and the external name, and keeps
// it. Deleting it without the allow-deletion annotation writes nothing and the
// backup stays; with the annotation, one backupRuns.delete removes it.
func TestBackupLifecycle(t *testing.T) {
	h := newHarness(t, withEmulator(emulator.WithDelays(0, 500*time.Millisecond, 0)))
	pi := h.create(h.instance("orders"))
	name := cloudsql.InstanceName(pi)

	b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: "orders-" + h.id}}
	b.Spec.ForProvider.Instance = pi.Name
	b.Spec.ForProvider.Description = ptr.To("before the upgrade")
	h.backup(b)
	h.backupCondition(b, xpv2.TypeReady, corev1.ConditionTrue)
	id := meta.GetExternalName(b)
	h.g.Expect(b.Status.AtProvider).To(And(
		HaveField("ID", id), HaveField("State", v1alpha1.BackupStateSuccessful), HaveField("Type", v1alpha1.BackupTypeOnDemand),
		HaveField("Instance", name), HaveField("EndTime", Not(BeNil())),
		HaveField("Description", "before the upgrade (PostgresqlBackup "+b.Name+", uid "+string(b.UID)+")"),
	))
	h.g.Expect(h.runs(name)).To(Equal(map[string]string{id: v1alpha1.BackupStateSuccessful}))
	h.g.Expect(h.calls(emulator.MethodBackupRunsInsert, name)).To(Equal(1), "one backup, taken once")

	h.g.Expect(env.Client.Delete(h.ctx, b)).To(Succeed())
	h.backupCondition(b, xpv2.TypeSynced, corev1.ConditionFalse, "without the annotation cloudsql.travelaudience.com/allow-deletion", "backup run "+id)
	h.g.Consistently(func() int { return h.calls(emulator.MethodBackupRunsDelete, "") }, 2*time.Second, 100*time.Millisecond).Should(BeZero())
	h.g.Expect(h.runs(name)).To(HaveKey(id), "the backup stays without the annotation")

	h.g.Eventually(func() error {
		if err := env.Client.Get(h.ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		meta.AddAnnotations(b, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
		return env.Client.Update(h.ctx, b)
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	h.g.Eventually(func() bool {
		return kerrors.IsNotFound(env.Client.Get(h.ctx, client.ObjectKeyFromObject(b), b))
	}, backupWait, 50*time.Millisecond).Should(BeTrue(), "the PostgresqlBackup is not deleted")
	h.g.Expect(h.runs(name)).To(BeEmpty())
	h.g.Expect(h.calls(emulator.MethodBackupRunsDelete, name)).To(Equal(1), "one delete")
}

// A backup that Cloud SQL reports FAILED is not Ready: its condition carries
// Cloud SQL's error and what to do, and no second backup is taken.
func TestFailedBackupSaysWhy(t *testing.T) {
	h := newHarness(t)
	pi := h.create(h.instance("orders"))
	name := cloudsql.InstanceName(pi)
	h.g.Expect(h.emu.FailNextBackup(h.project, name, "the disk is full")).To(Succeed())

	b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: "failing-" + h.id}}
	b.Spec.ForProvider.Instance = pi.Name
	h.backup(b)
	h.backupCondition(b, xpv2.TypeReady, corev1.ConditionFalse, "FAILED: the disk is full", "delete this PostgresqlBackup and create a new one")
	h.g.Expect(b.Status.AtProvider).To(And(HaveField("State", v1alpha1.BackupStateFailed), HaveField("Error", "the disk is full")))
	h.g.Consistently(func() int { return h.calls(emulator.MethodBackupRunsInsert, name) }, time.Second, 100*time.Millisecond).Should(Equal(1))
}

// A namespaced PostgresqlBackup may back up a cluster-scoped instance only
// when the instance admits its namespace: the controller refuses one that
// does not, naming the object and the field, and takes no backup; the
// namespace's own instance it backs up.
func TestNamespacedBackupNeedsAnInstanceItsNamespaceMayUse(t *testing.T) {
	h := newHarness(t, withTenancy(tenancy.Policy{}))
	ns := h.team("a")
	shared := h.create(h.instance("shared", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"someone-else"}}
	}))

	refused := &nsv1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"}}
	refused.Spec.ForProvider.ClusterInstance = shared.Name
	h.backup(refused)
	h.backupCondition(refused, xpv2.TypeSynced, corev1.ConditionFalse,
		"PostgresqlBackup "+ns+"/nightly: spec.forProvider.clusterInstance names the cluster-scoped PostgresqlInstance "+shared.Name+", which does not admit namespace "+ns)
	h.g.Expect(h.calls(emulator.MethodBackupRunsInsert, "")).To(BeZero())

	local := h.of(teamA).create(h.of(teamA).instance("local"))
	own := &nsv1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "own"}}
	own.Spec.ForProvider.Instance = local.GetName()
	h.backup(own)
	h.backupCondition(own, xpv2.TypeReady, corev1.ConditionTrue)
	h.g.Expect(own.Status.AtProvider.ID).To(Equal(meta.GetExternalName(own)))
	h.g.Expect(h.calls(emulator.MethodBackupRunsInsert, "")).To(Equal(1))
}
