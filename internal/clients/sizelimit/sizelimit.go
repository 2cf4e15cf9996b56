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

// Package sizelimit bounds the answers of the Cloud SQL Admin API, and of the
// token endpoints behind it, in an http.RoundTripper: an endpoint that answers
// with an endless body must cost the provider an error, not its memory. The
// clients read error bodies whole and decode pages whole, so without a bound
// one answer is as large as whoever serves the endpoint wants.
package sizelimit

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Default limits. Cloud SQL's error bodies are a few hundred bytes. Its
// largest success bodies are pages of instances.list, up to 500 instances: a
// page of 500 instances with 20 labels, 20 authorized networks, backups, a
// maintenance window and certificates is 2.7 MB from the emulator (5.5 KB an
// instance), so 16 MiB leaves room for six times that.
const (
	DefaultErrorLimit int64 = 64 << 10
	DefaultLimit      int64 = 16 << 20
)

const errTooLarge = "the answer of %s (HTTP %d) is larger than %d bytes, more than the Cloud SQL Admin API ever sends: the provider stopped reading it; check that the provider configuration's spec.endpoint names a Cloud SQL Admin API"

// A Transport bounds the body of every answer that base returns: error
// answers (status 400 or more) are read at once up to their limit, and the
// bodies of other answers fail with an error once they pass theirs.
type Transport struct {
	base       http.RoundTripper
	limit      int64
	errorLimit int64
}

// An Option configures a Transport.
type Option func(*Transport)

// WithLimits sets the largest success body and the largest error body, in
// bytes (the defaults otherwise).
func WithLimits(success, failure int64) Option {
	return func(t *Transport) { t.limit, t.errorLimit = success, failure }
}

// New bounds the answers of base (http.DefaultTransport when nil).
func New(base http.RoundTripper, o ...Option) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &Transport{base: base, limit: DefaultLimit, errorLimit: DefaultErrorLimit}
	for _, fn := range o {
		fn(t)
	}
	return t
}

// TooLarge reports whether err says that an answer passed its limit.
func TooLarge(err error) bool {
	var e *tooLargeError
	return errors.As(err, &e)
}

type tooLargeError struct {
	endpoint string
	code     int
	limit    int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf(errTooLarge, e.endpoint, e.code, e.limit)
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	tooLarge := &tooLargeError{endpoint: endpoint(req.URL), code: resp.StatusCode, limit: t.limit}
	if resp.StatusCode >= http.StatusBadRequest {
		// Read now, so that the client's own reading of it (googleapi reads
		// error bodies whole) never sees more than the limit, and a body that
		// passes it fails the request with an error saying so rather than
		// with a cut body that looks like the server's own message.
		tooLarge.limit = t.errorLimit
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, t.errorLimit+1))
		_ = resp.Body.Close()
		if rerr != nil {
			return nil, rerr
		}
		if int64(len(b)) > t.errorLimit {
			return nil, tooLarge
		}
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		return resp, nil
	}
	if resp.ContentLength > t.limit {
		_ = resp.Body.Close()
		return nil, tooLarge
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.limit, err: tooLarge}
	return resp, nil
}

// endpoint is u without its query, which may hold page tokens and filters.
func endpoint(u *url.URL) string {
	if u == nil {
		return "?"
	}
	v := *u
	v.RawQuery, v.Fragment, v.User = "", "", nil
	return v.String()
}

// limitedBody fails with err once more than left bytes were read.
type limitedBody struct {
	io.ReadCloser
	left int64
	err  error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	// One byte more than allowed tells a body that ends at the limit from
	// one that goes on.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n - int(-b.left), b.err
	}
	return n, err
}
