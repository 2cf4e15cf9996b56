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

// Package images builds, as tarballs, the container images that the one-node
// test cluster runs. That cluster has no registry access, so every image a pod
// names must already be in containerd's store: the harness imports each tarball
// with `ctr -n k8s.io images import` and pods use imagePullPolicy IfNotPresent
// or Never. The images are assembled from files on this machine (a Go program
// built at run time, the Cloud SQL Auth Proxy built by `make cloud-sql-proxy`,
// Debian's busybox-static and postgresql-client) with go-containerregistry, so
// no Docker engine or image builder is needed.
package images

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

// Registry prefixes every reference. It looks like a registry host
// ("localhost") so that containerd and the kubelet take the name as it is
// instead of normalizing it to docker.io/library/..., and it is one nothing
// listens on, so a pod that would pull fails at once instead of reaching out.
const Registry = "localhost/cloudsql-node-e2e"

// Tag is the tag of the images whose content has no version of its own.
const Tag = "e2e"

// References the harness writes into containerd's and the provider's
// configuration. The proxy's reference carries the proxy's version, so it is
// only known once the binary is read: see Proxy and ProxyRepository.
const (
	// PauseRef is containerd's sandbox_image.
	PauseRef = Registry + "/pause:" + Tag
	// WriterRef is the provider's injection.pgpass_writer_image.
	WriterRef = Registry + "/pgpass-writer:" + Tag
	// AppRef is the image of the test applications that run psql.
	AppRef = Registry + "/psql-app:" + Tag
	// ProxyRepository is the repository of the proxy image. Its last element is
	// cloud-sql-proxy, like Google's, because that is how the webhook recognizes
	// a pod that already runs a proxy of its own.
	ProxyRepository = Registry + "/cloud-sql-proxy"
)

// Users the images know by name. NonRootUID is the distroless "nonroot" user
// that Google's proxy image runs as; AppUID is the uid the end-to-end test's
// non-root application pods run as.
const (
	NonRootUID = 65532
	AppUID     = 1000
	nobodyUID  = 65534
	// pauseUID is the user the upstream pause image runs as.
	pauseUID = 65535
)

// Debian packages named in the errors, so that a missing file says what to install.
const (
	pkgBusybox = "busybox-static"
	pkgPsql    = "postgresql-client"
	pkgCerts   = "ca-certificates"
	// hintProxy says how to get the proxy binary.
	hintProxy = "build it with `make cloud-sql-proxy` (a static build, CGO_ENABLED=0)"
)

// Where the inputs are on this machine. Variables, not constants, so a test
// can point them elsewhere.
var (
	// BusyboxPath is the static busybox of Debian's busybox-static.
	BusyboxPath = "/bin/busybox"
	// PsqlGlob finds the real psql: /usr/bin/psql is postgresql-common's
	// pg_wrapper, a Perl script that needs Perl and the cluster configuration.
	PsqlGlob = "/usr/lib/postgresql/*/bin/psql"
	// CABundlePath is the CA bundle that Google's proxy image carries.
	CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
)

// Paths inside the images.
const (
	proxyPath   = podinject.ProxyBinary // where the classic sidecar's postStart hook runs it
	pausePath   = "/pause"
	busyboxPath = "/bin/busybox"
	psqlPath    = "/usr/bin/psql"
	// libDir is where App's libraries go: a directory the dynamic loader
	// searches by default, so the image needs no ld.so.cache.
	libDir = "/usr/lib/x86_64-linux-gnu"
	// arch is the only architecture the harness runs on; the binaries put into
	// the images are checked to be x86-64 (see checkELF).
	arch = "amd64"
)

const (
	errMissing      = "%s is missing: %s"
	errNoPsql       = "no psql matches %s: install the Debian package " + pkgPsql
	errBuildPause   = "cannot build the pause program"
	errProxyVersion = "cannot read the version of the Cloud SQL Auth Proxy with %s --version"
	errBadVersion   = "cannot make an image tag of the version %q that %s --version printed"
	errRead         = "cannot read %s"
	errLayer        = "cannot build the layer of %s"
	errConfig       = "cannot set the configuration of %s"
	errWrite        = "cannot write the image tarball %s"
	errMkdir        = "cannot create %s"
)

// proxyVersionTimeout bounds `cloud-sql-proxy --version`, which prints and exits.
const proxyVersionTimeout = 30 * time.Second

// An Image is a built image: the reference pods name (with imagePullPolicy
// IfNotPresent or Never, since nothing can pull it) and the tarball, in
// `docker save` format, that `ctr -n k8s.io images import` takes.
type Image struct {
	Ref, Tarball string
}

// Pause builds the sandbox ("pause") image that containerd's sandbox_image
// names, from the Go program in the pause directory next to this file (the
// binary is compiled into dir). The upstream image is on registry.k8s.io,
// which the test cluster cannot reach, and containerd needs a sandbox image
// before it can start any pod.
func Pause(dir string) (Image, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Image{}, errors.Wrapf(err, errMkdir, dir)
	}
	bin := filepath.Join(dir, "pause")
	// Static (no libc in the image), for the harness's platform whatever the
	// host's Go defaults, and reproducible: -trimpath, no VCS stamp.
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", bin, "./internal/testing/nodetest/images/pause")
	build.Dir = repoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if out, err := build.CombinedOutput(); err != nil {
		return Image{}, errors.Wrapf(err, errBuildPause+": %s", out)
	}
	l := &layout{}
	if err := l.copyFile(pausePath, bin, 0o755, "go build did not write it"); err != nil {
		return Image{}, err
	}
	return l.write(dir, "pause", PauseRef, v1.Config{
		Entrypoint: []string{pausePath},
		User:       uidGid(pauseUID),
	})
}

// Proxy builds the Cloud SQL Auth Proxy image from proxyBinary, a static Go
// build (`make cloud-sql-proxy`), laid out like Google's image: the binary as
// /cloud-sql-proxy, which is the entrypoint (the webhook passes only
// arguments), running as the distroless nonroot user, with the CA bundle it
// needs for TLS to Google's APIs. The tag is the version the binary reports,
// so the reference reads like the real one.
func Proxy(dir, proxyBinary string) (Image, error) {
	version, err := proxyVersion(proxyBinary)
	if err != nil {
		return Image{}, err
	}
	ref := ProxyRepository + ":" + version
	if _, err := name.NewTag(ref, name.StrictValidation); err != nil {
		return Image{}, errors.Wrapf(err, errBadVersion, version, proxyBinary)
	}
	if err := checkStatic(proxyBinary, hintProxy); err != nil {
		return Image{}, err
	}
	l := &layout{}
	if err := l.copyFile(proxyPath, proxyBinary, 0o755, hintProxy); err != nil {
		return Image{}, err
	}
	if err := l.copyFile(CABundlePath, CABundlePath, 0o644, debian(pkgCerts)); err != nil {
		return Image{}, err
	}
	l.users()
	l.dir("/tmp", 0o1777, 0)
	return l.write(dir, "cloud-sql-proxy", ref, v1.Config{
		Entrypoint: []string{proxyPath},
		User:       uidGid(NonRootUID),
	})
}

// Writer builds the image of the injected containers that write and follow
// the password files: busybox-static providing /bin/sh, and sleep and mv,
// which the followers need besides the shell. The webhook gives those
// containers a runAsUser, so the image's own user only matters to a pod that
// names the image by hand: nonroot, then.
func Writer(dir string) (Image, error) {
	l := &layout{}
	if err := l.busybox("sh", "cat", "sleep", "mv"); err != nil {
		return Image{}, err
	}
	return l.write(dir, "pgpass-writer", WriterRef, v1.Config{
		Cmd:  []string{"/bin/sh"},
		Env:  []string{"PATH=/bin"},
		User: uidGid(NonRootUID),
	})
}

// App builds the image of the test applications: the real psql (Debian's
// postgresql-client) as /usr/bin/psql, with every shared library it loads and
// the dynamic loader, plus busybox as /bin/sh, so that a container can run
// `psql -c 'select current_user'` or `sh -c ...`, and wget, with which a
// Job's container asks its proxy to quit. /etc/passwd and /etc/group
// name root, nobody, AppUID and NonRootUID: without PGUSER or PGPASSFILE libpq
// looks the current user up (for the default user name and ~/.pgpass), and
// fails or warns for a uid with no entry. Nothing in it needs to be written,
// since the pods run with readOnlyRootFilesystem.
//
// The image runs as root by default because that is what the webhook assumes
// of a container whose pod spec sets no runAsUser: it writes that container's
// password file for uid 0.
func App(dir string) (Image, error) {
	psql, err := findPsql()
	if err != nil {
		return Image{}, err
	}
	l := &layout{}
	if err := l.dynamic(psqlPath, psql, pkgPsql); err != nil {
		return Image{}, err
	}
	if err := l.busybox("sh", "cat", "env", "id", "ls", "sleep", "test", "wget"); err != nil {
		return Image{}, err
	}
	l.users()
	// Without nsswitch.conf, older glibc would consult NIS before the files.
	l.file("/etc/nsswitch.conf", 0o644, []byte("passwd: files\ngroup: files\nhosts: files dns\n"))
	return l.write(dir, "psql-app", AppRef, v1.Config{
		Cmd: []string{"/bin/sh"},
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
	})
}

// repoRoot is the root directory of this repository, found from this file's
// path like internal/testing/controlplane.RepoRoot (whose package would drag envtest in).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

// proxyVersion is what `cloud-sql-proxy --version` prints last, for example
// 2.27.0 from "cloud-sql-proxy version 2.27.0".
func proxyVersion(bin string) (string, error) {
	if _, err := os.Stat(bin); err != nil {
		return "", errors.Errorf(errMissing, bin, hintProxy)
	}
	ctx, cancel := context.WithTimeout(context.Background(), proxyVersionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "", errors.Wrapf(err, errProxyVersion+": %s", bin, out)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "", errors.Errorf(errProxyVersion+": it printed nothing", bin)
	}
	return strings.TrimPrefix(f[len(f)-1], "v"), nil
}

// findPsql returns the newest real psql binary.
func findPsql() (string, error) {
	m, err := filepath.Glob(PsqlGlob)
	if err != nil || len(m) == 0 {
		return "", errors.Errorf(errNoPsql, PsqlGlob)
	}
	// /usr/lib/postgresql/<major>/bin/psql: compare the majors as numbers.
	sort.Slice(m, func(i, j int) bool {
		a, b := filepath.Base(filepath.Dir(filepath.Dir(m[i]))), filepath.Base(filepath.Dir(filepath.Dir(m[j])))
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
	return m[len(m)-1], nil
}

func uidGid(id int) string {
	return strconv.Itoa(id) + ":" + strconv.Itoa(id)
}
