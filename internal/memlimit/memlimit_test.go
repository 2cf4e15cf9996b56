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

package memlimit

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func TestFromCgroup(t *testing.T) {
	cases := map[string]struct {
		files map[string]string
		want  int64
	}{
		"CgroupV2WithALimit":     {files: map[string]string{"memory.max": "268435456\n"}, want: 268435456},
		"CgroupV2WithoutALimit":  {files: map[string]string{"memory.max": "max\n"}},
		"CgroupV1WithALimit":     {files: map[string]string{"memory/memory.limit_in_bytes": "536870912\n"}, want: 536870912},
		"CgroupV1WithoutALimit":  {files: map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}},
		"NoCgroupFiles":          {},
		"Garbage":                {files: map[string]string{"memory.max": "lots\n"}},
		"V2WinsWhenBothAreThere": {files: map[string]string{"memory.max": "1000", "memory/memory.limit_in_bytes": "2000"}, want: 1000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			root := t.TempDir()
			for f, content := range tc.files {
				p := filepath.Join(root, f)
				g.Expect(os.MkdirAll(filepath.Dir(p), 0o755)).To(Succeed())
				g.Expect(os.WriteFile(p, []byte(content), 0o644)).To(Succeed())
			}
			g.Expect(FromCgroup(root)).To(Equal(tc.want))
		})
	}
}

func TestSoft(t *testing.T) {
	const mib = 1 << 20
	cases := map[string]struct {
		limit, image, want int64
	}{
		"NoLimitNoSoftLimit":            {limit: 0, image: 60 * mib, want: 0},
		"TheImageComesOffFirst":         {limit: 512 * mib, image: 62 * mib, want: 405 * mib},
		"NoImageKnown":                  {limit: 1000, image: 0, want: 900},
		"AnImageOfMoreThanHalfTheLimit": {limit: 100 * mib, image: 80 * mib, want: 45 * mib},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(Soft(tc.limit, tc.image)).To(Equal(tc.want))
		})
	}
}

func TestImage(t *testing.T) {
	g := NewWithT(t)
	exe, err := os.Executable()
	g.Expect(err).NotTo(HaveOccurred())
	fi, err := os.Stat(exe)
	g.Expect(err).NotTo(HaveOccurred())
	// The test binary maps megabytes of code, though less than its file
	// holds (symbols and debugging data are not loaded).
	g.Expect(Image(exe)).To(BeNumerically(">", 1<<20))
	g.Expect(Image(exe)).To(BeNumerically("<=", fi.Size()))

	notELF := filepath.Join(t.TempDir(), "script")
	g.Expect(os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755)).To(Succeed())
	g.Expect(Image(notELF)).To(BeZero())
	g.Expect(Image(filepath.Join(t.TempDir(), "missing"))).To(BeZero())
}
