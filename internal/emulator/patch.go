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
	"strings"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// instancesPatch merges the request body into the stored instance: fields
// the body omits stay as they are, fields it carries (false and 0 included,
// which the client sends only through ForceSendFields) replace the stored
// ones, arrays replace wholesale and null clears. Only settings and
// databaseVersion (an in-place major upgrade) are taken from the body; the
// other fields are output-only or fixed at creation. A settingsVersion in the
// body must match the stored one, as for update.
//
// The new settings take effect when the UPDATE operation is DONE, and
// settingsVersion increases then if anything changed.
func (s *Server) instancesPatch(req *apiRequest) (any, error) {
	in, raw, err := decodeInstance(req.body)
	if err != nil {
		return nil, err
	}
	rawSettings, isObj := raw["settings"].(map[string]any)
	if _, present := raw["settings"]; present && !isObj {
		return nil, errInvalid("settings must be an object.")
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	p, inst, err := s.mutableInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	now := s.now()
	cur := inst.db.Settings
	if in.Settings != nil && in.Settings.SettingsVersion != 0 && in.Settings.SettingsVersion != cur.SettingsVersion {
		return nil, errStaleData()
	}

	merged, err := toMap(cur)
	if err != nil {
		return nil, err
	}
	mergePatch(merged, rawSettings)
	next := &sqladmin.Settings{}
	if err := fromMap(merged, next); err != nil {
		return nil, err
	}
	version, err := nextVersion(inst.db.DatabaseVersion, in.DatabaseVersion)
	if err != nil {
		return nil, err
	}
	raiseToEditionDefaults(next, cur)
	normalizeSettings(next, merged, false, true, version, inst.db.Region)
	if err := validateSettings(next, cur, inst.db.Region); err != nil {
		return nil, err
	}
	maintenance, err := nextMaintenanceVersion(inst.db, version, in.MaintenanceVersion)
	if err != nil {
		return nil, err
	}
	apply := s.applyUpdate(inst, next, version)
	op := s.startOperation(p, req.project, inst, OpUpdate, s.delays.Update, req.failOp,
		func(end time.Time) {
			apply(end)
			if maintenance != "" {
				inst.db.MaintenanceVersion = maintenance
			}
		}, nil)
	return op.render(now), nil
}

// instancesUpdate (PUT) replaces the settings wholesale: what the body
// omits goes back to its default. settings.settingsVersion must equal the
// stored one, else 412 staleData, which is how the API guards against lost
// updates.
func (s *Server) instancesUpdate(req *apiRequest) (any, error) {
	in, raw, err := decodeInstance(req.body)
	if err != nil {
		return nil, err
	}
	rawSettings, _ := raw["settings"].(map[string]any)

	s.mu.Lock()
	defer s.mu.Unlock()
	p, inst, err := s.mutableInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if in.Settings == nil {
		return nil, errRequired("settings")
	}
	if in.Settings.SettingsVersion != inst.db.Settings.SettingsVersion {
		return nil, errStaleData()
	}
	next, err := copySettings(in.Settings)
	if err != nil {
		return nil, err
	}
	version, err := nextVersion(inst.db.DatabaseVersion, in.DatabaseVersion)
	if err != nil {
		return nil, err
	}
	raiseToEditionDefaults(next, inst.db.Settings)
	normalizeSettings(next, rawSettings, true, true, version, inst.db.Region)
	if err := validateSettings(next, inst.db.Settings, inst.db.Region); err != nil {
		return nil, err
	}
	op := s.startOperation(p, req.project, inst, OpUpdate, s.delays.Update, req.failOp,
		s.applyUpdate(inst, next, version), nil)
	return op.render(now), nil
}

// nextMaintenanceVersion is the maintenance version a patch asks for ("":
// none), which must be one of the instance's database version: Cloud SQL
// applies it with the UPDATE operation (recorded real traffic).
func nextMaintenanceVersion(db *sqladmin.DatabaseInstance, version, requested string) (string, error) {
	if requested == "" || requested == db.MaintenanceVersion {
		return "", nil
	}
	major := strings.TrimSuffix(version, "_") + "_"
	if version != db.DatabaseVersion || !strings.HasPrefix(requested, major) || !strings.Contains(requested, ".R") {
		return "", errInvalid("Invalid maintenance version %q for an instance of %s: use one such as %s.", requested, db.DatabaseVersion, db.MaintenanceVersion)
	}
	return requested, nil
}

// nextVersion is the database version after a patch or update that asked
// for requested (empty: unchanged).
func nextVersion(current, requested string) (string, error) {
	if requested == "" || requested == current {
		return current, nil
	}
	if err := validateUpgrade(current, requested); err != nil {
		return "", err
	}
	return requested, nil
}

// applyUpdate is the effect of a successful UPDATE operation.
func (s *Server) applyUpdate(inst *instanceState, next *sqladmin.Settings, version string) func(time.Time) {
	return func(end time.Time) {
		db := inst.db
		changed := !settingsEqual(db.Settings, next) || version != db.DatabaseVersion
		next.SettingsVersion = db.Settings.SettingsVersion
		if changed {
			next.SettingsVersion++
		}
		db.Settings = next
		if version != db.DatabaseVersion {
			db.DatabaseVersion = version
			db.DatabaseInstalledVersion = installedVersion(version)
			db.MaintenanceVersion = maintenanceVersion(version)
			db.UpgradableDatabaseVersions = upgradableVersions(version)
		}
		db.GceZone = next.LocationPreference.Zone
		s.refreshIPAddresses(inst, db)
		s.notePITR(inst, end)
	}
}

// decodeInstance reads a DatabaseInstance body twice: typed, and as the raw JSON
// object that tells which fields the client sent (false, 0 and "" included).
func decodeInstance(body []byte) (*sqladmin.DatabaseInstance, map[string]any, error) {
	in := &sqladmin.DatabaseInstance{}
	if err := decodeJSON(body, in); err != nil {
		return nil, nil, err
	}
	raw, err := decodeObject(body)
	if err != nil {
		return nil, nil, err
	}
	return in, raw, nil
}
