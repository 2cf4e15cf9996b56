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
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

const (
	errSeedMany = "seeding %s"
)

// This file is the Go side of the admin surface: what tests and benchmarks
// use to look inside the emulator and to change it behind the API's back.
// None of it counts as an API request or spends the request budget.

// Errors of the admin API.
var (
	// ErrInstanceNotFound means the project has no instance of that name.
	ErrInstanceNotFound = errors.New("emulator: no such instance")
	// ErrInstanceExists means Seed was given a name already in use.
	ErrInstanceExists = errors.New("emulator: an instance of that name exists")
	// ErrDatabaseNotFound means the instance has no database of that name.
	ErrDatabaseNotFound = errors.New("emulator: no such database")
	// ErrRoleNotFound means SetDatabaseOwner was given an owner that is
	// neither a user of the instance nor cloudsqlsuperuser.
	ErrRoleNotFound = errors.New("emulator: no such role; name a user of the instance or cloudsqlsuperuser")
	// ErrDatabaseExists means SeedDatabase was given a name already in use.
	ErrDatabaseExists = errors.New("emulator: a database of that name exists")
	// ErrUserExists means SeedUser was given a name already in use.
	ErrUserExists = errors.New("emulator: a user of that name exists")
	// ErrInvalidState means SetInstanceState was given a state it can't set.
	ErrInvalidState = errors.New("emulator: invalid instance state; use RUNNABLE, SUSPENDED, MAINTENANCE, ONLINE_MAINTENANCE, FAILED or REPAIRING")
)

// settableStates are the states SetInstanceState accepts. The PENDING_*
// states belong to operations and can't be set by hand.
var settableStates = map[string]bool{
	StateRunnable: true, StateSuspended: true, StateMaintenance: true,
	StateOnlineMaintenance: true, StateFailed: true, StateRepairing: true,
}

// Counts returns how many API requests each method received, keyed by
// method name such as "instances.get" (see the Method constants). Every
// request counts, including those answered with an error.
func (s *Server) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.counts)
}

// ResetCounts clears the request counts and the request log.
func (s *Server) ResetCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.counts)
	s.requests = nil
}

// Requests returns the log of API requests, oldest first. Only the most
// recent ones are kept (at least ten thousand, WithRequestLogSize) so that
// long benchmarks don't grow it without bound.
//
// A request whose handler has started by the time of the call is in the log
// it returns: Requests waits for the handler and the answer (up to
// handledWait, for a handler a test holds on purpose), so that whoever saw a
// request's effect in the state also finds the request.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	upTo := s.lastHandled
	for deadline := time.Now().Add(handledWait); s.handlingUpTo(upTo) && time.Now().Before(deadline); {
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
		s.mu.Lock()
	}
	return append([]Request(nil), s.requests...)
}

// handledWait bounds how long Requests waits for handlers that started
// before it was called.
const handledWait = 10 * time.Second

// handlingUpTo says whether a request numbered at most n is still being
// handled. Callers hold s.mu.
func (s *Server) handlingUpTo(n uint64) bool {
	for h := range s.handling {
		if h <= n {
			return true
		}
	}
	return false
}

// Operations returns every operation of a project, or of all projects when
// project is empty, oldest first, as operations.get would show them now.
func (s *Server) Operations(project string) []*sqladmin.Operation {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.settleAll(now)
	var ops []*operation
	for name, p := range s.projects {
		if project == "" || project == name {
			ops = append(ops, p.ops...)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].seq < ops[j].seq })
	out := make([]*sqladmin.Operation, len(ops))
	for i, op := range ops {
		out[i] = op.render(now)
	}
	return out
}

// InjectFault adds a fault. Faults apply in the order they were added.
func (s *Server) InjectFault(f Fault) error {
	if err := f.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultRule{Fault: f, remaining: f.Count})
	return nil
}

// Faults returns the faults in force; a counted fault shows the count it has
// left.
func (s *Server) Faults() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, len(s.faults))
	for i, r := range s.faults {
		out[i] = r.Fault
		if r.Count > 0 {
			out[i].Count = r.remaining
		}
	}
	return out
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Instance returns a copy of an instance as instances.get would answer it.
func (s *Server) Instance(project, name string) (*sqladmin.DatabaseInstance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, name)
	if err != nil {
		return nil, err
	}
	return copyInstance(inst.db)
}

// adminFind is findInstance with the admin API's error. Callers hold s.mu.
func (s *Server) adminFind(project, name string) (*instanceState, error) {
	_, inst, err := s.findInstance(project, name)
	if err != nil {
		return nil, ErrInstanceNotFound
	}
	return inst, nil
}

// MutateInstance changes an instance out of band, as an edit in the Cloud
// Console would: fn gets a copy of the instance to modify, the result is
// stored as is (name and project excepted) without validation, and
// settings.settingsVersion increases by one. ipAddresses are derived again
// from the IP configuration and state.
func (s *Server) MutateInstance(project, name string, fn func(*sqladmin.DatabaseInstance)) error {
	return s.mutate(project, name, func(db *sqladmin.DatabaseInstance) error {
		fn(db)
		return nil
	})
}

func (s *Server) mutate(project, name string, fn func(*sqladmin.DatabaseInstance) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, name)
	if err != nil {
		return err
	}
	cp, err := copyInstance(inst.db)
	if err != nil {
		return err
	}
	if err := fn(cp); err != nil {
		return err
	}
	cp.Name, cp.Project, cp.RootPassword = inst.db.Name, project, ""
	if cp.Settings == nil {
		if cp.Settings, err = copySettings(inst.db.Settings); err != nil {
			return err
		}
	}
	cp.Settings.SettingsVersion = inst.db.Settings.SettingsVersion + 1
	s.refreshIPAddresses(inst, cp)
	inst.db = cp
	return nil
}

// SetInstanceState puts an instance into state, e.g. MAINTENANCE (where
// every mutation is answered 409 operationInProgress, as during real
// maintenance) or SUSPENDED; RUNNABLE puts it back.
func (s *Server) SetInstanceState(project, name, state string) error {
	if !settableStates[state] {
		return ErrInvalidState
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, name)
	if err != nil {
		return err
	}
	inst.db.State = state
	s.refreshIPAddresses(inst, inst.db)
	return nil
}

// Now returns the emulator's current time.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now()
}

// Advance moves the emulator's time forward by d, on top of its clock.
// Operations whose delay has then passed are DONE, name reservations and the
// request budget move on too.
func (s *Server) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skew += d
	s.settleAll(s.now())
}

// FinishOperations makes every pending or running operation DONE now, with
// its effect applied, whatever its delay.
func (s *Server) FinishOperations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, p := range s.projects {
		for _, op := range p.pending {
			if op.start.After(now) {
				op.start = now
			}
			if op.end.After(now) {
				op.end = now
			}
		}
		s.settle(p, now)
	}
}

// PasswordIs reports whether password is the current password of user on
// an instance. It is false when the instance or the user doesn't exist.
func (s *Server) PasswordIs(project, instance, user, password string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return false
	}
	u, ok := inst.users[user]
	return ok && subtle.ConstantTimeCompare([]byte(u.password), []byte(password)) == 1
}

// UserNames returns the names of an instance's users, sorted, as
// users.list would list them but without going through the API (its budget,
// faults and request log), for tests that check what Cloud SQL holds.
func (s *Server) UserNames(project, instance string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(inst.users))
	for n := range inst.users {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// DatabaseNames returns the names of an instance's databases, sorted, as
// databases.list would list them, without going through the API.
func (s *Server) DatabaseNames(project, instance string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(inst.dbs()))
	for n := range inst.dbs() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// SetDatabaseOwner makes role the owner of a database of an instance, as
// `ALTER DATABASE ... OWNER TO role` run by postgres does on Cloud SQL: the
// API does not show owners, but users.delete refuses a user that owns a
// database. role is a user of the instance or cloudsqlsuperuser, the owner of
// the databases that databases.insert creates. With a data plane, the
// instance's PostgreSQL makes the same change.
func (s *Server) SetDatabaseOwner(project, instance, database, role string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return err
	}
	if _, ok := inst.dbs()[database]; !ok {
		return ErrDatabaseNotFound
	}
	if _, ok := inst.users[role]; !ok && role != postgres.SuperuserRole {
		return ErrRoleNotFound
	}
	if role == postgres.SuperuserRole {
		delete(inst.dbOwners, database)
	} else {
		if inst.dbOwners == nil {
			inst.dbOwners = map[string]string{}
		}
		inst.dbOwners[database] = role
	}
	s.dataPlaneTask(inst, task{what: "make " + role + " the owner of database " + database, run: func(ctx context.Context, b *backend) error {
		return b.postgres().SetDatabaseOwner(ctx, database, role)
	}})
	return nil
}

// Seed stores an instance as if it had been created long ago, to test
// importing an instance that Kubernetes did not create. It is validated and
// completed like an insert (name, databaseVersion, settings.tier required;
// defaults and server-side fields filled in) and is RUNNABLE at once unless
// db.State says otherwise. settings.settingsVersion is kept when set. The
// postgres user gets db.RootPassword. As with the client, a false
// ipConfiguration.ipv4Enabled must be listed in ForceSendFields to count,
// otherwise the public IP defaults to on.
func (s *Server) Seed(project string, db *sqladmin.DatabaseInstance) error {
	if db == nil {
		return errRequired("instance")
	}
	raw, err := toMap(db)
	if err != nil {
		return err
	}
	built, err := newInstance(project, db, raw)
	if err != nil {
		return err
	}
	if db.Settings.SettingsVersion > 0 {
		built.Settings.SettingsVersion = db.Settings.SettingsVersion
	}
	s.mu.Lock()
	now := s.now()
	s.mu.Unlock()
	ca, err := newCertAuthority(project, db.Name, now)
	if err != nil {
		return err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.project(project)
	s.settle(p, now)
	if _, ok := p.instances[db.Name]; ok {
		return ErrInstanceExists
	}
	built.State = StateRunnable
	if db.State != "" {
		built.State = db.State
	}
	built.CreateTime = db.CreateTime
	if built.CreateTime == "" {
		built.CreateTime = formatTime(now)
	}
	built.ServerCaCert = ca.sslCert(db.Name)
	inst := &instanceState{db: built, users: map[string]*userState{}, ca: ca, backupsSeen: now}
	inst.users[postgresUser] = newUserState(project, db.Name, postgresUser, db.RootPassword)
	s.refreshIPAddresses(inst, built)
	s.notePITR(inst, now)
	p.instances[db.Name] = inst
	return nil
}

// SeedDatabase stores a database of a seeded instance as if databases.insert
// had created it long ago, without an operation, a request or the budget, so
// that a benchmark can import databases by the thousand. d.Name is validated
// as databases.insert does; charset and collation default as there. With a
// data plane, the instance's PostgreSQL creates it too.
func (s *Server) SeedDatabase(project, instance string, d *sqladmin.Database) error {
	if d == nil {
		return errRequired("database")
	}
	if err := validDatabaseName(d.Name); err != nil {
		return err
	}
	charset, collation, err := databaseCharset(d.Charset, d.Collation)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return err
	}
	if _, ok := inst.dbs()[d.Name]; ok || systemDatabases[d.Name] {
		return ErrDatabaseExists
	}
	seeded := newDatabase(project, instance, d.Name, charset, collation)
	inst.dbs()[d.Name] = seeded
	s.dataPlaneTask(inst, createDatabaseTask(seeded))
	return nil
}

// SeedUser stores a user of a seeded instance with u.Password, as if
// users.insert had created it long ago, without an operation, a request or
// the budget. u.Type is BUILT_IN when empty; an IAM user (CLOUD_IAM_*) has no
// password of its own and logs in with access tokens. With a data plane, the
// instance's PostgreSQL creates its role too.
func (s *Server) SeedUser(project, instance string, u *sqladmin.User) error {
	if u == nil {
		return errRequired("user")
	}
	if u.Name == "" {
		return errRequired("name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return err
	}
	if _, ok := inst.users[u.Name]; ok {
		return ErrUserExists
	}
	seeded := newUserState(project, instance, u.Name, rolePassword(u.Type, u.Password))
	if u.Type != "BUILT_IN" {
		// BUILT_IN is the default, which the API leaves out of answers.
		seeded.user.Type = u.Type
	}
	inst.users[u.Name] = seeded
	s.dataPlaneTask(inst, createRoleTask(u.Name, u.Type, seeded.password))
	return nil
}

// MaxSeedMany bounds SeedMany, so that a typo cannot fill the memory.
const MaxSeedMany = 100000

// SeedMany seeds count instances from template, as Seed does each, named
// <template.Name>-00000, <template.Name>-00001, ..., so that a benchmark can start
// from a fleet of thousands without creating them one by one.
func (s *Server) SeedMany(project string, template *sqladmin.DatabaseInstance, count int) error {
	if template == nil {
		return errRequired("instance")
	}
	if count < 1 || count > MaxSeedMany {
		return errInvalid("Invalid count %d: seed between 1 and %d instances at a time.", count, MaxSeedMany)
	}
	for i := range count {
		db, err := copyInstance(template)
		if err != nil {
			return err
		}
		db.Name = fmt.Sprintf("%s-%05d", template.Name, i)
		if err := s.Seed(project, db); err != nil {
			return errors.Wrapf(err, errSeedMany, db.Name)
		}
	}
	return nil
}

// ServerCertificate issues a TLS server certificate for an instance, signed
// by the instance's CA (the one in serverCaCert), with common name
// "project:instance" and the instance's DNS name. An end-to-end test can
// serve it to a Cloud SQL connector that fetched connectSettings here.
func (s *Server) ServerCertificate(project, instance string) (tls.Certificate, error) {
	s.mu.Lock()
	inst, err := s.adminFind(project, instance)
	now := s.now()
	var region string
	if inst != nil {
		region = inst.db.Region
	}
	s.mu.Unlock()
	if err != nil {
		return tls.Certificate{}, err
	}
	host := strings.TrimSuffix(dnsName(project, instance, region), ".")
	return inst.ca.serverCert(project, instance, []string{host}, now)
}

// ErrBackupNotFound means the project has no backup run of that ID, of a
// live instance or retained.
var ErrBackupNotFound = errors.New("emulator: no such backup")

// ErrNoBackupData means the backup holds no copy of PostgreSQL's data: the
// emulator runs without a data plane (WithPostgres), or the backup failed.
var ErrNoBackupData = errors.New("emulator: the backup holds no data (no data plane, or the backup failed)")

// FailNextBackup makes the next backup of an instance (on-demand, automated
// or final) FAILED with an error carrying message (a default one when
// empty), and the BACKUP_VOLUME operation of an on-demand one end with it.
func (s *Server) FailNextBackup(project, instance, message string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return err
	}
	if message == "" {
		message = msgBackupFailed
	}
	inst.backupFailure = message
	return nil
}

// RunBackupWindow takes an AUTOMATED backup of an instance now, as its
// backup window would, whether or not backups are enabled, and applies the
// retention of automated backups. With a data plane it returns once the
// backup holds the data as it is now.
func (s *Server) RunBackupWindow(project, instance string) (*sqladmin.BackupRun, error) {
	s.mu.Lock()
	p, inst, now, err := s.backupsOf(project, instance)
	if err != nil {
		s.mu.Unlock()
		return nil, adminError(ErrInstanceNotFound)
	}
	b := s.newBackup(p, project, inst, BackupAutomated, now)
	b.window = now
	check := dataPlaneCheck(inst)
	s.mu.Unlock()

	s.copyData(check, b)

	s.mu.Lock()
	defer s.mu.Unlock()
	if bc := inst.db.Settings.BackupConfiguration; bc != nil {
		s.pruneAutomated(inst, retainedCount(bc))
	}
	return b.run(s.now()), nil
}

// Backups returns the backups the Backups API lists for project: those of
// its live instances and those retained after their instance went, newest
// first, as a test reads them without a request of its own.
func (s *Server) Backups(project string) []*sqladmin.Backup {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, now := s.projectBackups(project)
	sortBackupsNewestFirst(all)
	out := make([]*sqladmin.Backup, 0, len(all))
	for _, b := range all {
		out = append(out, b.backup(now))
	}
	return out
}

// BackupQuery runs sql in database on what a backup holds: a throwaway
// PostgreSQL server started on a copy of the backup, stopped before it
// returns. The output is Query's (rows one a line, columns separated by |).
// It finds backups of live instances and retained ones; it needs a data
// plane (WithPostgres), else ErrNoBackupData.
func (s *Server) BackupQuery(ctx context.Context, project string, backupID int64, database, sql string) (string, error) {
	s.mu.Lock()
	all, _ := s.projectBackups(project)
	var b *backupState
	for _, x := range all {
		if x.id == backupID {
			b = x
		}
	}
	var check pgCheck
	if b != nil {
		if inst, ok := s.project(project).instances[b.instance]; ok {
			check = dataPlaneCheck(inst)
		}
	}
	s.mu.Unlock()
	if b == nil {
		return "", ErrBackupNotFound
	}
	// An automated backup's copy is a task of its instance's PostgreSQL.
	check.run("wait for backup "+strconv.FormatInt(backupID, 10), func(context.Context, *postgres.Server) error { return nil })
	s.mu.Lock()
	data := b.data
	s.mu.Unlock()
	if data == nil {
		return "", ErrNoBackupData
	}
	pg, err := postgres.Restore(ctx, data, fmt.Sprintf("%s-backup-%d", project, backupID))
	if err != nil {
		return "", err
	}
	defer func() { _ = pg.Stop() }()
	return pg.QueryIn(ctx, database, sql)
}
