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
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/logtail"
)

const (
	errOutsideNamespace    = "nodetest.Start runs only inside the node's namespace: call nodetest.Main from TestMain"
	errImportImage         = "cannot import image %s into containerd: %w: %s"
	errNoKubelet           = "no kubelet beside kube-apiserver in KUBEBUILDER_ASSETS (run make control-plane)"
	errNoControllerManager = "no kube-controller-manager beside kube-apiserver in KUBEBUILDER_ASSETS (run make control-plane)"
	errNodeNotReady        = "not Ready"
	errStartProcess        = "cannot start %s"
	errProcessExited       = "%s exited while waiting for %s:\n%s"
	errWaitTimeout         = "timed out waiting for %s (%v):\n%s"
)

// cniBinDir is where Debian's containernetworking-plugins installs the plugins.
const cniBinDir = "/usr/lib/cni"

const startTimeout = 2 * time.Minute

// Options say what a node starts with.
type Options struct {
	// SandboxImage is containerd's sandbox_image, the pause image every pod's
	// sandbox runs; it must be among Images, since nothing can be pulled.
	SandboxImage string
	// Images are image tarballs (docker save format) to import into
	// containerd before the kubelet starts.
	Images []string
	// ControlPlane are further options of the control plane.
	ControlPlane []controlplane.Option
	// JobController runs kube-controller-manager with its Job controller
	// alone, so that a Job makes its pod and completes when the pod
	// succeeds, as users run injected workloads to their end.
	JobController bool
}

// A Node is a one-node cluster in the node's network namespace: kube-apiserver
// and etcd (through package controlplane, with the API server told to reach the
// kubelet at its InternalIP), containerd and a kubelet built from
// k8s.io/kubernetes. There is no scheduler (pods set spec.nodeName to
// NodeName), no controller manager but the Job controller when asked
// (Options.JobController: no Deployment makes pods, no service account token
// is minted: pods set automountServiceAccountToken false), no kube-proxy and
// no DNS. Start it only in a test binary that Main runs.
type Node struct {
	// Env is the control plane; its client is an administrator's.
	Env *controlplane.Env
	// Dir is the node's work directory; logs are in it.
	Dir string

	sock  string
	procs []*process
}

type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// Start starts a node. The kubelet comes from KUBEBUILDER_ASSETS, beside
// kube-apiserver (make control-plane builds both).
func Start(o Options) (n *Node, err error) {
	if !Inside() {
		return nil, errors.New(errOutsideNamespace)
	}
	n = &Node{Dir: filepath.Join(os.Getenv(envWorkDir), "node")}
	defer func() {
		if err != nil {
			_ = n.Stop()
		}
	}()
	for _, d := range []string{"containerd", "cni/net.d", "kubelet/pki"} {
		if err := os.MkdirAll(filepath.Join(n.Dir, d), 0o700); err != nil {
			return n, err
		}
	}
	n.Env, err = controlplane.Start(append([]controlplane.Option{
		controlplane.WithAPIServerFlag("kubelet-preferred-address-types", "InternalIP"),
	}, o.ControlPlane...)...)
	if err != nil {
		return n, err
	}
	if err := n.startContainerd(o); err != nil {
		return n, err
	}
	if err := n.startKubelet(); err != nil {
		return n, err
	}
	if o.JobController {
		if err := n.startJobController(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// startJobController runs kube-controller-manager, from KUBEBUILDER_ASSETS,
// with the Job controller only, as the administrator, serving nothing (no
// port to pick or to secure). Nothing tells when its controller has started:
// a test waits for its Job anyway.
func (n *Node) startJobController() error {
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		return errors.Wrap(err, errNoControllerManager)
	}
	kubeconfig := filepath.Join(n.Dir, "kube-controller-manager.kubeconfig")
	if err := os.WriteFile(kubeconfig, n.Env.KubeConfig(), 0o600); err != nil {
		return err
	}
	return n.run("kube-controller-manager", bin, "--kubeconfig", kubeconfig, "--controllers", "job-controller",
		"--leader-elect=false", "--secure-port", "0", "--v", "2")
}

func (n *Node) startContainerd(o Options) error {
	n.sock = filepath.Join(n.Dir, "containerd", "containerd.sock")
	cfg := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  # The machine withholds CAP_SYS_RESOURCE: without this every sandbox fails
  # with "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[5]q
    conf_dir = %[6]q
`, filepath.Join(n.Dir, "containerd", "root"), filepath.Join(n.Dir, "containerd", "state"), n.sock, o.SandboxImage,
		cniBinDir, filepath.Join(n.Dir, "cni", "net.d"))
	cni := fmt.Sprintf(`{"cniVersion":"1.0.0","name":"cloudsql-node-e2e","plugins":[
  {"type":"bridge","bridge":"cni0","isGateway":true,"ipMasq":false,
   "ipam":{"type":"host-local","dataDir":%q,"ranges":[[{"subnet":%q}]],"routes":[{"dst":"0.0.0.0/0"}]}},
  {"type":"loopback"}]}
`, filepath.Join(n.Dir, "cni", "ipam"), PodSubnet)
	if err := os.WriteFile(filepath.Join(n.Dir, "containerd", "config.toml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.Dir, "cni", "net.d", "10-bridge.conflist"), []byte(cni), 0o600); err != nil {
		return err
	}
	if err := n.run("containerd", "containerd", "--config", filepath.Join(n.Dir, "containerd", "config.toml")); err != nil {
		return err
	}
	if err := n.waitFor("containerd to serve "+n.sock, func() error {
		return exec.Command("ctr", "--address", n.sock, "version").Run()
	}); err != nil {
		return err
	}
	for _, img := range o.Images {
		if out, err := exec.Command("ctr", "--address", n.sock, "-n", "k8s.io", "images", "import", img).CombinedOutput(); err != nil {
			return errors.Errorf(errImportImage, img, err, out)
		}
	}
	return nil
}

func (n *Node) startKubelet() error {
	bin := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubelet")
	if _, err := os.Stat(bin); err != nil {
		return errors.Wrap(err, errNoKubelet)
	}
	kubeconfig := filepath.Join(n.Dir, "kubelet", "kubeconfig")
	if err := os.WriteFile(kubeconfig, n.Env.KubeConfig(), 0o600); err != nil {
		return err
	}
	// Settings without which the kubelet fails on this kind of machine: a
	// cgroup v1 host, swap, cgroupfs, no CAP_SYS_RESOURCE; the rest keeps it
	// from evicting on a full disk and from needing what is not there
	// (per-QoS cgroups, webhook authentication, a DNS server).
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
address: %[1]s
readOnlyPort: 0
healthzPort: 0
containerRuntimeEndpoint: unix://%[2]s
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
localStorageCapacityIsolation: false
resolvConf: ""
podLogsDir: %[3]q
`, NodeIP, n.sock, filepath.Join(n.Dir, "kubelet", "pods-logs"))
	cfgPath := filepath.Join(n.Dir, "kubelet", "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	if err := n.run("kubelet", bin, "--config", cfgPath, "--kubeconfig", kubeconfig,
		"--root-dir", filepath.Join(n.Dir, "kubelet", "root"), "--cert-dir", filepath.Join(n.Dir, "kubelet", "pki"),
		"--node-ip", NodeIP, "--hostname-override", NodeName, "--v", "2"); err != nil {
		return err
	}
	return n.waitFor("node "+NodeName+" to be Ready", func() error {
		node := &corev1.Node{}
		if err := n.Env.Client.Get(context.Background(), client.ObjectKey{Name: NodeName}, node); err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errors.New(errNodeNotReady)
	})
}

// run starts a long-running process with its output in a log file of Dir.
func (n *Node) run(name, bin string, args ...string) error {
	log := filepath.Join(n.Dir, name+".log")
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group: a signal to the test does not reach it first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return errors.Wrapf(err, errStartProcess, name)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	n.procs = append(n.procs, p)
	return nil
}

// waitFor polls ready until it succeeds, a process of the node exits, or
// startTimeout passes; the error then holds the end of the process logs.
func (n *Node) waitFor(what string, ready func() error) error {
	deadline := time.Now().Add(startTimeout)
	var last error
	for time.Now().Before(deadline) {
		if last = ready(); last == nil {
			return nil
		}
		for _, p := range n.procs {
			select {
			case <-p.done:
				return errors.Errorf(errProcessExited, p.name, what, logtail.Tail(p.log, 30))
			default:
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return errors.Errorf(errWaitTimeout, what, last, n.Logs(30))
}

// Logs is the end of each process's log, for a failing test to print.
func (n *Node) Logs(lines int) string {
	var b strings.Builder
	for _, p := range n.procs {
		fmt.Fprintf(&b, "--- %s (%s)\n%s\n", p.name, p.log, logtail.Tail(p.log, lines))
	}
	return b.String()
}

// Stop stops the kubelet, containerd and the control plane. What they leave
// (containers, mounts, cgroups) Main removes after the tests.
func (n *Node) Stop() error {
	for i := len(n.procs) - 1; i >= 0; i-- {
		p := n.procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	n.procs = nil
	if n.Env != nil {
		return n.Env.Stop()
	}
	return nil
}
