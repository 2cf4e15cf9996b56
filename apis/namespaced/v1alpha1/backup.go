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

// Settings returns the settings of the backup that both PostgresqlBackup kinds
// share.
func (mg *PostgresqlBackup) Settings() *clusterv1alpha1.PostgresqlBackupSettings {
	return &mg.Spec.ForProvider.PostgresqlBackupSettings
}

// Observation returns what Cloud SQL last reported about the backup run.
func (mg *PostgresqlBackup) Observation() *clusterv1alpha1.PostgresqlBackupObservation {
	return &mg.Status.AtProvider
}

// InstanceKey names the PostgresqlInstance the backup is of: one of its own
// namespace (spec.forProvider.instance), or a cluster-scoped one, with an
// empty namespace (spec.forProvider.clusterInstance). The name is empty until
// one of them is set or resolved.
func (mg *PostgresqlBackup) InstanceKey() types.NamespacedName {
	if mg.Spec.ForProvider.ClusterInstance != "" {
		return types.NamespacedName{Name: mg.Spec.ForProvider.ClusterInstance}
	}
	return types.NamespacedName{Namespace: mg.GetNamespace(), Name: mg.Spec.ForProvider.Instance}
}

// The methods below are those angryjet writes for a managed resource whose spec
// embeds xpv2.ManagedResourceSpec. A PostgresqlBackup spells those fields out
// instead: it has no providerConfigRef (its Cloud SQL project and credentials
// are its instance's) and no connection details.

// GetCondition of this PostgresqlBackup.
func (mg *PostgresqlBackup) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this PostgresqlBackup.
func (mg *PostgresqlBackup) SetConditions(c ...xpv2.Condition) {
	mg.Status.SetConditions(c...)
}

// GetManagementPolicies of this PostgresqlBackup.
func (mg *PostgresqlBackup) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this PostgresqlBackup.
func (mg *PostgresqlBackup) SetManagementPolicies(r xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = r
}

// GetWriteConnectionSecretToReference of this PostgresqlBackup is always nil:
// a backup has no connection details.
func (mg *PostgresqlBackup) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return nil
}

// SetWriteConnectionSecretToReference of this PostgresqlBackup does nothing:
// see GetWriteConnectionSecretToReference.
func (mg *PostgresqlBackup) SetWriteConnectionSecretToReference(_ *xpv2.LocalSecretReference) {}

// GetProviderConfigReference of this PostgresqlBackup is always nil: the
// backup's project and credentials are its instance's. The method exists so
// that the kind is a resource.ModernManaged, crossplane-runtime's interface of
// a namespaced managed resource; nothing must track a ProviderConfig usage
// for it.
func (mg *PostgresqlBackup) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return nil
}

// SetProviderConfigReference of this PostgresqlBackup does nothing: see
// GetProviderConfigReference.
func (mg *PostgresqlBackup) SetProviderConfigReference(_ *xpv2.ProviderConfigReference) {}

// GetItems of this PostgresqlBackupList.
func (l *PostgresqlBackupList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}
