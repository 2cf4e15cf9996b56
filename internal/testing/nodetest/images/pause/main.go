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

// Command pause is the sandbox ("pause") container of the node test harness,
// which has no registry to pull registry.k8s.io/pause from. It is PID 1 of
// every pod sandbox: it holds the pod's namespaces open by doing nothing until
// the container runtime stops it, and, as PID 1, it must reap the zombies of
// processes orphaned into the sandbox's PID namespace (shareProcessNamespace),
// which the kernel reparents to it and nothing else would wait for.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// PID 1 gets no default signal handlers from the kernel: without these,
	// SIGTERM would be ignored and the runtime would have to SIGKILL the sandbox.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		reap()
		if s != syscall.SIGCHLD {
			// The runtime stopping the sandbox is the normal end, as for the
			// upstream pause binary: exit 0.
			os.Exit(0)
		}
	}
}

// reap waits for every child that has exited. Signals coalesce, so one
// SIGCHLD may stand for several children: loop until none is left.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		// Wait4 returns a bare Errno: a comparison needs no errors package,
		// whose crossplane-runtime form would grow this binary twentyfold.
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
