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

package observer

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// listed is an instance as the emulator lists it: with its server CA
// certificate, addresses and the settings Cloud SQL fills in.
func listed(t *testing.T, name string, settings *sqladmin.Settings) *sqladmin.DatabaseInstance {
	t.Helper()
	g := NewWithT(t)
	emu := emulator.New()
	settings.Edition = "ENTERPRISE"
	g.Expect(emu.Seed(project, &sqladmin.DatabaseInstance{Name: name, DatabaseVersion: "POSTGRES_16", Region: "us-central1", Settings: settings})).To(Succeed())
	i, err := emu.Instance(project, name)
	g.Expect(err).NotTo(HaveOccurred())
	return i
}

func TestPackedInstancesComeBackAsTheyWereListed(t *testing.T) {
	flagged := &sqladmin.Settings{Tier: "db-custom-2-7680", DatabaseFlags: []*sqladmin.DatabaseFlags{{Name: "log_min_duration_statement", Value: "250"}},
		UserLabels: map[string]string{"team": "payments", "cost-centre": "k8s_42"}}
	for name, inst := range map[string]*sqladmin.DatabaseInstance{
		"as the emulator lists it":                 listed(t, "db-0000", &sqladmin.Settings{Tier: "db-custom-1-3840"}),
		"with flags and labels of its own":         listed(t, "payments-primary", flagged),
		"with nothing but a name":                  {Name: "bare"},
		"with fields the dictionary does not know": {Name: "odd", Kind: "sql#instance", SecondaryGceZone: "asia-south2-c", ReplicaNames: []string{"r1", "r2"}, Settings: &sqladmin.Settings{UserLabels: map[string]string{"city": "zürich"}}},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			raw, err := json.Marshal(inst)
			g.Expect(err).NotTo(HaveOccurred())
			var pk packer
			p, err := pk.pack(raw, sha256.Sum256(raw))
			g.Expect(err).NotTo(HaveOccurred())
			back, err := p.json()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(back).To(Equal(raw))
			decoded, err := p.instance()
			g.Expect(err).NotTo(HaveOccurred())
			again, err := json.Marshal(decoded)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(again).To(Equal(raw))
		})
	}
}

// The view of 10,000 instances is held packed because packing holds a
// fraction of the bytes: this fails when the dictionary no longer matches
// what Cloud SQL lists.
func TestAPackedInstanceHoldsAFractionOfItsJSON(t *testing.T) {
	g := NewWithT(t)
	raw, err := json.Marshal(listed(t, "fleet-04711", &sqladmin.Settings{Tier: "db-custom-1-3840"}))
	g.Expect(err).NotTo(HaveOccurred())
	var pk packer
	p, err := pk.pack(raw, sha256.Sum256(raw))
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("%d bytes of JSON packed into %d", len(raw), len(p.data))
	g.Expect(len(p.data)).To(BeNumerically("<", len(raw)*2/5))
}

// Packers are one per listing, but the view is read by every reconcile at
// once: the inflaters they share must not mix their instances.
func TestPackedInstancesInflateConcurrently(t *testing.T) {
	g := NewWithT(t)
	var pk packer
	want := map[string][]byte{}
	packs := map[string]packed{}
	for _, name := range []string{"a", "b", "c", "d"} {
		raw, err := json.Marshal(listed(t, name, &sqladmin.Settings{Tier: "db-custom-1-3840"}))
		g.Expect(err).NotTo(HaveOccurred())
		p, err := pk.pack(raw, sha256.Sum256(raw))
		g.Expect(err).NotTo(HaveOccurred())
		want[name], packs[name] = raw, p
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				for name, p := range packs {
					got, err := p.json()
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(got).To(Equal(want[name]))
				}
			}
		}()
	}
	wg.Wait()
}
