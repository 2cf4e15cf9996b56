// Package controller wires every controller of the provider into a manager.
package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/config"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/postgresqlinstance"
)

// Setup adds the ProviderConfig and PostgresqlInstance controllers to mgr.
func Setup(mgr ctrl.Manager, o postgresqlinstance.Options) error {
	if err := config.Setup(mgr, o.Options); err != nil {
		return err
	}
	return postgresqlinstance.Setup(mgr, o)
}
