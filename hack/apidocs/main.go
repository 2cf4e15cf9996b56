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

// Command apidocs writes the API reference (docs/api.md) from the CRDs in
// package/crds, so that it is generated, never hand-written, and never stale:
// `go generate ./...` runs it after controller-gen, and `make check-generated`
// fails when the committed file differs.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	crds := flag.String("crds", "package/crds", "directory of CRD YAML files")
	out := flag.String("out", "docs/api.md", "file to write")
	flag.Parse()
	if err := run(*crds, *out); err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	var b bytes.Buffer
	b.WriteString("# API reference\n\nGenerated from `package/crds` by `hack/apidocs` (`make generate`); do not edit.\n")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return errors.Wrap(err, f)
		}
		writeCRD(&b, crd)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

func writeCRD(b *bytes.Buffer, crd *apiextensionsv1.CustomResourceDefinition) {
	n := crd.Spec.Names
	for _, v := range crd.Spec.Versions {
		fmt.Fprintf(b, "\n## %s\n\n", n.Kind)
		scope := "cluster-scoped"
		if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
			scope = "namespaced"
		}
		fmt.Fprintf(b, "`%s/%s`, %s", crd.Spec.Group, v.Name, scope)
		if len(n.ShortNames) > 0 {
			fmt.Fprintf(b, "; short names: %s", code(n.ShortNames))
		}
		if len(n.Categories) > 0 {
			fmt.Fprintf(b, "; categories: %s", code(n.Categories))
		}
		b.WriteString(".\n\n")
		s := v.Schema.OpenAPIV3Schema
		if s == nil {
			continue
		}
		b.WriteString(oneLine(s.Description) + "\n")
		if len(v.AdditionalPrinterColumns) > 0 {
			b.WriteString("\n`kubectl get` columns: ")
			var cols []string
			for _, c := range v.AdditionalPrinterColumns {
				col := c.Name
				if c.Priority > 0 {
					col += " (wide)"
				}
				cols = append(cols, col)
			}
			b.WriteString(strings.Join(cols, ", ") + ".\n")
		}
		rules := rulesOf(s)
		if len(rules) > 0 {
			b.WriteString("\nRules on the whole object:\n\n")
			for _, r := range rules {
				fmt.Fprintf(b, "- %s\n", r)
			}
		}
		b.WriteString("\n| field | type | default | description |\n| --- | --- | --- | --- |\n")
		for _, top := range []string{"spec", "status"} {
			if p, ok := s.Properties[top]; ok {
				walk(b, top, p, contains(s.Required, top))
			}
		}
	}
}

// walk writes one row a field, depth first, in the schema's (alphabetical) order.
func walk(b *bytes.Buffer, path string, s apiextensionsv1.JSONSchemaProps, required bool) {
	typ := s.Type
	if typ == "array" && s.Items != nil && s.Items.Schema != nil {
		typ = "[]" + s.Items.Schema.Type
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		typ = "map[string]" + s.AdditionalProperties.Schema.Type
	}
	if required {
		typ += ", required"
	}
	def := ""
	if s.Default != nil {
		def = "`" + strings.ReplaceAll(string(s.Default.Raw), "|", `\|`) + "`"
	}
	desc := oneLine(s.Description)
	var notes []string
	if len(s.Enum) > 0 {
		var vals []string
		for _, e := range s.Enum {
			vals = append(vals, strings.Trim(string(e.Raw), `"`))
		}
		notes = append(notes, "one of "+code(vals))
	}
	if s.Pattern != "" {
		notes = append(notes, "matches `"+s.Pattern+"`")
	}
	if s.Minimum != nil {
		notes = append(notes, fmt.Sprintf("at least %g", *s.Minimum))
	}
	if s.Maximum != nil {
		notes = append(notes, fmt.Sprintf("at most %g", *s.Maximum))
	}
	if s.MaxLength != nil {
		notes = append(notes, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	if s.MaxItems != nil {
		notes = append(notes, fmt.Sprintf("at most %d items", *s.MaxItems))
	}
	notes = append(notes, rulesOf(&s)...)
	if len(notes) > 0 {
		desc += " <br>Rules: " + strings.Join(notes, "; ") + "."
	}
	fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", path, typ, def, strings.ReplaceAll(desc, "|", `\|`))

	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		walk(b, path+"."+k, s.Properties[k], contains(s.Required, k))
	}
	if s.Items != nil && s.Items.Schema != nil && len(s.Items.Schema.Properties) > 0 {
		item := *s.Items.Schema
		names = names[:0]
		for k := range item.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			walk(b, path+"[]."+k, item.Properties[k], contains(item.Required, k))
		}
	}
}

// rulesOf lists a schema's CEL rules by their messages.
func rulesOf(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	for _, r := range s.XValidations {
		m := r.Message
		if m == "" {
			m = "`" + r.Rule + "`"
		}
		if r.FieldPath != "" {
			m = "`" + strings.TrimPrefix(r.FieldPath, ".") + "` " + m
		}
		out = append(out, strings.TrimSuffix(m, "."))
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func code(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return strings.Join(out, ", ")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
