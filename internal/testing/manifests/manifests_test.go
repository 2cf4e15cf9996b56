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

package manifests

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func TestDecode(t *testing.T) {
	cases := map[string]struct {
		data    string
		kinds   []string
		wantErr string
	}{
		"Empty":        {data: ""},
		"One":          {data: "kind: A\napiVersion: v1\n", kinds: []string{"A"}},
		"Several":      {data: "---\nkind: A\napiVersion: v1\n---\n# a comment only\n---\nkind: B\napiVersion: v1\n", kinds: []string{"A", "B"}},
		"Json":         {data: `{"kind":"C","apiVersion":"v1"}`, kinds: []string{"C"}},
		"BadSecondDoc": {data: "kind: A\napiVersion: v1\n---\nkind: [\n", wantErr: "document 2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			objs, err := Decode([]byte(tc.data))
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).ToNot(HaveOccurred())
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.GetKind())
			}
			g.Expect(kinds).To(Equal(tc.kinds))
		})
	}
}

func TestReadFile(t *testing.T) {
	g := NewWithT(t)
	p := filepath.Join(t.TempDir(), "m.yaml")
	g.Expect(os.WriteFile(p, []byte("kind: [\n"), 0o600)).To(Succeed())
	_, err := ReadFile(p)
	g.Expect(err).To(MatchError(ContainSubstring("cannot decode " + p)))
	_, err = ReadFile(filepath.Join(t.TempDir(), "missing.yaml"))
	g.Expect(err).To(HaveOccurred())
}
