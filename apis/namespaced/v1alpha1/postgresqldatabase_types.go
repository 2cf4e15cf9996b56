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

// PostgresqlDatabaseParameters are the configurable fields of a database of a
// Cloud SQL for PostgreSQL instance, named either as a PostgresqlInstance of
// the database's namespace (instance, instanceRef, instanceSelector) or as a
// cluster-scoped PostgresqlInstance (clusterInstance, clusterInstanceRef,
// clusterInstanceSelector) whose spec.injection admits the namespace.
// +kubebuilder:validation:XValidation:rule="has(self.instance) || has(self.instanceRef) || has(self.instanceSelector) || has(self.clusterInstance) || has(self.clusterInstanceRef) || has(self.clusterInstanceSelector)",fieldPath=".instance",message="is required: name the PostgresqlInstance the database belongs to, one of this namespace with instance, instanceRef or instanceSelector, or a cluster-scoped one with clusterInstance, clusterInstanceRef or clusterInstanceSelector"
// +kubebuilder:validation:XValidation:rule="!((has(self.instance) || has(self.instanceRef) || has(self.instanceSelector)) && (has(self.clusterInstance) || has(self.clusterInstanceRef) || has(self.clusterInstanceSelector)))",fieldPath=".clusterInstance",message="cannot be used together with instance, instanceRef or instanceSelector: a database belongs to one PostgresqlInstance, either of this namespace (instance*) or cluster-scoped (clusterInstance*); remove one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.instanceRef) || !has(self.instanceRef.namespace) || size(self.instanceRef.namespace) == 0",fieldPath=".instanceRef.namespace",message="must be omitted: a namespaced PostgresqlDatabase may belong only to a PostgresqlInstance of its own namespace; use clusterInstanceRef for a cluster-scoped instance"
// +kubebuilder:validation:XValidation:rule="!has(self.instanceSelector) || !has(self.instanceSelector.namespace) || size(self.instanceSelector.namespace) == 0",fieldPath=".instanceSelector.namespace",message="must be omitted: a namespaced PostgresqlDatabase may belong only to a PostgresqlInstance of its own namespace; use clusterInstanceSelector for a cluster-scoped instance"
// +kubebuilder:validation:XValidation:rule="!has(self.ownerRef) || !has(self.ownerRef.namespace) || size(self.ownerRef.namespace) == 0",fieldPath=".ownerRef.namespace",message="must be omitted: the owner is a PostgresqlUser of the database's own namespace"
// +kubebuilder:validation:XValidation:rule="!has(self.ownerSelector) || !has(self.ownerSelector.namespace) || size(self.ownerSelector.namespace) == 0",fieldPath=".ownerSelector.namespace",message="must be omitted: the owner is a PostgresqlUser of the database's own namespace"
type PostgresqlDatabaseParameters struct {
	// Instance is the metadata.name of the PostgresqlInstance, of this
	// namespace, that the database belongs to. Set it, or let instanceRef or
	// instanceSelector set it. Cannot be changed once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Instance string `json:"instance,omitempty"`

	// InstanceRef names the PostgresqlInstance, of this namespace, that the
	// database belongs to; it sets instance. Its namespace must be omitted.
	// +optional
	InstanceRef *xpv2.NamespacedReference `json:"instanceRef,omitempty"`

	// InstanceSelector selects, by its labels, the PostgresqlInstance of this
	// namespace that the database belongs to; it sets instanceRef and
	// instance. Its namespace must be omitted.
	// +optional
	InstanceSelector *xpv2.NamespacedSelector `json:"instanceSelector,omitempty"`

	// ClusterInstance is the metadata.name of the cluster-scoped
	// PostgresqlInstance that the database belongs to; its spec.injection must
	// admit this namespace. Set it, or let clusterInstanceRef or
	// clusterInstanceSelector set it. Cannot be changed once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterInstance string `json:"clusterInstance,omitempty"`

	// ClusterInstanceRef names the cluster-scoped PostgresqlInstance that the
	// database belongs to; it sets clusterInstance.
	// +optional
	ClusterInstanceRef *xpv2.Reference `json:"clusterInstanceRef,omitempty"`

	// ClusterInstanceSelector selects, by its labels, the cluster-scoped
	// PostgresqlInstance that the database belongs to; it sets
	// clusterInstanceRef and clusterInstance.
	// +optional
	ClusterInstanceSelector *xpv2.Selector `json:"clusterInstanceSelector,omitempty"`

	clusterv1alpha1.PostgresqlDatabaseSettings `json:",inline"`

	// Owner is the metadata.name of the PostgresqlUser, of this namespace and
	// the same instance, that owns the database: the only login that may
	// connect to it and use it. Without an owner the database stays owned by
	// cloudsqlsuperuser and no application login can own it. The owner may
	// change.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Owner string `json:"owner,omitempty"`

	// OwnerRef names the PostgresqlUser, of this namespace, that owns the
	// database; it sets owner. Its namespace must be omitted.
	// +optional
	OwnerRef *xpv2.NamespacedReference `json:"ownerRef,omitempty"`

	// OwnerSelector selects, by its labels, the PostgresqlUser of this
	// namespace that owns the database; it sets ownerRef and owner. Its
	// namespace must be omitted.
	// +optional
	OwnerSelector *xpv2.NamespacedSelector `json:"ownerSelector,omitempty"`
}

// A PostgresqlDatabaseSpec defines the desired state of a namespaced
// PostgresqlDatabase. The name, charset and collation cannot change once the
// provider may create the database; while it only observes
// (managementPolicies Observe), they may be corrected to describe an imported
// database.
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || has(self.forProvider.name) == has(oldSelf.forProvider.name)",fieldPath=".forProvider.name",message="cannot be added or removed after creation: the database keeps the name it was created with"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || !has(self.forProvider.name) || !has(oldSelf.forProvider.name) || self.forProvider.name == oldSelf.forProvider.name",fieldPath=".forProvider.name",messageExpression="'is immutable: the database is named ' + oldSelf.forProvider.name + '; create a new PostgresqlDatabase to use another name'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.charset == oldSelf.forProvider.charset",fieldPath=".forProvider.charset",messageExpression="'is immutable (was ' + oldSelf.forProvider.charset + '): PostgreSQL cannot change the character set of a database; create a new PostgresqlDatabase'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.collation == oldSelf.forProvider.collation",fieldPath=".forProvider.collation",messageExpression="'is immutable (was ' + oldSelf.forProvider.collation + '): PostgreSQL cannot change the collation of a database; create a new PostgresqlDatabase'"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.forProvider.instance) || (has(self.forProvider.instance) && self.forProvider.instance == oldSelf.forProvider.instance)",fieldPath=".forProvider.instance",messageExpression="'cannot be changed or removed once set (was ' + oldSelf.forProvider.instance + '): a database cannot move to another instance; create a new PostgresqlDatabase'"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.forProvider.clusterInstance) || (has(self.forProvider.clusterInstance) && self.forProvider.clusterInstance == oldSelf.forProvider.clusterInstance)",fieldPath=".forProvider.clusterInstance",messageExpression="'cannot be changed or removed once set (was ' + oldSelf.forProvider.clusterInstance + '): a database cannot move to another instance; create a new PostgresqlDatabase'"
type PostgresqlDatabaseSpec struct {
	// WriteConnectionSecretToReference names the secret of this namespace
	// that the database's connection details are written to. Optional: the
	// owner's PostgresqlUser secret carries what clients need.
	// +optional
	WriteConnectionSecretToReference *xpv2.LocalSecretReference `json:"writeConnectionSecretToRef,omitempty"`

	// ManagementPolicies are the actions the provider may take on the
	// database: ["*"] (the default) for all, or ["Observe"] to only observe an
	// existing database (an import).
	// +optional
	// +kubebuilder:default={"*"}
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	// ForProvider holds the settings of the database.
	ForProvider PostgresqlDatabaseParameters `json:"forProvider"`
}

// A PostgresqlDatabaseStatus represents the observed state of a
// PostgresqlDatabase.
type PostgresqlDatabaseStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	// AtProvider is what Cloud SQL and PostgreSQL last reported about the
	// database.
	AtProvider clusterv1alpha1.PostgresqlDatabaseObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A PostgresqlDatabase is a database, belonging to a namespace, of a Cloud SQL
// for PostgreSQL instance of the same namespace or of a cluster-scoped instance
// that admits the namespace. It is owned by one PostgresqlUser of its
// namespace: the provider revokes CONNECT from everyone else. Its Cloud SQL
// project and credentials are its instance's. Deleting one drops the database
// only when it carries the annotation
// cloudsql.travelaudience.com/allow-deletion: "true".
// +kubebuilder:validation:XValidation:rule="has(self.spec.forProvider.name) || (size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z_][a-z0-9_$-]*$') && !(self.metadata.name in ['postgres', 'template0', 'template1', 'cloudsqladmin']))",fieldPath=".spec.forProvider.name",message="is required when metadata.name is not a valid database name (at most 63 lowercase letters, digits, '_', '$' or '-', not postgres, template0, template1 or cloudsqladmin): name the database here"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="INSTANCE",type="string",JSONPath=".spec.forProvider.instance"
// +kubebuilder:printcolumn:name="CLUSTER INSTANCE",type="string",JSONPath=".spec.forProvider.clusterInstance"
// +kubebuilder:printcolumn:name="DATABASE",type="string",JSONPath=".status.atProvider.name"
// +kubebuilder:printcolumn:name="OWNER",type="string",JSONPath=".status.atProvider.owner"
// +kubebuilder:printcolumn:name="CHARSET",type="string",JSONPath=".spec.forProvider.charset",priority=1
// +kubebuilder:printcolumn:name="COLLATION",type="string",JSONPath=".spec.forProvider.collation",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.instance"
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.clusterInstance"
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.instanceRef.name"
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.clusterInstanceRef.name"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudsql}
type PostgresqlDatabase struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PostgresqlDatabaseSpec   `json:"spec"`
	Status PostgresqlDatabaseStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PostgresqlDatabaseList contains a list of PostgresqlDatabase.
type PostgresqlDatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PostgresqlDatabase `json:"items"`
}
