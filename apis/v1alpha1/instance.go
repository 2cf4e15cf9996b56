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

package v1alpha1

import (
	"time"

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

// Every is the period of the rotation; 0 for none.
func (r *PasswordRotation) Every() time.Duration {
	if r == nil {
		return 0
	}
	return r.Period.Duration
}
