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

package budget

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/pause"
)

// Transport is an http.RoundTripper that passes every request, retries included,
// through a shared Window, and retries 429 answers, and 5xx answers and
// connection errors of requests that are the same sent twice (retryable).
type Transport struct {
	base http.RoundTripper
	// acquire is the window that admits the next attempt, and what to call
	// once it has (Windows counts the attempts waiting for a window).
	acquire  func() (*Window, func())
	attempts int
	backoff  time.Duration
	max      time.Duration
	sleep    func(context.Context, time.Duration) error
	observe  func(req *http.Request, code int, err error)
	// answerWait bounds how long a sent write's answer is awaited once its
	// caller has stopped waiting (send).
	answerWait time.Duration
}

// A TransportOption configures a Transport.
type TransportOption func(*Transport)

// WithRetries sets how many times a request is tried in all (at least 1), the first
// backoff and the longest one. Backoffs double from the first and are jittered.
func WithRetries(attempts int, first, longest time.Duration) TransportOption {
	return func(t *Transport) {
		t.attempts = max(attempts, 1)
		t.backoff, t.max = first, longest
	}
}

// WithSleep replaces how the transport waits between attempts, for tests.
func WithSleep(fn func(context.Context, time.Duration) error) TransportOption {
	return func(t *Transport) { t.sleep = fn }
}

// WithObserver is called after every attempt with the status code (0 when there is
// none) or the error, for metrics and logs.
func WithObserver(fn func(req *http.Request, code int, err error)) TransportOption {
	return func(t *Transport) { t.observe = fn }
}

// WithAnswerWait sets how long the answer to a write that was sent is
// awaited after its caller's context is done (see RoundTrip); 0 awaits none
// past it.
func WithAnswerWait(d time.Duration) TransportOption {
	return func(t *Transport) { t.answerWait = d }
}

// DefaultAnswerWait is how long a sent write's answer is awaited past its
// caller's deadline, unless WithAnswerWait says otherwise: Cloud SQL answers
// a write with an operation within seconds. It stays under the 30 s that
// crossplane-runtime's reconciler gives itself past an external call's
// deadline to record its outcome, with room for the controller's own record
// of it.
const DefaultAnswerWait = 20 * time.Second

// NewTransport sends requests through base (http.DefaultTransport when nil) within
// window. By default a request is tried 5 times with backoffs from 1s up to 30s.
func NewTransport(base http.RoundTripper, window *Window, o ...TransportOption) *Transport {
	return newTransport(base, func() (*Window, func()) { return window, func() {} }, o...)
}

func newTransport(base http.RoundTripper, acquire func() (*Window, func()), o ...TransportOption) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &Transport{base: base, acquire: acquire, attempts: 5, backoff: time.Second, max: 30 * time.Second, sleep: pause.For, answerWait: DefaultAnswerWait}
	for _, fn := range o {
		fn(t)
	}
	return t
}

// PerMinute is the limit of the window the transport sends within, per
// minute: what the pacing spaces observations to fit, so that the budget is
// configured in one place.
func (t *Transport) PerMinute() int {
	w, release := t.acquire()
	defer release()
	return w.PerMinute()
}

// Limited is a round tripper that sends within a request budget (a Transport,
// or one that wraps it and says so).
type Limited interface {
	PerMinute() int
}

// PerMinuteOf is the per-minute limit of the budget rt sends within; 0 when it
// sends within none.
func PerMinuteOf(rt http.RoundTripper) int {
	if l, ok := rt.(Limited); ok {
		return l.PerMinute()
	}
	return 0
}

// RoundTrip implements http.RoundTripper. The caller's context bounds the
// wait for the budget and between attempts; a write, once sent, is awaited
// for its answer past it (for at most the answer wait): Cloud SQL may carry
// out a write whose answer its caller stopped waiting for, and a caller cut
// off between the two would not learn of it (a login made with a password
// not recorded as set).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	// A body that cannot be replayed is sent once: retrying it would send nothing.
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		window, release := t.acquire()
		tag, _ := ctx.Value(namespaceKey{}).(*namespaceTag)
		by, admission := ctx.Value(admissionKey{}).(string)
		var (
			ended func()
			err   error
		)
		switch {
		case admission:
			ended, err = window.BeginAdmissionBy(ctx, by)
		case req.Method == http.MethodGet && ctx.Value(sharedKey{}) != nil:
			// A project's listing serves everyone: no namespace's.
			ended, err = window.BeginShared(ctx)
		default:
			a := ask{c: classWrite}
			if req.Method == http.MethodGet {
				a.c = classRead
			}
			if tag != nil {
				a.key = tag.ns
			}
			a.objects = forObjects(ctx)
			ended, err = window.begin(ctx, a)
		}
		release()
		if se := (*ShareError)(nil); tag != nil && errors.As(err, &se) {
			tag.refuse(se.Wait)
		}
		if err != nil {
			return nil, err
		}
		r := req
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(ctx)
			r.Body = body
		}
		if admission {
			// Cloud Audit Logs, and a benchmark counting them, tell the
			// admission checks from the controllers' calls.
			if r == req {
				r = req.Clone(ctx)
			}
			r.Header.Set(RequestReasonHeader, AdmissionReason)
		}
		resp, err := t.send(r)
		// Its answer (or error) came: Cloud SQL counted it by now.
		ended()
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		if t.observe != nil {
			t.observe(req, code, err)
		}
		if !retryable(req, code, err) || attempt >= t.attempts || !replayable {
			return resp, err
		}
		wait := t.delay(attempt, resp)
		if resp != nil {
			// Drain so that the connection can be reused.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			_ = resp.Body.Close()
		}
		if err := t.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// send sends one attempt. A write's attempt goes out with a context that
// its caller's cancellation does not cut, bounded by the answer wait from
// when the caller's context is done; the bound ends once the answer's body
// is closed.
func (t *Transport) send(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == "" || t.answerWait <= 0 {
		return t.base.RoundTrip(r)
	}
	parent := r.Context()
	if err := parent.Err(); err != nil {
		// Its caller gave up before it went out: it is not sent.
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	stop := context.AfterFunc(parent, func() {
		timer := time.AfterFunc(t.answerWait, cancel)
		// Ended with the answer: no timer outlives it.
		context.AfterFunc(ctx, func() { timer.Stop() })
	})
	end := func() {
		stop()
		cancel()
	}
	resp, err := t.base.RoundTrip(r.WithContext(ctx))
	if err != nil || resp == nil || resp.Body == nil {
		end()
		return resp, err
	}
	resp.Body = &endOnClose{ReadCloser: resp.Body, end: end}
	return resp, nil
}

// endOnClose ends a write's answer wait when its body is closed.
type endOnClose struct {
	io.ReadCloser
	end  func()
	once sync.Once
}

func (b *endOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}

// delay is the jittered exponential backoff for an attempt, or the server's
// Retry-After when it asks for longer.
func (t *Transport) delay(attempt int, resp *http.Response) time.Duration {
	d := t.backoff << (attempt - 1)
	if d > t.max || d <= 0 {
		d = t.max
	}
	// Full jitter in [d/2, d): retries from many reconciles spread out.
	d = d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
	if resp != nil {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && time.Duration(s)*time.Second > d {
			d = min(time.Duration(s)*time.Second, t.max)
		}
	}
	return d
}

// retryable says whether an attempt of req that ended with code or err is
// tried again. A 429, or a connection that was never made (to Cloud SQL or
// to an egress proxy), carried nothing out. Other server errors and lost
// connections may have: a request that is the same sent twice as once
// (every method but POST, and the connector's certificate requests) is
// tried again; an insert is not, for its retry would find what the first
// made and could not tell it from what someone else made. Its caller learns
// of the error, and looks again before it inserts again.
func retryable(req *http.Request, code int, err error) bool {
	var op *net.OpError
	switch {
	case code == http.StatusTooManyRequests, errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect"):
		return true
	case req.Method == http.MethodPost && !strings.HasSuffix(req.URL.Path, certificatePathSuffix):
		return false
	case err != nil:
		// A cancelled context is checked by Wait and sleep.
		return true
	}
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// certificatePathSuffix ends the path of generateEphemeralCert, a POST that
// makes nothing to find again: a second certificate serves as the first.
const certificatePathSuffix = ":generateEphemeralCert"

type admissionKey struct{}

type sharedKey struct{}

// ForEveryone marks the reads made with ctx as serving admission checks as
// well as the controllers (Window.WaitShared): a one-page listing of a
// project, which answers the name checks of the webhook while it is recent.
func ForEveryone(ctx context.Context) context.Context {
	return context.WithValue(ctx, sharedKey{}, true)
}

// NotForAdmission unmarks ctx (ForAdmission): its calls draw on the budget as
// the controllers' do. An admission webhook starts a listing of many pages so,
// which would otherwise take the reserve that its one-request lookups need.
func NotForAdmission(ctx context.Context) context.Context {
	return context.WithValue(ctx, admissionKey{}, nil)
}

// RequestReasonHeader is Google APIs' system parameter that Cloud Audit Logs
// show as a request's reason.
const RequestReasonHeader = "X-Goog-Request-Reason"

// AdmissionReason is the reason the admission webhook's lookups give.
const AdmissionReason = "provider-cloudsql-postgres admission check"

// ForAdmission marks the calls made with ctx as an admission webhook's lookups,
// which draw on a reserve of the budget that the controllers leave alone: a
// check made while someone waits for kubectl must not queue behind polling.
func ForAdmission(ctx context.Context) context.Context { return ForAdmissionBy(ctx, "") }

// ForAdmissionBy is ForAdmission for the lookups of an object of namespace ns
// (empty for a cluster-scoped one), which share the reserve with other
// namespaces' (budget.WithAdmissionPerKey).
func ForAdmissionBy(ctx context.Context, ns string) context.Context {
	return context.WithValue(ctx, admissionKey{}, ns)
}

type namespaceKey struct{}

// A namespaceTag is what ForNamespace puts in a context: the namespace, and
// the longest wait of the requests refused for its share.
type namespaceTag struct {
	ns   string
	mu   sync.Mutex
	wait time.Duration
}

func (t *namespaceTag) refuse(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.wait = max(t.wait, d)
}

func (t *namespaceTag) refused() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wait
}

// ForNamespace marks the calls made with ctx as made for an object of
// namespace ns: a window with namespace shares (WithNamespaceShares, the
// platform's) counts them in ns's share, and refuses them with a *ShareError
// once ns has spent it, at once rather than in a worker that the platform's
// objects need. refused is the longest wait of the calls refused so far (0:
// none), when the object should come back. An empty ns (a cluster-scoped
// object, the platform's) marks nothing; a tenant's own window (Windows) has
// no shares, and counts the calls as any other.
func ForNamespace(ctx context.Context, ns string) (_ context.Context, refused func() time.Duration) {
	if ns == "" {
		return ctx, func() time.Duration { return 0 }
	}
	t := &namespaceTag{ns: ns}
	return context.WithValue(ctx, namespaceKey{}, t), t.refused
}
