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

// Package applybench measures the provider as users apply PostgresqlInstances:
// `kubectl apply -f dir/`, Argo CD and Flux send one object at a time, each
// through the admission webhooks, and send the next when the API server has
// answered. BenchmarkApplyPhases does the same with 100 instances against a
// real API server that calls the provider binary's webhooks, and the Cloud SQL
// emulator enforcing Cloud SQL's default quota (180 requests a minute, 429 past
// it) with operations that take 10 s. It then changes every instance's tier
// and deletes them all, one object at a time again. The provider runs at its
// defaults.
//
// BenchmarkFleetPhases (internal/controller/postgresqlinstance) created all
// objects at once, without webhooks, and paused a minute between phases; it
// never saw the webhook's name checks, which spend the same quota as the
// controllers while an apply is waiting, nor a phase starting in a window that
// the previous one filled. Here the phases follow each other without pause, and
// for each the benchmark prints the Cloud SQL requests spent, by method, and
// the time taken beside the physical limit: what the quota window and the
// operation time allow given the requests before the phase (PhysicalLimit).
//
//	make bench   # or: go test -run '^$' -bench ApplyPhases -benchtime 1x -timeout 60m ./internal/testing/applybench
//
// It needs KUBEBUILDER_ASSETS (make control-plane) and takes several minutes.
package applybench
