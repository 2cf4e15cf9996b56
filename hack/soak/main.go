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

// Command soak runs the provider binary under SIGKILLs every 5-20 s against a real
// API server and the Cloud SQL emulator (5xx, 429 and slow inserts injected, the
// quota enforced) while instances are created, changed, imported and deleted,
// users and databases are created and deleted on a few instances that run
// a real PostgreSQL (failed operations injected too), and instances are
// recovered from others (clones, restores), then prints what went
// wrong: every count must be zero, and no 60 seconds may hold more requests
// than the quota.
//
//	go run ./hack/soak -instances 200
//
// `make soak` runs it (SOAK_N instances, default 50).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/soak"
)

func main() {
	o := soak.Options{Log: os.Stderr}
	flag.IntVar(&o.Instances, "instances", 50, "PostgresqlInstances to create (a third are changed)")
	flag.IntVar(&o.Imports, "imports", 3, "instances made outside Kubernetes, imported")
	flag.IntVar(&o.Quota, "quota", 180, "the emulator's requests per minute, and the provider's budget")
	flag.DurationVar(&o.KillMin, "kill-min", 5*time.Second, "least time between two SIGKILLs of the provider")
	flag.DurationVar(&o.KillMax, "kill-max", 20*time.Second, "most time between two SIGKILLs of the provider")
	flag.IntVar(&o.MaxKills, "kills", 0, "stop killing after this many (0: until the end)")
	flag.IntVar(&o.SQLInstances, "sql-instances", 3, "more instances that run a real PostgreSQL (needs `make postgres`), with users and databases")
	flag.IntVar(&o.Logins, "logins", 5, "PostgresqlUsers, each owning a PostgresqlDatabase, on each of -sql-instances")
	flag.IntVar(&o.Recoveries, "recoveries", -1, "instances recovered from others (clones now and at a point in time, restores of PostgresqlBackups), at most; -1: 3 of each of -sql-instances and 2 of each of 2 others")
	flag.DurationVar(&o.Timeout, "timeout", 20*time.Minute, "how long each phase may take")
	flag.Parse()
	if o.Instances < 1 || o.KillMin <= 0 || o.KillMax < o.KillMin || o.SQLInstances < 0 || o.Logins < 0 {
		fmt.Fprintln(os.Stderr, "soak: -instances must be at least 1, -sql-instances and -logins not negative, and 0 < -kill-min <= -kill-max")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := soak.Run(ctx, o)
	r.Print(os.Stdout)
	for _, c := range r.Conditions {
		fmt.Println("  condition:", c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if err := soak.Check(r); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}
