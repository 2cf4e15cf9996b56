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
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strings"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// Instance states, as the API spells them.
const (
	StateRunnable          = "RUNNABLE"
	StatePendingCreate     = "PENDING_CREATE"
	StatePendingDelete     = "PENDING_DELETE"
	StateMaintenance       = "MAINTENANCE"
	StateOnlineMaintenance = "ONLINE_MAINTENANCE"
	StateSuspended         = "SUSPENDED"
	StateFailed            = "FAILED"
	StateRepairing         = "REPAIRING"
)

// instanceNameRE is Cloud SQL's rule for instance IDs: lowercase letters,
// digits and hyphens, starting with a letter, not ending with a hyphen.
var instanceNameRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,96}[a-z0-9])?$`)

// regionRE accepts region names such as europe-west1 or us-central1.
var regionRE = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)

// defaultRegion is where the real API puts an instance that names none.
const defaultRegion = "us-central1"

// instanceState is one stored instance. db is exactly what instances.get
// answers (rootPassword is never kept in it).
type instanceState struct {
	db    *sqladmin.DatabaseInstance
	users map[string]*userState
	ca    *certAuthority
	// activeOp is the last operation started on the instance; while it is
	// not settled, every mutation is answered 409 operationInProgress.
	activeOp *operation
	// data is the instance's PostgreSQL and listeners (WithPostgres), from
	// when it first has IP addresses until it is deleted.
	data *backend
	// databases is what databases.list answers; nil until first used, then
	// it holds the postgres database every instance has (see dbs).
	databases map[string]*sqladmin.Database
	// dbOwners maps databases to the roles that own them, for those whose
	// owner SetDatabaseOwner changed; the others are owned by
	// cloudsqlsuperuser, as databases.insert makes them. users.delete
	// consults it when no data plane can say who owns what.
	dbOwners map[string]string
	// backups are the instance's backup runs, oldest first (see backups.go).
	backups []*backupState
	// backupFailure, when set, is the error the instance's next backup
	// fails with (FailNextBackup).
	backupFailure string
	// backupsSeen is the time up to which automated backups were taken.
	backupsSeen time.Time
	// pitrSince is when point-in-time recovery was last turned on; zero
	// while it is off.
	pitrSince time.Time
	// pitrBase is the copy of the data taken when point-in-time recovery
	// was turned on (with a data plane), where a recovery to a time before
	// any backup starts.
	pitrBase *recoveryBase
	// preCheckFailure, when set, is the problem the instance's next
	// pre-check of a major version upgrade finds (FailPreCheck).
	preCheckFailure string
}

func (i *instanceState) busy() bool {
	return i.activeOp != nil && !i.activeOp.settled
}

// checkMutable answers 409 when the instance can't take a mutation now.
func (i *instanceState) checkMutable() error {
	if i.busy() || i.db.State == StatePendingDelete || i.db.State == StatePendingCreate {
		return errOperationInProgress()
	}
	if i.db.State == StateMaintenance {
		return errInMaintenance()
	}
	return nil
}

func instanceLink(project, name string) string {
	return selfLinkBase + project + "/instances/" + name
}

// claimName judges name for a new instance of p, as an insert, a clone and a
// restore into a new instance all do: 409 instanceAlreadyExists for a live
// instance, 409 for a name a deleted instance still reserves; an expired
// reservation is dropped. Callers hold s.mu.
func (p *projectState) claimName(name string, now time.Time) error {
	if _, ok := p.instances[name]; ok {
		return errInstanceExists()
	}
	if until, ok := p.reserved[name]; ok {
		if until.After(now) {
			return errNameReserved(name, until)
		}
		delete(p.reserved, name)
	}
	return nil
}

func (s *Server) instancesInsert(req *apiRequest) (any, error) {
	in, raw, err := decodeInstance(req.body)
	if err != nil {
		return nil, err
	}
	db, err := newInstance(req.project, in, raw)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	caTime := s.now()
	s.mu.Unlock()
	// Key generation happens outside the lock: it is the slowest step.
	ca, err := newCertAuthority(req.project, db.Name, caTime)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	now := s.now()
	p := s.project(req.project)
	s.settle(p, now)
	if err := p.claimName(db.Name, now); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	db.State = StatePendingCreate
	db.CreateTime = formatTime(now)
	db.ServerCaCert = ca.sslCert(db.Name)
	inst := &instanceState{
		db:    db,
		users: map[string]*userState{},
		ca:    ca,
	}
	// Creating a Postgres instance creates the postgres user with the root
	// password given at insert.
	inst.users[postgresUser] = newUserState(req.project, db.Name, postgresUser, in.RootPassword)
	p.instances[db.Name] = inst
	op := s.startOperation(p, req.project, inst, OpCreate, s.delays.Create, req.failOp,
		func(end time.Time) {
			if inst.db.State == StatePendingCreate {
				inst.db.State = StateRunnable
			}
			inst.backupsSeen = end
			s.refreshIPAddresses(inst, inst.db)
			s.notePITR(inst, end)
		},
		func(time.Time) { inst.db.State = StateFailed })
	resp := op.render(now)
	s.mu.Unlock()

	if s.afterInsert != nil {
		s.afterInsert(req.project, db.Name)
	}
	return resp, nil
}

// newInstance validates an insert request and builds the stored instance
// with the server-side fields and defaults filled in. raw is the request
// body as a JSON object, to tell fields the client omitted from zero values.
func newInstance(project string, in *sqladmin.DatabaseInstance, raw map[string]any) (*sqladmin.DatabaseInstance, error) {
	if in.Name == "" {
		return nil, errRequired("name")
	}
	if !instanceNameRE.MatchString(in.Name) {
		return nil, errInvalid("Invalid instance name %q: use lowercase letters, numbers and hyphens, start with a letter, at most 98 characters.", in.Name)
	}
	if in.DatabaseVersion == "" {
		return nil, errRequired("databaseVersion")
	}
	if err := validateDatabaseVersion(in.DatabaseVersion); err != nil {
		return nil, err
	}
	region := in.Region
	if region == "" {
		region = defaultRegion
	}
	if !regionRE.MatchString(region) {
		return nil, errInvalid("Invalid region %q.", region)
	}
	if in.Settings == nil || in.Settings.Tier == "" {
		return nil, errRequired("settings.tier")
	}
	settings, err := copySettings(in.Settings)
	if err != nil {
		return nil, err
	}
	rawSettings, _ := raw["settings"].(map[string]any)
	normalizeSettings(settings, rawSettings, true, false, in.DatabaseVersion, region)
	if err := validateSettings(settings, nil, region); err != nil {
		return nil, err
	}
	settings.SettingsVersion = 1

	db := &sqladmin.DatabaseInstance{
		Name:            in.Name,
		DatabaseVersion: in.DatabaseVersion,
		Region:          region,
		Settings:        settings,
	}
	if dec := in.DiskEncryptionConfiguration; dec != nil && dec.KmsKeyName != "" {
		db.DiskEncryptionConfiguration = &sqladmin.DiskEncryptionConfiguration{
			Kind: "sql#diskEncryptionConfiguration", KmsKeyName: dec.KmsKeyName,
		}
	}
	fillServerFields(db, project)
	return db, nil
}

// fillServerFields sets the output-only fields that depend on the name,
// project, region and version.
func fillServerFields(db *sqladmin.DatabaseInstance, project string) {
	db.Kind = "sql#instance"
	db.Project = project
	db.ConnectionName = project + ":" + db.Region + ":" + db.Name
	db.SelfLink = instanceLink(project, db.Name)
	db.BackendType = "SECOND_GEN"
	db.InstanceType = "CLOUD_SQL_INSTANCE"
	db.DatabaseInstalledVersion = installedVersion(db.DatabaseVersion)
	db.MaintenanceVersion = maintenanceVersion(db.DatabaseVersion)
	db.ServiceAccountEmailAddress = serviceAccount(project)
	db.SqlNetworkArchitecture = "NEW_NETWORK_ARCHITECTURE"
	db.SatisfiesPzi = true
	// Gemini features are off for PostgreSQL instances, and answered so.
	db.GeminiConfig = &sqladmin.GeminiInstanceConfig{ForceSendFields: []string{
		"ActiveQueryEnabled", "Entitled", "GoogleVacuumMgmtEnabled", "IndexAdvisorEnabled", "OomSessionCancelEnabled",
	}}
	db.UpgradableDatabaseVersions = upgradableVersions(db.DatabaseVersion)
	db.RootPassword = ""
	if db.Settings != nil && db.Settings.LocationPreference != nil {
		db.GceZone = db.Settings.LocationPreference.Zone
	}
}

// stampEtag sets the instance's etag from what changes when the instance
// does: its state, settings version, database and maintenance versions and
// addresses. Callers hold s.mu.
func stampEtag(db *sqladmin.DatabaseInstance) {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s|%s|%s|%s|%s|%d", db.Name, db.CreateTime, db.State, db.DatabaseVersion, db.MaintenanceVersion, len(db.IpAddresses))
	if db.Settings != nil {
		_, _ = fmt.Fprintf(h, "|%d", db.Settings.SettingsVersion)
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], h.Sum64())
	db.Etag = base64.StdEncoding.EncodeToString(b[:])
}

func (s *Server) instancesGet(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.project(req.project)
	s.settle(p, s.now())
	inst, ok := p.instances[req.instance]
	if !ok {
		return nil, errInstanceNotFound()
	}
	stampEtag(inst.db)
	b, err := json.Marshal(inst.db)
	return json.RawMessage(b), err
}

func (s *Server) instancesList(req *apiRequest) (any, error) {
	q := req.r.URL.Query()
	filter, err := parseFilter(q.Get("filter"))
	if err != nil {
		return nil, err
	}
	offset, size, err := pageParams(q.Get("pageToken"), q.Get("maxResults"))
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.project(req.project)
	s.settle(p, s.now())
	names := make([]string, 0, len(p.instances))
	for n := range p.instances {
		names = append(names, n)
	}
	sort.Strings(names)
	var matched []*sqladmin.DatabaseInstance
	for _, n := range names {
		db := p.instances[n].db
		ok, err := filter.matches(db)
		if err != nil {
			return nil, err
		}
		if ok {
			stampEtag(db)
			matched = append(matched, db)
		}
	}
	page, next := paginate(len(matched), offset, size)
	b, err := json.Marshal(&sqladmin.InstancesListResponse{
		Kind:          "sql#instancesList",
		Items:         matched[page.from:page.to],
		NextPageToken: next,
	})
	return json.RawMessage(b), err
}

// instancesDelete deletes an instance (DELETE, with the delete delay), which
// Cloud SQL refuses while deletion protection is on. When the call or
// settings.finalBackupConfig asks for one, a FINAL backup is taken first
// (with a data plane, of the data as it is then), and kept after the instance
// until it expires; settings.retainBackupsOnDelete keeps the other backups
// too (see retainBackups).
func (s *Server) instancesDelete(req *apiRequest) (any, error) {
	s.mu.Lock()
	fb, asked, err := parseFinalBackup(req.r, s.now())
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	_, inst, err := s.deletable(req.project, req.instance)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	take, expiry := finalBackup(fb, asked, inst.db.Settings, s.now())
	var check pgCheck
	var final *backupState
	if take {
		final = &backupState{project: req.project, instance: inst.db.Name}
		check = dataPlaneCheck(inst)
	}
	s.mu.Unlock()

	// The final backup's data is copied before the instance's PostgreSQL
	// goes with it, outside the lock, as other checks of the data plane are.
	s.copyData(check, final)

	s.mu.Lock()
	defer s.mu.Unlock()
	p, cur, err := s.deletable(req.project, req.instance)
	if err != nil || cur != inst {
		if final != nil {
			s.dropBackupData(final)
		}
		if err == nil {
			err = errOperationInProgress()
		}
		return nil, err
	}
	now := s.now()
	if take {
		b := s.newBackup(p, req.project, inst, BackupFinal, now)
		b.expiry = expiry
		if b.failure == nil {
			b.failure = final.failure
		}
		if b.failure == nil {
			b.data = final.data
		} else {
			s.dropBackupData(final)
		}
	}
	prev := inst.db.State
	inst.db.State = StatePendingDelete
	name := inst.db.Name
	op := s.startOperation(p, req.project, inst, OpDelete, s.delays.Delete, req.failOp,
		func(end time.Time) {
			// The instance may have been replaced by then only if the
			// reservation is zero and a new one was inserted; don't
			// delete the newcomer.
			if p.instances[name] == inst {
				delete(p.instances, name)
			}
			s.retainBackups(p, inst, end)
			s.dataPlaneDown(inst)
			if s.reservation > 0 {
				p.reserved[name] = end.Add(s.reservation)
			}
		},
		func(time.Time) { inst.db.State = prev })
	return op.render(now), nil
}

// deletable finds an instance that instances.delete may delete now.
// Callers hold s.mu.
func (s *Server) deletable(project, name string) (*projectState, *instanceState, error) {
	p, inst, err := s.mutableInstance(project, name)
	if err != nil {
		return nil, nil, err
	}
	if inst.db.Settings != nil && inst.db.Settings.DeletionProtectionEnabled {
		return nil, nil, errDeletionProtected()
	}
	return p, inst, nil
}

// instanceFilter is a parsed instances.list filter: space-separated
// key:value (or key=value) terms that must all match. Keys are JSON field
// paths of the instance, such as state, region, databaseVersion,
// settings.tier or settings.userLabels.team. "AND" between terms is allowed.
type instanceFilter []filterTerm

type filterTerm struct {
	path  []string
	value string
}

func parseFilter(f string) (instanceFilter, error) {
	var out instanceFilter
	for _, tok := range strings.Fields(f) {
		if strings.EqualFold(tok, "AND") {
			continue
		}
		i := strings.IndexAny(tok, ":=")
		if i <= 0 || i == len(tok)-1 {
			return nil, errInvalid("Invalid filter %q: expected terms of the form key:value.", f)
		}
		out = append(out, filterTerm{
			path:  strings.Split(tok[:i], "."),
			value: strings.Trim(tok[i+1:], `"`),
		})
	}
	return out, nil
}

func (f instanceFilter) matches(db *sqladmin.DatabaseInstance) (bool, error) {
	if len(f) == 0 {
		return true, nil
	}
	m, err := toMap(db)
	if err != nil {
		return false, err
	}
	for _, t := range f {
		var cur any = m
		for _, k := range t.path {
			obj, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = obj[k]
		}
		if !strings.EqualFold(scalarString(cur), t.value) {
			return false, nil
		}
	}
	return true, nil
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	return ""
}
