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

package localpod

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

const (
	errStart         = "cannot start container %s (%s)"
	errInitContainer = "init container %s failed: %w: %s"
	errNoWriter      = "pod %s/%s has no %s* init container"
)

// proxyStartTimeout bounds how long the proxy may take to pass its startup probe.
const proxyStartTimeout = time.Minute

// Process is a container of the pod running as a local process: the Cloud
// SQL Auth Proxy, or a password-file follower.
type Process struct {
	// Args are the arguments it runs with, as the pod has them (local paths
	// aside) followed by what the caller added.
	Args   []string
	exited chan struct{}
	stop   func() error
	// pgid is its process group, which holds whatever it started.
	pgid int
}

// Stop stops the process with SIGTERM, as the kubelet does, and waits for it
// (at most 15 s, then it is killed); then it kills what is left of its
// process group, as the end of a container's PID namespace would.
func (x *Process) Stop() error { return x.stop() }

// Running reports whether the process has not exited.
func (x *Process) Running() bool {
	select {
	case <-x.exited:
		return false
	default:
		return true
	}
}

// Start starts container name, with extraArgs after its own, in the
// background; its output goes to out.
func (p *Pod) Start(ctx context.Context, name string, out io.Writer, extraArgs ...string) (*Process, error) {
	cmd, err := p.Command(context.WithoutCancel(ctx), name, extraArgs...)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	// A group of its own: a follower's shell ends on SIGTERM but leaves its
	// sleep behind, which would outlive the test by up to its period.
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, errors.Wrapf(err, errStart, name, cmd.Path)
	}
	x := &Process{Args: cmd.Args[1:], exited: make(chan struct{}), pgid: cmd.Process.Pid}
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(x.exited) }()
	x.stop = func() error {
		select {
		case <-x.exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			// Wait returns only once what the process left behind closes
			// the output pipe too: the process itself is gone when its pid
			// is (its group, which keeps the pid from reuse, may not be).
			for deadline := time.Now().Add(15 * time.Second); syscall.Kill(x.pgid, 0) == nil && time.Now().Before(deadline); {
				select {
				case <-x.exited:
				case <-time.After(10 * time.Millisecond):
				}
			}
			_ = syscall.Kill(-x.pgid, syscall.SIGKILL)
			<-x.exited
		}
		_ = syscall.Kill(-x.pgid, syscall.SIGKILL)
		return waitErr
	}
	return x, nil
}

// StartProxy starts the pod's injected Cloud SQL Auth Proxy container and waits
// for its startup probe. To the container's own arguments it adds only what a
// machine without Google Cloud needs (see proxyExtraArgs): endpoint as
// --sqladmin-api-endpoint when the container has none (the injector gives it the
// endpoint of the instance's configuration), and --token when the container has
// no --credentials-file (which then authenticates for real, against the
// token_uri of the key). Its output goes to out.
func (p *Pod) StartProxy(ctx context.Context, endpoint string, out io.Writer) (*Process, error) {
	c, err := p.Container(podinject.ProxyContainerName)
	if err != nil {
		return nil, err
	}
	x, err := p.Start(ctx, podinject.ProxyContainerName, out, proxyExtraArgs(c.Args, endpoint)...)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, proxyStartTimeout)
	defer cancel()
	if err := p.WaitStarted(sctx, podinject.ProxyContainerName, x.exited); err != nil {
		_ = x.Stop()
		return nil, err
	}
	return x, nil
}

// proxyExtraArgs are the arguments StartProxy adds to a proxy container's args.
// A flag the container has is never added again: the proxy would take the last
// one, so a second --sqladmin-api-endpoint would hide what the injector wrote.
func proxyExtraArgs(args []string, endpoint string) []string {
	hasEndpoint, hasKey := false, false
	for _, a := range args {
		// Both --flag=value and --flag value.
		hasEndpoint = hasEndpoint || a == podinject.ProxyEndpointFlag || strings.HasPrefix(a, podinject.ProxyEndpointFlag+"=")
		hasKey = hasKey || strings.HasPrefix(a, "--credentials-file") || strings.HasPrefix(a, "-c=")
	}
	var extra []string
	if !hasEndpoint {
		extra = append(extra, podinject.ProxyEndpointFlag+"="+endpoint)
	}
	if !hasKey {
		extra = append(extra, "--token=localpod-token")
	}
	return extra
}

// StartFollowers starts the injector's password-file followers (the
// containers named podinject.FollowerContainerPrefix + uid), which rewrite
// the password files when the secret volume changes (see SyncSecrets) until
// they are stopped; their output goes to out.
func (p *Pod) StartFollowers(ctx context.Context, out io.Writer) ([]*Process, error) {
	var started []*Process
	for _, cs := range [][]corev1.Container{p.pod.Spec.InitContainers, p.pod.Spec.Containers} {
		for _, c := range cs {
			if !strings.HasPrefix(c.Name, podinject.FollowerContainerPrefix) {
				continue
			}
			x, err := p.Start(ctx, c.Name, out)
			if err != nil {
				for _, s := range started {
					_ = s.Stop()
				}
				return nil, err
			}
			started = append(started, x)
		}
	}
	if len(started) == 0 {
		return nil, errors.Errorf(errNoWriter, p.pod.Namespace, p.pod.Name, podinject.FollowerContainerPrefix)
	}
	return started, nil
}

// WritePasswordFiles runs the injector's password-file writers (the init
// containers named podinject.WriterContainerPrefix + uid), in the pod's order.
// Their followers, which never end, are not run (see StartFollowers).
func (p *Pod) WritePasswordFiles(ctx context.Context) error {
	n := 0
	for _, name := range p.InitContainerNames() {
		if !strings.HasPrefix(name, podinject.WriterContainerPrefix) || strings.HasPrefix(name, podinject.FollowerContainerPrefix) {
			continue
		}
		if out, err := p.Run(ctx, name); err != nil {
			return errors.Errorf(errInitContainer, name, err, out)
		}
		n++
	}
	if n == 0 {
		return errors.Errorf(errNoWriter, p.pod.Namespace, p.pod.Name, podinject.WriterContainerPrefix)
	}
	return nil
}

// Output is what a started process writes (Start's out), safe to read while
// it still writes.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String is everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
