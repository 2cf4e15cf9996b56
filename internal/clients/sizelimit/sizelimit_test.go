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

package sizelimit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTransport(t *testing.T) {
	type want struct {
		Body     string
		TooLarge bool
		// Err is a part of the error, which RoundTrip or reading the body returns.
		Err string
	}
	cases := map[string]struct {
		reason string
		code   int
		body   string
		length bool // send a Content-Length
		want   want
	}{
		"SuccessWithin":    {reason: "A body up to the limit is read whole.", code: 200, body: strings.Repeat("a", 10), want: want{Body: strings.Repeat("a", 10)}},
		"SuccessTooLarge":  {reason: "A body past the limit fails once the limit is passed, naming the endpoint.", code: 200, body: strings.Repeat("a", 11), want: want{TooLarge: true, Err: "/sql/v1beta4/projects/p/instances (HTTP 200) is larger than 10 bytes"}},
		"SuccessLengthBig": {reason: "A Content-Length past the limit fails at once.", code: 200, body: strings.Repeat("a", 11), length: true, want: want{TooLarge: true, Err: "larger than 10 bytes"}},
		"ErrorWithin":      {reason: "An error body up to its limit is passed on whole.", code: 403, body: strings.Repeat("e", 5), want: want{Body: "eeeee"}},
		"ErrorTooLarge":    {reason: "An error body past its limit fails the request, naming the endpoint and status.", code: 500, body: strings.Repeat("e", 6), want: want{TooLarge: true, Err: "(HTTP 500) is larger than 5 bytes"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.length {
					w.Header().Set("Content-Length", strconv.Itoa(len(tc.body)))
				}
				w.WriteHeader(tc.code)
				if !tc.length {
					w.(http.Flusher).Flush() // chunked: no Content-Length
				}
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c := &http.Client{Transport: New(nil, WithLimits(10, 5))}
			var got want
			resp, err := c.Get(srv.URL + "/sql/v1beta4/projects/p/instances?pageToken=t")
			if err == nil {
				var b []byte
				b, err = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				got.Body = string(b)
				if err != nil {
					got.Body = ""
				}
			}
			if err != nil {
				got.TooLarge = TooLarge(err)
				got.Err = err.Error()
				if strings.Contains(got.Err, tc.want.Err) {
					got.Err = tc.want.Err
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
