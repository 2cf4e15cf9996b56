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
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"sort"
	"strings"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

// postgresDatabase is the database Cloud SQL creates with every PostgreSQL
// instance; databases.list shows it from the start.
const postgresDatabase = "postgres"

// The charset and collation of Cloud SQL for PostgreSQL databases. The API
// documentation of google_sql_database (Terraform's google provider) says
// "Postgres databases only support a value of UTF8 at creation time" and "only
// support a value of en_US.UTF8 at creation time"; gcloud sql databases create
// says the collation "may only be set to the collation of the template
// database", and gcloud sql databases patch that --collation "can't be used
// with PostgreSQL instances". Those are what the emulator accepts and answers.
const (
	defaultCharset   = "UTF8"
	defaultCollation = "en_US.UTF8"
)

// maxDatabaseNameBytes is PostgreSQL's limit on identifiers (NAMEDATALEN - 1).
// PostgreSQL would silently truncate a longer name, so the API is made to
// refuse it instead; no recording shows what Cloud SQL does with one.
const maxDatabaseNameBytes = 63

// systemDatabases exist in every Cloud SQL for PostgreSQL server but are not
// the API's: databases.list doesn't show them, and creating one fails as
// creating an existing database does.
var systemDatabases = map[string]bool{"template0": true, "template1": true, "cloudsqladmin": true}

// Messages of the databases errors. Cloud SQL passes PostgreSQL's refusals
// through as 400 invalid "failed to ... database". Reported against the real
// API are `Invalid request: failed to delete database "foo". Detail: pq: must
// be owner of database foo. (Please use psql client to delete database that is
// not owned by "cloudsqlsuperuser").` (Config Connector issue 2473) and, for a
// database with sessions, `Invalid request: failed to delete database
// MobilityDatabase. Detail: pq: database "MobilityDatabase" is being accessed
// by other users.` (gcloud sql databases delete in 2025, MobilityData's
// mobility-feed-api issue 1174; Config Connector issue 143 shows the 2020
// form, which quoted the first name and added the psql hint). The emulator
// answers the newer form. The create message follows that pattern with
// PostgreSQL's own duplicate_database text; no recording shows it.
const (
	msgDatabaseExists     = "failed to create database %q. Detail: pq: database %q already exists."
	msgDatabaseInUse      = "failed to delete database %s. Detail: pq: database \"%s\" is being accessed by other users."
	msgDatabaseNameLength = "database name %q is %d bytes long; PostgreSQL allows at most %d."
	msgDatabaseNameChars  = "database name %q holds a NUL character, which PostgreSQL does not allow."
	msgCharset            = "charset %q is not supported: Cloud SQL for PostgreSQL creates databases with charset %s only."
	msgCollation          = "collation %q is not supported: Cloud SQL for PostgreSQL creates databases with collation %s only (the collation of the template database)."
	msgCharsetChange      = "database %q has charset %s and collation %s, which PostgreSQL cannot change; leave charset and collation out or as they are, or create a new database and copy the data."
)

func databaseLink(project, instance, name string) string {
	return instanceLink(project, instance) + "/databases/" + name
}

// newDatabase is a database as databases.get answers it.
func newDatabase(project, instance, name, charset, collation string) *sqladmin.Database {
	d := &sqladmin.Database{
		Kind:      "sql#database",
		Name:      name,
		Instance:  instance,
		Project:   project,
		Charset:   charset,
		Collation: collation,
		SelfLink:  databaseLink(project, instance, name),
	}
	d.Etag = databaseEtag(d)
	return d
}

// databaseEtag is a weak tag of what the client may change, shaped like Cloud
// SQL's (base64 of 8 bytes).
func databaseEtag(d *sqladmin.Database) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(d.Project + "\x00" + d.Instance + "\x00" + d.Name + "\x00" + d.Charset + "\x00" + d.Collation))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], h.Sum64())
	return base64.StdEncoding.EncodeToString(b[:])
}

// dbs returns the instance's databases, creating the postgres database the
// first time: every instance has it from creation, whichever way it was made.
// Callers hold s.mu.
func (i *instanceState) dbs() map[string]*sqladmin.Database {
	if i.databases == nil {
		i.databases = map[string]*sqladmin.Database{
			postgresDatabase: newDatabase(i.db.Project, i.db.Name, postgresDatabase, defaultCharset, defaultCollation),
		}
	}
	return i.databases
}

// notRunning reports whether the instance has no database server to list or
// change databases on: Cloud SQL answers 400 "Invalid request since instance
// is not running." then.
func (i *instanceState) notRunning() bool {
	switch i.db.State {
	case StatePendingCreate, StatePendingDelete, StateFailed, StateSuspended:
		return true
	}
	return false
}

// runningInstance is findInstance for the databases methods that only read.
// Callers hold s.mu.
func (s *Server) runningInstance(project, name string) (*instanceState, error) {
	_, inst, err := s.findInstance(project, name)
	if err != nil {
		return nil, err
	}
	if inst.notRunning() {
		return nil, errInstanceNotRunning()
	}
	return inst, nil
}

// mutableRunningInstance is mutableInstance for the databases methods: 409
// while another operation runs, 400 when there is no server. Callers hold
// s.mu.
func (s *Server) mutableRunningInstance(project, name string) (*projectState, *instanceState, error) {
	p, inst, err := s.mutableInstance(project, name)
	if err != nil {
		return nil, nil, err
	}
	if inst.notRunning() {
		return nil, nil, errInstanceNotRunning()
	}
	return p, inst, nil
}

// validDatabaseName refuses the names PostgreSQL cannot hold as given.
func validDatabaseName(name string) error {
	if name == "" {
		return errRequired("name")
	}
	if len(name) > maxDatabaseNameBytes {
		return errInvalid(msgDatabaseNameLength, name, len(name), maxDatabaseNameBytes)
	}
	if strings.ContainsRune(name, 0) {
		return errInvalid(msgDatabaseNameChars, name)
	}
	return nil
}

// databaseCharset checks a requested charset and collation against what Cloud
// SQL for PostgreSQL creates, and returns them as the API then reports them
// (empty means the default).
func databaseCharset(charset, collation string) (string, string, error) {
	switch {
	case charset == "" || strings.EqualFold(charset, defaultCharset):
		charset = defaultCharset
	default:
		return "", "", errInvalid(msgCharset, charset, defaultCharset)
	}
	switch {
	case collation == "" || strings.EqualFold(collation, defaultCollation):
		collation = defaultCollation
	default:
		return "", "", errInvalid(msgCollation, collation, defaultCollation)
	}
	return charset, collation, nil
}

func (s *Server) databasesList(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.runningInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	dbs := inst.dbs()
	names := make([]string, 0, len(dbs))
	for n := range dbs {
		names = append(names, n)
	}
	sort.Strings(names)
	resp := &sqladmin.DatabasesListResponse{Kind: "sql#databasesList"}
	for _, n := range names {
		d := *dbs[n]
		resp.Items = append(resp.Items, &d)
	}
	return resp, nil
}

func (s *Server) databasesGet(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.runningInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	d, ok := inst.dbs()[req.resource]
	if !ok {
		return nil, errDatabaseNotFound()
	}
	out := *d
	return &out, nil
}

// databasesInsert creates a database once its CREATE_DATABASE operation is
// DONE; the data plane then creates it in the instance's PostgreSQL.
func (s *Server) databasesInsert(req *apiRequest) (any, error) {
	var in sqladmin.Database
	if err := decodeJSON(req.body, &in); err != nil {
		return nil, err
	}
	if err := validDatabaseName(in.Name); err != nil {
		return nil, err
	}
	charset, collation, err := databaseCharset(in.Charset, in.Collation)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, inst, err := s.mutableRunningInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	if _, ok := inst.dbs()[in.Name]; ok || systemDatabases[in.Name] {
		return nil, errInvalid(msgDatabaseExists, in.Name, in.Name)
	}
	d := newDatabase(req.project, req.instance, in.Name, charset, collation)
	op := s.startOperation(p, req.project, inst, OpCreateDatabase, s.delays.User, req.failOp,
		func(time.Time) {
			inst.dbs()[d.Name] = d
			s.dataPlaneTask(inst, createDatabaseTask(d))
		}, nil)
	op.targetLink = d.SelfLink
	return op.render(s.now()), nil
}

// createDatabaseTask creates d in the instance's PostgreSQL.
func createDatabaseTask(d *sqladmin.Database) task {
	name, charset, collation := d.Name, d.Charset, d.Collation
	return task{what: "create database " + name, run: func(ctx context.Context, b *backend) error {
		return b.postgres().CreateDatabase(ctx, name, charset, collation)
	}}
}

// databasesPatch changes the fields the body holds (a merge) once its
// UPDATE_DATABASE operation is DONE.
func (s *Server) databasesPatch(req *apiRequest) (any, error) {
	return s.databasesChange(req, true)
}

// databasesUpdate replaces the database's fields once its UPDATE_DATABASE
// operation is DONE.
func (s *Server) databasesUpdate(req *apiRequest) (any, error) {
	return s.databasesChange(req, false)
}

// databasesChange is patch (merge) and update (replace). Of a database's
// fields only charset and collation are the client's, and PostgreSQL cannot
// change either, so a change that keeps them starts an operation with nothing
// to do, and one that changes them is refused.
func (s *Server) databasesChange(req *apiRequest, merge bool) (any, error) {
	var in sqladmin.Database
	if err := decodeJSON(req.body, &in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, inst, err := s.mutableRunningInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	cur, ok := inst.dbs()[req.resource]
	if !ok {
		return nil, errDatabaseNotFound()
	}
	charset, collation := in.Charset, in.Collation
	if merge && charset == "" {
		charset = cur.Charset
	}
	if merge && collation == "" {
		collation = cur.Collation
	}
	charset, collation, err = databaseCharset(charset, collation)
	if err != nil || !strings.EqualFold(charset, cur.Charset) || !strings.EqualFold(collation, cur.Collation) {
		return nil, errInvalid(msgCharsetChange, cur.Name, cur.Charset, cur.Collation)
	}
	op := s.startOperation(p, req.project, inst, OpUpdateDatabase, s.delays.Update, req.failOp, nil, nil)
	op.targetLink = cur.SelfLink
	return op.render(s.now()), nil
}

// databasesDelete removes a database once its DELETE_DATABASE operation is
// DONE; the data plane then drops it. As on Cloud SQL, a database that has
// sessions is refused (400 "is being accessed by other users"): with a data
// plane the emulator asks the instance's PostgreSQL first, without one no
// database has sessions.
func (s *Server) databasesDelete(req *apiRequest) (any, error) {
	s.mu.Lock()
	_, inst, d, err := s.deletableDatabase(req)
	var check pgCheck
	if err == nil {
		check = dataPlaneCheck(inst)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	name := d.Name
	sessions := 0
	if check.run("count the sessions of database "+name, func(ctx context.Context, pg *postgres.Server) error {
		var err error
		sessions, err = waitForSessions(ctx, pg, name)
		return err
	}) && sessions > 0 {
		return nil, errInvalid(msgDatabaseInUse, name, name)
	}

	// The instance may have changed while PostgreSQL answered.
	s.mu.Lock()
	defer s.mu.Unlock()
	p, inst, d, err := s.deletableDatabase(req)
	if err != nil {
		return nil, err
	}
	op := s.startOperation(p, req.project, inst, OpDeleteDatabase, s.delays.Update, req.failOp,
		func(time.Time) {
			delete(inst.dbs(), name)
			delete(inst.dbOwners, name)
			s.dataPlaneTask(inst, task{what: "drop database " + name, run: func(ctx context.Context, b *backend) error {
				// Sessions that connected after the check are
				// disconnected, so that PostgreSQL follows the API.
				return b.postgres().DropDatabase(ctx, name)
			}})
		}, nil)
	op.targetLink = d.SelfLink
	return op.render(s.now()), nil
}

// deletableDatabase finds the database databases.delete names, and refuses
// what Cloud SQL refuses before looking at sessions. Callers hold s.mu.
func (s *Server) deletableDatabase(req *apiRequest) (*projectState, *instanceState, *sqladmin.Database, error) {
	p, inst, err := s.mutableRunningInstance(req.project, req.instance)
	if err != nil {
		return nil, nil, nil, err
	}
	d, ok := inst.dbs()[req.resource]
	if !ok {
		return nil, nil, nil, errDatabaseNotFound()
	}
	if d.Name == postgresDatabase {
		// Cloud SQL's own agents keep sessions open on postgres, so deleting
		// it is refused as deleting any database in use is.
		return nil, nil, nil, errInvalid(msgDatabaseInUse, d.Name, d.Name)
	}
	return p, inst, d, nil
}

// sessionWait is how long DROP DATABASE waits for the sessions of the
// database to end before it fails (PostgreSQL's CountOtherDBBackends tries 50
// times, 100ms apart), so that a client that just disconnected does not hold
// the delete back.
const sessionWait = 5 * time.Second

// waitForSessions counts the sessions of database name until there are none
// or sessionWait has passed, and returns the last count.
func waitForSessions(ctx context.Context, pg *postgres.Server, name string) (int, error) {
	deadline := time.Now().Add(sessionWait)
	for {
		n, err := pg.Sessions(ctx, name)
		if err != nil || n == 0 || time.Now().After(deadline) {
			return n, err
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
