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

// The short soak of `make test`: 10 instances, 2 imported, and 3 that run a
// real PostgreSQL with 2 users and 2 databases each, the provider SIGKILLed up
// to six times while they are created, changed, taken over and deleted, and
// once more in each of two rounds of password rotation, with a client per
// user connecting throughout, and twice more while 5 instances are
// recovered from others: one of each kind (a clone now, one at a point in
// time, a restore of a PostgresqlBackup) from the instances with
// PostgreSQL, and a clone now and one at a point in time from two others.
// `make soak` runs the long one.
func TestShortSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak takes minutes")
	}
	g := NewWithT(t)
	r, err := Run(context.Background(), Options{
		Instances: 10, Imports: 2, Quota: 180,
		SQLInstances: 3, Logins: 2, Recoveries: 5,
		KillMin: 5 * time.Second, KillMax: 20 * time.Second, MaxKills: 6,
		Timeout: 5 * time.Minute, Log: os.Stderr,
	})
	r.Print(os.Stderr)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Check(r)).To(Succeed(), "%v", r.Conditions)
	g.Expect(r.Kills).To(BeNumerically(">", 0), "the provider was never killed: the soak proved nothing")
	g.Expect(r.Rotations).To(Equal(2*3*2), "every user's password rotated twice")
	g.Expect(r.ClientConnections).To(BeNumerically(">", 0), "clients connected during the rotations")
	g.Expect(r.Recoveries).To(Equal(5), "every recovery made")
	g.Expect(r.RecoveryKills).To(BeNumerically(">", 0), "the provider was killed while it recovered")
}
