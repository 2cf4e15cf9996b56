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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"

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

// shells run a script as the injected containers' /bin/sh may: this
// machine's, and busybox's (the Alpine image's) when there is one.
func shells(t *testing.T) map[string][]string {
	sh := map[string][]string{"sh": {"/bin/sh"}}
	if bb, err := exec.LookPath("busybox"); err == nil {
		sh["busybox"] = []string{bb, "sh"}
	} else {
		t.Log("no busybox here: the follower's script runs in /bin/sh alone")
	}
	return sh
}

// The follower's script, in /bin/sh as the followers run it: it writes the
// file as the writer does, rewrites it when the secret changes (the kubelet
// swaps the mounted file for a new one), leaves no file half written or
// beside it, and ends at once on SIGTERM.
func TestFollowScript(t *testing.T) {
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) { testFollowScript(t, sh) })
	}
}

func testFollowScript(t *testing.T, sh []string) {
	g := NewWithT(t)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "pgpass-secret"), filepath.Join(dir, "pgpass-1000")
	secret := func(password string) {
		// As the kubelet updates a secret volume: a new file, renamed over.
		tmp := src + ".tmp"
		g.Expect(os.WriteFile(tmp, []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", cloudsql.RootUser, password)), 0o444)).To(Succeed())
		g.Expect(os.Rename(tmp, src)).To(Succeed())
	}
	file := func() string {
		b, _ := os.ReadFile(dst)
		return string(b)
	}
	secret("first")
	cmd, done, out := startFollower(t, sh, src, dst, "1")

	g.Eventually(file).WithTimeout(5*time.Second).WithPolling(50*time.Millisecond).Should(Equal("127.0.0.1:23456:*:postgres:first\n"), func() string { return output(out) })
	fi, err := os.Stat(dst)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))

	for _, pw := range []string{"second", `third:with\escapes`} {
		secret(pw)
		want := "127.0.0.1:23456:*:postgres:" + strings.NewReplacer(`\`, `\\`, ":", `\:`).Replace(pw) + "\n"
		// Every read in between sees the old file or the new one, whole.
		g.Eventually(func(g Gomega) {
			got := file()
			g.Expect(got).To(HaveSuffix("\n"), "a file half written")
			g.Expect(got).To(Equal(want))
		}).WithTimeout(5*time.Second).WithPolling(10*time.Millisecond).Should(Succeed(), func() string { return output(out) })
		fi, err := os.Stat(dst)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	}
	entries, err := os.ReadDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	g.Expect(names).To(ConsistOf("pgpass-secret", "pgpass-1000"), "nothing left beside the file")

	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	g.Eventually(done).WithTimeout(time.Second).Should(Receive(BeNil()), func() string { return "SIGTERM ends the follower at once, with status 0: " + output(out) })
}

// startFollower runs the follower's script in sh, from src to dst, reading
// every period seconds, with its output in a file: not a pipe, which the
// sleep that SIGTERM leaves behind would hold open, and Wait with it (in a
// container, the shell's end as PID 1 ends that sleep too). done receives
// what Wait returns.
func startFollower(t *testing.T, sh []string, src, dst, period string) (*exec.Cmd, chan error, *os.File) {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh[0], append(sh[1:], "-c", followScript, "pgpass-follower", src, dst, ProxyAddress, "23456", period)...)
	cmd.Stdout, cmd.Stderr = out, out
	// A group of its own, so that cleanup can end the shell's sleep too: a
	// SIGTERM or a kill of the shell alone leaves it for up to an hour.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() { done <- cmd.Wait(); close(exited) }()
	t.Cleanup(func() { endGroup(t, cmd.Process.Pid, exited) })
	return cmd, done, out
}

// endGroup kills every process of the group pgid (a shell started with
// Setpgid, and whatever it started), waits for the shell (exited closes when
// Wait returns), and then until no process of the group is left.
func endGroup(t *testing.T, pgid int, exited <-chan struct{}) {
	t.Helper()
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Errorf("the follower's shell (pid %d) did not end within 5 s of SIGKILL", pgid)
	}
	// The sleep is not this process's child: it is gone when the group is.
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(-pgid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("process group %d still has processes 5 s after SIGKILL", pgid)
			return
		}
	}
}

// output is what a script printed to f.
func output(f *os.File) string {
	b, _ := os.ReadFile(f.Name())
	return string(b)
}

// A follower waiting an hour between reads still ends at once on SIGTERM:
// the wait is what the trap interrupts, not a sleep the shell waits out.
func TestFollowScriptEndsDuringItsWait(t *testing.T) {
	for name, sh := range shells(t) {
		t.Run(name, func(t *testing.T) { testFollowScriptEndsDuringItsWait(t, sh) })
	}
}

func testFollowScriptEndsDuringItsWait(t *testing.T, sh []string) {
	g := NewWithT(t)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "pgpass-secret"), filepath.Join(dir, "pgpass-0")
	g.Expect(os.WriteFile(src, []byte("127.0.0.1:*:*:postgres:pw\n"), 0o444)).To(Succeed())
	cmd, done, _ := startFollower(t, sh, src, dst, "3600")
	g.Eventually(func() error { _, err := os.Stat(dst); return err }).WithTimeout(5 * time.Second).Should(Succeed())
	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	g.Eventually(done).WithTimeout(2 * time.Second).Should(Receive(BeNil()))
}
