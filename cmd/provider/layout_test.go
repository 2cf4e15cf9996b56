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
