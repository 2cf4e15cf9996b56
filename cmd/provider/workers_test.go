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
	"time"

	. "github.com/onsi/gomega"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
)

// Reconciles that wait for the request budget's writes do not take the
// workers that reconciles with nothing to send need: there are as many more
// workers as writes the budget admits within the reconcile timeout.
func TestWorkersLeaveRoomBesideWritesWaitingForTheBudget(t *testing.T) {
	g := NewWithT(t)
	c := configfile.Defaults()
	g.Expect(workers(&c)).To(Equal(4*10 + 180*2), "the defaults: 10 a second, 180 a minute, 2 minutes")
	c.Reconcile.MaxReconcileRate = 25
	c.CloudSQL.RequestsPerMinute = 60
	c.Reconcile.Timeout = configfile.Duration{Duration: 30 * time.Second}
	g.Expect(workers(&c)).To(Equal(100 + 30))
}
