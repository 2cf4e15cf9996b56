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

// TestRoomsImportOnlyTheirShare keeps docs/layout.md's rooms apart: each kind's
// controller imports the shared core and never another kind, so that a new
// kind moves into a room of its own; the object validator asks tenancy, never
// the pod injector, who may use an instance.
func TestRoomsImportOnlyTheirShare(t *testing.T) {
	g := NewWithT(t)
	const module = "github.com/travelaudience/cloudsql-postgres-operator/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}",
		"../../internal/controller/...", "../../internal/webhook/...").CombinedOutput()
	g.Expect(err).ToNot(HaveOccurred(), string(out))
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		for _, imp := range f[1:] {
			if rel, ours := strings.CutPrefix(imp, module); ours {
				imports[pkg] = append(imports[pkg], rel)
			}
		}
	}
	kinds := []string{}
	for pkg := range imports {
		if strings.HasPrefix(pkg, "internal/controller/postgresql") {
			kinds = append(kinds, pkg)
		}
	}
	g.Expect(kinds).To(ContainElements("internal/controller/postgresqlinstance", "internal/controller/postgresqluser", "internal/controller/postgresqldatabase",
		"internal/controller/postgresqlbackup"))
	for _, kind := range kinds {
		g.Expect(imports[kind]).To(ContainElement("internal/controller/core"), "%s does not use the shared core", kind)
		for _, other := range kinds {
			g.Expect(imports[kind]).ToNot(ContainElement(other), "%s imports another kind's package", kind)
		}
	}
	g.Expect(imports["internal/controller/core"]).ToNot(ContainElement(HavePrefix("internal/controller/postgresql")), "the core imports a kind")
	g.Expect(imports["internal/webhook/postgresqlobject"]).ToNot(ContainElement("internal/webhook/podinject"))
}
