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

package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// rolloutFile is the one optional manifest of cluster/deploy: the proxy
// rollout's rights, which the default install does not grant.
const rolloutFile = "rollout.yaml"

// The provider's service account, as cluster/deploy and the Crossplane
// install example name it.
var providerAccount = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "provider-cloudsql-postgres", Namespace: "crossplane-system"}

// workloadWrites are the verbs by which a role could restart (or replace)
// any workload.
var workloadWrites = []string{"patch", "update", "create", "delete", "deletecollection", "*"}

// rbac is the RBAC of one or more manifests.
type rbac struct {
	clusterRoles        map[string]*rbacv1.ClusterRole
	roles               []*rbacv1.Role
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
	roleBindings        []*rbacv1.RoleBinding
}

// readRBAC reads the RBAC objects of files.
func readRBAC(g Gomega, files ...string) rbac {
	r := rbac{clusterRoles: map[string]*rbacv1.ClusterRole{}}
	for _, f := range files {
		objs, err := ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			var into any
			switch o.GetKind() {
			case "ClusterRole":
				cr := &rbacv1.ClusterRole{}
				r.clusterRoles[o.GetName()], into = cr, cr
			case "Role":
				role := &rbacv1.Role{}
				r.roles, into = append(r.roles, role), role
			case "ClusterRoleBinding":
				b := &rbacv1.ClusterRoleBinding{}
				r.clusterRoleBindings, into = append(r.clusterRoleBindings, b), b
			case "RoleBinding":
				b := &rbacv1.RoleBinding{}
				r.roleBindings, into = append(r.roleBindings, b), b
			default:
				continue
			}
			g.Expect(kruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into)).To(Succeed(), "%s: %s %s", f, o.GetKind(), o.GetName())
		}
	}
	return r
}

// rights expands rules into "verb group/resource" strings (the core group
// without "group/"), as podinject.RolloutDenied reports them; wildcards stay
// "*".
func rights(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, v+" "+strings.TrimPrefix(g+"/"+res, "/"))
				}
			}
		}
	}
	return out
}

// attributes are the rights of podinject's list, written as rights writes
// them.
func attributes(ras []authorizationv1.ResourceAttributes) []string {
	var out []string
	for _, ra := range ras {
		out = append(out, ra.Verb+" "+strings.TrimPrefix(ra.Group+"/"+ra.Resource, "/"))
	}
	return out
}

// writesWorkloads lists the rules of rules that let their holder change
// Deployments, StatefulSets or DaemonSets (wildcards included).
func writesWorkloads(rules []rbacv1.PolicyRule) []string {
	var bad []string
	for _, r := range rules {
		groups := slices.Contains(r.APIGroups, "apps") || slices.Contains(r.APIGroups, "*")
		resources := slices.ContainsFunc(r.Resources, func(res string) bool {
			return res == "*" || slices.Contains([]string{"deployments", "statefulsets", "daemonsets"}, strings.Split(res, "/")[0])
		})
		verbs := slices.ContainsFunc(r.Verbs, func(v string) bool { return slices.Contains(workloadWrites, v) })
		if groups && resources && verbs {
			bad = append(bad, strings.Join(rights([]rbacv1.PolicyRule{r}), ", "))
		}
	}
	return bad
}

// defaultManifests are the YAML files of cluster/deploy but rollout.yaml, and
// those of the Crossplane install example: what an install applies.
func defaultManifests(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range [][]string{{"cluster", "deploy"}, {"examples", "install"}} {
		found, err := filepath.Glob(filepath.Join(repoDir(t, dir...), "*.yaml"))
		if err != nil || len(found) == 0 {
			t.Fatalf("no manifests in %s: %v", filepath.Join(dir...), err)
		}
		for _, f := range found {
			if filepath.Base(f) != rolloutFile || dir[0] != "cluster" {
				files = append(files, f)
			}
		}
	}
	return files
}

// The default manifests (cluster/deploy without rollout.yaml, and the
// Crossplane install) let the provider change no Deployment, StatefulSet or
// DaemonSet, and read no pod, anywhere: a role that could, bound
// cluster-wide, would let the provider restart any workload of the cluster.
func TestDefaultManifestsGrantNoWorkloadRights(t *testing.T) {
	g := NewWithT(t)
	files := defaultManifests(t)
	r := readRBAC(g, files...)
	g.Expect(r.clusterRoles).NotTo(BeEmpty(), "the default manifests hold the provider's ClusterRole")
	for name, cr := range r.clusterRoles {
		g.Expect(writesWorkloads(cr.Rules)).To(BeEmpty(), "ClusterRole %s may change workloads", name)
		g.Expect(rights(cr.Rules)).NotTo(ContainElement(Or(HaveSuffix(" pods"), HaveSuffix(" */pods"), HaveSuffix(" *"))),
			"ClusterRole %s may read pods (the rollout's rights are in cluster/deploy/%s)", name, rolloutFile)
		g.Expect(cr.AggregationRule).To(BeNil(), "ClusterRole %s aggregates roles this test cannot see", name)
	}
	for _, role := range r.roles {
		g.Expect(writesWorkloads(role.Rules)).To(BeEmpty(), "Role %s/%s may change workloads", role.Namespace, role.Name)
	}
	for _, b := range r.clusterRoleBindings {
		if b.RoleRef.Kind == "ClusterRole" && r.clusterRoles[b.RoleRef.Name] == nil {
			// A role of Kubernetes itself; only these are known to grant
			// no workload rights.
			g.Expect(b.RoleRef.Name).To(BeElementOf("system:auth-delegator"), "ClusterRoleBinding %s binds a ClusterRole no manifest defines", b.Name)
		}
	}
}

// rollout.yaml grants exactly what the rollout checks for: watching pods
// cluster-wide (bound once, to the provider), and restarting workloads in a
// namespace (a ClusterRole bound by no ClusterRoleBinding, only by the
// RoleBinding its comment shows, one per namespace).
func TestRolloutManifestGrantsWhatTheRolloutNeeds(t *testing.T) {
	g := NewWithT(t)
	file := filepath.Join(repoDir(t, "cluster", "deploy"), rolloutFile)
	r := readRBAC(g, file)
	g.Expect(r.roles).To(BeEmpty())
	g.Expect(r.roleBindings).To(BeEmpty(), "each namespace makes its RoleBinding itself")
	g.Expect(r.clusterRoles).To(HaveLen(2))

	watch := r.clusterRoles[podinject.RolloutWatchClusterRole]
	g.Expect(watch).NotTo(BeNil(), "ClusterRole %s", podinject.RolloutWatchClusterRole)
	g.Expect(rights(watch.Rules)).To(ConsistOf(attributes(podinject.RolloutWatchRights)))
	restart := r.clusterRoles[podinject.RolloutClusterRole]
	g.Expect(restart).NotTo(BeNil(), "ClusterRole %s", podinject.RolloutClusterRole)
	g.Expect(rights(restart.Rules)).To(ConsistOf(attributes(podinject.RolloutNamespaceRights)))

	g.Expect(r.clusterRoleBindings).To(HaveLen(1))
	b := r.clusterRoleBindings[0]
	g.Expect(b.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: podinject.RolloutWatchClusterRole}))
	g.Expect(b.Subjects).To(ConsistOf(providerAccount))

	// The commented RoleBinding is one that binds the restart role to the
	// provider in a namespace.
	data, err := os.ReadFile(file)
	g.Expect(err).NotTo(HaveOccurred())
	_, example, ok := strings.Cut(string(data), "# The RoleBinding of one namespace")
	g.Expect(ok).To(BeTrue(), "%s shows a RoleBinding", file)
	var lines []string
	for _, l := range strings.Split(example, "\n")[1:] {
		if l, ok := strings.CutPrefix(l, "# "); ok && l != "" {
			lines = append(lines, l)
		}
	}
	objs, err := Decode([]byte(strings.Join(lines, "\n")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(1))
	rb := &rbacv1.RoleBinding{}
	g.Expect(kruntime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, rb)).To(Succeed())
	g.Expect(rb.Namespace).NotTo(BeEmpty())
	g.Expect(rb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: podinject.RolloutClusterRole}))
	g.Expect(rb.Subjects).To(ConsistOf(providerAccount))
}

// The service account that rollout.yaml binds is the one that both installs
// run the provider as.
func TestRolloutManifestBindsTheProvidersAccount(t *testing.T) {
	g := NewWithT(t)
	r := readRBAC(g, filepath.Join(repoDir(t, "cluster", "deploy"), "provider.yaml"))
	var bound []rbacv1.Subject
	for _, b := range r.clusterRoleBindings {
		bound = append(bound, b.Subjects...)
	}
	g.Expect(bound).To(ContainElement(providerAccount), "cluster/deploy/provider.yaml")
	objs, err := ReadFile(repoDir(t, "examples", "install", "provider.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var name string
	for _, o := range objs {
		if o.GetKind() == "DeploymentRuntimeConfig" {
			name, _, _ = unstructured.NestedString(o.Object, "spec", "serviceAccountTemplate", "metadata", "name")
		}
	}
	g.Expect(name).To(Equal(providerAccount.Name), "examples/install/provider.yaml's DeploymentRuntimeConfig")
}
