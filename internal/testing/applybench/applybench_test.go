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

package applybench

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/logtail"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/providerproc"
)

const (
	project   = "apply-bench-123456"
	secretNS  = "crossplane-system"
	instances = 100
	// newTier is what the change phase sets; the instances start at the
	// default, db-custom-1-3840.
	newTier = "db-custom-2-7680"
	// opTime is how long the emulator takes to create, update or delete an
	// instance.
	opTime = 10 * time.Second
	// quotaWindow is the window of Cloud SQL's per-minute quota.
	quotaWindow = time.Minute
	// applyTarget is what the apply phase should take: it needs no write,
	// and the name checks should cost one shared listing at most.
	applyTarget = 10 * time.Second
	// phaseDeadline is how long a phase may take before the benchmark fails.
	phaseDeadline = 15 * time.Minute
	// uncheckedMarker is in every warning of the instance webhook that
	// admits a name it did not check against Cloud SQL (warnUnchecked,
	// warnDryRun and warnNoPC of internal/webhook/instance).
	uncheckedMarker = "was not checked"
	// betweenPhases names the requests that fall in no phase.
	betweenPhases = "between phases"
)

// settings is the provider's configuration file: its defaults (poll 5m,
// busy poll 15s, 180 requests a minute, observe = "list").
const settings = `# The provider's defaults: what users run.
`

// BenchmarkApplyPhases applies 100 PostgresqlInstances one at a time through
// the provider's webhooks, as kubectl apply -f dir/, Argo CD and Flux do, then
// changes their tier and deletes them, one at a time again, against the
// emulator's 180 requests a minute and 10 s operations, with the provider
// binary at its defaults. It prints, per phase, the time taken beside the
// physical limit (PhysicalLimit; a 10 s target for apply, which needs no
// write), the Cloud SQL requests per instance and by method, the 429s, and
// for apply the creates admitted without the name check.
//
// apply runs from the first create to the return of the last; its requests
// are the webhook's (budget.AdmissionReason), whenever they came. create runs
// from the first create until all are Ready and Synced; change from the first
// update until Cloud SQL has the new tier for all and all are Ready and Synced
// again; delete from the first delete until all are gone. Their requests are
// the controllers' within their span; the rest are reported between phases.
func BenchmarkApplyPhases(b *testing.B) {
	controlplane.Need(b)
	var rows []row
	for range b.N {
		rows = runPhases(b)
	}
	for _, r := range rows {
		if r.name == betweenPhases || r.name == "total" {
			continue
		}
		b.ReportMetric(r.took.Seconds(), r.name+"-s")
		b.ReportMetric(r.limit.Seconds(), r.name+"-limit-s")
		b.ReportMetric(float64(r.total())/instances, r.name+"-req/instance")
		b.ReportMetric(float64(r.throttled), r.name+"-429s")
		if r.name == "apply" {
			b.ReportMetric(float64(r.unchecked), r.name+"-unchecked")
		}
	}
	b.ReportMetric(0, "ns/op") // the time per op is the phases' times above
}

// world is what one run started.
type world struct {
	b     *testing.B
	ctx   context.Context
	env   *controlplane.Env
	emu   *emulator.Server
	dir   string
	prov  *providerproc.Process
	names []string
	// c creates, updates and deletes the objects, as a user's client, and
	// records the admission warnings.
	c        client.Client
	warnings *warningRecorder
	// unchecked are the creates admitted with a warning that the name was
	// not checked, and sample the first one's warning.
	unchecked int
	sample    string
}

// A phase is a span of the run and when each object's call of it returned.
type phase struct {
	name       string
	start, end time.Time
	releases   []time.Time
}

// A row is what the table prints of a phase.
type row struct {
	name     string
	took     time.Duration
	limit    time.Duration
	hasLimit bool
	requests map[string]int
	// failed counts the requests answered with an error status, by method
	// and status.
	failed    map[string]map[int]int
	throttled int
	unchecked int
	// writes are the phase's successful writes (inserts, patches,
	// deletes), sent between firstWrite and lastWrite after its start.
	writes                int
	firstWrite, lastWrite time.Duration
	// listings are when the phase's instances.list requests came, after its
	// start.
	listings []time.Duration
	// writesBy5s counts the writes in each 5 s after the phase's start.
	writesBy5s map[int]int
}

func (r row) total() int {
	n := 0
	for _, c := range r.requests {
		n += c
	}
	return n
}

func runPhases(b *testing.B) []row {
	w := start(b)
	defer w.stop()

	apply, create := w.applyAndCreate()
	change := w.change()
	del := w.delete()
	return w.report(apply, create, change, del)
}

// start starts the control plane with the CRDs and webhook configurations, the
// emulator, and the provider binary with both webhooks at its defaults, and
// creates the ProviderConfig.
func start(b *testing.B) *world {
	ctx := context.Background()
	w := &world{b: b, ctx: ctx, dir: b.TempDir()}
	ok := false
	defer func() {
		if !ok {
			w.stop()
		}
	}()

	var err error
	w.env, err = controlplane.Start(controlplane.WithWebhooks(envtest.WebhookInstallOptions{
		Paths: []string{filepath.Join(controlplane.RepoRoot(), "package", "webhookconfigurations")},
	}))
	if err != nil {
		b.Fatal(err)
	}

	emuLog, err := os.Create(filepath.Join(w.dir, "emulator.log"))
	if err != nil {
		b.Fatal(err)
	}
	w.emu = emulator.New(emulator.WithRequestBudget(emulator.DefaultRequestBudget),
		emulator.WithDelays(opTime, opTime, opTime), emulator.WithRequestLog(emuLog))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: w.emu, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	b.Cleanup(func() { _ = srv.Close(); _ = emuLog.Close() })
	endpoint := "http://" + lis.Addr().String() + "/"

	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ProviderConfigSpec{
			Project:     v1alpha1.Project{ProjectID: project, Endpoint: endpoint},
			Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone},
		}},
	} {
		if err := w.env.Client.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}

	bin, err := providerproc.Build(w.dir)
	if err != nil {
		b.Fatal(err)
	}
	w.prov, err = providerproc.Start(bin, w.dir, w.env, settings)
	if err != nil {
		b.Fatal(err)
	}

	// A user's client: the API server's warnings go to the recorder.
	cfg := rest.CopyConfig(w.env.Config)
	w.warnings = &warningRecorder{}
	cfg.WarningHandler = w.warnings
	w.c, err = client.New(cfg, client.Options{Scheme: w.env.Scheme})
	if err != nil {
		b.Fatal(err)
	}

	// The provider's startup is not the apply's: a dry-run create, which the
	// webhook answers without calling Cloud SQL, waits until it serves.
	probe := w.instance("apply-probe")
	if err := providerproc.CreateWhenAdmitted(ctx, client.NewDryRunClient(w.env.Client), probe); err != nil {
		b.Fatal(err)
	}

	if err := w.awaitControllers(); err != nil {
		b.Fatal(err)
	}

	w.names = make([]string, instances)
	for i := range w.names {
		w.names[i] = fmt.Sprintf("apply-%03d", i)
	}
	ok = true
	return w
}

// stop stops what start started; when the benchmark failed it logs the tails of
// the emulator's and the provider's logs first.
func (w *world) stop() {
	if w.b.Failed() {
		w.b.Logf("emulator log (tail):\n%s", logtail.Tail(filepath.Join(w.dir, "emulator.log"), 40))
		if w.prov != nil {
			w.b.Logf("provider log (tail):\n%s", logtail.Tail(w.prov.Log, 80))
		}
	}
	if w.prov != nil {
		w.prov.Stop()
		w.prov = nil
	}
	if w.env != nil {
		_ = w.env.Stop()
		w.env = nil
	}
}

// awaitControllers waits until the provider's controllers run: they start
// once their caches are synced, a second or two after the webhooks serve, and
// that start is not the apply's. A paused PostgresqlInstance that only
// observes costs no Cloud SQL request, neither to admit (no name to check)
// nor to reconcile, and gets no finalizer: the controller only marks it
// paused.
func (w *world) awaitControllers() error {
	probe := w.instance("controllers-probe")
	probe.Annotations[meta.AnnotationKeyReconciliationPaused] = "true"
	probe.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	if err := w.env.Client.Create(w.ctx, probe); err != nil {
		return fmt.Errorf("creating the controllers' probe: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		err := w.env.Client.Get(w.ctx, client.ObjectKeyFromObject(probe), probe)
		if err != nil {
			return fmt.Errorf("reading the controllers' probe: %w", err)
		}
		if probe.GetCondition(xpv2.TypeSynced).Reason == xpv2.ReasonReconcilePaused {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the provider did not reconcile %s within a minute of serving its webhooks", probe.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return client.IgnoreNotFound(w.env.Client.Delete(w.ctx, probe))
}

// instance is a minimal PostgresqlInstance, as examples/ has it, that may be
// deleted from the start.
func (w *world) instance(name string) *v1alpha1.PostgresqlInstance {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: "default"}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: name + "-conn"}
	pi.Spec.ForProvider.Networking.PublicIP = v1alpha1.PublicIP{Enabled: true}
	return pi
}

// applyAndCreate creates the objects one after another, and waits until all
// are Ready and Synced.
func (w *world) applyAndCreate() (apply, create phase) {
	apply = phase{name: "apply", start: time.Now()}
	for i, n := range w.names {
		mark := w.warnings.mark()
		var err error
		if i == 0 {
			err = providerproc.CreateWhenAdmitted(w.ctx, w.c, w.instance(n))
		} else {
			err = w.c.Create(w.ctx, w.instance(n))
		}
		apply.releases = append(apply.releases, time.Now())
		if err != nil {
			w.b.Fatalf("apply: creating %s: %v", n, err)
		}
		for _, msg := range w.warnings.since(mark) {
			if strings.Contains(msg, uncheckedMarker) {
				w.unchecked++
				if w.sample == "" {
					w.sample = msg
				}
				break
			}
		}
	}
	apply.end = apply.releases[len(apply.releases)-1]

	create = phase{name: "create", start: apply.start, releases: apply.releases}
	create.end = w.await(create, func(_ string, pi *v1alpha1.PostgresqlInstance) bool { return readySynced(pi) })
	return apply, create
}

// change sets every object's tier, one after another, and waits until Cloud
// SQL has it for all and all are Ready and Synced.
func (w *world) change() phase {
	p := phase{name: "change", start: time.Now()}
	for _, n := range w.names {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pi := &v1alpha1.PostgresqlInstance{}
			if err := w.c.Get(w.ctx, client.ObjectKey{Name: n}, pi); err != nil {
				return err
			}
			pi.Spec.ForProvider.Resources.InstanceType = newTier
			return w.c.Update(w.ctx, pi)
		})
		p.releases = append(p.releases, time.Now())
		if err != nil {
			w.b.Fatalf("change: updating %s: %v", n, err)
		}
	}
	p.end = w.await(p, func(n string, pi *v1alpha1.PostgresqlInstance) bool {
		db, err := w.emu.Instance(project, n)
		return err == nil && db.Settings != nil && db.Settings.Tier == newTier && readySynced(pi)
	})
	return p
}

// delete deletes the objects one after another, and waits until all are gone.
func (w *world) delete() phase {
	p := phase{name: "delete", start: time.Now()}
	for _, n := range w.names {
		err := w.c.Delete(w.ctx, &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: n}})
		p.releases = append(p.releases, time.Now())
		if err != nil {
			w.b.Fatalf("delete: deleting %s: %v", n, err)
		}
	}
	p.end = w.await(p, func(_ string, pi *v1alpha1.PostgresqlInstance) bool { return pi == nil })
	return p
}

// readySynced is whether the object exists and is Ready and Synced for its
// current generation.
func readySynced(pi *v1alpha1.PostgresqlInstance) bool {
	if pi == nil {
		return false
	}
	for _, t := range []xpv2.ConditionType{xpv2.TypeReady, xpv2.TypeSynced} {
		c := pi.GetCondition(t)
		if c.Status != corev1.ConditionTrue || (c.ObservedGeneration != 0 && c.ObservedGeneration != pi.Generation) {
			return false
		}
	}
	return true
}

// await lists the objects until done holds for each (pi is nil when the object
// is gone) and returns when it first did; past the phase's deadline it fails
// the benchmark, naming the first object not done and its conditions.
func (w *world) await(p phase, done func(name string, pi *v1alpha1.PostgresqlInstance) bool) time.Time {
	deadline := p.start.Add(phaseDeadline)
	for {
		list := &v1alpha1.PostgresqlInstanceList{}
		if err := w.env.Client.List(w.ctx, list); err != nil {
			w.b.Fatalf("%s: listing the PostgresqlInstances: %v", p.name, err)
		}
		now := time.Now()
		byName := make(map[string]*v1alpha1.PostgresqlInstance, len(list.Items))
		for i := range list.Items {
			byName[list.Items[i].Name] = &list.Items[i]
		}
		late := ""
		for _, n := range w.names {
			if !done(n, byName[n]) {
				late = n
				break
			}
		}
		if late == "" {
			return now
		}
		if now.After(deadline) {
			w.b.Fatalf("%s: %s is not done %s after the phase started: %s", p.name, late, phaseDeadline, describe(byName[late]))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// describe is an object's conditions, for a failure.
func describe(pi *v1alpha1.PostgresqlInstance) string {
	if pi == nil {
		return "it does not exist"
	}
	var s []string
	for _, c := range pi.Status.Conditions {
		s = append(s, fmt.Sprintf("%s=%s (%s, generation %d of %d) %s", c.Type, c.Status, c.Reason, c.ObservedGeneration, pi.Generation, c.Message))
	}
	if pi.DeletionTimestamp != nil {
		s = append(s, "deleting since "+pi.DeletionTimestamp.String())
	}
	if len(s) == 0 {
		return "no conditions"
	}
	return strings.Join(s, "; ")
}

// report attributes the emulator's requests to the phases, computes the
// physical limits, and prints the table.
func (w *world) report(apply, create, change, del phase) []row {
	var reqs []emulator.Request
	for _, r := range w.emu.Requests() {
		if r.Project == project && r.Method != "" {
			reqs = append(reqs, r)
		}
	}
	// The log keeps the last few thousand requests: a run that sent more
	// would be missing its first.
	logged, counted := len(w.emu.Requests()), 0
	for _, c := range w.emu.Counts() {
		counted += c
	}
	if logged < counted {
		w.b.Fatalf("the emulator's request log kept %d of %d requests: the counts would be short", logged, counted)
	}

	// prior are the times of the requests that the quota counted before t.
	prior := func(t time.Time) []time.Time {
		var ts []time.Time
		for _, r := range reqs {
			if r.Status != http.StatusTooManyRequests && r.Time.Before(t) && r.Time.After(t.Add(-quotaWindow)) {
				ts = append(ts, r.Time)
			}
		}
		return ts
	}
	limit := func(p phase) time.Duration {
		return PhysicalLimit(p.start, prior(p.start), p.releases, emulator.DefaultRequestBudget, quotaWindow, opTime)
	}

	rows := []row{
		{name: apply.name, took: apply.end.Sub(apply.start), limit: applyTarget, unchecked: w.unchecked},
		{name: create.name, took: create.end.Sub(create.start), limit: limit(create), hasLimit: true},
		{name: change.name, took: change.end.Sub(change.start), limit: limit(change), hasLimit: true},
		{name: del.name, took: del.end.Sub(del.start), limit: limit(del), hasLimit: true},
		{name: betweenPhases},
		{name: "total", took: del.end.Sub(apply.start)},
	}
	for i := range rows {
		rows[i].requests = map[string]int{}
		rows[i].failed = map[string]map[int]int{}
	}
	spans := []phase{create, change, del}
	for _, r := range reqs {
		i := 4 // between phases
		if r.Reason == budget.AdmissionReason {
			i = 0
		} else {
			for j, p := range spans {
				if !r.Time.Before(p.start) && !r.Time.After(p.end) {
					i = j + 1
					break
				}
			}
		}
		if i >= 1 && i <= 3 && r.Method == emulator.MethodInstancesList {
			rows[i].listings = append(rows[i].listings, r.Time.Sub(spans[i-1].start))
		}
		if i >= 1 && i <= 3 && isWrite(r.Method) && r.Status < 300 {
			at := r.Time.Sub(spans[i-1].start)
			if rows[i].writes == 0 || at < rows[i].firstWrite {
				rows[i].firstWrite = at
			}
			rows[i].lastWrite = max(rows[i].lastWrite, at)
			rows[i].writes++
			if rows[i].writesBy5s == nil {
				rows[i].writesBy5s = map[int]int{}
			}
			rows[i].writesBy5s[int(at/(5*time.Second))]++
		}
		for _, k := range []int{i, 5} {
			rows[k].requests[r.Method]++
			if r.Status >= 300 {
				if rows[k].failed[r.Method] == nil {
					rows[k].failed[r.Method] = map[int]int{}
				}
				rows[k].failed[r.Method][r.Status]++
			}
			if r.Status == http.StatusTooManyRequests {
				rows[k].throttled++
			}
		}
	}
	rows[5].unchecked = rows[0].unchecked

	var out strings.Builder
	fmt.Fprintf(&out, "\n%d PostgresqlInstances applied one at a time through the webhooks; provider at its defaults; emulator: %d requests a minute, operations %s\n\n",
		instances, emulator.DefaultRequestBudget, opTime)
	out.WriteString("| phase | time | physical limit | time / limit | writes sent | requests / instance | requests by method (error statuses) | 429s | unchecked admissions |\n")
	out.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		took, lim, ratio, unchecked := "–", "–", "–", "–"
		if r.took > 0 {
			took = seconds(r.took)
		}
		switch {
		case r.hasLimit:
			lim, ratio = seconds(r.limit), fmt.Sprintf("%.2f", r.took.Seconds()/r.limit.Seconds())
		case r.name == apply.name:
			lim, ratio = seconds(applyTarget)+" (target)", fmt.Sprintf("%.2f", r.took.Seconds()/applyTarget.Seconds())
		}
		if r.name == apply.name || r.name == "total" {
			unchecked = fmt.Sprintf("%d of %d", r.unchecked, instances)
		}
		writes := "–"
		if r.writes > 0 {
			writes = fmt.Sprintf("%d, +%.1f to +%.1f s", r.writes, r.firstWrite.Seconds(), r.lastWrite.Seconds())
		}
		fmt.Fprintf(&out, "| %s | %s | %s | %s | %s | %.2f | %s | %d | %s |\n",
			r.name, took, lim, ratio, writes, float64(r.total())/instances, byMethod(r.requests, r.failed), r.throttled, unchecked)
	}
	for _, r := range rows {
		if len(r.writesBy5s) > 0 {
			var at []string
			for k := range int(r.lastWrite/(5*time.Second)) + 1 {
				if n := r.writesBy5s[k]; n > 0 {
					at = append(at, fmt.Sprintf("%d at +%d s", n, 5*k))
				}
			}
			fmt.Fprintf(&out, "\n%s: writes by 5 s: %s", r.name, strings.Join(at, ", "))
		}
		if len(r.listings) == 0 {
			continue
		}
		at := make([]string, len(r.listings))
		for i, d := range r.listings {
			at[i] = fmt.Sprintf("+%.1f", d.Seconds())
		}
		fmt.Fprintf(&out, "\n%s: instances.list at %s s", r.name, strings.Join(at, ", "))
	}
	out.WriteString("\n")
	if w.sample != "" {
		fmt.Fprintf(&out, "\nAn unchecked admission's warning: %s\n", w.sample)
	}
	fmt.Print(out.String())
	return rows
}

// isWrite says whether an API method is one of the writes a phase needs.
func isWrite(method string) bool {
	switch method {
	case emulator.MethodInstancesInsert, emulator.MethodInstancesPatch, emulator.MethodInstancesDelete:
		return true
	}
	return false
}

// seconds formats d as seconds with one decimal.
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// byMethod is the counts, largest first, each with those answered with an
// error status: "instances.patch 108 (412: 8), instances.list 3".
func byMethod(counts map[string]int, failed map[string]map[int]int) string {
	methods := slices.Collect(maps.Keys(counts))
	slices.SortFunc(methods, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(methods))
	for i, m := range methods {
		parts[i] = fmt.Sprintf("%s %d", m, counts[m])
		var errs []string
		for _, code := range slices.Sorted(maps.Keys(failed[m])) {
			errs = append(errs, fmt.Sprintf("%d: %d", code, failed[m][code]))
		}
		if len(errs) > 0 {
			parts[i] += " (" + strings.Join(errs, ", ") + ")"
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// warningRecorder is the user's client's rest.WarningHandler: it keeps every
// warning the API server sent, in order.
type warningRecorder struct {
	mu       sync.Mutex
	messages []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (r *warningRecorder) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages = append(r.messages, text)
}

// mark is how many warnings have been recorded.
func (r *warningRecorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.messages)
}

// since are the warnings recorded after mark.
func (r *warningRecorder) since(mark int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.messages[mark:])
}

var _ rest.WarningHandler = (*warningRecorder)(nil)
