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

package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/conformance"
)

// recordingEnv overrides where the recorded traffic is read from.
const recordingEnv = "CLOUDSQL_RECORDED"

// defaultRecording is where a checkout finds the recorded traffic: the
// shared directory beside the repository.
var defaultRecording = filepath.Join("..", "..", "..", "..", "shared", "cloudsql-recorded", "sqladmin-logs.json.gz")

// maxStatusShare is the largest share of real-tier PostgreSQL exchanges
// whose status or error reason may differ from the recording.
const maxStatusShare = 0.02

// newEmulator is a fresh emulator for one log: operations take long enough
// that their first answer is PENDING, as Cloud SQL's are, and the replay
// finishes them where the recording polled them until done.
func newEmulator() *emulator.Server {
	return emulator.New(
		emulator.WithClock(emulator.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))),
		emulator.WithDelays(10*time.Minute, 2*time.Minute, 2*time.Minute),
		emulator.WithRequestBudget(0),
	)
}

// seen is every occurrence of one difference key.
type seen struct {
	count   int
	example string
}

func TestRecordedTraffic(t *testing.T) {
	g := NewWithT(t)
	path := defaultRecording
	if p := os.Getenv(recordingEnv); p != "" {
		path = p
	}
	rec, err := conformance.Load(path)
	g.Expect(err).NotTo(HaveOccurred(), "the recorded Cloud SQL traffic is read from %s (set %s to read it elsewhere)", path, recordingEnv)
	g.Expect(rec.Logs).NotTo(BeEmpty())

	f, err := os.Open(filepath.Join("testdata", "allowlist.txt"))
	g.Expect(err).NotTo(HaveOccurred())
	allow, err := conformance.ParseAllowList(f)
	_ = f.Close()
	g.Expect(err).NotTo(HaveOccurred())

	var results []conformance.Result
	unexplainedKeys := map[string]*seen{}
	used := map[conformance.AllowKey]int{}
	for _, l := range rec.Logs {
		xs, err := conformance.Replay(l, newEmulator)
		g.Expect(err).NotTo(HaveOccurred(), "replaying %s", l.ID)
		for _, x := range xs {
			r := conformance.Result{Exchange: x}
			if x.Compared {
				r.Diffs = conformance.Compare(x.Want, x.Got, x.Engine)
			}
			for _, d := range r.Diffs {
				if ak, _, ok := allow.Reason(x, d); ok {
					used[ak]++
					continue
				}
				k := d.Key(x.Method)
				if unexplainedKeys[k] == nil {
					unexplainedKeys[k] = &seen{example: fmt.Sprintf("%s (%s) #%d: recorded %s, emulator %s", x.Log, x.Engine, x.Index, d.Want, d.Got)}
				}
				unexplainedKeys[k].count++
			}
			results = append(results, r)
		}
	}

	rows := conformance.Summarize(results)
	t.Logf("recorded Cloud SQL traffic (Config Connector %s) replayed against the emulator:\n%s", rec.KCCCommit, conformance.Table(rows))

	var unexplained, stale []string
	for k, s := range unexplainedKeys {
		unexplained = append(unexplained, fmt.Sprintf("%s (%d times; e.g. %s)", k, s.count, s.example))
	}
	var allowed []string
	for k, reason := range allow {
		if used[k] == 0 {
			stale = append(stale, k.Scope+" "+k.Key)
			continue
		}
		allowed = append(allowed, fmt.Sprintf("%4d  %s %s: %s", used[k], k.Scope, k.Key, reason))
	}
	sort.Strings(allowed)
	t.Logf("differences on the allow-list (count, scope, difference, reason):\n%s", strings.Join(allowed, "\n"))
	sort.Strings(unexplained)
	sort.Strings(stale)
	for _, u := range unexplained {
		t.Errorf("unexplained difference: %s", u)
	}
	for _, k := range stale {
		t.Errorf("testdata/allowlist.txt explains %q, which no longer occurs: remove it", k)
	}
	if len(unexplained) > 0 {
		t.Errorf("the emulator answers differently from real Cloud SQL in %d ways that testdata/allowlist.txt does not explain: make it answer as recorded, or add each difference there with its reason", len(unexplained))
	}

	for _, r := range rows {
		if r.Engine == conformance.EnginePostgres && r.Tier == conformance.TierReal {
			differ := r.Exchanges - r.ReasonMatch
			g.Expect(float64(differ)).To(BeNumerically("<=", maxStatusShare*float64(r.Exchanges)),
				"%d of %d real-tier PostgreSQL exchanges differ in status or reason; at most %.0f%% may", differ, r.Exchanges, maxStatusShare*100)
		}
	}
}
