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

package nodetest

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	// errCommand is a command line, its error and its output.
	errCommand    = "%s: %w: %s"
	errUnmount    = "unmount %s"
	errDeleteLink = "ip link del %s: %w: %s"
	errLeftovers  = "still there: %s"
)

// The node's network. Everything the tests start runs in a network namespace
// of its own, where the node has a non-loopback address (the kubelet refuses
// a loopback node IP) on one end of a veth pair whose other end stays on the
// host; pods sit on a CNI bridge behind it. No traffic leaves the namespace
// but to the host end of the pair.
const (
	netnsName = "cloudsql-node-e2e"
	hostVeth  = "cpnode0"
	nodeVeth  = "cpnode1"
	hostAddr  = "10.251.0.1"
	// NodeIP is the node's address: where the API server reaches the kubelet,
	// and where pods reach what the test serves (the emulator).
	NodeIP = "10.251.0.2"
	// PodSubnet is where the CNI bridge gives pods their addresses.
	PodSubnet = "10.252.0.0/24"
	// NodeName is the name the kubelet registers; pods name it in
	// spec.nodeName, since no scheduler runs.
	NodeName = "node-e2e"
)

// DataPlane is a range that the node's namespace answers on as its own
// (a local route), for servers that pods must reach at addresses of their own,
// such as the Cloud SQL emulator's instances (emulator.WithDataPlaneAddresses).
var DataPlane = netip.MustParsePrefix("10.253.0.0/24")

// Paths the kubelet, containerd and the CNI plugins use whatever they are told,
// outside the work directory; teardown removes what the run created of them.
var fixedPaths = []string{
	"/var/lib/kubelet", "/var/log/containers", "/var/log/pods",
	"/run/containerd", "/var/lib/cni", "/run/netns",
}

// Environment of the test binary that runs inside the namespace.
const (
	envInside  = "CLOUDSQL_NODETEST_INSIDE"
	envWorkDir = "CLOUDSQL_NODETEST_WORKDIR"
)

// Inside reports whether this process is the test binary that Main re-ran in
// the node's network namespace.
func Inside() bool { return os.Getenv(envInside) != "" }

// MachineUnsupported says why this machine cannot run a node whatever is
// installed, or "" when it can: the harness needs root (network namespaces,
// mounts, cgroups), writable cgroups, and the kubelet's and containerd's
// paths free (inUse).
func MachineUnsupported() string {
	if os.Geteuid() != 0 {
		return "it needs root (network namespaces, mounts and cgroups)"
	}
	probe := filepath.Join(cgroupRoot(), "cloudsql-node-e2e-probe")
	if _, err := os.Stat(filepath.Join(cgroupRoot(), "cgroup.controllers")); err != nil {
		probe = filepath.Join(cgroupRoot(), "memory", "cloudsql-node-e2e-probe") // cgroup v1
	}
	if err := os.Mkdir(probe, 0o755); err != nil {
		return "cgroups are not writable here (" + err.Error() + ")"
	}
	_ = os.Remove(probe)
	return inUse()
}

// Unsupported says why this machine cannot run a node now, or "" when it can:
// MachineUnsupported, and containerd, runc, the CNI plugins and nsenter
// installed.
func Unsupported() string {
	if why := MachineUnsupported(); why != "" {
		return why
	}
	for _, bin := range []string{"containerd", "ctr", "runc", "nsenter", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " is not installed (make node-deps installs containerd, runc, containernetworking-plugins and busybox-static with apt)"
		}
	}
	if _, err := os.Stat(filepath.Join(cniBinDir, "bridge")); err != nil {
		return "the CNI plugins are not installed in " + cniBinDir + " (make node-deps installs containernetworking-plugins)"
	}
	return ""
}

// Main runs the tests of m in the node's network namespace and returns their
// exit code. Called from TestMain, it creates the namespace, runs the test
// binary again inside it with nsenter (which, unlike ip netns exec, leaves the
// cgroup mounts as they are), and tears everything down afterwards, whatever
// the tests did: processes, mounts, cgroups, the namespace and the paths the
// kubelet, containerd and CNI insist on. Inside the namespace it just runs m.
func Main(m *testing.M) int {
	if Inside() {
		return m.Run()
	}
	if why := Unsupported(); why != "" {
		fmt.Fprintln(os.Stderr, "the node tests cannot run on this machine: "+why)
		return 1
	}
	// One run at a time: a second run's teardown would take the first's node.
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot open the node tests' lock:", err)
		return 1
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(os.Stderr, "the node tests cannot run: another run holds %s\n", lockPath)
		return 1
	}
	if why := inUse(); why != "" {
		fmt.Fprintln(os.Stderr, "the node tests cannot run: "+why)
		return 1
	}
	work, err := os.MkdirTemp("", "cloudsql-node-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	before := snapshot()
	code := 1
	if err := createNamespace(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot create the node's network namespace:", err)
	} else {
		code = runInside(work)
	}
	if err := teardown(work, before); err != nil {
		fmt.Fprintln(os.Stderr, "teardown left something behind:", err)
		code = 1
	}
	return code
}

// lockPath is the lock a run holds from start to teardown.
const lockPath = "/run/cloudsql-node-e2e.lock"

// inUse says why the machine's kubelet, container or network paths are not
// free for a run, or "" when they are: teardown kills, unmounts and removes
// what it finds there, so nothing else may be using them. A run that was
// killed before its teardown leaves them taken too; inUse then says what to
// remove.
func inUse() string {
	if _, err := os.Stat(netnsPath()); err == nil {
		return fmt.Sprintf("namespace %s exists: a run was killed before its teardown (remove it with: ip netns pids %[1]s | xargs -r kill -9; ip netns del %[1]s)", netnsName)
	}
	for _, p := range []string{"/var/lib/kubelet", "/run/containerd"} {
		if _, err := os.Stat(p); err == nil {
			return p + " exists: a kubelet or containerd of this machine (Docker's included), or a run killed before its teardown, uses it; the node tests start their own and remove it afterwards, so they run only where it is free"
		}
	}
	for _, prefix := range []string{hostAddr + "/24", PodSubnet, DataPlane.String()} {
		// A route of the machine's (a VPN's, say) that the node's addresses
		// would shadow.
		if out, err := exec.Command("ip", "route", "show", "match", prefix).Output(); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if line != "" && !strings.HasPrefix(line, "default ") {
					return fmt.Sprintf("this machine routes %s already (%s); the node's network would shadow it", prefix, line)
				}
			}
		}
	}
	if cgs := containerCgroups(); len(cgs) > 0 {
		return fmt.Sprintf("containers' cgroups exist (%s): another containerd or kubelet runs containers here", cgs[len(cgs)-1])
	}
	return ""
}

// runInside runs this test binary, with its arguments, in the namespace.
func runInside(work string) int {
	args := append([]string{"--net=" + netnsPath(), "--", os.Args[0]}, os.Args[1:]...)
	// Temporary files too (envtest's, t.TempDir's, PostgreSQL's data) go into
	// the work directory, which teardown removes even when the tests were killed.
	// Like /tmp, it is open to every user (and sticky): PostgreSQL, for one,
	// does not run as root and keeps its data there.
	tmp := filepath.Join(work, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for dir, mode := range map[string]os.FileMode{work: 0o755, tmp: 0o777 | os.ModeSticky} {
		if err := os.Chmod(dir, mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	cmd := exec.Command("nsenter", args...)
	cmd.Env = append(os.Environ(), envInside+"=1", envWorkDir+"="+work, "TMPDIR="+tmp)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	// An interrupt (Ctrl-C) goes to the tests, and this process stays to tear
	// down once they have stopped.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot run the tests in the node's namespace:", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
wait:
	for {
		select {
		case sig := <-sigs:
			_ = cmd.Process.Signal(sig)
		case err = <-done:
			break wait
		}
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "the tests in the node's namespace ended:", err)
		return 1
	}
}

func netnsPath() string { return filepath.Join("/run/netns", netnsName) }

// createNamespace creates the namespace, the veth pair, the node's address
// with a default route (kube-apiserver wants one), the local route of
// DataPlane and forwarding for the pods' bridge.
func createNamespace() error {
	in := []string{"nsenter", "--net=" + netnsPath()}
	for _, c := range [][]string{
		{"ip", "netns", "add", netnsName},
		{"ip", "link", "add", hostVeth, "type", "veth", "peer", "name", nodeVeth},
		{"ip", "link", "set", nodeVeth, "netns", netnsName},
		{"ip", "addr", "add", hostAddr + "/24", "dev", hostVeth},
		{"ip", "link", "set", hostVeth, "up"},
		append(in, "ip", "link", "set", "lo", "up"),
		append(in, "ip", "addr", "add", NodeIP+"/24", "dev", nodeVeth),
		append(in, "ip", "link", "set", nodeVeth, "up"),
		append(in, "ip", "route", "add", "default", "via", hostAddr),
		append(in, "ip", "route", "add", "local", DataPlane.String(), "dev", "lo"),
		append(in, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"),
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return errors.Errorf(errCommand, strings.Join(c, " "), err, out)
		}
	}
	return nil
}

// state is what existed before the run, so that teardown removes only what the
// run made.
type state struct {
	paths  map[string]bool
	mounts map[string]bool
	netns  map[string]bool
}

func snapshot() state {
	s := state{paths: map[string]bool{}, mounts: map[string]bool{}, netns: map[string]bool{}}
	for _, p := range fixedPaths {
		if _, err := os.Stat(p); err == nil {
			s.paths[p] = true
		}
	}
	for _, m := range mountPoints() {
		s.mounts[m] = true
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		s.netns[e.Name()] = true
	}
	return s
}

// teardown kills what runs in the namespace and in the containers' cgroups,
// unmounts what the run mounted, removes the cgroups, the namespace (and with
// it the veth pair and the bridge) and the files the run created.
func teardown(work string, before state) error {
	var errs []error
	killAll()
	for _, m := range mountPoints() {
		if !before.mounts[m] && ours(m, work) {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, errors.Wrapf(err, errUnmount, m))
			}
		}
	}
	if err := removeCgroups(); err != nil {
		errs = append(errs, err)
	}
	if out, err := exec.Command("ip", "link", "del", hostVeth).CombinedOutput(); err != nil && !strings.Contains(string(out), "Cannot find device") {
		errs = append(errs, errors.Errorf(errDeleteLink, hostVeth, err, out))
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		// The pods' namespaces (cni-*, made by this run's containerd) and the node's.
		if !before.netns[e.Name()] && (strings.HasPrefix(e.Name(), "cni-") || e.Name() == netnsName) {
			_ = os.Remove(filepath.Join("/run/netns", e.Name()))
		}
	}
	for _, p := range fixedPaths {
		if !before.paths[p] {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := os.RemoveAll(work); err != nil {
		errs = append(errs, err)
	}
	if left := leftovers(work, before); len(left) > 0 {
		errs = append(errs, errors.Errorf(errLeftovers, strings.Join(left, ", ")))
	}
	return errors.Join(errs...)
}

// killAll kills the processes of the namespace (the control plane, containerd
// and its shims, the kubelet) and those of the containers, which live in
// namespaces of their own but in the cgroups containerd made, and waits until
// they are gone.
func killAll() {
	for range 50 {
		pids := append(netnsPids(), cgroupPids()...)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// netnsPids are the processes in the node's namespace.
func netnsPids() []int {
	out, err := exec.Command("ip", "netns", "pids", netnsName).Output()
	if err != nil {
		return nil
	}
	var pids []int
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var pid int
		if _, err := fmt.Sscan(sc.Text(), &pid); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// mountPoints lists the mount points of this mount namespace, deepest first.
func mountPoints() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			out = append(out, unescapeMount(fields[4]))
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ours reports whether a mount that appeared during the run is the run's: in
// its work directory, in the paths the kubelet and containerd insist on (free
// when the run began: see inUse), or a namespace of the node or its pods.
func ours(m, work string) bool {
	if m == "/run/netns" {
		return true
	}
	if dir, name := filepath.Split(m); dir == "/run/netns/" {
		return name == netnsName || strings.HasPrefix(name, "cni-")
	}
	var fixed []string
	for _, p := range fixedPaths {
		if p != "/run/netns" {
			fixed = append(fixed, p)
		}
	}
	return underAny(m, append(fixed, work))
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// leftovers lists what teardown should have removed and did not.
func leftovers(work string, before state) []string {
	var left []string
	if _, err := os.Stat(netnsPath()); err == nil {
		left = append(left, "namespace "+netnsName)
	}
	if pids := append(netnsPids(), cgroupPids()...); len(pids) > 0 {
		left = append(left, fmt.Sprintf("processes %v", pids))
	}
	for _, m := range mountPoints() {
		if !before.mounts[m] && ours(m, work) {
			left = append(left, "mount "+m)
		}
	}
	for _, d := range containerCgroups() {
		left = append(left, "cgroup "+d)
	}
	return left
}
