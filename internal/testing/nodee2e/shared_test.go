//go:build node

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

package nodee2e

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/nodetest"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/tenants"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// conditioned is a PostgresqlUser or PostgresqlDatabase of either kind.
type conditioned interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// applicationsShareTheInstance runs tenants.Apps on the instance instName,
// whose spec.injection allows their namespaces: each application's pod, on
// the kubelet, uses its own database as its own login; then each one's pod is
// refused the others' databases, tables and roles, CREATE ROLE and CREATE
// DATABASE. No namespace of theirs holds the postgres password.
func (w *world) applicationsShareTheInstance(ctx context.Context, image string) {
	apps := tenants.Apps
	step(w.t, "applications in %s share %s, each with its own PostgresqlUser and PostgresqlDatabase", strings.Join(tenants.Namespaces(apps), ", "), instName)
	for _, a := range apps {
		for _, o := range a.Objects(instName) {
			w.createWhenAdmitted(ctx, o)
		}
	}
	for _, a := range apps {
		for _, o := range a.Objects(instName) {
			c := o.(conditioned)
			w.g.Eventually(func(g Gomega) {
				g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
				g.Expect(c.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), "%s: %s", c.GetName(), c.GetCondition(xpv2.TypeSynced).Message)
			}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		}
	}

	conn := &corev1.Secret{}
	w.g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: instName + "-conn"}, conn)).To(Succeed())
	rootPassword := string(conn.Data[cloudsql.ConnectionKeyPassword])
	w.g.Expect(rootPassword).NotTo(BeEmpty())

	step(w.t, "each application's pod creates a table in its own database, as its own login")
	var pods []*corev1.Pod
	for _, a := range apps {
		pods = append(pods, w.createUserPod(ctx, a, a.User+"-use", image, a.Script(), rootPassword))
	}
	for i, a := range apps {
		w.waitPhase(ctx, pods[i], corev1.PodSucceeded)
		logs := w.logs(ctx, pods[i], "app")
		w.g.Expect(strings.Split(logs, "\n")).To(ContainElement(HavePrefix(a.Used())), "psql printed its login and database")
		w.t.Logf("    %s/%s: %s", a.Namespace, pods[i].Name, strings.ReplaceAll(logs, "\n", "; "))
	}

	step(w.t, "each application's pod is refused the others' databases, tables and roles, CREATE ROLE and CREATE DATABASE")
	pods = pods[:0]
	for _, a := range apps {
		pods = append(pods, w.createUserPod(ctx, a, a.User+"-refused", image, a.Script(a.Others(apps)...), rootPassword))
	}
	for i, a := range apps {
		w.waitPhase(ctx, pods[i], corev1.PodSucceeded)
		lines := strings.Split(w.logs(ctx, pods[i], "app"), "\n")
		for _, o := range a.Others(apps) {
			for _, r := range a.Refusals(o) {
				w.g.Expect(lines).To(ContainElement(And(HavePrefix(tenants.Marker+r.What+": "), ContainSubstring(r.Want))), "%s: %s", pods[i].Name, r.What)
			}
		}
		w.t.Logf("    %s/%s: %d refusals, such as: %s", a.Namespace, pods[i].Name, len(a.Refusals(a))*len(a.Others(apps)), lines[0])
	}

	step(w.t, "no secret of %s holds the postgres password of %s", strings.Join(tenants.Namespaces(apps), ", "), instName)
	for _, a := range apps {
		held, err := tenants.SecretsHolding(ctx, w.c, a.Namespace, rootPassword)
		w.g.Expect(err).NotTo(HaveOccurred())
		w.g.Expect(held).To(BeEmpty(), "the postgres password of %s", instName)
	}
}

// createUserPod creates a pod of a, as appUser with a read-only root file
// system, whose container app runs script with sh, and checks that the
// injector gave it a's login and database and not the postgres password.
func (w *world) createUserPod(ctx context.Context, a tenants.App, name, image, script, rootPassword string) *corev1.Pod {
	got := w.createScriptPod(ctx, a.Namespace, name, a.PodAnnotations(), image, script)
	w.g.Expect(got.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
	env := map[string]string{}
	for _, c := range got.Spec.Containers {
		if c.Name == "app" {
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
		}
	}
	w.g.Expect(env).To(HaveKeyWithValue(podinject.EnvUser, a.Login), "PGUSER is the application's own login")
	w.g.Expect(env).To(HaveKeyWithValue(podinject.EnvDatabase, a.Database), "PGDATABASE is the database it owns")
	spec, err := json.Marshal(got)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(string(spec)).NotTo(ContainSubstring(rootPassword), "the pod does not hold the postgres password")
	return got
}

// createScriptPod creates, through admission, scriptPod and returns it as
// stored.
func (w *world) createScriptPod(ctx context.Context, ns, name string, annotations map[string]string, image, script string) *corev1.Pod {
	pod := scriptPod(ns, name, annotations, image, script)
	w.createWhenAdmitted(ctx, pod)
	got := &corev1.Pod{}
	w.g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	return got
}

// scriptPod is a pod of ns with annotations, as appUser with a read-only
// root file system, whose container app runs script with sh.
func scriptPod(ns, name string, annotations map[string]string, image, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{
			NodeName:                     nodetest.NodeName,
			AutomountServiceAccountToken: ptr.To(false),
			RestartPolicy:                corev1.RestartPolicyNever,
			SecurityContext:              &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](appUser), RunAsNonRoot: ptr.To(true)},
			Containers: []corev1.Container{{
				Name: "app", Image: image, ImagePullPolicy: corev1.PullNever,
				Command: []string{"sh", "-c", script},
				SecurityContext: &corev1.SecurityContext{
					ReadOnlyRootFilesystem:   ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}
