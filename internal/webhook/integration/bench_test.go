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
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

const (
	benchPods    = 1000
	benchWorkers = 8
)

// BenchmarkPodAdmission creates 1,000 pods per iteration through the API server
// with the webhooks registered, from 8 clients at once: annotated pods (each sent
// to the injector, which reads the instance and its secret, refreshes the copy
// and patches the pod) and unannotated pods (which matchConditions keep away from
// it). It reports the latency of pod creation as clients see it (create-p50-ms,
// create-p99-ms), the time the injector spends per pod (webhook-p50-ms,
// webhook-p99-ms), and pods created per second; ns/op is the time per 1,000 pods.
//
//	make bench   # or: go test -run '^$' -bench PodAdmission ./internal/webhook
func BenchmarkPodAdmission(b *testing.B) {
	controlplane.Need(b)
	readyInstance(b, "bench", func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.Injection.AllowedNamespaces = []string{"bench"} })
	namespace(b, "bench", nil)
	for _, tc := range []struct {
		name      string
		annotated bool
	}{{"Annotated", true}, {"Unannotated", false}} {
		b.Run(tc.name, func(b *testing.B) {
			var create []time.Duration
			pods.record(true)
			defer pods.record(false)
			start := time.Now()
			b.ResetTimer()
			for b.Loop() {
				create = append(create, createPods(b, tc.annotated)...)
			}
			elapsed := time.Since(start)
			hook := pods.recorded()
			b.ReportMetric(percentile(create, 0.50), "create-p50-ms")
			b.ReportMetric(percentile(create, 0.99), "create-p99-ms")
			b.ReportMetric(float64(len(create))/elapsed.Seconds(), "pods/s")
			if tc.annotated {
				if len(hook) < len(create) {
					b.Fatalf("the injector saw %d of %d annotated pods", len(hook), len(create))
				}
				b.ReportMetric(percentile(hook, 0.50), "webhook-p50-ms")
				b.ReportMetric(percentile(hook, 0.99), "webhook-p99-ms")
			} else if len(hook) != 0 {
				b.Fatalf("the injector saw %d unannotated pods", len(hook))
			}
		})
	}
}

// createPods creates benchPods pods from benchWorkers goroutines and returns how
// long each creation took.
func createPods(b *testing.B, annotated bool) []time.Duration {
	ctx := context.Background()
	jobs := make(chan struct{})
	var mu sync.Mutex
	var took []time.Duration
	var wg sync.WaitGroup
	for range benchWorkers {
		wg.Go(func() {
			for range jobs {
				p := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: "bench", GenerateName: "bench-"},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
				}
				if annotated {
					p.Annotations = map[string]string{v1alpha1.AnnotationInstanceName: "bench"}
				}
				t := time.Now()
				err := env.Client.Create(ctx, p)
				d := time.Since(t)
				if err != nil {
					b.Error(err)
					continue
				}
				mu.Lock()
				took = append(took, d)
				mu.Unlock()
			}
		})
	}
	for range benchPods {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	return took
}

// percentile of ds in milliseconds.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[int(p*float64(len(s)-1))]) / float64(time.Millisecond)
}
