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

package emulator_test

import (
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// withPITR turns backups and point-in-time recovery on.
func withPITR(db *sqladmin.DatabaseInstance) {
	db.Settings.BackupConfiguration = &sqladmin.BackupConfiguration{Enabled: true, PointInTimeRecoveryEnabled: true}
}

// pause separates commits from the times a test takes between them, by more
// than the millisecond the API's times are written to.
func pause() { time.Sleep(20 * time.Millisecond) }

// cloneAt clones instance into dest at the time t.
func (e *dataEnv) cloneAt(instance, dest string, t time.Time) (*sqladmin.Operation, error) {
	return e.svc.Instances.Clone(e.project, instance, &sqladmin.InstancesCloneRequest{CloneContext: &sqladmin.CloneContext{
		DestinationInstanceName: dest, PointInTime: t.UTC().Format(time.RFC3339Nano),
	}}).Context(e.ctx).Do()
}

// TestDataPlaneCloneAtAPointInTime writes rows between chosen times and
// clones the instance at those times: each clone holds exactly the rows
// committed until its time, whether the recovery starts from the base taken
// when point-in-time recovery was turned on or from a later backup.
func TestDataPlaneCloneAtAPointInTime(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("orders", withPITR))
	const selectRows = "select v from items order by v"
	write := func(sql string) {
		out, err := e.psqlQuery("orders", "PRIMARY", "postgres", rootPassword, sql)
		g.Expect(err).NotTo(HaveOccurred(), out)
	}

	window, err := e.svc.Projects.Instances.GetLatestRecoveryTime(e.project, "orders").Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	earliest, err := time.Parse(time.RFC3339Nano, window.EarliestRecoveryTime)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(window.LatestRecoveryTime >= window.EarliestRecoveryTime).To(BeTrue(), "the window is never empty")

	write("create table items(v text); insert into items values ('a')")
	pause()
	first := time.Now()
	pause()
	write("insert into items values ('b')")
	op, err := e.svc.BackupRuns.Insert(e.project, "orders", &sqladmin.BackupRun{}).Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	write("insert into items values ('c')")
	pause()
	second := time.Now()
	pause()
	write("insert into items values ('d')")

	for _, tc := range []struct {
		dest string
		at   time.Time
		want string
	}{
		{"orders-at-first", first, "a"},
		{"orders-at-second", second, "a\nb\nc"},
		{"orders-at-earliest", earliest, ""},
	} {
		op, err := e.cloneAt("orders", tc.dest, tc.at)
		g.Expect(err).NotTo(HaveOccurred(), tc.dest)
		g.Expect(op.OperationType).To(Equal(emulator.OpClone))
		e.waitDone(g, op)
		if tc.want == "" {
			out, err := e.psqlQuery(tc.dest, "PRIMARY", "postgres", rootPassword, "select count(*) from pg_tables where tablename = 'items'")
			g.Expect(err).NotTo(HaveOccurred(), out)
			g.Expect(out).To(Equal("0"), "%s: the table did not exist yet", tc.dest)
			continue
		}
		out, err := e.psqlQuery(tc.dest, "PRIMARY", "postgres", rootPassword, selectRows)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(Equal(tc.want), "%s holds what was committed until its time", tc.dest)
	}

	out, err := e.psqlQuery("orders", "PRIMARY", "postgres", rootPassword, selectRows)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("a\nb\nc\nd"), "the source is untouched")
}

// TestDataPlaneCloneOutsideTheRecoveryWindow is refused with the window,
// and creates no instance; so is any point in time of a source without
// point-in-time recovery.
func TestDataPlaneCloneOutsideTheRecoveryWindow(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("orders", withPITR), instance("plain"))

	for _, tc := range []struct {
		source string
		at     time.Time
		want   string
	}{
		{"orders", time.Now().Add(-time.Hour), `instance "orders" can be recovered to any time from `},
		{"orders", time.Now().Add(time.Hour), `instance "orders" can be recovered to any time from `},
		{"plain", time.Now(), `point-in-time recovery is not enabled for the instance "plain"`},
	} {
		_, err := e.cloneAt(tc.source, "copy", tc.at)
		ae := expectAPIError(g, err, http.StatusBadRequest, emulator.ReasonInvalid)
		g.Expect(ae.Message).To(ContainSubstring("Invalid cloneContext.pointInTime"))
		g.Expect(ae.Message).To(ContainSubstring(tc.want))
		_, err = e.svc.Instances.Get(e.project, "copy").Context(e.ctx).Do()
		expectAPIError(g, err, http.StatusNotFound, emulator.ReasonInstanceDoesNotExist)
	}
}

// TestDataPlaneCloneOfARecoveredClone recovers a clone that was itself
// recovered to a point in time: its server started a timeline of its own,
// which its WAL archive and base backup follow.
func TestDataPlaneCloneOfARecoveredClone(t *testing.T) {
	t.Parallel()
	e := newDataEnv(t)
	g := NewWithT(t)
	e.insert(g, instance("orders", withPITR))
	write := func(inst, sql string) {
		out, err := e.psqlQuery(inst, "PRIMARY", "postgres", rootPassword, sql)
		g.Expect(err).NotTo(HaveOccurred(), out)
	}
	write("orders", "create table items(v text); insert into items values ('a')")
	pause()
	at := time.Now()
	pause()
	write("orders", "insert into items values ('b')")
	op, err := e.cloneAt("orders", "c1", at)
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	_, err = e.svc.Projects.Instances.GetLatestRecoveryTime(e.project, "c1").Context(e.ctx).Do()
	g.Expect(err).NotTo(HaveOccurred())
	write("c1", "insert into items values ('c1-x')")
	pause()
	at2 := time.Now()
	pause()
	write("c1", "insert into items values ('c1-y')")
	op, err = e.cloneAt("c1", "c2", at2)
	g.Expect(err).NotTo(HaveOccurred())
	e.waitDone(g, op)
	out, err := e.psqlQuery("c2", "PRIMARY", "postgres", rootPassword, "select v from items order by v")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("a\nc1-x"))
}
