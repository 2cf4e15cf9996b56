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
	"fmt"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// Pre-check message types, as PreCheckResponse.messageType spells them.
const (
	PreCheckInfo    = "INFO"
	PreCheckWarning = "WARNING"
	PreCheckError   = "ERROR"
)

const (
	msgPreCheckSameMajor = "Invalid targetDatabaseVersion %q: the instance is already on %s; a pre-check is of a later major version."
	msgPreCheckPassed    = "The instance can be upgraded to %s."
	// actionPreCheckFailed is the action a failure injected by FailPreCheck
	// asks for.
	actionPreCheckFailed = "Resolve the problem the message names, then run the pre-check again."
)

// instancesPreCheckMajorVersionUpgrade checks whether an instance can be
// upgraded in place to targetDatabaseVersion (POST
// instances/{instance}/preCheckMajorVersionUpgrade): a
// PRE_CHECK_MAJOR_VERSION_UPGRADE operation with the update delay, whose
// preCheckMajorVersionUpgradeContext carries, once DONE, the pre-check's
// responses: one INFO when the upgrade can go ahead, or the ERROR a test
// asked for with FailPreCheck. The operation itself ends DONE without an
// error either way, as the pre-check's findings are its result. A target
// that is not a later major version is refused (400 invalid), as a patch of
// databaseVersion would be.
func (s *Server) instancesPreCheckMajorVersionUpgrade(req *apiRequest) (any, error) {
	var in sqladmin.InstancesPreCheckMajorVersionUpgradeRequest
	if err := decodeJSON(req.body, &in); err != nil {
		return nil, err
	}
	pc := in.PreCheckMajorVersionUpgradeContext
	if pc == nil || pc.TargetDatabaseVersion == "" {
		return nil, errRequired("preCheckMajorVersionUpgradeContext.targetDatabaseVersion")
	}
	target := pc.TargetDatabaseVersion

	s.mu.Lock()
	defer s.mu.Unlock()
	p, inst, err := s.mutableInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	if inst.db.State != StateRunnable {
		return nil, errInstanceNotRunning()
	}
	current := inst.db.DatabaseVersion
	if err := validateUpgrade(current, target); err != nil {
		return nil, err
	}
	if majorVersion(target) <= majorVersion(current) {
		return nil, errInvalid(msgPreCheckSameMajor, target, current)
	}
	resp := &sqladmin.PreCheckResponse{MessageType: PreCheckInfo, Message: fmt.Sprintf(msgPreCheckPassed, target)}
	if msg := inst.preCheckFailure; msg != "" {
		inst.preCheckFailure = ""
		resp = &sqladmin.PreCheckResponse{MessageType: PreCheckError, Message: msg, ActionsRequired: []string{actionPreCheckFailed}}
	}
	op := s.startOperation(p, req.project, inst, OpPreCheckUpgrade, s.delays.Update, req.failOp, nil, nil)
	op.preCheck = &preCheck{target: target, responses: []*sqladmin.PreCheckResponse{resp}}
	return op.render(s.now()), nil
}

// preCheck is what a PRE_CHECK_MAJOR_VERSION_UPGRADE operation checks and,
// once DONE, answers.
type preCheck struct {
	target    string
	responses []*sqladmin.PreCheckResponse
}

// context is the operation's preCheckMajorVersionUpgradeContext at its
// status: the responses only when it is DONE without a failure.
func (c *preCheck) context(done bool) *sqladmin.PreCheckMajorVersionUpgradeContext {
	out := &sqladmin.PreCheckMajorVersionUpgradeContext{
		Kind:                  "sql#preCheckMajorVersionUpgradeContext",
		TargetDatabaseVersion: c.target,
	}
	if done {
		out.PreCheckResponse = c.responses
	}
	return out
}

// FailPreCheck makes the next preCheckMajorVersionUpgrade of an instance
// find a problem: its operation ends DONE with a pre-check response of type
// ERROR that carries message (a default one when empty) and an action
// required.
func (s *Server) FailPreCheck(project, instance, message string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return err
	}
	if message == "" {
		message = msgPreCheckDefaultFailure
	}
	inst.preCheckFailure = message
	return nil
}

// msgPreCheckDefaultFailure is FailPreCheck's message when a test gives none.
const msgPreCheckDefaultFailure = "The instance uses an extension that the target version does not support."
