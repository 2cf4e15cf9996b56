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
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// adminPrefix is where the admin surface is served. It is outside the API's
// paths, so the real client can never reach it by accident.
const adminPrefix = "/emulator/v1/"

// Admin path suffixes and actions.
const (
	adminActionFinish        = ":finish"
	adminActionAdvance       = ":advance"
	adminActionSetState      = ":setState"
	adminActionCheckPassword = ":checkPassword"
	adminActionSetOwner      = ":setOwner"
	adminActionFailBackup    = ":failNextBackup"
	adminActionFailPreCheck  = ":failPreCheck"
	adminActionBackupWindow  = ":runBackupWindow"
	adminActionMaintenance   = ":scheduleMaintenance"
)

// serveAdmin serves the HTTP side of the admin surface; the package doc
// lists its endpoints.
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.EscapedPath(), adminPrefix)
	v, err := s.routeAdmin(r, path)
	if err != nil {
		writeError(w, err)
		return
	}
	if v == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(b)
}

func (s *Server) routeAdmin(r *http.Request, path string) (any, error) {
	m := r.Method
	switch {
	case path == "healthz" && m == http.MethodGet:
		return map[string]string{"status": "ok"}, nil
	case path == "counts" && m == http.MethodGet:
		return s.Counts(), nil
	case path == "counts" && m == http.MethodDelete:
		s.ResetCounts()
		return nil, nil
	case path == "requests" && m == http.MethodGet:
		return s.Requests(), nil
	case path == "operations" && m == http.MethodGet:
		return &sqladmin.OperationsListResponse{Kind: "sql#operationsList", Items: s.Operations(r.URL.Query().Get("project"))}, nil
	case path == "operations"+adminActionFinish && m == http.MethodPost:
		s.FinishOperations()
		return nil, nil
	case path == "clock" && m == http.MethodGet:
		return clockJSON{Now: formatTime(s.Now())}, nil
	case path == "clock"+adminActionAdvance && m == http.MethodPost:
		var in struct {
			Duration string `json:"duration"`
		}
		if err := decodeJSON(readAll(r), &in); err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(in.Duration)
		if err != nil || d < 0 {
			return nil, errInvalid("Invalid duration %q: use a positive Go duration such as 90s.", in.Duration)
		}
		s.Advance(d)
		return clockJSON{Now: formatTime(s.Now())}, nil
	case path == "faults" && m == http.MethodGet:
		return s.Faults(), nil
	case path == "faults" && m == http.MethodDelete:
		s.ClearFaults()
		return nil, nil
	case path == "faults" && m == http.MethodPost:
		var f Fault
		if err := json.Unmarshal(readAll(r), &f); err != nil {
			return nil, errInvalid("Invalid fault: %v.", err)
		}
		if err := s.InjectFault(f); err != nil {
			return nil, errInvalid("%v.", err)
		}
		return s.Faults(), nil
	case strings.HasPrefix(path, "projects/"):
		return s.routeAdminProject(r, strings.Split(strings.TrimPrefix(path, "projects/"), "/"))
	}
	return nil, errMethodNotFound()
}

type clockJSON struct {
	Now string `json:"now"`
}

// routeAdminProject serves /emulator/v1/projects/{p}/instances[/{i}[...]].
func (s *Server) routeAdminProject(r *http.Request, raw []string) (any, error) {
	seg := make([]string, len(raw))
	for i, x := range raw {
		u, err := url.PathUnescape(x)
		if err != nil || u == "" {
			return nil, errMethodNotFound()
		}
		seg[i] = u
	}
	if len(seg) < 2 || seg[1] != "instances" {
		return nil, errMethodNotFound()
	}
	project, m := seg[0], r.Method
	switch {
	case len(seg) == 2 && m == http.MethodPost && r.URL.Query().Has("count"):
		var db sqladmin.DatabaseInstance
		if err := decodeJSON(readAll(r), &db); err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(r.URL.Query().Get("count"))
		if err != nil {
			return nil, errInvalid("Invalid count %q: give a number of instances.", r.URL.Query().Get("count"))
		}
		if err := s.SeedMany(project, &db, n); err != nil {
			return nil, adminError(err)
		}
		return map[string]int{"seeded": n}, nil
	case len(seg) == 2 && m == http.MethodPost:
		var db sqladmin.DatabaseInstance
		if err := decodeJSON(readAll(r), &db); err != nil {
			return nil, err
		}
		if err := s.Seed(project, &db); err != nil {
			return nil, adminError(err)
		}
		return s.adminInstance(project, db.Name)
	case len(seg) == 3 && strings.HasSuffix(seg[2], adminActionSetState) && m == http.MethodPost:
		name := strings.TrimSuffix(seg[2], adminActionSetState)
		var in struct {
			State string `json:"state"`
		}
		if err := decodeJSON(readAll(r), &in); err != nil {
			return nil, err
		}
		if err := s.SetInstanceState(project, name, in.State); err != nil {
			return nil, adminError(err)
		}
		return s.adminInstance(project, name)
	case len(seg) == 3 && strings.HasSuffix(seg[2], adminActionFailBackup) && m == http.MethodPost:
		var in struct {
			Message string `json:"message"`
		}
		if b := readAll(r); len(strings.TrimSpace(string(b))) > 0 {
			if err := decodeJSON(b, &in); err != nil {
				return nil, err
			}
		}
		return nil, adminError(s.FailNextBackup(project, strings.TrimSuffix(seg[2], adminActionFailBackup), in.Message))
	case len(seg) == 3 && strings.HasSuffix(seg[2], adminActionFailPreCheck) && m == http.MethodPost:
		var in struct {
			Message string `json:"message"`
		}
		if b := readAll(r); len(strings.TrimSpace(string(b))) > 0 {
			if err := decodeJSON(b, &in); err != nil {
				return nil, err
			}
		}
		return nil, adminError(s.FailPreCheck(project, strings.TrimSuffix(seg[2], adminActionFailPreCheck), in.Message))
	case len(seg) == 3 && strings.HasSuffix(seg[2], adminActionBackupWindow) && m == http.MethodPost:
		return s.RunBackupWindow(project, strings.TrimSuffix(seg[2], adminActionBackupWindow))
	case len(seg) == 3 && strings.HasSuffix(seg[2], adminActionMaintenance) && m == http.MethodPost:
		name := strings.TrimSuffix(seg[2], adminActionMaintenance)
		var in sqladmin.SqlScheduledMaintenance
		if b := readAll(r); len(strings.TrimSpace(string(b))) > 0 {
			if err := decodeJSON(b, &in); err != nil {
				return nil, err
			}
		}
		if err := s.ScheduleMaintenance(project, name, &in); err != nil {
			return nil, adminError(err)
		}
		return s.adminInstance(project, name)
	case len(seg) == 3 && m == http.MethodGet:
		return s.adminInstance(project, seg[2])
	case len(seg) == 3 && m == http.MethodPatch:
		patch, err := decodeObject(readAll(r))
		if err != nil {
			return nil, err
		}
		err = s.mutate(project, seg[2], func(db *sqladmin.DatabaseInstance) error {
			m, err := toMap(db)
			if err != nil {
				return err
			}
			mergePatch(m, patch)
			*db = sqladmin.DatabaseInstance{}
			return fromMap(m, db)
		})
		if err != nil {
			return nil, adminError(err)
		}
		return s.adminInstance(project, seg[2])
	case len(seg) == 4 && seg[3] == "databases" && m == http.MethodPost:
		var d sqladmin.Database
		if err := decodeJSON(readAll(r), &d); err != nil {
			return nil, err
		}
		if err := s.SeedDatabase(project, seg[2], &d); errors.Is(err, ErrDatabaseExists) {
			// As databases.insert answers it.
			return nil, errInvalid(msgDatabaseExists, d.Name, d.Name)
		} else if err != nil {
			return nil, adminError(err)
		}
		return s.adminDatabase(project, seg[2], d.Name)
	case len(seg) == 4 && seg[3] == "users" && m == http.MethodPost:
		var u sqladmin.User
		if err := decodeJSON(readAll(r), &u); err != nil {
			return nil, err
		}
		if err := s.SeedUser(project, seg[2], &u); err != nil {
			return nil, adminError(err)
		}
		return s.adminUser(project, seg[2], u.Name)
	case len(seg) == 5 && seg[3] == "databases" && strings.HasSuffix(seg[4], adminActionSetOwner) && m == http.MethodPost:
		var in struct {
			Owner string `json:"owner"`
		}
		if err := decodeJSON(readAll(r), &in); err != nil {
			return nil, err
		}
		database := strings.TrimSuffix(seg[4], adminActionSetOwner)
		if err := s.SetDatabaseOwner(project, seg[2], database, in.Owner); err != nil {
			return nil, adminError(err)
		}
		return map[string]string{"database": database, "owner": in.Owner}, nil
	case len(seg) == 5 && seg[3] == "users" && strings.HasSuffix(seg[4], adminActionCheckPassword) && m == http.MethodPost:
		var in struct {
			Password string `json:"password"`
		}
		if err := decodeJSON(readAll(r), &in); err != nil {
			return nil, err
		}
		user := strings.TrimSuffix(seg[4], adminActionCheckPassword)
		return map[string]bool{"match": s.PasswordIs(project, seg[2], user, in.Password)}, nil
	}
	return nil, errMethodNotFound()
}

func (s *Server) adminInstance(project, name string) (any, error) {
	db, err := s.Instance(project, name)
	if err != nil {
		return nil, adminError(err)
	}
	return db, nil
}

// adminDatabase is a seeded database as databases.get answers it.
func (s *Server) adminDatabase(project, instance, name string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return nil, adminError(err)
	}
	out := *inst.dbs()[name]
	return &out, nil
}

// adminUser is a seeded user as users.get answers it.
func (s *Server) adminUser(project, instance, name string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.adminFind(project, instance)
	if err != nil {
		return nil, adminError(err)
	}
	return inst.users[name].rendered(), nil
}

// adminError maps admin API errors onto the API's envelope.
func adminError(err error) error {
	switch {
	case errors.Is(err, ErrInstanceNotFound):
		return errInstanceNotFound()
	case errors.Is(err, ErrInstanceExists):
		return errInstanceExists()
	case errors.Is(err, ErrDatabaseNotFound):
		return errDatabaseNotFound()
	case errors.Is(err, ErrUserExists):
		return errUserExists()
	case errors.Is(err, ErrRoleNotFound):
		return errInvalid("%v.", err)
	case errors.Is(err, ErrInvalidState), errors.Is(err, ErrMaintenanceDenied):
		return errInvalid("%v.", err)
	}
	return err
}

// readAll reads an admin request body, bounded like API bodies. A read
// error leaves the body empty, which decoding then reports.
func readAll(r *http.Request) []byte {
	b, _ := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	return b
}
