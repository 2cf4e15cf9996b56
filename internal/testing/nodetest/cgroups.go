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

package nodetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errRemoveCgroup = "remove cgroup %s"
)

// containerCgroupNames are the cgroups, under each controller's root, that
// containerd makes for the containers of the kubelet's pods (cgroupfs driver,
// no per-QoS cgroups), and that the kubelet would make with per-QoS cgroups.
var containerCgroupNames = []string{"k8s.io", "kubepods"}

func cgroupRoot() string { return "/sys/fs/cgroup" }

// containerCgroups lists the containers' cgroups, under every controller
// (cgroup v1) or the unified hierarchy (v2), deepest first.
func containerCgroups() []string {
	var out []string
	roots := []string{cgroupRoot()}
	ctrls, _ := os.ReadDir(cgroupRoot())
	for _, c := range ctrls {
		if c.IsDir() {
			roots = append(roots, filepath.Join(cgroupRoot(), c.Name()))
		}
	}
	for _, root := range roots {
		for _, n := range containerCgroupNames {
			top := filepath.Join(root, n)
			_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					out = append(out, p)
				}
				return nil
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// cgroupPids are the processes in the containers' cgroups.
func cgroupPids() []int {
	seen := map[int]bool{}
	var pids []int
	for _, d := range containerCgroups() {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] && pid != os.Getpid() {
				seen[pid] = true
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// removeCgroups removes the containers' cgroups, once killAll has emptied them.
func removeCgroups() error {
	var errs []error
	for _, d := range containerCgroups() {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, errors.Wrapf(err, errRemoveCgroup, d))
		}
	}
	return errors.Join(errs...)
}
