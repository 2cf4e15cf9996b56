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

package integration_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// An endpoint that answers with a long error puts at most about
// cloudsql.MaxMessage bytes of it into the Synced condition, marked as cut.
func TestLongErrorsAreCutInConditions(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error":{"code":403,"message":"` + strings.Repeat("forbidden ", 3000) + `"}}`))
	}))
	t.Cleanup(srv.Close)
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: h.pc + "-long"}, Spec: h.providerConfigSpec()}
	pc.Spec.Endpoint = srv.URL
	h.g.Expect(env.Client.Create(h.ctx, pc)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(h.ctx, pc) })

	h.g.Expect(env.Client.Create(h.ctx, h.instance("long", func(pi *v1alpha1.PostgresqlInstance) {
		pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: pc.Name}
	}))).To(Succeed())
	h.g.Eventually(func(g Gomega) {
		c := h.of(cluster).condition("long", xpv2.TypeSynced)
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(c.Message).To(And(ContainSubstring("forbidden forbidden"), ContainSubstring("more bytes cut]")))
		g.Expect(len(c.Message)).To(BeNumerically("<=", cloudsql.MaxMessage+100), "the condition holds about MaxMessage bytes of error")
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
}

// A team's external_account key is refused by the controller too, with the
// same message as at admission, and nothing is sent.
func TestTenantExternalAccountKeyIsRefused(t *testing.T) {
	h := newHarness(t)
	a := h.of(teamA)
	ns := teamA.namespace(h)
	h.g.Expect(env.Client.Create(h.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wif"},
		Data: map[string][]byte{"key.json": []byte(`{"type":"external_account","audience":"x","token_url":"http://127.0.0.1:1/token",` +
			`"credential_source":{"url":"http://169.254.169.254/computeMetadata/v1/token"}}`)},
	})).To(Succeed())
	pc := &nsv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wif"}, Spec: nsv1alpha1.ProviderConfigSpec{
		Project: h.providerConfigSpec().Project,
		Credentials: nsv1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret,
			SecretRef: &xpv2.LocalSecretKeySelector{LocalSecretReference: xpv2.LocalSecretReference{Name: "wif"}, Key: "key.json"}},
	}}
	h.g.Expect(env.Client.Create(h.ctx, pc)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(h.ctx, pc) })

	h.g.Expect(env.Client.Create(h.ctx, a.instance("orders", func(p object) {
		p.(*nsv1alpha1.PostgresqlInstance).Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "wif"}
	}))).To(Succeed())
	h.g.Eventually(func() xpv2.Condition { return a.condition("orders", xpv2.TypeSynced) }, 30*time.Second, 50*time.Millisecond).Should(And(
		HaveField("Status", corev1.ConditionFalse),
		HaveField("Message", And(
			ContainSubstring(`ProviderConfig "wif" of namespace `+ns+`: key "key.json" of secret `+ns+`/wif has type "external_account"`),
			ContainSubstring("a namespaced ProviderConfig may only hold a service-account key"),
		)),
	))
	h.g.Expect(h.requests()).To(Equal(0))
}

// A team whose namespaced ProviderConfig spends its whole request budget does
// not delay the platform's instances: each tenant configuration has a window
// of its own (budget.Windows; TestWindowsKeepEachKeyApart shows that teams'
// windows are apart too).
func TestTenantSpendingLeavesThePlatformsBudgetAlone(t *testing.T) {
	// 20 a minute: reads stop at 16, writes at 18, one a second at most. Busy
	// instances are polled every 3 s, so that the platform's instance, polled
	// with instances.get until it is Ready (observe = "get"), needs far less
	// than its own window on a slow machine too.
	h := newHarness(t, withBudget(20), withIntervals(time.Minute, 3*time.Second))
	busy := h.of(namespacedKind{team: "busy", local: true})
	var names []string
	// One insert each is more than the window's 18 writes.
	for i := range 24 {
		name := fmt.Sprintf("busy-%d", i)
		names = append(names, name)
		h.g.Expect(env.Client.Create(h.ctx, busy.instance(name))).To(Succeed())
	}
	// The busy team's creates take more than its window holds: they stop
	// (so far every request is theirs) until it moves on, a minute after
	// their first.
	last, since := -1, time.Now()
	h.g.Eventually(func() time.Duration {
		if n := h.requests(); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since)
	}, 60*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 3*time.Second))
	t.Logf("the busy team sent %d requests, then waited for its window", last)
	h.g.Expect(last).To(BeNumerically(">=", 12))

	start := time.Now()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// What spent the platform's window, if it ran out.
		for _, r := range h.emu.Requests() {
			if r.Project == h.project && (r.Instance == "platform" || r.Method == "instances.list") {
				t.Logf("%s %s %s %d", r.Time.Format("15:04:05.000"), r.Method, r.Instance, r.Status)
			}
		}
	})
	h.create(h.instance("platform"))
	// A shared window would have held the platform's requests until a minute
	// after the busy team's first: every one of them came before.
	first, platformLast := platformRequests(h)
	h.g.Expect(platformLast).To(BeTemporally("<", first.Add(time.Minute)), "the platform's instance waited for the busy team's window")
	t.Logf("the platform's instance was Ready %s after the busy team spent its window", time.Since(start).Round(100*time.Millisecond))

	ready := 0
	for _, n := range names {
		if busy.condition(n, xpv2.TypeReady).Status == corev1.ConditionTrue {
			ready++
		}
	}
	h.g.Expect(ready).To(BeNumerically("<", len(names)), "the busy team's window was spent meanwhile")
}

// platformRequests are when the test's first request arrived (the busy
// team's) and the last for the instance named platform.
func platformRequests(h *harness) (first, last time.Time) {
	for _, r := range h.emu.Requests() {
		if r.Project != h.project {
			continue
		}
		if first.IsZero() || r.Time.Before(first) {
			first = r.Time
		}
		if r.Instance == "platform" && r.Time.After(last) {
			last = r.Time
		}
	}
	return first, last
}
