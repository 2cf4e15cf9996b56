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

package podinject

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// The writer's script runs in /bin/sh as the writer containers run it: the
// password file it writes names the proxy's address and port alone, whatever
// host and port the copied line names, mode 0600.
func TestWriteScript(t *testing.T) {
	cases := map[string]struct {
		reason string
		line   string
		want   string
	}{
		"ConnectionSecret": {
			reason: "The connection secret's line (the proxy's host, any port) should be narrowed to the proxy's port.",
			line:   cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, "pw"),
			want:   "127.0.0.1:23456:*:postgres:pw\n",
		},
		"AnyServer": {
			reason: "A line from before the address was restricted (any host, any port) should name the proxy only.",
			line:   "*:*:*:postgres:pw\n",
			want:   "127.0.0.1:23456:*:postgres:pw\n",
		},
		"Escapes": {
			reason: "Escaped colons and backslashes of the password should be copied as they are.",
			line:   cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, `a:b\c`),
			want:   `127.0.0.1:23456:*:postgres:a\:b\\c` + "\n",
		},
		"NoNewline": {
			reason: "A line without a final newline should still be written.",
			line:   "127.0.0.1:*:*:postgres:pw",
			want:   "127.0.0.1:23456:*:postgres:pw\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "pgpass-secret"), filepath.Join(dir, "pgpass-1000")
			if err := os.WriteFile(src, []byte(tc.line), 0o444); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("/bin/sh", "-c", writeScript, "pgpass-writer", src, dst, ProxyAddress, "23456").CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v: %s", tc.reason, err, out)
			}
			got, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("%s\nwritten file: -want, +got:\n%s", tc.reason, diff)
			}
			fi, err := os.Stat(dst)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s\nmode: want 0600, got %o", tc.reason, fi.Mode().Perm())
			}
		})
	}
}
