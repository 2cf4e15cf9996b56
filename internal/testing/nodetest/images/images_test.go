//go:build node

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
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	. "github.com/onsi/gomega"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
)

// A built image read back from its tarball, with its filesystem extracted.
type built struct {
	config *v1.ConfigFile
	digest v1.Hash
	// files are the layer's headers by absolute path.
	files map[string]*tar.Header
	// root is where the filesystem was extracted.
	root string
}

// readBack reads img's tarball the way an importer does, by its tag, and
// extracts its filesystem into a temporary directory.
func readBack(t *testing.T, img Image) built {
	t.Helper()
	g := NewWithT(t)
	tag, err := name.NewTag(img.Ref, name.StrictValidation)
	g.Expect(err).NotTo(HaveOccurred())
	i, err := tarball.ImageFromPath(img.Tarball, &tag)
	g.Expect(err).NotTo(HaveOccurred(), "the tarball must hold an image tagged %s", img.Ref)
	cf, err := i.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cf.OS).To(Equal("linux"))
	g.Expect(cf.Architecture).To(Equal("amd64"))
	layers, err := i.Layers()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(layers).To(HaveLen(1))
	d, err := i.Digest()
	g.Expect(err).NotTo(HaveOccurred())

	b := built{config: cf, digest: d, files: map[string]*tar.Header{}, root: t.TempDir()}
	rc := mutate.Extract(i)
	defer rc.Close() // read only
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		p := path.Clean("/" + h.Name)
		g.Expect(h.Name).NotTo(ContainSubstring(".."), h.Name)
		g.Expect(h.Uname).To(BeEmpty(), "owner of %s by uid only", p)
		b.files[p] = h
		target := filepath.Join(b.root, p)
		switch h.Typeflag {
		case tar.TypeDir:
			g.Expect(os.MkdirAll(target, 0o755)).To(Succeed())
			g.Expect(os.Chmod(target, os.FileMode(h.Mode).Perm())).To(Succeed())
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(os.WriteFile(target, data, 0o600)).To(Succeed())
			g.Expect(os.Chmod(target, os.FileMode(h.Mode).Perm())).To(Succeed())
		case tar.TypeSymlink:
			// Relative only: an absolute link would resolve on the host here,
			// hiding a file missing from the image.
			g.Expect(filepath.IsAbs(h.Linkname)).To(BeFalse(), "%s -> %s", p, h.Linkname)
			g.Expect(os.Symlink(h.Linkname, target)).To(Succeed())
		default:
			t.Fatalf("unexpected entry type %c for %s", h.Typeflag, p)
		}
	}
	return b
}

// buildAndRead builds an image with build into a temporary directory, checks
// its reference and how it runs (entrypoint, command and user as in want), and
// reads it back.
func buildAndRead(t *testing.T, build func(dir string) (Image, error), ref string, want v1.Config) built {
	t.Helper()
	g := NewWithT(t)
	img, err := build(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(img.Ref).To(Equal(ref))
	b := readBack(t, img)
	g.Expect(b.config.Config.Entrypoint).To(Equal(want.Entrypoint), "entrypoint")
	g.Expect(b.config.Config.Cmd).To(Equal(want.Cmd), "command")
	g.Expect(b.config.Config.User).To(Equal(want.User), "user")
	return b
}

// expectFile checks that p is a regular file with mode, owned by root.
func (b built) expectFile(g Gomega, p string, mode int64) {
	h, ok := b.files[p]
	g.Expect(ok).To(BeTrue(), "%s is in the image", p)
	g.Expect(h.Typeflag).To(Equal(byte(tar.TypeReg)), "%s is a regular file", p)
	g.Expect(h.Mode).To(Equal(mode), "mode of %s", p)
	g.Expect(h.Uid).To(BeZero(), "owner of %s", p)
	g.Expect(h.Gid).To(BeZero(), "group of %s", p)
}

// expectLink checks that p is a symbolic link to target.
func (b built) expectLink(g Gomega, p, target string) {
	h, ok := b.files[p]
	g.Expect(ok).To(BeTrue(), "%s is in the image", p)
	g.Expect(h.Typeflag).To(Equal(byte(tar.TypeSymlink)), "%s is a symbolic link", p)
	g.Expect(h.Linkname).To(Equal(target), "target of %s", p)
}

// inImage is where p, an absolute path in the image, resolves in the extracted
// filesystem, or "" when it does not or leaves it.
func (b built) inImage(p string) string {
	r, err := filepath.EvalSymlinks(filepath.Join(b.root, p))
	if err != nil {
		return ""
	}
	root, err := filepath.EvalSymlinks(b.root)
	if err != nil || !strings.HasPrefix(r, root+"/") {
		return ""
	}
	return r
}

// command runs args in the extracted filesystem (chroot) as uid. args[0] must
// be absolute: exec.Command would look a bare name up on the host's PATH. It is
// the closest to a container this test can get without a runtime. The node
// tests run as root, as the kubelet and containerd need.
func (b built) command(t *testing.T, uid uint32, args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("this test runs the images' programs in a chroot, which needs root, as the node tests do")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = "/"
	cmd.Env = b.config.Config.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: b.root, Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	return cmd
}

func TestPause(t *testing.T) {
	g := NewWithT(t)
	b := buildAndRead(t, Pause, PauseRef, v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535"})
	b.expectFile(g, "/pause", 0o755)
	g.Expect(b.files).To(HaveLen(1), "the pause image holds the pause program only")
	g.Expect(checkStatic(filepath.Join(b.root, "pause"), "")).To(Succeed())

	// As PID 1 of a PID namespace of its own, as in a sandbox: it blocks, and
	// reaps the processes orphaned into its namespace.
	cmd := b.command(t, 0, "/pause")
	cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
	g.Expect(cmd.Start()).To(Succeed())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()
	pid := cmd.Process.Pid
	// Signal only once it handles SIGTERM: before that, SIGTERM to PID 1 would
	// be ignored (and to anything else, kill it).
	g.Eventually(func() bool { return catches(pid, syscall.SIGTERM) }).WithTimeout(10 * time.Second).Should(BeTrue())
	g.Consistently(exited).WithTimeout(300 * time.Millisecond).ShouldNot(Receive())

	// A shell in its namespace starts a sleep and exits: the sleep is
	// reparented to pause, and once it exits only pause can reap it.
	children := func() string {
		c, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
		return strings.TrimSpace(string(c))
	}
	// No pipes: the sleep would hold them open, and waiting for their end
	// would wait for the sleep.
	orphan := exec.Command("nsenter", "-t", strconv.Itoa(pid), "-p", "--", "/bin/sh", "-c", "sleep 3 & exit 0")
	g.Expect(orphan.Run()).To(Succeed())
	g.Expect(children()).NotTo(BeEmpty(), "the orphaned sleep is a child of pause")
	g.Eventually(children).WithTimeout(15*time.Second).Should(BeEmpty(), "pause reaped the exited sleep")
	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	var werr error
	g.Eventually(exited).WithTimeout(10 * time.Second).Should(Receive(&werr))
	g.Expect(werr).NotTo(HaveOccurred(), "pause exits 0 on SIGTERM")
}

// catches reports whether process pid has a handler for sig (SigCgt in
// /proc/<pid>/status).
func catches(pid int, sig syscall.Signal) bool {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return false
	}
	for l := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "SigCgt:"); ok {
			var mask uint64
			for _, c := range strings.TrimSpace(v) {
				mask = mask<<4 | uint64(strings.IndexRune("0123456789abcdef", c))
			}
			return mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

func TestProxy(t *testing.T) {
	g := NewWithT(t)
	bin := os.Getenv("CLOUD_SQL_PROXY")
	if bin == "" {
		t.Fatal("CLOUD_SQL_PROXY is not set: run `make cloud-sql-proxy`, which builds the proxy and prints its path, and export CLOUD_SQL_PROXY=<that path> (the Makefile exports it for its test targets)")
	}
	// The webhook recognizes a proxy container by this last path element.
	g.Expect(path.Base(ProxyRepository)).To(Equal("cloud-sql-proxy"))
	// The tag is the version the provider injects by default, since
	// hack/proxy/go.mod pins both.
	b := buildAndRead(t, func(dir string) (Image, error) { return Proxy(dir, bin) }, ProxyRepository+":"+configfile.ProxyVersion,
		v1.Config{Entrypoint: []string{"/cloud-sql-proxy"}, User: "65532:65532"})
	b.expectFile(g, "/cloud-sql-proxy", 0o755)
	b.expectFile(g, "/etc/ssl/certs/ca-certificates.crt", 0o644)
	b.expectFile(g, "/etc/passwd", 0o644)
	g.Expect(b.files["/tmp"].Mode).To(Equal(int64(0o1777)))

	out, err := b.command(t, NonRootUID, "/cloud-sql-proxy", "--version").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Expect(string(out)).To(ContainSubstring(configfile.ProxyVersion))
}

func TestWriter(t *testing.T) {
	g := NewWithT(t)
	b := buildAndRead(t, Writer, WriterRef, v1.Config{Cmd: []string{"/bin/sh"}, User: "65532:65532"})
	b.expectFile(g, "/bin/busybox", 0o755)
	b.expectLink(g, "/bin/sh", "busybox")
	b.expectLink(g, "/bin/cat", "busybox")
	g.Expect(checkStatic(filepath.Join(b.root, "bin/busybox"), "")).To(Succeed())

	// The injected init container's command, as the user whose file it writes,
	// into a directory that user owns (the emptyDir).
	const pgpass = "127.0.0.1:5432:*:postgres:secret\n"
	g.Expect(os.WriteFile(filepath.Join(b.root, "pgpass"), []byte(pgpass), 0o644)).To(Succeed())
	g.Expect(os.Mkdir(filepath.Join(b.root, "out"), 0o755)).To(Succeed())
	g.Expect(os.Chown(filepath.Join(b.root, "out"), AppUID, AppUID)).To(Succeed())
	out, err := b.command(t, AppUID, "/bin/sh", "-c", `umask 077 && cat "$1" > "$2"`, "pgpass-writer", "/pgpass", "/out/pgpass-1000").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	written := filepath.Join(b.root, "out", "pgpass-1000")
	g.Expect(os.ReadFile(written)).To(Equal([]byte(pgpass)))
	st, err := os.Stat(written)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Mode().Perm()).To(Equal(os.FileMode(0o600)), "libpq ignores a password file others may read")

	// The same inputs give the same image.
	again, err := Writer(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(readBack(t, again).digest).To(Equal(b.digest))
}

func TestApp(t *testing.T) {
	g := NewWithT(t)
	// Root (no user), which the webhook assumes when the pod sets no runAsUser.
	b := buildAndRead(t, App, AppRef, v1.Config{Cmd: []string{"/bin/sh"}})
	g.Expect(b.config.Config.Env).To(ContainElement(HavePrefix("PATH=")))
	b.expectFile(g, "/usr/bin/psql", 0o755)
	b.expectFile(g, "/bin/busybox", 0o755)
	b.expectLink(g, "/bin/sh", "busybox")
	b.expectFile(g, "/etc/passwd", 0o644)
	b.expectFile(g, "/etc/group", 0o644)
	passwd, err := os.ReadFile(filepath.Join(b.root, "etc/passwd"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, u := range []string{"root:x:0:0:", "nobody:x:65534:", "app:x:1000:1000:", "nonroot:x:65532:65532:"} {
		g.Expect(string(passwd)).To(ContainSubstring(u))
	}
	for p, h := range b.files {
		// Nothing in the image is writable by others (symbolic links' own
		// modes mean nothing): pods run it read-only anyway.
		if h.Typeflag != tar.TypeSymlink {
			g.Expect(h.Mode&0o002).To(BeZero(), "%s must not be world-writable", p)
		}
	}

	// Every library psql needs, directly or not, resolves inside the image
	// where the loader looks without an ld.so.cache, and so does the loader.
	psql := b.inImage("/usr/bin/psql")
	g.Expect(psql).NotTo(BeEmpty())
	f, err := elf.Open(psql)
	g.Expect(err).NotTo(HaveOccurred())
	interp, err := interpreter(f)
	_ = f.Close()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.inImage(interp)).NotTo(BeEmpty(), "the loader %s is in the image", interp)
	seen := map[string]bool{}
	for queue := []string{psql}; len(queue) > 0; queue = queue[1:] {
		f, err := elf.Open(queue[0])
		g.Expect(err).NotTo(HaveOccurred())
		needed, err := f.ImportedLibraries()
		_ = f.Close()
		g.Expect(err).NotTo(HaveOccurred())
		for _, n := range needed {
			if seen[n] {
				continue
			}
			seen[n] = true
			found := ""
			for _, d := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"} {
				if found = b.inImage(path.Join(d, n)); found != "" {
					break
				}
			}
			g.Expect(found).NotTo(BeEmpty(), "%s, which %s needs, is in the image", n, queue[0])
			queue = append(queue, found)
		}
	}
	g.Expect(seen).To(HaveKey("libpq.so.5"))
	g.Expect(seen).To(HaveKey("libc.so.6"))

	// The image's psql runs, with nothing from the host.
	out, err := b.command(t, 0, "/usr/bin/psql", "--version").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Expect(string(out)).To(ContainSubstring("psql (PostgreSQL)"))
	// Pods name bare "psql" and "sh", which the image's PATH resolves.
	out, err = b.command(t, AppUID, "/bin/sh", "-c", `id -u && psql --version`).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Expect(string(out)).To(MatchRegexp(`^1000\npsql \(PostgreSQL\) `))

	// As each non-root user the tests use, libpq gets as far as connecting:
	// it found the user (for the default user name and ~/.pgpass) in /etc/passwd.
	for _, uid := range []uint32{0, AppUID, NonRootUID} {
		cmd := b.command(t, uid, "/usr/bin/psql", "--no-psqlrc", "-h", "127.0.0.1", "-p", "1", "-c", "select current_user")
		cmd.Env = append(cmd.Env, "PGCONNECT_TIMEOUT=5")
		out, err := cmd.CombinedOutput()
		g.Expect(err).To(HaveOccurred(), "nothing listens on port 1")
		g.Expect(string(out)).To(ContainSubstring("Connection refused"), "uid %d", uid)
		g.Expect(string(out)).NotTo(ContainSubstring("local user"), "uid %d", uid)
	}
}

// The harness writes the references into the provider's configuration, which
// must accept them.
func TestRefsAreValidConfig(t *testing.T) {
	g := NewWithT(t)
	c := configfile.Defaults()
	c.Proxy.Image = ProxyRepository + ":" + configfile.ProxyVersion
	c.Injection.PgpassWriterImage = WriterRef
	g.Expect(c.Validate()).To(Succeed())
	for _, ref := range []string{PauseRef, WriterRef, AppRef, c.Proxy.Image} {
		_, err := name.NewTag(ref, name.StrictValidation)
		g.Expect(err).NotTo(HaveOccurred(), ref)
	}
}

// A missing input names the Debian package that provides it.
func TestMissingInputs(t *testing.T) {
	g := NewWithT(t)
	defer func(b, p string) { BusyboxPath, PsqlGlob = b, p }(BusyboxPath, PsqlGlob)
	BusyboxPath, PsqlGlob = "/nonexistent/busybox", "/nonexistent/*/bin/psql"
	_, err := Writer(t.TempDir())
	g.Expect(err).To(MatchError(ContainSubstring("busybox-static")))
	_, err = App(t.TempDir())
	g.Expect(err).To(MatchError(ContainSubstring("postgresql-client")))
	_, err = Proxy(t.TempDir(), "/nonexistent/cloud-sql-proxy")
	g.Expect(err).To(MatchError(ContainSubstring("make cloud-sql-proxy")))
	// A dynamically linked busybox (Debian's busybox, not busybox-static) would
	// not run in an image without libc.
	BusyboxPath = "/bin/ls"
	_, err = Writer(t.TempDir())
	g.Expect(err).To(MatchError(And(ContainSubstring("dynamically linked"), ContainSubstring("busybox-static"))))
}
