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

// Command xpkg builds the Crossplane packages of this repository (see
// hack/xpkg/xpkg): `make xpkg` runs it with the Crossplane CLI it built.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/travelaudience/cloudsql-postgres-operator/hack/xpkg/xpkg"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

func main() {
	out := flag.String("out", "_output", "directory for the binaries, runtime images and packages")
	cli := flag.String("crossplane", os.Getenv("CROSSPLANE_CLI"), "path of the Crossplane CLI (default $CROSSPLANE_CLI)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, p := range xpkg.Packages {
		f, err := xpkg.Build(ctx, xpkg.BuildOptions{RepoRoot: controlplane.RepoRoot(), OutDir: *out, CrossplaneCLI: *cli, Log: os.Stderr}, p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "xpkg:", err)
			os.Exit(1)
		}
		fmt.Println(f)
	}
}
