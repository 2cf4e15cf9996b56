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
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// rolloutsPerMinute is the rollout's rate in these tests: a restart every
// 10 s, which a test sees hold the second of two back.
const rolloutsPerMinute = 6

// deployment creates a Deployment of ns whose pods request instance, with a
// ReplicaSet and one pod, as the Deployment and ReplicaSet controllers would
// (the test's API server runs none), the pod through the injector.
func deployment(t testing.TB, ns, name, instance string) *appsv1.Deployment {
	t.Helper()
	return deploymentAsking(t, ns, name, instance)
}

// deploymentAsking is deployment whose pods also carry the annotations kv
// (name, value, name, value...).
func deploymentAsking(t testing.TB, ns, name, instance string, kv ...string) *appsv1.Deployment {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	labels := map[string]string{"app": name}
	annotations := map[string]string{v1alpha1.AnnotationInstanceName: instance}
	for i := 0; i+1 < len(kv); i += 2 {
		annotations[kv[i]] = kv[i+1]
	}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	g.Expect(env.Client.Create(ctx, d)).To(Succeed())
	controller := func(kind string, o client.Object) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: o.GetName(), UID: o.GetUID(), Controller: ptr.To(true)}}
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-1", OwnerReferences: controller("Deployment", d)},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	g.Expect(env.Client.Create(ctx, rs)).To(Succeed())
	pod := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
	pod.Namespace, pod.Name, pod.OwnerReferences = ns, name+"-1-a", controller("ReplicaSet", rs)
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	return d
}

// restartedFor is the ProxyConfig the rollout restarted d for, zero while
// it has not.
func restartedFor(g Gomega, d *appsv1.Deployment) podinject.ProxyConfig {
	got := &appsv1.Deployment{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(d), got)).To(Succeed())
	c, _ := podinject.ParseProxyConfig(got.Spec.Template.Annotations[podinject.AnnotationProxyConfig])
	if c.Image != "" {
		g.Expect(got.Spec.Template.Annotations).To(HaveKey(podinject.AnnotationRestartedAt))
	}
	return c
}

// optsIn lets the rollout restart the workloads of the instance's pods.
func optsIn(pi *v1alpha1.PostgresqlInstance) {
	pi.Annotations = map[string]string{v1alpha1.AnnotationProxyRollout: "true"}
}

// moveInstance gives the instance another connection name, as a failover
// to another region would.
func moveInstance(g Gomega, name, connectionName string) {
	pi := &v1alpha1.PostgresqlInstance{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, pi)).To(Succeed())
	pi.Status.AtProvider.ConnectionName = connectionName
	g.Expect(env.Client.Status().Update(context.Background(), pi)).To(Succeed())
}

// bindRollout lets the rollout restart the workloads of ns, as
// cluster/deploy/rollout.yaml says: a RoleBinding of its ClusterRole to the
// provider's service account.
func bindRollout(t testing.TB, ns string) {
	t.Helper()
	NewWithT(t).Expect(env.Client.Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "provider-cloudsql-postgres-rollout"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: podinject.RolloutClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: secretNS, Name: "provider-cloudsql-postgres"}},
	})).To(Succeed())
}

// rolloutCondition is the instance's ProxyRollout condition.
func rolloutCondition(g Gomega, name string) xpv2.Condition {
	pi := &v1alpha1.PostgresqlInstance{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: name}, pi)).To(Succeed())
	return pi.GetCondition(podinject.ConditionProxyRollout)
}

// The injector records on each pod what its proxy started with; when that no
// longer matches (here the instance's connection name), the rollout restarts
// the Deployments of an instance that opts in, one every 10 s at most, and
// says so on the instance, naming what changed.
func TestRolloutRestartsTheWorkloadsOfAnInstanceThatOptsIn(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "roll", optsIn)
	namespace(t, "roll-app", nil)
	bindRollout(t, "roll-app")
	api := deployment(t, "roll-app", "api", "roll")
	worker := deployment(t, "roll-app", "worker", "roll")

	pod := &corev1.Pod{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "roll-app", Name: "api-1-a"}, pod)).To(Succeed())
	g.Expect(pod.Labels).To(HaveKeyWithValue(podinject.LabelInjected, "true"))
	was, ok := podinject.ParseProxyConfig(pod.Annotations[podinject.AnnotationProxyConfig])
	g.Expect(ok).To(BeTrue(), "the pod records what its proxy started with: %v", pod.Annotations)
	g.Expect(was.ConnectionName).To(Equal(project + ":europe-west1:roll"))
	g.Consistently(func(g Gomega) podinject.ProxyConfig { return restartedFor(g, api) }, 3*time.Second, poll).Should(BeZero(), "nothing changed")

	moveInstance(g, "roll", project+":europe-west2:roll")
	restarted := func(g Gomega) int {
		n := 0
		for _, d := range []*appsv1.Deployment{api, worker} {
			if c := restartedFor(g, d); c.ConnectionName != "" {
				g.Expect(c.ConnectionName).To(Equal(project + ":europe-west2:roll"))
				n++
			}
		}
		return n
	}
	g.Eventually(restarted, eventually, poll).Should(Equal(1), "one restart at once")
	g.Eventually(func(g Gomega) xpv2.Condition { return rolloutCondition(g, "roll") }, eventually, poll).Should(And(
		HaveField("Status", corev1.ConditionFalse), HaveField("Reason", podinject.ReasonWaiting),
		HaveField("Message", ContainSubstring("waits for the rollout's rate limit"))), "the second waits its turn")
	g.Expect(restarted(g)).To(Equal(1))
	g.Eventually(restarted, 20*time.Second, poll).Should(Equal(2), "the second within 10 s")
	g.Eventually(func(g Gomega) xpv2.Condition { return rolloutCondition(g, "roll") }, eventually, poll).Should(And(
		HaveField("Status", corev1.ConditionTrue), HaveField("Reason", podinject.ReasonRestarted),
		HaveField("Message", ContainSubstring("restarted Deployment roll-app/")),
		HaveField("Message", ContainSubstring("connection name "+project+":europe-west1:roll -> "+project+":europe-west2:roll"))))
	t.Logf("instance condition: %s", rolloutCondition(g, "roll").Message)

	// Its pods still run the old proxy: restarted once is enough.
	first := restartedFor(g, api)
	g.Consistently(func(g Gomega) podinject.ProxyConfig { return restartedFor(g, api) }, 3*time.Second, poll).Should(Equal(first))
}

// Without the instance's annotation, only a namespace labelled
// cloudsql.travelaudience.com/proxy-rollout=true has its workloads restarted.
func TestRolloutRestartsOnlyWhatOptsIn(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "keep")
	namespace(t, "keep-app", nil)
	bindRollout(t, "keep-app")
	d := deployment(t, "keep-app", "api", "keep")
	moveInstance(g, "keep", project+":europe-west2:keep")
	g.Consistently(func(g Gomega) podinject.ProxyConfig { return restartedFor(g, d) }, 4*time.Second, poll).Should(BeZero(),
		"neither the instance nor the namespace opts in")
	// Not held back by the rate limit either: a workload that waits for it
	// says so on the instance at once.
	g.Expect(rolloutCondition(g, "keep").Reason).To(BeEmpty(), "the rollout does not even wait to restart it")

	ns := &corev1.Namespace{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "keep-app"}, ns)).To(Succeed())
	ns.Labels[v1alpha1.AnnotationProxyRollout] = "true"
	g.Expect(env.Client.Update(ctx, ns)).To(Succeed())
	g.Eventually(func(g Gomega) string { return restartedFor(g, d).ConnectionName }, 30*time.Second, poll).Should(Equal(project + ":europe-west2:keep"))
}

// Only a pod of its workload's current revision, whose template asks for
// what the pod asks for, has its workload restarted: an old ReplicaSet's pod
// is being replaced already, and a pod cannot point the rollout at a
// workload that does not use the instance.
func TestRolloutLeavesOldRevisionsAndOtherWorkloads(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	readyInstance(t, "roll-left", optsIn)
	namespace(t, "roll-left-app", nil)
	bindRollout(t, "roll-left-app")

	old := deployment(t, "roll-left-app", "old", "roll-left")
	rs := &appsv1.ReplicaSet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "roll-left-app", Name: "old-1"}, rs)).To(Succeed())
	rs.Annotations = map[string]string{"deployment.kubernetes.io/revision": "1"}
	g.Expect(env.Client.Update(ctx, rs)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(old), old)).To(Succeed())
	old.Annotations = map[string]string{"deployment.kubernetes.io/revision": "2"}
	g.Expect(env.Client.Update(ctx, old)).To(Succeed())

	other := deployment(t, "roll-left-app", "other", "roll-left")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(other), other)).To(Succeed())
	delete(other.Spec.Template.Annotations, v1alpha1.AnnotationInstanceName)
	g.Expect(env.Client.Update(ctx, other)).To(Succeed())

	moveInstance(g, "roll-left", project+":europe-west2:roll-left")
	g.Consistently(func(g Gomega) []podinject.ProxyConfig {
		return []podinject.ProxyConfig{restartedFor(g, old), restartedFor(g, other)}
	}, 4*time.Second, poll).Should(HaveEach(BeZero()))
	g.Expect(rolloutCondition(g, "roll-left").Reason).To(BeEmpty(), "the rollout does not even wait to restart them")
}

// The rollout restarts workloads only in the namespaces that bind its
// ClusterRole: a namespace without the RoleBinding keeps its workloads, and
// the instance says which namespace lacks it and what to do; once it is
// bound, its workloads are restarted too.
func TestRolloutRestartsOnlyWhereItsRoleIsBound(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	readyInstance(t, "per-ns", optsIn, func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"per-ns-bound", "per-ns-unbound"}}
	})
	namespace(t, "per-ns-bound", nil)
	namespace(t, "per-ns-unbound", nil)
	bindRollout(t, "per-ns-bound")
	bound := deployment(t, "per-ns-bound", "api", "per-ns")
	unbound := deployment(t, "per-ns-unbound", "api", "per-ns")

	moveInstance(g, "per-ns", project+":europe-west2:per-ns")
	g.Eventually(func(g Gomega) string { return restartedFor(g, bound).ConnectionName }, eventually, poll).Should(Equal(project + ":europe-west2:per-ns"))
	g.Eventually(func(g Gomega) xpv2.Condition { return rolloutCondition(g, "per-ns") }, eventually, poll).Should(And(
		HaveField("Status", corev1.ConditionFalse), HaveField("Reason", podinject.ReasonNoRights),
		HaveField("Message", ContainSubstring("the workload of pod per-ns-unbound/api-1-a is not restarted")),
		HaveField("Message", ContainSubstring("may not get pods, get apps/replicasets, get apps/deployments, patch apps/deployments")),
		HaveField("Message", ContainSubstring("in namespace per-ns-unbound")),
		HaveField("Message", ContainSubstring("Bind the ClusterRole "+podinject.RolloutClusterRole+" there with a RoleBinding"))))
	t.Logf("instance condition: %s", rolloutCondition(g, "per-ns").Message)
	g.Consistently(func(g Gomega) podinject.ProxyConfig { return restartedFor(g, unbound) }, 3*time.Second, poll).Should(BeZero(),
		"the provider may not restart a workload of per-ns-unbound")

	bindRollout(t, "per-ns-unbound")
	g.Eventually(func(g Gomega) string { return restartedFor(g, unbound).ConnectionName }, eventually, poll).Should(Equal(project + ":europe-west2:per-ns"))
	g.Eventually(func(g Gomega) xpv2.Condition { return rolloutCondition(g, "per-ns") }, eventually, poll).Should(And(
		HaveField("Reason", podinject.ReasonRestarted), HaveField("Message", ContainSubstring("restarted Deployment per-ns-unbound/api"))))
}

// Each namespace has a rate limit of its own: a namespace whose workloads
// wait for theirs does not hold back another's. Two workloads of two
// namespaces restart sooner than the 10 s one limit for both would allow.
func TestRolloutLimitIsPerNamespace(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	readyInstance(t, "two-ns", optsIn, func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{"two-ns-a", "two-ns-b"}}
	})
	var ds []*appsv1.Deployment
	for _, ns := range []string{"two-ns-a", "two-ns-b"} {
		namespace(t, ns, nil)
		bindRollout(t, ns)
		ds = append(ds, deployment(t, ns, "api", "two-ns"))
	}
	moveInstance(g, "two-ns", project+":europe-west2:two-ns")
	restarted := func(g Gomega) int {
		n := 0
		for _, d := range ds {
			if restartedFor(g, d).ConnectionName != "" {
				n++
			}
		}
		return n
	}
	g.Eventually(restarted, eventually, poll).Should(BeNumerically(">=", 1))
	g.Eventually(restarted, 7*time.Second, poll).Should(Equal(2), "the second namespace's workload does not wait 10 s for the first's")
}

// The rollout lists and watches pods as metadata only: the API server sends
// the provider no pod's spec or status (its containers' environment).
func TestRolloutWatchesOnlyPodsMetadata(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	// The controller starts its informer after the manager's cache synced.
	g.Eventually(rolloutPodRequests.accepts, eventually, poll).ShouldNot(BeEmpty())
	g.Expect(rolloutPodRequests.accepts()).To(HaveEach(ContainSubstring("as=PartialObjectMetadata;")))
	t.Logf("Accept of the rollout's lists and watches of pods: %q", rolloutPodRequests.accepts())
}

// The rollout follows the proxy's shape: when the platform lowers a cap that
// every pod gets (here the connections of a ProviderConfig's
// spec.proxyLimits), an opted-in workload is restarted for it, and one whose
// own annotation the new cap would deny is left running rather than left
// without pods.
func TestRolloutFollowsTheProxysShape(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	def := &v1alpha1.ProviderConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: pcDefault}, def)).To(Succeed())
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "shaping"}, Spec: def.Spec}
	g.Expect(env.Client.Create(ctx, pc)).To(Succeed())
	readyInstance(t, "shape", optsIn, func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "shaping"}
	})
	namespace(t, "shape-app", nil)
	bindRollout(t, "shape-app")
	plain := deployment(t, "shape-app", "plain", "shape")
	asking := deploymentAsking(t, "shape-app", "asking", "shape", v1alpha1.AnnotationProxyMaxConnections, "10")
	g.Consistently(func(g Gomega) podinject.ProxyConfig { return restartedFor(g, plain) }, 2*time.Second, poll).Should(BeZero(), "nothing changed")

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pc), pc)).To(Succeed())
	pc.Spec.ProxyLimits = &v1alpha1.ProxyLimits{MaxConnections: ptr.To[int64](4)}
	g.Expect(env.Client.Update(ctx, pc)).To(Succeed())
	// The rollout keeps what a pod would get for up to 30 s.
	g.Eventually(func(g Gomega) string { return restartedFor(g, plain).Shape }, time.Minute, poll).Should(Equal("max-connections=4"))
	g.Eventually(func(g Gomega) xpv2.Condition { return rolloutCondition(g, "shape") }, eventually, poll).Should(
		HaveField("Message", ContainSubstring("proxy shape (none) -> max-connections=4")))
	g.Consistently(func(g Gomega) podinject.ProxyConfig { return restartedFor(g, asking) }, 3*time.Second, poll).Should(BeZero(),
		"its pods would ask for 10 connections, above the new cap of 4: a restart would leave it without pods")
}
