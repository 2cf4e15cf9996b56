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
	"debug/elf"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Share is the part of what the executable leaves of the container's limit
// (Soft) that is given to the Go runtime; the rest covers what the runtime
// does not count, and its overshoot when collecting cannot keep up.
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

// Soft is the soft memory limit to give the Go runtime in a container of
// limit bytes whose executable maps image bytes (Image), or 0 (none) when
// there is no limit. The executable's pages count in the container's memory
// as they are read (about 50 MiB of the provider's: its code and read-only
// data) but not in the runtime's limit, so they come off first: given 90%
// of a 512 MiB limit, the runtime held its own 460 MiB and the process
// peaked at 589 MiB. Share of what is left goes to the runtime, and never less
// than Share of half the limit, however large the image.
func Soft(limit, image int64) int64 {
	if limit <= 0 {
		return 0
	}
	rest := max(limit-max(image, 0), limit/2)
	return int64(float64(rest) * Share)
}

// Image is how much of the executable at path is mapped from its file: the
// file part of its loadable ELF segments (code, read-only data, initialised
// data), or 0 when path is no ELF executable that can be read. Its zeroed
// data is left out: the runtime's own, mostly never touched.
func Image(path string) int64 {
	f, err := elf.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close() //nolint:errcheck // Read only.
	var n int64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			n += int64(p.Filesz)
		}
	}
	return n
}
