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
	"testing"

	. "github.com/onsi/gomega"
)

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/kubelet":             "/var/lib/kubelet",
		`/tmp/with\040space`:           "/tmp/with space",
		`/tmp/tab\011and\134backslash`: "/tmp/tab\tand\\backslash",
		`/tmp/trailing\04`:             `/tmp/trailing\04`,
	} {
		NewWithT(t).Expect(unescapeMount(in)).To(Equal(want), in)
	}
}

// Teardown unmounts and removes only what lies under the run's directories.
func TestUnderAny(t *testing.T) {
	dirs := []string{"/tmp/run-1", "/var/lib/kubelet"}
	for p, want := range map[string]bool{
		"/tmp/run-1":                 true,
		"/tmp/run-1/node/kubelet":    true,
		"/var/lib/kubelet/pods/x":    true,
		"/tmp/run-10":                false,
		"/var/lib/kubelet-something": false,
		"/":                          false,
	} {
		NewWithT(t).Expect(underAny(p, dirs)).To(Equal(want), p)
	}
}

func TestOurs(t *testing.T) {
	for m, want := range map[string]bool{
		"/tmp/run-1/node/kubelet/root":         true,
		"/var/lib/kubelet/pods/x/volumes/y":    true,
		"/run/containerd/io.containerd/rootfs": true,
		"/run/netns":                           true,
		"/run/netns/" + netnsName:              true,
		"/run/netns/cni-1234":                  true,
		"/run/netns/someone-elses":             false,
		"/var/lib/docker/overlay2/x":           false,
	} {
		NewWithT(t).Expect(ours(m, "/tmp/run-1")).To(Equal(want), m)
	}
}
