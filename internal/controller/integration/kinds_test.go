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
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// An object is a PostgresqlInstance of either kind, as the tests that run for
// both see it: what the controller reads of both (its own view, instance, is
// not exported).
type object interface {
	resource.Managed
	Parameters() *v1alpha1.PostgresqlInstanceParameters
	Observation() *v1alpha1.PostgresqlInstanceObservation
	ConnectionSecret() *xpv2.SecretReference
}

// A kind is one of the PostgresqlInstance kinds, with the provider configuration
// its objects use in a test. The lifecycle tests are written once against it
// and run for each kind, so that both kinds are held to the same behaviour.
type kind interface {
	// String names the kind in the names of subtests.
	String() string
	// empty is an object of the kind to read into.
	empty() object
	// build is a minimal object of the kind named name, configured to use h's
	// emulator, with its connection secret named name-postgres.
	build(h *harness, name string) object
	// fromExample is ex, a cluster-scoped PostgresqlInstance from examples/,
	// as an object of the kind that uses h's emulator.
	fromExample(h *harness, ex *v1alpha1.PostgresqlInstance) object
	// namespace is where h keeps the kind's objects: "" for cluster-scoped.
	namespace(h *harness) string
	// secretNamespace is where the connection secrets of the kind's objects are.
	secretNamespace(h *harness) string
	// appNamespace is a namespace of applications that may use obj, where the
	// injector copies its secrets.
	appNamespace(h *harness, obj object) string
	// setConnectionSecret names obj's connection secret; "" removes it.
	setConnectionSecret(obj object, name string)
	// orphan makes deleting obj leave its Cloud SQL instance.
	orphan(obj object)
}

// The kinds the lifecycle tests run for: the cluster-scoped kind, and the
// namespaced one in namespace team-a through a ClusterProviderConfig.
var (
	cluster kind = clusterKind{}
	teamA   kind = namespacedKind{team: "a"}
	// teamB is the namespaced kind in namespace team-b, through a
	// ProviderConfig of that namespace.
	teamB kind = namespacedKind{team: "b", local: true}
	kinds      = []kind{cluster, teamA}
)

type clusterKind struct{}

func (clusterKind) String() string { return "cluster" }

func (clusterKind) empty() object { return &v1alpha1.PostgresqlInstance{} }

func (clusterKind) build(h *harness, name string) object {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: h.pc}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNamespace, Name: name + "-postgres"}
	return pi
}

func (clusterKind) fromExample(h *harness, ex *v1alpha1.PostgresqlInstance) object {
	ex.Spec.ProviderConfigReference = &xpv2.Reference{Name: h.pc}
	return ex
}

func (clusterKind) namespace(*harness) string { return "" }

func (clusterKind) secretNamespace(*harness) string { return secretNamespace }

// appNamespace is a new namespace: envtest never removes namespaces, so each
// run gets one of its own.
func (clusterKind) appNamespace(h *harness, _ object) string {
	h.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "app-"}}
	h.g.Expect(env.Client.Create(h.ctx, ns)).To(Succeed())
	return ns.Name
}

func (clusterKind) setConnectionSecret(obj object, name string) {
	pi := obj.(*v1alpha1.PostgresqlInstance)
	pi.Spec.WriteConnectionSecretToReference = nil
	if name != "" {
		pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNamespace, Name: name}
	}
}

func (clusterKind) orphan(obj object) {
	obj.(*v1alpha1.PostgresqlInstance).Spec.DeletionPolicy = xpv2.DeletionOrphan
}

// namespacedKind is the namespaced kind in h's namespace for team (h.team),
// through h's ClusterProviderConfig, or with local through a ProviderConfig of
// that namespace named like it.
type namespacedKind struct {
	team  string
	local bool
}

func (k namespacedKind) String() string {
	if k.local {
		return "namespaced-providerconfig"
	}
	return "namespaced"
}

func (namespacedKind) empty() object { return &nsv1alpha1.PostgresqlInstance{} }

func (k namespacedKind) build(h *harness, name string) object {
	h.t.Helper()
	ref := xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: h.clusterProviderConfig()}
	if k.local {
		ref = xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: h.localProviderConfig(k.namespace(h))}
	}
	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: k.namespace(h), Name: name}}
	pi.Spec.ProviderConfigReference = &ref
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-postgres"}
	return pi
}

func (k namespacedKind) fromExample(h *harness, ex *v1alpha1.PostgresqlInstance) object {
	pi := k.build(h, ex.Name)
	pi.SetLabels(ex.Labels)
	pi.SetAnnotations(ex.Annotations)
	*pi.Parameters() = ex.Spec.ForProvider
	k.setConnectionSecret(pi, ex.Spec.WriteConnectionSecretToReference.Name)
	return pi
}

func (k namespacedKind) namespace(h *harness) string { return h.team(k.team) }

func (k namespacedKind) secretNamespace(h *harness) string { return k.namespace(h) }

// appNamespace is obj's own: a namespaced PostgresqlInstance serves the pods of
// its namespace only, and an owner reference cannot cross namespaces.
func (namespacedKind) appNamespace(_ *harness, obj object) string { return obj.GetNamespace() }

func (namespacedKind) setConnectionSecret(obj object, name string) {
	pi := obj.(*nsv1alpha1.PostgresqlInstance)
	pi.Spec.WriteConnectionSecretToReference = nil
	if name != "" {
		pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name}
	}
}

// orphan leaves Delete out of the management policies: the namespaced kind has
// no deletion policy.
func (namespacedKind) orphan(obj object) {
	obj.SetManagementPolicies(xpv2.ManagementPolicies{
		xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize,
	})
}

// team is h's namespace for team (team-a, team-b, ...), made on first use. The
// harness's id keeps it apart from every other test's: envtest never removes
// namespaces, and what a namespace holds (connection secrets, copied secrets)
// would outlive the test.
func (h *harness) team(team string) string {
	h.t.Helper()
	name := "team-" + team + "-" + h.id
	h.mu.Lock()
	made := h.namespaces[name]
	h.mu.Unlock()
	if made {
		return name
	}
	h.g.Expect(env.Client.Create(h.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	h.mu.Lock()
	h.namespaces[name] = true
	h.mu.Unlock()
	return name
}

// clusterProviderConfig is the name of h's ClusterProviderConfig, made on
// first use, pointing at its emulator like its ProviderConfig.
func (h *harness) clusterProviderConfig() string {
	h.t.Helper()
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: h.pc}, Spec: h.clusterProviderConfigSpec()}
	h.g.Expect(client.IgnoreAlreadyExists(env.Client.Create(h.ctx, cpc))).To(Succeed())
	return h.pc
}

// localProviderConfig is the name of h's ProviderConfig in namespace ns, made
// on first use, pointing at its emulator like its ProviderConfig.
func (h *harness) localProviderConfig(ns string) string {
	h.t.Helper()
	spec := h.providerConfigSpec()
	pc := &nsv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: h.pc}, Spec: nsv1alpha1.ProviderConfigSpec{
		Project:     spec.Project,
		Credentials: nsv1alpha1.LocalCredentials{Source: spec.Credentials.Source},
	}}
	h.g.Expect(client.IgnoreAlreadyExists(env.Client.Create(h.ctx, pc))).To(Succeed())
	return h.pc
}

// cleanupNamespaced removes what the harness made of the namespaced group,
// so that no later test's controllers pick it up.
func (h *harness) cleanupNamespaced() {
	h.mu.Lock()
	namespaces := make([]string, 0, len(h.namespaces))
	for ns := range h.namespaces {
		namespaces = append(namespaces, ns)
	}
	h.mu.Unlock()
	for _, ns := range namespaces {
		list := &nsv1alpha1.PostgresqlInstanceList{}
		_ = env.Client.List(h.ctx, list, client.InNamespace(ns))
		for i := range list.Items {
			pi := &list.Items[i]
			pi.Finalizers = nil
			_ = env.Client.Update(h.ctx, pi)
			_ = env.Client.Delete(h.ctx, pi)
		}
		_ = env.Client.Delete(h.ctx, &nsv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: h.pc}})
	}
	_ = env.Client.Delete(h.ctx, &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: h.pc}})
}

// kindHarness is a harness whose helpers read and write objects of one kind.
type kindHarness struct {
	*harness
	k kind
}

func (h *harness) of(k kind) kindHarness { return kindHarness{harness: h, k: k} }

func (h kindHarness) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: h.k.namespace(h.harness), Name: name}
}

// instance is a minimal object of the kind, changed by fns, whose connection
// secret the harness deletes when the test ends.
func (h kindHarness) instance(name string, fns ...func(object)) object {
	h.t.Helper()
	pi := h.k.build(h.harness, name)
	pi.Parameters().Networking.PublicIP.Enabled = true
	for _, fn := range fns {
		fn(pi)
	}
	h.track(pi)
	return pi
}

// create stores the object and waits until it is Ready and Synced.
func (h kindHarness) create(pi object) object {
	h.t.Helper()
	h.g.Expect(env.Client.Create(h.ctx, pi)).To(Succeed())
	return h.waitReady(pi.GetName())
}

// lookup reads the object named name, if there is one.
func (h kindHarness) lookup(name string) (object, error) {
	pi := h.k.empty()
	return pi, env.Client.Get(h.ctx, h.key(name), pi)
}

func (h kindHarness) get(name string) object {
	h.t.Helper()
	pi, err := h.lookup(name)
	h.g.Expect(err).ToNot(HaveOccurred())
	return pi
}

// condition is the condition of type ct of the object named name.
func (h kindHarness) condition(name string, ct xpv2.ConditionType) xpv2.Condition {
	h.t.Helper()
	return h.get(name).GetCondition(ct)
}

func (h kindHarness) waitReady(name string) object {
	h.t.Helper()
	var pi object
	h.g.Eventually(func(g Gomega) {
		var err error
		pi, err = h.lookup(name)
		g.Expect(err).ToNot(HaveOccurred())
		ready, synced := pi.GetCondition(xpv2.TypeReady), pi.GetCondition(xpv2.TypeSynced)
		g.Expect(ready.Status).To(Equal(corev1.ConditionTrue), "%+v %+v", ready, synced)
		g.Expect(synced.Status).To(Equal(corev1.ConditionTrue), "%+v %+v", ready, synced)
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	return pi
}

// update changes the stored object, retrying on conflicts with the controller.
func (h kindHarness) update(name string, fn func(object)) {
	h.t.Helper()
	h.g.Eventually(func() error {
		pi, err := h.lookup(name)
		if err != nil {
			return err
		}
		fn(pi)
		return env.Client.Update(h.ctx, pi)
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
}

// poke makes the controller reconcile the object now, as a poll would.
func (h kindHarness) poke(name string, n int) {
	h.update(name, func(pi object) {
		meta.AddAnnotations(pi, map[string]string{"test.cloudsql.travelaudience.com/poke": fmt.Sprint(n)})
	})
}

// waitGone waits until the object is deleted from the API server.
func (h kindHarness) waitGone(name string) {
	h.t.Helper()
	h.g.Eventually(func() bool {
		_, err := h.lookup(name)
		return kerrors.IsNotFound(err)
	}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
}

// ownerReference is a reference to pi, as the injector sets on the secrets it
// copies for it.
func ownerReference(g Gomega, pi object) metav1.OwnerReference {
	gvk, err := apiutil.GVKForObject(pi, env.Scheme)
	g.Expect(err).ToNot(HaveOccurred())
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: pi.GetName(), UID: pi.GetUID()}
}
