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
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

const (
	defaultListen   = "127.0.0.1:8085"
	shutdownTimeout = time.Second
	// readHeaderTimeout guards against clients that never finish a request.
	readHeaderTimeout = 10 * time.Second

	errFmtUnexpectedArgs = "unexpected arguments: %v"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // the usage was printed; asking for it is not an error
		}
		fmt.Fprintln(os.Stderr, "cloudsql-emulator:", err)
		os.Exit(1)
	}
}

// run serves the emulator until ctx is done, then shuts the server down
// gracefully. Logs go to logw.
func run(ctx context.Context, args []string, logw io.Writer) error {
	fs := flag.NewFlagSet("cloudsql-emulator", flag.ContinueOnError)
	fs.SetOutput(logw)
	listen := fs.String("listen", defaultListen, "address to listen on")
	cfgPath := fs.String("config", "", "TOML configuration file")
	withPostgres := fs.Bool("postgres", false, "back RUNNABLE instances with real PostgreSQL servers on loopback addresses, port 3307 (as [postgres] enabled = true)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.Errorf(errFmtUnexpectedArgs, fs.Args())
	}

	cfg := &config{}
	if *cfgPath != "" {
		var err error
		if cfg, err = loadConfig(*cfgPath); err != nil {
			return err
		}
	}
	if *withPostgres {
		cfg.Postgres.Enabled = true
	}
	dataPlane, err := cfg.dataPlane(*cfgPath)
	if err != nil {
		return err
	}
	srv := emulator.New(append(append(cfg.options(), dataPlane...), emulator.WithRequestLog(logw))...)
	// Stops the PostgreSQL servers and removes their files, whatever happens next.
	defer srv.Close()
	if err := cfg.seed(*cfgPath, srv); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: readHeaderTimeout}
	fmt.Fprintf(logw, "cloudsql-emulator listening on http://%s\n", ln.Addr())
	if cfg.Postgres.Enabled {
		fmt.Fprintf(logw, "cloudsql-emulator backs RUNNABLE instances with PostgreSQL: connect through a Cloud SQL connector (port %d of the addresses in ipAddresses)\n", emulator.ServerProxyPort)
	}

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(logw, "cloudsql-emulator shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	// Requests are short: a connection still open after the grace period is one a
	// client keeps in reserve (the Auth Proxy does), which Shutdown would wait
	// seconds for.
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	_ = hs.Close()
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(logw, "cloudsql-emulator stopped")
	return nil
}
