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
	g := NewWithT(t)
	g.Expect(Soft(0)).To(BeZero(), "no limit, no soft limit")
	g.Expect(Soft(1000)).To(Equal(int64(900)))
}
