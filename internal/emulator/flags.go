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
	"regexp"
	"strconv"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// flagNameRE is the shape of a PostgreSQL flag name, possibly qualified by
// an extension (cloudsql.iam_authentication, pg_stat_statements.track).
var flagNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?$`)

type flagKind int

const (
	flagInt flagKind = iota
	flagFloat
	flagBool
	flagEnum
)

// flagSpec is what the emulator knows of a flag's values.
type flagSpec struct {
	kind     flagKind
	min, max float64
	values   []string
}

// knownFlags are the commonly used Cloud SQL PostgreSQL flags whose values
// the emulator checks. Flags not listed are accepted with any value, so a
// test isn't blocked by the emulator not knowing a flag.
var knownFlags = map[string]flagSpec{
	"max_connections":                     {kind: flagInt, min: 14, max: 262143},
	"work_mem":                            {kind: flagInt, min: 64, max: 2147483647},
	"maintenance_work_mem":                {kind: flagInt, min: 1024, max: 2147483647},
	"temp_file_limit":                     {kind: flagInt, min: -1, max: 2147483647},
	"log_min_duration_statement":          {kind: flagInt, min: -1, max: 2147483647},
	"statement_timeout":                   {kind: flagInt, min: 0, max: 2147483647},
	"idle_in_transaction_session_timeout": {kind: flagInt, min: 0, max: 2147483647},
	"max_locks_per_transaction":           {kind: flagInt, min: 10, max: 2147483647},
	"autovacuum_max_workers":              {kind: flagInt, min: 1, max: 262143},
	"track_activity_query_size":           {kind: flagInt, min: 100, max: 1048576},
	"random_page_cost":                    {kind: flagFloat, min: 0, max: 1.79769e+308},
	"autovacuum_vacuum_scale_factor":      {kind: flagFloat, min: 0, max: 100},
	"log_connections":                     {kind: flagBool},
	"log_disconnections":                  {kind: flagBool},
	"log_checkpoints":                     {kind: flagBool},
	"log_lock_waits":                      {kind: flagBool},
	"autovacuum":                          {kind: flagBool},
	"cloudsql.iam_authentication":         {kind: flagBool},
	"cloudsql.logical_decoding":           {kind: flagBool},
	"cloudsql.enable_pgaudit":             {kind: flagBool},
	"log_statement":                       {kind: flagEnum, values: []string{"none", "ddl", "mod", "all"}},
	"password_encryption":                 {kind: flagEnum, values: []string{"md5", "scram-sha-256"}},
	"pg_stat_statements.track":            {kind: flagEnum, values: []string{"none", "top", "all"}},
	"log_min_messages": {kind: flagEnum, values: []string{
		"debug5", "debug4", "debug3", "debug2", "debug1", "info", "notice", "warning", "error", "log", "fatal", "panic"}},
}

const (
	msgFlagName      = "Invalid flag name %q: flag names are lowercase words separated by underscores."
	msgFlagDuplicate = "Invalid flag value: flag %s is set more than once."
	msgFlagValue     = "Invalid flag value for %s: %q. %s"
)

// validateFlags answers 400 invalidFlagValue for malformed flags: a bad
// name, a flag given twice, or a value that doesn't fit a known flag.
func validateFlags(flags []*sqladmin.DatabaseFlags) error {
	seen := map[string]bool{}
	for _, f := range flags {
		if f == nil || !flagNameRE.MatchString(f.Name) {
			name := ""
			if f != nil {
				name = f.Name
			}
			return errInvalidFlag(msgFlagName, name)
		}
		if seen[f.Name] {
			return errInvalidFlag(msgFlagDuplicate, f.Name)
		}
		seen[f.Name] = true
		spec, ok := knownFlags[f.Name]
		if !ok {
			continue
		}
		if why := spec.check(f.Value); why != "" {
			return errInvalidFlag(msgFlagValue, f.Name, f.Value, why)
		}
	}
	return nil
}

// check returns why v isn't a valid value, or "".
func (s flagSpec) check(v string) string {
	switch s.kind {
	case flagInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "The value must be an integer."
		}
		if float64(n) < s.min || float64(n) > s.max {
			return "The value is out of range " + strconv.FormatFloat(s.min, 'f', -1, 64) + " to " + strconv.FormatFloat(s.max, 'f', -1, 64) + "."
		}
	case flagFloat:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "The value must be a number."
		}
		if n < s.min || n > s.max {
			return "The value is out of range."
		}
	case flagBool:
		if v != "on" && v != "off" {
			return "The value must be on or off."
		}
	case flagEnum:
		for _, a := range s.values {
			if v == a {
				return ""
			}
		}
		return "The value is not one of the allowed values."
	}
	return ""
}
