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

package main

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestKubeRateFollowsTheReconcileRate(t *testing.T) {
	g := NewWithT(t)
	for rate, want := range map[int]float32{1: 20, 5: 20, 10: 40, 25: 100} {
		qps, burst := kubeRate(rate)
		g.Expect(qps).To(Equal(want), "max_reconcile_rate %d", rate)
		g.Expect(burst).To(Equal(int(2*want)), "max_reconcile_rate %d", rate)
	}
}
