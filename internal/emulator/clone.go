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
	"strings"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

const (
	msgCloneZone        = "Invalid preferred zone %q: instance %q is in region %s, and its clone is made in the same region."
	msgClonePointInTime = "Invalid cloneContext.pointInTime %q: use an RFC 3339 timestamp such as 2026-01-02T15:04:05.000Z."
	// msgCloneOutsideWindow names the window that getLatestRecoveryTime
	// answers, so that the caller can correct the time without asking.
	msgCloneOutsideWindow = "Invalid cloneContext.pointInTime %q: instance %q can be recovered to any time from %s to %s."
	msgCloneNoPITR        = "Invalid cloneContext.pointInTime %q: point-in-time recovery is not enabled for the instance %q; enable settings.backupConfiguration.pointInTimeRecoveryEnabled first."
)

// instancesClone creates the instance cloneContext.destinationInstanceName as
// a copy of the source (POST instances/{instance}/clone). The CLONE operation
// targets the destination (recorded against real Cloud SQL: targetId and
// targetLink name the new instance), which is PENDING_CREATE until it is DONE,
// as after an insert. The copy has the source's settings (a new
// settingsVersion 1; the zone is preferredZone when given), its own name,
// createTime, CA and connection name, and the source's users with their
// passwords and its databases as they are when the clone is asked for. With a
// data plane, the clone's PostgreSQL is a copy of the source's, data included
// (see dataPlane.clones).
//
// A pointInTime must lie in the source's recovery window, the one
// getLatestRecoveryTime answers (its latest time is now, as far as the WAL
// archived when the clone is asked for reaches), else 400 invalid naming the
// window; a source without point-in-time recovery refuses every pointInTime.
// With a data plane the clone's PostgreSQL is then recovered from the newest
// base at or before that time and the source's WAL archive: it holds exactly
// the transactions committed until then.
//
// No recording shows a refused clone. The destination's name is judged as an
// insert judges it (409 instanceAlreadyExists for a live or reserved name),
// which is also how Config Connector's mock of Cloud SQL clones: by inserting
// a copy of the source. A source that takes no mutation now (another
// operation running, maintenance) answers 409 operationInProgress.
func (s *Server) instancesClone(req *apiRequest) (any, error) {
	var in sqladmin.InstancesCloneRequest
	if err := decodeJSON(req.body, &in); err != nil {
		return nil, err
	}
	cc := in.CloneContext
	if cc == nil || cc.DestinationInstanceName == "" {
		return nil, errRequired("cloneContext.destinationInstanceName")
	}
	dest := cc.DestinationInstanceName
	if !instanceNameRE.MatchString(dest) {
		return nil, errInvalid("Invalid instance name %q: use lowercase letters, numbers and hyphens, start with a letter, at most 98 characters.", dest)
	}
	var pit time.Time
	if cc.PointInTime != "" {
		t, err := time.Parse(time.RFC3339Nano, cc.PointInTime)
		if err != nil {
			return nil, errInvalid(msgClonePointInTime, cc.PointInTime)
		}
		pit = t
	}
	archived, err := s.archiveForClone(req, cc.PointInTime)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	caTime := s.now()
	s.mu.Unlock()
	// Key generation happens outside the lock, as for an insert.
	ca, err := newCertAuthority(req.project, dest, caTime)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	p, src, err := s.mutableInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	if cc.PreferredZone != "" && !strings.HasPrefix(cc.PreferredZone, src.db.Region+"-") {
		return nil, errInvalid(msgCloneZone, cc.PreferredZone, src.db.Name, src.db.Region)
	}
	var recovery *recoveryBase
	if !pit.IsZero() {
		if recovery, err = s.checkPointInTime(src, cc.PointInTime, pit, now, archived); err != nil {
			return nil, err
		}
	}
	if err := p.claimName(dest, now); err != nil {
		return nil, err
	}
	db, err := cloneInstance(req.project, src.db, dest, cc.PreferredZone)
	if err != nil {
		return nil, err
	}
	db.State = StatePendingCreate
	db.CreateTime = formatTime(now)
	db.ServerCaCert = ca.sslCert(dest)
	inst := &instanceState{db: db, users: map[string]*userState{}, ca: ca}
	for n, u := range src.users {
		c := newUserState(req.project, dest, n, u.password)
		c.user.Type = u.user.Type
		inst.users[n] = c
	}
	inst.databases = map[string]*sqladmin.Database{}
	for n, d := range src.dbs() {
		inst.databases[n] = newDatabase(req.project, dest, n, d.Charset, d.Collation)
	}
	inst.dbOwners = maps.Clone(src.dbOwners)
	p.instances[dest] = inst
	switch {
	case s.data == nil:
	case recovery != nil:
		s.data.recoverInto(inst, src, *recovery, s.wallTime(pit))
	default:
		s.data.cloneOf(inst, src)
	}
	op := s.startOperation(p, req.project, inst, OpClone, s.delays.Create, req.failOp,
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

// archivedWAL is what the source's server said of its WAL archive before a
// clone at a point in time: the latest time it reaches, by the wall clock.
type archivedWAL struct {
	latest time.Time
	ok     bool
}

// archiveForClone archives the source's WAL when a clone at a point in time
// is asked for (pointInTime not empty), so that the latest time of its
// recovery window is now. Without a data plane, or when the server cannot
// say, the window ends now by the emulator's clock.
func (s *Server) archiveForClone(req *apiRequest, pointInTime string) (archivedWAL, error) {
	if pointInTime == "" {
		return archivedWAL{}, nil
	}
	s.mu.Lock()
	_, src, err := s.mutableInstance(req.project, req.instance)
	if err != nil {
		s.mu.Unlock()
		return archivedWAL{}, err
	}
	check := dataPlaneCheck(src)
	s.mu.Unlock()
	var out archivedWAL
	out.ok = check.run("archive the WAL for a clone at "+pointInTime, func(ctx context.Context, pg *postgres.Server) error {
		var err error
		out.latest, err = pg.ArchiveWAL(ctx)
		return err
	})
	return out, nil
}

// checkPointInTime judges a clone's pointInTime pit against the source's
// recovery window and, with a data plane, picks the base the clone's server
// is recovered from (nil: none, the clone copies the present). Callers hold
// s.mu.
func (s *Server) checkPointInTime(src *instanceState, raw string, pit, now time.Time, archived archivedWAL) (*recoveryBase, error) {
	latest := now
	if archived.ok {
		latest = s.emulatorTime(archived.latest)
	}
	w, err := s.recoveryWindow(src, now, latest)
	if err != nil {
		return nil, errInvalid(msgCloneNoPITR, raw, src.db.Name)
	}
	if !w.holds(pit) {
		return nil, errInvalid(msgCloneOutsideWindow, raw, src.db.Name, formatTime(w.earliest), formatTime(w.latest))
	}
	if !archived.ok {
		return nil, nil
	}
	base, ok := s.baseFor(src, s.wallTime(pit))
	if !ok {
		s.dataLog("instance %s: no base backup precedes %s, so its clone copies the present", src.db.Name, raw)
		return nil, nil
	}
	return &base, nil
}

// cloneInstance is the destination of a clone as instances.get first shows
// it: the source's settings and version under a new name, standing alone.
func cloneInstance(project string, src *sqladmin.DatabaseInstance, name, zone string) (*sqladmin.DatabaseInstance, error) {
	settings, err := copySettings(src.Settings)
	if err != nil {
		return nil, err
	}
	settings.SettingsVersion = 1
	if zone != "" {
		if settings.LocationPreference == nil {
			settings.LocationPreference = &sqladmin.LocationPreference{Kind: "sql#locationPreference"}
		}
		settings.LocationPreference.Zone = zone
	}
	// The source's answered fields (those false or zero included) are the
	// clone's too.
	raw, err := toMap(src.Settings)
	if err != nil {
		return nil, err
	}
	normalizeSettings(settings, raw, false, false, src.DatabaseVersion, src.Region)
	db, err := copyInstance(src)
	if err != nil {
		return nil, err
	}
	// A clone is a primary of its own: nothing of the source's replication
	// or addresses comes with it.
	db.Name = name
	db.Settings = settings
	db.IpAddresses = nil
	db.ReplicaNames = nil
	db.MasterInstanceName = ""
	db.ReplicaConfiguration = nil
	db.FailoverReplica = nil
	db.ServerCaCert = nil
	db.Etag = ""
	fillServerFields(db, project)
	return db, nil
}
