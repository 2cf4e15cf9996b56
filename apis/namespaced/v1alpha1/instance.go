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
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
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

// The methods below are those angryjet writes for a managed resource whose spec
// embeds xpv2.ManagedResourceSpec. The namespaced PostgresqlInstance spells
// those fields out instead, because the embedded spec defaults
// spec.providerConfigRef to ClusterProviderConfig "default": a namespace must
// name the configuration it uses, never get one implicitly.

// GetCondition of this PostgresqlInstance.
func (mg *PostgresqlInstance) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this PostgresqlInstance.
func (mg *PostgresqlInstance) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this PostgresqlInstance.
func (mg *PostgresqlInstance) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this PostgresqlInstance.
func (mg *PostgresqlInstance) SetManagementPolicies(r xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = r
}

// GetProviderConfigReference of this PostgresqlInstance.
func (mg *PostgresqlInstance) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this PostgresqlInstance.
func (mg *PostgresqlInstance) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this PostgresqlInstance.
func (mg *PostgresqlInstance) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this PostgresqlInstance.
func (mg *PostgresqlInstance) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetItems of this PostgresqlInstanceList.
func (l *PostgresqlInstanceList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}
