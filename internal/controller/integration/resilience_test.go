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
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
)

// statuses counts this test's answers with an HTTP status.
func (h *harness) statuses(code int) int {
	n := 0
	for _, r := range h.emu.Requests() {
		if r.Project == h.project && r.Status == code {
			n++
		}
	}
	return n
}

// accepted counts this test's requests of a method that Cloud SQL accepted.
func (h *harness) accepted(method, instance string) int {
	n := 0
	for _, r := range h.emu.Requests() {
		if r.Project == h.project && r.Method == method && r.Instance == instance && r.Status < 300 {
			n++
		}
	}
	return n
}

// Changes made while an update is still running wait for it, rather than
// collect 409 operationInProgress answers.
func TestUpdatesWaitForRunningOperations(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			testUpdatesWaitForRunningOperations(newHarness(t, withEmulator(emulator.WithDelays(0, time.Second, 0))).of(k))
		})
	}
}

func testUpdatesWaitForRunningOperations(h kindHarness) {
	h.create(h.instance("busy"))
	h.update("busy", func(p object) { p.Parameters().Resources.InstanceType = "db-custom-2-7680" })
	// The first patch is running (it takes a second) when the second change comes.
	h.g.Eventually(func() int { return h.calls(emulator.MethodInstancesPatch, "busy") }, 10*time.Second, 10*time.Millisecond).Should(Equal(1))
	h.update("busy", func(p object) { p.Parameters().Availability.Type = v1alpha1.AvailabilityRegional })

	h.g.Eventually(func(g Gomega) {
		inst, err := h.emu.Instance(h.project, "busy")
		g.Expect(err).ToNot(HaveOccurred())
		g.Expect(inst.Settings.Tier).To(Equal("db-custom-2-7680"))
		g.Expect(inst.Settings.AvailabilityType).To(Equal("REGIONAL"))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.settle()
	h.g.Expect(h.statuses(409)).To(Equal(0), "the provider collided with a running operation")
	// Two patches took effect. A third may have been sent, and refused with 412,
	// when the first operation ended between the get and the check for running
	// operations: its settingsVersion was stale, which is what it is there for.
	h.g.Expect(h.accepted(emulator.MethodInstancesPatch, "busy")).To(Equal(2))
	h.g.Expect(h.condition("busy", xpv2.TypeSynced).Status).To(Equal(corev1.ConditionTrue))
}

// A spec change that comes while the provider's own password change still runs
// waits for it: a password change does not show in the instance, so only
// operations.list can tell that it is over.
func TestPatchWaitsForARunningPasswordChange(t *testing.T) {
	h := newHarness(t, withEmulator(emulator.WithDelays(0, 2*time.Second, 0)))
	pi := h.create(h.instance("pw"))
	s := h.secret(pi)
	delete(s.Data, cloudsql.ConnectionKeyPassword)
	h.g.Expect(env.Client.Update(h.ctx, s)).To(Succeed())
	h.poke("pw", 1)
	h.g.Eventually(func() int { return h.calls(emulator.MethodUsersUpdate, "pw") }, 10*time.Second, 10*time.Millisecond).Should(Equal(1))
	h.update("pw", func(p *v1alpha1.PostgresqlInstance) { p.Spec.ForProvider.Resources.InstanceType = "db-custom-2-7680" })

	h.g.Eventually(func(g Gomega) {
		inst, err := h.emu.Instance(h.project, "pw")
		g.Expect(err).ToNot(HaveOccurred())
		g.Expect(inst.Settings.Tier).To(Equal("db-custom-2-7680"))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.settle()
	h.g.Expect(h.statuses(409)).To(Equal(0), "the patch collided with the running password change")
	h.g.Expect(h.calls(emulator.MethodOperationsList, "")).To(BeNumerically(">=", 1), "operations.list (project-wide, ?instance=pw) was asked")
}

// Storms of 429s and 30% server errors slow the provider down but do not stop it,
// and never make it create an instance twice. Which requests fail depends on
// the emulator's seed and on the order the requests come in: with seeds 10,
// 19, 20 and 29, instances once waited for minutes on the error backoff after
// a failed listing, rather than for the next listing.
func TestFaultStormsConvergeWithoutDuplicates(t *testing.T) {
	for _, seed := range []uint64{emulator.DefaultRandSeed, 10, 19, 20, 29} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testFaultStormsConvergeWithoutDuplicates(t, seed) })
	}
}

func testFaultStormsConvergeWithoutDuplicates(t *testing.T, seed uint64) {
	h := newHarness(t, withAttempts(3), withEmulator(emulator.WithRandSeed(seed)))
	h.g.Expect(h.emu.InjectFault(emulator.Fault{ServerErrorShare: 0.3, RateLimitShare: 0.3})).To(Succeed())
	names := []string{"storm-a", "storm-b", "storm-c"}
	for _, n := range names {
		h.g.Expect(env.Client.Create(h.ctx, h.instance(n))).To(Succeed())
	}
	for _, n := range names {
		h.g.Eventually(func(g Gomega) {
			pi := h.get(n)
			g.Expect(pi.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue))
			g.Expect(pi.GetCondition(xpv2.TypeSynced).Status).To(Equal(corev1.ConditionTrue))
		}, 90*time.Second, 100*time.Millisecond).Should(Succeed())
	}
	h.emu.ClearFaults()
	h.g.Expect(h.statuses(429)+h.statuses(500)+h.statuses(503)).To(BeNumerically(">", 0), "no fault was injected")

	list, err := h.svc().Instances.List(h.project).Do()
	h.g.Expect(err).ToNot(HaveOccurred())
	h.g.Expect(list.Items).To(HaveLen(len(names)))
	for _, n := range names {
		s := h.secret(h.get(n))
		h.g.Expect(h.emu.PasswordIs(h.project, n, "postgres", string(s.Data[cloudsql.ConnectionKeyPassword]))).To(BeTrue(), n)
	}
}

// A provider that stops right after instances.insert succeeded, before it could
// record anything, neither loses the password nor creates the instance twice.
func TestCrashRightAfterInsert(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) { testCrashRightAfterInsert(t, k) })
	}
}

func testCrashRightAfterInsert(t *testing.T, k kind) {
	crashed := make(chan struct{})
	var once sync.Once
	var h *harness
	h = newHarness(t, withEmulator(emulator.WithAfterInsert(func(string, string) {
		once.Do(func() {
			ctx := h.managerContext()
			close(crashed)
			// The insert is stored; its answer never reaches the provider.
			<-ctx.Done()
		})
	})))
	kh := h.of(k)
	h.g.Expect(env.Client.Create(h.ctx, kh.instance("crash"))).To(Succeed())
	h.g.Eventually(crashed, 30*time.Second).Should(BeClosed())
	h.stopManager()

	pi := kh.get("crash")
	h.g.Expect(pi.GetCondition(xpv2.TypeReady).Status).ToNot(Equal(corev1.ConditionTrue))
	stored := string(h.secret(pi).Data[cloudsql.ConnectionKeyPassword])
	h.g.Expect(stored).ToNot(BeEmpty(), "the password was not stored before the insert")

	h.startManager()
	pi = kh.waitReady("crash")
	h.settle()
	s := h.secret(pi)
	h.g.Expect(string(s.Data[cloudsql.ConnectionKeyPassword])).To(Equal(stored))
	h.g.Expect(h.emu.PasswordIs(h.project, "crash", "postgres", stored)).To(BeTrue())
	h.g.Expect(h.calls(emulator.MethodInstancesInsert, "")).To(Equal(1))
	h.g.Expect(h.calls(emulator.MethodUsersUpdate, "")).To(Equal(0))
}

// A lost connection secret is repaired with a new password that works.
func TestLostSecretGetsANewPassword(t *testing.T) {
	h := newHarness(t)
	pi := h.create(h.instance("lost"))
	old := string(h.secret(pi).Data[cloudsql.ConnectionKeyPassword])
	h.g.Expect(env.Client.Delete(h.ctx, h.secret(pi))).To(Succeed())
	h.poke("lost", 1)

	h.g.Eventually(func(g Gomega) {
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(h.ctx, secretKey(pi), s)).To(Succeed())
		pw := string(s.Data[cloudsql.ConnectionKeyPassword])
		g.Expect(pw).ToNot(BeEmpty())
		g.Expect(pw).ToNot(Equal(old))
		g.Expect(s.Annotations).ToNot(HaveKey(v1alpha1.AnnotationPasswordUnconfirmed))
		g.Expect(h.emu.PasswordIs(h.project, "lost", "postgres", pw)).To(BeTrue())
		g.Expect(s.Data).To(HaveKey(cloudsql.ConnectionKeyConnectionName))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.g.Expect(h.emu.PasswordIs(h.project, "lost", "postgres", old)).To(BeFalse())
	h.g.Expect(h.calls(emulator.MethodUsersUpdate, "lost")).To(Equal(1))
}

// An instance that Kubernetes did not create can be observed, then taken over
// without being created again; the provider then gives it a password it knows.
func TestImportObserveThenManage(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) { testImportObserveThenManage(newHarness(t).of(k)) })
	}
}

func testImportObserveThenManage(h kindHarness) {
	h.g.Expect(h.emu.Seed(h.project, &sqladmin.DatabaseInstance{
		Name: "legacy", DatabaseVersion: "POSTGRES_15", Region: "europe-west1", RootPassword: "unknown-to-us",
		Settings: &sqladmin.Settings{Tier: "db-custom-2-7680", Edition: "ENTERPRISE", DataDiskSizeGb: 50},
	})).To(Succeed())

	pi := h.instance("legacy-db", func(p object) {
		p.Parameters().Name = ptr.To("legacy")
		p.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
		h.k.setConnectionSecret(p, "")
	})
	h.g.Expect(env.Client.Create(h.ctx, pi)).To(Succeed())
	h.g.Eventually(func(g Gomega) {
		got := h.get("legacy-db")
		g.Expect(got.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue))
		g.Expect(got.Observation().ConnectionName).To(Equal(h.project + ":europe-west1:legacy"))
		g.Expect(got.Observation().CurrentDiskSizeGb).To(Equal(int64(50)))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.settle()
	h.g.Expect(h.writes()).To(Equal(0), "observing wrote to Cloud SQL")

	// Take it over, with a spec that describes it.
	h.update("legacy-db", func(p object) {
		p.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionAll})
		h.k.setConnectionSecret(p, "legacy-postgres")
		p.Parameters().Version = "15"
		p.Parameters().Resources.InstanceType = "db-custom-2-7680"
		p.Parameters().Resources.Disk.SizeMinimumGb = 50
	})
	h.track(h.get("legacy-db"))
	h.g.Eventually(func(g Gomega) {
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(h.ctx, secretKey(h.get("legacy-db")), s)).To(Succeed())
		g.Expect(h.emu.PasswordIs(h.project, "legacy", "postgres", string(s.Data[cloudsql.ConnectionKeyPassword]))).To(BeTrue())
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.waitReady("legacy-db")
	h.g.Expect(h.calls(emulator.MethodInstancesInsert, "")).To(Equal(0))
}

// A connection secret that belongs to another object is neither read nor
// overwritten, and the condition says so (crossplane-runtime's publisher
// refuses it before the provider would create anything).
func TestForeignConnectionSecretIsRefused(t *testing.T) {
	h := newHarness(t)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: "foreign-postgres",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "0b1c2d3e", Controller: ptr.To(true)}}},
		Data: map[string][]byte{"password": []byte("someone-elses")}}
	h.g.Expect(env.Client.Create(h.ctx, foreign)).To(Succeed())
	h.g.Expect(env.Client.Create(h.ctx, h.instance("foreign"))).To(Succeed())
	h.g.Eventually(func() string { return h.get("foreign").GetCondition(xpv2.TypeSynced).Message }, 30*time.Second, 50*time.Millisecond).Should(
		ContainSubstring("existing secret is not controlled by UID"))
	h.g.Expect(h.calls(emulator.MethodInstancesInsert, "")).To(Equal(0))
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(foreign), foreign)).To(Succeed())
	h.g.Expect(string(foreign.Data["password"])).To(Equal("someone-elses"))
}

// A password edited in the connection secret (by hand, or an old secret applied
// again) is set on the instance, through the same crash-safe path as a lost one:
// the secret is the source of the password, and Cloud SQL follows it.
func TestEditedPasswordIsSetOnTheInstance(t *testing.T) {
	h := newHarness(t)
	pi := h.create(h.instance("edited"))
	sec := h.secret(pi)
	h.g.Expect(sec.Annotations).To(HaveKey(v1alpha1.AnnotationPasswordSHA256))
	old := string(sec.Data[cloudsql.ConnectionKeyPassword])
	sec.Data[cloudsql.ConnectionKeyPassword] = []byte("edited-by-hand-0123456789")
	h.g.Expect(env.Client.Update(h.ctx, sec)).To(Succeed())
	h.poke(pi.Name, 1)

	h.g.Eventually(func(g Gomega) {
		g.Expect(h.emu.PasswordIs(h.project, "edited", "postgres", "edited-by-hand-0123456789")).To(BeTrue())
		s := h.secret(pi)
		g.Expect(string(s.Data[cloudsql.ConnectionKeyPgpass])).To(Equal(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, "edited-by-hand-0123456789")))
		g.Expect(string(s.Data[cloudsql.ConnectionKeyURL])).To(Equal(cloudsql.URL(cloudsql.RootUser, "edited-by-hand-0123456789", "")), "url follows an edited password")
		g.Expect(s.Annotations).ToNot(HaveKey(v1alpha1.AnnotationPasswordUnconfirmed))
		g.Expect(h.get("edited").GetCondition(xpv2.TypeSynced).Status).To(Equal(corev1.ConditionTrue))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.g.Expect(h.emu.PasswordIs(h.project, "edited", "postgres", old)).To(BeFalse())
	h.g.Expect(h.calls(emulator.MethodUsersUpdate, "edited")).To(Equal(1))

	// A secret written before fingerprints were kept is taken as it is.
	sec = h.secret(pi)
	delete(sec.Annotations, v1alpha1.AnnotationPasswordSHA256)
	h.g.Expect(env.Client.Update(h.ctx, sec)).To(Succeed())
	h.poke(pi.Name, 2)
	h.g.Eventually(func() map[string]string { return h.secret(pi).Annotations }, 30*time.Second, 50*time.Millisecond).Should(HaveKey(v1alpha1.AnnotationPasswordSHA256))
	h.g.Expect(h.calls(emulator.MethodUsersUpdate, "edited")).To(Equal(1))
}

// A connection secret of type Opaque that the instance controls (made by hand or
// by another tool) is completed: crossplane-runtime does not publish into it, and
// a secret's type cannot change.
func TestOpaqueConnectionSecretIsCompleted(t *testing.T) {
	h := newHarness(t)
	pi := h.instance("opaque")
	pi.Annotations = map[string]string{meta.AnnotationKeyReconciliationPaused: "true"}
	h.g.Expect(env.Client.Create(h.ctx, pi)).To(Succeed())
	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: "opaque-postgres",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.PostgresqlInstanceKind,
			Name: pi.Name, UID: pi.UID, Controller: ptr.To(true)}}},
		Type: corev1.SecretTypeOpaque}
	h.g.Expect(env.Client.Create(h.ctx, opaque)).To(Succeed())
	h.update(pi.Name, func(pi *v1alpha1.PostgresqlInstance) { delete(pi.Annotations, meta.AnnotationKeyReconciliationPaused) })
	ready := h.waitReady(pi.Name)

	sec := h.secret(ready)
	h.g.Expect(sec.Type).To(Equal(corev1.SecretTypeOpaque))
	for _, k := range []string{cloudsql.ConnectionKeyPassword, cloudsql.ConnectionKeyPgpass, cloudsql.ConnectionKeyEndpoint, cloudsql.ConnectionKeyConnectionName} {
		h.g.Expect(sec.Data).To(HaveKeyWithValue(k, Not(BeEmpty())), "key %s", k)
	}
	h.g.Expect(string(sec.Data[cloudsql.ConnectionKeyPgpass])).To(Equal(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, string(sec.Data[cloudsql.ConnectionKeyPassword]))))
}

// A password put in the connection secret that a .pgpass entry cannot carry (a
// line break) is refused with a condition that says so, and is not retried in a
// loop.
func TestPasswordWithALineBreakIsRefused(t *testing.T) {
	h := newHarness(t, withIntervals(time.Hour, 100*time.Millisecond))
	pi := h.create(h.instance("linebreak"))
	writes := h.writes()
	sec := h.secret(pi)
	sec.Data["password"] = []byte("first-line\nsecond-line")
	h.g.Expect(env.Client.Update(h.ctx, sec)).To(Succeed())
	h.poke(pi.Name, 1)
	h.g.Eventually(func() string { return h.get("linebreak").GetCondition(xpv2.TypeSynced).Message }, 30*time.Second, 50*time.Millisecond).Should(
		ContainSubstring("connection secret " + secretNamespace + "/linebreak-postgres: key password holds a line break"))
	// The error backoff would try again after about 1s, 2s and 4s; the poll
	// interval is an hour.
	before := reconciles(h.g)
	h.g.Consistently(func() float64 { return reconciles(h.g) }, 8*time.Second, 100*time.Millisecond).Should(BeNumerically("<=", before+1), "retried in a loop")
	h.g.Expect(h.writes()).To(Equal(writes), "nothing was sent to Cloud SQL for it")
}

// reconciles counts the reconciles of PostgresqlInstances that ended with an
// error or a requeue, from controller-runtime's metrics.
func reconciles(g Gomega) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).ToNot(HaveOccurred())
	n := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && strings.HasPrefix(l.GetValue(), "managed/postgresqlinstance") {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// Credentials that cannot work give a condition that names the ProviderConfig,
// the secret and the key, and says what is wrong.
func TestBadCredentialsAreExplained(t *testing.T) {
	h := newHarness(t)
	key := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: "bad-admin-key"},
		Data:       map[string][]byte{"key.json": []byte(`{"type":"service_account","client_email":"a@b.iam.gserviceaccount.com","private_key":"replace me"}`)},
	}
	h.g.Expect(env.Client.Create(h.ctx, key)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(h.ctx, key) })
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: h.pc + "-bad"},
		Spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: h.project, Endpoint: h.srvURL}, Credentials: v1alpha1.ProviderCredentials{
			Source: xpv2.CredentialsSourceSecret,
			CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
				SecretReference: xpv2.SecretReference{Namespace: secretNamespace, Name: "bad-admin-key"}, Key: "key.json"}},
		}},
	}
	h.g.Expect(env.Client.Create(h.ctx, pc)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(h.ctx, pc) })
	h.g.Expect(env.Client.Create(h.ctx, h.instance("bad-creds", func(p *v1alpha1.PostgresqlInstance) {
		p.Spec.ProviderConfigReference = &xpv2.Reference{Name: h.pc + "-bad"}
	}))).To(Succeed())
	t.Cleanup(func() {
		pi := h.get("bad-creds")
		pi.Finalizers = nil
		_ = env.Client.Update(h.ctx, pi)
		_ = env.Client.Delete(h.ctx, pi)
	})

	h.g.Eventually(func() string { return h.get("bad-creds").GetCondition(xpv2.TypeSynced).Message }, 30*time.Second, 50*time.Millisecond).Should(And(
		ContainSubstring(`ProviderConfig "`+h.pc+`-bad": key "key.json" of secret crossplane-system/bad-admin-key`),
		ContainSubstring("has a private_key that is not a PEM-encoded"),
	))
	h.g.Expect(h.calls(emulator.MethodInstancesGet, "")).To(Equal(0))
}

func secretKey(pi object) client.ObjectKey {
	ref := pi.ConnectionSecret()
	return client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
}

// The controllers work with exactly the RBAC that cluster/deploy/provider.yaml
// grants the provider's service account (envtest enforces RBAC).
func TestRunsWithTheShippedRBAC(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	objs, err := manifests.ReadFile(filepath.Join(controlplane.RepoRoot(), "cluster", "deploy", "provider.yaml"))
	g.Expect(err).ToNot(HaveOccurred())
	applied := 0
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if err := env.Client.Create(context.Background(), o); err != nil && !kerrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			applied++
		}
	}
	// The service account, the provider's and the metrics reader's ClusterRoles, its binding, the
	// Role and RoleBinding of its namespace.
	g.Expect(applied).To(Equal(6))

	for _, k := range []kind{cluster, teamA, teamB} {
		t.Run(k.String(), func(t *testing.T) {
			h := newHarness(t, withImpersonation("system:serviceaccount:crossplane-system:provider-cloudsql-postgres")).of(k)
			pi := h.create(h.instance("rbac", func(p object) {
				meta.AddAnnotations(p, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
			}))
			h.g.Expect(h.secret(pi).Data).To(HaveKey(cloudsql.ConnectionKeyPassword))
			h.g.Expect(env.Client.Delete(h.ctx, pi)).To(Succeed())
			h.waitGone("rbac")
		})
	}
}

// An instance that exists already, and that this PostgresqlInstance neither
// created nor imported, is never changed: no patch, no password, no deletion.
func TestExistingInstanceIsNotTakenOver(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) { testExistingInstanceIsNotTakenOver(newHarness(t).of(k)) })
	}
}

func testExistingInstanceIsNotTakenOver(h kindHarness) {
	h.g.Expect(h.emu.Seed(h.project, &sqladmin.DatabaseInstance{
		Name: "theirs", DatabaseVersion: "POSTGRES_15", Region: "europe-west1", RootPassword: "their-password",
		Settings: &sqladmin.Settings{Tier: "db-custom-2-7680", Edition: "ENTERPRISE"},
	})).To(Succeed())
	h.g.Expect(env.Client.Create(h.ctx, h.instance("theirs"))).To(Succeed())
	h.g.Eventually(func() string { return h.condition("theirs", xpv2.TypeSynced).Message }, 30*time.Second, 50*time.Millisecond).Should(And(
		ContainSubstring("Cloud SQL instance theirs already exists in project "+h.project+" and was not created by this PostgresqlInstance"),
		ContainSubstring(`import it (managementPolicies ["Observe"] first, then ["*"])`),
	))
	h.settle()
	h.g.Expect(h.writes()).To(Equal(0))
	h.g.Expect(h.emu.PasswordIs(h.project, "theirs", "postgres", "their-password")).To(BeTrue())

	// Deleting it lets go of the instance.
	h.g.Expect(env.Client.Delete(h.ctx, h.get("theirs"))).To(Succeed())
	h.waitGone("theirs")
	_, err := h.emu.Instance(h.project, "theirs")
	h.g.Expect(err).ToNot(HaveOccurred())
	h.g.Expect(h.calls(emulator.MethodInstancesDelete, "theirs")).To(Equal(0))
}

// Two PostgresqlInstances naming the same Cloud SQL instance: the first one owns
// it; the second one is told so and never touches it, not even when deleted.
// Within a kind they have different names and the same spec.forProvider.name;
// across namespaces or kinds, the same metadata.name. The second namespaced one
// uses a ProviderConfig of its namespace, the first a ClusterProviderConfig.
func TestSecondClaimOnANameIsRefused(t *testing.T) {
	for _, c := range []struct{ first, second kind }{
		{cluster, cluster},
		{teamA, teamB},
		{teamA, cluster},
		{cluster, teamA},
	} {
		t.Run(c.first.String()+"-then-"+c.second.String(), func(t *testing.T) {
			h := newHarness(t)
			testSecondClaimOnANameIsRefused(h, h.of(c.first), h.of(c.second))
		})
	}
}

func testSecondClaimOnANameIsRefused(h *harness, first, second kindHarness) {
	firstName, secondName := "shared", "shared"
	var shared []func(object)
	if first.k == second.k {
		firstName, secondName = "first", "second"
		shared = append(shared, func(p object) { p.Parameters().Name = ptr.To("shared") })
	}
	owner := first.create(first.instance(firstName, shared...))
	password := string(h.secret(owner).Data[cloudsql.ConnectionKeyPassword])
	writes := h.writes()

	h.g.Expect(env.Client.Create(h.ctx, second.instance(secondName, shared...))).To(Succeed())
	h.g.Eventually(func() string { return second.condition(secondName, xpv2.TypeSynced).Message }, 30*time.Second, 50*time.Millisecond).Should(
		ContainSubstring("Cloud SQL instance shared in project " + h.project + " belongs to another PostgresqlInstance (uid " + string(owner.GetUID()) + ")"))
	h.settle()
	h.g.Expect(h.emu.PasswordIs(h.project, "shared", "postgres", password)).To(BeTrue(), "the second object reset the first one's password")
	h.g.Expect(h.calls(emulator.MethodUsersUpdate, "shared")).To(Equal(0))
	h.g.Expect(h.accepted(emulator.MethodInstancesPatch, "shared")).To(Equal(0))
	h.g.Expect(h.writes()).To(Equal(writes), "the second object wrote to the first one's instance")

	h.g.Expect(env.Client.Delete(h.ctx, second.get(secondName))).To(Succeed())
	second.waitGone(secondName)
	first.waitReady(firstName)
	h.g.Expect(h.calls(emulator.MethodInstancesDelete, "shared")).To(Equal(0))
	inst, err := h.emu.Instance(h.project, "shared")
	h.g.Expect(err).ToNot(HaveOccurred())
	h.g.Expect(inst.Settings.UserLabels).To(HaveKeyWithValue(v1alpha1.OwnerUIDLabelKey, string(owner.GetUID())))
}

// A namespaced object may not even observe an instance another object owns:
// it would show its namespace the owner's connection name and addresses, and
// the injector would route that namespace's pods to it.
func TestNamespacedObserverOfAnotherOwnersInstanceIsRefused(t *testing.T) {
	for _, first := range []kind{cluster, teamA} {
		t.Run(first.String(), func(t *testing.T) {
			h := newHarness(t)
			owner := h.of(first).create(h.of(first).instance("owned", func(p object) { p.Parameters().Name = ptr.To("owned") }))
			observer := h.of(teamB)
			h.g.Expect(env.Client.Create(h.ctx, observer.instance("watcher", func(p object) {
				p.Parameters().Name = ptr.To("owned")
				p.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
			}))).To(Succeed())
			h.g.Eventually(func() string { return observer.condition("watcher", xpv2.TypeSynced).Message }, 30*time.Second, 50*time.Millisecond).Should(And(
				ContainSubstring("Cloud SQL instance owned in project "+h.project+" belongs to another PostgresqlInstance (uid "+string(owner.GetUID())+")"),
				ContainSubstring("a namespaced PostgresqlInstance neither changes nor observes it")))
			h.settle()
			w := observer.get("watcher")
			h.g.Expect(w.GetCondition(xpv2.TypeReady).Status).ToNot(Equal(corev1.ConditionTrue))
			h.g.Expect(w.Observation().ConnectionName).To(BeEmpty(), "nothing of the owner's instance reaches the observer")
		})
	}
}
