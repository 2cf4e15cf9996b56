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
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// sharedWindow is a window of 20 a minute whose namespaces may use 5 each
// and 10 together, with 2 for admission lookups, on clk.
func sharedWindow(clk *fakeClock, shares bool) *Window {
	o := []WindowOption{WithClock(clk.Now, clk.Sleep), WithAdmissionReserve(0.1)}
	if shares {
		o = append(o, WithNamespaceShares(0.25, 0.5))
	}
	return NewWindow(20, time.Minute, o...)
}

func TestNamespaceShares(t *testing.T) {
	type spend struct {
		n int
		a ask
	}
	type want struct {
		refused bool
		all     bool
		wait    time.Duration
	}
	write := func(ns string) ask { return ask{c: classWrite, key: ns} }
	cases := map[string]struct {
		reason   string
		noShares bool
		// before are admitted first, a second apart, each at once.
		before  []spend
		advance time.Duration
		ask     ask
		want    want
	}{
		"WithinItsShare": {
			reason: "a namespace's fifth request of the minute is within its share",
			before: []spend{{4, write("team-a")}},
			ask:    write("team-a"),
		},
		"OverItsShare": {
			reason: "a namespace's sixth request is refused until its first leaves the minute",
			before: []spend{{5, write("team-a")}},
			ask:    write("team-a"),
			want:   want{refused: true, wait: 55 * time.Second},
		},
		"ReadsCountToo": {
			reason: "a namespace's reads spend its share as its writes do",
			before: []spend{{5, ask{c: classRead, key: "team-a"}}},
			ask:    ask{c: classRead, key: "team-a"},
			want:   want{refused: true, wait: 55 * time.Second},
		},
		"ThePlatformKeepsItsPace": {
			reason: "the cluster-scoped objects' requests are bounded by the window alone",
			before: []spend{{5, write("team-a")}, {12, write("")}},
			ask:    write(""),
		},
		"AnotherNamespaceHasItsOwnShare": {
			reason: "one namespace's spent share refuses nothing of another's",
			before: []spend{{5, write("team-a")}},
			ask:    write("team-b"),
		},
		"EveryNamespaceTogether": {
			reason: "the namespaces together use at most half of the window",
			before: []spend{{5, write("team-a")}, {5, write("team-b")}},
			ask:    write("team-c"),
			want:   want{refused: true, all: true, wait: 50 * time.Second},
		},
		"AdmissionLookupsAreApart": {
			reason: "admission lookups spend their own reserve, not the namespace's share of the controllers'",
			before: []spend{{2, ask{c: classLookup, key: "team-a"}}, {4, write("team-a")}},
			ask:    write("team-a"),
		},
		"TheShareFreesWithTheMinute": {
			reason:  "a minute after its requests, a namespace has its share again",
			before:  []spend{{5, write("team-a")}},
			advance: time.Minute,
			ask:     write("team-a"),
		},
		"NoSharesNoRefusal": {
			reason:   "a window without shares (a tenant configuration's own) counts a namespace's requests as any",
			noShares: true,
			before:   []spend{{15, write("team-a")}},
			ask:      write("team-a"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			clk := &fakeClock{now: time.Unix(1000, 0)}
			w := sharedWindow(clk, !tc.noShares)
			for _, s := range tc.before {
				for range s.n {
					_, d, err := w.admit(s.a)
					g.Expect(err).NotTo(HaveOccurred(), tc.reason)
					g.Expect(d).To(BeZero(), tc.reason)
					clk.now = clk.now.Add(time.Second)
				}
			}
			clk.now = clk.now.Add(tc.advance)
			_, d, err := w.admit(tc.ask)
			if !tc.want.refused {
				g.Expect(err).NotTo(HaveOccurred(), tc.reason)
				g.Expect(d).To(BeZero(), tc.reason)
				return
			}
			var se *ShareError
			g.Expect(err).To(BeAssignableToTypeOf(se), tc.reason)
			se = err.(*ShareError)
			g.Expect(se.All).To(Equal(tc.want.all), tc.reason)
			g.Expect(se.Wait).To(Equal(tc.want.wait), tc.reason)
			g.Expect(se.Namespace).To(Equal(tc.ask.key))
			g.Expect(err).To(MatchError(ErrSpent))
		})
	}
}

// Fifty objects refused together come back one share's pace apart (a
// minute over 5), not all when the share frees: each return is a reconcile.
func TestRefusedObjectsComeBackOneByOne(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	w := sharedWindow(clk, true)
	for range 5 {
		_, _, err := w.admit(ask{c: classWrite, key: "team-a"})
		g.Expect(err).NotTo(HaveOccurred())
	}
	var waits []time.Duration
	for range 3 {
		_, _, err := w.admit(ask{c: classWrite, key: "team-a"})
		g.Expect(err).To(MatchError(ErrSpent))
		waits = append(waits, err.(*ShareError).Wait)
	}
	g.Expect(waits).To(Equal([]time.Duration{time.Minute, time.Minute + 12*time.Second, time.Minute + 24*time.Second}))

	// Another namespace's line is its own.
	_, _, err := w.admit(ask{c: classWrite, key: "team-b"})
	g.Expect(err).NotTo(HaveOccurred())
	// Once the times told have passed, the line starts again.
	clk.now = clk.now.Add(2 * time.Minute)
	g.Expect(w.comeBack).To(HaveKey("team-a"))
	for range 5 {
		_, _, err := w.admit(ask{c: classWrite, key: "team-a"})
		g.Expect(err).NotTo(HaveOccurred())
	}
	_, _, err = w.admit(ask{c: classWrite, key: "team-a"})
	g.Expect(err.(*ShareError).Wait).To(Equal(time.Minute))
	g.Expect(w.comeBack).To(HaveLen(1), "team-b's line was not kept")
}

// Replicas that share one record (budgetlease) keep each namespace's share
// across all of them, as they keep the admission shares: a new leader counts
// what each namespace spent under the previous one, once each however often
// merged.
func TestReplicasShareTheNamespaceShares(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	a, b := sharedWindow(clk, true), sharedWindow(clk, true)
	for range 4 {
		_, _, err := a.admit(ask{c: classWrite, key: "team-a"})
		g.Expect(err).NotTo(HaveOccurred())
	}
	_, _, err := a.admit(ask{c: classWrite})
	g.Expect(err).NotTo(HaveOccurred())
	clk.now = clk.now.Add(time.Second)
	r := a.Record()
	g.Expect(r.Admitted).To(HaveLen(5))
	g.Expect(r.Namespaced).To(HaveLen(4), "the platform's request is no namespace's")
	b.Merge(r)
	b.Merge(r)
	a.Merge(b.Record())
	g.Expect(b.Record().Namespaced).To(HaveLen(4), "the same record merged twice counts once")
	g.Expect(a.Record().Namespaced).To(HaveLen(4), "a's own requests, back in b's record, count once")

	_, _, err = b.admit(ask{c: classWrite, key: "team-a"})
	g.Expect(err).NotTo(HaveOccurred(), "team-a's fifth")
	_, _, err = b.admit(ask{c: classWrite, key: "team-a"})
	g.Expect(err).To(MatchError(ErrSpent), "team-a spent its share at the other replica")

	fresh := sharedWindow(clk, true)
	fresh.Restore(b.Record(), 0)
	_, _, err = fresh.admit(ask{c: classWrite, key: "team-a"})
	g.Expect(err).To(MatchError(ErrSpent), "a new leader counts what team-a spent before it")
}

// A request refused for its namespace's share is not sent, says why and when,
// and tells the caller when its object should come back.
func TestForNamespaceRefusesWithoutSending(t *testing.T) {
	g := NewWithT(t)
	// 5 a second: no request waits for the burst bound.
	w := PerMinute(100, WithNamespaceShares(0.05, 0.5))
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { sent.Add(1) }))
	defer srv.Close()
	c := &http.Client{Transport: NewTransport(nil, w)}
	post := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, http.NoBody)
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := c.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	for range 5 {
		ctx, refused := ForNamespace(context.Background(), "team-a")
		g.Expect(post(ctx)).To(Succeed())
		g.Expect(refused()).To(BeZero())
	}
	ctx, refused := ForNamespace(context.Background(), "team-a")
	err := post(ctx)
	g.Expect(err).To(MatchError(ErrSpent))
	g.Expect(err).To(MatchError(ContainSubstring("namespace team-a has spent its share of the platform's Cloud SQL request budget " +
		"(5 of cloudsql.requests_per_minute = 100: cloudsql.namespace_share = 0.05)")))
	g.Expect(refused()).To(BeNumerically(">", 50*time.Second))
	g.Expect(sent.Load()).To(Equal(int64(5)), "the refused request was not sent")

	// The platform's still go.
	g.Expect(post(context.Background())).To(Succeed())
	g.Expect(sent.Load()).To(Equal(int64(6)))
}
