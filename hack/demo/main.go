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

// Command demo runs provider-cloudsql-postgres on embedded defaults, with no cloud
// account: a local control plane (kube-apiserver and etcd built from Go modules) with
// the CRDs and webhook configurations of package/ installed, the Cloud SQL emulator
// with realistic (seconds-long) operation times and a real PostgreSQL server behind
// each instance, and the provider binary itself. It applies the example instances
// of both scopes (cluster-scoped, and namespaced in team-a), shows them become
// Ready, creates a pod that asks for one of each and shows what the injector
// added, then runs each pod's Cloud SQL Auth Proxy and psql exactly as the pod
// spec says (as local processes) and prints the answer. Last it shows a clone at
// a point in time: rows written, the time taken, more rows written, the clone of
// examples/recovery.yaml made at that time, read through a pod of its own with
// its own password. Then it runs until interrupted. `make demo` runs it; CLOUD_SQL_PROXY names the proxy binary, which
// `make cloud-sql-proxy` builds.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/localpod"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/providerproc"
)

const (
	errMakeDir        = "cannot make the demo's directory %s"
	errCreateLog      = "cannot create a log file"
	errListen         = "cannot listen for the emulator"
	errStartProvider  = "cannot start the provider"
	errCreate         = "cannot create %s %s"
	errNoProxyBinary  = "CLOUD_SQL_PROXY does not name the Cloud SQL Auth Proxy binary: run the demo with `make demo`, which builds it"
	errApplyExample   = "cannot apply %s %s from examples/%s"
	errPodNotAdmitted = "the pod was not admitted"
	errNotReady       = "the instances did not become Ready in time: see the provider's log, %s"
	errReadPod        = "the pod could not be read back"
	errProxyStart     = "the Cloud SQL Auth Proxy did not start: %w\n%s"
	errPsql           = "psql failed: %w\nproxy output:\n%s"
	errNoCloneExample = "examples/recovery.yaml holds no PostgresqlInstance cloned at a point in time"
	errWindow         = "cannot read the recoverable window of %s"
	errOutsideWindow  = "%s lies outside the recoverable window of %s, from %s to %s"
	errSecret         = "cannot read the connection secret %s"
)

const (
	project   = "demo-project-123456"
	namespace = "crossplane-system"
	appNS     = "demo-app"
	teamNS    = "team-a" // the namespace of examples/namespaced
)

func main() {
	runFor := flag.Duration("for", 0, "stop this long after everything is up (0 runs until interrupted)")
	flag.Parse()
	if err := run(*runFor); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// A demo is what the steps of run start and share; each step adds what undoes
// it to stops, which run calls in reverse order.
type demo struct {
	root, dir string
	provider  string // the built provider binary
	prov      *providerproc.Process
	proxyBin  string
	endpoint  string // the emulator's
	env       *controlplane.Env
	instances []*unstructured.Unstructured
	clone     string // the PostgresqlInstance cloned at a point in time
	stops     []func()
}

func run(runFor time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := &demo{root: controlplane.RepoRoot()}
	d.dir = filepath.Join(d.root, ".cache", "demo")
	defer func() {
		for i := len(d.stops) - 1; i >= 0; i-- {
			d.stops[i]()
		}
	}()
	for _, s := range []func(context.Context) error{
		d.checkTools, d.buildProvider, d.startControlPlane, d.startEmulator, d.startProvider, d.applyExamples, d.waitForInstances, d.connectPods,
		d.cloneAtAPointInTime,
	} {
		if err := s(ctx); err != nil {
			return err
		}
	}
	if err := d.printHowToLookAround(); err != nil {
		return err
	}
	if runFor > 0 {
		fmt.Printf("\nstopping in %s\n", runFor)
		select {
		case <-ctx.Done():
		case <-time.After(runFor):
		}
	} else {
		fmt.Println("\nRunning until you press Ctrl-C.")
		<-ctx.Done()
	}
	step("stopping")
	return nil
}

// checkTools finds the proxy binary and makes the demo's directory.
func (d *demo) checkTools(context.Context) error {
	if d.proxyBin = os.Getenv("CLOUD_SQL_PROXY"); d.proxyBin == "" {
		return errors.New(errNoProxyBinary)
	}
	return errors.Wrapf(os.MkdirAll(d.dir, 0o700), errMakeDir, d.dir)
}

func (d *demo) buildProvider(context.Context) error {
	step("building the provider")
	var err error
	d.provider, err = providerproc.Build(d.dir)
	return err
}

func (d *demo) startControlPlane(context.Context) error {
	step("starting a local control plane (kube-apiserver + etcd) with package/crds and package/webhookconfigurations")
	env, err := controlplane.Start(controlplane.WithWebhooks(envtest.WebhookInstallOptions{
		Paths: []string{filepath.Join(d.root, "package", "webhookconfigurations")},
	}))
	if err != nil {
		return err
	}
	d.env = env
	d.stops = append(d.stops, func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: cannot stop the control plane:", err)
		}
	})
	return nil
}

func (d *demo) startEmulator(context.Context) error {
	pg, err := postgres.Config{}.Resolve()
	if err != nil {
		return err
	}
	step("starting the Cloud SQL emulator (create 8s, update 3s, delete 5s; a PostgreSQL server per instance; requests logged to .cache/demo/emulator.log)")
	emuLog, err := os.Create(filepath.Join(d.dir, "emulator.log"))
	if err != nil {
		return errors.Wrap(err, errCreateLog)
	}
	d.stops = append(d.stops, func() { _ = emuLog.Close() })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return errors.Wrap(err, errListen)
	}
	emu := emulator.New(emulator.WithDelays(8*time.Second, 3*time.Second, 5*time.Second), emulator.WithPostgres(pg), emulator.WithRequestLog(emuLog))
	d.stops = append(d.stops, func() { _ = emu.Close() })
	srv := &http.Server{Handler: emu, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	d.stops = append(d.stops, func() { _ = srv.Close() })
	d.endpoint = "http://" + lis.Addr().String() + "/"
	return nil
}

func (d *demo) startProvider(context.Context) error {
	p, err := providerproc.Start(d.provider, d.dir, d.env, "[reconcile]\npoll_interval = \"1m\"\nbusy_poll_interval = \"2s\"\nbackup_health_interval = \"1m\"\n")
	if err != nil {
		return errors.Wrap(err, errStartProvider)
	}
	d.prov = p
	d.stops = append(d.stops, p.Stop)
	step("started the provider (logs in " + d.rel(p.Log) + ")")
	return nil
}

// rel is path p as the user, at the repository's root, names it.
func (d *demo) rel(p string) string {
	if r, err := filepath.Rel(d.root, p); err == nil {
		return r
	}
	return p
}

func (d *demo) applyExamples(ctx context.Context) error {
	step("applying a ProviderConfig and a ClusterProviderConfig for the emulator, and the example instances of both scopes")
	cfgSpec := v1alpha1.ProviderConfigSpec{
		Project: v1alpha1.Project{ProjectID: project, Endpoint: d.endpoint}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: teamNS}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: cfgSpec},
		// Lent to the namespace of examples/namespaced, as a platform team would.
		&nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: nsv1alpha1.ClusterProviderConfigSpec{
			ProviderConfigSpec: cfgSpec, Namespaces: &nsv1alpha1.NamespaceSelection{Names: []string{teamNS}},
		}},
	} {
		if err := d.env.Client.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			gvk, _ := apiutil.GVKForObject(o, d.env.Client.Scheme())
			return errors.Wrapf(err, errCreate, gvk.Kind, o.GetName())
		}
	}
	for _, f := range []string{
		"postgresqlinstance-minimal.yaml", "postgresqlinstance-full.yaml", "namespaced/postgresqlinstance.yaml",
		"namespaced/postgresqluser.yaml", "namespaced/postgresqldatabase.yaml",
	} {
		objs, err := manifests.ReadFile(filepath.Join(d.root, "examples", f))
		if err != nil {
			return err
		}
		objs = append(objs, secondApplication(objs)...)
		for _, o := range objs {
			if err := allowDemoApp(o); err != nil {
				return errors.Wrapf(err, errApplyExample, o.GetKind(), o.GetName(), f)
			}
			if err := client.IgnoreAlreadyExists(providerproc.CreateWhenAdmitted(ctx, d.env.Client, o)); err != nil {
				return errors.Wrapf(err, errApplyExample, o.GetKind(), o.GetName(), f)
			}
			d.instances = append(d.instances, o)
			fmt.Printf("  applied %s %s (examples/%s)\n", o.GetKind(), refOf(o), f)
		}
	}
	return nil
}

// otherApp is a second application of team-a, with a user and a database of its
// own on the same instance, made from the examples of the first: the demo's
// pod of orders-api is refused its database.
const otherApp = "billing"

// secondApplication copies the namespaced examples' PostgresqlUser and
// PostgresqlDatabase for otherApp.
func secondApplication(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GroupVersionKind().Group != nsv1alpha1.Group {
			continue
		}
		c := o.DeepCopy()
		switch o.GetKind() {
		case nsv1alpha1.PostgresqlUserKind:
			c.SetName(otherApp + "-api")
			_ = unstructured.SetNestedField(c.Object, otherApp+"-api-login", "spec", "writeConnectionSecretToRef", "name")
		case nsv1alpha1.PostgresqlDatabaseKind:
			c.SetName(otherApp)
			_ = unstructured.SetNestedField(c.Object, otherApp+"-api", "spec", "forProvider", "ownerRef", "name")
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}

// allowDemoApp adds the demo's application namespace to the namespaces that a
// cluster-scoped example instance allows (spec.injection.allowedNamespaces):
// the provider allows none by default, and the examples name default.
func allowDemoApp(o *unstructured.Unstructured) error {
	if o.GroupVersionKind().Group != v1alpha1.Group || o.GetKind() != v1alpha1.PostgresqlInstanceKind {
		return nil
	}
	allowed, _, err := unstructured.NestedStringSlice(o.Object, "spec", "injection", "allowedNamespaces")
	if err != nil {
		return err
	}
	return unstructured.SetNestedStringSlice(o.Object, append(allowed, appNS), "spec", "injection", "allowedNamespaces")
}

func (d *demo) waitForInstances(ctx context.Context) error {
	step("waiting for the instances, and team-a's users and databases, to become Ready (Cloud SQL takes its time: here about 10s)")
	return watchReady(ctx, d.env.Client, d.instances, 3*time.Minute, d.rel(d.prov.Log))
}

// connectPods creates an annotated pod for an instance of each scope and runs
// its containers as local processes.
func (d *demo) connectPods(ctx context.Context) error {
	psql := []string{"psql", "--no-psqlrc", "--command", "select current_user, current_database()"}
	for _, p := range []struct {
		ns, name, annotation, value, scope string
		command                            []string
	}{
		{appNS, "psql", v1alpha1.AnnotationInstanceName, "example-minimal", "the cluster-scoped PostgresqlInstance example-minimal", psql},
		{teamNS, "psql", v1alpha1.AnnotationInstanceName, "orders", "the namespaced PostgresqlInstance orders of its own namespace", psql},
		// Its own login and database work; billing's database is refused.
		{teamNS, "orders-api", v1alpha1.AnnotationUserName, "orders-api", "its own login, the PostgresqlUser orders-api, not postgres",
			[]string{"sh", "-c", "psql --no-psqlrc --command 'select current_user, current_database()' && " +
				"echo '  and the database " + otherApp + ", of another application:' && ! psql --no-psqlrc --dbname " + otherApp + " --command 'select 1'"}},
	} {
		step(fmt.Sprintf("creating a pod in %s that asks for %s with the annotation %s", p.ns, p.scope, p.annotation))
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, Annotations: map[string]string{p.annotation: p.value}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "postgres:18", Command: p.command}}},
		}
		if err := d.env.Client.Create(ctx, pod); err != nil && !kerrors.IsAlreadyExists(err) {
			return errors.Wrap(err, errPodNotAdmitted)
		}
		stored := describePod(ctx, d.env.Client, pod)

		step("running the pod's cloud-sql-proxy, password-file writer and app container as local processes, exactly as stored")
		if err := connect(ctx, d.env.Client, stored, d.proxyBin, d.endpoint); err != nil {
			return err
		}
	}
	return nil
}

// cloneAtAPointInTime writes rows into the example instance that keeps its
// write-ahead log (examples/postgresqlinstance-full.yaml), takes the time,
// writes more, then applies the clone of examples/recovery.yaml at that time,
// and reads it through a pod of its own: it holds the rows of that time, and
// connects with a password of its own.
func (d *demo) cloneAtAPointInTime(ctx context.Context) error {
	const recovery = "recovery.yaml"
	objs, err := manifests.ReadFile(filepath.Join(d.root, "examples", recovery))
	if err != nil {
		return err
	}
	var clone *unstructured.Unstructured
	var source string
	for _, o := range objs {
		if s, _, _ := unstructured.NestedString(o.Object, "spec", "forProvider", "source", "instance"); s != "" && o.GetKind() == v1alpha1.PostgresqlInstanceKind {
			if _, ok, _ := unstructured.NestedString(o.Object, "spec", "forProvider", "source", "pointInTime"); ok {
				clone, source = o, s
				break
			}
		}
	}
	if clone == nil {
		return errors.New(errNoCloneExample)
	}

	step(fmt.Sprintf("point-in-time recovery: a pod in %s writes rows into %s (it keeps its write-ahead log), the demo takes the time, the pod writes more", appNS, source))
	writer, err := d.psqlPod(ctx, "pitr-writer", source, "--tuples-only", "--no-align", "--set", "ON_ERROR_STOP=1")
	if err != nil {
		return err
	}
	var at time.Time
	err = withPod(ctx, d.env.Client, writer, d.proxyBin, d.endpoint, func(psql func(...string) (string, error)) error {
		if _, err := psql("--command", "CREATE TABLE marks (id serial PRIMARY KEY, note text NOT NULL, written_at timestamptz NOT NULL DEFAULT clock_timestamp()); "+
			"INSERT INTO marks (note) VALUES ('before'), ('before, too')"); err != nil {
			return err
		}
		// A point in time is whole seconds: the rows before it are at
		// least a second older than it, the row after a second younger.
		time.Sleep(2 * time.Second)
		at = time.Now().UTC().Truncate(time.Second)
		time.Sleep(time.Second)
		if _, err := psql("--command", "INSERT INTO marks (note) VALUES ('after')"); err != nil {
			return err
		}
		out, err := psql("--command", "SELECT id, note, written_at FROM marks ORDER BY id")
		fmt.Printf("  the rows of %s now (id|note|written_at):\n", source)
		printIndented(out)
		return err
	})
	if err != nil {
		return err
	}
	earliest, latest, err := d.recoverableWindow(ctx, source)
	if err != nil {
		return err
	}
	from, to := earliest.Format(time.RFC3339Nano), latest.Format(time.RFC3339Nano)
	fmt.Printf("  the point in time: %s; %s can be recovered to any time from %s to %s\n", at.Format(time.RFC3339), source, from, to)
	if at.Before(earliest) || at.After(latest) {
		return errors.Errorf(errOutsideWindow, at.Format(time.RFC3339), source, from, to)
	}

	if err := unstructured.SetNestedField(clone.Object, at.Format(time.RFC3339), "spec", "forProvider", "source", "pointInTime"); err != nil {
		return err
	}
	if err := allowDemoApp(clone); err != nil {
		return err
	}
	if err := client.IgnoreAlreadyExists(providerproc.CreateWhenAdmitted(ctx, d.env.Client, clone)); err != nil {
		return errors.Wrapf(err, errApplyExample, clone.GetKind(), clone.GetName(), recovery)
	}
	d.clone = clone.GetName()
	fmt.Printf("  applied %s %s (examples/%s) with spec.forProvider.source {instance: %s, pointInTime: %s}\n", clone.GetKind(), clone.GetName(), recovery, source, at.Format(time.RFC3339))
	step("waiting for the clone to become Ready: a new Cloud SQL instance, recovered to that time, with a postgres password of its own")
	if err := watchReady(ctx, d.env.Client, []*unstructured.Unstructured{clone}, 3*time.Minute, d.rel(d.prov.Log)); err != nil {
		return err
	}
	same, err := d.samePassword(ctx, clone, source)
	if err != nil {
		return err
	}
	fmt.Printf("  its connection secret holds a password of its own, not %s's: %v\n", source, !same)

	step(fmt.Sprintf("a pod in %s asks for the clone %s: its psql, with the clone's own password, reads what the clone holds", appNS, clone.GetName()))
	reader, err := d.psqlPod(ctx, "pitr-reader", clone.GetName(), "--command", "SELECT id, note, written_at FROM marks ORDER BY id")
	if err != nil {
		return err
	}
	return connect(ctx, d.env.Client, reader, d.proxyBin, d.endpoint)
}

// psqlPod creates a pod in appNS that asks for instance, whose app container
// runs psql with args, and returns it as stored.
func (d *demo) psqlPod(ctx context.Context, name, instance string, args ...string) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name, Annotations: map[string]string{v1alpha1.AnnotationInstanceName: instance}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "postgres:18", Command: append([]string{"psql", "--no-psqlrc"}, args...),
		}}},
	}
	if err := d.env.Client.Create(ctx, pod); err != nil && !kerrors.IsAlreadyExists(err) {
		return nil, errors.Wrap(err, errPodNotAdmitted)
	}
	got := &corev1.Pod{}
	if err := d.env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		return nil, errors.Wrap(err, errReadPod)
	}
	return got, nil
}

// recoverableWindow reads the times the PostgresqlInstance instance can be
// recovered to, as status.atProvider.backups shows them once the provider has
// read them.
func (d *demo) recoverableWindow(ctx context.Context, instance string) (earliest, latest time.Time, err error) {
	pi := &v1alpha1.PostgresqlInstance{}
	if err := d.env.Client.Get(ctx, client.ObjectKey{Name: instance}, pi); err != nil {
		return earliest, latest, errors.Wrapf(err, errWindow, instance)
	}
	svc, err := sqladmin.NewService(ctx, option.WithEndpoint(d.endpoint), option.WithoutAuthentication())
	if err != nil {
		return earliest, latest, errors.Wrapf(err, errWindow, instance)
	}
	// The Cloud SQL instance's name, which the example sets apart from
	// the object's.
	rt, err := svc.Projects.Instances.GetLatestRecoveryTime(project, meta.GetExternalName(pi)).Context(ctx).Do()
	if err != nil {
		return earliest, latest, errors.Wrapf(err, errWindow, instance)
	}
	if earliest, err = time.Parse(time.RFC3339Nano, rt.EarliestRecoveryTime); err != nil {
		return earliest, latest, errors.Wrapf(err, errWindow, instance)
	}
	latest, err = time.Parse(time.RFC3339Nano, rt.LatestRecoveryTime)
	return earliest, latest, errors.Wrapf(err, errWindow, instance)
}

// samePassword says whether the connection secrets of the cluster-scoped
// instances a and the one named b hold the same password, without showing it.
func (d *demo) samePassword(ctx context.Context, a *unstructured.Unstructured, b string) (bool, error) {
	read := func(name string) (string, error) {
		pi := &v1alpha1.PostgresqlInstance{}
		if err := d.env.Client.Get(ctx, client.ObjectKey{Name: name}, pi); err != nil {
			return "", err
		}
		ref := pi.Spec.WriteConnectionSecretToReference
		s := &corev1.Secret{}
		if err := d.env.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
			return "", errors.Wrapf(err, errSecret, ref.Namespace+"/"+ref.Name)
		}
		return string(s.Data[cloudsql.ConnectionKeyPassword]), nil
	}
	pa, err := read(a.GetName())
	if err != nil {
		return false, err
	}
	pb, err := read(b)
	return pa == pb, err
}

func (d *demo) printHowToLookAround() error {
	kubectl, _, err := d.env.KubectlArgs()
	if err != nil {
		return err
	}
	fmt.Printf("\nEverything is up. Look around with:\n")
	fmt.Printf("  export KUBECONFIG=%s\n", d.prov.Kubeconfig)
	fmt.Printf("  %s get postgresqlinstances.cloudsql.travelaudience.com -o wide\n", kubectl)
	fmt.Printf("  %s get postgresqlinstances.cloudsql.m.travelaudience.com -A -o wide\n", kubectl)
	fmt.Printf("  %s -n %s get postgresqlusers,postgresqldatabases -o wide\n", kubectl, teamNS)
	fmt.Printf("  %s -n %s get pod psql -o jsonpath='{.metadata.annotations}'\n", kubectl, teamNS)
	fmt.Printf("  %s -n %s get secret example-minimal-postgres -o jsonpath='{.data}'\n", kubectl, namespace)
	fmt.Printf("  %s -n %s get pod psql -o yaml\n", kubectl, appNS)
	fmt.Printf("  %s delete postgresqlinstances.cloudsql.travelaudience.com example-minimal   # denied: it lacks %s\n", kubectl, v1alpha1.AnnotationAllowDeletion)
	fmt.Printf("  curl -s %semulator/v1/counts\n", d.endpoint)
	fmt.Printf("\nBackup health and maintenance (status.atProvider.backups, the BackupsHealthy condition, scheduledMaintenance;\n" +
		"the demo reads the health every minute, [reconcile] backup_health_interval; the default is an hour):\n")
	fmt.Printf("  curl -s -XPOST %semulator/v1/projects/%s/instances/example-minimal:failNextBackup -d '{\"message\":\"the disk is full\"}'\n", d.endpoint, project)
	fmt.Printf("  curl -s -XPOST %semulator/v1/projects/%s/instances/example-minimal:runBackupWindow\n", d.endpoint, project)
	fmt.Printf("  curl -s -XPOST %semulator/v1/projects/%s/instances/example-minimal:scheduleMaintenance -d '{\"startTime\":\"2030-03-20T02:00:00Z\",\"canDefer\":true}'\n", d.endpoint, project)
	fmt.Printf("  %s get postgresqlinstances.cloudsql.travelaudience.com example-minimal -o jsonpath='{.status.atProvider.backups}{\"\\n\"}{.status.atProvider.scheduledMaintenance}{\"\\n\"}'\n", kubectl)
	fmt.Printf("\nThe clone at a point in time (examples/recovery.yaml), and what it was recovered from:\n")
	fmt.Printf("  %s get postgresqlinstances.cloudsql.travelaudience.com %s -o jsonpath='{.spec.forProvider.source}{\"\\n\"}{.status.atProvider.recovery}{\"\\n\"}'\n", kubectl, d.clone)
	fmt.Printf("\nConnect by hand, as the pod does (the proxy on port 15432, psql with the secret's password):\n")
	fmt.Printf("  %s --sqladmin-api-endpoint %s --token unused --port 15432 %s:europe-west1:example-minimal &\n", d.proxyBin, d.endpoint, project)
	fmt.Printf("  PGPASSWORD=$(%s -n %s get secret example-minimal-postgres -o jsonpath='{.data.password}' | base64 -d) psql -h 127.0.0.1 -p 15432 -U postgres -c 'select current_user'\n", kubectl, namespace)
	return nil
}

func step(s string) { fmt.Printf("==> %s\n", s) }

// watchReady prints the instances' state whenever it changes, until all are Ready.
func watchReady(ctx context.Context, c client.Client, instances []*unstructured.Unstructured, timeout time.Duration, log string) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		var lines []string
		ready := 0
		for _, o := range instances {
			st, err := statusOf(ctx, c, o)
			if err != nil {
				return err
			}
			r, s := st.GetCondition(xpv2.TypeReady), st.GetCondition(xpv2.TypeSynced)
			if r.Status == corev1.ConditionTrue {
				ready++
			}
			line := fmt.Sprintf("  %-22s READY=%-7s SYNCED=%-7s STATE=%-15s %s", refOf(o), r.Status, s.Status, st.AtProvider.State, st.AtProvider.ConnectionName)
			if s.Status == corev1.ConditionFalse {
				line += "\n    " + s.Message
			}
			lines = append(lines, line)
		}
		if now := strings.Join(lines, "\n"); now != last {
			fmt.Println(now)
			last = now
		}
		if ready == len(instances) {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Errorf(errNotReady, log)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// status is what watchReady shows of a PostgresqlInstance of either kind: both
// kinds share their conditions and atProvider.
type status struct {
	xpv2.ConditionedStatus `json:",inline"`
	AtProvider             v1alpha1.PostgresqlInstanceObservation `json:"atProvider"`
}

// statusOf reads the status of the object o names.
func statusOf(ctx context.Context, c client.Client, o *unstructured.Unstructured) (*status, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(o), u); err != nil {
		return nil, err
	}
	st := &status{}
	raw, _, err := unstructured.NestedMap(u.Object, "status")
	if err != nil {
		return nil, err
	}
	return st, runtime.DefaultUnstructuredConverter.FromUnstructured(raw, st)
}

// refOf names an object: namespace/name when it is namespaced.
func refOf(o client.Object) string {
	if o.GetNamespace() != "" {
		return o.GetNamespace() + "/" + o.GetName()
	}
	return o.GetName()
}

// connect runs the stored pod's proxy until its startup probe passes, its
// password-file writer, then its app container's psql, and prints psql's answer.
func connect(ctx context.Context, c client.Client, pod *corev1.Pod, proxyBin, endpoint string) error {
	return withPod(ctx, c, pod, proxyBin, endpoint, func(psql func(...string) (string, error)) error {
		out, err := psql()
		fmt.Println("  psql in container app, with the injected PGHOST, PGPORT, PGUSER and PGPASSFILE:")
		printIndented(out)
		return err
	})
}

// withPod runs the stored pod's proxy until its startup probe passes and its
// password-file writer, then body, whose psql runs the app container with
// extra arguments; the proxy stops when body returns.
func withPod(ctx context.Context, c client.Client, pod *corev1.Pod, proxyBin, endpoint string, body func(psql func(...string) (string, error)) error) error {
	if pod == nil {
		return errors.New(errReadPod)
	}
	lp, err := localpod.Load(ctx, c, pod, localpod.WithImage(configfile.ProxyImageRepository, proxyBin))
	if err != nil {
		return err
	}
	defer lp.Close()
	var proxyOut strings.Builder
	proxy, err := lp.StartProxy(ctx, endpoint, &proxyOut)
	if err != nil {
		return errors.Errorf(errProxyStart, err, proxyOut.String())
	}
	defer func() { _ = proxy.Stop() }()
	fmt.Printf("  cloud-sql-proxy %s\n  (the pod's arguments, the emulator's endpoint among them from the ProviderConfig, then a token: no Google account here)\n", strings.Join(proxy.Args, " "))
	if err := lp.WritePasswordFiles(ctx); err != nil {
		return err
	}
	return body(func(args ...string) (string, error) {
		out, err := lp.Run(ctx, "app", args...)
		if err != nil {
			return out, errors.Errorf(errPsql, err, proxyOut.String())
		}
		return out, nil
	})
}

func printIndented(out string) {
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		fmt.Println("    " + line)
	}
}

// describePod prints what the injector added to the pod and returns it as stored.
func describePod(ctx context.Context, c client.Client, pod *corev1.Pod) *corev1.Pod {
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		fmt.Println("  cannot read the pod back:", err)
		return nil
	}
	for _, a := range []string{v1alpha1.AnnotationProxyInjected, v1alpha1.AnnotationInjectedInstance} {
		fmt.Printf("  annotation %s=%q\n", a, got.Annotations[a])
	}
	inits := len(got.Spec.InitContainers)
	for i, ct := range append(append([]corev1.Container{}, got.Spec.InitContainers...), got.Spec.Containers...) {
		kind := "container"
		switch {
		case ct.RestartPolicy != nil && *ct.RestartPolicy == corev1.ContainerRestartPolicyAlways:
			kind = "native sidecar"
		case i < inits:
			kind = "init container"
		}
		fmt.Printf("  %s %s: %s %s\n", kind, ct.Name, ct.Image, strings.Join(ct.Args, " "))
		for _, e := range ct.Env {
			if strings.HasPrefix(e.Name, "PG") {
				fmt.Printf("      %s=%s\n", e.Name, e.Value)
			}
		}
	}
	return got
}
