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
	"path/filepath"
	"runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// repoDir is dir of this repository.
func repoDir(t *testing.T, dir ...string) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the repository")
	}
	return filepath.Join(append([]string{filepath.Dir(file), "..", "..", ".."}, dir...)...)
}

// The NetworkPolicy beside the Deployment of cluster/deploy selects its pods,
// and admits to the webhook port one source alone (the API server's
// addresses), and nothing to it from pods or namespaces.
func TestNetworkPolicyGuardsTheWebhookPort(t *testing.T) {
	dir := repoDir(t, "cluster", "deploy")
	var d *appsv1.Deployment
	objs, err := ReadFile(filepath.Join(dir, "provider.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			d = &appsv1.Deployment{}
			if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d == nil {
		t.Fatal("provider.yaml holds no Deployment")
	}
	ports := map[string]bool{}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			ports[p.Name] = true
		}
	}
	checkWebhookPolicy(t, readPolicy(t, filepath.Join(dir, "networkpolicy.yaml")), d.Namespace, d.Spec.Template.Labels, ports, "webhook")
}

// The NetworkPolicy of the Crossplane install example guards the pods that
// Crossplane's package manager runs: labelled with the package's name, serving
// the webhooks on 9443 and, as the example's runtime configuration says,
// metrics on 8080.
func TestInstallNetworkPolicyGuardsTheWebhookPort(t *testing.T) {
	np := readPolicy(t, repoDir(t, "examples", "install", "networkpolicy.yaml"))
	checkWebhookPolicy(t, np, "crossplane-system", map[string]string{"pkg.crossplane.io/provider": "provider-cloudsql-postgres"},
		map[string]bool{"9443": true, "8080": true}, "9443")
}

// readPolicy reads the one NetworkPolicy of file.
func readPolicy(t *testing.T, file string) *networkingv1.NetworkPolicy {
	t.Helper()
	objs, err := ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetKind() != "NetworkPolicy" {
		t.Fatalf("%s: want one NetworkPolicy, got %d objects", file, len(objs))
	}
	np := &networkingv1.NetworkPolicy{}
	if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, np); err != nil {
		t.Fatal(err)
	}
	return np
}

// checkWebhookPolicy checks that np, in namespace ns, selects pods labelled
// podLabels, names only ports the pods have, and admits to webhookPort only
// ipBlocks (the API server's addresses).
func checkWebhookPolicy(t *testing.T, np *networkingv1.NetworkPolicy, ns string, podLabels map[string]string, ports map[string]bool, webhookPort string) {
	t.Helper()
	if np.Namespace != ns {
		t.Errorf("the NetworkPolicy is in namespace %q, the provider's pods in %q", np.Namespace, ns)
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(podLabels)) {
		t.Errorf("the NetworkPolicy's podSelector %v does not select the provider's pods (%v)", np.Spec.PodSelector, podLabels)
	}
	webhookRules := 0
	for _, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			if p.Port == nil || !ports[p.Port.String()] {
				t.Errorf("an ingress rule names port %v, which the provider's container does not have", p.Port)
			}
			if p.Port == nil || p.Port.String() != webhookPort {
				continue
			}
			webhookRules++
			for _, f := range r.From {
				if f.IPBlock == nil || f.PodSelector != nil || f.NamespaceSelector != nil {
					t.Errorf("the webhook port admits %+v: only the API server's addresses (an ipBlock) may reach it", f)
				}
			}
			if len(r.From) == 0 {
				t.Error("the webhook port's rule has no from: it admits every source")
			}
		}
	}
	if webhookRules != 1 {
		t.Errorf("want one ingress rule for the webhook port, got %d", webhookRules)
	}
}
