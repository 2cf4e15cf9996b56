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

// Command nodecheck prints why this machine cannot run the node tests
// (make node-e2e), and exits 1, or prints nothing and exits 0 when it can:
// make test runs them only where they can run, and says why when they cannot.
package main

import (
	"fmt"
	"os"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/nodetest"
)

func main() {
	if why := nodetest.MachineUnsupported(); why != "" {
		fmt.Println(why)
		os.Exit(1)
	}
}
