package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	clusterv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Parameters returns the settings of the Cloud SQL instance: the part of the
// spec that both PostgresqlInstance kinds share.
func (mg *PostgresqlInstance) Parameters() *clusterv1alpha1.PostgresqlInstanceParameters {
	return &mg.Spec.ForProvider
}

// Observation returns what Cloud SQL last reported about the instance.
func (mg *PostgresqlInstance) Observation() *clusterv1alpha1.PostgresqlInstanceObservation {
	return &mg.Status.AtProvider
}

// ConnectionSecret returns the namespace (the instance's own) and name of the
// connection secret, or nil when there is none.
func (mg *PostgresqlInstance) ConnectionSecret() *xpv2.SecretReference {
	ref := mg.GetWriteConnectionSecretToReference()
	if ref == nil {
		return nil
	}
	return &xpv2.SecretReference{Namespace: mg.GetNamespace(), Name: ref.Name}
}
