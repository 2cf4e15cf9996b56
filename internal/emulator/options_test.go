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
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// lockedBuffer is a bytes.Buffer safe for the server's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRequestLogHasOneLinePerRequest(t *testing.T) {
	var log lockedBuffer
	e := newEnv(t, emulator.WithRequestLog(&log))
	e.insert("orders")
	_, err := e.svc.Instances.Get(project, "ghost").Do()
	e.g.Expect(err).To(HaveOccurred())
	e.g.Expect(e.call("GET", "/emulator/v1/healthz", "", nil)).To(Equal(200))
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	e.g.Expect(lines).To(HaveExactElements(
		MatchRegexp(`^\S+ POST /sql/v1beta4/projects/test-project/instances 200 \S+$`),
		MatchRegexp(`^\S+ GET /sql/v1beta4/projects/test-project/instances/ghost 404 \S+$`),
		MatchRegexp(`^\S+ GET /emulator/v1/healthz 200 \S+$`),
	))
}

func TestClocks(t *testing.T) {
	g := NewWithT(t)
	clk := emulator.NewFakeClock(epoch)
	clk.Advance(time.Hour)
	g.Expect(clk.Now()).To(Equal(epoch.Add(time.Hour)))
	clk.Set(epoch)
	g.Expect(clk.Now()).To(Equal(epoch))

	at := epoch.Add(42 * time.Minute)
	emu := emulator.New(emulator.WithClock(emulator.ClockFunc(func() time.Time { return at })))
	g.Expect(emu.Now()).To(Equal(at))
	emu.Advance(time.Minute)
	emu.Advance(-time.Hour) // ignored: time doesn't go back
	g.Expect(emu.Now()).To(Equal(at.Add(time.Minute)))

	// Without a clock option the emulator reads the wall clock.
	g.Expect(emulator.New().Now()).To(BeTemporally("~", time.Now(), time.Minute))
}

func TestPatchAddsNestedObjectsAndListFiltersOnScalars(t *testing.T) {
	e := newEnv(t)
	e.insert("orders", func(db *sqladmin.DatabaseInstance) { db.Settings.DeletionProtectionEnabled = true })
	e.insert("billing", func(db *sqladmin.DatabaseInstance) { db.Settings.DataDiskSizeGb = 20 })

	// insightsConfig didn't exist; the patch creates it.
	_, err := e.svc.Instances.Patch(project, "billing", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{
		InsightsConfig: &sqladmin.InsightsConfig{QueryInsightsEnabled: true, QueryStringLength: 2048, NullFields: []string{"QueryPlansPerMinute"}},
	}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	ic := e.get("billing").Settings.InsightsConfig
	e.g.Expect(ic).NotTo(BeNil())
	e.g.Expect(ic.QueryInsightsEnabled).To(BeTrue())
	e.g.Expect(ic.QueryStringLength).To(Equal(int64(2048)))

	protected, err := e.svc.Instances.List(project).Filter("settings.deletionProtectionEnabled:true").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(protected.Items).To(HaveExactElements(HaveField("Name", "orders")))
	big, err := e.svc.Instances.List(project).Filter(`settings.dataDiskSizeGb="20"`).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(big.Items).To(HaveExactElements(HaveField("Name", "billing")))
	insights, err := e.svc.Instances.List(project).Filter("settings.insightsConfig.queryStringLength:2048").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(insights.Items).To(HaveExactElements(HaveField("Name", "billing")))
	none, err := e.svc.Instances.List(project).Filter("settings.nothing.here:x").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(none.Items).To(BeEmpty())
}
