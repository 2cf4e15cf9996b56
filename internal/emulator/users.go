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

package emulator

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

// postgresUser is the default user Cloud SQL creates with every PostgreSQL
// instance, whose password is the rootPassword given at insert.
const postgresUser = "postgres"

// userState is a database user; the password is kept beside the user
// because the API never returns it.
type userState struct {
	user *sqladmin.User
	// password is a BUILT_IN user's password. An IAM user's is one the
	// emulator made and never tells: the data plane logs in with it on the
	// user's behalf once the user's access token has been checked.
	password string
	// rev counts the user's changes, for its etag.
	rev int
}

// The user types of IAM database authentication, whose users log in with an
// access token of their account instead of a password.
const (
	userTypeIAMServiceAccount = "CLOUD_IAM_SERVICE_ACCOUNT"
	userTypeIAMUser           = "CLOUD_IAM_USER"
)

// iamGroupRole is the PostgreSQL group role Cloud SQL makes the users of type
// t members of, or "" when t is not an IAM type.
func iamGroupRole(t string) string {
	switch t {
	case userTypeIAMServiceAccount:
		return postgres.IAMServiceAccountRole
	case userTypeIAMUser:
		return postgres.IAMUserRole
	}
	return ""
}

// rolePassword is the password a user's role gets: the one given for a
// BUILT_IN user, a new random one for an IAM user, whose password the API
// takes no part in.
func rolePassword(userType, given string) string {
	if iamGroupRole(userType) != "" {
		return rand.Text()
	}
	return given
}

// createRoleTask creates the role of a user of type userType, as Cloud SQL
// does: a member of cloudsqlsuperuser for a BUILT_IN user, of the IAM group
// role for an IAM user.
func createRoleTask(name, userType, password string) task {
	return task{what: "create role " + name, run: func(ctx context.Context, b *backend) error {
		return createRole(ctx, b.postgres(), name, userType, password)
	}}
}

func createRole(ctx context.Context, pg *postgres.Server, name, userType, password string) error {
	if g := iamGroupRole(userType); g != "" {
		return pg.CreateIAMRole(ctx, name, password, g)
	}
	return pg.CreateRole(ctx, name, password)
}

// iamStatusUnspecified is the iamStatus Cloud SQL answers for users whose
// IAM authentication is not configured: every BUILT_IN user.
const iamStatusUnspecified = "IAM_STATUS_UNSPECIFIED"

func newUserState(project, instance, name, password string) *userState {
	return &userState{
		user: &sqladmin.User{
			Kind:           "sql#user",
			Name:           name,
			Instance:       instance,
			Project:        project,
			IamStatus:      iamStatusUnspecified,
			PasswordPolicy: &sqladmin.UserPasswordValidationPolicy{Status: &sqladmin.PasswordStatus{}},
		},
		password: password,
	}
}

// setPasswordPolicy takes a user's password policy from a request, as Cloud
// SQL answers it: with a status, which says when the password expires if
// the policy gives it a lifetime.
func (u *userState) setPasswordPolicy(in *sqladmin.UserPasswordValidationPolicy, now time.Time) {
	if in == nil {
		return
	}
	pp := *in
	pp.Status = &sqladmin.PasswordStatus{}
	if d, err := time.ParseDuration(pp.PasswordExpirationDuration); err == nil && d > 0 {
		pp.Status.PasswordExpirationTime = now.Add(d).UTC().Format(time.RFC3339)
	}
	u.user.PasswordPolicy = &pp
}

// rendered is the user as the API answers it.
func (u *userState) rendered() *sqladmin.User {
	out := *u.user
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s/%s/%s/%d", out.Project, out.Instance, out.Name, u.rev)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], h.Sum64())
	out.Etag = base64.StdEncoding.EncodeToString(b[:])
	return &out
}

// findInstance settles the project and returns the named instance, or 404.
// Callers hold s.mu.
func (s *Server) findInstance(project, name string) (*projectState, *instanceState, error) {
	p := s.project(project)
	s.settle(p, s.now())
	inst, ok := p.instances[name]
	if !ok {
		return p, nil, errInstanceNotFound()
	}
	return p, inst, nil
}

// mutableInstance is findInstance for mutations: it also answers 409 while
// another operation runs on the instance or it is in maintenance. Callers
// hold s.mu.
func (s *Server) mutableInstance(project, name string) (*projectState, *instanceState, error) {
	p, inst, err := s.findInstance(project, name)
	if err != nil {
		return p, nil, err
	}
	if err := inst.checkMutable(); err != nil {
		return p, nil, err
	}
	return p, inst, nil
}

func (s *Server) usersList(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, inst, err := s.findInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(inst.users))
	for n := range inst.users {
		names = append(names, n)
	}
	sort.Strings(names)
	resp := &sqladmin.UsersListResponse{Kind: "sql#usersList"}
	for _, n := range names {
		resp.Items = append(resp.Items, inst.users[n].rendered())
	}
	return resp, nil
}

func (s *Server) usersGet(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, inst, err := s.findInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	u, ok := inst.users[req.resource]
	if !ok {
		return nil, errUserNotFound()
	}
	return u.rendered(), nil
}

// usersInsert creates a user once its CREATE_USER operation is DONE.
func (s *Server) usersInsert(req *apiRequest) (any, error) {
	var in sqladmin.User
	if err := decodeJSON(req.body, &in); err != nil {
		return nil, err
	}
	if in.Name == "" {
		return nil, errRequired("name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, inst, err := s.mutableInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	if _, ok := inst.users[in.Name]; ok {
		return nil, errUserExists()
	}
	u := newUserState(req.project, req.instance, in.Name, rolePassword(in.Type, in.Password))
	if in.Type != "BUILT_IN" {
		// BUILT_IN is the default, which the API leaves out of answers.
		u.user.Type = in.Type
	}
	u.setPasswordPolicy(in.PasswordPolicy, s.now())
	op := s.startOperation(p, req.project, inst, OpCreateUser, s.delays.User, req.failOp,
		func(time.Time) {
			inst.users[in.Name] = u
			s.dataPlaneTask(inst, createRoleTask(in.Name, in.Type, u.password))
		}, nil)
	return op.render(s.now()), nil
}

// usersUpdate sets a user's password (?name=&host=) once its UPDATE_USER
// operation is DONE.
func (s *Server) usersUpdate(req *apiRequest) (any, error) {
	var in sqladmin.User
	if err := decodeJSON(req.body, &in); err != nil {
		return nil, err
	}
	name := req.r.URL.Query().Get("name")
	if name == "" {
		return nil, errRequired("name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, inst, err := s.mutableInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	u, ok := inst.users[name]
	if !ok {
		return nil, errUserNotFound()
	}
	op := s.startOperation(p, req.project, inst, OpUpdateUser, s.delays.User, req.failOp,
		func(end time.Time) {
			u.rev++
			u.setPasswordPolicy(in.PasswordPolicy, end)
			// An IAM user logs in with access tokens: its role keeps the
			// password only the emulator knows.
			if in.Password != "" && iamGroupRole(u.user.Type) == "" {
				u.password = in.Password
				s.dataPlaneTask(inst, task{what: "set the password of " + name, run: func(ctx context.Context, b *backend) error {
					return b.postgres().SetPassword(ctx, name, in.Password)
				}})
			}
		}, nil)
	return op.render(s.now()), nil
}

// Cloud SQL refuses to delete a user that objects depend on with PostgreSQL's
// DROP ROLE error passed through as 400 invalid, as reported against the real
// API (gcloud sql users delete in 2023, kernelci/kcidb issue 407): `Invalid
// request: failed to delete user kcidb_01_submitter: . role
// "kcidb_01_submitter" cannot be dropped because some objects depend on it
// Details: 1 object in database kcidb_01_clean_test\n6 objects in database
// kcidb_01_empty_test.` msgRoleDependents and "owner of database x" are
// PostgreSQL's own words, for when no data plane can give them.
const (
	msgUserHasDependents = "failed to delete user %s: . %s Details: %s."
	msgRoleDependents    = `role "%s" cannot be dropped because some objects depend on it`
	msgOwnerOfDatabase   = "owner of database %s"
)

// usersDelete removes a user (?name=&host=) once its DELETE_USER operation
// is DONE. As on Cloud SQL, a user that objects depend on (it owns a
// database, a table, ...) is refused: with a data plane the emulator tries
// DROP ROLE on the instance's PostgreSQL and rolls it back; without one, a
// user that owns a database (see SetDatabaseOwner) is refused.
func (s *Server) usersDelete(req *apiRequest) (any, error) {
	name := req.r.URL.Query().Get("name")
	if name == "" {
		return nil, errRequired("name")
	}
	s.mu.Lock()
	_, inst, err := s.deletableUser(req.project, req.instance, name)
	var (
		check pgCheck
		owned []string
	)
	if err == nil {
		check = dataPlaneCheck(inst)
		for db, owner := range inst.dbOwners {
			if owner == name {
				owned = append(owned, fmt.Sprintf(msgOwnerOfDatabase, db))
			}
		}
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var message, detail string
	if !check.run("check what depends on role "+name, func(ctx context.Context, pg *postgres.Server) error {
		var err error
		message, detail, err = pg.RoleDependents(ctx, name)
		return err
	}) && len(owned) > 0 {
		sort.Strings(owned)
		message, detail = fmt.Sprintf(msgRoleDependents, name), strings.Join(owned, "\n")
	}
	if message != "" {
		return nil, errInvalid(msgUserHasDependents, name, message, detail)
	}

	// The instance may have changed while PostgreSQL answered.
	s.mu.Lock()
	defer s.mu.Unlock()
	p, inst, err := s.deletableUser(req.project, req.instance, name)
	if err != nil {
		return nil, err
	}
	op := s.startOperation(p, req.project, inst, OpDeleteUser, s.delays.User, req.failOp,
		func(time.Time) {
			delete(inst.users, name)
			s.dataPlaneTask(inst, task{what: "drop role " + name, run: func(ctx context.Context, b *backend) error {
				return b.postgres().DropRole(ctx, name)
			}})
		}, nil)
	return op.render(s.now()), nil
}

// deletableUser finds the instance of the user users.delete names, and
// refuses what Cloud SQL refuses before looking at what depends on the user.
// Callers hold s.mu.
func (s *Server) deletableUser(project, instance, name string) (*projectState, *instanceState, error) {
	p, inst, err := s.mutableInstance(project, instance)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := inst.users[name]; !ok {
		return nil, nil, errUserNotFound()
	}
	return p, inst, nil
}
