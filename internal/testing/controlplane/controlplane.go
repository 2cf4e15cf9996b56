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

// Package controlplane starts a real local control plane (kube-apiserver and etcd,
// through controller-runtime's envtest) with this provider's CRDs installed, for the
// tests that involve Kubernetes and for `make demo`. The binaries come from KUBEBUILDER_ASSETS, which `make test`
// points at the kube-apiserver, etcd and kubectl it builds from Go modules (see hack/).
package controlplane

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/go-logr/logr"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/travelaudience/cloudsql-postgres-operator/apis"
)

const (
	errNoAssets        = "KUBEBUILDER_ASSETS is not set: run the tests with `make test`, which builds kube-apiserver and etcd from Go modules and sets it, or point it at a directory holding both binaries"
	errStart           = "cannot start kube-apiserver and etcd from KUBEBUILDER_ASSETS=%s"
	errNewClient       = "cannot create a client for the test API server"
	errProvisionUser   = "cannot provision a user for kubectl"
	errWriteKubeconfig = "cannot write kubectl's kubeconfig"
)

// Env is a running control plane with a client for it.
type Env struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is a controller-runtime client whose scheme knows Kubernetes' built-in
	// kinds and this provider's API.
	Client client.Client
	// Scheme is the scheme of Client.
	Scheme *kruntime.Scheme

	env *envtest.Environment
}

// An Option changes how the control plane starts.
type Option func(*options)

type options struct {
	env *envtest.Environment
	log logr.Logger
}

// WithCRDDirectories installs the CRDs found in more directories (for example
// Crossplane's own), in addition to this provider's package/crds.
func WithCRDDirectories(dirs ...string) Option {
	return func(o *options) {
		o.env.CRDDirectoryPaths = append(o.env.CRDDirectoryPaths, dirs...)
	}
}

// WithCRDsFrom installs the CRDs found in dirs instead of package/crds, for
// tests of what a built package installs.
func WithCRDsFrom(dirs ...string) Option {
	return func(o *options) {
		o.env.CRDDirectoryPaths = append([]string{}, dirs...)
	}
}

// WithWebhooks registers admission webhooks with the API server; envtest serves
// them on a local port with a generated certificate (see envtest.WebhookInstallOptions).
func WithWebhooks(o envtest.WebhookInstallOptions) Option {
	return func(opts *options) { opts.env.WebhookInstallOptions = o }
}

// WithAPIServerFlag adds a flag to kube-apiserver's command line, for control
// planes that serve more than envtest's (a real kubelet, for example).
func WithAPIServerFlag(name, value string) Option {
	return func(o *options) { o.env.ControlPlane.GetAPIServer().Configure().Append(name, value) }
}

// WithLogger is where controller-runtime's own messages (envtest's, and those
// of managers started in the same process) go; by default, nowhere.
func WithLogger(l logr.Logger) Option {
	return func(o *options) { o.log = l }
}

// Need skips t under -short (make unit), where a package's TestMain starts no
// control plane: t needs one, which `make test` starts.
func Need(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a control plane (kube-apiserver and etcd): make test runs it, make unit does not")
	}
}

// RepoRoot is the root directory of this repository.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Start starts kube-apiserver and etcd and installs the CRDs. Call Stop when done.
func Start(o ...Option) (*Env, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, errors.New(errNoAssets)
	}
	opts := &options{
		env: &envtest.Environment{
			CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "package", "crds")},
			ErrorIfCRDPathMissing: true,
		},
		log: logr.Discard(),
	}
	for _, fn := range o {
		fn(opts)
	}
	// Without a logger, controller-runtime prints a goroutine dump the first
	// time anything logs after 30 s, which envtest does as it starts.
	ctrllog.SetLogger(opts.log)
	e := opts.env
	cfg, err := e.Start()
	if err != nil {
		return nil, errors.Wrapf(err, errStart, os.Getenv("KUBEBUILDER_ASSETS"))
	}
	s := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		_ = e.Stop()
		return nil, err
	}
	if err := apis.AddToScheme(s); err != nil {
		_ = e.Stop()
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = e.Stop()
		return nil, errors.Wrap(err, errNewClient)
	}
	return &Env{Config: cfg, Client: c, Scheme: s, env: e}, nil
}

// WebhookServing is where the webhooks registered with WithWebhooks must be served
// for the API server to reach them: the host and port envtest chose, and the
// directory holding tls.crt and tls.key, a certificate that the API server trusts.
func (e *Env) WebhookServing() (host string, port int, certDir string) {
	o := e.env.WebhookInstallOptions
	return o.LocalServingHost, o.LocalServingPort, o.LocalServingCertDir
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.env.Stop() }

// KubectlArgs returns the path of kubectl and the arguments that make it talk to
// this control plane as an administrator (a user of the system:masters group,
// provisioned for the call, with its kubeconfig in the control plane's
// temporary directory), for tests that check what users see (`kubectl explain`).
func (e *Env) KubectlArgs() (string, []string, error) {
	u, err := e.env.AddUser(envtest.User{Name: "kubectl", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", nil, errors.Wrap(err, errProvisionUser)
	}
	k, err := u.Kubectl()
	if err != nil {
		return "", nil, errors.Wrap(err, errWriteKubeconfig)
	}
	return k.Path, k.Opts, nil
}

// KubeConfig is a kubeconfig file for an administrator of this control plane.
func (e *Env) KubeConfig() []byte { return e.env.KubeConfig }
