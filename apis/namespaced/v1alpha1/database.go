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

	clusterv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Parameters returns the settings of the database.
func (mg *PostgresqlDatabase) Parameters() *PostgresqlDatabaseParameters {
	return &mg.Spec.ForProvider
}

// Settings returns the settings of the database that both PostgresqlDatabase kinds
// share.
func (mg *PostgresqlDatabase) Settings() *clusterv1alpha1.PostgresqlDatabaseSettings {
	return &mg.Spec.ForProvider.PostgresqlDatabaseSettings
}

// Observation returns what Cloud SQL and PostgreSQL last reported about the
// database.
func (mg *PostgresqlDatabase) Observation() *clusterv1alpha1.PostgresqlDatabaseObservation {
	return &mg.Status.AtProvider
}

// ConnectionSecret returns the namespace (the database's own) and name of the
// connection secret, or nil when there is none.
func (mg *PostgresqlDatabase) ConnectionSecret() *xpv2.SecretReference {
	ref := mg.GetWriteConnectionSecretToReference()
	if ref == nil {
		return nil
	}
	return &xpv2.SecretReference{Namespace: mg.GetNamespace(), Name: ref.Name}
}

// InstanceKey names the PostgresqlInstance the database belongs to: one of its
// own namespace (spec.forProvider.instance), or a cluster-scoped one, with an
// empty namespace (spec.forProvider.clusterInstance). The name is empty until
// one of them is set or resolved.
func (mg *PostgresqlDatabase) InstanceKey() types.NamespacedName {
	if mg.Spec.ForProvider.ClusterInstance != "" {
		return types.NamespacedName{Name: mg.Spec.ForProvider.ClusterInstance}
	}
	return types.NamespacedName{Namespace: mg.GetNamespace(), Name: mg.Spec.ForProvider.Instance}
}

// OwnerKey names the PostgresqlUser that owns the database, of its own scope
// and namespace (spec.forProvider.owner). The name is empty while it has no
// owner.
func (mg *PostgresqlDatabase) OwnerKey() types.NamespacedName {
	if mg.Spec.ForProvider.Owner == "" {
		return types.NamespacedName{}
	}
	return types.NamespacedName{Namespace: mg.GetNamespace(), Name: mg.Spec.ForProvider.Owner}
}

// The methods below are those angryjet writes for a managed resource whose spec
// embeds xpv2.ManagedResourceSpec. A PostgresqlDatabase spells those fields out
// instead, because it has no providerConfigRef: its Cloud SQL project and
// credentials are its instance's.

// GetCondition of this PostgresqlDatabase.
func (mg *PostgresqlDatabase) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this PostgresqlDatabase.
func (mg *PostgresqlDatabase) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this PostgresqlDatabase.
func (mg *PostgresqlDatabase) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this PostgresqlDatabase.
func (mg *PostgresqlDatabase) SetManagementPolicies(r xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = r
}

// GetWriteConnectionSecretToReference of this PostgresqlDatabase.
func (mg *PostgresqlDatabase) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this PostgresqlDatabase.
func (mg *PostgresqlDatabase) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetProviderConfigReference of this PostgresqlDatabase is always nil: the database's
// project and credentials are its instance's. The method exists so that the
// kind is a resource.ModernManaged, crossplane-runtime's interface of a
// namespaced managed resource; nothing must track a ProviderConfig usage for
// it.
func (mg *PostgresqlDatabase) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return nil
}

// SetProviderConfigReference of this PostgresqlDatabase does nothing: see
// GetProviderConfigReference.
func (mg *PostgresqlDatabase) SetProviderConfigReference(_ *xpv2.ProviderConfigReference) {}

// GetItems of this PostgresqlDatabaseList.
func (l *PostgresqlDatabaseList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}
