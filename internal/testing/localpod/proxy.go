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
	"context"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

const (
	errStartProxy    = "cannot start the Cloud SQL Auth Proxy %s"
	errInitContainer = "init container %s failed: %w: %s"
	errNoWriter      = "pod %s/%s has no %s* init container"
)

// proxyStartTimeout bounds how long the proxy may take to pass its startup probe.
const proxyStartTimeout = time.Minute

// Proxy is a running Cloud SQL Auth Proxy container.
type Proxy struct {
	// Args are the arguments it runs with, as the pod has them (local paths
	// aside) followed by what StartProxy added.
	Args   []string
	exited chan struct{}
	stop   func() error
}

// Stop stops the proxy with SIGTERM, as the kubelet does, and waits for it.
func (x *Proxy) Stop() error { return x.stop() }

// StartProxy starts the pod's injected Cloud SQL Auth Proxy container and waits
// for its startup probe. To the container's own arguments it adds only what a
// machine without Google Cloud needs (see proxyExtraArgs): endpoint as
// --sqladmin-api-endpoint when the container has none (the injector gives it the
// endpoint of the instance's configuration), and --token when the container has
// no --credentials-file (which then authenticates for real, against the
// token_uri of the key). Its output goes to out.
func (p *Pod) StartProxy(ctx context.Context, endpoint string, out io.Writer) (*Proxy, error) {
	c, err := p.Container(podinject.ProxyContainerName)
	if err != nil {
		return nil, err
	}
	extra := proxyExtraArgs(c.Args, endpoint)
	cmd, err := p.Command(context.WithoutCancel(ctx), podinject.ProxyContainerName, extra...)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, errors.Wrapf(err, errStartProxy, cmd.Path)
	}
	x := &Proxy{Args: cmd.Args[1:], exited: make(chan struct{})}
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(x.exited) }()
	x.stop = func() error {
		select {
		case <-x.exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-x.exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-x.exited
			}
		}
		return waitErr
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

// WritePasswordFiles runs the injector's password-file writers (the init
// containers named podinject.WriterContainerPrefix + uid), in the pod's order.
// Their followers, which never end, are not run.
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
