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

package tenants

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

func TestCount(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reqs := []emulator.Request{
		{Time: t0.Add(-time.Second), Method: "users.list", Project: "p"},
		{Time: t0, Method: "users.list", Project: "p"},
		{Time: t0.Add(time.Second), Method: "users.list", Project: "p"},
		{Time: t0.Add(time.Second), Method: "databases.list", Project: "p"},
		{Time: t0.Add(time.Second), Method: "databases.list", Project: "other"},
		{Time: t0.Add(time.Second), Path: "/token", Project: "p"},
		{Time: t0.Add(time.Minute), Method: "users.list", Project: "p"},
	}
	got := Count("phase", reqs, "p", t0, t0.Add(time.Minute))
	want := map[string]int{"users.list": 2, "databases.list": 1}
	if diff := cmp.Diff(want, got.Counts); diff != "" {
		t.Errorf("Count(...): -want, +got:\n%s", diff)
	}
	if got.Total() != 3 {
		t.Errorf("Total(): want 3, got %d", got.Total())
	}
	if s := got.String(); !strings.Contains(s, "users.list 2, databases.list 1") || !strings.Contains(s, "3.0/min") {
		t.Errorf("String(): %q lacks the methods by count or the rate", s)
	}
}

// Every script is valid shell, whatever the names hold.
func TestScriptIsShell(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on this machine")
	}
	quoted := App{Namespace: "ns", User: "it's", Login: "o'brien", Database: "d\"b"}
	for _, a := range append([]App{quoted}, Apps...) {
		for name, script := range map[string]string{"use": a.Script(), "refusals": a.Script(a.Others(append([]App{quoted}, Apps...))...)} {
			f := filepath.Join(t.TempDir(), "script.sh")
			if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(sh, "-n", f).CombinedOutput(); err != nil {
				t.Errorf("%s script of %s is not valid shell: %v: %s\n%s", name, a.User, err, out, script)
			}
		}
	}
}
