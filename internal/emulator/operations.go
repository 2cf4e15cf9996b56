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
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// Operation statuses and types, as the API spells them.
const (
	OperationPending = "PENDING"
	OperationRunning = "RUNNING"
	OperationDone    = "DONE"

	OpCreate     = "CREATE"
	OpUpdate     = "UPDATE"
	OpDelete     = "DELETE"
	OpCreateUser = "CREATE_USER"
	OpUpdateUser = "UPDATE_USER"
	OpDeleteUser = "DELETE_USER"

	OpCreateDatabase = "CREATE_DATABASE"
	OpUpdateDatabase = "UPDATE_DATABASE"
	OpDeleteDatabase = "DELETE_DATABASE"
	OpClone          = "CLONE"
	OpBackupVolume   = "BACKUP_VOLUME"
	OpDeleteBackup   = "DELETE_BACKUP"
	OpRestoreVolume  = "RESTORE_VOLUME"
	// OpPreCheckUpgrade is the operation of
	// instances.preCheckMajorVersionUpgrade.
	OpPreCheckUpgrade = "PRE_CHECK_MAJOR_VERSION_UPGRADE"
)

// selfLinkBase is the base of the selfLink and targetLink fields. The real
// base is kept on purpose: a controller must not depend on where the API is
// served from, and the real client never follows these links.
const selfLinkBase = "https://sqladmin.googleapis.com/sql/v1beta4/projects/"

// operationUser is who the emulator says started every operation.
const operationUser = "cloudsql-emulator@example.com"

// List paging limits of the real API.
const (
	defaultPageSize = 500
	maxPageSize     = 1000
)

// operation is a long-running operation. Its status is a pure function of
// the emulator's clock; its effect on the instance is applied once, by
// settle, the first time a request sees it DONE.
type operation struct {
	// seq orders operations across projects for the admin log.
	seq      uint64
	id       string
	project  string
	instance string
	opType   string
	insert   time.Time
	start    time.Time
	end      time.Time
	// failure is set when an injected fault makes the operation end DONE
	// with an error.
	failure *sqladmin.OperationErrors
	// onDone applies the operation's effect; onFail undoes what the request
	// did up front (e.g. the PENDING_DELETE state). Either may be nil.
	onDone  func(end time.Time)
	onFail  func(end time.Time)
	settled bool

	// targetLink, when set, is the operation's target instead of the
	// instance: Cloud SQL links database operations to the database.
	targetLink string
	// backupID is the backup run a BACKUP_VOLUME or DELETE_BACKUP
	// operation is about, answered in its backupContext.
	backupID int64
	// preCheck is what a PRE_CHECK_MAJOR_VERSION_UPGRADE operation checks.
	preCheck *preCheck
}

func (o *operation) status(now time.Time) string {
	switch {
	case now.Before(o.start):
		return OperationPending
	case now.Before(o.end):
		return OperationRunning
	default:
		return OperationDone
	}
}

// render is the operation as the API shows it at time now.
func (o *operation) render(now time.Time) *sqladmin.Operation {
	st := o.status(now)
	op := &sqladmin.Operation{
		Kind:          "sql#operation",
		Name:          o.id,
		OperationType: o.opType,
		Status:        st,
		InsertTime:    formatTime(o.insert),
		TargetId:      o.instance,
		TargetProject: o.project,
		TargetLink:    instanceLink(o.project, o.instance),
		SelfLink:      selfLinkBase + o.project + "/operations/" + o.id,
		User:          operationUser,
	}
	if o.targetLink != "" {
		op.TargetLink = o.targetLink
	}
	if o.backupID != 0 {
		op.BackupContext = &sqladmin.BackupContext{Kind: "sql#backupContext", BackupId: o.backupID}
	}
	if o.preCheck != nil {
		op.PreCheckMajorVersionUpgradeContext = o.preCheck.context(st == OperationDone && o.failure == nil)
	}
	if st != OperationPending {
		op.StartTime = formatTime(o.start)
	}
	if st == OperationDone {
		op.EndTime = formatTime(o.end)
		op.Error = o.failure
	}
	return op
}

// newOperationID returns a UUID-shaped ID from the seeded generator, so that
// runs with the same seed name their operations the same. Callers hold s.mu.
func (s *Server) newOperationID() string {
	a, b := s.rnd.Uint64(), s.rnd.Uint64()
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x",
		a>>32, (a>>16)&0xffff, 0x4000|(a&0x0fff), 0x8000|((b>>48)&0x3fff), b&0xffffffffffff)
}

// startOperation records a new operation on an instance and settles it at
// once when its delay is zero. Callers hold s.mu.
func (s *Server) startOperation(p *projectState, project string, inst *instanceState, opType string,
	delay time.Duration, fail bool, onDone, onFail func(time.Time)) *operation {
	op := s.newOperation(p, project, inst.db.Name, opType, delay, fail, onDone, onFail)
	inst.activeOp = op
	s.settle(p, s.now())
	return op
}

// newOperation records a new operation that targets the instance called
// name, which may be gone (a retained backup's deletion), without making it
// the instance's active one. Callers hold s.mu and settle.
func (s *Server) newOperation(p *projectState, project, name, opType string,
	delay time.Duration, fail bool, onDone, onFail func(time.Time)) *operation {
	now := s.now()
	s.opSeq++
	op := &operation{
		seq:      s.opSeq,
		id:       s.newOperationID(),
		project:  project,
		instance: name,
		opType:   opType,
		insert:   now,
		start:    now.Add(delay / 10),
		end:      now.Add(delay),
		onDone:   onDone,
		onFail:   onFail,
	}
	if fail {
		op.failure = &sqladmin.OperationErrors{
			Kind: "sql#operationErrors",
			Errors: []*sqladmin.OperationError{{
				Kind: "sql#operationError", Code: "INTERNAL_ERROR", Message: msgOperationFailed,
			}},
		}
	}
	p.ops = append(p.ops, op)
	p.opsByID[op.id] = op
	p.pending = append(p.pending, op)
	return op
}

// settle applies the effects of every operation of the project that is DONE
// at time now and not yet applied, oldest first. It is called at the start
// of every request (and by the admin surface), which is what moves instances
// through their lifecycle without a background goroutine. Callers hold s.mu.
func (s *Server) settle(p *projectState, now time.Time) {
	kept := p.pending[:0]
	for _, op := range p.pending {
		if op.end.After(now) {
			kept = append(kept, op)
			continue
		}
		op.settled = true
		if op.failure == nil && op.onDone != nil {
			op.onDone(op.end)
		}
		if op.failure != nil && op.onFail != nil {
			op.onFail(op.end)
		}
	}
	clear(p.pending[len(kept):])
	p.pending = kept
}

// settleAll settles every project. Callers hold s.mu.
func (s *Server) settleAll(now time.Time) {
	for _, p := range s.projects {
		s.settle(p, now)
	}
}

func (s *Server) operationsGet(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	p := s.project(req.project)
	s.settle(p, now)
	op, ok := p.opsByID[req.resource]
	if !ok {
		return nil, errOperationNotFound()
	}
	return op.render(now), nil
}

func (s *Server) operationsList(req *apiRequest) (any, error) {
	q := req.r.URL.Query()
	offset, size, err := pageParams(q.Get("pageToken"), q.Get("maxResults"))
	if err != nil {
		return nil, err
	}
	instance := q.Get("instance")

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	p := s.project(req.project)
	s.settle(p, now)
	// Newest first, like the real API.
	var matched []*operation
	for i := len(p.ops) - 1; i >= 0; i-- {
		if instance == "" || p.ops[i].instance == instance {
			matched = append(matched, p.ops[i])
		}
	}
	page, next := paginate(len(matched), offset, size)
	resp := &sqladmin.OperationsListResponse{Kind: "sql#operationsList", NextPageToken: next}
	for _, op := range matched[page.from:page.to] {
		resp.Items = append(resp.Items, op.render(now))
	}
	return resp, nil
}

// pageParams parses maxResults and pageToken as the real API does: at most
// defaultPageSize items unless asked, never more than maxPageSize.
func pageParams(token, maxResults string) (offset, size int, err error) {
	size = defaultPageSize
	if maxResults != "" {
		n, perr := strconv.Atoi(maxResults)
		if perr != nil || n < 0 {
			return 0, 0, errInvalid("Invalid value for maxResults: %q.", maxResults)
		}
		if n > 0 {
			size = min(n, maxPageSize)
		}
	}
	if token != "" {
		b, derr := base64.RawURLEncoding.DecodeString(token)
		n, aerr := strconv.Atoi(string(b))
		if derr != nil || aerr != nil || n < 0 {
			return 0, 0, errInvalid("Invalid page token: %q.", token)
		}
		offset = n
	}
	return offset, size, nil
}

type pageRange struct{ from, to int }

// paginate cuts [offset, offset+size) out of n items and returns the token of
// the next page, empty on the last one.
func paginate(n, offset, size int) (pageRange, string) {
	from := min(offset, n)
	to := min(from+size, n)
	next := ""
	if to < n {
		next = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(to)))
	}
	return pageRange{from, to}, next
}
