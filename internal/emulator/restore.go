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
	"maps"
	"strconv"
	"strings"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

// Messages of instances.restoreBackup. No recording holds Cloud SQL's
// refusals of a restore, so the words are the emulator's.
const (
	msgRestoreOneSource     = "Specify exactly one of backup and restoreBackupContext."
	msgRestoreBackupName    = "Invalid backup %q: use projects/{project}/backups/{backup ID}."
	msgRestoreNotSuccessful = "Backup %s is %s: only a SUCCESSFUL backup can be restored."
	msgRestoreVersion       = "Invalid databaseVersion %q: backup %s holds %s, and is restored into an instance of the same version."
	msgRestoreName          = "Invalid restoreInstanceSettings.name %q: the instance restored into is %q, the one of the request's path."
	msgRestoreNoData        = "Backup %s holds no data to restore."
)

// instancesRestoreBackup restores a backup (POST
// instances/{instance}/restoreBackup), named either by backup (the Backups
// API's projects/{p}/backups/{id}, a backup retained after its instance was
// deleted included) or by restoreBackupContext (a backup run of a live
// instance: backupRunId, instanceId, project). Only a SUCCESSFUL backup is
// restored (else 400); an unknown one is 404 as backups.get or backupRuns.get
// answer it.
//
// With restoreInstanceSettings, the path's instance is created from them as
// an insert would create it (409 for a live or reserved name), with the
// backup's databaseVersion (a different one is 400), users, databases and,
// with a data plane, PostgreSQL data and roles: its postgres password is the
// one the backup's server had, not rootPassword. Without them, the existing
// instance's users, databases and data are replaced by the backup's; its
// version must be the backup's. Either way the operation is RESTORE_VOLUME
// and targets the path's instance.
func (s *Server) instancesRestoreBackup(req *apiRequest) (any, error) {
	var in sqladmin.InstancesRestoreBackupRequest
	if err := decodeJSON(req.body, &in); err != nil {
		return nil, err
	}
	if (in.Backup == "") == (in.RestoreBackupContext == nil) {
		return nil, errInvalid(msgRestoreOneSource)
	}
	var settings *sqladmin.DatabaseInstance
	var raw map[string]any
	if in.RestoreInstanceSettings != nil {
		body, err := decodeObject(req.body)
		if err != nil {
			return nil, err
		}
		raw, _ = body["restoreInstanceSettings"].(map[string]any)
		settings = in.RestoreInstanceSettings
		if settings.Name != "" && settings.Name != req.instance {
			return nil, errInvalid(msgRestoreName, settings.Name, req.instance)
		}
	}

	// A backup's copy of the data may still be a task of its instance's
	// PostgreSQL (an automated backup): wait for it outside the lock.
	s.mu.Lock()
	b, err := s.backupToRestore(req, &in)
	var check pgCheck
	if err == nil {
		if inst, ok := s.project(b.project).instances[b.instance]; ok && b.deleted.IsZero() {
			check = dataPlaneCheck(inst)
		}
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	check.run("wait for backup "+strconv.FormatInt(b.id, 10), func(context.Context, *postgres.Server) error { return nil })

	if settings == nil {
		return s.restoreOver(req, b)
	}
	return s.restoreIntoNew(req, b, settings, raw)
}

// backupToRestore finds the backup a restore names and checks that it can
// be restored. Callers hold s.mu.
func (s *Server) backupToRestore(req *apiRequest, in *sqladmin.InstancesRestoreBackupRequest) (*backupState, error) {
	var b *backupState
	if in.Backup != "" {
		rest, ok := strings.CutPrefix(in.Backup, "projects/")
		project, id, ok2 := strings.Cut(rest, "/backups/")
		if !ok || !ok2 || project == "" || id == "" || strings.Contains(id, "/") {
			return nil, errInvalid(msgRestoreBackupName, in.Backup)
		}
		all, _ := s.projectBackups(project)
		for _, x := range all {
			if strconv.FormatInt(x.id, 10) == id {
				b = x
			}
		}
		if b == nil {
			return nil, errBackupNotFound(in.Backup)
		}
	} else {
		rc := in.RestoreBackupContext
		project, instance := rc.Project, rc.InstanceId
		if project == "" {
			project = req.project
		}
		if instance == "" {
			instance = req.instance
		}
		_, inst, _, err := s.backupsOf(project, instance)
		if err != nil {
			return nil, err
		}
		for _, x := range inst.backups {
			if x.id == rc.BackupRunId {
				b = x
			}
		}
		if b == nil {
			return nil, errBackupRunNotFound()
		}
	}
	name := backupName(b.project, b.id)
	if st := b.status(s.now()); st != BackupSuccessful {
		return nil, errInvalid(msgRestoreNotSuccessful, name, st)
	}
	return b, nil
}

// restoreIntoNew creates the path's instance from restoreInstanceSettings
// with the backup's users, databases and data.
func (s *Server) restoreIntoNew(req *apiRequest, b *backupState, in *sqladmin.DatabaseInstance, raw map[string]any) (any, error) {
	name := backupName(b.project, b.id)
	in.Name = req.instance
	if in.DatabaseVersion == "" {
		in.DatabaseVersion = b.version
	}
	if in.DatabaseVersion != b.version {
		return nil, errInvalid(msgRestoreVersion, in.DatabaseVersion, name, b.version)
	}
	db, err := newInstance(req.project, in, raw)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	caTime := s.now()
	s.mu.Unlock()
	ca, err := newCertAuthority(req.project, db.Name, caTime)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	p := s.project(req.project)
	s.settle(p, now)
	if err := p.claimName(db.Name, now); err != nil {
		return nil, err
	}
	if b.deletion != nil {
		return nil, errInvalid(msgRestoreNotSuccessful, name, b.status(now))
	}
	db.State = StatePendingCreate
	db.CreateTime = formatTime(now)
	db.ServerCaCert = ca.sslCert(db.Name)
	inst := &instanceState{db: db, ca: ca}
	s.takeBackupContents(req.project, inst, b)
	p.instances[db.Name] = inst
	if s.data != nil && b.data != nil {
		s.data.restoreInto(inst, b.data, name)
	}
	op := s.startOperation(p, req.project, inst, OpRestoreVolume, s.delays.Create, req.failOp,
		func(end time.Time) {
			if inst.db.State == StatePendingCreate {
				inst.db.State = StateRunnable
			}
			inst.backupsSeen = end
			s.refreshIPAddresses(inst, inst.db)
			s.notePITR(inst, end)
		},
		func(time.Time) {
			inst.db.State = StateFailed
			if s.data != nil {
				s.data.forgetClone(inst)
			}
		})
	return op.render(now), nil
}

// restoreOver replaces an existing instance's users, databases and data by
// the backup's when the RESTORE_VOLUME operation is done. With a data plane
// the instance's server is replaced by one started from the backup, and
// point-in-time recovery starts again from there.
func (s *Server) restoreOver(req *apiRequest, b *backupState) (any, error) {
	name := backupName(b.project, b.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	p, inst, err := s.mutableInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	if inst.db.State != StateRunnable {
		return nil, errInstanceNotRunning()
	}
	if inst.db.DatabaseVersion != b.version {
		return nil, errInvalid(msgRestoreVersion, inst.db.DatabaseVersion, name, b.version)
	}
	if s.data != nil && b.data == nil {
		return nil, errInvalid(msgRestoreNoData, name)
	}
	op := s.startOperation(p, req.project, inst, OpRestoreVolume, s.delays.Update, req.failOp,
		func(end time.Time) {
			s.takeBackupContents(req.project, inst, b)
			if s.data == nil || b.data == nil {
				return
			}
			s.dataPlaneDown(inst)
			s.data.restoreInto(inst, b.data, name)
			s.refreshIPAddresses(inst, inst.db)
			inst.pitrSince = time.Time{}
			s.notePITR(inst, end)
		}, nil)
	return op.render(now), nil
}

// takeBackupContents gives inst the users and databases b kept. Callers hold
// s.mu.
func (s *Server) takeBackupContents(project string, inst *instanceState, b *backupState) {
	name := inst.db.Name
	inst.users = map[string]*userState{}
	for n, u := range b.users {
		c := newUserState(project, name, n, u.password)
		c.user.Type = u.userType
		inst.users[n] = c
	}
	inst.databases = map[string]*sqladmin.Database{}
	for n, d := range b.databases {
		inst.databases[n] = newDatabase(project, name, n, d.Charset, d.Collation)
	}
	inst.dbOwners = maps.Clone(b.dbOwners)
}
