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
	"sort"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// postgresUser is the superuser Cloud SQL creates with every PostgreSQL
// instance, whose password is the rootPassword given at insert.
const postgresUser = "postgres"

// userState is a database user; the password is kept beside the user
// because the API never returns it.
type userState struct {
	user     *sqladmin.User
	password string
}

func newUserState(project, instance, name, password string) *userState {
	return &userState{
		user: &sqladmin.User{
			Kind:     "sql#user",
			Name:     name,
			Instance: instance,
			Project:  project,
		},
		password: password,
	}
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
		u := *inst.users[n].user
		resp.Items = append(resp.Items, &u)
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
	out := *u.user
	return &out, nil
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
	u := newUserState(req.project, req.instance, in.Name, in.Password)
	if in.Type != "BUILT_IN" {
		// BUILT_IN is the default, which the API leaves out of answers.
		u.user.Type = in.Type
	}
	op := s.startOperation(p, req.project, inst, OpCreateUser, s.delays.Update, req.failOp,
		func(time.Time) {
			inst.users[in.Name] = u
			s.dataPlaneTask(inst, task{what: "create role " + in.Name, run: func(ctx context.Context, b *backend) error {
				return b.postgres().CreateRole(ctx, in.Name, in.Password)
			}})
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
	op := s.startOperation(p, req.project, inst, OpUpdateUser, s.delays.Update, req.failOp,
		func(time.Time) {
			if in.Password != "" {
				u.password = in.Password
				s.dataPlaneTask(inst, task{what: "set the password of " + name, run: func(ctx context.Context, b *backend) error {
					return b.postgres().SetPassword(ctx, name, in.Password)
				}})
			}
		}, nil)
	return op.render(s.now()), nil
}

// usersDelete removes a user (?name=&host=) once its DELETE_USER operation
// is DONE.
func (s *Server) usersDelete(req *apiRequest) (any, error) {
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
	if _, ok := inst.users[name]; !ok {
		return nil, errUserNotFound()
	}
	op := s.startOperation(p, req.project, inst, OpDeleteUser, s.delays.Update, req.failOp,
		func(time.Time) {
			delete(inst.users, name)
			s.dataPlaneTask(inst, task{what: "drop role " + name, run: func(ctx context.Context, b *backend) error {
				return b.postgres().DropRole(ctx, name)
			}})
		}, nil)
	return op.render(s.now()), nil
}
