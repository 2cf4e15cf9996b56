//go:build e2e

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

package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/localpod"
)

// The rows an application writes through the real proxy before its
// PostgresqlBackup is taken are exactly what the backup holds: the rows written
// after it are not in it.
func TestBackupHoldsTheRowsWrittenThroughTheProxy(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t)
	const backedUp = "e2e-backed-up"

	step(t, "creating ProviderConfig default and PostgresqlInstance %s, and waiting for Ready", backedUp)
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}},
		providerConfig("default", w.endpoint, nil),
	} {
		g.Expect(w.c.Create(ctx, o)).To(Succeed())
	}
	w.createWhenAdmitted(ctx, instance(backedUp, "default", false))
	w.waitReady(ctx, &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: backedUp}})

	step(t, "an injected pod writes rows through the Cloud SQL Auth Proxy")
	pod := w.createPod(ctx, appNS, "writer", backedUp, nil)
	lp, err := localpod.Load(ctx, w.c, pod, localpod.WithImage(configfile.ProxyImageRepository, w.proxyBin))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = lp.Close() })
	var proxyOut bytes.Buffer
	proxy, err := lp.StartProxy(ctx, w.endpoint, &proxyOut)
	g.Expect(err).NotTo(HaveOccurred(), "proxy output:\n%s", proxyOut.String())
	t.Cleanup(func() { _ = proxy.Stop() })
	g.Expect(lp.WritePasswordFiles(ctx)).To(Succeed())
	psql := func(sql string) {
		t.Helper()
		out, err := w.runApp(ctx, lp, "--command", sql)
		g.Expect(err).NotTo(HaveOccurred(), "psql -c %q: %s\nproxy output:\n%s", sql, out, proxyOut.String())
	}
	psql("create table orders (id int primary key, item text not null); insert into orders values (1, 'apples'), (2, 'pears')")

	step(t, "creating PostgresqlBackup %s and waiting for Ready", backedUp)
	b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: backedUp}}
	b.Spec.ForProvider.Instance = backedUp
	b.Spec.ForProvider.Description = ptr.To("e2e")
	w.createWhenAdmitted(ctx, b)
	w.waitReady(ctx, b)
	g.Expect(b.Status.AtProvider.State).To(Equal(v1alpha1.BackupStateSuccessful))
	g.Expect(b.Status.AtProvider.SizeBytes).NotTo(BeNil(), "a backup with data has a size")
	id, ok := cloudsql.ParseBackupRunID(b.Status.AtProvider.ID)
	g.Expect(ok).To(BeTrue(), "status.atProvider.id %q", b.Status.AtProvider.ID)
	t.Logf("    backup run %d, %d bytes", id, *b.Status.AtProvider.SizeBytes)

	step(t, "a row written after the backup is not in it")
	psql("insert into orders values (3, 'plums')")
	qctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	rows, err := w.emu.BackupQuery(qctx, project, id, "postgres", "select id, item from orders order by id")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Split(rows, "\n")).To(Equal([]string{"1|apples", "2|pears"}), "the backup holds exactly the rows written before it")
}
