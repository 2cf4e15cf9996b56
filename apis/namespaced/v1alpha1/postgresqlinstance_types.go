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
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// LabelInstance is set, with the metadata.name of a namespaced
// PostgresqlInstance as its value, on the secrets the injector copies into the
// instance's namespace for it. It differs from the cluster-scoped kind's label
// so that the copies of two instances of the same name, one of each kind, never
// mix.
const LabelInstance = Group + "/postgresqlinstance"

// A PostgresqlInstanceSpec defines the desired state of a namespaced
// PostgresqlInstance. Once the provider may create or update the instance,
// its name, region and disk type cannot change and its version only goes up;
// while it only observes (managementPolicies Observe), they may be corrected
// to describe an imported instance. The source never changes.
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || has(self.forProvider.name) == has(oldSelf.forProvider.name)",fieldPath=".forProvider.name",message="cannot be added or removed after creation: the Cloud SQL instance keeps the name it was created with"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || !has(self.forProvider.name) || !has(oldSelf.forProvider.name) || self.forProvider.name == oldSelf.forProvider.name",fieldPath=".forProvider.name",messageExpression="'is immutable: the Cloud SQL instance is named ' + oldSelf.forProvider.name + '; create a new PostgresqlInstance to use another name'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || (self.forProvider.version == '9.6' ? 9.6 : double(self.forProvider.version)) >= (oldSelf.forProvider.version == '9.6' ? 9.6 : double(oldSelf.forProvider.version))",fieldPath=".forProvider.version",messageExpression="'cannot go down (was ' + oldSelf.forProvider.version + '): Cloud SQL upgrades PostgreSQL in place but never downgrades it; to go back, restore the backup taken before the upgrade (status.atProvider.majorUpgrade.backupId) into a new PostgresqlInstance with spec.forProvider.source'"
// +kubebuilder:validation:XValidation:rule="has(self.forProvider.source) == has(oldSelf.forProvider.source) && (!has(self.forProvider.source) || self.forProvider.source == oldSelf.forProvider.source)",fieldPath=".forProvider.source",message="is immutable: an instance is recovered from its source once, when it is created; create a new PostgresqlInstance to recover again"
// +kubebuilder:validation:XValidation:rule="!has(self.forProvider.source) || !has(self.forProvider.source.retainedBackup)",fieldPath=".forProvider.source.retainedBackup",message="is for cluster-scoped PostgresqlInstances only: a backup of a deleted instance belongs to no namespace; restore a PostgresqlBackup of this namespace (source.backup), or ask the platform team to restore it"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.location.region == oldSelf.forProvider.location.region",fieldPath=".forProvider.location.region",messageExpression="'is immutable (was ' + oldSelf.forProvider.location.region + '): a Cloud SQL instance cannot move to another region'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.resources.disk.type == oldSelf.forProvider.resources.disk.type",fieldPath=".forProvider.resources.disk.type",messageExpression="'is immutable (was ' + oldSelf.forProvider.resources.disk.type + '): Cloud SQL cannot change the disk type of an instance'"
// +kubebuilder:validation:XValidation:rule="has(self.writeConnectionSecretToRef) || (has(self.managementPolicies) && !self.managementPolicies.exists(p, p == '*' || p == 'Create'))",fieldPath=".writeConnectionSecretToRef",message="is required when the provider may create the instance: the generated password of the postgres user is stored there, in the instance's namespace, before the instance is created, so that it is never lost"
// +kubebuilder:validation:XValidation:rule="has(self.providerConfigRef)",fieldPath=".providerConfigRef",message="is required: name the configuration that holds the project and credentials, either a ProviderConfig of this namespace ({kind: ProviderConfig, name: ...}) or a ClusterProviderConfig that the platform team lends to this namespace ({kind: ClusterProviderConfig, name: ...}); no configuration is used implicitly"
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || size(self.providerConfigRef.name) > 0",fieldPath=".providerConfigRef.name",message="must name a ClusterProviderConfig that the platform team lends to this namespace, or a ProviderConfig of this namespace (the project and credentials)"
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind in ['ClusterProviderConfig', 'ProviderConfig']",fieldPath=".providerConfigRef.kind",message="must be ClusterProviderConfig (shared by the cluster) or ProviderConfig (of this namespace)"
type PostgresqlInstanceSpec struct {
	// WriteConnectionSecretToReference names the secret of this namespace
	// that the connection details (address, connection name, the postgres
	// user's password and a pgpass line) are written to.
	// +optional
	WriteConnectionSecretToReference *xpv2.LocalSecretReference `json:"writeConnectionSecretToRef,omitempty"`

	// ProviderConfigReference names the configuration (project and
	// credentials) the instance is managed with: a ProviderConfig of this
	// namespace ({kind: ProviderConfig, name: ...}), or a ClusterProviderConfig
	// whose spec.namespaces admits this namespace
	// ({kind: ClusterProviderConfig, name: ...}). Required: no configuration
	// is used implicitly.
	ProviderConfigReference *xpv2.ProviderConfigReference `json:"providerConfigRef,omitempty"`

	// ManagementPolicies are the actions the provider may take on the Cloud
	// SQL instance: ["*"] (the default) for all, or ["Observe"] to only
	// observe an existing instance (an import).
	// +optional
	// +kubebuilder:default={"*"}
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	// ForProvider holds the settings of the Cloud SQL instance.
	ForProvider clusterv1alpha1.PostgresqlInstanceParameters `json:"forProvider"`

	// Tenancy says whether this namespace's PostgresqlUsers and
	// PostgresqlDatabases may take over logins and databases that exist on
	// the instance but that none of them created.
	// +optional
	Tenancy *Tenancy `json:"tenancy,omitempty"`
}

// Tenancy of a namespaced PostgresqlInstance: only PostgresqlUsers and
// PostgresqlDatabases of its own namespace use it.
type Tenancy struct {
	// ImportPolicy says whether PostgresqlUsers and PostgresqlDatabases may
	// take over a login or a database that exists on the instance but that
	// none of them created (made with psql, gcloud, or by an object since
	// deleted with deletionPolicy Orphan): Deny (the default) or Allow. A
	// login or database that another object created is never taken over,
	// whatever this says.
	// +optional
	// +kubebuilder:default=Deny
	// +kubebuilder:validation:Enum=Allow;Deny
	ImportPolicy clusterv1alpha1.ObjectImportPolicy `json:"importPolicy,omitempty"`
}

// ImportPolicyOf is the import policy of tenancy t, which may be nil, with
// the default of a namespaced instance.
func ImportPolicyOf(t *Tenancy) clusterv1alpha1.ObjectImportPolicy {
	if t == nil || t.ImportPolicy == "" {
		return clusterv1alpha1.ObjectImportDeny
	}
	return t.ImportPolicy
}

// A PostgresqlInstanceStatus represents the observed state of a
// PostgresqlInstance.
type PostgresqlInstanceStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	// AtProvider is what Cloud SQL last reported about the instance.
	AtProvider clusterv1alpha1.PostgresqlInstanceObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A PostgresqlInstance is a Cloud SQL for PostgreSQL instance that belongs to a
// namespace. Creating one creates the instance, with a generated password for
// the postgres user published in the connection secret in the same namespace;
// pods of that namespace, and only those, may ask for the Cloud SQL Auth Proxy
// with the annotation cloudsql.travelaudience.com/postgresqlinstance-name.
// Deleting one deletes the instance only when it carries the annotation
// cloudsql.travelaudience.com/allow-deletion: "true".
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="STATE",type="string",JSONPath=".status.atProvider.state"
// +kubebuilder:printcolumn:name="CONNECTION NAME",type="string",JSONPath=".status.atProvider.connectionName"
// +kubebuilder:printcolumn:name="VERSION",type="string",JSONPath=".spec.forProvider.version",priority=1
// +kubebuilder:printcolumn:name="TYPE",type="string",JSONPath=".spec.forProvider.resources.instanceType",priority=1
// +kubebuilder:printcolumn:name="REGION",type="string",JSONPath=".spec.forProvider.location.region",priority=1
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudsql}
type PostgresqlInstance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PostgresqlInstanceSpec   `json:"spec"`
	Status PostgresqlInstanceStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PostgresqlInstanceList contains a list of PostgresqlInstance.
type PostgresqlInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PostgresqlInstance `json:"items"`
}
