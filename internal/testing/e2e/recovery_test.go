//go:build e2e

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

package e2e

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/localpod"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/tenants"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// recoveredWithin bounds a recovery or an upgrade: several operations of
// the emulator's, and a PostgreSQL server started on a copy of the data.
const recoveredWithin = 4 * time.Minute

// A clone at a point in time holds exactly the rows committed by then, as
// read through the real proxy with the clone's own password; the source's
// password is refused on it, the Cloud SQL instance carries the clone's
// owner-uid, and the source receives no write.
func TestCloneAtAPointInTime(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t)
	const src, clone = "e2e-pitr-source", "e2e-pitr-clone"
	w.defaultConfig(ctx)

	step(t, "creating PostgresqlInstance %s with point-in-time recovery, and waiting for Ready and its recoverable window", src)
	source := instance(src, "default", false)
	source.Spec.ForProvider.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true}
	w.createWhenAdmitted(ctx, source)
	w.waitReady(ctx, source)
	w.recoverableWindow(ctx, src)

	step(t, "writing rows T1, T2 and T3 through the proxy, a few seconds apart, and taking a time between T2 and T3")
	writer := w.sqlPod(ctx, "pitr-writer", v1alpha1.AnnotationInstanceName, src)
	var between time.Time
	writer.session(ctx, func(psql func(string) []string) {
		psql("CREATE TABLE marks (id int PRIMARY KEY, label text NOT NULL); INSERT INTO marks VALUES (1, 'T1')")
		time.Sleep(1500 * time.Millisecond)
		psql("INSERT INTO marks VALUES (2, 'T2')")
		// A pointInTime is sent in whole seconds: truncated, the time must
		// still come after T2's commit, and T3 a second after it.
		time.Sleep(2 * time.Second)
		between = w.emu.Now().Truncate(time.Second)
		time.Sleep(time.Second)
		psql("INSERT INTO marks VALUES (3, 'T3')")
		g.Expect(psql("SELECT label FROM marks ORDER BY id")).To(Equal([]string{"T1", "T2", "T3"}))
	})
	t.Logf("    the point in time: %s", between.Format(time.RFC3339))

	step(t, "creating PostgresqlInstance %s with source {instance: %s, pointInTime: %s}, and waiting for Ready", clone, src, between.Format(time.RFC3339))
	asked := len(w.emu.Requests())
	cl := instance(clone, "default", false)
	cl.Spec.ForProvider.Source = &v1alpha1.Source{Instance: src, PointInTime: &metav1.Time{Time: between}}
	w.createWhenAdmitted(ctx, cl)
	w.waitRecovered(ctx, cl)
	g.Expect(cl.Status.AtProvider.Recovery).NotTo(BeNil(), "status.atProvider.recovery")
	g.Expect(cl.Status.AtProvider.Recovery.Phase).To(Equal(v1alpha1.RecoveryDone))
	g.Expect(cl.Status.AtProvider.Recovery.Source).To(ContainSubstring(src))
	t.Logf("    status.atProvider.recovery: source %q, phase %s", cl.Status.AtProvider.Recovery.Source, cl.Status.AtProvider.Recovery.Phase)

	step(t, "%s has a password of its own, which Cloud SQL has; the source's is not it", clone)
	srcPassword, clonePassword := w.rootPassword(ctx, src), w.rootPassword(ctx, clone)
	g.Expect(clonePassword).NotTo(Equal(srcPassword))
	g.Expect(w.emu.PasswordIs(project, clone, cloudsql.RootUser, clonePassword)).To(BeTrue())
	g.Expect(w.emu.PasswordIs(project, clone, cloudsql.RootUser, srcPassword)).To(BeFalse())

	step(t, "a pod of %s reads the clone through the proxy with the clone's password: exactly T1 and T2", clone)
	reader := w.sqlPod(ctx, "pitr-reader", v1alpha1.AnnotationInstanceName, clone)
	reader.session(ctx, func(psql func(string) []string) {
		g.Expect(psql("SELECT label FROM marks ORDER BY id")).To(Equal([]string{"T1", "T2"}), "the clone holds what was committed by %s", between.Format(time.RFC3339))
	})
	t.Logf("    %s holds T1 and T2, not T3", clone)
	reader.refusedWith(ctx, srcPassword, "psql on the clone with the source's password")

	step(t, "the Cloud SQL instance %s carries the clone's owner-uid; %s keeps its own", clone, src)
	w.expectOwner(ctx, cl)
	w.expectOwner(ctx, source)

	step(t, "the source %s received no write once the clone was asked for", src)
	w.expectNoWrite(asked, src, emulator.MethodInstancesClone)
	clones := 0
	for _, r := range w.emu.Requests()[asked:] {
		if r.Method == emulator.MethodInstancesClone && r.Status == 200 {
			clones++
		}
	}
	g.Expect(clones).To(Equal(1), "the clone is asked for once")
}

// A backup that Cloud SQL kept after its instance was deleted (the final
// backup, listed by the Backups API) restores into a new instance that
// holds the rows, with a password of its own; so does a PostgresqlBackup of
// that deleted instance, with the rows written before it.
func TestRetainedBackupRestoresIntoANewInstance(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t)
	const src, fromFinal, fromBackup = "e2e-retained-source", "e2e-from-final", "e2e-from-backup"
	w.defaultConfig(ctx)

	step(t, "creating PostgresqlInstance %s (backups kept on deletion, a final backup: the defaults), and waiting for Ready", src)
	source := instance(src, "default", false)
	source.Annotations = map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}
	w.createWhenAdmitted(ctx, source)
	w.waitReady(ctx, source)
	srcPassword := w.rootPassword(ctx, src)

	step(t, "writing a row, taking PostgresqlBackup %s, and writing another row", src)
	writer := w.sqlPod(ctx, "retained-writer", v1alpha1.AnnotationInstanceName, src)
	writer.session(ctx, func(psql func(string) []string) {
		psql("CREATE TABLE orders (id int PRIMARY KEY, item text NOT NULL); INSERT INTO orders VALUES (1, 'apples')")
	})
	b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: src}}
	b.Spec.ForProvider.Instance = src
	b.Spec.ForProvider.Description = ptr.To("e2e, before the deletion")
	w.createWhenAdmitted(ctx, b)
	w.waitReady(ctx, b)
	writer.session(ctx, func(psql func(string) []string) {
		psql("INSERT INTO orders VALUES (2, 'pears')")
	})

	step(t, "deleting %s with the allow-deletion annotation: Cloud SQL keeps its backups and a final one", src)
	g.Expect(w.c.Delete(ctx, source)).To(Succeed())
	g.Eventually(func() bool {
		return kerrors.IsNotFound(w.c.Get(ctx, client.ObjectKeyFromObject(source), &v1alpha1.PostgresqlInstance{}))
	}).WithTimeout(readyWithin).WithPolling(time.Second).Should(BeTrue(), "PostgresqlInstance %s is deleted", src)
	_, err := w.emu.Instance(project, src)
	g.Expect(err).To(MatchError(emulator.ErrInstanceNotFound))
	var final *sqladmin.Backup
	for _, kept := range w.emu.Backups(project) {
		t.Logf("    kept: %s of %s, %s %s", kept.Name, kept.Instance, kept.Type, kept.State)
		if kept.Instance == src && kept.Type == emulator.BackupFinal {
			final = kept
		}
	}
	g.Expect(final).NotTo(BeNil(), "the final backup of %s is listed", src)
	g.Expect(final.State).To(Equal(emulator.BackupSuccessful))

	step(t, "creating PostgresqlInstance %s with source {retainedBackup: %s} and %s with source {backup: %s}, and waiting for Ready", fromFinal, final.Name, fromBackup, src)
	asked := len(w.emu.Requests())
	restored := instance(fromFinal, "default", false)
	restored.Spec.ForProvider.Source = &v1alpha1.Source{RetainedBackup: final.Name}
	fromPB := instance(fromBackup, "default", false)
	fromPB.Spec.ForProvider.Source = &v1alpha1.Source{Backup: src}
	w.createWhenAdmitted(ctx, restored)
	w.createWhenAdmitted(ctx, fromPB)
	for _, c := range []struct {
		pi   *v1alpha1.PostgresqlInstance
		want []string
	}{
		{restored, []string{"1|apples", "2|pears"}},
		{fromPB, []string{"1|apples"}},
	} {
		name := c.pi.Name
		w.waitRecovered(ctx, c.pi)
		g.Expect(c.pi.Status.AtProvider.Recovery).NotTo(BeNil(), "status.atProvider.recovery of %s", name)
		g.Expect(c.pi.Status.AtProvider.Recovery.Phase).To(Equal(v1alpha1.RecoveryDone))
		t.Logf("    %s: status.atProvider.recovery: source %q, phase %s", name, c.pi.Status.AtProvider.Recovery.Source, c.pi.Status.AtProvider.Recovery.Phase)
		password := w.rootPassword(ctx, name)
		g.Expect(password).NotTo(Equal(srcPassword), "%s has a password of its own", name)
		g.Expect(w.emu.PasswordIs(project, name, cloudsql.RootUser, password)).To(BeTrue())
		w.expectOwner(ctx, c.pi)

		reader := w.sqlPod(ctx, name+"-reader", v1alpha1.AnnotationInstanceName, name)
		reader.session(ctx, func(psql func(string) []string) {
			g.Expect(psql("SELECT id, item FROM orders ORDER BY id")).To(Equal(c.want), "the rows %s was restored with", name)
		})
		t.Logf("    %s holds %v, read through the proxy with its own password", name, c.want)
		reader.refusedWith(ctx, srcPassword, "psql on "+name+" with the deleted source's password")
	}
	var restores []string
	for _, r := range w.emu.Requests()[asked:] {
		if r.Method == emulator.MethodInstancesRestoreBackup && r.Status == 200 {
			restores = append(restores, r.Instance)
		}
	}
	g.Expect(restores).To(ConsistOf(fromFinal, fromBackup), "each restore is addressed to the new instance")
}

// A point in time outside the source's recoverable window is a Synced=False
// condition that names the window, and no instance is created.
func TestAPointOutsideTheWindowIsACondition(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t)
	const src, clone = "e2e-window-source", "e2e-too-early"
	w.defaultConfig(ctx)

	step(t, "creating PostgresqlInstance %s with point-in-time recovery, and waiting for Ready and its recoverable window", src)
	source := instance(src, "default", false)
	source.Spec.ForProvider.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true}
	w.createWhenAdmitted(ctx, source)
	w.waitReady(ctx, source)
	earliest, _ := w.recoverableWindow(ctx, src)

	early := earliest.Add(-time.Hour).Truncate(time.Second)
	step(t, "creating PostgresqlInstance %s with source {instance: %s, pointInTime: %s}, an hour before the window opens", clone, src, early.Format(time.RFC3339))
	asked := len(w.emu.Requests())
	cl := instance(clone, "default", false)
	cl.Spec.ForProvider.Source = &v1alpha1.Source{Instance: src, PointInTime: &metav1.Time{Time: early}}
	w.createWhenAdmitted(ctx, cl)
	window := regexp.MustCompile(`from (\S+) to (\S+?)[.,;:)]?(\s|$)`)
	var msg string
	g.Eventually(func(g Gomega) {
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(cl), cl)).To(Succeed())
		synced := cl.GetCondition(xpv2.TypeSynced)
		g.Expect(synced.Status).To(Equal(corev1.ConditionFalse), "Synced: %s", synced.Message)
		msg = synced.Message
		g.Expect(msg).To(ContainSubstring("outside the recoverable window"))
		g.Expect(msg).To(MatchRegexp(window.String()))
	}).WithTimeout(readyWithin).WithPolling(time.Second).Should(Succeed())
	t.Logf("    Synced=False: %s", msg)
	m := window.FindStringSubmatch(msg)
	for _, s := range m[1:3] {
		_, err := time.Parse(time.RFC3339, s)
		g.Expect(err).NotTo(HaveOccurred(), "the window's ends are RFC 3339 times: %q", s)
	}
	g.Expect(cl.GetCondition(xpv2.TypeReady).Status).NotTo(Equal(corev1.ConditionTrue))

	step(t, "no Cloud SQL instance %s is created, and the source received no write", clone)
	g.Consistently(func() error {
		_, err := w.emu.Instance(project, clone)
		return err
	}).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(MatchError(emulator.ErrInstanceNotFound))
	for _, r := range w.emu.Requests()[asked:] {
		g.Expect(r.Method == emulator.MethodInstancesInsert && r.Status == 200).To(BeFalse(), "no instance is inserted: %+v", r)
		g.Expect(r.Method == emulator.MethodInstancesClone && r.Status == 200).To(BeFalse(), "no clone is accepted: %+v", r)
	}
	w.expectNoWrite(asked, src, emulator.MethodInstancesClone)
}

// A major upgrade from 15 to 16 keeps the rows and the logins: Cloud SQL's
// pre-check, then an on-demand backup that ended before the one patch,
// which carries databaseVersion alone. Going back down is denied at
// admission.
func TestMajorUpgradeKeepsRowsAndLogins(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t)
	const name = "e2e-upgrade"
	app := tenants.App{Namespace: appNS, User: "upgrade-app", Login: "upgrade_app", Database: "upgrade", Cluster: true}
	w.defaultConfig(ctx)

	step(t, "creating PostgresqlInstance %s at version 15, its PostgresqlUser %s and PostgresqlDatabase %s, and waiting for Ready", name, app.User, app.Database)
	pi := instance(name, "default", false)
	pi.Spec.ForProvider.Version = "15"
	w.createWhenAdmitted(ctx, pi)
	w.waitReady(ctx, pi)
	for _, o := range app.Objects(name) {
		w.createWhenAdmitted(ctx, o)
	}
	for _, o := range app.Objects(name) {
		w.waitReady(ctx, o.(conditioned))
	}

	step(t, "postgres writes rows through the proxy; %s's pod creates its table and writes a row as its own login", app.User)
	admin := w.sqlPod(ctx, "upgrade-admin", v1alpha1.AnnotationInstanceName, name)
	admin.session(ctx, func(psql func(string) []string) {
		psql("CREATE TABLE kept (id int PRIMARY KEY, item text NOT NULL); INSERT INTO kept VALUES (1, 'apples'), (2, 'pears')")
	})
	user := w.sqlPod(ctx, "upgrade-user", v1alpha1.AnnotationUserName, app.User)
	user.session(ctx, func(psql func(string) []string) {
		g.Expect(psql(app.Use()[1])).To(ContainElement(app.Used() + "1"))
	})

	step(t, "raising spec.forProvider.version to 16, and waiting for status.atProvider.majorUpgrade.phase Done and Ready")
	raised := len(w.emu.Requests())
	w.setVersion(ctx, name, "16")
	g.Eventually(func(g Gomega) {
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
		mu := pi.Status.AtProvider.MajorUpgrade
		g.Expect(mu).NotTo(BeNil(), "status.atProvider.majorUpgrade; Synced: %s", pi.GetCondition(xpv2.TypeSynced).Message)
		g.Expect(mu.Phase).To(Equal(v1alpha1.UpgradeDone), "phase %s: %s; Synced: %s", mu.Phase, mu.Message, pi.GetCondition(xpv2.TypeSynced).Message)
		g.Expect(mu.ToVersion).To(Equal("POSTGRES_16"))
		g.Expect(pi.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue))
	}).WithTimeout(recoveredWithin).WithPolling(time.Second).Should(Succeed())
	mu := pi.Status.AtProvider.MajorUpgrade
	t.Logf("    majorUpgrade: %s -> %s, phase %s, pre-check %s, backup %s ended %v, patch %v to %v",
		mu.FromVersion, mu.ToVersion, mu.Phase, mu.PreCheckOperation, mu.BackupID, mu.BackupEndTime, mu.StartTime, mu.EndTime)
	g.Expect(mu.FromVersion).To(Equal("POSTGRES_15"))
	db, err := w.emu.Instance(project, name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(db.DatabaseVersion).To(Equal("POSTGRES_16"))

	step(t, "the rows are there, %s still logs in and writes, and postgres still logs in through an injected pod", app.User)
	user.session(ctx, func(psql func(string) []string) {
		g.Expect(psql(app.Use()[1])).To(ContainElement(app.Used()+"2"), "the row written before the upgrade and the one now")
	})
	// The login is as little privileged as before: what the controller
	// reads back after the upgrade.
	u := &v1alpha1.PostgresqlUser{}
	g.Eventually(func(g Gomega) {
		g.Expect(w.c.Get(ctx, client.ObjectKey{Name: app.User}, u)).To(Succeed())
		g.Expect(u.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue))
		obs := u.Status.AtProvider
		g.Expect(obs.SuperuserMember).To(HaveValue(BeFalse()), "%s is no member of cloudsqlsuperuser", app.User)
		g.Expect(obs.CreateRole).To(HaveValue(BeFalse()))
		g.Expect(obs.CreateDB).To(HaveValue(BeFalse()))
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	admin.session(ctx, func(psql func(string) []string) {
		g.Expect(psql("SELECT id, item FROM kept ORDER BY id")).To(Equal([]string{"1|apples", "2|pears"}))
	})
	w.connect(ctx, w.createPod(ctx, appNS, "after-upgrade", name, nil), "").Close()

	step(t, "the request log: the pre-check, then backupRuns.insert, the backup's end, then the one instances.patch of databaseVersion alone")
	w.expectGuardedUpgrade(ctx, raised, name, mu)

	step(t, "lowering the version to 15 is denied at admission")
	err = w.setVersion(ctx, name, "15")
	g.Expect(err).To(HaveOccurred(), "a downgrade is denied")
	g.Expect(kerrors.IsInvalid(err)).To(BeTrue(), "denied by the CRD's validation: %v", err)
	g.Expect(err.Error()).To(ContainSubstring("cannot go down (was 16)"))
	t.Logf("    denied: %v", err)
}

// expectGuardedUpgrade checks the requests of instance name since index
// from: one successful pre-check, then the backupRuns.insert of the backup
// the status names, which ended before the one instances.patch that carries
// databaseVersion, and that patch carries nothing else.
func (w *world) expectGuardedUpgrade(ctx context.Context, from int, name string, mu *v1alpha1.MajorUpgrade) {
	g := NewWithT(w.t)
	preCheck, backup, patch := -1, -1, -1
	var patchAt time.Time
	var patches [][]string
	for i, r := range w.emu.Requests()[from:] {
		if r.Project != project || r.Instance != name || r.Status != 200 {
			continue
		}
		switch {
		case r.Method == emulator.MethodInstancesPreCheckMajorVersionUpgrade && preCheck < 0:
			preCheck = i
		case r.Method == emulator.MethodBackupRunsInsert:
			g.Expect(backup).To(Equal(-1), "one backup is taken before the upgrade")
			backup = i
		case (r.Method == emulator.MethodInstancesPatch || r.Method == emulator.MethodInstancesUpdate) && slices.Contains(r.BodyFields, "databaseVersion"):
			patches = append(patches, r.BodyFields)
			patch, patchAt = i, r.Time
		}
		if r.Method == emulator.MethodInstancesPatch || r.Method == emulator.MethodInstancesUpdate {
			w.t.Logf("    %s %s carried %v", r.Time.Format(time.RFC3339Nano), r.Method, r.BodyFields)
		}
	}
	g.Expect(patches).To(Equal([][]string{{"databaseVersion"}}), "one patch carries the version, and nothing else")
	g.Expect(preCheck).To(BeNumerically(">=", 0), "%s was asked", emulator.MethodInstancesPreCheckMajorVersionUpgrade)
	g.Expect(backup).To(BeNumerically(">", preCheck), "the backup is taken after the pre-check")
	g.Expect(patch).To(BeNumerically(">", backup), "the version is patched after the backup is taken")

	id, ok := cloudsql.ParseBackupRunID(mu.BackupID)
	g.Expect(ok).To(BeTrue(), "status.atProvider.majorUpgrade.backupId %q", mu.BackupID)
	svc, err := sqladmin.NewService(ctx, optionsOf(w.endpoint)...)
	g.Expect(err).NotTo(HaveOccurred())
	run, err := svc.BackupRuns.Get(project, name, id).Context(ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(run.Type).To(Equal(emulator.BackupOnDemand))
	g.Expect(run.Status).To(Equal(emulator.BackupSuccessful))
	end, err := time.Parse(time.RFC3339Nano, run.EndTime)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(end.Before(patchAt)).To(BeTrue(), "backup run %d ended at %s, before the patch at %s", id, end, patchAt)
	g.Expect(mu.BackupEndTime).NotTo(BeNil(), "status.atProvider.majorUpgrade.backupEndTime")
	w.t.Logf("    backup run %d (%s, %s) ended %s; the patch of databaseVersion came %s later",
		id, run.Type, run.DatabaseVersion, end.Format(time.RFC3339Nano), patchAt.Sub(end).Round(time.Millisecond))
}

// setVersion sets spec.forProvider.version of the PostgresqlInstance name, as
// kubectl edit would, again when the provider changed the object meanwhile.
func (w *world) setVersion(ctx context.Context, name, version string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pi := &v1alpha1.PostgresqlInstance{}
		if err := w.c.Get(ctx, client.ObjectKey{Name: name}, pi); err != nil {
			return err
		}
		pi.Spec.ForProvider.Version = version
		return w.c.Update(ctx, pi)
	})
}

// defaultConfig creates the namespaces of the connection secrets and of the
// pods, and ProviderConfig default of the emulator.
func (w *world) defaultConfig(ctx context.Context) {
	g := NewWithT(w.t)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}},
		providerConfig("default", w.endpoint, nil),
	} {
		g.Expect(w.c.Create(ctx, o)).To(Succeed())
	}
}

// recoverableWindow waits until the source's recoverable window
// (instances.getLatestRecoveryTime, a read) has opened, and returns it.
func (w *world) recoverableWindow(ctx context.Context, name string) (earliest, latest time.Time) {
	g := NewWithT(w.t)
	svc, err := sqladmin.NewService(ctx, optionsOf(w.endpoint)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		resp, err := svc.Projects.Instances.GetLatestRecoveryTime(project, name).Context(ctx).Do()
		g.Expect(err).NotTo(HaveOccurred())
		earliest, err = time.Parse(time.RFC3339Nano, resp.EarliestRecoveryTime)
		g.Expect(err).NotTo(HaveOccurred())
		latest, err = time.Parse(time.RFC3339Nano, resp.LatestRecoveryTime)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(earliest.Before(latest)).To(BeTrue(), "the window %s to %s is open", resp.EarliestRecoveryTime, resp.LatestRecoveryTime)
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	w.t.Logf("    %s can be recovered to any time from %s to %s", name, earliest.Format(time.RFC3339Nano), latest.Format(time.RFC3339Nano))
	return earliest, latest
}

// waitRecovered waits for pi to be Ready with its connection secret
// published and its password confirmed, and its recovery Done: Ready may
// come while the provider still relabels the instance as its own.
func (w *world) waitRecovered(ctx context.Context, pi *v1alpha1.PostgresqlInstance) {
	g := NewWithT(w.t)
	start := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
		g.Expect(pi.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), "%s: Synced: %s", pi.Name, pi.GetCondition(xpv2.TypeSynced).Message)
		g.Expect(pi.Status.AtProvider.Recovery).NotTo(BeNil(), "status.atProvider.recovery of %s", pi.Name)
		g.Expect(pi.Status.AtProvider.Recovery.Phase).To(Equal(v1alpha1.RecoveryDone), "status.atProvider.recovery.phase of %s", pi.Name)
		s := &corev1.Secret{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: pi.Name + "-conn"}, s)).To(Succeed())
		g.Expect(s.Data).To(HaveKey(cloudsql.ConnectionKeyPassword))
		g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPasswordUnconfirmed))
	}).WithTimeout(recoveredWithin).WithPolling(time.Second).Should(Succeed())
	w.t.Logf("    %s is Ready, its password confirmed and its recovery Done, %s after it was created", pi.Name, time.Since(start).Round(time.Second))
}

// rootPassword is the postgres password in the connection secret of the
// PostgresqlInstance name.
func (w *world) rootPassword(ctx context.Context, name string) string {
	g := NewWithT(w.t)
	s := &corev1.Secret{}
	g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: name + "-conn"}, s)).To(Succeed())
	pw := string(s.Data[cloudsql.ConnectionKeyPassword])
	g.Expect(pw).NotTo(BeEmpty())
	return pw
}

// expectOwner checks that the Cloud SQL instance of pi carries pi's UID as
// its owner-uid label.
func (w *world) expectOwner(ctx context.Context, pi *v1alpha1.PostgresqlInstance) {
	g := NewWithT(w.t)
	g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
	g.Eventually(func() map[string]string {
		db, err := w.emu.Instance(project, pi.Name)
		if err != nil || db.Settings == nil {
			return nil
		}
		return db.Settings.UserLabels
	}).WithTimeout(30*time.Second).WithPolling(time.Second).Should(HaveKeyWithValue(v1alpha1.OwnerUIDLabelKey, string(pi.UID)),
		"the owner-uid of Cloud SQL instance %s", pi.Name)
	w.t.Logf("    %s: owner-uid=%s", pi.Name, pi.UID)
}

// expectNoWrite checks that no request since index from wrote to instance
// name: reads, the proxies' ephemeral certificates and allowed are all
// that reached it.
func (w *world) expectNoWrite(from int, name string, allowed ...string) {
	g := NewWithT(w.t)
	allowed = append(allowed, emulator.MethodConnectGenerateEphemeral)
	seen := map[string]int{}
	for _, r := range w.emu.Requests()[from:] {
		if r.Project != project || r.Instance != name {
			continue
		}
		seen[r.Method]++
		if r.HTTPMethod == "GET" || slices.Contains(allowed, r.Method) {
			continue
		}
		g.Expect(r.Method).To(BeEmpty(), "a write reached %s: %s %s (status %d)", name, r.HTTPMethod, r.Path, r.Status)
	}
	w.t.Logf("    requests to %s since: %v", name, seen)
}

// A sqlPod is an annotated pod whose container app runs psql (bare rows,
// stopping at the first error), loaded to run locally.
type sqlPod struct {
	w   *world
	pod *corev1.Pod
	lp  *localpod.Pod
}

// sqlPod creates a pod in appNS with the annotation key: value (an
// instance, or a PostgresqlUser), and writes its password files.
func (w *world) sqlPod(ctx context.Context, name, key, value string) *sqlPod {
	g := NewWithT(w.t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name, Annotations: map[string]string{key: value}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "postgres:15", Command: append([]string{"psql"}, tenants.PsqlFlags...),
		}}},
	}
	w.createWhenAdmitted(ctx, pod)
	got := &corev1.Pod{}
	g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
	lp := w.loadPod(ctx, got)
	g.Expect(lp.WritePasswordFiles(ctx)).To(Succeed())
	return &sqlPod{w: w, pod: got, lp: lp}
}

// session runs the pod's proxy while body runs; body's psql runs one SQL
// text and returns the rows it printed, failing the test on an error.
func (p *sqlPod) session(ctx context.Context, body func(psql func(string) []string)) {
	proxy, out := p.w.startProxy(ctx, p.lp)
	defer func() { _ = proxy.Stop() }()
	body(func(sql string) []string {
		got, err := p.w.runApp(ctx, p.lp, "--command", sql)
		NewWithT(p.w.t).Expect(err).NotTo(HaveOccurred(), "pod %s: psql -c %q: %s\nproxy output:\n%s", p.pod.Name, sql, got, out)
		trimmed := strings.TrimSpace(got)
		if trimmed == "" {
			return nil
		}
		return strings.Split(trimmed, "\n")
	})
}

// refusedWith writes password into the pod's password file, expects
// PostgreSQL to refuse it, and puts the file back.
func (p *sqlPod) refusedWith(ctx context.Context, password, what string) {
	g := NewWithT(p.w.t)
	app, _ := findContainer(p.pod, "app")
	var passfile, port, user string
	for _, e := range app.Env {
		switch e.Name {
		case podinject.EnvPassFile:
			passfile = e.Value
		case podinject.EnvPort:
			port = e.Value
		case podinject.EnvUser:
			user = e.Value
		}
	}
	g.Expect(passfile).NotTo(BeEmpty())
	local, err := p.lp.LocalPath("app", passfile)
	g.Expect(err).NotTo(HaveOccurred())
	good, err := os.ReadFile(local)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(local, []byte(cloudsql.Pgpass(podinject.ProxyAddress, port, user, password)), 0o600)).To(Succeed())
	defer func() { g.Expect(os.WriteFile(local, good, 0o600)).To(Succeed()) }()
	p.w.refused(ctx, p.lp, what)
}
