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

// Package intern keeps one copy of the strings that many objects repeat. A
// fleet of 10,000 instances with 100,000 databases and users holds in memory
// the same condition types and reasons, API versions, finalizers, policies,
// charsets and instance names over and over: decoded, each is a string of its
// own, about a quarter of what a cached database or user takes.
package intern

import (
	"strings"
	"sync"
)

// maxEntries bounds the table. Past it the table starts again empty: the
// strings shared so far stay shared, and the values that repeat come back
// at once, while values that changed (an instance renamed, a reason no
// longer given) are let go.
const maxEntries = 1 << 16

var table = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// String returns a string equal to s: the one the table holds, or a copy of
// s the table holds from now on. The copy keeps no larger string alive that
// s may be part of.
func String(s string) string {
	if s == "" {
		return s
	}
	table.Lock()
	defer table.Unlock()
	if v, ok := table.m[s]; ok {
		return v
	}
	if len(table.m) >= maxEntries {
		table.m = make(map[string]string)
	}
	s = strings.Clone(s)
	table.m[s] = s
	return s
}
