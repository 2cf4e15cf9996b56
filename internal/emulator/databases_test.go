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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

const databaseLinkBase = "https://sqladmin.googleapis.com/sql/v1beta4/projects/test-project/instances/orders/databases/"

// wantDatabase is a database as Cloud SQL for PostgreSQL answers it.
func wantDatabase(instance, name string) *sqladmin.Database {
	return &sqladmin.Database{
		Kind: "sql#database", Name: name, Instance: instance, Project: project,
		Charset: "UTF8", Collation: "en_US.UTF8",
		SelfLink: "https://sqladmin.googleapis.com/sql/v1beta4/projects/test-project/instances/" + instance + "/databases/" + name,
	}
}

// ignoreEtag leaves the etag to its own checks: its value is the emulator's.
var ignoreEtag = cmpopts.IgnoreFields(sqladmin.Database{}, "Etag", "ServerResponse")

func TestDatabasesLifecycle(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")

	list, err := e.svc.Databases.List(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Kind).To(Equal("sql#databasesList"))
	if diff := cmp.Diff([]*sqladmin.Database{wantDatabase("orders", "postgres")}, list.Items, ignoreEtag); diff != "" {
		t.Errorf("a new instance has the postgres database: -want, +got:\n%s", diff)
	}

	op, err := e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales", Instance: "orders"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("CREATE_DATABASE"))
	e.g.Expect(op.Status).To(Equal("DONE"))
	e.g.Expect(op.TargetId).To(Equal("orders"))
	e.g.Expect(op.TargetLink).To(Equal(databaseLinkBase+"sales"), "Cloud SQL links database operations to the database")

	got, err := e.svc.Databases.Get(project, "orders", "sales").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	if diff := cmp.Diff(wantDatabase("orders", "sales"), got, ignoreEtag); diff != "" {
		t.Errorf("databases.get: -want, +got:\n%s", diff)
	}
	e.g.Expect(got.Etag).To(MatchRegexp(`^[A-Za-z0-9+/]{11}=$`))

	op, err = e.svc.Databases.Patch(project, "orders", "sales", &sqladmin.Database{Charset: "UTF8"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("UPDATE_DATABASE"))
	e.g.Expect(op.TargetLink).To(Equal(databaseLinkBase + "sales"))
	op, err = e.svc.Databases.Update(project, "orders", "sales", &sqladmin.Database{Name: "sales"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("UPDATE_DATABASE"))
	again, err := e.svc.Databases.Get(project, "orders", "sales").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(again.Etag).To(Equal(got.Etag), "nothing changed")

	list, err = e.svc.Databases.List(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Items).To(HaveExactElements(HaveField("Name", "postgres"), HaveField("Name", "sales")))

	op, err = e.svc.Databases.Delete(project, "orders", "sales").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("DELETE_DATABASE"))
	e.g.Expect(op.TargetLink).To(Equal(databaseLinkBase + "sales"))
	_, err = e.svc.Databases.Get(project, "orders", "sales").Do()
	gerr := expectAPIError(e.g, err, http.StatusNotFound, "notFound")
	e.g.Expect(gerr.Message).To(Equal("Not Found"), "as recorded against Cloud SQL")
	e.g.Expect(readBody(e.g, mustGet(e, "/sql/v1beta4/projects/test-project/instances/orders/databases/sales"))).
		To(ContainSubstring(`"status":"NOT_FOUND"`))

	// The name is free again.
	_, err = e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())

	counts := e.emu.Counts()
	for m, n := range map[string]int{
		emulator.MethodDatabasesList: 2, emulator.MethodDatabasesInsert: 2, emulator.MethodDatabasesGet: 4,
		emulator.MethodDatabasesPatch: 1, emulator.MethodDatabasesUpdate: 1, emulator.MethodDatabasesDelete: 1,
	} {
		e.g.Expect(counts).To(HaveKeyWithValue(m, n))
	}
}

// mustGet answers a plain GET on the emulator, for what the client hides.
func mustGet(e *env, path string) *http.Response {
	e.t.Helper()
	resp, err := http.Get(e.url + path)
	e.g.Expect(err).NotTo(HaveOccurred())
	e.t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func TestDatabasesErrors(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	_, err := e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	dbs := e.svc.Databases

	type want struct {
		code   int
		reason string
		// message, when set, is a part of the message.
		message string
	}
	cases := map[string]struct {
		reason string
		call   func() error
		want   want
	}{
		"InsertExisting": {
			reason: "PostgreSQL refuses a database that exists, and Cloud SQL passes its refusal on as 400 invalid",
			call: func() error {
				_, err := dbs.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
				return err
			},
			want: want{http.StatusBadRequest, "invalid", `database "sales" already exists`},
		},
		"InsertPostgres": {
			reason: "the postgres database exists from the start",
			call: func() error {
				_, err := dbs.Insert(project, "orders", &sqladmin.Database{Name: "postgres"}).Do()
				return err
			},
			want: want{http.StatusBadRequest, "invalid", "already exists"},
		},
		"InsertTemplate": {
			reason: "the server's own databases exist too, though the API doesn't list them",
			call: func() error {
				_, err := dbs.Insert(project, "orders", &sqladmin.Database{Name: "template1"}).Do()
				return err
			},
			want: want{http.StatusBadRequest, "invalid", "already exists"},
		},
		"InsertNameless": {
			reason: "a database needs a name",
			call: func() error {
				_, err := dbs.Insert(project, "orders", &sqladmin.Database{Charset: "UTF8"}).Do()
				return err
			},
			want: want{http.StatusBadRequest, "required", "name"},
		},
		"InsertLongName": {
			reason: "PostgreSQL would truncate a name longer than 63 bytes",
			call: func() error {
				_, err := dbs.Insert(project, "orders", &sqladmin.Database{Name: strings.Repeat("d", 64)}).Do()
				return err
			},
			want: want{http.StatusBadRequest, "invalid", "at most 63"},
		},
		"InsertOtherCharset": {
			reason: "Cloud SQL for PostgreSQL creates UTF8 databases only",
			call: func() error {
				_, err := dbs.Insert(project, "orders", &sqladmin.Database{Name: "latin", Charset: "LATIN1"}).Do()
				return err
			},
			want: want{http.StatusBadRequest, "invalid", "charset"},
		},
		"InsertOtherCollation": {
			reason: "Cloud SQL for PostgreSQL creates databases with the template's collation only",
			call: func() error {
				_, err := dbs.Insert(project, "orders", &sqladmin.Database{Name: "c", Collation: "C"}).Do()
				return err
			},
			want: want{http.StatusBadRequest, "invalid", "collation"},
		},
		"PatchCollation": {
			reason: "PostgreSQL cannot change a database's collation",
			call: func() error {
				_, err := dbs.Patch(project, "orders", "sales", &sqladmin.Database{Collation: "C"}).Do()
				return err
			},
			want: want{http.StatusBadRequest, "invalid", "cannot change"},
		},
		"UpdateCharset": {
			reason: "PostgreSQL cannot change a database's encoding",
			call: func() error {
				_, err := dbs.Update(project, "orders", "sales", &sqladmin.Database{Name: "sales", Charset: "SQL_ASCII"}).Do()
				return err
			},
			want: want{http.StatusBadRequest, "invalid", "cannot change"},
		},
		"DeletePostgres": {
			reason: "Cloud SQL's agents are always connected to postgres, so deleting it is refused as deleting a database in use is",
			call: func() error {
				_, err := dbs.Delete(project, "orders", "postgres").Do()
				return err
			},
			want: want{http.StatusBadRequest, "invalid", "is being accessed by other users"},
		},
		"GetMissing": {
			reason: "recorded against Cloud SQL: 404 notFound",
			call: func() error {
				_, err := dbs.Get(project, "orders", "ghost").Do()
				return err
			},
			want: want{http.StatusNotFound, "notFound", "Not Found"},
		},
		"PatchMissing": {
			reason: "a database that isn't there can't be patched",
			call: func() error {
				_, err := dbs.Patch(project, "orders", "ghost", &sqladmin.Database{Charset: "UTF8"}).Do()
				return err
			},
			want: want{http.StatusNotFound, "notFound", "Not Found"},
		},
		"UpdateMissing": {
			reason: "a database that isn't there can't be updated",
			call: func() error {
				_, err := dbs.Update(project, "orders", "ghost", &sqladmin.Database{Name: "ghost"}).Do()
				return err
			},
			want: want{http.StatusNotFound, "notFound", "Not Found"},
		},
		"DeleteMissing": {
			reason: "a database that isn't there can't be deleted",
			call: func() error {
				_, err := dbs.Delete(project, "orders", "ghost").Do()
				return err
			},
			want: want{http.StatusNotFound, "notFound", "Not Found"},
		},
		"ListNoInstance": {
			reason: "the instance must exist",
			call: func() error {
				_, err := dbs.List(project, "nope").Do()
				return err
			},
			want: want{http.StatusNotFound, "instanceDoesNotExist", ""},
		},
		"GetNoInstance": {
			reason: "the instance must exist",
			call: func() error {
				_, err := dbs.Get(project, "nope", "postgres").Do()
				return err
			},
			want: want{http.StatusNotFound, "instanceDoesNotExist", ""},
		},
		"InsertNoInstance": {
			reason: "the instance must exist",
			call: func() error {
				_, err := dbs.Insert(project, "nope", &sqladmin.Database{Name: "a"}).Do()
				return err
			},
			want: want{http.StatusNotFound, "instanceDoesNotExist", ""},
		},
		"PatchNoInstance": {
			reason: "the instance must exist",
			call: func() error {
				_, err := dbs.Patch(project, "nope", "a", &sqladmin.Database{Charset: "UTF8"}).Do()
				return err
			},
			want: want{http.StatusNotFound, "instanceDoesNotExist", ""},
		},
		"UpdateNoInstance": {
			reason: "the instance must exist",
			call: func() error {
				_, err := dbs.Update(project, "nope", "a", &sqladmin.Database{Name: "a"}).Do()
				return err
			},
			want: want{http.StatusNotFound, "instanceDoesNotExist", ""},
		},
		"DeleteNoInstance": {
			reason: "the instance must exist",
			call: func() error {
				_, err := dbs.Delete(project, "nope", "a").Do()
				return err
			},
			want: want{http.StatusNotFound, "instanceDoesNotExist", ""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			gerr := expectAPIError(g, tc.call(), tc.want.code, tc.want.reason)
			g.Expect(gerr.Message).To(ContainSubstring(tc.want.message), tc.reason)
		})
	}

	// None of the refused calls changed anything.
	list, err := dbs.List(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Items).To(HaveExactElements(
		And(HaveField("Name", "postgres"), HaveField("Collation", "en_US.UTF8")),
		And(HaveField("Name", "sales"), HaveField("Charset", "UTF8"))))
}

func TestDatabaseChangesWaitForTheirOperation(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(time.Minute, time.Minute, 0))
	e.insert("orders")

	// Cloud SQL answers 400 while the instance has no server.
	_, err := e.svc.Databases.List(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "invalid")
	_, err = e.svc.Databases.Get(project, "orders", "postgres").Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "invalid")
	_, err = e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")
	e.clk.Advance(time.Minute)

	// Cloud SQL answers CREATE_DATABASE done; WithUserOperationDelay gives
	// it a duration.
	op, err := e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.Status).To(Equal("DONE"))
	_, err = e.svc.Databases.Get(project, "orders", "sales").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	op, err = e.svc.Databases.Delete(project, "orders", "sales").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.Status).To(Equal("PENDING"))
	_, err = e.svc.Databases.Get(project, "orders", "sales").Do()
	e.g.Expect(err).NotTo(HaveOccurred(), "the database stays until DELETE_DATABASE is done")

	// Every mutation of the instance waits for the operation, databases' and
	// others' alike.
	busy := map[string]func() error{
		"databases.insert": func() error {
			_, err := e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "other"}).Do()
			return err
		},
		"databases.patch": func() error {
			_, err := e.svc.Databases.Patch(project, "orders", "postgres", &sqladmin.Database{Charset: "UTF8"}).Do()
			return err
		},
		"databases.update": func() error {
			_, err := e.svc.Databases.Update(project, "orders", "postgres", &sqladmin.Database{Name: "postgres"}).Do()
			return err
		},
		"databases.delete": func() error {
			_, err := e.svc.Databases.Delete(project, "orders", "postgres").Do()
			return err
		},
		"users.update": func() error {
			_, err := e.svc.Users.Update(project, "orders", &sqladmin.User{Password: "x"}).Name("postgres").Do()
			return err
		},
		"instances.clone": func() error {
			_, err := e.svc.Instances.Clone(project, "orders", &sqladmin.InstancesCloneRequest{
				CloneContext: &sqladmin.CloneContext{DestinationInstanceName: "orders-copy"}}).Do()
			return err
		},
	}
	for name, call := range busy {
		t.Run(name, func(t *testing.T) {
			expectAPIError(NewWithT(t), call(), http.StatusConflict, "operationInProgress")
		})
	}

	e.clk.Advance(time.Minute)
	e.g.Expect(e.operation(op.Name).Status).To(Equal("DONE"))
	_, err = e.svc.Databases.Get(project, "orders", "sales").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "notFound")
}

func TestDatabaseOperationThatFailsChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.g.Expect(e.emu.InjectFault(emulator.Fault{Method: emulator.MethodDatabasesInsert, FailOperationShare: 1})).To(Succeed())
	op, err := e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.Error).NotTo(BeNil())
	_, err = e.svc.Databases.Get(project, "orders", "sales").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "notFound")
}
