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

package integration_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// BenchmarkCreate100Instances creates 100 PostgresqlInstances at once against an
// emulator whose creates take 10s, with the configuration file's default poll
// intervals, and reports how long until all are Ready, how many Cloud SQL calls
// each instance cost, and the peak heap of the process (controllers, emulator and
// test; kube-apiserver and etcd run apart). The request budget is raised so that
// the quota is not what is measured: at the default 180 a minute, N calls per
// instance means 100*N/180 minutes of quota for 100 instances.
func BenchmarkCreate100Instances(b *testing.B) {
	const instances = 100
	d := configfile.Defaults()
	for i := range b.N {
		h := newHarness(b,
			withEmulator(emulator.WithDelays(10*time.Second, 3*time.Second, 5*time.Second)),
			withIntervals(d.Reconcile.PollInterval.Duration, d.Reconcile.BusyPollInterval.Duration),
			withBudget(100000))
		ctx, stop := context.WithCancel(context.Background())
		peak := samplePeakHeap(ctx)

		start := time.Now()
		names := make([]string, instances)
		for j := range names {
			names[j] = fmt.Sprintf("bench-%d-%03d", i, j)
			if err := env.Client.Create(h.ctx, h.instance(names[j])); err != nil {
				b.Fatal(err)
			}
		}
		for _, n := range names {
			deadline := time.Now().Add(5 * time.Minute)
			for h.get(n).GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
				if time.Now().After(deadline) {
					b.Fatalf("%s did not become Ready: %+v", n, h.get(n).Status.Conditions)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		elapsed := time.Since(start)
		stop()

		calls := 0
		for _, r := range h.emu.Requests() {
			if r.Project == h.project {
				calls++
			}
		}
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		b.ReportMetric(elapsed.Seconds(), "s-to-all-ready")
		b.ReportMetric(float64(calls)/instances, "calls/instance")
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(ru.Maxrss)/1024, "max-rss-MiB")
	}
	b.ReportMetric(0, "ns/op") // the time per op is the elapsed time above
}

// samplePeakHeap records the largest in-use heap seen until ctx ends.
func samplePeakHeap(ctx context.Context) *atomic.Uint64 {
	var peak atomic.Uint64
	go func() {
		var ms runtime.MemStats
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return &peak
}

// BenchmarkFleetPhases takes 100 PostgresqlInstances through creation, a change
// of tier and deletion, each phase started for all at once, with the provider's
// defaults (poll 5m, busy poll 15s, a budget of 180 requests a minute) against an
// emulator that enforces Cloud SQL's default quota of 180 a minute (429 past it)
// and takes 10s to create, 3s to update and 5s to delete. It reports, per phase
// and per observe mode (both in one run), after a minute's pause that leaves the
// quota window to steady polling, the seconds until all 100 are done,
// the Cloud SQL requests per instance (and the instances.get and instances.list
// among them), and the 429s the emulator answered. At 180 a minute, 100 writes
// alone take about 35s of quota: every other request per instance adds a third
// of a minute.
func BenchmarkFleetPhases(b *testing.B) {
	const instances = 100
	d := configfile.Defaults()
	for _, mode := range []string{configfile.ObserveList, configfile.ObserveGet} {
		b.Run("observe="+mode, func(b *testing.B) {
			for i := range b.N {
				h := newHarness(b, withObserve(mode),
					withEmulator(emulator.WithRequestBudget(emulator.DefaultRequestBudget),
						emulator.WithDelays(10*time.Second, 3*time.Second, 5*time.Second)),
					withIntervals(d.Reconcile.PollInterval.Duration, d.Reconcile.BusyPollInterval.Duration),
					withBudget(d.CloudSQL.RequestsPerMinute))
				names := make([]string, instances)
				for j := range names {
					names[j] = fmt.Sprintf("fleet-%d-%03d", i, j)
				}
				phase := func(name string, act func(string), done func(string) bool) {
					// Each phase starts with the quota of a fresh minute, as the
					// targets count it; steady polling goes on meanwhile.
					time.Sleep(time.Minute)
					before := h.emu.Requests()
					counts := h.emu.Counts()
					start := time.Now()
					for _, n := range names {
						act(n)
					}
					deadline := start.Add(15 * time.Minute)
					for _, n := range names {
						for !done(n) {
							if time.Now().After(deadline) {
								b.Fatalf("%s: %s not done after 15 minutes", name, n)
							}
							time.Sleep(200 * time.Millisecond)
						}
					}
					elapsed := time.Since(start)
					after := h.emu.Requests()
					now := h.emu.Counts()
					total, throttled := 0, 0
					for _, r := range after[len(before):] {
						if r.Project == h.project && r.Method != "" {
							total++
							if r.Status == 429 {
								throttled++
							}
						}
					}
					b.ReportMetric(elapsed.Seconds(), name+"-s")
					b.ReportMetric(float64(total)/instances, name+"-req/instance")
					b.ReportMetric(float64(now[emulator.MethodInstancesGet]-counts[emulator.MethodInstancesGet])/instances, name+"-gets/instance")
					b.ReportMetric(float64(now[emulator.MethodInstancesList]-counts[emulator.MethodInstancesList]), name+"-lists")
					b.ReportMetric(float64(throttled), name+"-429s")
				}
				ready := func(n string) bool {
					pi := &v1alpha1.PostgresqlInstance{}
					return env.Client.Get(h.ctx, client.ObjectKey{Name: n}, pi) == nil &&
						pi.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
						pi.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue
				}
				phase("create", func(n string) {
					if err := env.Client.Create(h.ctx, h.instance(n, func(pi *v1alpha1.PostgresqlInstance) {
						meta.AddAnnotations(pi, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
					})); err != nil {
						b.Fatal(err)
					}
				}, ready)
				const tier = "db-custom-2-7680"
				phase("change", func(n string) {
					h.update(n, func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.ForProvider.Resources.InstanceType = tier })
				}, func(n string) bool {
					inst, err := h.emu.Instance(h.project, n)
					return err == nil && inst.Settings.Tier == tier && ready(n)
				})
				phase("delete", func(n string) {
					if err := env.Client.Delete(h.ctx, &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
						b.Fatal(err)
					}
				}, func(n string) bool {
					err := env.Client.Get(h.ctx, client.ObjectKey{Name: n}, &v1alpha1.PostgresqlInstance{})
					return kerrors.IsNotFound(err)
				})
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}
