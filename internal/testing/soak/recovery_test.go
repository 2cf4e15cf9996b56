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

package soak

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// A few recoveries cover every kind and as many sources as they can; all of
// them are three of each instance with PostgreSQL and two of each other.
func TestRecoveryPlan(t *testing.T) {
	g := NewWithT(t)
	sql, plain := []string{"sql-00", "sql-01", "sql-02"}, []string{"soak-003", "soak-004"}
	g.Expect(recoveryPlan(sql, plain, 5)).To(Equal([]planned{
		{"sql-00", kindClone}, {"sql-01", kindPITR}, {"sql-02", kindRestore}, {"soak-003", kindClone}, {"soak-004", kindPITR},
	}))
	all := recoveryPlan(sql, plain, -1)
	g.Expect(all).To(HaveLen(3*3 + 2*2))
	g.Expect(all).To(ContainElements(planned{"sql-00", kindRestore}, planned{"sql-02", kindClone}, planned{"soak-003", kindPITR}, planned{"soak-004", kindClone}))
	g.Expect(recoveryPlan(nil, plain, -1)).To(ConsistOf(
		planned{"soak-003", kindClone}, planned{"soak-004", kindPITR}, planned{"soak-003", kindPITR}, planned{"soak-004", kindClone},
	), "without PostgreSQL, no restores: the soak backs up no other instance")
	g.Expect(plainSources([]string{"a"})).To(BeEmpty(), "one instance is deleted without the annotation, no quiet source is left")
}

// The watch of the recovered instances' secrets sees a source's password
// that a secret held only between two versions, which a poll could miss.
func TestWatchPublishedSeesEveryVersion(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	env, err := controlplane.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	w := &world{env: env, c: env.Client}
	g.Expect(w.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}})).To(Succeed())
	secret := func(name, pw string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: name},
			Data: map[string][]byte{cloudsql.ConnectionKeyPassword: []byte(pw)}}
	}
	// Held before the watch starts: the listing sees it.
	g.Expect(w.c.Create(ctx, secret("early-postgres", "source-pw"))).To(Succeed())

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	sw, err := w.watchPublished(wctx, map[string]string{"early-postgres": "early", "clone-postgres": "clone", "own-postgres": "own"},
		map[string]bool{"source-pw": true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.c.Create(ctx, secret("clone-postgres", "new-pw"))).To(Succeed())
	update := func(name, pw string) {
		s := &corev1.Secret{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: name}, s)).To(Succeed())
		s.Data[cloudsql.ConnectionKeyPassword] = []byte(pw)
		g.Expect(w.c.Update(ctx, s)).To(Succeed())
	}
	update("clone-postgres", "source-pw")
	update("clone-postgres", "new-pw")
	// A source's password in a secret that is not a recovery's is not one.
	g.Expect(w.c.Create(ctx, secret("source-postgres", "source-pw"))).To(Succeed())
	g.Expect(w.c.Create(ctx, secret("own-postgres", "own-pw"))).To(Succeed())
	// The last event: once it is seen, every one before it was.
	update("own-postgres", "source-pw")
	g.Eventually(func() bool { return sw.seen()["own"] }, 10*time.Second, 50*time.Millisecond).Should(BeTrue())
	stop()
	<-sw.done
	g.Expect(sw.seen()).To(Equal(map[string]bool{"early": true, "clone": true, "own": true}))
}
