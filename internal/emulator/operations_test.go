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

func TestOperationsGetAndList(t *testing.T) {
	e := newEnv(t)
	create := e.insert("orders")
	e.insert("billing")
	patch, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{DataDiskSizeGb: 20}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	user, err := e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())

	got := e.operation(create.Name)
	e.g.Expect(got.Kind).To(Equal("sql#operation"))
	e.g.Expect(got.OperationType).To(Equal("CREATE"))
	e.g.Expect(got.TargetId).To(Equal("orders"))
	e.g.Expect(got.User).NotTo(BeEmpty())

	// Newest first, filtered by instance.
	list, err := e.svc.Operations.List(project).Instance("orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Items).To(HaveExactElements(
		HaveField("Name", user.Name), HaveField("Name", patch.Name), HaveField("Name", create.Name)))
	e.g.Expect(list.Items[0].OperationType).To(Equal("CREATE_USER"))

	all, err := e.svc.Operations.List(project).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(all.Items).To(HaveLen(4))

	page, err := e.svc.Operations.List(project).Instance("orders").MaxResults(2).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(page.Items).To(HaveLen(2))
	e.g.Expect(page.NextPageToken).NotTo(BeEmpty())
	rest, err := e.svc.Operations.List(project).Instance("orders").MaxResults(2).PageToken(page.NextPageToken).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(rest.Items).To(HaveExactElements(HaveField("Name", create.Name)))

	none, err := e.svc.Operations.List(otherProject).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(none.Items).To(BeEmpty())

	_, err = e.svc.Operations.Get(project, "00000000-0000-4000-8000-000000000000").Do()
	gerr := expectAPIError(e.g, err, http.StatusNotFound, "operationDoesNotExist")
	e.g.Expect(gerr.Message).To(Equal("The Cloud SQL operation does not exist."))
	// Operations belong to their project.
	_, err = e.svc.Operations.Get(otherProject, create.Name).Do()
	expectAPIError(e.g, err, http.StatusNotFound, "operationDoesNotExist")
}

func TestOperationNamesAreReproducibleForASeed(t *testing.T) {
	names := func(seed uint64) []string {
		e := newEnv(t, emulator.WithRandSeed(seed))
		return []string{e.insert("a").Name, e.insert("b").Name}
	}
	first, again, other := names(7), names(7), names(8)
	NewWithT(t).Expect(again).To(Equal(first))
	NewWithT(t).Expect(other).NotTo(Equal(first))
	NewWithT(t).Expect(first[0]).NotTo(Equal(first[1]))
}

func TestFinishOperationsAndAdvance(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(time.Hour, time.Hour, time.Hour))
	op := e.insert("orders")
	e.g.Expect(e.get("orders").State).To(Equal(emulator.StatePendingCreate))
	e.emu.FinishOperations()
	done := e.operation(op.Name)
	e.g.Expect(done.Status).To(Equal("DONE"))
	e.g.Expect(done.EndTime).To(Equal("2026-03-01T10:00:00.000Z"))
	e.g.Expect(e.get("orders").State).To(Equal(emulator.StateRunnable))

	upd, err := e.svc.Instances.Patch(project, "orders", &sqladmin.DatabaseInstance{Settings: &sqladmin.Settings{DataDiskSizeGb: 30}}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.emu.Advance(30 * time.Minute)
	e.g.Expect(e.operation(upd.Name).Status).To(Equal("RUNNING"))
	e.g.Expect(e.emu.Now()).To(Equal(epoch.Add(30 * time.Minute)))
	e.emu.Advance(30 * time.Minute)
	e.g.Expect(e.operation(upd.Name).Status).To(Equal("DONE"))
	e.g.Expect(e.get("orders").Settings.DataDiskSizeGb).To(Equal(int64(30)))

	log := e.emu.Operations(project)
	e.g.Expect(log).To(HaveExactElements(HaveField("Name", op.Name), HaveField("Name", upd.Name)))
	e.g.Expect(e.emu.Operations("")).To(HaveLen(2))
	e.g.Expect(e.emu.Operations(otherProject)).To(BeEmpty())
}
