package postgresqlinstance_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"

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
