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
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Kinds of difference.
const (
	KindStatus  = "status"
	KindReason  = "reason"
	KindMessage = "message"
	KindMissing = "missing"
	KindExtra   = "extra"
	KindValue   = "value"
)

// Difference is one way the emulator's answer differs from the recorded one.
type Difference struct {
	// Kind is one of the Kind constants.
	Kind string
	// Path is the field, with [] for any array index; "-" for status,
	// reason and message.
	Path string
	// Want and Got are the recorded and the emulator's values, for reading.
	Want, Got string
}

// Key is how the allow-list names a difference of a method.
func (d Difference) Key(method string) string {
	return method + " " + d.Kind + " " + d.Path
}

// unstable are fields whose values the recordings normalised or that differ
// between any two runs (times, etags, addresses, keys): only their presence
// is compared.
var unstable = map[string]bool{
	"etag":                       true,
	"ipAddress":                  true,
	"settingsVersion":            true,
	"serviceAccountEmailAddress": true,
	"gceZone":                    true,
	"user":                       true,
	"cert":                       true,
	"certSerialNumber":           true,
	"commonName":                 true,
	"sha1Fingerprint":            true,
	"dnsName":                    true,
	"pscServiceAttachmentLink":   true,
}

// unstablePaths are whole paths treated like unstable.
var unstablePaths = map[string]bool{
	"settings.backupConfiguration.startTime": true,
}

// normalisedEmpty are fields the recordings' normalisation added, empty,
// where the answer had none: an empty one in the recording says nothing.
var normalisedEmpty = map[string]bool{
	"settings.authorizedGaeApplications":                  true,
	"settings.ipConfiguration.authorizedNetworks":         true,
	"items[].settings.authorizedGaeApplications":          true,
	"items[].settings.ipConfiguration.authorizedNetworks": true,
}

// normalisedPresence are fields whose presence the normalisation decided
// (users-list host was set to "").
var normalisedPresence = map[string]bool{
	"items[].host": true,
}

var indexRE = regexp.MustCompile(`\[[0-9]+\]`)

// Compare lists the differences between a recorded answer and the
// emulator's. Fields are compared only when the statuses agree; reasons and
// messages only when both are errors.
func Compare(want, got Answer, engine string) []Difference {
	var out []Difference
	if want.Status != got.Status {
		return []Difference{{Kind: KindStatus, Path: "-", Want: fmt.Sprint(want.Status), Got: fmt.Sprint(got.Status)}}
	}
	if want.Status >= 300 {
		wr, wm := errorOf(want.Body)
		gr, gm := errorOf(got.Body)
		if wr != gr {
			out = append(out, Difference{Kind: KindReason, Path: "-", Want: wr, Got: gr})
		}
		if wm != gm {
			out = append(out, Difference{Kind: KindMessage, Path: "-", Want: wm, Got: gm})
		}
	}
	w, g := flatten(want.Body), flatten(got.Body)
	wf, gf := fieldSet(w), fieldSet(g)
	// What the normalisation emptied says nothing about what was there.
	for p, v := range wf {
		if normalisedEmpty[p] && v[0] == "[]" {
			for gp := range gf {
				if strings.HasPrefix(gp, p) {
					delete(gf, gp)
				}
			}
		}
	}
	for p, v := range wf {
		if gf[p] == nil && !normalisedPresence[p] && !(normalisedEmpty[p] && v[0] == "[]") {
			out = append(out, Difference{Kind: KindMissing, Path: p, Want: v[0]})
		}
	}
	for p, v := range gf {
		if wf[p] == nil && !normalisedPresence[p] {
			out = append(out, Difference{Kind: KindExtra, Path: p, Got: v[0]})
		}
	}
	seen := map[string]bool{}
	for p, wv := range w {
		gv, ok := g[p]
		wp := indexRE.ReplaceAllString(p, "[]")
		if !ok || wv == gv || !stable(wp, engine) || seen[wp] {
			continue
		}
		seen[wp] = true
		out = append(out, Difference{Kind: KindValue, Path: wp, Want: wv, Got: gv})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// stable reports whether the value at a wildcard path is compared.
func stable(path, engine string) bool {
	last := path[strings.LastIndex(path, ".")+1:]
	last = strings.TrimSuffix(last, "[]")
	if unstable[last] || unstablePaths[strings.TrimPrefix(path, "items[].")] || strings.HasSuffix(last, "Time") {
		return false
	}
	// Other engines' databases have their own charsets and collations.
	if engine != EnginePostgres && (last == "charset" || last == "collation") {
		return false
	}
	return true
}

// errorOf is the reason and message of Google's error envelope.
func errorOf(body []byte) (reason, message string) {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Errors  []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	if len(e.Error.Errors) > 0 {
		reason = e.Error.Errors[0].Reason
	}
	return reason, e.Error.Message
}

// flatten maps every leaf of a JSON document (scalars, empty objects and
// empty arrays) to its compact JSON, by path with array indexes.
func flatten(body []byte) map[string]string {
	out := map[string]string{}
	if len(bytes.TrimSpace(body)) == 0 {
		return out
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		out["(not JSON)"] = string(body)
		return out
	}
	walk("", v, out)
	return out
}

func walk(path string, v any, out map[string]string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 && path != "" {
			out[path] = "{}"
		}
		for k, e := range x {
			walk(join(k), e, out)
		}
	case []any:
		if len(x) == 0 {
			out[path] = "[]"
		}
		for i, e := range x {
			walk(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	case nil:
		out[path] = "null"
	default:
		b, _ := json.Marshal(x)
		out[path] = string(b)
	}
}

// fieldSet groups flattened paths by wildcard path, with their values.
func fieldSet(flat map[string]string) map[string][]string {
	out := map[string][]string{}
	for p, v := range flat {
		wp := indexRE.ReplaceAllString(p, "[]")
		out[wp] = append(out[wp], v)
	}
	return out
}
