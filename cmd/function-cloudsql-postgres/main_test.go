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

package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/proto/v1beta1"
	"github.com/crossplane/function-sdk-go/resource"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/composepg"
)

// envRunMain makes the test binary run main instead of the tests, so that the tests
// see the exit codes and output of the command itself.
const envRunMain = "FUNCTION_CLOUDSQL_POSTGRES_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command runs the function's main with args in a child process.
func command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), envRunMain+"=1", envTLSCertsDir+"=")
	return cmd
}

func TestFlags(t *testing.T) {
	cases := map[string]struct {
		args   []string
		code   int
		output string
	}{
		"Help": {
			args: []string{"--help"}, code: 0,
			output: "Usage: function-cloudsql-postgres [flags]",
		},
		"NoCertificatesAndNotInsecure": {
			args: nil, code: 1,
			output: "function-cloudsql-postgres: " + errNoCredentials,
		},
		"AnUnknownFlag": {
			args: []string{"--tls-server-certs-dir=/tls"}, code: 1,
			output: "flag provided but not defined: -tls-server-certs-dir",
		},
		"AnArgument": {
			args: []string{"--insecure", "serve"}, code: 1,
			output: `unexpected arguments ["serve"]: every setting is a flag (see --help)`,
		},
		"CertificatesThatAreNotThere": {
			args: []string{"--tls-certs-dir", t.TempDir(), "--address", "127.0.0.1:0", "--metrics-address", ""}, code: 1,
			output: "cannot load X509 keypair",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var out bytes.Buffer
			cmd := command(ctx, tc.args...)
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			g.Expect(cmd.ProcessState.ExitCode()).To(Equal(tc.code), "%v\n%s", err, out.String())
			g.Expect(out.String()).To(ContainSubstring(tc.output))
		})
	}
}

// TestServes runs the command as crossplane render expects it (--insecure) and
// calls it over gRPC, with both the v1 protocol and the v1beta1 one that Crossplane
// before 1.17 speaks.
func TestServes(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	addr := freeAddress(g)
	var out bytes.Buffer
	cmd := command(ctx, "--insecure", "--address", addr, "--metrics-address", "", "--connection-secret-namespace", "platform")
	cmd.Stdout, cmd.Stderr = &out, &out
	g.Expect(cmd.Start()).To(Succeed())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		// Read only once the process is gone: exec copies its output meanwhile.
		if t.Failed() {
			t.Log(out.String())
		}
	})

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = conn.Close() })

	xr := resource.MustStructJSON(`{"apiVersion": "platform.example.org/v1alpha1", "kind": "XPostgreSQLInstance", "metadata": {"name": "orders-db-x7k2p"}, "spec": {"size": "large"}}`)
	var rsp *fnv1.RunFunctionResponse
	// The child process needs a moment to listen; the client waits for it.
	g.Eventually(func() error {
		rsp, err = fnv1.NewFunctionRunnerServiceClient(conn).RunFunction(ctx,
			&fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}}, grpc.WaitForReady(true))
		return err
	}).WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(rsp.GetResults()).To(BeEmpty())
	spec := rsp.GetDesired().GetResources()[string(composepg.ResourceName)].GetResource().AsMap()["spec"].(map[string]any)
	g.Expect(spec["forProvider"]).To(HaveKeyWithValue("resources", HaveKeyWithValue("instanceType", "db-custom-4-15360")))
	g.Expect(spec["writeConnectionSecretToRef"]).To(HaveKeyWithValue("namespace", "platform"))

	// A namespaced composite gets everything in its namespace, whatever
	// --connection-secret-namespace says.
	nsxr := resource.MustStructJSON(`{"apiVersion": "platform.example.org/v1alpha1", "kind": "PostgreSQLDatabase", "metadata": {"name": "orders-db", "namespace": "team-orders"}, "spec": {"size": "large"}}`)
	rsp, err = fnv1.NewFunctionRunnerServiceClient(conn).RunFunction(ctx, &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: nsxr}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rsp.GetResults()).To(BeEmpty())
	pi := rsp.GetDesired().GetResources()[string(composepg.ResourceName)].GetResource().AsMap()
	g.Expect(pi).To(HaveKeyWithValue("apiVersion", "cloudsql.m.travelaudience.com/v1alpha1"))
	g.Expect(pi).To(HaveKeyWithValue("metadata", HaveKeyWithValue("namespace", "team-orders")))
	g.Expect(pi["spec"]).To(HaveKeyWithValue("writeConnectionSecretToRef", Equal(map[string]any{"name": "orders-db-postgresqlinstance"})))
	secret := rsp.GetDesired().GetResources()[string(composepg.ConnectionSecretResourceName)].GetResource().AsMap()
	g.Expect(secret).To(HaveKeyWithValue("metadata", Equal(map[string]any{"name": "orders-db-postgres", "namespace": "team-orders"})))

	beta, err := v1beta1.NewFunctionRunnerServiceClient(conn).RunFunction(ctx,
		&v1beta1.RunFunctionRequest{Observed: &v1beta1.State{Composite: &v1beta1.Resource{Resource: resource.MustStructJSON(`{"metadata": {"name": "x"}, "spec": {"size": "huge"}}`)}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(beta.GetResults()).To(HaveLen(1))
	g.Expect(beta.GetResults()[0].GetSeverity()).To(Equal(v1beta1.Severity_SEVERITY_FATAL))
	g.Expect(beta.GetResults()[0].GetMessage()).To(ContainSubstring(`spec.size "huge" is not a size`))
}

// freeAddress is a local address nothing listens on, for a child process to take.
func freeAddress(g Gomega) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	addr := lis.Addr().String()
	g.ExpectWithOffset(1, lis.Close()).To(Succeed())
	return addr
}
