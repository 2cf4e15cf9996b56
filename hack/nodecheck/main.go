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
