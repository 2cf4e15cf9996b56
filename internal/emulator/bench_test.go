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

package emulator_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"

	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// benchClient serves an emulator without a request budget and returns a
// real client for it with one instance created.
func benchClient(b *testing.B) *sqladmin.Service {
	b.Helper()
	hs := httptest.NewServer(emulator.New(emulator.WithRequestBudget(0)))
	b.Cleanup(hs.Close)
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(hs.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Instances.Insert(project, instance("bench", richInstance)).Do(); err != nil {
		b.Fatal(err)
	}
	return svc
}

// BenchmarkInstancesGet measures instances.get through the real client over
// loopback HTTP.
func BenchmarkInstancesGet(b *testing.B) {
	svc := benchClient(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Instances.Get(project, "bench").Do(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkInstancesPatch measures instances.patch through the real client,
// each call changing a label so that every patch is a real settings change.
func BenchmarkInstancesPatch(b *testing.B) {
	svc := benchClient(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		_, err := svc.Instances.Patch(project, "bench", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
			UserLabels: map[string]string{"rev": strconv.Itoa(i)},
		}}).Do()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
