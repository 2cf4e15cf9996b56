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
	"encoding/json"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errLatency = "latency %q"
)

// Fault describes failures to inject into API requests. Shares are
// probabilities in [0, 1] drawn from the emulator's seeded generator, so a
// run with the same seed and requests fails the same way.
type Fault struct {
	// Method is the API method to affect, e.g. "instances.get" (see the
	// Method constants); empty affects every method.
	Method string
	// ServerErrorShare is the share of requests answered 500 or 503 (half
	// each on average).
	ServerErrorShare float64
	// RateLimitShare is the share of requests answered 429
	// rateLimitExceeded.
	RateLimitShare float64
	// Latency is added (in wall time) before the request is served.
	Latency time.Duration
	// FailOperationShare is the share of operations started by matching
	// requests that end DONE with an error instead of taking effect.
	FailOperationShare float64
	// LoseAnswerShare is the share of matching requests that are carried
	// out and then answered 503, as when the answer is lost between Cloud
	// SQL and its caller: a retried insert then finds what it made.
	LoseAnswerShare float64
	// Count limits the fault to this many matching requests; zero means no
	// limit.
	Count int
}

// faultJSON is Fault on the admin HTTP surface, with latency as a Go
// duration string such as "250ms".
type faultJSON struct {
	Method             string  `json:"method,omitempty"`
	ServerErrorShare   float64 `json:"serverErrorShare,omitempty"`
	RateLimitShare     float64 `json:"rateLimitShare,omitempty"`
	Latency            string  `json:"latency,omitempty"`
	FailOperationShare float64 `json:"failOperationShare,omitempty"`
	LoseAnswerShare    float64 `json:"loseAnswerShare,omitempty"`
	Count              int     `json:"count,omitempty"`
}

// MarshalJSON encodes the fault with its latency as a duration string.
func (f Fault) MarshalJSON() ([]byte, error) {
	j := faultJSON{
		Method: f.Method, ServerErrorShare: f.ServerErrorShare, RateLimitShare: f.RateLimitShare,
		FailOperationShare: f.FailOperationShare, LoseAnswerShare: f.LoseAnswerShare, Count: f.Count,
	}
	if f.Latency > 0 {
		j.Latency = f.Latency.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes a fault whose latency is a duration string.
func (f *Fault) UnmarshalJSON(b []byte) error {
	var j faultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = Fault{
		Method: j.Method, ServerErrorShare: j.ServerErrorShare, RateLimitShare: j.RateLimitShare,
		FailOperationShare: j.FailOperationShare, LoseAnswerShare: j.LoseAnswerShare, Count: j.Count,
	}
	if j.Latency != "" {
		d, err := time.ParseDuration(j.Latency)
		if err != nil {
			return errors.Wrapf(err, errLatency, j.Latency)
		}
		f.Latency = d
	}
	return nil
}

// ErrInvalidFault is returned by InjectFault for shares outside [0, 1] or
// negative latencies or counts.
var ErrInvalidFault = errors.New("emulator: invalid fault: shares must be in [0, 1], latency and count must not be negative")

func (f Fault) validate() error {
	for _, v := range []float64{f.ServerErrorShare, f.RateLimitShare, f.FailOperationShare, f.LoseAnswerShare} {
		if v < 0 || v > 1 {
			return ErrInvalidFault
		}
	}
	if f.Latency < 0 || f.Count < 0 {
		return ErrInvalidFault
	}
	return nil
}

// faultRule is an injected fault with its remaining count.
type faultRule struct {
	Fault
	remaining int // meaningful when Count > 0
}

// faultDecision is what the injected faults do to one request.
type faultDecision struct {
	latency time.Duration
	err     error
	failOp  bool
	// loseAnswer: carry the request out, then answer 503.
	loseAnswer bool
}

// decideFaults draws the effect of the injected faults on a call of method.
// Every matching rule adds its latency; the first error drawn wins. Rules
// with a count are used up by matching requests. Callers hold s.mu.
func (s *Server) decideFaults(method, project string) faultDecision {
	var d faultDecision
	kept := s.faults[:0]
	for _, r := range s.faults {
		if r.Method != "" && r.Method != method {
			kept = append(kept, r)
			continue
		}
		d.latency += r.Latency
		if d.err == nil && r.ServerErrorShare > 0 && s.rnd.Float64() < r.ServerErrorShare {
			if s.rnd.IntN(2) == 0 {
				d.err = errInternal()
			} else {
				d.err = errUnavailable()
			}
		}
		if d.err == nil && r.RateLimitShare > 0 && s.rnd.Float64() < r.RateLimitShare {
			d.err = errRateLimited(project)
		}
		if r.FailOperationShare > 0 && s.rnd.Float64() < r.FailOperationShare {
			d.failOp = true
		}
		if r.LoseAnswerShare > 0 && s.rnd.Float64() < r.LoseAnswerShare {
			d.loseAnswer = true
		}
		if r.Count > 0 {
			r.remaining--
			if r.remaining <= 0 {
				continue
			}
		}
		kept = append(kept, r)
	}
	clear(s.faults[len(kept):])
	s.faults = kept
	return d
}
