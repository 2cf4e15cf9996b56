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

package auth

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/sizelimit"
)

// huge is how much an endpoint of a tenant's answers: far more than any
// answer of Cloud SQL, streamed so that the test itself holds none of it.
const huge = 100 << 20

// An endlessAnswer answers with status code: prefix, then filler up to huge
// bytes, written a chunk at a time (a JSON value that never ends), and counts
// what it managed to send before the client stopped reading.
type endlessAnswer struct {
	code           int
	prefix, filler string
	sent           atomic.Int64
}

func endless(code int, prefix, filler string) *endlessAnswer {
	return &endlessAnswer{code: code, prefix: prefix, filler: filler}
}

func (e *endlessAnswer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	chunk := bytes.Repeat([]byte(e.filler), (64<<10)/len(e.filler))
	_, _ = w.Write([]byte(e.prefix))
	for sent := 0; sent < huge; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return // the client stopped reading
		}
		e.sent.Add(int64(len(chunk)))
	}
}

// Every answer a client of NewService reads is bounded: a 100 MiB page, instance
// or error fails with an error that says it was too large and where from, and
// the provider stops reading it soon after the limit (what it reads, it holds).
func TestNewServiceBoundsAnswers(t *testing.T) {
	cases := map[string]struct {
		reason  string
		handler *endlessAnswer
		call    func(svcCall) error
	}{
		"Get": {reason: "An instance of 100 MiB.", handler: endless(http.StatusOK, `{"name":"`, "a"),
			call: func(c svcCall) error { return c.get() }},
		"List": {reason: "A page of instances without end.", handler: endless(http.StatusOK, `{"items":[`, `{"name":"x"},`),
			call: func(c svcCall) error { return c.list() }},
		"ErrorBadRequest": {reason: "An error body of 100 MiB, which the client reads whole.", handler: endless(http.StatusBadRequest, `{"error":{"message":"`, "x"),
			call: func(c svcCall) error { return c.get() }},
		"ErrorServer": {reason: "A 500 of 100 MiB.", handler: endless(http.StatusInternalServerError, `{"error":{"message":"`, "x"),
			call: func(c svcCall) error { return c.list() }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			svc, err := NewService(Credentials{Source: xpv2.CredentialsSourceNone}, srv.URL, nil)
			g.Expect(err).ToNot(HaveOccurred())

			err = tc.call(svcCall{svc: svc})
			srv.Close() // waits for the handler, which ends once the client hangs up

			g.Expect(err).To(HaveOccurred(), tc.reason)
			g.Expect(sizelimit.TooLarge(err)).To(BeTrue(), "%s: %v", tc.reason, err)
			g.Expect(err.Error()).To(ContainSubstring("the answer of " + srv.URL + "/sql/v1beta4/projects/p/instances"))
			g.Expect(err.Error()).To(ContainSubstring("is larger than"))
			// Beyond the limit only what the connection's buffers held was
			// sent: far from the whole answer, which an unbounded read takes.
			sent := tc.handler.sent.Load()
			g.Expect(sent).To(BeNumerically("<", 2*sizelimit.DefaultLimit), "%s: %d MiB sent before the client stopped reading", tc.reason, sent>>20)
		})
	}
}

// svcCall makes the calls the provider makes.
type svcCall struct{ svc *sqladmin.Service }

func (c svcCall) get() error {
	_, err := c.svc.Instances.Get("p", "instances").Do()
	return err
}

func (c svcCall) list() error {
	_, err := c.svc.Instances.List("p").MaxResults(500).Do()
	return err
}
