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

package main

import (
	"os/exec"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// TestShippedCommandsImportNoTooling keeps docs/layout.md true: what goes into an
// image never links a test harness or a development tool.
func TestShippedCommandsImportNoTooling(t *testing.T) {
	g := NewWithT(t)
	const module = "github.com/travelaudience/cloudsql-postgres-operator/"
	for _, cmd := range []string{"./", "../function-cloudsql-postgres", "../cloudsql-emulator"} {
		out, err := exec.Command("go", "list", "-deps", cmd).CombinedOutput()
		g.Expect(err).ToNot(HaveOccurred(), string(out))
		for _, pkg := range strings.Fields(string(out)) {
			rel, ours := strings.CutPrefix(pkg, module)
			if !ours {
				continue
			}
			g.Expect(rel).ToNot(HavePrefix("internal/testing"), "%s links %s", cmd, pkg)
			g.Expect(rel).ToNot(HavePrefix("hack"), "%s links %s", cmd, pkg)
		}
	}
}
