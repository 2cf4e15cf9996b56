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
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

const errRewrite = "cannot rewrite the recorded request of %s %s for PostgreSQL"

// Values that replace the recordings' placeholders in requests, and that
// become placeholders again in the emulator's answers.
var placeholders = map[string]string{
	"${projectId}":    "conformance-project",
	"${uniqueId}":     "u0c0n7",
	"${networkID}":    "conformance-network",
	"${subnetworkID}": "conformance-subnetwork",
	"${addressID}":    "conformance-address",
	"${jobID}":        "conformance-job",
}

// operationPlaceholder is how the recordings name every operation.
const operationPlaceholder = "${operationID}"

// Exchange is one recorded request replayed against the emulator.
type Exchange struct {
	// Log is the ID of the log the request comes from; Engine and Tier are
	// that log's.
	Log, Engine, Tier string
	// Index is the request's position in its log, counting every event.
	Index int
	// Method is the API method, e.g. "instances.get", or the other Google
	// API's host for a skipped request.
	Method string
	// Compared is false for requests that were not compared: calls to
	// other Google APIs, and calls of other engines' logs that depend on
	// the engine. Note says why.
	Compared bool
	Note     string
	// Want is what real Cloud SQL answered, Got what the emulator did
	// (placeholders restored). Got is empty for requests not sent.
	Want, Got Answer
}

// Answer is an HTTP status and a JSON body.
type Answer struct {
	Status int
	Body   json.RawMessage
}

// Replay sends the requests of one log, in order, to a new emulator made by
// newServer, and returns them with both answers. Before every request the
// emulator's pending operations are finished, as the recordings' clients
// polled them until done; a recorded poll that saw an operation still
// running leaves them as they are.
func Replay(l Log, newServer func() *emulator.Server) ([]Exchange, error) {
	srv := newServer()
	defer func() { _ = srv.Close() }()
	hs := httptest.NewServer(srv)
	defer hs.Close()

	var (
		out    []Exchange
		lastOp string
		opIDs  []string
		// lastOpCompared is whether the request that started lastOp was
		// compared: polls of an engine-dependent operation are not.
		lastOpCompared bool
	)
	for i, ev := range l.Events {
		x := Exchange{Log: l.ID, Engine: l.Engine, Tier: l.Tier, Index: i}
		if ev.Skip != "" {
			x.Method, _, _ = strings.Cut(ev.Skip, "/")
			x.Note = "a call to another Google API, not replayed"
			out = append(out, x)
			continue
		}
		x.Want = Answer{Status: ev.Status, Body: ev.Response}
		x.Method = MethodOf(ev.Method, ev.URL)
		req, send, compare, note, err := rewrite(l.Engine, x.Method, ev)
		if err != nil {
			return nil, err
		}
		x.Compared, x.Note = compare, note
		if send && strings.Contains(ev.URL, operationPlaceholder) && lastOp == "" {
			send, x.Compared, x.Note = false, false, "polls an operation that was not replayed"
		}
		if !send {
			if operationName(ev.Response) != "" {
				// Its operation was not started: later polls of it
				// are not replayed either.
				lastOp = ""
			}
			out = append(out, x)
			continue
		}
		if !(x.Method == "operations.get" && !operationDone(ev.Response)) {
			srv.FinishOperations()
		}
		url := substitute(ev.URL)
		url = strings.ReplaceAll(url, operationPlaceholder, lastOp)
		if l.Engine != EnginePostgres {
			url = strings.ReplaceAll(url, "name="+builtinUser(l.Engine), "name=postgres")
		}
		if x.Method == "operations.get" && !lastOpCompared {
			x.Compared, x.Note = false, "polls an operation of "+l.Engine+" that is not compared"
		}
		if x.Method == "instances.update" || x.Method == "instances.patch" {
			req = currentSettingsVersion(srv, url, req)
		}
		got, err := do(hs.URL, ev.Method, url, req)
		if err != nil {
			return nil, err
		}
		if id := operationName(got.Body); id != "" && x.Method != "operations.get" {
			lastOp, lastOpCompared = id, x.Compared
			opIDs = append(opIDs, id)
		}
		got.Body = restore(got.Body, opIDs)
		if l.Engine != EnginePostgres {
			got.Body = renameBuiltinUser(got.Body, "postgres", builtinUser(l.Engine))
		}
		x.Got = got
		out = append(out, x)
	}
	return out, nil
}

// normalisedSettingsVersion is the value the recordings give every
// settingsVersion, in requests too.
const normalisedSettingsVersion = "123"

// currentSettingsVersion replaces a recorded request's normalised
// settingsVersion with the instance's current one, which is what the
// recorded client sent before normalisation.
func currentSettingsVersion(srv *emulator.Server, url string, body []byte) []byte {
	m := instanceURLRE.FindStringSubmatch(url)
	if m == nil {
		return body
	}
	var in map[string]any
	if json.Unmarshal(body, &in) != nil {
		return body
	}
	st, _ := in["settings"].(map[string]any)
	if st == nil || st["settingsVersion"] != normalisedSettingsVersion {
		return body
	}
	db, err := srv.Instance(m[1], m[2])
	if err != nil || db.Settings == nil {
		return body
	}
	st["settingsVersion"] = strconv.FormatInt(db.Settings.SettingsVersion, 10)
	out, err := json.Marshal(in)
	if err != nil {
		return body
	}
	return out
}

var instanceURLRE = regexp.MustCompile(`^/sql/v1beta4/projects/([^/]+)/instances/([^/?]+)`)

// builtinUser is the user each engine creates with an instance, which the
// replay of other engines' logs maps to PostgreSQL's postgres.
func builtinUser(engine string) string {
	switch engine {
	case "mysql":
		return "root"
	case "sqlserver":
		return "sqlserver"
	}
	return "postgres"
}

// rewrite decides how a recorded request is replayed: the body to send,
// whether to send it at all and whether to compare its answer. Logs of
// PostgreSQL are replayed as recorded. Logs of other engines are replayed
// on a PostgreSQL instance: their instance inserts become a minimal
// PostgreSQL insert with the same name, their other instance mutations are
// not sent, and only the calls that do not depend on the engine (users,
// databases, operations) are compared, with the engine's built-in user
// standing for postgres and charset and collation left out.
func rewrite(engine, method string, ev Event) (body []byte, send, compare bool, note string, err error) {
	body = []byte(substitute(string(ev.Request)))
	if len(ev.Request) == 0 || string(ev.Request) == "null" {
		body = nil
	}
	if engine == EnginePostgres {
		return body, true, true, "", nil
	}
	resource, _, _ := strings.Cut(method, ".")
	switch {
	case method == "instances.insert":
		var in map[string]any
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, false, false, "", errors.Wrapf(err, errRewrite, ev.Method, ev.URL)
		}
		pg := map[string]any{
			"name":            in["name"],
			"region":          in["region"],
			"databaseVersion": "POSTGRES_15",
			"settings":        map[string]any{"tier": "db-custom-2-7680"},
		}
		if pw, ok := in["rootPassword"]; ok {
			pg["rootPassword"] = pw
		}
		body, _ = json.Marshal(pg)
		return body, true, false, "an instance of " + engine + ", inserted as PostgreSQL and not compared", nil
	case method == "instances.get" || method == "instances.delete" || method == "instances.list":
		return body, true, false, "an instance of " + engine + ", not compared", nil
	case resource == "instances":
		return nil, false, false, "a change to an instance of " + engine + ", not replayed", nil
	case resource == "databases" && body != nil:
		var in map[string]any
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, false, false, "", errors.Wrapf(err, errRewrite, ev.Method, ev.URL)
		}
		delete(in, "charset")
		delete(in, "collation")
		body, _ = json.Marshal(in)
	case resource == "users" && body != nil:
		body = renameBuiltinUser(body, builtinUser(engine), "postgres")
	}
	return body, true, true, "", nil
}

// renameBuiltinUser replaces the JSON string from by to in body, and in the
// query of users' URLs.
func renameBuiltinUser(body []byte, from, to string) []byte {
	return bytes.ReplaceAll(body, []byte(`"`+from+`"`), []byte(`"`+to+`"`))
}

// substitute replaces the placeholders of a recorded URL or body with the
// values the replay uses.
func substitute(s string) string {
	for ph, v := range placeholders {
		s = strings.ReplaceAll(s, ph, v)
	}
	return s
}

// restore puts the placeholders back into an answer of the emulator, so
// that it reads like a recorded one.
func restore(body []byte, opIDs []string) []byte {
	s := string(body)
	for _, id := range opIDs {
		s = strings.ReplaceAll(s, id, operationPlaceholder)
	}
	for ph, v := range placeholders {
		s = strings.ReplaceAll(s, v, ph)
	}
	return []byte(s)
}

func do(base, method, url string, body []byte) (Answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, base+url, rd)
	if err != nil {
		return Answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Status: resp.StatusCode, Body: b}, nil
}

// operationName is the name of the operation a body is, or "".
func operationName(body []byte) string {
	var op struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	}
	if json.Unmarshal(body, &op) != nil || op.Kind != "sql#operation" {
		return ""
	}
	return op.Name
}

func operationDone(body []byte) bool {
	var op struct {
		Status string `json:"status"`
	}
	return json.Unmarshal(body, &op) == nil && op.Status == "DONE"
}

var apiPathRE = regexp.MustCompile(`^/sql/v1beta4/projects/[^/]+/([^?]*)`)

// MethodOf names the API method of a recorded request, e.g. "users.list"
// or "instances.clone", from its verb and URL.
func MethodOf(verb, url string) string {
	m := apiPathRE.FindStringSubmatch(url)
	if m == nil {
		return "unknown"
	}
	seg := strings.Split(m[1], "/")
	std := map[string]string{http.MethodGet: "get", http.MethodPatch: "patch", http.MethodPut: "update", http.MethodDelete: "delete"}
	coll := map[string]string{http.MethodGet: "list", http.MethodPost: "insert", http.MethodPut: "update", http.MethodDelete: "delete"}
	switch {
	case len(seg) == 1:
		return seg[0] + "." + coll[verb]
	case len(seg) == 2:
		return seg[0] + "." + std[verb]
	case len(seg) == 3 && (seg[2] == "users" || seg[2] == "databases"):
		return seg[2] + "." + coll[verb]
	case len(seg) == 3:
		return "instances." + seg[2]
	case len(seg) == 4:
		return seg[2] + "." + std[verb]
	}
	return "unknown"
}
