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

package controller_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
)

const (
	// smallBudget is the platform's requests_per_minute in the budget test:
	// small enough that 50 logins would fill it for minutes.
	smallBudget = 20
	// teamUsers is how many logins the team creates at once.
	teamUsers = 50
	// sharedBound is how much longer than without the team's load a change
	// of a platform instance may take with it: the share leaves the
	// platform most of the window, so it takes about as long; without the
	// share it waits for the window, ten times as long and more.
	sharedBound = 3
)

// startBudgeted replaces w's controllers with controllers whose platform
// window admits rpm requests a minute, of which one namespace may use one
// and every namespace all (1, 1: no shares), wired as cmd/provider wires
// them at its default reconcile rate and workers.
func (w *world) startBudgeted(rpm int, one, all float64) {
	w.t.Helper()
	w.stop()
	retries := budget.WithRetries(2, 10*time.Millisecond, 100*time.Millisecond)
	var shares []budget.WindowOption
	if one < 1 || all < 1 {
		shares = append(shares, budget.WithNamespaceShares(one, all))
	}
	o := core.Options{
		Options: controller.Options{
			Logger:                  testLogger(),
			GlobalRateLimiter:       ratelimiter.NewGlobal(10),
			PollInterval:            poll,
			MaxConcurrentReconciles: 40,
			Features:                &feature.Flags{},
		},
		Transport:        budget.NewTransport(nil, budget.PerMinute(rpm, shares...), retries),
		TenantTransport:  budget.NewWindows(func() *budget.Window { return budget.PerMinute(rpm) }, retries).Transport,
		BusyPollInterval: 200 * time.Millisecond,
		// Daily, so that a health read almost never falls into a count.
		BackupHealthInterval: 24 * time.Hour,
		Timeout:              wait,
		MaxReconcileRate:     10,
		NamespacedEndpoints:  []string{w.url + "/"},
		KeyTokenURI:          true,
	}
	w.run(o)
}

// relabel sets label round of pi to value and returns how long it took until
// Cloud SQL has it and pi is Ready, and Synced at its new generation.
func (w *world) relabel(pi *v1alpha1.PostgresqlInstance, value string) time.Duration {
	w.t.Helper()
	begin := time.Now()
	w.g.Eventually(func() error {
		if err := env.Client.Get(w.ctx, client.ObjectKeyFromObject(pi), pi); err != nil {
			return err
		}
		pi.Spec.ForProvider.Labels = map[string]v1alpha1.LabelValue{"round": v1alpha1.LabelValue(value)}
		return env.Client.Update(w.ctx, pi)
	}, wait, 100*time.Millisecond).Should(Succeed())
	w.g.Eventually(func(g Gomega) {
		ci, err := w.emu.Instance(w.project, pi.Name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ci.Settings.UserLabels).To(HaveKeyWithValue("round", value))
		g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(pi), pi)).To(Succeed())
		synced, ready := pi.GetCondition(xpv2.TypeSynced), pi.GetCondition(xpv2.TypeReady)
		g.Expect(synced.Status).To(Equal(corev1.ConditionTrue), "%+v", synced)
		g.Expect(synced.ObservedGeneration).To(Equal(pi.Generation), "%+v", synced)
		g.Expect(ready.Status).To(Equal(corev1.ConditionTrue), "%+v", ready)
	}, 2*time.Minute, 50*time.Millisecond).Should(Succeed())
	return time.Since(begin)
}

// teamRequests are the arrival times of the requests made for the team's
// logins on instance (no other object has any): its listings of users, its
// logins' inserts and updates, the certificates of its SQL sessions.
func (w *world) teamRequests(instance string) []time.Time {
	var out []time.Time
	for _, r := range w.emu.Requests() {
		if r.Project == w.project && r.Instance == instance && (strings.HasPrefix(r.Method, "users.") || strings.HasPrefix(r.Method, "connect.")) {
			out = append(out, r.Time)
		}
	}
	return out
}

// busiestMinute is the most of times (oldest first) within any minute.
func busiestMinute(times []time.Time) int {
	most := 0
	for i := range times {
		j := i
		for j < len(times) && times[j].Sub(times[i]) < time.Minute {
			j++
		}
		most = max(most, j-i)
	}
	return most
}

// A team that creates 50 logins at once on a cluster-scoped instance, at 20
// requests a minute, spends its namespace's share of the platform's budget,
// not the budget: a change of another platform instance meanwhile takes
// about as long as it takes without the team's load (measured first, in the
// same test, so that the bound is a ratio, not a time), the team's logins
// wait with a condition that says why and until when, and the team's
// requests stay within its share.
//
// The instances are made before the small budget applies (a provider that
// starts with them), and the two changes are a window apart, so that each
// finds in the window the platform's polls alone, and the team's requests
// besides for the second. BUDGET_SHARES=off runs it without shares (it then
// fails the bound: the change then waits minutes for the team's workers);
// BUDGET_LOG=1 lists the requests.
func TestATeamsBurstLeavesThePlatformItsPace(t *testing.T) {
	if os.Getenv("OBSERVE") == "get" {
		// About 80 s, mostly waiting for the window; this package observes
		// with instances.get whatever OBSERVE says, so make test's second
		// run would only repeat it.
		t.Skip("OBSERVE=get repeats what the first run of this package tested")
	}
	w := newWorld(t)
	g := w.g
	one, all := budget.DefaultNamespaceShare, budget.DefaultAllNamespacesShare
	if os.Getenv("BUDGET_SHARES") == "off" {
		one, all = 1, 1
	}
	platform := w.clusterInstance("platform-" + w.id)
	shared := w.clusterInstance("shared-" + w.id)
	w.waitReady(platform)
	w.waitReady(shared)
	w.startBudgeted(smallBudget, one, all)

	// The normal bound: the slower of two changes of the platform's
	// instance with nothing else to do.
	first := time.Now()
	var normal time.Duration
	for i := range 2 {
		d := w.relabel(platform, fmt.Sprintf("quiet-%d", i))
		t.Logf("a change of the platform's instance without the team's load: %s", d.Round(10*time.Millisecond))
		normal = max(normal, d)
	}

	begin := time.Now()
	users := make([]*nsv1alpha1.PostgresqlUser, 0, teamUsers)
	for i := range teamUsers {
		users = append(users, w.teamUser(fmt.Sprintf("app-%02d", i), "", shared.Name))
	}
	// The team is under way: its logins spend what its share holds.
	g.Eventually(func() []time.Time { return w.teamRequests(shared.Name) }, wait, 200*time.Millisecond).
		Should(HaveLen(int(smallBudget * budget.DefaultNamespaceShare)))
	// The first change's requests leave the window (a minute, and the
	// longest that one may arrive late).
	time.Sleep(time.Until(first.Add(time.Minute + 5*time.Second)))

	var loaded time.Duration
	for i := range 2 {
		d := w.relabel(platform, fmt.Sprintf("busy-%d", i))
		t.Logf("a change of the platform's instance while the team creates %d logins: %s", teamUsers, d.Round(10*time.Millisecond))
		loaded = max(loaded, d)
	}
	t.Logf("the slower of two: %s without the team's load, %s with it (%.1f times)", normal.Round(10*time.Millisecond),
		loaded.Round(10*time.Millisecond), loaded.Seconds()/normal.Seconds())
	if os.Getenv("BUDGET_LOG") != "" {
		for _, r := range w.emu.Requests() {
			if r.Project == w.project {
				t.Logf("%s %-28s %-22s %d %s", r.Time.Format("15:04:05.000"), r.Method, r.Instance, r.Status, r.Reason)
			}
		}
	}
	g.Expect(loaded).To(BeNumerically("<=", sharedBound*normal),
		"the platform's change took %s with the team's load, more than %d times the %s it takes without", loaded, sharedBound, normal)

	team := w.teamRequests(shared.Name)
	t.Logf("the team's requests in %s: %d, at most %d in a minute", time.Since(begin).Round(time.Second), len(team), busiestMinute(team))
	g.Expect(team).NotTo(BeEmpty(), "the team's logins were created meanwhile")
	g.Expect(busiestMinute(team)).To(BeNumerically("<=", int(smallBudget*one)), "the team's requests stay within its share")
	// A login over the share says so, and when it comes back.
	g.Expect(slices.ContainsFunc(users, func(u *nsv1alpha1.PostgresqlUser) bool {
		g.Expect(env.Client.Get(w.ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
		c := u.GetCondition(xpv2.TypeSynced)
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "namespace "+w.team+" has spent its share") &&
			strings.Contains(c.Message, "cloudsql.namespace_share") && strings.Contains(c.Message, "reconciled again in")
	})).To(BeTrue(), "no login of the team says that its share is spent")
}
