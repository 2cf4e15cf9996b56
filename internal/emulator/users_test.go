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

func TestUsers(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")

	// Creating the instance created postgres with the root password.
	list, err := e.svc.Users.List(project, "orders").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Items).To(HaveExactElements(HaveField("Name", "postgres")))
	e.g.Expect(list.Items[0].Password).To(BeEmpty())
	e.g.Expect(e.emu.PasswordIs(project, "orders", "postgres", rootPassword)).To(BeTrue())
	e.g.Expect(e.emu.PasswordIs(project, "orders", "postgres", "wrong")).To(BeFalse())

	op, err := e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "first"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("CREATE_USER"))
	e.g.Expect(op.TargetId).To(Equal("orders"))
	e.g.Expect(e.emu.PasswordIs(project, "orders", "app", "first")).To(BeTrue())

	u, err := e.svc.Users.Get(project, "orders", "app").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(u.Name).To(Equal("app"))
	e.g.Expect(u.Instance).To(Equal("orders"))
	e.g.Expect(u.Project).To(Equal(project))
	e.g.Expect(u.Password).To(BeEmpty())

	_, err = e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "again"}).Do()
	expectAPIError(e.g, err, http.StatusConflict, "userAlreadyExists")
	_, err = e.svc.Users.Insert(project, "orders", &sqladmin.User{Password: "nameless"}).Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "required")

	op, err = e.svc.Users.Update(project, "orders", &sqladmin.User{Password: "second"}).Name("app").Host("").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("UPDATE_USER"))
	e.g.Expect(e.emu.PasswordIs(project, "orders", "app", "second")).To(BeTrue())
	e.g.Expect(e.emu.PasswordIs(project, "orders", "app", "first")).To(BeFalse())

	// The root password can be changed like any other.
	_, err = e.svc.Users.Update(project, "orders", &sqladmin.User{Password: "new-root"}).Name("postgres").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.emu.PasswordIs(project, "orders", "postgres", "new-root")).To(BeTrue())

	op, err = e.svc.Users.Delete(project, "orders").Name("app").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.OperationType).To(Equal("DELETE_USER"))
	_, err = e.svc.Users.Get(project, "orders", "app").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "userDoesNotExist")
	e.g.Expect(e.emu.PasswordIs(project, "orders", "app", "second")).To(BeFalse())

	_, err = e.svc.Users.Update(project, "orders", &sqladmin.User{Password: "x"}).Name("ghost").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "userDoesNotExist")
	_, err = e.svc.Users.Update(project, "orders", &sqladmin.User{Password: "x"}).Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "required")
	_, err = e.svc.Users.Delete(project, "orders").Name("ghost").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "userDoesNotExist")
	_, err = e.svc.Users.Delete(project, "orders").Do()
	expectAPIError(e.g, err, http.StatusBadRequest, "required")

	for _, call := range []func() error{
		func() error { _, err := e.svc.Users.List(project, "nope").Do(); return err },
		func() error { _, err := e.svc.Users.Get(project, "nope", "postgres").Do(); return err },
		func() error {
			_, err := e.svc.Users.Insert(project, "nope", &sqladmin.User{Name: "a"}).Do()
			return err
		},
		func() error {
			_, err := e.svc.Users.Update(project, "nope", &sqladmin.User{}).Name("a").Do()
			return err
		},
		func() error { _, err := e.svc.Users.Delete(project, "nope").Name("a").Do(); return err },
	} {
		expectAPIError(e.g, call(), http.StatusNotFound, "instanceDoesNotExist")
	}
	e.g.Expect(e.emu.PasswordIs(project, "nope", "postgres", rootPassword)).To(BeFalse())
}

func TestUserChangesAreDoneAtOnce(t *testing.T) {
	e := newEnv(t, emulator.WithDelays(0, time.Minute, 0))
	e.insert("orders")
	// Cloud SQL answers user operations DONE, whatever instance
	// operations take.
	op, err := e.svc.Users.Update(project, "orders", &sqladmin.User{Password: "rotated"}).Name("postgres").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.Status).To(Equal("DONE"))
	e.g.Expect(op.EndTime).NotTo(BeEmpty())
	e.g.Expect(e.emu.PasswordIs(project, "orders", "postgres", "rotated")).To(BeTrue())
	op, err = e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.Status).To(Equal("DONE"))
	op, err = e.svc.Users.Delete(project, "orders").Name("app").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.Status).To(Equal("DONE"))
}

func TestUserChangesWaitForTheirOperation(t *testing.T) {
	e := newEnv(t, emulator.WithUserOperationDelay(time.Minute))
	e.insert("orders")
	op, err := e.svc.Users.Update(project, "orders", &sqladmin.User{Password: "rotated"}).Name("postgres").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(op.Status).To(Equal("PENDING"))
	e.g.Expect(e.emu.PasswordIs(project, "orders", "postgres", rootPassword)).To(BeTrue())
	_, err = e.svc.Users.Update(project, "orders", &sqladmin.User{Password: "again"}).Name("postgres").Do()
	expectAPIError(e.g, err, http.StatusConflict, "operationInProgress")
	e.clk.Advance(time.Minute)
	e.g.Expect(e.emu.PasswordIs(project, "orders", "postgres", "rotated")).To(BeTrue())
	e.g.Expect(e.operation(op.Name).Status).To(Equal("DONE"))
}

// TestUsersDeleteRefusesAnOwnerOfADatabase makes a user the owner of a
// database behind the API's back, as postgres's ALTER DATABASE ... OWNER TO
// does: without a data plane the emulator knows owners from that record, and
// refuses to delete the user as Cloud SQL refuses (PostgreSQL's DROP ROLE
// error, 400 invalid), until the database goes or changes hands.
func TestUsersDeleteRefusesAnOwnerOfADatabase(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	e.emu.FinishOperations()
	for _, db := range []string{"sales", "stock"} {
		_, err := e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: db}).Do()
		e.g.Expect(err).NotTo(HaveOccurred())
	}
	_, err := e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(e.emu.SetDatabaseOwner(project, "orders", "sales", "app")).To(Succeed())
	e.g.Expect(e.emu.SetDatabaseOwner(project, "orders", "stock", "app")).To(Succeed())

	_, err = e.svc.Users.Delete(project, "orders").Name("app").Do()
	gerr := expectAPIError(e.g, err, http.StatusBadRequest, "invalid")
	e.g.Expect(gerr.Message).To(Equal("Invalid request: failed to delete user app: . role \"app\" cannot be dropped because some objects depend on it Details: owner of database sales\nowner of database stock."))
	_, err = e.svc.Users.Get(project, "orders", "app").Do()
	e.g.Expect(err).NotTo(HaveOccurred(), "the user is still there")

	// Once it owns nothing, it goes.
	e.g.Expect(e.emu.SetDatabaseOwner(project, "orders", "stock", "cloudsqlsuperuser")).To(Succeed())
	_, err = e.svc.Databases.Delete(project, "orders", "sales").Do()
	e.g.Expect(err).NotTo(HaveOccurred(), "without a data plane no database has sessions")
	e.emu.FinishOperations()
	_, err = e.svc.Users.Delete(project, "orders").Name("app").Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.svc.Users.Get(project, "orders", "app").Do()
	expectAPIError(e.g, err, http.StatusNotFound, "userDoesNotExist")

	// A recreated database of the same name is cloudsqlsuperuser's again.
	_, err = e.svc.Users.Insert(project, "orders", &sqladmin.User{Name: "app", Password: "pw"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.svc.Databases.Insert(project, "orders", &sqladmin.Database{Name: "sales"}).Do()
	e.g.Expect(err).NotTo(HaveOccurred())
	_, err = e.svc.Users.Delete(project, "orders").Name("app").Do()
	e.g.Expect(err).NotTo(HaveOccurred())

	e.g.Expect(e.emu.SetDatabaseOwner(project, "orders", "ghost", "cloudsqlsuperuser")).To(MatchError(emulator.ErrDatabaseNotFound))
	e.g.Expect(e.emu.SetDatabaseOwner(project, "orders", "sales", "app")).To(MatchError(emulator.ErrRoleNotFound))
	e.g.Expect(e.emu.SetDatabaseOwner(project, "nope", "sales", "postgres")).To(MatchError(emulator.ErrInstanceNotFound))
}
