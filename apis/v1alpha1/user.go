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
	"k8s.io/apimachinery/pkg/types"
)

// Parameters returns the settings of the login.
func (mg *PostgresqlUser) Parameters() *PostgresqlUserParameters {
	return &mg.Spec.ForProvider
}

// Settings returns the settings of the login that both PostgresqlUser kinds
// share.
func (mg *PostgresqlUser) Settings() *PostgresqlUserSettings {
	return &mg.Spec.ForProvider.PostgresqlUserSettings
}

// Observation returns what Cloud SQL and PostgreSQL last reported about the
// login.
func (mg *PostgresqlUser) Observation() *PostgresqlUserObservation {
	return &mg.Status.AtProvider
}

// ConnectionSecret returns the namespace and name of the connection secret, or
// nil when there is none.
func (mg *PostgresqlUser) ConnectionSecret() *xpv2.SecretReference {
	return mg.GetWriteConnectionSecretToReference()
}

// InstanceKey names the cluster-scoped PostgresqlInstance the login belongs
// to (an empty namespace: the instance is cluster-scoped). The name is empty
// until spec.forProvider.instance is set or resolved.
func (mg *PostgresqlUser) InstanceKey() types.NamespacedName {
	return types.NamespacedName{Name: mg.Spec.ForProvider.Instance}
}

// The methods below are those angryjet writes for a managed resource whose spec
// embeds xpv2.ClusterManagedResourceSpec. A PostgresqlUser spells those fields out
// instead, because it has no providerConfigRef: its Cloud SQL project and
// credentials are its instance's.

// GetCondition of this PostgresqlUser.
func (mg *PostgresqlUser) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this PostgresqlUser.
func (mg *PostgresqlUser) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this PostgresqlUser.
func (mg *PostgresqlUser) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this PostgresqlUser.
func (mg *PostgresqlUser) SetManagementPolicies(r xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = r
}

// GetDeletionPolicy of this PostgresqlUser.
func (mg *PostgresqlUser) GetDeletionPolicy() xpv2.DeletionPolicy {
	return mg.Spec.DeletionPolicy
}

// SetDeletionPolicy of this PostgresqlUser.
func (mg *PostgresqlUser) SetDeletionPolicy(r xpv2.DeletionPolicy) {
	mg.Spec.DeletionPolicy = r
}

// GetWriteConnectionSecretToReference of this PostgresqlUser.
func (mg *PostgresqlUser) GetWriteConnectionSecretToReference() *xpv2.SecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this PostgresqlUser.
func (mg *PostgresqlUser) SetWriteConnectionSecretToReference(r *xpv2.SecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetProviderConfigReference of this PostgresqlUser is always nil: the login's
// project and credentials are its instance's. The method exists because
// crossplane-runtime's managed reconciler honours spec.deletionPolicy only for a
// resource.LegacyManaged, which must be a resource.ProviderConfigReferencer.
func (mg *PostgresqlUser) GetProviderConfigReference() *xpv2.Reference {
	return nil
}

// SetProviderConfigReference of this PostgresqlUser does nothing: see
// GetProviderConfigReference.
func (mg *PostgresqlUser) SetProviderConfigReference(_ *xpv2.Reference) {}

// GetItems of this PostgresqlUserList.
func (l *PostgresqlUserList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}
