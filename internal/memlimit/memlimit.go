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

// Package memlimit gives the Go runtime the memory limit of the container the
// provider runs in. The runtime does not read cgroup limits itself: without a
// soft limit it lets the heap grow to twice what is live before collecting, and a
// provider with 10,000 instances whose peak crosses its container's limit is
// OOM-killed although half of that memory is garbage.
package memlimit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Share is the part of the container's limit given to the Go heap; the rest
// covers what the runtime does not count (goroutine stacks, binary, buffers).
const Share = 0.9

// cgroup files that hold a memory limit: v2 first, then v1.
var limitFiles = []string{"memory.max", "memory/memory.limit_in_bytes"}

// noLimit is above what any cgroup limit is: cgroup v1 reports "no limit" as a
// number near 2^63.
const noLimit = 1 << 62

// FromCgroup returns the memory limit of the cgroup mounted at root (normally
// /sys/fs/cgroup), or 0 when there is none or it cannot be read.
func FromCgroup(root string) int64 {
	for _, f := range limitFiles {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= noLimit {
			return 0
		}
		return n
	}
	return 0
}

// Soft is the soft memory limit to give the Go runtime for a container limit:
// Share of it, or 0 (none) when there is no limit.
func Soft(limit int64) int64 {
	if limit <= 0 {
		return 0
	}
	return int64(float64(limit) * Share)
}
