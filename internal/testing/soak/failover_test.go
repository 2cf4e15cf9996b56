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
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// Two replicas with leader election, the leader SIGKILLed three times and
// SIGTERMed once while 12 instances are created, changed and deleted under the
// quota: each takeover within 15 s (3 s on SIGTERM), no minute over the quota
// at Cloud SQL and no 429, nothing created twice, no password lost, and pods
// admitted throughout by the replica that is alive.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("the failover takes minutes")
	}
	g := NewWithT(t)
	r, err := RunFailover(context.Background(), FailoverOptions{
		Instances: 12, Quota: 180, Kills: 3, Every: 12 * time.Second,
		Timeout: 3 * time.Minute, Log: os.Stderr,
	})
	r.Print(os.Stderr)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(CheckFailover(r)).To(Succeed())
	g.Expect(r.Takeovers).To(HaveLen(4))
}
