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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/localpod"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/tenants"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

const (
	// sharedProject holds the shared instance alone, so that the emulator's
	// request log of that project is what its users and databases cost.
	sharedProject  = "e2e-shared-123456"
	sharedInstance = "e2e-shared"
	sharedPC       = "shared"
	// steadyState is how long the provider is watched doing nothing but
	// observe: six polls at the test's poll interval of 10s.
	steadyState = time.Minute
)

// sharedApps share sharedInstance.
var sharedApps = tenants.Apps

// TestApplicationsShareAnInstance runs applications in their own namespaces
// on one cluster-scoped PostgresqlInstance, each with its own PostgresqlUser
// and PostgresqlDatabase: each pod's psql, with exactly the injected
// environment, uses its own database as its own login, and is refused
// everything of the others and CREATE ROLE and CREATE DATABASE; no namespace
// holds the postgres password. It prints the Cloud SQL requests of each
// phase.
func TestApplicationsShareAnInstance(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t)

	step(t, "creating the namespaces %s and ProviderConfig %s of project %s (a service-account key whose token_uri is the emulator)", strings.Join(tenants.Namespaces(sharedApps), ", "), sharedPC, sharedProject)
	key, err := emulator.ServiceAccountKey(sharedProject, strings.TrimSuffix(w.endpoint, "/")+emulator.TokenPath)
	g.Expect(err).NotTo(HaveOccurred())
	pc := providerConfig(sharedPC, w.endpoint, &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: secretNS, Name: keySecret}, Key: "key.json"})
	pc.Spec.Project.ProjectID = sharedProject
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: keySecret}, Data: map[string][]byte{"key.json": key}},
		pc,
	}
	for _, ns := range tenants.Namespaces(sharedApps) {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	for _, o := range objs {
		g.Expect(w.c.Create(ctx, o)).To(Succeed())
	}

	step(t, "creating the cluster-scoped PostgresqlInstance %s, whose spec.tenancy admits %s for their own users and databases, no namespace for postgres, and waiting for Ready", sharedInstance, strings.Join(tenants.Namespaces(sharedApps), ", "))
	pi := instance(sharedInstance, sharedPC, false)
	pi.Spec.Injection = &v1alpha1.Injection{}
	pi.Spec.Tenancy = &v1alpha1.Tenancy{AllowedNamespaces: append(tenants.Namespaces(sharedApps), iamApp.Namespace)}
	pi.Spec.ForProvider.Flags = []string{tenants.InstanceFlag}
	w.createWhenAdmitted(ctx, pi)
	w.waitReady(ctx, pi)
	conn := &corev1.Secret{}
	g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: sharedInstance + "-conn"}, conn)).To(Succeed())
	rootPassword := string(conn.Data[cloudsql.ConnectionKeyPassword])
	g.Expect(rootPassword).NotTo(BeEmpty())

	var phases []tenants.Phase
	phase := func(name string, from time.Time) {
		phases = append(phases, tenants.Count(name, w.emu.Requests(), sharedProject, from, w.emu.Now()))
	}
	t.Cleanup(func() {
		t.Logf("Cloud SQL requests of project %s (one instance, %d users, %d databases; poll interval 10s), per phase:", sharedProject, len(sharedApps), len(sharedApps))
		for _, p := range phases {
			t.Logf("    %s", p)
		}
	})

	step(t, "creating each application's PostgresqlUser and PostgresqlDatabase, and waiting for them to be Ready and the databases to be given to their logins")
	since := w.emu.Now()
	for _, a := range sharedApps {
		for _, o := range a.Objects(sharedInstance) {
			w.createWhenAdmitted(ctx, o)
		}
	}
	for _, a := range sharedApps {
		for _, o := range a.Objects(sharedInstance) {
			w.waitReady(ctx, o.(conditioned))
		}
	}
	phase("create users and databases", since)
	w.expectLeastPrivilege(ctx)

	step(t, "creating a pod per application, annotated %s: each is given its own login and database", v1alpha1.AnnotationUserName)
	pods := map[string]*corev1.Pod{}
	for _, a := range sharedApps {
		pods[a.User] = w.createUserPod(ctx, a, rootPassword)
	}

	step(t, "no secret of %s holds the postgres password of %s; each holds its own application's", strings.Join(tenants.Namespaces(sharedApps), ", "), sharedInstance)
	for _, a := range sharedApps {
		held, err := tenants.SecretsHolding(ctx, w.c, a.Namespace, rootPassword)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(held).To(BeEmpty(), "the postgres password of %s", sharedInstance)
		own := w.userPassword(ctx, a)
		mine, err := tenants.SecretsHolding(ctx, w.c, a.Namespace, own)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(mine).NotTo(BeEmpty(), "the password of %s is in %s, for its pods", a.User, a.Namespace)
		for _, o := range a.Others(sharedApps) {
			theirs, err := tenants.SecretsHolding(ctx, w.c, a.Namespace, w.userPassword(ctx, o))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(theirs).To(BeEmpty(), "the password of %s", o.User)
		}
		t.Logf("    %s: its password in %s; neither postgres's nor another application's", a.Namespace, strings.Join(mine, ", "))
	}

	step(t, "each pod's psql, with exactly the injected environment, creates a table in its own database and writes to it")
	lps := map[string]*localpod.Pod{}
	for _, a := range sharedApps {
		lps[a.User] = w.usePod(ctx, a, pods[a.User])
	}

	step(t, "each pod's psql is refused the other applications' databases and tables, their roles, CREATE ROLE and CREATE DATABASE")
	for _, a := range sharedApps {
		w.refusals(ctx, a, lps[a.User])
	}

	step(t, "a second team cannot take the first's login or database, and a pod naming the instance itself gets no postgres")
	w.takeoversDenied(ctx, lps)

	step(t, "an application of namespace %s logs in with IAM database authentication as service account %s", iamApp.Namespace, iamApp.Account)
	w.iamLogin(ctx)

	step(t, "watching the provider observe for %s: the steady state's requests", steadyState)
	since = w.emu.Now()
	time.Sleep(steadyState)
	phase("steady state", since)

	step(t, "deleting the users and databases: the users go once their databases have gone")
	for _, a := range sharedApps {
		for _, o := range a.Objects(sharedInstance) {
			g.Expect(w.c.Delete(ctx, o)).To(Succeed())
		}
	}
	for _, a := range sharedApps {
		for _, o := range a.Objects(sharedInstance) {
			g.Eventually(func() bool {
				return kerrors.IsNotFound(w.c.Get(ctx, client.ObjectKeyFromObject(o), o))
			}).WithTimeout(readyWithin).WithPolling(time.Second).Should(BeTrue(), "%T %s is deleted", o, client.ObjectKeyFromObject(o))
		}
	}
	phase("delete users and databases", since)
	w.expectOnlyPostgres(ctx)
}

// takeoversDenied has the namespace of one application name another's login
// and database, and a pod of it name the shared instance: all are denied,
// naming what holds them; the first application's psql, through the real
// proxy with its password file, still logs in and finds its rows.
func (w *world) takeoversDenied(ctx context.Context, lps map[string]*localpod.Pod) {
	g := NewWithT(w.t)
	var victim, thief tenants.App
	for _, a := range sharedApps {
		switch {
		case a.Cluster:
		case victim.User == "":
			victim = a
		case thief.User == "":
			thief = a
		}
	}
	g.Expect(thief.User).NotTo(BeEmpty(), "two namespaced applications")
	before := len(w.emu.Requests())
	user := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: thief.Namespace, Name: "takeover"}}
	user.Spec.ForProvider.ClusterInstance, user.Spec.ForProvider.Name = sharedInstance, ptr.To(victim.Login)
	user.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "takeover-login"}
	err := w.c.Create(ctx, user)
	g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("which PostgresqlUser %s/%s already names", victim.Namespace, victim.User))))
	w.t.Logf("    %s", err)
	db := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: thief.Namespace, Name: "takeover",
		Annotations: map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}}}
	db.Spec.ForProvider.ClusterInstance, db.Spec.ForProvider.Name = sharedInstance, ptr.To(victim.Database)
	err = w.c.Create(ctx, db)
	g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("which PostgresqlDatabase %s/%s already names", victim.Namespace, victim.Database))))
	w.t.Logf("    %s", err)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: thief.Namespace, Name: "admin", Annotations: map[string]string{v1alpha1.AnnotationInstanceName: sharedInstance}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "postgres:15", Command: []string{"psql"}}}},
	}
	err = w.c.Create(ctx, pod)
	g.Expect(err).To(MatchError(ContainSubstring("its pods never receive the instance's postgres password")))
	w.t.Logf("    %s", err)
	for _, r := range w.emu.Requests()[before:] {
		g.Expect(r.Method).NotTo(BeElementOf(emulator.MethodUsersUpdate, emulator.MethodUsersDelete, emulator.MethodDatabasesDelete), "no write reaches Cloud SQL for a denied object")
	}

	proxy, out := w.startProxy(ctx, lps[victim.User])
	defer func() { _ = proxy.Stop() }()
	got, err := w.runApp(ctx, lps[victim.User], victim.Use()...)
	g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s", got, out)
	g.Expect(strings.Split(strings.TrimSpace(got), "\n")).To(ContainElement(victim.Used()+"2"), "its password still works, and its first row is still there")
	w.t.Logf("    pod %s/%s: psql printed: %s", victim.Namespace, victim.User, strings.TrimSpace(got))
}

// expectLeastPrivilege checks what the controllers read back: each login is
// no member of cloudsqlsuperuser and can create neither roles nor databases,
// and owns its database, which PUBLIC may not connect to.
func (w *world) expectLeastPrivilege(ctx context.Context) {
	g := NewWithT(w.t)
	for _, a := range sharedApps {
		objs := a.Objects(sharedInstance)
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(objs[0]), objs[0])).To(Succeed())
		g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(objs[1]), objs[1])).To(Succeed())
		u := objs[0].(interface {
			Observation() *v1alpha1.PostgresqlUserObservation
		}).Observation()
		d := objs[1].(interface {
			Observation() *v1alpha1.PostgresqlDatabaseObservation
		}).Observation()
		g.Expect(u.Name).To(Equal(a.Login))
		g.Expect(u.SuperuserMember).To(HaveValue(BeFalse()), "%s is no member of cloudsqlsuperuser", a.User)
		g.Expect(u.CreateRole).To(HaveValue(BeFalse()))
		g.Expect(u.CreateDB).To(HaveValue(BeFalse()))
		g.Expect(u.Databases).To(Equal([]string{a.Database}))
		g.Expect(d.Owner).To(Equal(a.Login))
		g.Expect(d.PublicConnect).To(HaveValue(BeFalse()))
		w.t.Logf("    %s: login %s owns %v; superuser member %v, CREATEROLE %v, CREATEDB %v; database %s owned by %s, PUBLIC CONNECT %v",
			a.User, u.Name, u.Databases, *u.SuperuserMember, *u.CreateRole, *u.CreateDB, a.Database, d.Owner, *d.PublicConnect)
	}
}

// createUserPod creates a's pod, whose application runs psql, and checks
// what the injector gave it: its own login and database, a password file,
// and not the postgres password anywhere in its spec.
func (w *world) createUserPod(ctx context.Context, a tenants.App, rootPassword string) *corev1.Pod {
	g := NewWithT(w.t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.User, Annotations: a.PodAnnotations()},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "postgres:15", Command: append([]string{"psql"}, tenants.PsqlFlags...),
		}}},
	}
	w.createWhenAdmitted(ctx, pod)
	got := &corev1.Pod{}
	g.Expect(w.c.Get(ctx, client.ObjectKeyFromObject(pod), got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationProxyInjected, "true"))
	app, _ := findContainer(got, "app")
	env := map[string]string{}
	for _, e := range app.Env {
		env[e.Name] = e.Value
	}
	g.Expect(env).To(HaveKeyWithValue(podinject.EnvUser, a.Login), "PGUSER is the application's own login")
	g.Expect(env).To(HaveKeyWithValue(podinject.EnvDatabase, a.Database), "PGDATABASE is the database it owns")
	g.Expect(env).To(HaveKey(podinject.EnvPassFile))
	spec, err := json.Marshal(got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bytes.Contains(spec, []byte(rootPassword))).To(BeFalse(), "the pod does not hold the postgres password")
	w.t.Logf("    pod %s/%s: PGUSER=%s PGDATABASE=%s PGPASSFILE=%s", a.Namespace, pod.Name, env[podinject.EnvUser], env[podinject.EnvDatabase], env[podinject.EnvPassFile])
	return got
}

// userPassword is the password in a's connection secret.
func (w *world) userPassword(ctx context.Context, a tenants.App) string {
	g := NewWithT(w.t)
	ns := a.Namespace
	if a.Cluster {
		ns = tenants.SecretNamespace
	}
	s := &corev1.Secret{}
	g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.SecretName()}, s)).To(Succeed())
	pw := string(s.Data[cloudsql.ConnectionKeyPassword])
	g.Expect(pw).NotTo(BeEmpty())
	return pw
}

// usePod runs the pod's proxy and password-file writer, then its psql, which
// creates the application's table in its database, as its login.
func (w *world) usePod(ctx context.Context, a tenants.App, pod *corev1.Pod) *localpod.Pod {
	g := NewWithT(w.t)
	lp := w.loadPod(ctx, pod)
	proxy, out := w.startProxy(ctx, lp)
	defer func() { _ = proxy.Stop() }()
	g.Expect(lp.WritePasswordFiles(ctx)).To(Succeed())
	got, err := w.runApp(ctx, lp, a.Use()...)
	g.Expect(err).NotTo(HaveOccurred(), "psql: %s\nproxy output:\n%s", got, out)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	g.Expect(lines).To(ContainElement(HavePrefix(a.Used())), "psql printed its login and database")
	w.t.Logf("    pod %s/%s: psql printed: %s", a.Namespace, pod.Name, strings.Join(lines, "; "))
	return lp
}

// refusals runs, in a's pod, psql for every refusal towards the other
// applications, and expects each to fail as it says.
func (w *world) refusals(ctx context.Context, a tenants.App, lp *localpod.Pod) {
	g := NewWithT(w.t)
	proxy, out := w.startProxy(ctx, lp)
	defer func() { _ = proxy.Stop() }()
	for _, o := range a.Others(sharedApps) {
		for _, r := range a.Refusals(o) {
			got, err := w.runApp(ctx, lp, r.Args...)
			g.Expect(err).To(HaveOccurred(), "%s: %s may do %s: %s", a.Namespace, a.Login, r.What, got)
			g.Expect(got).To(ContainSubstring(r.Want), "%s: %s\nproxy output:\n%s", a.Namespace, r.What, out)
			w.t.Logf("    %s, %s: %s", a.Login, r.What, firstLine(got))
		}
	}
}

// startProxy starts the pod's proxy and returns it and its output.
func (w *world) startProxy(ctx context.Context, lp *localpod.Pod) (*localpod.Process, *bytes.Buffer) {
	out := &bytes.Buffer{}
	proxy, err := lp.StartProxy(ctx, w.endpoint, out)
	NewWithT(w.t).Expect(err).NotTo(HaveOccurred(), "proxy output:\n%s", out)
	return proxy, out
}

// expectOnlyPostgres checks that the shared instance is left with the
// logins and databases it started with: none of the applications' remain.
func (w *world) expectOnlyPostgres(ctx context.Context) {
	g := NewWithT(w.t)
	svc, err := sqladmin.NewService(ctx, optionsOf(w.endpoint)...)
	g.Expect(err).NotTo(HaveOccurred())
	users, err := svc.Users.List(sharedProject, sharedInstance).Context(ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	var logins []string
	for _, u := range users.Items {
		logins = append(logins, u.Name)
	}
	dbs, err := svc.Databases.List(sharedProject, sharedInstance).Context(ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, d := range dbs.Items {
		names = append(names, d.Name)
	}
	for _, a := range sharedApps {
		g.Expect(logins).NotTo(ContainElement(a.Login))
		g.Expect(names).NotTo(ContainElement(a.Database))
	}
	w.t.Logf("    %s has logins %v and databases %v", sharedInstance, logins, names)
}
