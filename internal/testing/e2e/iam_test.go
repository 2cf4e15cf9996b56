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
	"strings"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/localpod"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/tenants"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// iamApp logs in with IAM database authentication on the shared instance.
var iamApp = tenants.IAMApp(sharedProject)

// iamLogin runs iamApp: its user (CLOUD_IAM_SERVICE_ACCOUNT) and database
// become Ready; its pod gets the proxy with --auto-iam-authn and no password
// file, its namespace holds no password, and its psql creates a table in its
// database as the account's login; a pod whose proxy holds another account's
// key is refused by Cloud SQL. Both objects are deleted at the end.
func (w *world) iamLogin(ctx context.Context) {
	g := NewWithT(w.t)
	a := iamApp
	objs, err := a.Objects(sharedProject, sharedInstance, strings.TrimSuffix(w.endpoint, "/")+emulator.TokenPath)
	g.Expect(err).NotTo(HaveOccurred())
	for _, o := range objs {
		w.createWhenAdmitted(ctx, o)
	}
	u, d := objs[len(objs)-2].(conditioned), objs[len(objs)-1].(conditioned)
	w.waitReady(ctx, u)
	w.waitReady(ctx, d)
	obs := u.(interface {
		Observation() *v1alpha1.PostgresqlUserObservation
	}).Observation()
	// The user may be Ready before its database exists: it shows the
	// database from its observation after that.
	g.Eventually(func(g Gomega) {
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
		g.Expect(obs.Databases).To(Equal([]string{a.Database}))
	}).WithTimeout(readyWithin).WithPolling(time.Second).Should(Succeed())
	g.Expect(obs.Name).To(Equal(a.Login()), "Cloud SQL names a service account's login by its email without %s", v1alpha1.ServiceAccountEmailSuffix)
	g.Expect(obs.Type).To(Equal(v1alpha1.UserTypeCloudIAMServiceAccount))
	w.t.Logf("    user %s/%s: login %s (%s), owns %v", a.Namespace, a.User, obs.Name, obs.Type, obs.Databases)

	pod := w.createIAMPod(ctx, "analytics", a.KeySecret)
	lp := w.loadPod(ctx, pod)
	proxy, out := w.startProxy(ctx, lp)
	got, err := w.runApp(ctx, lp, a.Use()...)
	_ = proxy.Stop()
	g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s", got, out)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	g.Expect(lines).To(ContainElement(HavePrefix(a.Used())), "psql is the account's login, in its own database")
	w.t.Logf("    pod %s/%s: psql printed: %s", a.Namespace, pod.Name, strings.Join(lines, "; "))

	step(w.t, "no secret of %s holds a password: only the two service-account keys are there", a.Namespace)
	names, err := a.CheckNoPassword(ctx, w.c)
	g.Expect(err).NotTo(HaveOccurred())
	w.t.Logf("    secrets of %s: %s", a.Namespace, strings.Join(names, ", "))

	step(w.t, "a pod whose proxy authenticates as %s, another service account, is refused by Cloud SQL", a.Intruder)
	intruder := w.createIAMPod(ctx, "intruder", a.IntruderSecret)
	ilp := w.loadPod(ctx, intruder)
	proxy, out = w.startProxy(ctx, ilp)
	got, err = w.runApp(ctx, ilp, a.Use()...)
	_ = proxy.Stop()
	g.Expect(err).To(HaveOccurred(), "psql as %s with the key of %s: %s", a.Login(), a.Intruder, got)
	g.Expect(got).To(ContainSubstring(a.Refused()), "proxy output:\n%s", out)
	w.t.Logf("    pod %s/%s: %s", a.Namespace, intruder.Name, firstLine(got))

	step(w.t, "deleting the IAM application's database, then its user")
	for _, o := range []client.Object{d, u} {
		g.Expect(w.c.Delete(ctx, o)).To(Succeed())
		g.Eventually(func() bool {
			return kerrors.IsNotFound(w.c.Get(ctx, client.ObjectKeyFromObject(o), o))
		}).WithTimeout(readyWithin).WithPolling(time.Second).Should(BeTrue(), "%T %s is deleted", o, client.ObjectKeyFromObject(o))
	}
}

// createIAMPod creates a pod of iamApp, whose application runs psql, with
// the proxy authenticating with the key in secret key, and checks what the
// injector gave it: the login, its database, --auto-iam-authn, and no
// password file.
func (w *world) createIAMPod(ctx context.Context, name, key string) *corev1.Pod {
	g := NewWithT(w.t)
	a := iamApp
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: name, Annotations: a.PodAnnotations(key)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "postgres:15", Command: append([]string{"psql"}, tenants.PsqlFlags...),
		}}},
	}
	w.createWhenAdmitted(ctx, pod)
	got := &corev1.Pod{}
	g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	app, _ := findContainer(got, "app")
	env := map[string]string{}
	for _, e := range app.Env {
		env[e.Name] = e.Value
	}
	g.Expect(env).To(HaveKeyWithValue(podinject.EnvUser, a.Login()))
	g.Expect(env).To(HaveKeyWithValue(podinject.EnvDatabase, a.Database))
	g.Expect(env).NotTo(HaveKey(podinject.EnvPassFile), "an IAM login has no password file")
	proxy, _ := findContainer(got, podinject.ProxyContainerName)
	g.Expect(proxy.Args).To(ContainElement(podinject.ProxyIAMAuthNFlag))
	w.t.Logf("    pod %s/%s: PGUSER=%s PGDATABASE=%s, proxy %s with the key of secret %s, no PGPASSFILE", a.Namespace, name,
		env[podinject.EnvUser], env[podinject.EnvDatabase], podinject.ProxyIAMAuthNFlag, key)
	return got
}

// loadPod lays out pod's volumes for its containers to run locally.
func (w *world) loadPod(ctx context.Context, pod *corev1.Pod) *localpod.Pod {
	lp, err := localpod.Load(ctx, w.c, pod, localpod.WithImage(configfile.ProxyImageRepository, w.proxyBin))
	NewWithT(w.t).Expect(err).NotTo(HaveOccurred())
	w.t.Cleanup(func() { _ = lp.Close() })
	return lp
}
