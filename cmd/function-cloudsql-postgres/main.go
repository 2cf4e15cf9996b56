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

// Command function-cloudsql-postgres is the composition function of
// provider-cloudsql-postgres: it composes one PostgresqlInstance for a composite
// resource that asks for a size (small, medium, large), a region, a PostgreSQL
// version and public or private networking, and passes the instance's connection
// details back to the composite and its claim (see internal/composepg and
// examples/composition). For a namespaced composite (Crossplane v2) it composes a
// namespaced PostgresqlInstance and a Secret with those details in the composite's
// namespace instead. A Composition whose input names a shared PostgresqlInstance
// gets, for each composite, a PostgresqlDatabase and a PostgresqlUser that owns it
// on that instance instead, and the user's credentials.
//
//	function-cloudsql-postgres [--insecure] [--address :9443] [--tls-certs-dir DIR]
//	                           [--metrics-address :8080] [--connection-secret-namespace NS] [--debug]
//
// Crossplane's package manager runs it with TLS_SERVER_CERTS_DIR pointing at the
// server certificate (tls.crt, tls.key) and the CA that signs Crossplane's client
// certificate (ca.crt), and calls it over mTLS on port 9443. --insecure serves
// plain gRPC instead, for `crossplane render` against a function run by hand.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	function "github.com/crossplane/function-sdk-go"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/composepg"
)

// envTLSCertsDir is where Crossplane's function runtime says the certificates are.
const envTLSCertsDir = "TLS_SERVER_CERTS_DIR"

const (
	errNoCredentials  = "no TLS certificates: give --tls-certs-dir (or set " + envTLSCertsDir + ") to a directory holding tls.crt, tls.key and ca.crt, or --insecure to serve without TLS (for crossplane render)"
	errUnexpectedArgs = "unexpected arguments %q: every setting is a flag (see --help)"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "function-cloudsql-postgres:", err)
		os.Exit(1)
	}
}

// run parses args and serves the function until serving fails.
func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("function-cloudsql-postgres", flag.ContinueOnError)
	fs.SetOutput(stderr)
	insecure := fs.Bool("insecure", false, "serve gRPC without TLS; for development with crossplane render only, Crossplane itself always uses mTLS")
	address := fs.String("address", function.DefaultAddress, "address to listen on for gRPC")
	certsDir := fs.String("tls-certs-dir", os.Getenv(envTLSCertsDir), "directory holding tls.crt, tls.key and the CA of clients, ca.crt (default $"+envTLSCertsDir+")")
	metricsAddress := fs.String("metrics-address", function.DefaultMetricsAddress, "address to serve Prometheus metrics on; empty turns them off")
	secretNamespace := fs.String("connection-secret-namespace", composepg.DefaultConnectionSecretNamespace, "namespace of the cluster-scoped PostgresqlInstances' connection secrets, unless the composite writes its own secret to a namespace (a namespaced composite keeps them in its namespace)")
	debug := fs.Bool("debug", false, "log every composition, not only failures")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: function-cloudsql-postgres [flags]\n\nServes the Crossplane composition function that composes a PostgresqlInstance for a composite resource.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.Errorf(errUnexpectedArgs, fs.Args())
	}
	if !*insecure && *certsDir == "" {
		return errors.New(errNoCredentials)
	}

	log, err := function.NewLogger(*debug)
	if err != nil {
		return err
	}
	log.Info("Serving the function", "address", *address, "insecure", *insecure, "metrics-address", *metricsAddress)
	fn := composepg.New(composepg.WithLogger(log), composepg.WithConnectionSecretNamespace(*secretNamespace))
	return function.Serve(fn,
		function.Listen("tcp", *address),
		function.MTLSCertificates(*certsDir),
		function.Insecure(*insecure),
		function.WithMetricsServer(*metricsAddress),
	)
}
