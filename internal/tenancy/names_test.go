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

package tenancy_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

var env *controlplane.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	var err error
	if env, err = controlplane.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot stop the test control plane:", err)
	}
	os.Exit(code)
}

// The records as the API server keeps them: of many objects racing for one
// name exactly one holds it and the others are told which; a holder that goes
// leaves the name free; only the holder releases it; and when the record
// began is kept once for all replicas.
func TestRecords(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	const ns = "records"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	holder := func(name string) tenancy.Holder {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
		return tenancy.HolderOf(cm, gvk)
	}
	n := tenancy.Name{Kind: tenancy.KindLogin, Project: "p", Instance: "shared", Name: "orders-api"}
	// The provider starts; the first question of when it began to record
	// comes later, after objects were created.
	started := tenancy.NewRecords(env.Client, env.Client, ns)

	// Each racer keeps records of its own, as replicas and restarts do.
	const racers = 8
	var (
		wg     sync.WaitGroup
		errs   [racers]error
		fresh  [racers]bool
		owners [racers]tenancy.Holder
	)
	for i := range racers {
		owners[i] = holder(fmt.Sprintf("team-%d", i))
	}
	for i := range racers {
		wg.Go(func() {
			fresh[i], errs[i] = tenancy.NewRecords(env.Client, env.Client, ns).Claim(ctx, n, owners[i], tenancy.Created)
		})
	}
	wg.Wait()
	var (
		winner tenancy.Holder
		won    int
		named  []tenancy.Holder
	)
	for i, err := range errs {
		if err == nil {
			won++
			winner = owners[i]
			g.Expect(fresh[i]).To(BeTrue(), "the winner did not hold the name before")
			continue
		}
		h, held := tenancy.HeldBy(err)
		g.Expect(held).To(BeTrue(), "%v", err)
		named = append(named, h)
		g.Expect(err.Error()).To(ContainSubstring("login orders-api of Cloud SQL instance shared in project p is held by ConfigMap records/"))
	}
	g.Expect(won).To(Equal(1), "exactly one object holds a name")
	g.Expect(named).To(HaveEach(winner), "every other racer is told who holds it")

	r := tenancy.NewRecords(env.Client, env.Client, ns)
	loser := owners[0]
	if loser == winner {
		loser = owners[1]
	}
	got, err := r.Holder(ctx, n, loser)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(&winner))

	// Only the holder releases it.
	g.Expect(r.Release(ctx, n, loser)).To(Succeed())
	got, err = r.Holder(ctx, n, loser)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(&winner))

	// A holder that goes holds nothing: the next object takes the record.
	g.Expect(env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: winner.Name}})).To(Succeed())
	got, err = r.Holder(ctx, n, loser)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeNil())
	fresh0, err := r.Claim(ctx, n, loser, tenancy.Imported)
	g.Expect(err).To(Succeed())
	g.Expect(fresh0).To(BeTrue(), "a record taken over from a holder that went is fresh")
	claimedAgain, err := tenancy.NewRecords(env.Client, env.Client, ns).Claim(ctx, n, loser, tenancy.Imported)
	g.Expect(err).To(Succeed())
	g.Expect(claimedAgain).To(BeFalse(), "a name claimed again by its holder is not fresh")
	// Claimed again as made, by records that do not remember (a restart):
	// what was imported stays imported.
	_, err = tenancy.NewRecords(env.Client, env.Client, ns).Claim(ctx, n, loser, tenancy.Created)
	g.Expect(err).To(Succeed())
	how, err := tenancy.NewRecords(env.Client, env.Client, ns).How(ctx, n, loser)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(how).To(Equal(tenancy.Imported))
	got, err = tenancy.NewRecords(env.Client, env.Client, ns).Holder(ctx, n, winner)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(&loser))
	g.Expect(r.Release(ctx, n, loser)).To(Succeed())
	got, err = tenancy.NewRecords(env.Client, env.Client, ns).Holder(ctx, n, winner)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeNil())

	// When the record began is written once, as the provider's start: an
	// object created since then is never one made before the records.
	late := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "created-after-start"}}
	g.Expect(env.Client.Create(ctx, late)).To(Succeed())
	time.Sleep(1100 * time.Millisecond) // the marker counts whole seconds
	first, err := started.Since(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(late.CreationTimestamp.Time.Before(first)).To(BeFalse(), "an object created at %s, after the provider started, is not taken for one made before the records began (%s)", late.CreationTimestamp.Time, first)
	again, err := tenancy.NewRecords(env.Client, env.Client, ns).Since(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(first))
}
