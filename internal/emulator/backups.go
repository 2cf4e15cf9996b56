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
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

// Backup run types and statuses, as the API spells them.
const (
	BackupAutomated = "AUTOMATED"
	BackupOnDemand  = "ON_DEMAND"
	BackupFinal     = "FINAL"

	BackupEnqueued   = "ENQUEUED"
	BackupRunning    = "RUNNING"
	BackupSuccessful = "SUCCESSFUL"
	BackupFailed     = "FAILED"
	// BackupDeletionPending is a run while its DELETE_BACKUP operation
	// runs, and BackupDeletionFailed one whose deletion failed.
	BackupDeletionPending = "DELETION_PENDING"
	BackupDeletionFailed  = "DELETION_FAILED"
)

// Reasons and messages of backup errors. Cloud SQL's list of Admin API
// errors names BACKUP_RUN_DOES_NOT_EXIST (404); no recording holds its
// envelope, so it is written like instanceDoesNotExist.
const (
	ReasonBackupRunDoesNotExist = "backupRunDoesNotExist"

	msgBackupRunDoesNotExist = "The backup run does not exist."
	msgBackupNotFound        = "Backup %q was not found."
	msgBackupFailed          = "An unknown error occurred while taking the backup."
	msgPITRDisabled          = "Point-in-time recovery is not enabled for the instance %q."
	msgFinalBackupTTL        = "Invalid finalBackupTtlDays %q: use a number of days from 1 to 365."
	msgFinalBackupExpiry     = "Invalid finalBackupExpiryTime %q: use an RFC 3339 time at most 365 days from now."
	msgFinalBackupBoth       = "Specify at most one of finalBackupTtlDays and finalBackupExpiryTime."
	msgFinalBackupFlag       = "Invalid enableFinalBackup %q: use true or false."
)

const (
	// defaultFinalBackupDays is how long a FINAL backup is kept unless the
	// delete or settings.finalBackupConfig says otherwise, as gcloud's
	// --final-backup-retention-days documents (1 to 365, default 30).
	defaultFinalBackupDays = 30
	maxFinalBackupDays     = 365
	day                    = 24 * time.Hour
)

// backupState is one backup run of an instance: taken by backupRuns.insert
// (ON_DEMAND), in the backup window (AUTOMATED) or by a delete that asked
// for one (FINAL). It outlives its instance when it is retained.
type backupState struct {
	id          int64
	project     string
	instance    string
	kind        string
	description string
	enqueued    time.Time
	window      time.Time // the backup window an automated backup ran in
	// op is the BACKUP_VOLUME operation of an on-demand backup; while it
	// runs the backup is ENQUEUED, then RUNNING.
	op      *operation
	failure *sqladmin.OperationError
	// deletion is the DELETE_BACKUP operation of the run, once asked for.
	deletion *operation
	version  string
	location string
	// settings is the instance as it was when the backup was taken, which
	// the Backups API answers as instanceSettings.
	settings *sqladmin.DatabaseInstance
	// expiry is when the backup goes by itself (a FINAL backup); zero
	// means never.
	expiry time.Time
	// deleted is when its instance was deleted; zero while it lives.
	deleted time.Time
	// data is the copy of the instance's PostgreSQL (WithPostgres); nil
	// without a data plane or when the copy could not be taken.
	data *postgres.Backup
	// size is the size of data's files: the run's maxChargeableBytes.
	size int64
	// dataAt is when the copy in data was complete, by the wall clock that
	// dates PostgreSQL's commits, and archive the WAL archive of the server
	// it was taken from: a point-in-time recovery may start from it to any
	// time after dataAt that archive reaches.
	dataAt  time.Time
	archive string
	// users and databases are the instance's as they were when the backup
	// was taken, which a restore gives the instance it restores into.
	users     map[string]backupUser
	databases map[string]*sqladmin.Database
	dbOwners  map[string]string
}

// backupUser is a user as a backup keeps it.
type backupUser struct {
	userType, password string
}

// status is the backup run's status at time now.
func (b *backupState) status(now time.Time) string {
	if d := b.deletion; d != nil {
		switch {
		case d.status(now) != OperationDone:
			return BackupDeletionPending
		case d.failure != nil:
			return BackupDeletionFailed
		}
	}
	if b.op != nil {
		switch b.op.status(now) {
		case OperationPending:
			return BackupEnqueued
		case OperationRunning:
			return BackupRunning
		}
	}
	if b.failure != nil {
		return BackupFailed
	}
	return BackupSuccessful
}

// end is when the backup was done.
func (b *backupState) end() time.Time {
	if b.op != nil {
		return b.op.end
	}
	return b.enqueued
}

func backupRunLink(project, instance string, id int64) string {
	return instanceLink(project, instance) + "/backupRuns/" + strconv.FormatInt(id, 10)
}

func backupName(project string, id int64) string {
	return "projects/" + project + "/backups/" + strconv.FormatInt(id, 10)
}

// run is the backup as backupRuns.get answers it at time now.
func (b *backupState) run(now time.Time) *sqladmin.BackupRun {
	st := b.status(now)
	r := &sqladmin.BackupRun{
		Kind:            "sql#backupRun",
		Id:              b.id,
		Instance:        b.instance,
		Type:            b.kind,
		Status:          st,
		Description:     b.description,
		EnqueuedTime:    formatTime(b.enqueued),
		DatabaseVersion: b.version,
		Location:        b.location,
		BackupKind:      "SNAPSHOT",
		SelfLink:        backupRunLink(b.project, b.instance, b.id),
	}
	if !b.window.IsZero() {
		r.WindowStartTime = formatTime(b.window)
	}
	if st != BackupEnqueued {
		r.StartTime = formatTime(b.enqueued)
	}
	if st != BackupEnqueued && st != BackupRunning {
		r.EndTime = formatTime(b.end())
		r.Error = b.failure
	}
	if b.data != nil && b.failure == nil && st != BackupEnqueued && st != BackupRunning {
		r.MaxChargeableBytes = b.size
	}
	return r
}

// backup is the backup as the Backups API (projects/{p}/backups) answers it.
func (b *backupState) backup(now time.Time) *sqladmin.Backup {
	st := b.status(now)
	out := &sqladmin.Backup{
		Kind:             "sql#backup",
		Name:             backupName(b.project, b.id),
		Instance:         b.instance,
		Type:             b.kind,
		State:            st,
		Description:      b.description,
		DatabaseVersion:  b.version,
		Location:         b.location,
		BackupKind:       "SNAPSHOT",
		BackupRun:        backupRunLink(b.project, b.instance, b.id),
		SelfLink:         selfLinkBase + strings.TrimPrefix(backupName(b.project, b.id), "projects/"),
		InstanceSettings: b.settings,
	}
	if st == BackupSuccessful {
		out.BackupInterval = &sqladmin.Interval{StartTime: formatTime(b.enqueued), EndTime: formatTime(b.end())}
	}
	if st == BackupFailed {
		out.Error = b.failure
	}
	if !b.expiry.IsZero() {
		out.ExpiryTime = formatTime(b.expiry)
	}
	if !b.deleted.IsZero() {
		out.InstanceDeletionTime = formatTime(b.deleted)
	}
	return out
}

// newBackup records a backup of inst taken now; it fails when a failure was
// injected for it. Callers hold s.mu.
func (s *Server) newBackup(p *projectState, project string, inst *instanceState, kind string, now time.Time) *backupState {
	id := max(now.UnixMilli(), p.lastBackupID+1)
	p.lastBackupID = id
	settings, _ := copyInstance(inst.db)
	if settings != nil {
		settings.IpAddresses, settings.ServerCaCert = nil, nil
	}
	b := &backupState{
		id: id, project: project, instance: inst.db.Name, kind: kind, enqueued: now,
		version: inst.db.DatabaseVersion, location: inst.db.Region, settings: settings,
	}
	if bc := inst.db.Settings.BackupConfiguration; bc != nil && bc.Location != "" {
		b.location = bc.Location
	}
	b.users = map[string]backupUser{}
	for n, u := range inst.users {
		b.users[n] = backupUser{u.user.Type, u.password}
	}
	b.databases = map[string]*sqladmin.Database{}
	for n, d := range inst.dbs() {
		b.databases[n] = d
	}
	b.dbOwners = maps.Clone(inst.dbOwners)
	if inst.backupFailure != "" {
		b.failure = &sqladmin.OperationError{Kind: "sql#operationError", Code: "INTERNAL_ERROR", Message: inst.backupFailure}
		inst.backupFailure = ""
	}
	inst.backups = append(inst.backups, b)
	return b
}

// copyData takes the data plane's copy of a backup once the instance's
// PostgreSQL has applied what the API reported done (see pgCheck), and
// fails the backup when the copy can't be taken. Callers must not hold s.mu.
func (s *Server) copyData(c pgCheck, b *backupState) {
	if c.b == nil || b.failure != nil {
		return
	}
	var data *postgres.Backup
	var size int64
	var at time.Time
	var archive string
	ok := c.run("take backup "+strconv.FormatInt(b.id, 10), func(ctx context.Context, pg *postgres.Server) error {
		var err error
		data, err = pg.Backup(ctx, b.project+"-"+b.instance+"-"+strconv.FormatInt(b.id, 10))
		if err == nil {
			size, at, archive = data.Size(), time.Now(), pg.ArchiveDir()
		}
		return err
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		b.failure = &sqladmin.OperationError{Kind: "sql#operationError", Code: "INTERNAL_ERROR", Message: msgBackupFailed}
		return
	}
	b.data, b.size, b.dataAt, b.archive = data, size, at, archive
}

// backupRunsInsert takes an ON_DEMAND backup (POST .../backupRuns): a
// BACKUP_VOLUME operation with the update delay, whose backupContext names
// the backup run. With a data plane, the backup holds the data as it is
// when the request is answered. A failure injected with FailNextBackup makes
// the backup FAILED and the operation end with the same error.
func (s *Server) backupRunsInsert(req *apiRequest) (any, error) {
	var in sqladmin.BackupRun
	if len(strings.TrimSpace(string(req.body))) > 0 {
		if err := decodeJSON(req.body, &in); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	p, inst, err := s.mutableInstance(req.project, req.instance)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if inst.db.State != StateRunnable {
		s.mu.Unlock()
		return nil, errInstanceNotRunning()
	}
	now := s.now()
	b := s.newBackup(p, req.project, inst, BackupOnDemand, now)
	b.description = in.Description
	op := s.startOperation(p, req.project, inst, OpBackupVolume, s.delays.Update, req.failOp, nil, nil)
	op.backupID = b.id
	b.op = op
	check := dataPlaneCheck(inst)
	s.mu.Unlock()

	s.copyData(check, b)

	s.mu.Lock()
	defer s.mu.Unlock()
	if b.failure != nil && op.failure == nil {
		op.failure = &sqladmin.OperationErrors{Kind: "sql#operationErrors", Errors: []*sqladmin.OperationError{b.failure}}
	}
	if op.failure != nil && b.failure == nil {
		b.failure = op.failure.Errors[0]
	}
	return op.render(s.now()), nil
}

// takeAutomatedBackups takes the AUTOMATED backups of the backup windows
// (daily at backupConfiguration.startTime, UTC) that passed since the last
// look, while backups are enabled and the instance is RUNNABLE, and keeps
// the newest retainedBackups of them, as Cloud SQL's retention does. The
// emulator takes them when someone looks (backup runs, backups, the admin
// surface), dated at their window, so a test that advances the clock sees
// those of the windows it skipped; their data is the instance's when they
// are taken. Callers hold s.mu.
func (s *Server) takeAutomatedBackups(p *projectState, project string, inst *instanceState, now time.Time) {
	from := inst.backupsSeen
	inst.backupsSeen = now
	bc := inst.db.Settings.BackupConfiguration
	if bc == nil || !bc.Enabled || inst.db.State != StateRunnable || from.IsZero() {
		return
	}
	hm, err := time.Parse("15:04", bc.StartTime)
	if err != nil {
		return
	}
	keep := retainedCount(bc)
	var windows []time.Time
	for d := from.Truncate(day); !d.After(now); d = d.Add(day) {
		w := d.Add(time.Duration(hm.Hour())*time.Hour + time.Duration(hm.Minute())*time.Minute)
		if w.After(from) && !w.After(now) {
			windows = append(windows, w)
		}
	}
	if len(windows) > keep {
		windows = windows[len(windows)-keep:]
	}
	for _, w := range windows {
		b := s.newBackup(p, project, inst, BackupAutomated, w)
		b.window = w
		s.queueBackupData(inst, b)
	}
	s.pruneAutomated(inst, keep)
}

// retainedCount is how many automated backups the configuration keeps.
func retainedCount(bc *sqladmin.BackupConfiguration) int {
	if rs := bc.BackupRetentionSettings; rs != nil && rs.RetainedBackups > 0 {
		return int(rs.RetainedBackups)
	}
	return defaultRetainedBackups
}

// pruneAutomated drops the oldest automated backups beyond keep; on-demand
// backups stay until deleted, as on Cloud SQL. Callers hold s.mu.
func (s *Server) pruneAutomated(inst *instanceState, keep int) {
	n := 0
	for _, b := range inst.backups {
		if b.kind == BackupAutomated {
			n++
		}
	}
	kept := inst.backups[:0]
	for _, b := range inst.backups {
		if b.kind == BackupAutomated && n > keep {
			n--
			s.dropBackupData(b)
			continue
		}
		kept = append(kept, b)
	}
	clear(inst.backups[len(kept):])
	inst.backups = kept
}

// queueBackupData copies the instance's data into an automated backup from
// the instance's task queue, since it is taken under s.mu. Callers hold s.mu.
func (s *Server) queueBackupData(inst *instanceState, b *backupState) {
	if b.failure != nil {
		return
	}
	s.dataPlaneTask(inst, task{what: "take backup " + strconv.FormatInt(b.id, 10), run: func(ctx context.Context, be *backend) error {
		pg := be.postgres()
		if pg == nil {
			return nil
		}
		data, err := pg.Backup(ctx, b.project+"-"+b.instance+"-"+strconv.FormatInt(b.id, 10))
		var size int64
		at := time.Now()
		if err == nil {
			size = data.Size()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			b.failure = &sqladmin.OperationError{Kind: "sql#operationError", Code: "INTERNAL_ERROR", Message: msgBackupFailed}
			return err
		}
		b.data, b.size, b.dataAt, b.archive = data, size, at, pg.ArchiveDir()
		return nil
	}})
}

// dropBackupData removes a backup's copy of the data. Callers hold s.mu.
func (s *Server) dropBackupData(b *backupState) {
	if b.data != nil {
		if err := b.data.Remove(); err != nil {
			s.dataLog("cannot remove backup %d of %s:%s: %v", b.id, b.project, b.instance, err)
		}
		b.data = nil
	}
}

// dropAllBackupData removes the data of every backup, for Close.
func (s *Server) dropAllBackupData() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.projects {
		for _, b := range p.retained {
			s.dropBackupData(b)
		}
		for _, inst := range p.instances {
			for _, b := range inst.backups {
				s.dropBackupData(b)
			}
		}
	}
}

// backupsOf settles the project and takes the automated backups due on
// inst. Callers hold s.mu.
func (s *Server) backupsOf(project, instance string) (*projectState, *instanceState, time.Time, error) {
	p, inst, err := s.findInstance(project, instance)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	now := s.now()
	s.takeAutomatedBackups(p, project, inst, now)
	return p, inst, now, nil
}

func (s *Server) backupRunsList(req *apiRequest) (any, error) {
	q := req.r.URL.Query()
	offset, size, err := pageParams(q.Get("pageToken"), q.Get("maxResults"))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, inst, now, err := s.backupsOf(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	page, next := paginate(len(inst.backups), offset, size)
	resp := &sqladmin.BackupRunsListResponse{Kind: "sql#backupRunsList", NextPageToken: next}
	// Newest first, as the API lists them.
	for i := page.from; i < page.to; i++ {
		resp.Items = append(resp.Items, inst.backups[len(inst.backups)-1-i].run(now))
	}
	return resp, nil
}

// findBackupRun is the backup run of the request's path. Callers hold s.mu.
func (s *Server) findBackupRun(req *apiRequest) (*projectState, *instanceState, *backupState, time.Time, error) {
	p, inst, now, err := s.backupsOf(req.project, req.instance)
	if err != nil {
		return nil, nil, nil, now, err
	}
	id, perr := strconv.ParseInt(req.resource, 10, 64)
	for _, b := range inst.backups {
		if perr == nil && b.id == id {
			return p, inst, b, now, nil
		}
	}
	return nil, nil, nil, now, errBackupRunNotFound()
}

func (s *Server) backupRunsGet(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, b, now, err := s.findBackupRun(req)
	if err != nil {
		return nil, err
	}
	return b.run(now), nil
}

// backupRunsDelete deletes a backup run (DELETE_BACKUP, with the update
// delay); the backup is gone when the operation is DONE.
func (s *Server) backupRunsDelete(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, _, b, now, err := s.findBackupRun(req)
	if err != nil {
		return nil, err
	}
	op, err := s.startBackupDeletion(p, req.project, b, req.failOp)
	if err != nil {
		return nil, err
	}
	return op.render(now), nil
}

// startBackupDeletion starts the DELETE_BACKUP operation of b: on its
// instance while that lives (which takes no other mutation meanwhile), on
// the instance's name alone once it is gone. Callers hold s.mu.
func (s *Server) startBackupDeletion(p *projectState, project string, b *backupState, fail bool) (*operation, error) {
	forget := func(time.Time) { s.forgetBackup(p, b) }
	var op *operation
	if inst, ok := p.instances[b.instance]; ok && b.deleted.IsZero() {
		if err := inst.checkMutable(); err != nil {
			return nil, err
		}
		op = s.startOperation(p, project, inst, OpDeleteBackup, s.delays.Update, fail, forget, nil)
	} else {
		op = s.newOperation(p, project, b.instance, OpDeleteBackup, s.delays.Update, fail, forget, nil)
		s.settle(p, s.now())
	}
	op.backupID = b.id
	b.deletion = op
	return op, nil
}

// forgetBackup removes a backup wherever it is kept, and its data. Callers
// hold s.mu.
func (s *Server) forgetBackup(p *projectState, b *backupState) {
	remove := func(list []*backupState) []*backupState {
		out := list[:0]
		for _, x := range list {
			if x != b {
				out = append(out, x)
			}
		}
		clear(list[len(out):])
		return out
	}
	if inst, ok := p.instances[b.instance]; ok {
		inst.backups = remove(inst.backups)
	}
	p.retained = remove(p.retained)
	s.dropBackupData(b)
}

// projectBackups are the project's backups that the Backups API lists:
// those of its instances and those retained after their instance went,
// without the expired ones, which it forgets. Callers hold s.mu.
func (s *Server) projectBackups(project string) ([]*backupState, time.Time) {
	p := s.project(project)
	now := s.now()
	s.settle(p, now)
	kept := p.retained[:0]
	for _, b := range p.retained {
		if !b.expiry.IsZero() && !b.expiry.After(now) {
			s.dropBackupData(b)
			continue
		}
		kept = append(kept, b)
	}
	clear(p.retained[len(kept):])
	p.retained = kept
	out := append([]*backupState(nil), p.retained...)
	for _, inst := range p.instances {
		s.takeAutomatedBackups(p, project, inst, now)
		out = append(out, inst.backups...)
	}
	return out, now
}

// backupsList serves GET projects/{p}/backups (Backups.ListBackups), newest
// first. The filter parameter is ignored.
func (s *Server) backupsList(req *apiRequest) (any, error) {
	q := req.r.URL.Query()
	offset, size, err := pageParams(q.Get("pageToken"), q.Get("pageSize"))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all, now := s.projectBackups(req.project)
	sortBackupsNewestFirst(all)
	page, next := paginate(len(all), offset, size)
	resp := &sqladmin.ListBackupsResponse{NextPageToken: next}
	for _, b := range all[page.from:page.to] {
		resp.Backups = append(resp.Backups, b.backup(now))
	}
	return resp, nil
}

func sortBackupsNewestFirst(bs []*backupState) {
	for i := 1; i < len(bs); i++ {
		for j := i; j > 0 && bs[j].id > bs[j-1].id; j-- {
			bs[j], bs[j-1] = bs[j-1], bs[j]
		}
	}
}

// findBackup is the backup named by the request's path. Callers hold s.mu.
func (s *Server) findBackup(req *apiRequest) (*backupState, time.Time, error) {
	all, now := s.projectBackups(req.project)
	for _, b := range all {
		if strconv.FormatInt(b.id, 10) == req.resource {
			return b, now, nil
		}
	}
	return nil, now, errBackupNotFound("projects/" + req.project + "/backups/" + req.resource)
}

func (s *Server) backupsGet(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, now, err := s.findBackup(req)
	if err != nil {
		return nil, err
	}
	return b.backup(now), nil
}

// backupsDelete serves DELETE projects/{p}/backups/{b}: a DELETE_BACKUP
// operation, also for a backup whose instance is gone.
func (s *Server) backupsDelete(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, now, err := s.findBackup(req)
	if err != nil {
		return nil, err
	}
	op, err := s.startBackupDeletion(s.project(req.project), req.project, b, req.failOp)
	if err != nil {
		return nil, err
	}
	return op.render(now), nil
}

// finalBackupRequest is what an instances.delete asks of a final backup.
type finalBackupRequest struct {
	take bool
	// ttl and expiry are what the query asked; zero when it did not.
	ttl    time.Duration
	expiry time.Time
}

// parseFinalBackup reads the delete call's enableFinalBackup,
// finalBackupTtlDays and finalBackupExpiryTime parameters, with the bounds
// gcloud documents for them (at most one of the last two; 1 to 365 days).
func parseFinalBackup(r *http.Request, now time.Time) (finalBackupRequest, bool, error) {
	q := r.URL.Query()
	var out finalBackupRequest
	asked := q.Has("enableFinalBackup")
	if asked {
		v, err := strconv.ParseBool(q.Get("enableFinalBackup"))
		if err != nil {
			return out, false, errInvalid(msgFinalBackupFlag, q.Get("enableFinalBackup"))
		}
		out.take = v
	}
	if q.Has("finalBackupTtlDays") && q.Has("finalBackupExpiryTime") {
		return out, false, errInvalid(msgFinalBackupBoth)
	}
	if v := q.Get("finalBackupTtlDays"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxFinalBackupDays {
			return out, false, errInvalid(msgFinalBackupTTL, v)
		}
		out.ttl = time.Duration(n) * day
	}
	if v := q.Get("finalBackupExpiryTime"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || !t.After(now) || t.After(now.Add(maxFinalBackupDays*day)) {
			return out, false, errInvalid(msgFinalBackupExpiry, v)
		}
		out.expiry = t.UTC()
	}
	return out, asked, nil
}

// finalBackup decides whether a delete takes a FINAL backup, and until
// when it is kept: the query's enableFinalBackup, else
// settings.finalBackupConfig.enabled; the query's TTL or expiry, else
// finalBackupConfig.retentionDays, else 30 days.
func finalBackup(fb finalBackupRequest, asked bool, st *sqladmin.Settings, now time.Time) (bool, time.Time) {
	cfg := st.FinalBackupConfig
	take := fb.take
	if !asked {
		take = cfg != nil && cfg.Enabled
	}
	if !take {
		return false, time.Time{}
	}
	switch {
	case !fb.expiry.IsZero():
		return true, fb.expiry
	case fb.ttl > 0:
		return true, now.Add(fb.ttl)
	case cfg != nil && cfg.RetentionDays > 0:
		return true, now.Add(time.Duration(cfg.RetentionDays) * day)
	}
	return true, now.Add(defaultFinalBackupDays * day)
}

// retainBackups is the effect on an instance's backups of its deletion:
// with settings.retainBackupsOnDelete they all stay, listed by the Backups
// API; otherwise only the FINAL one does (until it expires), and the others
// go with the instance. Callers hold s.mu.
func (s *Server) retainBackups(p *projectState, inst *instanceState, end time.Time) {
	retain := inst.db.Settings.RetainBackupsOnDelete
	for _, b := range inst.backups {
		if retain || b.kind == BackupFinal {
			b.deleted = end
			p.retained = append(p.retained, b)
			continue
		}
		s.dropBackupData(b)
	}
	inst.backups = nil
}

// instancesGetLatestRecoveryTime serves GET
// projects/{p}/instances/{i}/getLatestRecoveryTime: the window a clone at a
// pointInTime may ask for (see recoveryWindow); with point-in-time recovery
// off, 400 invalid (no recording shows Cloud SQL's words for it). With a data
// plane it first waits for the instance's PostgreSQL to have run what the API
// reported done, the base backup of the window among it.
func (s *Server) instancesGetLatestRecoveryTime(req *apiRequest) (any, error) {
	s.mu.Lock()
	_, inst, err := s.findInstance(req.project, req.instance)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	check := dataPlaneCheck(inst)
	s.mu.Unlock()
	check.run("read the recovery window", func(context.Context, *postgres.Server) error { return nil })

	s.mu.Lock()
	defer s.mu.Unlock()
	_, inst, err = s.findInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	now := s.now()
	w, err := s.recoveryWindow(inst, now, now)
	if err != nil {
		return nil, err
	}
	// Right after the base backup its rounded time may pass now; the
	// window answered is never empty.
	w.latest = maxTime(w.latest, w.earliest)
	return &sqladmin.SqlInstancesGetLatestRecoveryTimeResponse{
		Kind:                 "sql#getLatestRecoveryTime",
		LatestRecoveryTime:   formatTime(w.latest),
		EarliestRecoveryTime: formatTime(w.earliest),
	}, nil
}

// window is the span of times an instance can be recovered to.
type window struct {
	earliest, latest time.Time
}

func (w window) holds(t time.Time) bool {
	return !t.Before(w.earliest) && !t.After(w.latest)
}

// recoveryWindow is the span of times inst can be recovered to, by the
// emulator's clock: from the later of when point-in-time recovery was turned
// on and now minus transactionLogRetentionDays, until latest. With a data
// plane it starts no earlier than the oldest base backup its WAL archive
// follows (the one taken when point-in-time recovery was turned on, see
// notePITR): earlier times could not be recovered, so they are not offered.
// The earliest time is rounded up to the millisecond, so that the time as
// answered is within the window; it may then pass the latest by less than a
// millisecond, until the clock moves on. Callers hold s.mu.
func (s *Server) recoveryWindow(inst *instanceState, now, latest time.Time) (window, error) {
	bc := inst.db.Settings.BackupConfiguration
	if bc == nil || !bc.PointInTimeRecoveryEnabled || inst.pitrSince.IsZero() {
		return window{}, errInvalid(msgPITRDisabled, inst.db.Name)
	}
	earliest := now.Add(-time.Duration(bc.TransactionLogRetentionDays) * day)
	if inst.pitrSince.After(earliest) {
		earliest = inst.pitrSince
	}
	if bases := s.recoveryBases(inst); len(bases) > 0 {
		oldest := bases[0].at
		for _, b := range bases[1:] {
			if b.at.Before(oldest) {
				oldest = b.at
			}
		}
		if first := s.emulatorTime(oldest); first.After(earliest) {
			earliest = first
		}
	}
	if r := earliest.Truncate(time.Millisecond); !r.Equal(earliest) {
		earliest = r.Add(time.Millisecond)
	}
	return window{earliest: earliest, latest: latest}, nil
}

// recoveryBase is a copy of an instance's data that a point-in-time recovery
// can start from: complete at the wall-clock time at, and followed by the WAL
// in archive.
type recoveryBase struct {
	data    *postgres.Backup
	at      time.Time
	archive string
}

// recoveryBases are the copies of inst's data that its server's WAL archive
// follows: the base backup taken when point-in-time recovery was turned on
// and the backups taken since from the same server. Callers hold s.mu.
func (s *Server) recoveryBases(inst *instanceState) []recoveryBase {
	var pg *postgres.Server
	if inst.data != nil {
		pg = inst.data.postgres()
	}
	if pg == nil {
		return nil
	}
	archive := pg.ArchiveDir()
	var out []recoveryBase
	if inst.pitrBase != nil && inst.pitrBase.archive == archive {
		out = append(out, *inst.pitrBase)
	}
	for _, b := range inst.backups {
		if b.data != nil && b.failure == nil && b.deletion == nil && b.archive == archive {
			out = append(out, recoveryBase{data: b.data, at: b.dataAt, archive: archive})
		}
	}
	return out
}

// baseFor is the newest base a recovery to the wall-clock time target can
// start from, if any. Callers hold s.mu.
func (s *Server) baseFor(inst *instanceState, target time.Time) (recoveryBase, bool) {
	var best recoveryBase
	found := false
	for _, b := range s.recoveryBases(inst) {
		if !b.at.After(target) && (!found || b.at.After(best.at)) {
			best, found = b, true
		}
	}
	return best, found
}

// wallTime is the wall-clock time, which dates PostgreSQL's commits, of the
// emulator's time t: they differ by the emulator clock's offset now, which
// is none on the wall clock. Callers hold s.mu.
func (s *Server) wallTime(t time.Time) time.Time {
	return t.Add(time.Since(s.now()))
}

// emulatorTime is the emulator's time of the wall-clock time w. Callers hold
// s.mu.
func (s *Server) emulatorTime(w time.Time) time.Time {
	return w.Add(-time.Since(s.now()))
}

// notePITR records when point-in-time recovery was turned on, for
// getLatestRecoveryTime. With a data plane it also takes the base backup
// that a recovery to a time before the instance's first backup starts from.
// Callers hold s.mu, after the instance's data plane is up.
func (s *Server) notePITR(inst *instanceState, at time.Time) {
	on := inst.db.Settings.BackupConfiguration != nil && inst.db.Settings.BackupConfiguration.PointInTimeRecoveryEnabled
	switch {
	case !on:
		inst.pitrSince = time.Time{}
		s.dropPITRBase(inst)
	case inst.pitrSince.IsZero():
		inst.pitrSince = at
		s.queuePITRBase(inst)
	}
}

// queuePITRBase takes the base backup of point-in-time recovery from the
// instance's task queue. Callers hold s.mu.
func (s *Server) queuePITRBase(inst *instanceState) {
	be := inst.data
	if be == nil {
		return
	}
	s.dataPlaneTask(inst, task{what: "take the base backup of point-in-time recovery", run: func(ctx context.Context, be *backend) error {
		pg := be.postgres()
		if pg == nil {
			return nil
		}
		data, err := pg.Backup(ctx, be.project+"-"+be.instance+"-pitr")
		if err != nil {
			return err
		}
		base := &recoveryBase{data: data, at: time.Now(), archive: pg.ArchiveDir()}
		s.mu.Lock()
		defer s.mu.Unlock()
		// The instance may have gone, or turned point-in-time recovery off,
		// meanwhile: then the copy has no use.
		if inst.data != be || inst.pitrSince.IsZero() {
			return data.Remove()
		}
		s.dropPITRBase(inst)
		inst.pitrBase = base
		return nil
	}})
}

// dropPITRBase removes the base backup of point-in-time recovery. Callers
// hold s.mu.
func (s *Server) dropPITRBase(inst *instanceState) {
	if inst.pitrBase != nil {
		if err := inst.pitrBase.data.Remove(); err != nil {
			s.dataLog("cannot remove the base backup of %s: %v", inst.db.Name, err)
		}
		inst.pitrBase = nil
	}
}

func errBackupRunNotFound() error {
	return &apiError{http.StatusNotFound, statusCloudSQL, ReasonBackupRunDoesNotExist, msgBackupRunDoesNotExist}
}

func errBackupNotFound(name string) error {
	return &apiError{http.StatusNotFound, statusNotFound, ReasonNotFound, fmt.Sprintf(msgBackupNotFound, name)}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
