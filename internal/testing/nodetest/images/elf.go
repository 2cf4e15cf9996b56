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

package images

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// hostLibDirs are where the host's dynamic loader finds libraries that no
// RUNPATH names: its built-in system directories on Debian (multiarch first),
// which is also what ld.so.cache indexes there.
var hostLibDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib64", "/usr/lib64",
	"/lib", "/usr/lib",
	"/usr/local/lib/x86_64-linux-gnu", "/usr/local/lib",
}

const (
	errNotELF      = "%s is not an ELF executable"
	errNotAMD64    = "%s is not a 64-bit x86 (amd64) ELF file, the only platform the node tests run on"
	errNotStatic   = "%s is dynamically linked, but its image has no C library: %s"
	errNoLibrary   = "cannot find %s, which %s needs, in %v: %s"
	errLibraryPath = "%s needs %s by path, which the image could not reproduce"
	errInterp      = "cannot read the program interpreter (PT_INTERP) of %s"
)

// openELF opens p as an x86-64 ELF file. hint says how to get p when it is missing.
func openELF(p, hint string) (*elf.File, error) {
	f, err := elf.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errors.Errorf(errMissing, p, hint)
	}
	if err != nil {
		return nil, errors.Wrapf(err, errNotELF, p)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		_ = f.Close()
		return nil, errors.Errorf(errNotAMD64, p)
	}
	return f, nil
}

// interpreter is the dynamic loader that f names (PT_INTERP), or "" for a
// static executable.
func interpreter(f *elf.File) (string, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(p.Open())
		if err != nil {
			return "", err
		}
		return string(bytes.TrimRight(b, "\x00")), nil
	}
	return "", nil
}

// checkStatic fails unless p is a static x86-64 executable, which runs in an
// image with nothing else in it.
func checkStatic(p, hint string) error {
	f, err := openELF(p, hint)
	if err != nil {
		return err
	}
	defer f.Close() // read only
	interp, err := interpreter(f)
	if err != nil {
		return errors.Wrapf(err, errInterp, p)
	}
	if interp != "" {
		return errors.Errorf(errNotStatic, p, hint)
	}
	return nil
}

// libraries reads the DT_NEEDED entries of the executable bin and, recursively,
// of the libraries they resolve to, the way the dynamic loader searches (the
// object's RUNPATH or RPATH, then the system directories). It returns bin's
// dynamic loader and the host file of each needed name. This rather than ldd,
// which runs the loader on bin and would print paths of the host's choosing
// only, mixed with the vDSO. hint says how to get a missing file.
func libraries(bin, hint string) (interp string, libs map[string]string, err error) {
	f, err := openELF(bin, hint)
	if err != nil {
		return "", nil, err
	}
	interp, err = interpreter(f)
	_ = f.Close()
	if err != nil {
		return "", nil, errors.Wrapf(err, errInterp, bin)
	}
	if interp == "" {
		return "", nil, errors.Errorf(errNotELF+" that is dynamically linked", bin)
	}
	libs = map[string]string{}
	for queue := []string{bin}; len(queue) > 0; queue = queue[1:] {
		obj := queue[0]
		needed, dirs, err := dependencies(obj, hint)
		if err != nil {
			return "", nil, err
		}
		for _, n := range needed {
			if _, ok := libs[n]; ok {
				continue
			}
			if strings.Contains(n, "/") {
				return "", nil, errors.Errorf(errLibraryPath, obj, n)
			}
			p := findLibrary(n, dirs)
			if p == "" {
				return "", nil, errors.Errorf(errNoLibrary, n, obj, dirs, hint)
			}
			libs[n] = p
			queue = append(queue, p)
		}
	}
	return interp, libs, nil
}

// dependencies are obj's DT_NEEDED names and the directories to find them in.
func dependencies(obj, hint string) (needed, dirs []string, err error) {
	f, err := openELF(obj, hint)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close() // read only
	if needed, err = f.ImportedLibraries(); err != nil {
		return nil, nil, errors.Wrapf(err, errNotELF, obj)
	}
	// RUNPATH wins over RPATH when both are set, as in the loader.
	paths, _ := f.DynString(elf.DT_RUNPATH)
	if len(paths) == 0 {
		paths, _ = f.DynString(elf.DT_RPATH)
	}
	origin := filepath.Dir(obj)
	for _, p := range paths {
		for d := range strings.SplitSeq(p, ":") {
			d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
			if d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	return needed, append(dirs, hostLibDirs...), nil
}

// findLibrary is the first file called n in dirs that is an x86-64 ELF file,
// skipping the other architectures' libraries that /usr/lib may hold.
func findLibrary(n string, dirs []string) string {
	for _, d := range dirs {
		p := filepath.Join(d, n)
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		f, err := openELF(p, "")
		if err != nil {
			continue
		}
		_ = f.Close()
		return p
	}
	return ""
}
