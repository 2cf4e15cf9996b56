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
	"fmt"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// sourceWrites are the requests that would change a source instance or its
// users and databases: a recovery sends none of them.
var sourceWrites = []string{
	emulator.MethodInstancesPatch, emulator.MethodInstancesUpdate, emulator.MethodInstancesDelete,
	emulator.MethodUsersInsert, emulator.MethodUsersUpdate, emulator.MethodUsersDelete,
	emulator.MethodDatabasesInsert, emulator.MethodDatabasesPatch, emulator.MethodDatabasesUpdate, emulator.MethodDatabasesDelete,
	emulator.MethodBackupRunsInsert, emulator.MethodBackupRunsDelete,
}

// A clone is an instance of its own: it becomes Ready with a new postgres
// password, set on it before its secret holds it (the source's, which the
// clone copied, no longer logs in), and with its own owner label; the
// source receives no write, and the record that tied the clone to its object
// while it carried the source's label is gone.
func TestCloneIsItsOwn(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) { testCloneIsItsOwn(newHarness(t).of(k)) })
	}
}

func testCloneIsItsOwn(h kindHarness) {
	src := h.create(h.instance("source"))
	srcName := cloudsql.InstanceName(src)
	srcPw := string(h.secret(src).Data[cloudsql.ConnectionKeyPassword])
	h.settle()
	writesBefore := h.sourceWrites(srcName)

	clone := h.instance("clone", func(o object) { o.Parameters().Source = &v1alpha1.Source{Instance: src.GetName()} })
	h.g.Expect(env.Client.Create(h.ctx, clone)).To(Succeed())
	// Never Ready before it is its own: pods admitted then connect at once.
	stop := make(chan struct{})
	readyEarly := make(chan string, 1)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			pi, err := h.lookup(clone.GetName())
			if err != nil || pi.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
				continue
			}
			if r := pi.Observation().Recovery; r == nil || r.Phase != v1alpha1.RecoveryDone {
				readyEarly <- fmt.Sprintf("Ready while the recovery is %+v", r)
				return
			}
		}
	}()
	clone = h.waitReady(clone.GetName())
	close(stop)
	select {
	case msg := <-readyEarly:
		h.t.Fatal(msg)
	default:
	}
	name := cloudsql.InstanceName(clone)
	pw := string(h.secret(clone).Data[cloudsql.ConnectionKeyPassword])
	h.g.Expect(pw).To(HaveLen(cloudsql.PasswordLength))
	h.g.Expect(pw).NotTo(Equal(srcPw), "the clone has a password of its own")
	h.g.Expect(h.emu.PasswordIs(h.project, name, "postgres", pw)).To(BeTrue(), "the published password is the one set")
	h.g.Expect(h.emu.PasswordIs(h.project, name, "postgres", srcPw)).To(BeFalse(), "the source's password no longer logs in to the clone")
	h.g.Expect(h.emu.PasswordIs(h.project, srcName, "postgres", srcPw)).To(BeTrue(), "the source keeps its password")

	h.g.Eventually(func(g Gomega) {
		inst, err := h.emu.Instance(h.project, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(inst.Settings.UserLabels).To(HaveKeyWithValue(v1alpha1.OwnerUIDLabelKey, string(clone.GetUID())))
		g.Expect(h.get(clone.GetName()).Observation().Recovery).To(And(
			Not(BeNil()), HaveField("Phase", v1alpha1.RecoveryDone), HaveField("Source", ContainSubstring(src.GetName())), HaveField("CreateTime", Not(BeNil())),
		))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	h.g.Expect(h.calls(emulator.MethodInstancesClone, srcName)).To(Equal(1), "one clone")
	h.g.Expect(h.sourceWrites(srcName)).To(Equal(writesBefore), "the source receives no write")
	h.g.Eventually(func() []string { return h.cloneRecords(name) }, 10*time.Second, 100*time.Millisecond).Should(BeEmpty(),
		"the record of the clone goes once it carries its own label")
}

// A clone that Cloud SQL made but whose answer was lost (a 503 after the
// work) carries the source's owner label: the record made before it was
// asked for is kept through that answer, so the next reconcile, at the busy
// poll interval, finds the clone its object's, and asks for no second one.
func TestACloneWhoseAnswerWasLostIsAdopted(t *testing.T) {
	h := newHarness(t)
	src := h.create(h.instance("source"))
	h.settle()
	h.g.Expect(h.emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesClone, LoseAnswerShare: 1, Count: 1})).To(Succeed())
	clone := h.create(h.instance("clone", func(o *v1alpha1.PostgresqlInstance) {
		o.Spec.ForProvider.Source = &v1alpha1.Source{Instance: src.GetName()}
	}))
	name := cloudsql.InstanceName(clone)
	h.g.Expect(h.emu.Faults()).To(BeEmpty(), "the clone's answer was lost")
	h.g.Expect(h.calls(emulator.MethodInstancesClone, cloudsql.InstanceName(src))).To(Equal(1), "one clone")
	h.g.Eventually(func(g Gomega) {
		inst, err := h.emu.Instance(h.project, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(inst.Settings.UserLabels).To(HaveKeyWithValue(v1alpha1.OwnerUIDLabelKey, string(clone.GetUID())))
		g.Expect(h.get(clone.GetName()).Observation().Recovery).To(HaveField("Phase", v1alpha1.RecoveryDone))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	h.g.Eventually(func() []string { return h.cloneRecords(name) }, 10*time.Second, 100*time.Millisecond).Should(BeEmpty())
}

// sourceWrites counts the requests that change instance, or its users,
// databases and backups.
func (h *harness) sourceWrites(instance string) int {
	n := 0
	for _, m := range sourceWrites {
		n += h.calls(m, instance)
	}
	return n
}

// cloneRecords are the names of the records of clones of Cloud SQL
// instance name, of this harness's project.
func (h *harness) cloneRecords(name string) []string {
	h.t.Helper()
	l := &coordinationv1.LeaseList{}
	h.g.Expect(env.Client.List(h.ctx, l, client.InNamespace(core.DefaultRecordNamespace), client.MatchingLabels{tenancy.LabelRecord: tenancy.KindClone})).To(Succeed())
	var out []string
	for _, r := range l.Items {
		if r.Annotations[v1alpha1.Group+"/instance"] == name && r.Annotations[v1alpha1.Group+"/project"] == h.project {
			out = append(out, r.Name)
		}
	}
	return out
}

// A point in time outside the source's recoverable window is a condition
// that names the window, and Cloud SQL is asked for no clone; a version that
// is not the source's is one too, naming the version to set.
func TestRecoveryThatCannotBeIsACondition(t *testing.T) {
	h := newHarness(t).of(cluster)
	src := h.create(h.instance("source", func(o object) {
		o.Parameters().Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true, LogRetentionDays: 7}
	}))
	srcName := cloudsql.InstanceName(src)

	late := h.instance("late", func(o object) {
		o.Parameters().Source = &v1alpha1.Source{Instance: src.GetName(), PointInTime: &metav1.Time{Time: time.Now().Add(time.Hour)}}
	})
	h.g.Expect(env.Client.Create(h.ctx, late)).To(Succeed())
	h.waitCondition(late.GetName(), xpv2.TypeSynced, corev1.ConditionFalse,
		"spec.forProvider.source.pointInTime of PostgresqlInstance "+late.GetName(), "is outside the recoverable window of Cloud SQL instance "+srcName,
		"it can be recovered to any time from ")

	older := h.instance("older", func(o object) {
		o.Parameters().Version = "17"
		o.Parameters().Source = &v1alpha1.Source{Instance: src.GetName()}
	})
	h.g.Expect(env.Client.Create(h.ctx, older)).To(Succeed())
	h.waitCondition(older.GetName(), xpv2.TypeSynced, corev1.ConditionFalse,
		"spec.forProvider.version of PostgresqlInstance "+older.GetName()+" is 17", "a recovery keeps the source's major version; set version 18")
	h.g.Expect(h.calls(emulator.MethodInstancesClone, "")).To(BeZero(), "no clone is asked for")
}

// waitCondition waits until the object's condition of type ct has status,
// with a message that holds each of says.
func (h kindHarness) waitCondition(name string, ct xpv2.ConditionType, status corev1.ConditionStatus, says ...string) {
	h.t.Helper()
	h.g.Eventually(func(g Gomega) {
		c := h.get(name).GetCondition(ct)
		g.Expect(c.Status).To(Equal(status), "%+v", c)
		for _, s := range says {
			g.Expect(c.Message).To(ContainSubstring(s))
		}
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
}

// A namespaced PostgresqlInstance recovers only from what its namespace may
// have all of: a cluster-scoped instance that admits it only for users and
// databases (spec.tenancy) is refused as a source, directly or through a
// PostgresqlBackup the namespace took of it, with a condition, and nothing is
// cloned or restored; once spec.injection admits the namespace, the clone is
// made.
func TestNamespacedRecoveryNeedsASourceItsNamespaceMayUse(t *testing.T) {
	h := newHarness(t, withTenancy(tenancy.Policy{}))
	k := h.of(teamA)
	ns := k.key("").Namespace
	shared := h.create(h.instance("shared", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"someone-else"}}
		pi.Spec.Tenancy = &v1alpha1.Tenancy{AllowedNamespaces: []string{ns}}
	}))
	b := &nsv1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"}}
	b.Spec.ForProvider.ClusterInstance = shared.Name
	h.backup(b)
	h.backupCondition(b, xpv2.TypeReady, corev1.ConditionTrue)

	clone := k.instance("copy", func(o object) { o.Parameters().Source = &v1alpha1.Source{ClusterInstance: shared.Name} })
	h.g.Expect(env.Client.Create(h.ctx, clone)).To(Succeed())
	k.waitCondition(clone.GetName(), xpv2.TypeSynced, corev1.ConditionFalse,
		"PostgresqlInstance "+ns+"/copy: spec.forProvider.source.clusterInstance names the cluster-scoped PostgresqlInstance "+shared.Name+", whose spec.injection does not admit namespace "+ns)
	restore := k.instance("restored", func(o object) { o.Parameters().Source = &v1alpha1.Source{Backup: b.Name} })
	h.g.Expect(env.Client.Create(h.ctx, restore)).To(Succeed())
	k.waitCondition(restore.GetName(), xpv2.TypeSynced, corev1.ConditionFalse,
		"spec.forProvider.source.backup (PostgresqlBackup "+ns+"/nightly) names the cluster-scoped PostgresqlInstance "+shared.Name+", whose spec.injection does not admit namespace "+ns)
	h.g.Consistently(func() int {
		return h.calls(emulator.MethodInstancesClone, "") + h.calls(emulator.MethodInstancesRestoreBackup, "")
	}, time.Second, 100*time.Millisecond).Should(BeZero())

	h.update(shared.Name, func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.Injection.AllowedNamespaces = []string{ns} })
	k.poke(clone.GetName(), 1)
	k.waitReady(clone.GetName())
	h.g.Expect(h.calls(emulator.MethodInstancesClone, cloudsql.InstanceName(shared))).To(Equal(1))
}

// A backup restores into a new instance of its own, whether its instance
// lives (a PostgresqlBackup, or a backup run by its ID) or was deleted with
// its backups kept (the retained backup, and the same PostgresqlBackup):
// each gets its own password and owner label, and the source no write.
func TestBackupsRestoreIntoNewInstances(t *testing.T) {
	h := newHarness(t).of(cluster)
	src := h.create(h.instance("source"))
	srcName := cloudsql.InstanceName(src)
	srcPw := string(h.secret(src).Data[cloudsql.ConnectionKeyPassword])
	b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: "nightly-" + h.id}}
	b.Spec.ForProvider.Instance = src.GetName()
	h.backup(b)
	h.backupCondition(b, xpv2.TypeReady, corev1.ConditionTrue)
	h.settle()
	writesBefore := h.sourceWrites(srcName)

	restored := func(name string, s v1alpha1.Source) {
		h.t.Helper()
		pi := h.instance(name, func(o object) { o.Parameters().Source = &s })
		h.g.Expect(env.Client.Create(h.ctx, pi)).To(Succeed())
		pi = h.waitReady(name)
		cloud := cloudsql.InstanceName(pi)
		pw := string(h.secret(pi).Data[cloudsql.ConnectionKeyPassword])
		h.g.Expect(pw).NotTo(Equal(srcPw))
		h.g.Expect(h.emu.PasswordIs(h.project, cloud, "postgres", pw)).To(BeTrue(), "%s: the published password is the one set", name)
		h.g.Expect(h.emu.PasswordIs(h.project, cloud, "postgres", srcPw)).To(BeFalse(), "%s: the backup's password no longer logs in", name)
		inst, err := h.emu.Instance(h.project, cloud)
		h.g.Expect(err).NotTo(HaveOccurred())
		h.g.Expect(inst.Settings.UserLabels).To(HaveKeyWithValue(v1alpha1.OwnerUIDLabelKey, string(pi.GetUID())))
		h.g.Eventually(func() *v1alpha1.Recovery { return h.get(name).Observation().Recovery }, 10*time.Second, 100*time.Millisecond).
			Should(HaveField("Phase", v1alpha1.RecoveryDone))
		h.g.Expect(h.calls(emulator.MethodInstancesRestoreBackup, cloud)).To(Equal(1), "%s: one restore", name)
	}
	restored("from-backup", v1alpha1.Source{Backup: b.Name})
	restored("from-run", v1alpha1.Source{Instance: src.GetName(), BackupRunID: b.Status.AtProvider.ID})
	h.g.Expect(h.sourceWrites(srcName)).To(Equal(writesBefore), "the source receives no write")

	// Deleted, with its backups kept.
	h.update(src.GetName(), func(o object) {
		o.SetAnnotations(map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
	})
	h.g.Expect(env.Client.Delete(h.ctx, src)).To(Succeed())
	h.waitGone(src.GetName())
	var retained string
	for _, bk := range h.emu.Backups(h.project) {
		if bk.Instance == srcName {
			retained = bk.Name
		}
	}
	h.g.Expect(retained).NotTo(BeEmpty(), "Cloud SQL keeps the deleted instance's backups")
	restored("from-retained", v1alpha1.Source{RetainedBackup: retained})
	restored("from-backup-of-deleted", v1alpha1.Source{Backup: b.Name})
}

// Raising the version upgrades the instance, guarded: Cloud SQL's pre-check,
// then an on-demand backup that ends before the one patch, which holds the
// version alone; status records the backup. A pre-check that finds a
// problem stops the upgrade before any backup or patch, saying what to fix.
func TestMajorUpgradeIsGuarded(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) { testMajorUpgradeIsGuarded(newHarness(t).of(k)) })
	}
}

func testMajorUpgradeIsGuarded(h kindHarness) {
	pi := h.create(h.instance("orders", func(o object) { o.Parameters().Version = "15" }))
	name := cloudsql.InstanceName(pi)
	h.g.Expect(h.emu.FailPreCheck(h.project, name, "extension plv8 is not supported by POSTGRES_16")).To(Succeed())
	h.settle()
	h.update(pi.GetName(), func(o object) { o.Parameters().Version = "16" })
	h.waitCondition(pi.GetName(), xpv2.TypeSynced, corev1.ConditionFalse,
		"the upgrade of PostgresqlInstance", "extension plv8 is not supported by POSTGRES_16", "fix it, and the pre-check runs again at the next poll")
	h.g.Expect(h.get(pi.GetName()).Observation().MajorUpgrade).To(HaveField("Phase", v1alpha1.UpgradeBlocked))
	h.g.Expect(h.calls(emulator.MethodBackupRunsInsert, name)).To(BeZero(), "no backup while the pre-check blocks")
	h.g.Expect(h.calls(emulator.MethodInstancesPatch, name)).To(BeZero(), "no patch while the pre-check blocks")

	// Fixed: the next poll runs the pre-check again, and the upgrade goes on.
	h.poke(pi.GetName(), 1)
	h.g.Eventually(func(g Gomega) {
		st := h.get(pi.GetName()).Observation().MajorUpgrade
		g.Expect(st).NotTo(BeNil())
		g.Expect(st.Phase).To(Equal(v1alpha1.UpgradeDone))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
	pi = h.waitReady(pi.GetName())
	st := pi.Observation().MajorUpgrade
	h.g.Expect(st).To(And(HaveField("FromVersion", "POSTGRES_15"), HaveField("ToVersion", "POSTGRES_16"),
		HaveField("BackupID", Not(BeEmpty())), HaveField("BackupEndTime", Not(BeNil())), HaveField("EndTime", Not(BeNil()))))
	inst, err := h.emu.Instance(h.project, name)
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(inst.DatabaseVersion).To(Equal("POSTGRES_16"))

	// The order, as Cloud SQL saw it: pre-checks, the backup, its end, then
	// the one patch.
	var order []string
	var patchAt time.Time
	for _, r := range h.emu.Requests() {
		if r.Project != h.project || r.Instance != name {
			continue
		}
		switch r.Method {
		case emulator.MethodInstancesPreCheckMajorVersionUpgrade, emulator.MethodBackupRunsInsert, emulator.MethodInstancesPatch:
			order = append(order, r.Method)
			if r.Method == emulator.MethodInstancesPatch {
				patchAt = r.Time
			}
		}
	}
	h.g.Expect(order).To(Equal([]string{
		emulator.MethodInstancesPreCheckMajorVersionUpgrade, emulator.MethodInstancesPreCheckMajorVersionUpgrade,
		emulator.MethodBackupRunsInsert, emulator.MethodInstancesPatch,
	}))
	id, _ := cloudsql.ParseBackupRunID(st.BackupID)
	run, err := h.svc().BackupRuns.Get(h.project, name, id).Do()
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(run.Status).To(Equal(v1alpha1.BackupStateSuccessful))
	end, err := time.Parse(time.RFC3339Nano, run.EndTime)
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(end).To(BeTemporally("<=", patchAt), "the backup ended before the patch")
	h.g.Expect(run.Description).To(ContainSubstring("before the upgrade to POSTGRES_16"))
}

// An upgrade whose operation fails says so, with Cloud SQL's error and the
// backup taken before it, and starts again at the next poll, not in a loop:
// a pre-check and a backup of the instance as it is then, then the patch.
func TestFailedUpgradeIsTriedAgainAtThePoll(t *testing.T) {
	h := newHarness(t).of(cluster)
	pi := h.create(h.instance("orders", func(o object) { o.Parameters().Version = "15" }))
	name := cloudsql.InstanceName(pi)
	h.settle()
	h.g.Expect(h.emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesPatch, FailOperationShare: 1, Count: 1})).To(Succeed())
	h.update(pi.GetName(), func(o object) { o.Parameters().Version = "16" })
	h.waitCondition(pi.GetName(), xpv2.TypeSynced, corev1.ConditionFalse,
		"the upgrade of PostgresqlInstance "+pi.GetName()+" (spec.forProvider.version) failed: Cloud SQL could not upgrade instance "+name+" to POSTGRES_16", "tried again, pre-check and backup first, at the next poll")
	h.g.Consistently(func() int { return h.calls(emulator.MethodInstancesPatch, name) }, 2*time.Second, 100*time.Millisecond).Should(Equal(1),
		"no patch again before the next poll")

	h.poke(pi.GetName(), 1)
	h.g.Eventually(func() *v1alpha1.MajorUpgrade { return h.get(pi.GetName()).Observation().MajorUpgrade }, 30*time.Second, 100*time.Millisecond).
		Should(HaveField("Phase", v1alpha1.UpgradeDone))
	h.g.Expect(h.calls(emulator.MethodInstancesPatch, name)).To(Equal(2))
	h.g.Expect(h.calls(emulator.MethodBackupRunsInsert, name)).To(Equal(2), "a backup before each attempt")
	h.g.Expect(h.calls(emulator.MethodInstancesPreCheckMajorVersionUpgrade, name)).To(Equal(2), "a pre-check before each attempt")
	st := h.get(pi.GetName()).Observation().MajorUpgrade
	h.g.Expect(st.FailedAttempts).To(BeEquivalentTo(1))
	id, _ := cloudsql.ParseBackupRunID(st.BackupID)
	run, err := h.svc().BackupRuns.Get(h.project, name, id).Do()
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(run.Description).To(HaveSuffix(", attempt 2"), "the backup of the attempt that succeeded")
}

// A namespaced PostgresqlInstance whose crossplane.io/external-name is edited
// to name another team's Cloud SQL instance serves nothing on it: a
// PostgresqlBackup of it takes no backup there (which a restore could then
// copy), and a recovery from it clones nothing.
func TestARenamedInstanceServesNothing(t *testing.T) {
	h := newHarness(t)
	a, b := h.of(teamA), h.of(teamB)
	theirs := b.create(b.instance("theirs"))
	mine := a.create(a.instance("mine"))
	h.settle()
	a.update(mine.GetName(), func(o object) {
		o.SetAnnotations(map[string]string{"crossplane.io/external-name": cloudsql.InstanceName(theirs)})
	})

	bk := &nsv1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: mine.GetNamespace(), Name: "grab"}}
	bk.Spec.ForProvider.Instance = mine.GetName()
	h.backup(bk)
	h.backupCondition(bk, xpv2.TypeSynced, corev1.ConditionFalse, "its object last observed Cloud SQL instance", "was its crossplane.io/external-name changed?")
	clone := a.instance("copy", func(o object) { o.Parameters().Source = &v1alpha1.Source{Instance: mine.GetName()} })
	h.g.Expect(env.Client.Create(h.ctx, clone)).To(Succeed())
	a.waitCondition(clone.GetName(), xpv2.TypeSynced, corev1.ConditionFalse, "is not ready to recover from", "its object last observed Cloud SQL instance")
	h.g.Consistently(func() int {
		return h.calls(emulator.MethodBackupRunsInsert, "") + h.calls(emulator.MethodInstancesClone, "")
	}, 2*time.Second, 100*time.Millisecond).Should(BeZero())
}
