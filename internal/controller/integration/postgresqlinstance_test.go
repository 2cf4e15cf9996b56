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
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/metrics"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
)

// fromExample reads a PostgresqlInstance from examples/ and makes it an object
// of the kind that uses the harness.
func (h kindHarness) fromExample(file string) object {
	h.t.Helper()
	objs, err := manifests.ReadFile(filepath.Join(controlplane.RepoRoot(), "examples", file))
	h.g.Expect(err).ToNot(HaveOccurred())
	for _, o := range objs {
		if o.GetKind() != v1alpha1.PostgresqlInstanceKind {
			continue
		}
		ex := &v1alpha1.PostgresqlInstance{}
		h.g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, ex)).To(Succeed())
		pi := h.k.fromExample(h.harness, ex)
		h.track(pi)
		return pi
	}
	h.t.Fatalf("no PostgresqlInstance in %s", file)
	return nil
}

// Both kinds, the namespaced one through a ClusterProviderConfig and through a
// ProviderConfig of its own namespace.
func TestCreateBecomesReadyWithConnectionDetails(t *testing.T) {
	for _, k := range []kind{cluster, teamA, teamB} {
		for _, file := range []string{"postgresqlinstance-minimal.yaml", "postgresqlinstance-full.yaml"} {
			t.Run(k.String()+"/"+strings.TrimSuffix(file, ".yaml"), func(t *testing.T) {
				testCreateBecomesReadyWithConnectionDetails(newHarness(t).of(k), file)
			})
		}
	}
}

func testCreateBecomesReadyWithConnectionDetails(h kindHarness, file string) {
	pi := h.create(h.fromExample(file))
	name := cloudsql.InstanceName(pi)

	// The instance exists as specified, labelled with its object, and the
	// annotation names it.
	inst, err := h.emu.Instance(h.project, name)
	h.g.Expect(err).ToNot(HaveOccurred())
	h.g.Expect(cloudsql.Compare(*pi.Parameters(), inst).UpToDate()).To(BeTrue())
	h.g.Expect(inst.Settings.UserLabels).To(HaveKeyWithValue("owner", "cloudsql-postgres-operator"))
	h.g.Expect(inst.Settings.UserLabels).To(HaveKeyWithValue(v1alpha1.OwnerUIDLabelKey, string(pi.GetUID())))
	h.g.Expect(meta.GetExternalName(pi)).To(Equal(name))
	// On Cloud SQL's side it is protected, and keeps its backups when deleted.
	h.g.Expect(inst.Settings.DeletionProtectionEnabled).To(BeTrue())
	h.g.Expect(inst.Settings.RetainBackupsOnDelete).To(BeTrue())
	h.g.Expect(inst.Settings.FinalBackupConfig).ToNot(BeNil())
	h.g.Expect(inst.Settings.FinalBackupConfig.Enabled).To(BeTrue())

	// status.atProvider is filled.
	at := pi.Observation()
	h.g.Expect(at.State).To(Equal("RUNNABLE"))
	h.g.Expect(at.ConnectionName).To(Equal(h.project + ":" + pi.Parameters().Location.Region + ":" + name))
	h.g.Expect(at.PublicIP).ToNot(BeEmpty())
	h.g.Expect(at.GCEZone).ToNot(BeEmpty())
	h.g.Expect(at.DatabaseInstalledVersion).To(HavePrefix("POSTGRES_"))
	h.g.Expect(at.CurrentDiskSizeGb).To(BeNumerically(">=", pi.Parameters().Resources.Disk.SizeMinimumGb))
	h.g.Expect(at.ServiceAccountEmailAddress).ToNot(BeEmpty())
	h.g.Expect(at.SettingsVersion).To(BeNumerically(">=", 1))
	h.g.Expect(at.SelfLink).To(ContainSubstring(name))

	// The secret, beside a namespaced object and controlled by the object,
	// holds every key, and the password is the instance's.
	var s *corev1.Secret
	h.g.Eventually(func(g Gomega) {
		s = h.secret(pi)
		g.Expect(s.Data).To(HaveKey(cloudsql.ConnectionKeyConnectionName))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
	h.g.Expect(s.Namespace).To(Equal(h.k.secretNamespace(h.harness)))
	h.g.Expect(metav1.GetControllerOf(s)).To(HaveField("UID", pi.GetUID()))
	for _, k := range []string{
		cloudsql.ConnectionKeyUsername, cloudsql.ConnectionKeyPassword, cloudsql.ConnectionKeyEndpoint,
		cloudsql.ConnectionKeyPort, cloudsql.ConnectionKeyPublicIP, cloudsql.ConnectionKeyPrivateIP,
		cloudsql.ConnectionKeyConnectionName, cloudsql.ConnectionKeyServerCACert,
		cloudsql.ConnectionKeyServerCAExpirationTime, cloudsql.ConnectionKeyPgpass,
	} {
		h.g.Expect(s.Data).To(HaveKey(k))
	}
	password := string(s.Data[cloudsql.ConnectionKeyPassword])
	h.g.Expect(password).To(HaveLen(cloudsql.PasswordLength))
	h.g.Expect(h.emu.PasswordIs(h.project, name, "postgres", password)).To(BeTrue())
	h.g.Expect(string(s.Data[cloudsql.ConnectionKeyUsername])).To(Equal("postgres"))
	h.g.Expect(string(s.Data[cloudsql.ConnectionKeyPort])).To(Equal("5432"))
	h.g.Expect(string(s.Data[cloudsql.ConnectionKeyPgpass])).To(Equal("127.0.0.1:*:*:postgres:" + password + "\n"))
	h.g.Expect(string(s.Data[cloudsql.ConnectionKeyServerCACert])).To(HavePrefix("-----BEGIN CERTIFICATE-----"))
	if pi.Parameters().Networking.PrivateIP.Enabled {
		h.g.Expect(string(s.Data[cloudsql.ConnectionKeyEndpoint])).To(Equal(at.PrivateIP))
	} else {
		h.g.Expect(string(s.Data[cloudsql.ConnectionKeyEndpoint])).To(Equal(at.PublicIP))
	}
	// One insert, never a second one.
	h.g.Expect(h.calls(emulator.MethodInstancesInsert, "")).To(Equal(1))
}

// An instance that Cloud SQL takes a while to create (PENDING_CREATE) is looked
// at again at the busy poll interval, not at the poll interval (an hour here),
// and becomes Ready soon after Cloud SQL is done. The create takes 4s: longer
// than the retry that the create's own requeue brings, which alone would find
// a 2s create done.
func TestPendingCreateIsPolledSoon(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			h := newHarness(t, withEmulator(emulator.WithDelays(4*time.Second, 0, 0))).of(k)
			h.g.Expect(env.Client.Create(h.ctx, h.instance("slow"))).To(Succeed())
			h.g.Eventually(func() xpv2.ConditionReason { return h.condition("slow", xpv2.TypeReady).Reason }, 10*time.Second, 20*time.Millisecond).
				Should(Equal(xpv2.ReasonCreating))
			h.waitReady("slow")
			h.g.Expect(h.calls(emulator.MethodInstancesInsert, "")).To(Equal(1))
		})
	}
}

// In the steady state no poll writes. In get mode every poll costs one
// instances.get; in list mode polls within half a poll interval share one
// listing and cost no instances.get at all.
func TestSteadyStatePollsCostOneReadAndNoWrite(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) { testSteadyStatePollsCostOneReadAndNoWrite(newHarness(t).of(k)) })
	}
}

func testSteadyStatePollsCostOneReadAndNoWrite(h kindHarness) {
	pi := h.create(h.instance("steady"))
	h.settle()

	gets, lists, writes := h.calls(emulator.MethodInstancesGet, "steady"), h.calls(emulator.MethodInstancesList, ""), h.writes()
	perPoll := 1
	if observeMode == configfile.ObserveList {
		perPoll = 0
	}
	for i := 1; i <= 10; i++ {
		seen := observations(h.g)
		h.poke(pi.GetName(), i)
		// The poke was observed (in list mode nothing else shows it).
		h.g.Eventually(func() float64 { return observations(h.g) }, 10*time.Second, 20*time.Millisecond).Should(BeNumerically(">", seen))
		h.g.Eventually(func() int { return h.calls(emulator.MethodInstancesGet, "steady") }, 10*time.Second, 20*time.Millisecond).Should(Equal(gets + perPoll*i))
	}
	h.g.Consistently(func() int { return h.calls(emulator.MethodInstancesGet, "steady") }, 500*time.Millisecond, 50*time.Millisecond).Should(Equal(gets + perPoll*10))
	h.g.Expect(h.writes()).To(Equal(writes), "an unchanged, ready instance was written to")
	h.g.Expect(h.calls(emulator.MethodOperationsList, "")).To(Equal(0))
	if observeMode == configfile.ObserveList {
		h.g.Expect(h.calls(emulator.MethodInstancesList, "")-lists).To(BeNumerically("<=", 1), "ten polls within half a poll interval share one listing")
	}
}

// Each managed field changed in the spec causes exactly one patch, and converges.
func TestEachFieldChangeIsOnePatch(t *testing.T) {
	type pi = v1alpha1.PostgresqlInstance
	cases := map[string]func(*pi){
		"InstanceType":     func(p *pi) { p.Spec.ForProvider.Resources.InstanceType = "db-custom-2-7680" },
		"Availability":     func(p *pi) { p.Spec.ForProvider.Availability.Type = v1alpha1.AvailabilityRegional },
		"BackupsOff":       func(p *pi) { p.Spec.ForProvider.Backups.Daily.Enabled = ptr.To(false) },
		"BackupStart":      func(p *pi) { p.Spec.ForProvider.Backups.Daily.StartTime = "22:00" },
		"Flags":            func(p *pi) { p.Spec.ForProvider.Flags = []string{"autovacuum=on", "max_connections=200"} },
		"Labels":           func(p *pi) { p.Spec.ForProvider.Labels = map[string]v1alpha1.LabelValue{"team": "payments"} },
		"Zone":             func(p *pi) { p.Spec.ForProvider.Location.Zone = "europe-west1-c" },
		"MaintenanceHour0": func(p *pi) { p.Spec.ForProvider.Maintenance = v1alpha1.Maintenance{Day: "Sunday", Hour: "00:00"} },
		"AuthorizedNetworks": func(p *pi) {
			p.Spec.ForProvider.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "120.90.60.0/24", Name: "bob"}}
		},
		"PrivateIp": func(p *pi) {
			p.Spec.ForProvider.Networking.PrivateIP = v1alpha1.PrivateIP{Enabled: true, Network: "projects/my-project-123/global/networks/default"}
		},
		"PublicIpOff": func(p *pi) {
			p.Spec.ForProvider.Networking.PrivateIP = v1alpha1.PrivateIP{Enabled: true, Network: "projects/my-project-123/global/networks/default"}
			p.Spec.ForProvider.Networking.PublicIP.Enabled = false
		},
		"DiskGrow":  func(p *pi) { p.Spec.ForProvider.Resources.Disk.SizeMinimumGb = 20 },
		"DiskLimit": func(p *pi) { p.Spec.ForProvider.Resources.Disk.SizeMaximumGb = 100 },
		"DiskFixed": func(p *pi) { p.Spec.ForProvider.Resources.Disk.SizeMaximumGb = 10 },
		"ToPlus": func(p *pi) {
			p.Spec.ForProvider.Edition = v1alpha1.EditionEnterprisePlus
			p.Spec.ForProvider.Resources.InstanceType = "db-perf-optimized-N-2"
		},
	}
	h := newHarness(t)
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			// The instance's name: Kubernetes and Cloud SQL names are lowercase.
			name := strings.ToLower(name)
			h.create(h.instance(name))
			patches := h.calls(emulator.MethodInstancesPatch, name)
			h.update(name, change)
			g.Eventually(func(g Gomega) {
				want := h.get(name)
				inst, err := h.emu.Instance(h.project, name)
				g.Expect(err).ToNot(HaveOccurred())
				g.Expect(cloudsql.Compare(want.Spec.ForProvider, inst).All()).To(BeEmpty())
			}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
			// Let the follow-up reconciles run: none may patch again.
			h.poke(name, 1)
			g.Consistently(func() int { return h.calls(emulator.MethodInstancesPatch, name) }, 500*time.Millisecond, 50*time.Millisecond).Should(Equal(patches + 1))
			g.Expect(h.get(name).GetCondition(xpv2.TypeSynced).Status).To(Equal(corev1.ConditionTrue))
		})
	}
}

// A change made outside Kubernetes (a console edit) is reverted at the next poll
// that reads the instance after it (in list mode, one whose listing is younger than
// the change), with one patch. Polls come every 2s here.
func TestOutOfBandChangeIsReverted(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			testOutOfBandChangeIsReverted(newHarness(t, withIntervals(2*time.Second, 100*time.Millisecond)).of(k))
		})
	}
}

func testOutOfBandChangeIsReverted(h kindHarness) {
	pi := h.create(h.instance("drift"))
	h.g.Expect(h.emu.MutateInstance(h.project, "drift", func(i *sqladmin.DatabaseInstance) {
		i.Settings.Tier = "db-custom-4-15360"
		i.Settings.IpConfiguration.AuthorizedNetworks = append(i.Settings.IpConfiguration.AuthorizedNetworks, &sqladmin.AclEntry{Value: "0.0.0.0/0", Name: "oops"})
	})).To(Succeed())
	patches := h.calls(emulator.MethodInstancesPatch, "drift")
	h.poke(pi.GetName(), 1)
	h.g.Eventually(func(g Gomega) {
		inst, err := h.emu.Instance(h.project, "drift")
		g.Expect(err).ToNot(HaveOccurred())
		g.Expect(inst.Settings.Tier).To(Equal("db-custom-1-3840"))
		g.Expect(inst.Settings.IpConfiguration.AuthorizedNetworks).To(BeEmpty())
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	h.poke(pi.GetName(), 2)
	h.g.Consistently(func() int { return h.calls(emulator.MethodInstancesPatch, "drift") }, 500*time.Millisecond, 50*time.Millisecond).Should(Equal(patches + 1))
}

// In list mode, the project's scheduled listings observe every instance without
// a reconcile each, and an out-of-band change they notice brings a reconcile at
// once: the object's own poll (an hour here) is not waited for.
func TestScheduledListingNoticesAnOutOfBandChange(t *testing.T) {
	h := newHarness(t, withObserve(configfile.ObserveList), withIntervals(4*time.Second, 100*time.Millisecond))
	hourly := func(pi *v1alpha1.PostgresqlInstance) {
		pi.Annotations = map[string]string{meta.AnnotationKeyPollInterval: "1h"}
	}
	h.create(h.instance("noticed", hourly))
	h.create(h.instance("untouched", hourly))
	h.settle()

	// The listings that saw the creates end have brought their reconciles; then
	// it is quiet: listings every 2s read both instances, no reconcile observes
	// them.
	h.g.Eventually(func() float64 {
		before := observations(h.g)
		time.Sleep(3 * time.Second)
		return observations(h.g) - before
	}, 30*time.Second).Should(BeZero())
	reconciled, gaps, lists := observations(h.g), gapSamples(h.g), h.calls(emulator.MethodInstancesList, "")
	h.g.Eventually(func() uint64 { return gapSamples(h.g) }, 10*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", gaps+4))
	h.g.Expect(h.calls(emulator.MethodInstancesList, "")).To(BeNumerically(">=", lists+2))
	h.g.Expect(observations(h.g)).To(Equal(reconciled), "nothing changed: nothing reconciled")

	writes := h.writes()
	h.g.Expect(h.emu.MutateInstance(h.project, "noticed", func(i *sqladmin.DatabaseInstance) { i.Settings.Tier = "db-custom-4-15360" })).To(Succeed())
	h.g.Eventually(func(g Gomega) {
		inst, err := h.emu.Instance(h.project, "noticed")
		g.Expect(err).ToNot(HaveOccurred())
		g.Expect(inst.Settings.Tier).To(Equal("db-custom-1-3840"))
	}, 20*time.Second, 50*time.Millisecond).Should(Succeed())
	h.g.Consistently(func() int { return h.calls(emulator.MethodInstancesPatch, "noticed") }, 3*time.Second, 100*time.Millisecond).Should(Equal(1))
	h.g.Expect(h.writes()).To(Equal(writes+1), "only the changed instance was written to, once")
}

// Deleting deletes the Cloud SQL instance, or with deletionPolicy Orphan (the
// namespaced kind: management policies without Delete) leaves it; either way
// the secrets copied for the object go, and a kept instance keeps its
// connection secret.
func TestDeletion(t *testing.T) {
	for _, k := range kinds {
		for _, policy := range []xpv2.DeletionPolicy{xpv2.DeletionDelete, xpv2.DeletionOrphan} {
			t.Run(k.String()+"/"+string(policy), func(t *testing.T) {
				testDeletion(newHarness(t, withEmulator(emulator.WithDelays(0, 0, 3*time.Second))).of(k), policy)
			})
		}
	}
}

func testDeletion(h kindHarness, policy xpv2.DeletionPolicy) {
	name := "del-" + strings.ToLower(string(policy))
	pi := h.create(h.instance(name, func(p object) {
		if policy == xpv2.DeletionOrphan {
			h.k.orphan(p)
		} else {
			meta.AddAnnotations(p, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
		}
	}))

	// A secret the injector copied into an application namespace, labelled as
	// the injector labels the copies of the instance's kind.
	ns := h.k.appNamespace(h.harness, pi)
	owner := ownerReference(h.g, pi)
	label := v1alpha1.LabelInstance
	if pi.GetNamespace() != "" {
		label = nsv1alpha1.LabelInstance
	}
	replica := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pgpass", Labels: map[string]string{label: name}, OwnerReferences: []metav1.OwnerReference{owner}}}
	h.g.Expect(env.Client.Create(h.ctx, replica)).To(Succeed())
	unrelated := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other", Labels: map[string]string{label: "another-instance"}}}
	h.g.Expect(env.Client.Create(h.ctx, unrelated)).To(Succeed())
	// Someone's secret that merely carries the label is not the provider's to delete.
	labelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "labelled", Labels: map[string]string{label: name}}}
	h.g.Expect(env.Client.Create(h.ctx, labelled)).To(Succeed())

	h.g.Expect(env.Client.Delete(h.ctx, pi)).To(Succeed())
	if policy == xpv2.DeletionDelete {
		// Deleting is reported while Cloud SQL still has the instance (the
		// delete takes it 3s).
		h.g.Eventually(func() xpv2.ConditionReason {
			pi, err := h.lookup(name)
			if err != nil {
				return xpv2.ConditionReason("gone before Deleting was reported: " + err.Error())
			}
			return pi.GetCondition(xpv2.TypeReady).Reason
		}, 10*time.Second, 20*time.Millisecond).Should(Equal(xpv2.ReasonDeleting))
		_, err := h.emu.Instance(h.project, name)
		h.g.Expect(err).ToNot(HaveOccurred(), "the instance was gone before Deleting was reported")
	}
	h.waitGone(name)

	_, err := h.emu.Instance(h.project, name)
	if policy == xpv2.DeletionDelete {
		h.g.Expect(err).To(MatchError(emulator.ErrInstanceNotFound))
		h.g.Expect(h.calls(emulator.MethodInstancesDelete, name)).To(Equal(1))
		h.g.Expect(h.calls(emulator.MethodInstancesPatch, name)).To(Equal(1), "one patch lifts the deletion protection")
	} else {
		h.g.Expect(err).ToNot(HaveOccurred())
		h.g.Expect(h.calls(emulator.MethodInstancesDelete, name)).To(Equal(0))
	}
	err = env.Client.Get(h.ctx, client.ObjectKeyFromObject(replica), &corev1.Secret{})
	h.g.Expect(err).To(HaveOccurred(), "the copied secret outlived its instance")
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(unrelated), &corev1.Secret{})).To(Succeed())
	h.g.Expect(env.Client.Get(h.ctx, client.ObjectKeyFromObject(labelled), &corev1.Secret{})).To(Succeed())

	// The connection secret: released when the instance stays, so that garbage
	// collection (which envtest does not run) leaves its working password.
	conn := h.secret(pi)
	owners := []types.UID{}
	for _, o := range conn.OwnerReferences {
		owners = append(owners, o.UID)
	}
	if policy == xpv2.DeletionOrphan {
		h.g.Expect(owners).ToNot(ContainElement(pi.GetUID()))
		h.g.Expect(h.emu.PasswordIs(h.project, name, "postgres", string(conn.Data[cloudsql.ConnectionKeyPassword]))).To(BeTrue())
	} else {
		h.g.Expect(owners).To(ContainElement(pi.GetUID()))
	}
}

// A DELETE sent straight to Cloud SQL for an instance the provider made is
// refused (it is protected). Deleting an object without the allow-deletion
// annotation (its guard, the admission webhook, is not part of this suite)
// writes nothing to Cloud SQL and
// says why; once the annotation is added, one patch lifts the instance's
// deletion protection and one delete takes it, and its final backup stays
// listed.
func TestDeletionNeedsTheAnnotation(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) { testDeletionNeedsTheAnnotation(newHarness(t).of(k)) })
	}
}

func testDeletionNeedsTheAnnotation(h kindHarness) {
	name := "unallowed"
	h.create(h.instance(name))
	// Someone else's DELETE, sent straight to Cloud SQL, is refused: the
	// provider made the instance protected.
	_, err := h.svc().Instances.Delete(h.project, name).Do()
	h.g.Expect(err).To(MatchError(ContainSubstring("deletion protection")))
	_, err = h.emu.Instance(h.project, name)
	h.g.Expect(err).ToNot(HaveOccurred())
	writes := h.writes()
	h.g.Expect(env.Client.Delete(h.ctx, h.get(name))).To(Succeed())
	h.g.Eventually(func() string { return h.condition(name, xpv2.TypeSynced).Message }, 30*time.Second, 50*time.Millisecond).Should(
		ContainSubstring("is being deleted without the annotation " + v1alpha1.AnnotationAllowDeletion))
	h.settle()
	h.g.Expect(h.writes()).To(Equal(writes), "an unallowed deletion wrote to Cloud SQL")

	pi := h.get(name)
	meta.AddAnnotations(pi, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
	h.g.Expect(env.Client.Update(h.ctx, pi)).To(Succeed())
	h.waitGone(name)
	h.g.Expect(h.calls(emulator.MethodInstancesPatch, name)).To(Equal(1))
	h.g.Expect(h.calls(emulator.MethodInstancesDelete, name)).To(Equal(2), "the refused one and the provider's")
	h.g.Expect(h.accepted(emulator.MethodInstancesDelete, name)).To(Equal(1))
	backups, err := h.svc().Backups.ListBackups("projects/" + h.project).Do()
	h.g.Expect(err).ToNot(HaveOccurred())
	final := 0
	for _, b := range backups.Backups {
		if b.Instance == name && b.Type == "FINAL" {
			final++
		}
	}
	h.g.Expect(final).To(Equal(1), "the final backup of the deleted instance is listed")
}

// A delete called off after its patch lifted the deletion protection (Cloud
// SQL refused the delete) leaves no live instance unprotected, whether the
// allow-deletion annotation is removed (the object stays, deleting nothing)
// or the object is switched to keep its instance (deletionPolicy Orphan; the
// namespaced kind: no Delete policy), which the managed reconciler lets go
// without observing it: one patch puts the protection back first, and
// nothing else is written.
func TestProtectionComesBackWhenTheDeleteIsCalledOff(t *testing.T) {
	for _, k := range kinds {
		for _, how := range []string{"annotation-removed", "orphaned"} {
			t.Run(k.String()+"/"+how, func(t *testing.T) { testProtectionComesBackWhenTheDeleteIsCalledOff(newHarness(t).of(k), how) })
		}
	}
}

func testProtectionComesBackWhenTheDeleteIsCalledOff(h kindHarness, how string) {
	name := "called-off"
	h.create(h.instance(name, func(p object) {
		meta.AddAnnotations(p, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
	}))
	protected := func(g Gomega) bool {
		inst, err := h.emu.Instance(h.project, name)
		g.Expect(err).ToNot(HaveOccurred())
		return inst.Settings.DeletionProtectionEnabled
	}
	h.g.Expect(h.emu.InjectFault(emulator.Fault{Method: emulator.MethodInstancesDelete, ServerErrorShare: 1})).To(Succeed())
	h.g.Expect(env.Client.Delete(h.ctx, h.get(name))).To(Succeed())
	h.g.Eventually(func(g Gomega) {
		g.Expect(protected(g)).To(BeFalse())
		g.Expect(h.calls(emulator.MethodInstancesDelete, name)).To(BeNumerically(">=", 1))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())

	pi := h.get(name)
	if how == "orphaned" {
		h.k.orphan(pi)
		h.g.Expect(env.Client.Update(h.ctx, pi)).To(Succeed())
		h.waitGone(name)
		h.g.Expect(protected(h.g)).To(BeTrue(), "the object went, leaving its instance unprotected")
		h.g.Expect(h.calls(emulator.MethodInstancesPatch, name)).To(Equal(2), "one patch lifted the protection, one put it back")
		return
	}
	delete(pi.GetAnnotations(), v1alpha1.AnnotationAllowDeletion)
	h.g.Expect(env.Client.Update(h.ctx, pi)).To(Succeed())
	h.g.Eventually(protected, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	h.settle()
	h.g.Expect(h.calls(emulator.MethodInstancesPatch, name)).To(Equal(2), "one patch lifted the protection, one put it back")
	h.g.Expect(h.condition(name, xpv2.TypeSynced).Message).To(ContainSubstring("is being deleted without the annotation " + v1alpha1.AnnotationAllowDeletion))

	// Allowed again, the delete goes through once Cloud SQL takes it.
	h.emu.ClearFaults()
	pi = h.get(name)
	meta.AddAnnotations(pi, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
	h.g.Expect(env.Client.Update(h.ctx, pi)).To(Succeed())
	h.waitGone(name)
	h.g.Expect(h.calls(emulator.MethodInstancesPatch, name)).To(Equal(3))
}

// A name that Cloud SQL reserves after a deletion gives a condition that says so,
// and is retried at the poll interval, not in a hot loop.
func TestReservedNameIsReportedAndNotHammered(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) { testReservedNameIsReportedAndNotHammered(newHarness(t).of(k)) })
	}
}

func testReservedNameIsReportedAndNotHammered(h kindHarness) {
	h.g.Expect(h.emu.Seed(h.project, &sqladmin.DatabaseInstance{Name: "reserved", DatabaseVersion: "POSTGRES_15", Region: "europe-west1",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840", Edition: "ENTERPRISE"}})).To(Succeed())
	op, err := h.svc().Instances.Delete(h.project, "reserved").Do()
	h.g.Expect(err).ToNot(HaveOccurred())
	h.g.Expect(op.Name).ToNot(BeEmpty())
	h.emu.FinishOperations()

	h.g.Expect(env.Client.Create(h.ctx, h.instance("reserved"))).To(Succeed())
	h.g.Eventually(func(g Gomega) {
		c := h.condition("reserved", xpv2.TypeSynced)
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring("the Cloud SQL instance name reserved in project " + h.project + " was used by an instance deleted within the last week"))
		g.Expect(c.Message).To(ContainSubstring("create the PostgresqlInstance again with another name"))
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	// The error backoff would try again after about 1s, 2s and 4s. Two inserts
	// are expected: the object's creation and the annotation that records the
	// external name each start a reconcile.
	h.g.Consistently(func() int { return h.calls(emulator.MethodInstancesInsert, "") }, 5*time.Second, 100*time.Millisecond).Should(BeNumerically("<=", 2))

	// The fix the message asks for: the same instance under another name.
	h.g.Expect(env.Client.Delete(h.ctx, h.get("reserved"))).To(Succeed())
	h.waitGone("reserved")
	h.create(h.instance("reserved-2"))
}

// observations counts the provider's observations of instances seen before (the
// samples of its observation-gap histogram), in every test so far.
// gapSamples counts the reads of instances from Cloud SQL that had a read before.
func gapSamples(g Gomega) uint64 {
	m := &dto.Metric{}
	g.Expect(metrics.ObservationGap.Write(m)).To(Succeed())
	return m.GetHistogram().GetSampleCount()
}

// observations counts the reconciles that observed an instance, from a listing
// or with instances.get.
func observations(g Gomega) float64 {
	n := 0.0
	for _, source := range []string{"listing", "get"} {
		m := &dto.Metric{}
		g.Expect(metrics.Observations.WithLabelValues(source).Write(m)).To(Succeed())
		n += m.GetCounter().GetValue()
	}
	return n
}
