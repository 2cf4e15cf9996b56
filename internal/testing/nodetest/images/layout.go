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
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// An entry is one file, directory or symbolic link of an image's only layer.
type entry struct {
	typ  byte
	mode int64
	uid  int
	data []byte
	link string
}

// A layout is an image's filesystem being assembled, keyed by absolute path.
// Parent directories are added as needed (0755, root), so the layer never
// relies on the runtime inventing them with whatever mode it likes.
type layout struct {
	entries map[string]entry
}

func (l *layout) put(p string, e entry) {
	if l.entries == nil {
		l.entries = map[string]entry{}
	}
	p = path.Clean(p)
	for d := path.Dir(p); d != "/"; d = path.Dir(d) {
		if _, ok := l.entries[d]; !ok {
			l.entries[d] = entry{typ: tar.TypeDir, mode: 0o755}
		}
	}
	l.entries[p] = e
}

func (l *layout) dir(p string, mode int64, uid int) {
	l.put(p, entry{typ: tar.TypeDir, mode: mode, uid: uid})
}

func (l *layout) file(p string, mode int64, data []byte) {
	l.put(p, entry{typ: tar.TypeReg, mode: mode, data: data})
}

// symlink adds a link to target, which should be relative: then the link also
// resolves in a copy of the filesystem extracted anywhere (as the tests do).
func (l *layout) symlink(p, target string) {
	l.put(p, entry{typ: tar.TypeSymlink, mode: 0o777, link: target})
}

// copyFile adds the host file src as p. hint says how to get src when it is
// missing.
func (l *layout) copyFile(p, src string, mode int64, hint string) error {
	data, err := os.ReadFile(src)
	if errors.Is(err, os.ErrNotExist) {
		return errors.Errorf(errMissing, src, hint)
	}
	if err != nil {
		return errors.Wrapf(err, errRead, src)
	}
	l.file(p, mode, data)
	return nil
}

// busybox adds Debian's static busybox as /bin/busybox and each applet as a
// symbolic link to it in /bin: busybox picks the applet from the name it runs
// as. It must be the static build, as the images around it may have no libc.
func (l *layout) busybox(applets ...string) error {
	if err := checkStatic(BusyboxPath, debian(pkgBusybox)); err != nil {
		return err
	}
	if err := l.copyFile(busyboxPath, BusyboxPath, 0o755, debian(pkgBusybox)); err != nil {
		return err
	}
	for _, a := range applets {
		l.symlink(path.Join(path.Dir(busyboxPath), a), path.Base(busyboxPath))
	}
	return nil
}

// users adds /etc/passwd and /etc/group naming root, nobody, AppUID and
// NonRootUID, with home directories that exist (nothing is written there).
func (l *layout) users() {
	passwd := "root:x:0:0:root:/root:/bin/sh\n" +
		"app:x:" + strconv.Itoa(AppUID) + ":" + strconv.Itoa(AppUID) + ":app:/home/app:/bin/sh\n" +
		"nonroot:x:" + strconv.Itoa(NonRootUID) + ":" + strconv.Itoa(NonRootUID) + ":nonroot:/home/nonroot:/sbin/nologin\n" +
		"nobody:x:" + strconv.Itoa(nobodyUID) + ":" + strconv.Itoa(nobodyUID) + ":nobody:/nonexistent:/sbin/nologin\n"
	group := "root:x:0:\n" +
		"app:x:" + strconv.Itoa(AppUID) + ":\n" +
		"nonroot:x:" + strconv.Itoa(NonRootUID) + ":\n" +
		"nogroup:x:" + strconv.Itoa(nobodyUID) + ":\n"
	l.file("/etc/passwd", 0o644, []byte(passwd))
	l.file("/etc/group", 0o644, []byte(group))
	l.dir("/root", 0o700, 0)
	l.dir("/home/app", 0o755, AppUID)
	l.dir("/home/nonroot", 0o755, NonRootUID)
}

// dynamic adds the dynamically linked executable src as p, with the shared
// libraries it needs (directly or not) in libDir and its dynamic loader where
// its PT_INTERP says. A library found under several names (the loader is both
// PT_INTERP and libc's DT_NEEDED) is stored once and linked to.
func (l *layout) dynamic(p, src, pkg string) error {
	interp, libs, err := libraries(src, debian(pkg))
	if err != nil {
		return err
	}
	if err := l.copyFile(p, src, 0o755, debian(pkg)); err != nil {
		return err
	}
	stored := map[string]string{} // real host path → path in the image
	add := func(imgPath, hostPath string) error {
		resolved, err := filepath.EvalSymlinks(hostPath)
		if err != nil {
			return errors.Wrapf(err, errRead, hostPath)
		}
		if first, ok := stored[resolved]; ok {
			rel, err := filepath.Rel(path.Dir(imgPath), first)
			if err != nil {
				return err
			}
			l.symlink(imgPath, rel)
			return nil
		}
		stored[resolved] = imgPath
		// 0755: the loader is run directly, and a library's mode matters not.
		return l.copyFile(imgPath, resolved, 0o755, debian(pkg))
	}
	names := make([]string, 0, len(libs))
	for n := range libs {
		names = append(names, n)
	}
	sort.Strings(names) // the same image whatever the map's order
	for _, n := range names {
		if err := add(path.Join(libDir, n), libs[n]); err != nil {
			return err
		}
	}
	return add(interp, interp)
}

// write turns the layout into a one-layer linux/amd64 image with config c and
// writes it as dir/<base>.tar, tagged ref. Entries are sorted, owned by root
// unless said otherwise and dated at the epoch, and the config has no creation
// time, so the same inputs give the same image digest.
func (l *layout) write(dir, base, ref string, c v1.Config) (Image, error) {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return Image{}, err
	}
	data, err := l.tar()
	if err != nil {
		return Image{}, errors.Wrapf(err, errLayer, ref)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		return Image{}, errors.Wrapf(err, errLayer, ref)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return Image{}, errors.Wrapf(err, errLayer, ref)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Image{}, errors.Wrapf(err, errConfig, ref)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Config = c
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.source": "https://github.com/travelaudience/cloudsql-postgres-operator",
		"org.opencontainers.image.title":  base,
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return Image{}, errors.Wrapf(err, errConfig, ref)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Image{}, errors.Wrapf(err, errMkdir, dir)
	}
	out := filepath.Join(dir, base+".tar")
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		return Image{}, errors.Wrapf(err, errWrite, out)
	}
	return Image{Ref: ref, Tarball: out}, nil
}

// tar is the layer: a parent path sorts before its children, so directories
// come before what they hold.
func (l *layout) tar() ([]byte, error) {
	paths := make([]string, 0, len(l.entries))
	for p := range l.entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		e := l.entries[p]
		h := &tar.Header{
			Name:     p[1:],
			Typeflag: e.typ,
			Mode:     e.mode,
			Uid:      e.uid,
			Gid:      e.uid,
			Linkname: e.link,
			Size:     int64(len(e.data)),
			ModTime:  time.Unix(0, 0),
			Format:   tar.FormatPAX,
		}
		if e.typ == tar.TypeDir {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func debian(pkg string) string {
	return "install the Debian package " + pkg
}
