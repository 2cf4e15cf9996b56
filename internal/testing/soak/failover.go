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

package soak

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/providerproc"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

const (
	errNoBackend  = "cannot listen where the API server calls the webhooks"
	errNoFreePort = "cannot find a free port for a replica's webhooks"
)

const (
	// leaderLease is the provider's leader-election Lease.
	leaderLease = "crossplane-leader-election-provider-cloudsql-postgres"
	// leadingLine is what client-go's leader election logs once a replica
	// leads.
	leadingLine = `"Successfully acquired lease"`
	appNS       = "app"
	podsOf      = "ha-pods"
)

// The bounds a failover must keep.
const (
	// MaxTakeoverKilled bounds how long a killed leader's replica may take
	// to be replaced.
	MaxTakeoverKilled = 15 * time.Second
	// MaxTakeoverStopped bounds a graceful stop's handover: the leader
	// releases the Lease as it stops (about a second, its controllers
	// ending first), and the standby, which looks every retry period
	// jittered up to 2.2 times that (client-go), takes it within 2.2 s
	// more.
	MaxTakeoverStopped = 4 * time.Second
)

// FailoverOptions size a failover run.
type FailoverOptions struct {
	// Instances is how many PostgresqlInstances are created (half changed),
	// besides the one the pods ask for.
	Instances int
	// Quota is the emulator's requests per minute, and the provider's budget.
	Quota int
	// Kills is how many times the leader is SIGKILLed; it is then stopped
	// once with SIGTERM.
	Kills int
	// Every is the time between two disruptions.
	Every time.Duration
	// Timeout bounds each phase.
	Timeout time.Duration
	// Log receives the progress.
	Log io.Writer
}

// A Takeover is one change of leader.
type Takeover struct {
	// Signal is what the leader got: SIGKILL or SIGTERM.
	Signal string
	// After is from the signal to the new leader's acquisition of the Lease;
	// 0 when no replica took over within a minute.
	After time.Duration
}

// FailoverReport is what a failover run found.
type FailoverReport struct {
	Takeovers       []Takeover
	Requests        int
	MaxPerMinute    int
	Quota           int
	RateLimited     int
	DuplicateCreate int
	BadPasswords    int
	// Admissions are the dry-run creates of annotated pods, AdmissionsFailed
	// those refused or not injected; at most one per disruption (the one in
	// flight on the replica that went) may fail.
	Admissions       int
	AdmissionsFailed int
	AdmissionErrors  []string
}

// Failed says what in the report is wrong, or nothing.
func (r FailoverReport) Failed() []string {
	var f []string
	for i, t := range r.Takeovers {
		bound := MaxTakeoverKilled
		if t.Signal == "SIGTERM" {
			bound = MaxTakeoverStopped
		}
		switch {
		case t.After == 0:
			f = append(f, fmt.Sprintf("disruption %d (%s): no replica took over", i+1, t.Signal))
		case t.After > bound:
			f = append(f, fmt.Sprintf("disruption %d (%s): taken over after %s, more than %s", i+1, t.Signal, t.After.Round(100*time.Millisecond), bound))
		}
	}
	if r.MaxPerMinute > r.Quota {
		f = append(f, fmt.Sprintf("%d requests in one 60-second window, over the quota of %d", r.MaxPerMinute, r.Quota))
	}
	if r.RateLimited > 0 {
		f = append(f, fmt.Sprintf("%d answers of 429", r.RateLimited))
	}
	if r.DuplicateCreate > 0 {
		f = append(f, fmt.Sprintf("%d instances created twice", r.DuplicateCreate))
	}
	if r.BadPasswords > 0 {
		f = append(f, fmt.Sprintf("%d connection secrets whose password Cloud SQL does not accept", r.BadPasswords))
	}
	if r.AdmissionsFailed > len(r.Takeovers) {
		f = append(f, fmt.Sprintf("%d of %d pod admissions failed, more than one per disruption: %s", r.AdmissionsFailed, r.Admissions, strings.Join(r.AdmissionErrors, "; ")))
	}
	return f
}

// Print writes the report's figures.
func (r FailoverReport) Print(w io.Writer) {
	fmt.Fprintf(w, "failover: %d Cloud SQL requests\n", r.Requests)
	for i, t := range r.Takeovers {
		fmt.Fprintf(w, "  %-40s %s\n", fmt.Sprintf("takeover %d after %s", i+1, t.Signal), t.After.Round(100*time.Millisecond))
	}
	fmt.Fprintf(w, "  %-40s %d (quota %d)\n", "most requests in any 60 seconds", r.MaxPerMinute, r.Quota)
	fmt.Fprintf(w, "  %-40s %d\n", "answers of 429", r.RateLimited)
	fmt.Fprintf(w, "  %-40s %d\n", "instances created twice", r.DuplicateCreate)
	fmt.Fprintf(w, "  %-40s %d\n", "passwords Cloud SQL does not accept", r.BadPasswords)
	fmt.Fprintf(w, "  %-40s %d of %d\n", "pod admissions failed", r.AdmissionsFailed, r.Admissions)
}

// CheckFailover returns ErrFailed, naming the failures, when the report holds
// any.
func CheckFailover(r FailoverReport) error {
	if f := r.Failed(); len(f) > 0 {
		return errors.Errorf(errFailures, ErrFailed, strings.Join(f, "; "))
	}
	return nil
}

// RunFailover runs two replicas of the provider binary with leader election
// against one control plane and the emulator (its quota enforced), both
// serving the webhooks behind one address as a Service would; it keeps the
// budget busy creating, changing and deleting instances while it SIGKILLs the
// leader Kills times and then SIGTERMs it once, and creates annotated pods
// (dry runs) throughout.
func RunFailover(ctx context.Context, o FailoverOptions) (FailoverReport, error) {
	w := &world{o: Options{Instances: o.Instances, Quota: o.Quota, Timeout: o.Timeout, Log: o.Log}, quota: map[string]string{}}
	if w.o.Log == nil {
		w.o.Log = io.Discard
	}
	r := FailoverReport{Quota: o.Quota}
	var err error
	if w.dir, err = os.MkdirTemp("", "failover-"); err != nil {
		return r, err
	}
	defer os.RemoveAll(w.dir)
	w.logf("building cmd/provider")
	if w.bin, err = providerproc.Build(w.dir); err != nil {
		return r, err
	}
	if w.env, err = controlplane.Start(controlplane.WithWebhooks(envtest.WebhookInstallOptions{
		Paths: []string{filepath.Join(controlplane.RepoRoot(), "package", "webhookconfigurations")},
	})); err != nil {
		return r, err
	}
	defer func() { _ = w.env.Stop() }()
	w.c = w.env.Client

	// Cloud SQL at its quota, with operations slow enough that instances
	// stay busy (polled every second, more than the budget lets through)
	// through the disruptions.
	w.emu = emulator.New(emulator.WithRequestBudget(o.Quota), emulator.WithDelays(30*time.Second, 15*time.Second, 15*time.Second))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, err
	}
	srv := &http.Server{Handler: w.emu, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	defer func() { _ = srv.Close() }()
	if err := w.configure("http://"+lis.Addr().String()+"/", ""); err != nil {
		return r, err
	}
	if err := w.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}}); err != nil {
		return r, err
	}

	reps, err := newReplicas(w, fmt.Sprintf("[reconcile]\nobserve = \"get\"\npoll_interval = \"10s\"\nbusy_poll_interval = \"1s\"\nmax_reconcile_rate = 10\n\n[cloudsql]\nrequests_per_minute = %d\n", o.Quota))
	if err != nil {
		return r, err
	}
	defer reps.stopAll()
	w.logf("starting two replicas with --leader-election, their webhooks behind one address")
	if err := reps.start(0); err != nil {
		return r, err
	}
	if err := w.waitFor(ctx, "the first replica leading", func() (bool, error) { return reps.leader() == 0, nil }); err != nil {
		return r, err
	}
	if err := reps.start(1); err != nil {
		return r, err
	}

	w.logf("creating %s, which the pods ask for", podsOf)
	pods := newInstance(podsOf)
	pods.Spec.Injection = &v1alpha1.Injection{AllowedNamespaces: []string{appNS}}
	if err := providerproc.CreateWhenAdmitted(ctx, w.c, pods); err != nil {
		return r, err
	}
	if err := w.waitFor(ctx, podsOf+" Ready", func() (bool, error) { return w.allReady(ctx, []string{podsOf}) }); err != nil {
		return r, err
	}

	bctx, stop := context.WithCancel(ctx)
	var bg sync.WaitGroup
	var mu sync.Mutex
	bg.Add(2)
	go func() { defer bg.Done(); w.admitPods(bctx, &mu, &r) }()
	go func() { defer bg.Done(); reps.disrupt(bctx, o, &mu, &r) }()
	err = w.failoverPhases(ctx)
	// The disruptions end before the tally, so that every one is counted.
	for err == nil && bctx.Err() == nil {
		mu.Lock()
		done := len(r.Takeovers) > o.Kills
		mu.Unlock()
		if done {
			break
		}
		time.Sleep(time.Second)
	}
	stop()
	bg.Wait()
	if err != nil {
		return r, err
	}
	reps.stopAll()
	w.tallyFailover(ctx, &r)
	return r, nil
}

// failoverPhases creates, changes and deletes the instances.
func (w *world) failoverPhases(ctx context.Context) error {
	var names []string
	for i := range w.o.Instances {
		names = append(names, fmt.Sprintf("ha-%02d", i))
	}
	w.all = append([]string{podsOf}, names...)
	w.logf("creating %d instances", len(names))
	for _, n := range names {
		if err := providerproc.CreateWhenAdmitted(ctx, w.c, newInstance(n)); err != nil {
			return err
		}
	}
	if err := w.waitFor(ctx, "every instance Ready", func() (bool, error) { return w.allReady(ctx, names) }); err != nil {
		return err
	}
	if err := w.changeTiers(ctx, names[:len(names)/2], w.all); err != nil {
		return err
	}
	// The instance of the pods (podsOf) stays.
	return w.deleteAll(ctx, names, 1)
}

// admitPods creates an annotated pod (a dry run, through the pod injector of
// whichever replica the address reaches) every quarter second until ctx ends.
func (w *world) admitPods(ctx context.Context, mu *sync.Mutex, r *FailoverReport) {
	for ctx.Err() == nil {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: appNS, GenerateName: "app-",
				Annotations: map[string]string{v1alpha1.AnnotationInstanceName: podsOf}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "postgres:18"}}},
		}
		err := w.c.Create(ctx, pod, client.DryRunAll)
		if ctx.Err() != nil {
			return
		}
		mu.Lock()
		r.Admissions++
		switch {
		case err != nil:
			r.AdmissionsFailed++
			r.AdmissionErrors = append(r.AdmissionErrors, time.Now().Format("15:04:05.000")+" "+err.Error())
		case pod.Annotations[v1alpha1.AnnotationProxyInjected] != "true" || !hasContainer(pod, podinject.ProxyContainerName):
			r.AdmissionsFailed++
			r.AdmissionErrors = append(r.AdmissionErrors, "admitted without the proxy")
		}
		mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func hasContainer(pod *corev1.Pod, name string) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if c.Name == name {
				return true
			}
		}
	}
	return false
}

// tallyFailover counts, from the emulator's log, what the quota saw.
func (w *world) tallyFailover(ctx context.Context, r *FailoverReport) {
	var times []time.Time
	inserted := 0
	for _, q := range w.emu.Requests() {
		if q.Method == "" || q.Project != project {
			continue
		}
		times = append(times, q.Time)
		switch {
		case q.Status == http.StatusTooManyRequests:
			r.RateLimited++
		case q.Method == emulator.MethodInstancesInsert && q.Status == http.StatusOK:
			inserted++
		}
	}
	r.Requests = len(times)
	r.MaxPerMinute = busiestMinute(times)
	r.DuplicateCreate = max(0, inserted-len(w.all))
	if bad, err := w.badPasswords(ctx, w.emu, []string{podsOf}); err == nil {
		r.BadPasswords += bad
	}
}

// replicas are two provider processes, each serving its webhooks on a port of
// its own behind one address (a forwarder where the API server calls them).
type replicas struct {
	w        *world
	settings string
	ports    [2]int
	fwd      net.Listener
	next     atomic.Uint32

	mu    sync.Mutex
	procs [2]*providerproc.Process
}

func newReplicas(w *world, settings string) (*replicas, error) {
	r := &replicas{w: w, settings: settings}
	for i := range r.ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, errors.Wrap(err, errNoFreePort)
		}
		r.ports[i] = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	host, port, _ := w.env.WebhookServing()
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, errors.Wrap(err, errNoBackend)
	}
	r.fwd = l
	go r.forward()
	return r, nil
}

// forward passes each connection to a replica that accepts it, as a Service
// passes it to a ready endpoint, trying the next when one refuses.
func (r *replicas) forward() {
	for {
		c, err := r.fwd.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			first := int(r.next.Add(1))
			for i := range r.ports {
				b, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.ports[(first+i)%len(r.ports)])), time.Second)
				if err != nil {
					continue
				}
				defer b.Close()
				go func() { _, _ = io.Copy(b, c); _ = b.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(c, b)
				return
			}
		}()
	}
}

func (r *replicas) start(i int) error {
	p, err := providerproc.Start(r.w.bin, r.w.dir, r.w.env, r.settings,
		providerproc.WithWebhookPort(r.ports[i]), providerproc.WithArgs("--leader-election"))
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.procs[i] = p
	r.mu.Unlock()
	return nil
}

// leader is the replica that logged that it leads, or -1: a replica leads at
// most once in its life (it exits when it loses the Lease).
func (r *replicas) leader() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, p := range r.procs {
		if p == nil {
			continue
		}
		if b, err := os.ReadFile(p.Log); err == nil && strings.Contains(string(b), leadingLine) {
			return i
		}
	}
	return -1
}

func (r *replicas) take(i int) *providerproc.Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.procs[i]
	r.procs[i] = nil
	return p
}

func (r *replicas) stopAll() {
	for i := range r.procs {
		r.take(i).Stop()
	}
	_ = r.fwd.Close()
}

// holder is who holds the leader-election Lease, and since when.
func (r *replicas) holder(ctx context.Context) (string, time.Time) {
	l := &coordinationv1.Lease{}
	if err := r.w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: leaderLease}, l); err != nil || l.Spec.HolderIdentity == nil {
		return "", time.Time{}
	}
	var at time.Time
	if l.Spec.AcquireTime != nil {
		at = l.Spec.AcquireTime.Time
	}
	return *l.Spec.HolderIdentity, at
}

// disrupt, every o.Every, SIGKILLs the leader o.Kills times, then SIGTERMs
// it, records how long each takeover took, and restarts the replica that went
// (once another leads, so that the takeover is the standby's).
func (r *replicas) disrupt(ctx context.Context, o FailoverOptions, mu *sync.Mutex, rep *FailoverReport) {
	for n := 0; n <= o.Kills; n++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(o.Every):
		}
		i := -1
		for i < 0 && ctx.Err() == nil {
			if i = r.leader(); i < 0 {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if i < 0 {
			return
		}
		old, _ := r.holder(ctx)
		signal := "SIGKILL"
		if n == o.Kills {
			signal = "SIGTERM"
		}
		p := r.take(i)
		stopped := make(chan struct{})
		at := time.Now()
		if signal == "SIGKILL" {
			p.Kill()
			close(stopped)
		} else {
			go func() { p.Stop(); close(stopped) }()
		}
		t := Takeover{Signal: signal}
		var released time.Duration
		for deadline := at.Add(time.Minute); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
			h, acquired := r.holder(ctx)
			if h == "" && released == 0 {
				released = time.Since(at)
			}
			if h != "" && h != old {
				t.After = acquired.Sub(at)
				break
			}
		}
		how := ""
		if released > 0 {
			how = fmt.Sprintf(" (released after about %s)", released.Round(100*time.Millisecond))
		}
		r.w.logf("%s to the leader (replica %d): taken over after %s%s", signal, i, t.After.Round(100*time.Millisecond), how)
		mu.Lock()
		rep.Takeovers = append(rep.Takeovers, t)
		mu.Unlock()
		<-stopped
		if err := r.start(i); err != nil {
			r.w.logf("cannot restart replica %d: %v", i, err)
			return
		}
	}
}
