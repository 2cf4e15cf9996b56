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

// Settings returns the settings of the backup that both PostgresqlBackup kinds
// share.
func (mg *PostgresqlBackup) Settings() *PostgresqlBackupSettings {
	return &mg.Spec.ForProvider.PostgresqlBackupSettings
}

// Observation returns what Cloud SQL last reported about the backup run.
func (mg *PostgresqlBackup) Observation() *PostgresqlBackupObservation {
	return &mg.Status.AtProvider
}

// InstanceKey names the cluster-scoped PostgresqlInstance the backup is of (an
// empty namespace). The name is empty until spec.forProvider.instance is set
// or resolved.
func (mg *PostgresqlBackup) InstanceKey() types.NamespacedName {
	return types.NamespacedName{Name: mg.Spec.ForProvider.Instance}
}

// The methods below are those angryjet writes for a managed resource whose spec
// embeds xpv2.ClusterManagedResourceSpec. A PostgresqlBackup spells those
// fields out instead: it has no providerConfigRef (its Cloud SQL project and
// credentials are its instance's) and no connection details.

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

// GetDeletionPolicy of this PostgresqlBackup.
func (mg *PostgresqlBackup) GetDeletionPolicy() xpv2.DeletionPolicy {
	return mg.Spec.DeletionPolicy
}

// SetDeletionPolicy of this PostgresqlBackup.
func (mg *PostgresqlBackup) SetDeletionPolicy(r xpv2.DeletionPolicy) {
	mg.Spec.DeletionPolicy = r
}

// GetWriteConnectionSecretToReference of this PostgresqlBackup is always nil:
// a backup has no connection details.
func (mg *PostgresqlBackup) GetWriteConnectionSecretToReference() *xpv2.SecretReference {
	return nil
}

// SetWriteConnectionSecretToReference of this PostgresqlBackup does nothing: see
// GetWriteConnectionSecretToReference.
func (mg *PostgresqlBackup) SetWriteConnectionSecretToReference(_ *xpv2.SecretReference) {}

// GetProviderConfigReference of this PostgresqlBackup is always nil: the
// backup's project and credentials are its instance's. The method exists
// because crossplane-runtime's managed reconciler honours spec.deletionPolicy
// only for a resource.LegacyManaged, which must be a
// resource.ProviderConfigReferencer.
func (mg *PostgresqlBackup) GetProviderConfigReference() *xpv2.Reference {
	return nil
}

// SetProviderConfigReference of this PostgresqlBackup does nothing: see
// GetProviderConfigReference.
func (mg *PostgresqlBackup) SetProviderConfigReference(_ *xpv2.Reference) {}

// GetItems of this PostgresqlBackupList.
func (l *PostgresqlBackupList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}
