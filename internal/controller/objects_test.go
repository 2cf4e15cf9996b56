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

package controller_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/cloudsqlconn"
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	. "github.com/onsi/gomega"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	xpcontroller "github.com/travelaudience/cloudsql-postgres-operator/internal/controller"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// These tests run the provider's controllers (xpcontroller.Setup) against a
// real kube-apiserver and the emulator with its data plane: every
// PostgresqlInstance is a real PostgreSQL behind the emulator's server-side
// proxy, so the SQL that gives logins least privilege runs for real, and what
// it did is proven by logging in as the logins.

const (
	secretNamespace = "crossplane-system"
	// wait bounds each wait for the controllers; a PostgreSQL server starts
	// in about a second, more under the race detector.
	wait = 90 * time.Second
	// poll is the controllers' poll interval: short, so that the bounds on
	// the requests and attempts per interval are seen in seconds.
	poll = 8 * time.Second
	// codeInsufficientPrivilege is PostgreSQL's "permission denied".
	codeInsufficientPrivilege = "42501"
)

var env *controlplane.Env

func TestMain(m *testing.M) {
	flag.Parse()
	ctrl.SetLogger(logr.Discard())
	if testing.Short() {
		os.Exit(m.Run())
	}
	var err error
	if env, err = controlplane.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNamespace}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot stop the test control plane:", err)
	}
	os.Exit(code)
}

// world is one test's emulator (with a data plane), its configurations and a
// manager running the provider's controllers.
type world struct {
	t       *testing.T
	g       Gomega
	ctx     context.Context
	id      string
	emu     *emulator.Server
	url     string
	project string
	pc      string
	team    string

	// lonely is an instance whose connection settings name blackhole, where
	// the server-side proxy does not answer: attempts counts its dials.
	lonely    atomic.Value
	blackhole string
	attempts  atomic.Int64

	objects []client.Object
	stop    func()
}

func newWorld(t *testing.T) *world {
	t.Helper()
	controlplane.Need(t)
	g := NewWithT(t)
	cfg, err := postgres.Config{}.Resolve()
	g.Expect(err).NotTo(HaveOccurred(), "these tests need PostgreSQL's server (initdb, postgres, psql): run `make postgres`")
	var b [4]byte
	_, _ = rand.Read(b[:])
	id := fmt.Sprintf("%x", b)
	w := &world{t: t, g: g, ctx: context.Background(), id: id, project: "objs-" + id, pc: "pc-" + id, team: "team-" + id}
	w.lonely.Store("")
	w.emu = emulator.New(emulator.WithPostgres(cfg), emulator.WithDelays(0, 0, 0), emulator.WithRequestBudget(0))
	srv := httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(func() {
		srv.Close()
		_ = w.emu.Close()
	})
	w.url = srv.URL
	w.blackhole = w.listenBlackhole()

	key, err := emulator.ServiceAccountKey(w.project, srv.URL+emulator.TokenPath)
	g.Expect(err).NotTo(HaveOccurred())
	keySecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: "key-" + id}, Data: map[string][]byte{"key.json": key}}
	creds := v1alpha1.ProviderCredentials{
		Source: xpv2.CredentialsSourceSecret,
		CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
			SecretReference: xpv2.SecretReference{Namespace: secretNamespace, Name: keySecret.Name}, Key: "key.json",
		}},
	}
	spec := v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: w.project, Endpoint: srv.URL + "/"}, Credentials: creds}
	w.create(keySecret)
	w.create(&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: w.pc}, Spec: spec})
	w.create(&nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: w.pc}, Spec: nsv1alpha1.ClusterProviderConfigSpec{
		ProviderConfigSpec: spec, Namespaces: &nsv1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{}},
	}})
	g.Expect(env.Client.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.team}})).To(Succeed())
	w.startManager()
	t.Cleanup(w.cleanup)
	return w
}

// serve is the emulator, but for the connection settings of the lonely
// instance, whose addresses are the blackhole's.
func (w *world) serve(rw http.ResponseWriter, r *http.Request) {
	lonely, _ := w.lonely.Load().(string)
	if lonely == "" || !strings.HasSuffix(r.URL.Path, "/instances/"+lonely+"/connectSettings") {
		w.emu.ServeHTTP(rw, r)
		return
	}
	rec := httptest.NewRecorder()
	w.emu.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	cs := &sqladmin.ConnectSettings{}
	if rec.Code == http.StatusOK && json.Unmarshal(body, cs) == nil {
		for _, ip := range cs.IpAddresses {
			ip.IpAddress = w.blackhole
		}
		body, _ = json.Marshal(cs)
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(rec.Code)
	_, _ = rw.Write(body)
}

// listenBlackhole listens on port 3307 of a loopback address of its own and
// closes every connection at once, as an address whose server-side proxy is
// gone: TLS handshakes fail.
func (w *world) listenBlackhole() string {
	w.t.Helper()
	var b [2]byte
	for range 100 {
		_, _ = rand.Read(b[:])
		ip := fmt.Sprintf("127.213.%d.%d", b[0], max(b[1], 1))
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(emulator.ServerProxyPort)))
		if err != nil {
			continue
		}
		w.t.Cleanup(func() { _ = ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				w.attempts.Add(1)
				_ = c.Close()
			}
		}()
		return ip
	}
	w.t.Fatal("no free loopback address for the blackhole")
	return ""
}

func (w *world) startManager() {
	w.t.Helper()
	o := core.Options{
		Options: controller.Options{
			Logger:                  testLogger(),
			GlobalRateLimiter:       ratelimiter.NewGlobal(1000),
			PollInterval:            poll,
			MaxConcurrentReconciles: 5,
			Features:                &feature.Flags{},
		},
		// Two attempts a request: an injected fault of a few requests fails
		// whole reconciles.
		Transport: budget.NewTransport(nil, budget.PerMinute(100000), budget.WithRetries(2, 10*time.Millisecond, 100*time.Millisecond)),
		TenantTransport: budget.NewWindows(func() *budget.Window { return budget.PerMinute(100000) },
			budget.WithRetries(2, 10*time.Millisecond, 100*time.Millisecond)).Transport,
		BusyPollInterval: 200 * time.Millisecond,
		// Daily, so that a health read almost never falls into a count.
		BackupHealthInterval: 24 * time.Hour,
		Timeout:              wait,
		ObserveByList:        false,
		MaxReconcileRate:     1000,
		NamespacedEndpoints:  []string{w.url + "/"},
		KeyTokenURI:          true,
	}
	w.run(o)
}

// run starts a manager with the provider's controllers, configured by o;
// w.stop stops it.
func (w *world) run(o core.Options) {
	w.t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:     env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Client:     client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	w.g.Expect(err).NotTo(HaveOccurred())
	w.g.Expect(xpcontroller.Setup(mgr, o)).To(Succeed())
	ctx, cancel := context.WithCancel(w.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	w.stop = func() {
		cancel()
		<-done
	}
}

// cleanup stops the controllers and removes what the test made, finalizers
// and all: envtest runs no garbage collector.
func (w *world) cleanup() {
	w.stop()
	for i := len(w.objects) - 1; i >= 0; i-- {
		o := w.objects[i]
		if err := env.Client.Get(w.ctx, client.ObjectKeyFromObject(o), o); err != nil {
			continue
		}
		o.SetFinalizers(nil)
		_ = env.Client.Update(w.ctx, o)
		_ = env.Client.Delete(w.ctx, o)
	}
}

func (w *world) create(o client.Object) {
	w.t.Helper()
	w.g.Expect(env.Client.Create(w.ctx, o)).To(Succeed())
	w.objects = append(w.objects, o)
}

// clusterInstance is a cluster-scoped PostgresqlInstance of the world.
func (w *world) clusterInstance(name string) *v1alpha1.PostgresqlInstance {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: w.pc}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNamespace, Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	w.create(pi)
	w.objects = append(w.objects, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: name + "-postgres"}})
	return pi
}

// namespacedInstance is a PostgresqlInstance of the world's team namespace.
func (w *world) namespacedInstance(name string) *nsv1alpha1.PostgresqlInstance {
	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: w.team, Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: w.pc}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	w.create(pi)
	return pi
}

// clusterUser is a cluster-scoped PostgresqlUser of instance, its secret in
// crossplane-system.
func (w *world) clusterUser(name, instance string) *v1alpha1.PostgresqlUser {
	u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: name}}
	u.Spec.ForProvider.Instance = instance
	u.SetWriteConnectionSecretToReference(&xpv2.SecretReference{Namespace: secretNamespace, Name: name + "-login"})
	w.create(u)
	w.objects = append(w.objects, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: name + "-login"}})
	return u
}

// clusterDatabase is a cluster-scoped PostgresqlDatabase of instance owned
// by owner.
func (w *world) clusterDatabase(name, instance, owner string) *v1alpha1.PostgresqlDatabase {
	d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}}}
	d.Spec.ForProvider.Instance = instance
	d.Spec.ForProvider.Owner = owner
	w.create(d)
	return d
}

// teamUser is a PostgresqlUser of the team namespace, of its instance
// instance, or of the cluster-scoped clusterInstance.
func (w *world) teamUser(name, instance, clusterInstance string) *nsv1alpha1.PostgresqlUser {
	u := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: w.team, Name: name}}
	u.Spec.ForProvider.Instance, u.Spec.ForProvider.ClusterInstance = instance, clusterInstance
	u.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: name + "-login"})
	w.create(u)
	return u
}

func (w *world) teamDatabase(name, instance, clusterInstance, owner string) *nsv1alpha1.PostgresqlDatabase {
	d := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: w.team, Name: name, Annotations: map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}}}
	d.Spec.ForProvider.Instance, d.Spec.ForProvider.ClusterInstance = instance, clusterInstance
	d.Spec.ForProvider.Owner = owner
	w.create(d)
	return d
}

// conditioned is a managed resource's conditions.
type conditioned interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// waitReady waits until o is Ready and Synced, and reads it into o.
func (w *world) waitReady(o conditioned) {
	w.t.Helper()
	w.g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
		ready, synced := o.GetCondition(xpv2.TypeReady), o.GetCondition(xpv2.TypeSynced)
		g.Expect(synced.Status).To(Equal(corev1.ConditionTrue), "%s: %+v", o.GetName(), synced)
		g.Expect(ready.Status).To(Equal(corev1.ConditionTrue), "%s: %+v", o.GetName(), ready)
	}, wait, 100*time.Millisecond).Should(Succeed())
}

// waitSynced waits until o's Synced condition is status with a message that
// holds every one of says, and returns it.
func (w *world) waitSynced(o conditioned, status corev1.ConditionStatus, says ...string) xpv2.Condition {
	w.t.Helper()
	var c xpv2.Condition
	w.g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
		c = o.GetCondition(xpv2.TypeSynced)
		g.Expect(c.Status).To(Equal(status), "%s: %+v", o.GetName(), c)
		for _, s := range says {
			g.Expect(c.Message).To(ContainSubstring(s))
		}
	}, wait, 100*time.Millisecond).Should(Succeed())
	return c
}

func (w *world) waitGone(o client.Object) {
	w.t.Helper()
	w.g.Eventually(func() bool {
		return kerrors.IsNotFound(env.Client.Get(w.ctx, client.ObjectKeyFromObject(o), o))
	}, wait, 100*time.Millisecond).Should(BeTrue(), "%s is not deleted", o.GetName())
}

func (w *world) secret(ns, name string) *corev1.Secret {
	w.t.Helper()
	s := &corev1.Secret{}
	w.g.Expect(env.Client.Get(w.ctx, client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

// calls counts the world's requests of method to instance ("": any).
func (w *world) calls(method, instance string) int {
	n := 0
	for _, r := range w.emu.Requests() {
		if r.Project == w.project && r.Method == method && (instance == "" || r.Instance == instance) {
			n++
		}
	}
	return n
}

// login connects as user to db of the instance whose connection name is
// icn, through a connector of the test's own and the emulator's
// server-side proxy.
func (w *world) login(icn, user, password, db string) (*pgx.Conn, error) {
	d, err := cloudsqlconn.NewDialer(w.ctx, cloudsqlconn.WithAdminAPIEndpoint(w.url+"/"),
		cloudsqlconn.WithTokenSource(staticToken{}), cloudsqlconn.WithLazyRefresh())
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig("host=instance sslmode=disable connect_timeout=30")
	if err != nil {
		_ = d.Close()
		return nil, err
	}
	cfg.User, cfg.Password, cfg.Database = user, password, db
	cfg.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	cfg.DialFunc = func(ctx context.Context, _, _ string) (net.Conn, error) { return d.Dial(ctx, icn) }
	conn, err := pgx.ConnectConfig(w.ctx, cfg)
	if err != nil {
		_ = d.Close()
		return nil, err
	}
	go func() {
		<-conn.PgConn().CleanupDone()
		_ = d.Close()
	}()
	return conn, nil
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

type staticToken struct{}

func (staticToken) Token() (*oauth2.Token, error) { return &oauth2.Token{AccessToken: "test"}, nil }

func testLogger() logging.Logger {
	if os.Getenv("TEST_DEBUG") == "" {
		return logging.NewNopLogger()
	}
	return logging.NewLogrLogger(zap.New(zap.UseDevMode(true)))
}

// login is what an application gets from a user's connection secret.
type login struct {
	icn, user, password, database string
}

// checkLogin checks a Ready user's secret and status, and logs in as it: its
// own database only, and nothing beyond it.
func (w *world) checkLogin(t *testing.T, sec *corev1.Secret, obs v1alpha1.PostgresqlUserObservation, wantDB, otherDB string) login {
	t.Helper()
	g := NewWithT(t)
	for _, k := range []string{cloudsql.ConnectionKeyUsername, cloudsql.ConnectionKeyPassword, cloudsql.ConnectionKeyPgpass,
		cloudsql.ConnectionKeyDatabase, cloudsql.ConnectionKeyDatabases, cloudsql.ConnectionKeyConnectionName} {
		g.Expect(sec.Data[k]).NotTo(BeEmpty(), "key %s of secret %s/%s", k, sec.Namespace, sec.Name)
	}
	l := login{
		icn: string(sec.Data[cloudsql.ConnectionKeyConnectionName]), user: string(sec.Data[cloudsql.ConnectionKeyUsername]),
		password: string(sec.Data[cloudsql.ConnectionKeyPassword]), database: string(sec.Data[cloudsql.ConnectionKeyDatabase]),
	}
	g.Expect(l.database).To(Equal(wantDB))
	g.Expect(string(sec.Data[cloudsql.ConnectionKeyDatabases])).To(Equal(wantDB))
	g.Expect(string(sec.Data[cloudsql.ConnectionKeyPgpass])).To(Equal(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", l.user, l.password)))
	g.Expect(obs.SuperuserMember).To(Equal(ptr.To(false)))
	g.Expect(obs.CreateRole).To(Equal(ptr.To(false)))
	g.Expect(obs.CreateDB).To(Equal(ptr.To(false)))
	g.Expect(obs.Databases).To(Equal([]string{wantDB}))

	conn, err := w.login(l.icn, l.user, l.password, l.database)
	g.Expect(err).NotTo(HaveOccurred(), "%s logs in to %s", l.user, l.database)
	defer conn.Close(w.ctx)
	_, err = conn.Exec(w.ctx, "CREATE TABLE orders (id int PRIMARY KEY)")
	g.Expect(err).NotTo(HaveOccurred(), "%s creates a table in its database", l.user)
	var member bool
	g.Expect(conn.QueryRow(w.ctx, "SELECT pg_has_role(current_user, 'cloudsqlsuperuser', 'MEMBER')").Scan(&member)).To(Succeed())
	g.Expect(member).To(BeFalse())
	_, err = conn.Exec(w.ctx, "CREATE ROLE intruder")
	g.Expect(sqlState(err)).To(Equal(codeInsufficientPrivilege), "CREATE ROLE: %v", err)
	_, err = conn.Exec(w.ctx, "CREATE DATABASE intruder")
	g.Expect(sqlState(err)).To(Equal(codeInsufficientPrivilege), "CREATE DATABASE: %v", err)
	if otherDB != "" {
		other, err := w.login(l.icn, l.user, l.password, otherDB)
		if err == nil {
			_ = other.Close(w.ctx)
		}
		g.Expect(sqlState(err)).To(Equal(codeInsufficientPrivilege), "%s connects to %s: %v", l.user, otherDB, err)
	}
	return l
}

func TestUsersAndDatabases(t *testing.T) {
	w := newWorld(t)
	g := w.g
	shared := "shared-" + w.id
	lonely := "lonely-" + w.id
	w.lonely.Store(lonely)

	// One cluster-scoped instance shared by a cluster-scoped pair and a
	// namespaced pair (clusterInstance); a namespaced instance with a
	// namespaced pair; and an instance the provider cannot reach.
	pi := w.clusterInstance(shared)
	nspi := w.namespacedInstance("db")
	lpi := w.clusterInstance(lonely)
	w.waitReady(pi)
	w.waitReady(nspi)
	w.waitReady(lpi)

	appLogin, appDB := "app-"+w.id, "orders-"+w.id
	app := w.clusterUser(appLogin, shared)
	orders := w.clusterDatabase(appDB, shared, appLogin)
	capp := w.teamUser("capp", "", shared)
	corders := w.teamDatabase("corders", "", shared, "capp")
	spare := w.clusterUser("spare-"+w.id, shared)
	napp := w.teamUser("napp", "db", "")
	norders := w.teamDatabase("norders", "db", "", "napp")
	for _, o := range []conditioned{app, orders, capp, corders, spare, napp, norders} {
		w.waitReady(o)
	}
	// The users' secrets follow the databases they own at their next poll.
	g.Eventually(func(g Gomega) {
		for _, s := range []*corev1.Secret{w.secret(secretNamespace, appLogin+"-login"), w.secret(w.team, "capp-login"), w.secret(w.team, "napp-login")} {
			g.Expect(s.Data[cloudsql.ConnectionKeyDatabase]).NotTo(BeEmpty(), "secret %s", s.Name)
		}
		for _, u := range []conditioned{app, capp, napp} {
			g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
		}
		g.Expect(app.Status.AtProvider.Databases).NotTo(BeEmpty())
		g.Expect(capp.Status.AtProvider.Databases).NotTo(BeEmpty())
		g.Expect(napp.Status.AtProvider.Databases).NotTo(BeEmpty())
	}, wait, 100*time.Millisecond).Should(Succeed())

	var appL, cappL login
	t.Run("EachLoginReachesItsOwnDatabaseOnly", func(t *testing.T) {
		appL = w.checkLogin(t, w.secret(secretNamespace, appLogin+"-login"), app.Status.AtProvider, appDB, "corders")
		cappL = w.checkLogin(t, w.secret(w.team, "capp-login"), capp.Status.AtProvider, "corders", appDB)
		w.checkLogin(t, w.secret(w.team, "napp-login"), napp.Status.AtProvider, "norders", "")
		g := NewWithT(t)
		g.Expect(orders.Status.AtProvider.Owner).To(Equal(appLogin))
		g.Expect(orders.Status.AtProvider.PublicConnect).To(Equal(ptr.To(false)))
		g.Expect(norders.Status.AtProvider.Owner).To(Equal("napp"))
	})

	t.Run("OneListingPerInstanceServesItsObjects", func(t *testing.T) {
		g := NewWithT(t)
		// Three users and two databases of the shared instance, polled every
		// poll interval: the listings of each kind are shared, at most
		// one per interval (and one more for the interval under way),
		// not one per object and poll.
		usersBefore, dbsBefore := w.calls(emulator.MethodUsersList, shared), w.calls(emulator.MethodDatabasesList, shared)
		const intervals = 3
		time.Sleep(intervals * poll)
		users, dbs := w.calls(emulator.MethodUsersList, shared)-usersBefore, w.calls(emulator.MethodDatabasesList, shared)-dbsBefore
		t.Logf("in %d poll intervals: %d users.list, %d databases.list of instance %s (3 users, 2 databases)", intervals, users, dbs, shared)
		// Each poll of an object comes within ±10% of the interval.
		bound := intervals*10/9 + 1
		g.Expect(users).To(BeNumerically("<=", bound))
		g.Expect(dbs).To(BeNumerically("<=", bound))
		g.Expect(users).To(BeNumerically(">=", 1), "the users are polled")
	})

	t.Run("NewDatabasesAreConfirmedFromTheListingAtHand", func(t *testing.T) {
		g := NewWithT(t)
		// Four databases of the shared instance, created together: each
		// insert is DONE at once and joins the instance's listing, so they
		// become Ready with no listing of their own (only the interval's).
		before, inserts := w.calls(emulator.MethodDatabasesList, shared), w.calls(emulator.MethodDatabasesInsert, shared)
		start := time.Now()
		var dbs []conditioned
		for i := range 4 {
			dbs = append(dbs, w.clusterDatabase(fmt.Sprintf("batch%d-%s", i, w.id), shared, ""))
		}
		for _, d := range dbs {
			w.waitReady(d)
		}
		took := time.Since(start)
		lists := w.calls(emulator.MethodDatabasesList, shared) - before
		t.Logf("4 databases Ready in %s with %d databases.list and %d databases.insert", took.Round(time.Millisecond), lists, w.calls(emulator.MethodDatabasesInsert, shared)-inserts)
		g.Expect(w.calls(emulator.MethodDatabasesInsert, shared) - inserts).To(Equal(4))
		// The poll interval's listings, and one more for the interval
		// under way: one per insert would be 4.
		g.Expect(lists).To(BeNumerically("<=", int(took/poll)+1))
	})

	t.Run("AnUnreachableInstanceIsAConditionRetriedAtThePollInterval", func(t *testing.T) {
		g := NewWithT(t)
		before := w.attempts.Load()
		lost := w.clusterUser("lost-"+w.id, lonely)
		// Counted from the first attempt: the next comes a poll interval
		// later, not after the error backoff's first second and the next two.
		g.Eventually(w.attempts.Load, wait, 10*time.Millisecond).Should(BeNumerically(">", before))
		first := w.attempts.Load()
		window := poll * 8 / 10
		time.Sleep(window)
		further := w.attempts.Load() - first
		t.Logf("%d more attempts to reach %s in %s after the first (poll interval %s)", further, lonely, window, poll)
		g.Expect(further).To(BeNumerically("<=", 1))
		c := w.waitSynced(lost, corev1.ConditionFalse, "cannot connect to Cloud SQL instance", "port 3307 of the instance's public IP address")
		t.Log(c.Message)
	})

	t.Run("APasswordStoredBeforeUsersInsertIsTheOneSet", func(t *testing.T) {
		g := NewWithT(t)
		// users.insert fails six times (an insert answered 5xx is not sent
		// again within a reconcile): each reconcile finds the password
		// stored, unconfirmed, and keeps it.
		g.Expect(w.emu.InjectFault(emulator.Fault{Method: emulator.MethodUsersInsert, ServerErrorShare: 1, Count: 6})).To(Succeed())
		name := "crash-" + w.id
		crash := w.clusterUser(name, shared)
		var stored string
		g.Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(env.Client.Get(w.ctx, client.ObjectKey{Namespace: secretNamespace, Name: name + "-login"}, s)).To(Succeed())
			stored = string(s.Data[cloudsql.ConnectionKeyPassword])
			g.Expect(stored).NotTo(BeEmpty())
			g.Expect(s.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationPasswordUnconfirmed, "true"))
		}, wait, 20*time.Millisecond).Should(Succeed())
		w.waitSynced(crash, corev1.ConditionFalse, "cannot create login "+name)
		// The provider crashes, and comes back.
		w.stop()
		w.startManager()
		w.waitReady(crash)
		s := w.secret(secretNamespace, name+"-login")
		g.Expect(string(s.Data[cloudsql.ConnectionKeyPassword])).To(Equal(stored), "the stored password is never replaced")
		g.Expect(w.emu.PasswordIs(w.project, shared, name, stored)).To(BeTrue())
		g.Expect(w.calls(emulator.MethodUsersInsert, shared)).To(BeNumerically(">=", 4))
		conn, err := w.login(appL.icn, name, stored, "postgres")
		g.Expect(err).NotTo(HaveOccurred())
		_ = conn.Close(w.ctx)
	})

	t.Run("InsertsAnsweredWithServerErrorsAreTriedAgainAtTheBusyPoll", func(t *testing.T) {
		g := NewWithT(t)
		// Seven 5xx for each kind's insert, then the database's eighth is
		// carried out and its answer lost. In the error backoff, whose gaps
		// double from 1 s to 60 s, the eighth try would come 123 s after
		// the first, past wait; at the busy poll interval (200 ms here) each
		// try comes within a second of the last, and looks before it
		// inserts again.
		for _, f := range []emulator.Fault{
			{Method: emulator.MethodUsersInsert, ServerErrorShare: 1, Count: 7},
			{Method: emulator.MethodDatabasesInsert, ServerErrorShare: 1, Count: 7},
			{Method: emulator.MethodDatabasesInsert, LoseAnswerShare: 1, Count: 1},
		} {
			g.Expect(w.emu.InjectFault(f)).To(Succeed())
		}
		defer w.emu.ClearFaults()
		users, dbs := w.calls(emulator.MethodUsersInsert, shared), w.calls(emulator.MethodDatabasesInsert, shared)
		login, dbName := "storm-"+w.id, "stormdb-"+w.id
		start := time.Now()
		u := w.clusterUser(login, shared)
		d := w.clusterDatabase(dbName, shared, login)
		w.waitReady(u)
		w.waitReady(d)
		t.Logf("a user and a database Ready %s after their first tries, through 7 and 8 failed inserts", time.Since(start).Round(100*time.Millisecond))
		g.Expect(w.calls(emulator.MethodUsersInsert, shared)-users).To(Equal(8), "seven failed, the eighth made the login")
		g.Expect(w.calls(emulator.MethodDatabasesInsert, shared)-dbs).To(Equal(8), "the one whose answer was lost is not sent again")
		g.Expect(w.emu.Faults()).To(BeEmpty(), "every fault was spent")
		g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		g.Expect(d.Status.AtProvider.Owner).To(Equal(login))
	})

	t.Run("ALoginWhoseInsertAnswerWasLostIsConfirmedByPostgreSQL", func(t *testing.T) {
		g := NewWithT(t)
		// users.insert makes the login and its answer is lost; the object's
		// policies leave out Update, the one way to set a password again.
		g.Expect(w.emu.InjectFault(emulator.Fault{Method: emulator.MethodUsersInsert, LoseAnswerShare: 1, Count: 1})).To(Succeed())
		name := "unanswered-" + w.id
		u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: name}}
		u.Spec.ForProvider.Instance = shared
		u.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate,
			xpv2.ManagementActionDelete, xpv2.ManagementActionLateInitialize}
		u.SetWriteConnectionSecretToReference(&xpv2.SecretReference{Namespace: secretNamespace, Name: name + "-login"})
		updates := w.calls(emulator.MethodUsersUpdate, shared)
		w.create(u)
		w.objects = append(w.objects, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: name + "-login"}})
		w.waitReady(u)

		s := w.secret(secretNamespace, name+"-login")
		g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPasswordUnconfirmed), "PostgreSQL took the stored password")
		pw := string(s.Data[cloudsql.ConnectionKeyPassword])
		g.Expect(w.emu.PasswordIs(w.project, shared, name, pw)).To(BeTrue())
		g.Expect(w.calls(emulator.MethodUsersUpdate, shared)).To(Equal(updates), "no update set it again")
		lost := false
		for _, r := range w.emu.Requests() {
			lost = lost || (r.Method == emulator.MethodUsersInsert && r.Instance == shared && r.Fault && r.Status == http.StatusServiceUnavailable)
		}
		g.Expect(lost).To(BeTrue(), "the insert's answer was lost")
		conn, err := w.login(appL.icn, name, pw, "postgres")
		g.Expect(err).NotTo(HaveOccurred())
		_ = conn.Close(w.ctx)

		// A password edited in the secret is asked of PostgreSQL too, which
		// refuses it: the condition says so, and nothing resets the login.
		s.Data[cloudsql.ConnectionKeyPassword] = []byte("not-the-logins-password")
		g.Expect(env.Client.Update(w.ctx, s)).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
			c := u.GetCondition(xpv2.TypeReady)
			g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(c.Message).To(ContainSubstring("and PostgreSQL refuses it"))
			g.Expect(c.Message).To(ContainSubstring("or put the login's current password in the secret"))
		}, wait, 100*time.Millisecond).Should(Succeed())
		g.Expect(w.emu.PasswordIs(w.project, shared, name, pw)).To(BeTrue(), "the login keeps its password")
		g.Expect(w.calls(emulator.MethodUsersUpdate, shared)).To(Equal(updates))
	})

	t.Run("AUsersPasswordRotatesAndOpenSessionsStayOpen", func(t *testing.T) {
		g := NewWithT(t)
		u := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: w.team, Name: "rot"}}
		u.Spec.ForProvider.ClusterInstance = shared
		u.Spec.ForProvider.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: 24 * time.Hour}}
		u.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "rot-login"})
		w.create(u)
		w.waitReady(u)
		sec := w.secret(w.team, "rot-login")
		old := string(sec.Data[cloudsql.ConnectionKeyPassword])
		g.Expect(sec.Annotations).To(HaveKey(v1alpha1.AnnotationPasswordSetAt))
		open, err := w.login(appL.icn, "rot", old, "postgres")
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = open.Close(w.ctx) }()

		// A day later, as far as the record says.
		sec.Annotations[v1alpha1.AnnotationPasswordSetAt] = time.Now().Add(-25 * time.Hour).UTC().Format(time.RFC3339)
		g.Expect(env.Client.Update(w.ctx, sec)).To(Succeed())
		var rotated string
		g.Eventually(func(g Gomega) {
			s := w.secret(w.team, "rot-login")
			rotated = string(s.Data[cloudsql.ConnectionKeyPassword])
			g.Expect(rotated).NotTo(Equal(old))
			g.Expect(s.Annotations).NotTo(HaveKey(v1alpha1.AnnotationPasswordUnconfirmed))
			g.Expect(string(s.Data[cloudsql.ConnectionKeyPgpass])).To(Equal(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", "rot", rotated)))
			g.Expect(string(s.Data[cloudsql.ConnectionKeyURL])).To(Equal(cloudsql.URL("rot", rotated, string(s.Data[cloudsql.ConnectionKeyDatabase]))), "url follows the password")
			g.Expect(w.emu.PasswordIs(w.project, shared, "rot", rotated)).To(BeTrue())
		}, wait, 20*time.Millisecond).Should(Succeed())

		conn, err := w.login(appL.icn, "rot", rotated, "postgres")
		g.Expect(err).NotTo(HaveOccurred(), "the new password logs in")
		_ = conn.Close(w.ctx)
		_, err = w.login(appL.icn, "rot", old, "postgres")
		g.Expect(sqlState(err)).To(Equal("28P01"), "the old one no longer does: %v", err)
		var one int
		g.Expect(open.QueryRow(w.ctx, "select 1").Scan(&one)).To(Succeed(), "a session opened with the old password stays open")
		g.Expect(one).To(Equal(1))
	})

	t.Run("AUserThatOwnsADatabaseIsDeletedAfterIt", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(env.Client.Delete(w.ctx, app)).To(Succeed())
		w.waitSynced(app, corev1.ConditionFalse, "login "+appLogin+" still owns database(s) "+appDB, "delete their PostgresqlDatabases first")
		g.Expect(w.emu.PasswordIs(w.project, shared, appLogin, appL.password)).To(BeTrue(), "the login is kept")
		g.Expect(env.Client.Delete(w.ctx, orders)).To(Succeed())
		w.waitGone(orders)
		w.waitGone(app)
		g.Expect(w.emu.PasswordIs(w.project, shared, appLogin, appL.password)).To(BeFalse(), "the login is gone")
	})

	t.Run("ADatabaseWithASessionIsDeletedOnceItEnds", func(t *testing.T) {
		g := NewWithT(t)
		conn, err := w.login(cappL.icn, cappL.user, cappL.password, "corders")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(env.Client.Delete(w.ctx, corders)).To(Succeed())
		w.waitSynced(corders, corev1.ConditionFalse, "cannot delete database corders", "sessions are connected to it")
		g.Expect(conn.Close(w.ctx)).To(Succeed())
		w.waitGone(corders)
		svc := w.svc()
		dbs, err := svc.Databases.List(w.project, shared).Do()
		g.Expect(err).NotTo(HaveOccurred())
		for _, d := range dbs.Items {
			g.Expect(d.Name).NotTo(Equal("corders"))
		}
	})
}

// svc is a Cloud SQL client of the test's own.
func (w *world) svc() *sqladmin.Service {
	w.t.Helper()
	svc, err := sqladmin.NewService(w.ctx, option.WithEndpoint(w.url+"/"), option.WithoutAuthentication())
	w.g.Expect(err).NotTo(HaveOccurred())
	return svc
}
