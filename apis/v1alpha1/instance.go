package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// Parameters returns the settings of the Cloud SQL instance: the part of the
// spec that both PostgresqlInstance kinds share.
func (mg *PostgresqlInstance) Parameters() *PostgresqlInstanceParameters {
	return &mg.Spec.ForProvider
}

// Observation returns what Cloud SQL last reported about the instance.
func (mg *PostgresqlInstance) Observation() *PostgresqlInstanceObservation {
	return &mg.Status.AtProvider
}

// ConnectionSecret returns the namespace and name of the connection secret, or
// nil when there is none.
func (mg *PostgresqlInstance) ConnectionSecret() *xpv2.SecretReference {
	return mg.GetWriteConnectionSecretToReference()
}
