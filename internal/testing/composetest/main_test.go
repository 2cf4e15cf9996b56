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

package composetest

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	function "github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/proto/v1beta1"
	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/composepg"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
)

// Environment variables that `make test` sets.
const (
	envCLI  = "CROSSPLANE_CLI"
	envCRDs = "CROSSPLANE_CRDS"
)

const errNoCrossplane = "%s is not set: run the tests with make test, which builds the Crossplane CLI (hack/crank) and sets %s and %s"

// crossplaneImage names the Crossplane image whose built-in schemas
// `crossplane beta validate` would download; the tests put Crossplane's CRDs in its
// cache under that name instead.
const crossplaneImage = "xpkg.crossplane.io/crossplane/crossplane:v2.2.0"

// annotationTarget tells crossplane render's Development runtime where the function
// listens.
const annotationTarget = "render.crossplane.io/runtime-development-target"

var (
	cli     string // the Crossplane CLI
	crds    string // Crossplane's CRDs
	fnAddr  string // where the function is served
	fetcher *connectionDetailsFetcher
	env     *controlplane.Env
)

// example is the path of a file of examples/composition.
func example(name string) string {
	return repoPath("examples", "composition", name)
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// Every test here renders with the Crossplane CLI or applies to a control
		// plane: make test runs them, make unit does not.
		fmt.Println("composetest: skipped under -short (needs the Crossplane CLI and a control plane)")
		os.Exit(0)
	}
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	cli, crds = os.Getenv(envCLI), os.Getenv(envCRDs)
	for _, v := range []struct{ name, value string }{{envCLI, cli}, {envCRDs, crds}} {
		if v.value == "" {
			return 0, errors.Errorf(errNoCrossplane, v.name, envCLI, envCRDs)
		}
	}

	// The function runs in this process, as `go run ./cmd/function-cloudsql-postgres
	// --insecure` would serve it, on a port of its own.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	fnAddr = lis.Addr().String()
	srv := grpc.NewServer()
	fn := &connectionDetailsFetcher{fn: composepg.New(), secrets: map[string]map[string][]byte{}}
	fetcher = fn
	fnv1.RegisterFunctionRunnerServiceServer(srv, fn)
	v1beta1.RegisterFunctionRunnerServiceServer(srv, function.ServeBeta(fn))
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	if env, err = controlplane.Start(controlplane.WithCRDDirectories(crds)); err != nil {
		return 0, err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "cannot stop the test control plane:", err)
		}
	}()
	return m.Run(), nil
}

// connectionDetailsFetcher serves fn, giving each observed composed resource the
// data of its connection secret as connection details, as Crossplane does (it reads
// the secret that writeConnectionSecretToRef names, in the resource's namespace or,
// for a cluster-scoped resource, in the reference's) and crossplane render does not:
// render always sends none. The secrets are those a test published.
type connectionDetailsFetcher struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	fn fnv1.FunctionRunnerServiceServer
	mu sync.Mutex
	// secrets are the connection secrets' data by namespace/name.
	secrets map[string]map[string][]byte
}

// RunFunction implements fnv1.FunctionRunnerServiceServer.
func (f *connectionDetailsFetcher) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	f.mu.Lock()
	for _, r := range req.GetObserved().GetResources() {
		u := &unstructured.Unstructured{Object: r.GetResource().AsMap()}
		name, _, _ := unstructured.NestedString(u.Object, "spec", "writeConnectionSecretToRef", "name")
		ns := u.GetNamespace()
		if ns == "" {
			ns, _, _ = unstructured.NestedString(u.Object, "spec", "writeConnectionSecretToRef", "namespace")
		}
		if data, ok := f.secrets[ns+"/"+name]; ok {
			r.ConnectionDetails = data
		}
	}
	f.mu.Unlock()
	return f.fn.RunFunction(ctx, req)
}

// publishConnectionSecret makes data the content of the connection secret
// namespace/name for the renders of the test t.
func publishConnectionSecret(t *testing.T, namespace, name string, data map[string][]byte) {
	t.Helper()
	key := namespace + "/" + name
	fetcher.mu.Lock()
	fetcher.secrets[key] = data
	fetcher.mu.Unlock()
	t.Cleanup(func() {
		fetcher.mu.Lock()
		delete(fetcher.secrets, key)
		fetcher.mu.Unlock()
	})
}

// crossplane runs the Crossplane CLI and returns what it printed.
func crossplane(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// functionsFile is examples/composition/functions.yaml pointed at the function
// served by this process.
func functionsFile(t *testing.T) string {
	t.Helper()
	fns := readManifests(t, example("functions.yaml"))
	for _, f := range fns {
		a := f.GetAnnotations()
		a[annotationTarget] = fnAddr
		f.SetAnnotations(a)
	}
	return writeManifests(t, "functions.yaml", fns...)
}

// compositeFile is examples/composition/xr.yaml changed by fn.
func compositeFile(t *testing.T, fn func(xr *unstructured.Unstructured)) string {
	t.Helper()
	return exampleChanged(t, "xr.yaml", fn)
}

// exampleChanged is the one object of examples/composition/name changed by fn.
func exampleChanged(t *testing.T, name string, fn func(o *unstructured.Unstructured)) string {
	t.Helper()
	o := readManifests(t, example(name))[0]
	fn(o)
	return writeManifests(t, name, o)
}

// rendered is what crossplane render printed: the composite and what it composes.
type rendered struct {
	composite *unstructured.Unstructured
	composed  []*unstructured.Unstructured
}

// render renders the example Composition for the composite in xrPath.
func render(t *testing.T, xrPath string, args ...string) (rendered, error) {
	t.Helper()
	return renderWith(t, example("composition.yaml"), xrPath, args...)
}

// renderWith renders the Composition in compositionPath for the composite in xrPath.
func renderWith(t *testing.T, compositionPath, xrPath string, args ...string) (rendered, error) {
	t.Helper()
	args = append([]string{"render", xrPath, compositionPath, functionsFile(t)}, args...)
	stdout, stderr, err := crossplane(t, args...)
	if err != nil {
		return rendered{}, errors.Errorf("%w: %s", err, stderr)
	}
	objs, err := manifests.Decode([]byte(stdout))
	if err != nil {
		return rendered{}, err
	}
	if len(objs) == 0 {
		return rendered{}, errors.New("crossplane render printed nothing")
	}
	return rendered{composite: objs[0], composed: objs[1:]}, nil
}

func readManifests(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := manifests.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// writeManifests writes objs into one YAML file in a temporary directory.
func writeManifests(t *testing.T, name string, objs ...*unstructured.Unstructured) string {
	t.Helper()
	var b bytes.Buffer
	for _, o := range objs {
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// repoPath is a path in the repository.
func repoPath(elem ...string) string {
	return filepath.Join(append([]string{controlplane.RepoRoot()}, elem...)...)
}

// copyDir copies the files of from into to.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
