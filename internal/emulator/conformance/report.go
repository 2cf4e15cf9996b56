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

package conformance

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const errAllowLine = "allow-list line %d: want \"<scope> <method> <kind> <path> <reason>\", got %q"

// AllowList is the checked-in list of known differences: each entry a
// scope (* for every log, an engine, or a log's ID) and a key (method, kind
// and path, as Difference.Key spells them), with the reason it is allowed.
type AllowList map[AllowKey]string

// AllowKey is an allow-list entry without its reason.
type AllowKey struct {
	Scope, Key string
}

// Reason is why the allow-list allows a difference of an exchange, and
// which entry allows it; ok is false when none does.
func (a AllowList) Reason(x Exchange, d Difference) (AllowKey, string, bool) {
	k := d.Key(x.Method)
	for _, scope := range []string{x.Log, x.Engine, "*"} {
		if r, ok := a[AllowKey{Scope: scope, Key: k}]; ok {
			return AllowKey{Scope: scope, Key: k}, r, true
		}
	}
	return AllowKey{}, "", false
}

// ParseAllowList reads an allow-list: one difference per line as
// "<scope> <method> <kind> <path> <reason...>"; blank lines and lines
// starting with # are ignored. Every entry needs a reason.
func ParseAllowList(r io.Reader) (AllowList, error) {
	out := AllowList{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 {
			return nil, errors.Errorf(errAllowLine, n, line)
		}
		out[AllowKey{Scope: f[0], Key: f[1] + " " + f[2] + " " + f[3]}] = strings.Join(f[4:], " ")
	}
	return out, sc.Err()
}

// Row is one line of the summary table.
type Row struct {
	Engine, Tier string
	// Logs and Exchanges count what was compared; NotCompared counts the
	// rest (other APIs, engine-dependent calls).
	Logs, Exchanges, NotCompared int
	// StatusMatch counts exchanges with the recorded status; ReasonMatch
	// those with the recorded status and, for errors, reason.
	StatusMatch, ReasonMatch int
	// Missing, Extra and Values count differences, one per field of each
	// exchange.
	Missing, Extra, Values int
}

// Result is a replay's exchanges with their differences.
type Result struct {
	Exchange
	Diffs []Difference
}

// Summarize counts results per engine and tier, in a stable order.
func Summarize(results []Result) []Row {
	byKey := map[string]*Row{}
	logs := map[string]map[string]bool{}
	for _, r := range results {
		k := r.Engine + "/" + r.Tier
		row := byKey[k]
		if row == nil {
			row = &Row{Engine: r.Engine, Tier: r.Tier}
			byKey[k] = row
			logs[k] = map[string]bool{}
		}
		if !r.Compared {
			row.NotCompared++
			continue
		}
		logs[k][r.Log] = true
		row.Exchanges++
		status, reason := true, true
		for _, d := range r.Diffs {
			switch d.Kind {
			case KindStatus:
				status, reason = false, false
			case KindReason:
				reason = false
			case KindMissing:
				row.Missing++
			case KindExtra:
				row.Extra++
			case KindValue:
				row.Values++
			}
		}
		if status {
			row.StatusMatch++
		}
		if reason {
			row.ReasonMatch++
		}
	}
	out := make([]Row, 0, len(byKey))
	for k, r := range byKey {
		r.Logs = len(logs[k])
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Engine != out[j].Engine {
			// PostgreSQL first: it is what the emulator serves.
			return out[i].Engine == EnginePostgres || (out[j].Engine != EnginePostgres && out[i].Engine < out[j].Engine)
		}
		return out[i].Tier < out[j].Tier
	})
	return out
}

// Table renders rows as a Markdown table, with a total.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| engine | tier | logs | requests compared | status match | status and reason match | fields missing | fields extra | value mismatches | not compared |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var t Row
	for _, r := range rows {
		writeRow(&b, r.Engine, r.Tier, r)
		t.Logs += r.Logs
		t.Exchanges += r.Exchanges
		t.NotCompared += r.NotCompared
		t.StatusMatch += r.StatusMatch
		t.ReasonMatch += r.ReasonMatch
		t.Missing += r.Missing
		t.Extra += r.Extra
		t.Values += r.Values
	}
	writeRow(&b, "all", "", t)
	return b.String()
}

func writeRow(w io.Writer, engine, tier string, r Row) {
	_, _ = fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d |\n",
		engine, tier, r.Logs, r.Exchanges, r.StatusMatch, r.ReasonMatch, r.Missing, r.Extra, r.Values, r.NotCompared)
}
