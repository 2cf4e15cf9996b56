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
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/tenants"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// iamApp logs in with IAM database authentication on the instance.
var iamApp = tenants.IAMApp(project)

// iamLogin runs iamApp on the kubelet: its pod, whose proxy runs with
// --auto-iam-authn and the key of the user's service account, creates a table
// in its database as the account's login, with no password file and no
// password in its namespace; a pod whose proxy holds another account's key
// is refused by Cloud SQL.
func (w *world) iamLogin(ctx context.Context, image string) {
	a := iamApp
	step(w.t, "an application of %s logs in with IAM database authentication as %s, with no password", a.Namespace, a.Account)
	objs, err := a.Objects(project, instName, strings.TrimSuffix(w.endpoint, "/")+emulator.TokenPath)
	w.g.Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		w.createWhenAdmitted(ctx, o)
	}
	for _, o := range objs[len(objs)-2:] {
		c := o.(conditioned)
		w.g.Eventually(func(g Gomega) {
			g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			g.Expect(c.GetCondition(xpv2.TypeReady).Status).To(Equal(corev1.ConditionTrue), "%s: %s", c.GetName(), c.GetCondition(xpv2.TypeSynced).Message)
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	}

	use := w.createIAMPod(ctx, "analytics-use", a.KeySecret, image, a.Script(false))
	intruder := w.createIAMPod(ctx, "intruder", a.IntruderSecret, image, a.Script(true))
	w.waitPhase(ctx, use, corev1.PodSucceeded)
	logs := w.logs(ctx, use, "app")
	w.g.Expect(strings.Split(logs, "\n")).To(ContainElement(HavePrefix(a.Used())), "psql is the account's login, in its own database")
	w.t.Logf("    %s/%s: %s", a.Namespace, use.Name, strings.ReplaceAll(logs, "\n", "; "))
	w.waitPhase(ctx, intruder, corev1.PodSucceeded)
	logs = w.logs(ctx, intruder, "app")
	w.g.Expect(logs).To(ContainSubstring(a.Refused()), "psql with the key of %s", a.Intruder)
	w.t.Logf("    %s/%s, with the key of %s: %s", a.Namespace, intruder.Name, a.Intruder, logs)

	names, err := a.CheckNoPassword(ctx, w.c)
	w.g.Expect(err).NotTo(HaveOccurred())
	w.t.Logf("    secrets of %s: %s; no password", a.Namespace, strings.Join(names, ", "))
}

// createIAMPod creates a pod of iamApp, as appUser with a read-only root file
// system, whose container app runs script with sh and whose proxy
// authenticates with the key in secret key, and checks that the injector gave
// it the login, --auto-iam-authn and no password file.
func (w *world) createIAMPod(ctx context.Context, name, key, image, script string) *corev1.Pod {
	a := iamApp
	got := w.createScriptPod(ctx, a.Namespace, name, a.PodAnnotations(key), image, script)
	env := map[string]string{}
	var proxyArgs []string
	for _, c := range append(got.Spec.InitContainers, got.Spec.Containers...) {
		switch c.Name {
		case "app":
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
		case podinject.ProxyContainerName:
			proxyArgs = c.Args
		}
	}
	w.g.Expect(env).To(HaveKeyWithValue(podinject.EnvUser, a.Login()))
	w.g.Expect(env).NotTo(HaveKey(podinject.EnvPassFile), "an IAM login has no password file")
	w.g.Expect(proxyArgs).To(ContainElement(podinject.ProxyIAMAuthNFlag))
	return got
}
