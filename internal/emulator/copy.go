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
	"strings"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// The emulator never hands out or keeps a pointer it shares with a caller:
// values go in and out through a JSON round trip, which is also what the
// wire does, so a copy looks exactly like what a client would have decoded.

// copyJSON deep-copies src into dst through JSON.
func copyJSON(dst, src any) error {
	b, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

func copyInstance(db *sqladmin.DatabaseInstance) (*sqladmin.DatabaseInstance, error) {
	out := &sqladmin.DatabaseInstance{}
	if err := copyJSON(out, db); err != nil {
		return nil, err
	}
	return out, nil
}

func copySettings(in *sqladmin.Settings) (*sqladmin.Settings, error) {
	out := &sqladmin.Settings{}
	if in == nil {
		return out, nil
	}
	if err := copyJSON(out, in); err != nil {
		return nil, err
	}
	return out, nil
}

// toMap turns a value into its generic JSON object form, numbers kept as
// json.Number.
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	m := map[string]any{}
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// fromMap decodes a generic JSON object into v, answering 400 invalid when
// the object doesn't fit v's schema.
func fromMap(m map[string]any, v any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return decodeJSON(b, v)
}

// mergePatch applies patch to dst in place with JSON merge patch semantics
// (RFC 7396): objects merge key by key, null removes a key, anything else
// (scalars and arrays, such as databaseFlags or authorizedNetworks) replaces
// the old value wholesale. This is how instances.patch treats the body:
// fields the client omitted stay as they are.
func mergePatch(dst, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(dst, k)
			continue
		}
		pm, pIsObj := v.(map[string]any)
		dm, dIsObj := dst[k].(map[string]any)
		if pIsObj && dIsObj {
			mergePatch(dm, pm)
			continue
		}
		if pIsObj {
			// Merge onto nothing: drop nulls inside, as RFC 7396 does.
			fresh := map[string]any{}
			mergePatch(fresh, pm)
			dst[k] = fresh
			continue
		}
		dst[k] = v
	}
}

// settingsEqual reports whether two settings are the same apart from their
// version and from which false or zero fields they answer.
func settingsEqual(a, b *sqladmin.Settings) bool {
	ac, errA := copySettings(a)
	bc, errB := copySettings(b)
	if errA != nil || errB != nil {
		return false
	}
	ac.SettingsVersion, bc.SettingsVersion = 0, 0
	aj, errA := json.Marshal(ac)
	bj, errB := json.Marshal(bc)
	return errA == nil && errB == nil && string(aj) == string(bj)
}
