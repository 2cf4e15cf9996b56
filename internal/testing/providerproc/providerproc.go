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

// Package providerproc runs the provider binary as a process of its own, as a
// pod runs it, against a test control plane: for the end-to-end tests, which
// must see what the shipped command does (flags, configuration file, both
// webhooks, a restart), not what a test wires up in-process.
package providerproc

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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

const (
	errBuildProvider = "cannot build cmd/provider: %w: %s"
	errListSources   = "cannot list the sources of cmd/provider: %w: %s"
)

// Build builds cmd/provider into dir and returns the binary's path.
//
// It also opens every source file the binary is built from. go test caches a
// test's result by the files the test binary opens, and the build runs in a
// go command of its own: without this, a test that runs the provider would
// pass from the cache after the provider's code changed.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "provider")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/provider")
	cmd.Dir = controlplane.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errors.Errorf(errBuildProvider, err, out)
	}
	return bin, consultSources(cmd.Dir)
}

// consultSources opens the files of the module's own packages that
// cmd/provider is built from (Go files and embedded files), and go.mod and
// go.sum, which pin the rest.
func consultSources(root string) error {
	list := exec.Command("go", "list", "-deps", "-f",
		`{{if and .Module .Module.Main}}{{range .GoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{end}}`,
		"./cmd/provider")
	list.Dir = root
	var stderr strings.Builder
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		return errors.Errorf(errListSources, err, stderr.String())
	}
	files := append(strings.Fields(string(out)), filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum"))
	for _, name := range files {
		f, err := os.Open(name) //nolint:gosec // the module's own files, as go list names them
		if err != nil {
			return err
		}
		_ = f.Close()
	}
	return nil
}

// A Process is a running provider.
type Process struct {
	cmd  *exec.Cmd
	logf *os.File
	// Log is the file its output goes to.
	Log string
	// Kubeconfig is the administrator kubeconfig it runs with, for kubectl.
	Kubeconfig string
}

// stopTimeout is how long Stop waits after SIGTERM before it kills.
const stopTimeout = 30 * time.Second

// runs numbers the processes of a test binary, so that each has files of its own.
var runs int

// An Option changes how Start runs the provider.
type Option func(*start)

type start struct {
	port int
	args []string
}

// WithWebhookPort serves the webhooks on port instead of where env's API
// server calls them, for several replicas behind one address.
func WithWebhookPort(port int) Option { return func(s *start) { s.port = port } }

// WithArgs adds command-line arguments (--leader-election, say).
func WithArgs(args ...string) Option { return func(s *start) { s.args = append(s.args, args...) } }

// Start runs bin with a configuration file holding settings (TOML) and the
// [webhook] section that serves both webhooks where env's API server calls
// them, and env's administrator kubeconfig. Its files go into dir.
func Start(bin, dir string, env *controlplane.Env, settings string, o ...Option) (*Process, error) {
	_, port, certDir := env.WebhookServing()
	st := start{port: port}
	for _, fn := range o {
		fn(&st)
	}
	port = st.port
	runs++
	cfg := filepath.Join(dir, fmt.Sprintf("config-%d.toml", runs))
	content := fmt.Sprintf("%s\n[webhook]\nport = %d\ncert_dir = %q\n", settings, port, certDir)
	if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
		return nil, err
	}
	p := &Process{Log: filepath.Join(dir, fmt.Sprintf("provider-%d.log", runs)), Kubeconfig: filepath.Join(dir, "kubeconfig")}
	if err := os.WriteFile(p.Kubeconfig, env.KubeConfig(), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(p.Log)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(bin, append([]string{"--config", cfg, "--kubeconfig", p.Kubeconfig,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, st.args...)...)
	p.cmd.Stdout, p.cmd.Stderr, p.logf = logf, logf, logf
	if err := p.cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, err
	}
	return p, nil
}

// Stop stops the provider as the kubelet would, with SIGTERM, waits for it,
// and kills it when it has not stopped within stopTimeout.
func (p *Process) Stop() {
	if p == nil || p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-done
	}
	_ = p.logf.Close()
	p.cmd = nil
}

// Kill kills the provider with SIGKILL, as a node failure or the OOM killer
// would, and waits for it.
func (p *Process) Kill() {
	if p == nil || p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	_ = p.logf.Close()
	p.cmd = nil
}

// CreateWhenAdmitted creates o, retrying for up to a minute while the
// provider's webhooks are still starting (the API server then cannot call
// them). Any other error is returned at once.
func CreateWhenAdmitted(ctx context.Context, c client.Client, o client.Object) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := c.Create(ctx, o)
		if err == nil || time.Now().After(deadline) || !strings.Contains(err.Error(), "failed calling webhook") {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
