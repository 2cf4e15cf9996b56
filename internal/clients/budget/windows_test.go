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
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestWindowsKeepEachKeyApart: a tenant configuration that spends its whole
// window delays neither another's requests nor those of the platform's window.
func TestWindowsKeepEachKeyApart(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(srv.Close)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	newWindow := func() *Window { return NewWindow(3, time.Minute, WithClock(clk.Now, clk.Sleep)) }
	ws := NewWindows(newWindow)
	platform := &http.Client{Transport: NewTransport(nil, newWindow())}
	teamA := &http.Client{Transport: ws.Transport("ProviderConfig/team-a/pc")}
	// Another client of the same configuration (the webhook's, say) shares its window.
	teamAAgain := &http.Client{Transport: ws.Transport("ProviderConfig/team-a/pc")}
	teamB := &http.Client{Transport: ws.Transport("ProviderConfig/team-b/pc")}
	start := clk.Now()

	send := func(c *http.Client) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, http.NoBody)
		g.Expect(err).ToNot(HaveOccurred())
		resp, err := c.Do(req)
		g.Expect(err).ToNot(HaveOccurred())
		g.Expect(resp.Body.Close()).To(Succeed())
	}
	for range 3 {
		send(teamA)
	}
	g.Expect(clk.Now()).To(Equal(start), "team-a's three fit its window")
	for range 3 {
		send(teamB)
		send(platform)
	}
	g.Expect(clk.Now()).To(Equal(start), "team-a's spent window delays neither team-b nor the platform")
	g.Expect(ws.Len()).To(Equal(2))

	send(teamAAgain)
	g.Expect(clk.Now()).To(Equal(start.Add(time.Minute)), "every client of team-a's configuration waits for its one window")
}

// TestWindowsDropIdleWindows: the window of a configuration that sent nothing
// for a period is dropped when another's is made, unless a request waits for
// it, and the configuration then starts afresh, as its old window would have.
func TestWindowsDropIdleWindows(t *testing.T) {
	g := NewWithT(t)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	ws := NewWindows(func() *Window { return NewWindow(2, time.Minute, WithClock(clk.Now, clk.Sleep)) })
	ctx := context.Background()

	a, release := ws.acquire("a")
	g.Expect(a.Wait(ctx)).To(Succeed())
	release()
	b, release := ws.acquire("b")
	g.Expect(b.Wait(ctx)).To(Succeed())
	release()
	g.Expect(ws.Len()).To(Equal(2))

	// Half a period on, both still count what they admitted.
	clk.now = clk.now.Add(30 * time.Second)
	_, release = ws.acquire("c")
	release()
	g.Expect(ws.Len()).To(Equal(3), "windows that admitted within the period are kept")

	// A period on, a and b hold nothing; but a request waits for a.
	clk.now = clk.now.Add(31 * time.Second)
	held, releaseA := ws.acquire("a")
	g.Expect(held).To(BeIdenticalTo(a))
	_, release = ws.acquire("d")
	release()
	g.Expect(ws.Len()).To(Equal(2), "b and c (which never admitted) are dropped; a, waited for, is kept; d is new")
	_, release = ws.acquire("b")
	release()
	releaseA()

	// Once nobody waits, a goes with the next new window.
	clk.now = clk.now.Add(2 * time.Minute)
	_, release = ws.acquire("e")
	release()
	g.Expect(ws.Len()).To(Equal(1), "every idle window is dropped")
	fresh, release := ws.acquire("a")
	release()
	g.Expect(fresh).ToNot(BeIdenticalTo(a))
	g.Expect(fresh.Wait(ctx)).To(Succeed())
	g.Expect(fresh.Wait(ctx)).To(Succeed())
	g.Expect(clk.slept).To(BeEmpty(), "a new window admits its whole limit")
}
