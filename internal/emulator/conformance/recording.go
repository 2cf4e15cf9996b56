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

// Package conformance replays recorded Cloud SQL Admin API traffic against
// the emulator and compares its answers with real Cloud SQL's.
//
// The recordings are those Config Connector keeps for its tests (see
// ../shared/cloudsql-recorded): each log is a sequence of sqladmin requests
// with the status and body real Cloud SQL answered, normalised with
// ${placeholders} for identifiers and fixed values for times and etags.
// Replay substitutes the placeholders, sends each request to a fresh
// emulator, finishes the emulator's operations where the recording shows
// them done, and compares status, error reason and message, the set of
// fields, and the values that normalisation left stable. A checked-in
// allow-list names the differences that are known, each with its reason.
package conformance

import (
	"compress/gzip"
	"encoding/json"
	"os"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errOpenRecording = "cannot open the recorded traffic"
	errReadRecording = "cannot read the recorded traffic"
)

// Tiers of evidence, as index.json names them.
const (
	// TierReal logs were recorded against real Cloud SQL.
	TierReal = "real"
	// TierShared logs were recorded against real Cloud SQL and later edited
	// by hand.
	TierShared = "shared"
)

// EnginePostgres is the engine the emulator serves.
const EnginePostgres = "postgres"

// Recording is the whole recorded traffic.
type Recording struct {
	// KCCCommit is the Config Connector commit the logs come from.
	KCCCommit string `json:"kcc_commit"`
	// Logs are the recorded logs, one per Config Connector test.
	Logs []Log `json:"logs"`
}

// Log is the traffic of one test.
type Log struct {
	// ID names the log.
	ID string `json:"id"`
	// Engine is the database engine the test created: postgres, mysql or
	// sqlserver.
	Engine string `json:"engine"`
	// Tier is TierReal or TierShared.
	Tier string `json:"tier"`
	// Source is the log's path in Config Connector.
	Source string `json:"source"`
	// Events are the requests in the order they were sent.
	Events []Event `json:"events"`
}

// Event is one recorded request and its answer, or a request to another
// Google API (Skip names its host and path).
type Event struct {
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Status   int             `json:"status"`
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
	Skip     string          `json:"skip"`
}

// Load reads a recording: the gzipped JSON of ../shared/cloudsql-recorded.
func Load(path string) (*Recording, error) {
	f, err := os.Open(path) //nolint:gosec // a test's input
	if err != nil {
		return nil, errors.Wrap(err, errOpenRecording)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, errors.Wrap(err, errReadRecording)
	}
	rec := &Recording{}
	if err := json.NewDecoder(zr).Decode(rec); err != nil {
		return nil, errors.Wrap(err, errReadRecording)
	}
	return rec, nil
}
