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

package configfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/BurntSushi/toml"
	. "github.com/onsi/gomega"
)

// FuzzParse feeds arbitrary bytes to Parse, which is what Load does with the file's
// contents, and checks that it never panics, that every refusal says something, and
// that every configuration it accepts passes its own validation and survives a round
// trip: encoded with BurntSushi/toml and parsed again, it is the same configuration.
// `go test` runs the seeds below; `make fuzz` searches further.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "config.toml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	for _, s := range []string{
		"",
		"[reconcile]\npoll_interval = \"30s\"\nbusy_poll_interval = \"1s\"\nmax_reconcile_rate = 1\ntimeout = \"10s\"\nobserve = \"get\"\n",
		"[cloudsql]\nrequests_per_minute = 60\n[webhook]\nport = 1\ncert_dir = \"/tmp/k8s-webhook-server/serving-certs\"\ncloudsql_timeout = \"8s\"\n",
		"[proxy]\nimage = \"localhost:5000/proxy@sha256:0123\"\nsidecar_mode = \"classic\"\ncpu_request = \"1\"\nmemory_request = \"1Gi\"\nmemory_limit = \"\"\n",
		"[injection]\ndefault_allowed_namespaces = []\npgpass_writer_image = 'busybox'\n[logging]\ndebug = true\n",
		"[injection]\ndefault_allowed_namespaces = [\"team-a\", \"team-b\", \"*\"]\n",
		"reconcile.poll_interval = \"1h30m\"\nproxy.image = \"\"\"\nmulti\nline\"\"\"\n",
		"[proxy]\nimage = \"tab\\there \\u00e9 \\\"quoted\\\"\"\n",
		"[webhook]\nport = 0x1F\n[reconcile]\nmax_reconcile_rate = 9223372036854775807\n",
		"[Reconcile]\nPOLL_INTERVAL = \"1m\"\n",
		// Refused: syntax, types, unknown keys, values out of range.
		"[reconcile\n",
		"[reconcile]\npoll_interval = 300\n",
		"[webhook]\nport = \"9443\"\n",
		"[metrics]\nport = 8080\n",
		"[reconcile]\npoll_interval = \"1s\"\n",
		"\xff\xfe[\x00",
		// Inputs on which the TOML library's positioned message panics.
		"\"\\",
		"\"\r\n",
		"reconcile.poll_interval = \"5m\\",
		"proxy.image = \"a\r\n\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := NewWithT(t)
		c, err := Parse(string(data))
		if err != nil {
			g.Expect(err.Error()).NotTo(BeEmpty(), "a refusal must say why")
			return
		}
		g.Expect(c.Validate()).To(Succeed(), "Parse accepted a configuration that Validate refuses")

		var buf bytes.Buffer
		g.Expect(toml.NewEncoder(&buf).Encode(c)).To(Succeed(), "cannot encode an accepted configuration")
		again, err := Parse(buf.String())
		g.Expect(err).NotTo(HaveOccurred(), "the encoding of an accepted configuration is refused:\n%s", buf.String())
		g.Expect(again).To(Equal(c), "the configuration changed in a round trip through:\n%s", buf.String())
	})
}
