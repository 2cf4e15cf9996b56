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

package emulator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/pause"
)

// maxBodyBytes bounds request bodies; the largest legitimate one (an
// instance with many flags and networks) is a few KiB.
const maxBodyBytes = 1 << 20

// defaultRequestLog bounds the in-memory request log so that long benchmarks
// don't grow it without limit (WithRequestLogSize).
const defaultRequestLog = 10000

// Server is an in-memory Cloud SQL Admin API v1beta4 for PostgreSQL. It is an
// http.Handler: mount it on httptest.NewServer and point the real client at
// it with option.WithEndpoint(url+"/"). It is safe for concurrent use.
type Server struct {
	// Set by options, read-only afterwards.
	clock       Clock
	delays      Delays
	reservation time.Duration
	budget      int
	seed        uint64
	afterInsert func(project, instance string)
	logw        io.Writer
	// requestLog is how many requests the in-memory log keeps at least.
	requestLog int
	// data backs instances with PostgreSQL servers (WithPostgres); nil
	// without.
	data *dataPlane
	// dataAddrs is where the data plane takes instance addresses from; the
	// zero value means 127.0.0.0/8.
	dataAddrs netip.Prefix

	logMu sync.Mutex // serialises writes to logw

	// tokens are the access tokens /token issued, and certGrants the client
	// certificates generateEphemeralCert bound to one (by serial number),
	// for IAM database authentication. They have locks of their own.
	tokens     grantStore
	certGrants grantStore

	mu       sync.Mutex // guards everything below
	skew     time.Duration
	rnd      *rand.Rand
	projects map[string]*projectState
	counts   map[string]int
	requests []Request
	faults   []*faultRule
	opSeq    uint64
	// handling holds the requests whose handler has started and which are
	// not yet in the log, by their number (lastHandled is the newest):
	// Requests waits for them, so that a change a reader sees in the
	// emulator's state is in the log it reads next.
	handling    map[uint64]struct{}
	lastHandled uint64
}

// projectState is everything the emulator knows about one project.
type projectState struct {
	instances map[string]*instanceState
	// reserved maps the names of deleted instances to the time they can be
	// reused.
	reserved map[string]time.Time
	ops      []*operation
	opsByID  map[string]*operation
	// pending holds the operations not yet settled, so that settling doesn't
	// scan the whole history on every request.
	pending []*operation
	budget  budgetWindow
	// retained are the backups that outlived their instance (a FINAL
	// backup, or all of them with retainBackupsOnDelete), oldest first.
	retained []*backupState
	// lastBackupID is the ID of the project's newest backup run.
	lastBackupID int64
}

// New returns an emulator with no instances, configured by opts.
func New(opts ...Option) *Server {
	s := &Server{
		clock:       realClock{},
		reservation: DefaultNameReservation,
		budget:      DefaultRequestBudget,
		seed:        DefaultRandSeed,
		projects:    map[string]*projectState{},
		counts:      map[string]int{},
		handling:    map[uint64]struct{}{},
	}
	for _, o := range opts {
		o(s)
	}
	s.rnd = rand.New(rand.NewPCG(s.seed, s.seed^0x9e3779b97f4a7c15))
	return s
}

// now is the emulator's time: the clock plus whatever Advance added.
// Callers hold s.mu.
func (s *Server) now() time.Time {
	return s.clock.Now().Add(s.skew).UTC()
}

// project returns the state of a project, creating it on first use.
// Callers hold s.mu.
func (s *Server) project(name string) *projectState {
	p, ok := s.projects[name]
	if !ok {
		p = &projectState{
			instances: map[string]*instanceState{},
			reserved:  map[string]time.Time{},
			opsByID:   map[string]*operation{},
		}
		s.projects[name] = p
	}
	return p
}

// apiRequest is one parsed API call.
type apiRequest struct {
	route
	r    *http.Request
	body []byte
	// failOp tells the handler that an injected fault wants the operation
	// it starts, if any, to finish with an error.
	failOp bool
}

// RequestReasonHeader is Google APIs' system parameter that gives a request's
// reason to Cloud Audit Logs.
const RequestReasonHeader = "X-Goog-Request-Reason"

// Request is one entry of the request log kept for tests.
type Request struct {
	// Time is the emulator's time when the request arrived.
	Time time.Time `json:"time"`
	// Method is the API method, e.g. "instances.get"; empty for admin and
	// unknown paths.
	Method string `json:"method,omitempty"`
	// HTTPMethod is the verb as received.
	HTTPMethod string `json:"httpMethod"`
	// Path is the URL path as received, without the query.
	Path string `json:"path"`
	// Project is taken from the path.
	Project string `json:"project,omitempty"`
	// Instance is taken from the path when it names one.
	Instance string `json:"instance,omitempty"`
	// Status is the HTTP status answered.
	Status int `json:"status"`
	// Reason is the request's X-Goog-Request-Reason header, which Cloud
	// Audit Logs show as the request's reason; the provider's admission
	// lookups send one.
	Reason string `json:"reason,omitempty"`
	// Fault says that an injected fault (WithFaults, the admin faults
	// endpoint) answered the request's error, not the API or its quota.
	Fault bool `json:"fault,omitempty"`
	// BodyFields are the top-level keys of the request's JSON body, sorted,
	// for a request that has one (POST, PATCH, PUT): enough for a test to
	// tell what a write carried (a patch of databaseVersion alone) without
	// the log holding passwords.
	BodyFields []string `json:"bodyFields,omitempty"`
}

// statusRecorder remembers the status written through it.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader remembers the status before writing it.
func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// ServeHTTP serves the API under /sql/v1beta4/ and the admin surface under
// /emulator/v1/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() { s.logLine(r, rec.status, time.Since(start)) }()

	if strings.HasPrefix(r.URL.Path, adminPrefix) {
		s.serveAdmin(rec, r)
		return
	}
	if r.URL.Path == TokenPath {
		s.serveToken(rec, r)
		return
	}
	rt, err := matchRoute(r.Method, r.URL.EscapedPath())
	if err != nil {
		writeError(rec, err)
		return
	}
	s.mu.Lock()
	arrived := s.now()
	s.counts[rt.method]++
	s.mu.Unlock()
	var fault bool
	var fields []string
	var handled uint64
	defer func() { s.record(arrived, rt, r, rec.status, fault, fields, handled) }()

	body, fault, err := s.serveAPI(r, rt, &fields, &handled)
	if err != nil {
		writeError(rec, err)
		return
	}
	rec.Header().Set("Content-Type", "application/json; charset=UTF-8")
	rec.WriteHeader(http.StatusOK)
	_, _ = rec.Write(body)
}

// serveAPI runs one API call through latency, the budget, injected faults and
// its handler, and returns the JSON to answer; fault says an injected fault
// gave the error. It sets *fields to the body's top-level keys, for the log,
// and *handled to the request's number in handling once its handler starts.
func (s *Server) serveAPI(r *http.Request, rt route, fields *[]string, handled *uint64) (body []byte, fault bool, err error) {
	req := &apiRequest{route: rt, r: r}
	if r.Body != nil && r.Method != http.MethodGet && r.Method != http.MethodDelete {
		b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
		if err != nil {
			return nil, false, errParse(fmt.Sprintf("Cannot read the request body: %v", err))
		}
		req.body = b
		*fields = bodyFields(b)
	}

	s.mu.Lock()
	fd := s.decideFaults(rt.method, rt.project)
	s.mu.Unlock()
	if err := pause.For(r.Context(), fd.latency); err != nil {
		return nil, false, errUnavailable()
	}

	s.mu.Lock()
	allowed := s.budget == 0 || s.project(rt.project).budget.allow(s.now(), s.budget)
	s.mu.Unlock()
	if !allowed {
		return nil, false, errRateLimited(rt.project)
	}
	if fd.err != nil {
		return nil, true, fd.err
	}
	req.failOp = fd.failOp

	s.mu.Lock()
	s.lastHandled++
	*handled = s.lastHandled
	s.handling[*handled] = struct{}{}
	s.mu.Unlock()
	v, err := rt.handler(s, req)
	if err != nil {
		return nil, false, err
	}
	if fd.loseAnswer {
		// Carried out; its answer is lost on the way.
		return nil, true, errUnavailable()
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, false, nil
	}
	body, err = json.Marshal(v)
	return body, false, err
}

// bodyFields are the top-level keys of a JSON object, sorted; nil for
// anything else, which the handler refuses anyway.
func bodyFields(body []byte) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || len(m) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}

// record appends to the in-memory request log; handled is the request's
// number in handling, 0 when its handler never ran.
func (s *Server) record(arrived time.Time, rt route, r *http.Request, status int, fault bool, fields []string, handled uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.handling, handled)
	if most := cmp.Or(s.requestLog, defaultRequestLog); len(s.requests) >= 2*most {
		// Drop the oldest half at once so that trimming is amortised.
		s.requests = append(s.requests[:0], s.requests[most:]...)
	}
	s.requests = append(s.requests, Request{
		Time: arrived, Method: rt.method, HTTPMethod: r.Method, Path: r.URL.Path,
		Project: rt.project, Instance: rt.instance, Status: status, Reason: r.Header.Get(RequestReasonHeader), Fault: fault,
		BodyFields: fields,
	})
}

// dataLog writes a line about the data plane to the request log writer.
func (s *Server) dataLog(format string, a ...any) {
	if s.logw == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	_, _ = fmt.Fprintf(s.logw, "%s dataplane: %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, a...))
}

// Close stops the PostgreSQL servers of the data plane (WithPostgres) and
// removes their files and those of backups; without a data plane it does nothing. The API keeps
// answering, but no instance gets a server again.
func (s *Server) Close() error {
	if s.data != nil {
		s.closeDataPlane()
		s.dropAllBackupData()
	}
	return nil
}

// logLine writes one line per request to the request log writer.
func (s *Server) logLine(r *http.Request, status int, d time.Duration) {
	if s.logw == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	_, _ = fmt.Fprintf(s.logw, "%s %s %s %d %s\n",
		time.Now().UTC().Format(time.RFC3339Nano), r.Method, r.URL.Path, status, d.Round(time.Microsecond))
}

// decodeJSON decodes a request body into v and answers Google's errors for
// malformed payloads: parseError for broken JSON, invalid for well-formed
// JSON that doesn't fit the schema (unknown fields, wrong types).
func decodeJSON(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return errParse("The request body is empty.")
	}
	var syntax any
	if err := json.Unmarshal(body, &syntax); err != nil {
		return errParse(err.Error())
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return errInvalid("Invalid value at '%s' (%s): %s", typeErr.Field, typeErr.Type, typeErr.Value)
		}
		return errInvalid("Invalid JSON payload received. %v", err)
	}
	return nil
}

// decodeObject decodes a request body into a generic JSON object, keeping
// numbers as json.Number so that re-encoding doesn't change them.
func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, errParse(err.Error())
	}
	if m == nil {
		return nil, errParse("Expected a JSON object.")
	}
	return m, nil
}

// projectNumber derives a stable 12-digit project number from a project ID,
// for messages and service account names that carry one.
func projectNumber(project string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(project))
	return 100000000000 + h.Sum64()%900000000000
}
