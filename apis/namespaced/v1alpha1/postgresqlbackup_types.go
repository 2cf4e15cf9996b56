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

// PostgresqlBackupParameters are the configurable fields of an on-demand
// backup of a Cloud SQL for PostgreSQL instance, named either as a
// PostgresqlInstance of the backup's namespace (instance, instanceRef,
// instanceSelector) or as a cluster-scoped PostgresqlInstance
// (clusterInstance, clusterInstanceRef, clusterInstanceSelector) that admits
// the namespace.
// +kubebuilder:validation:XValidation:rule="has(self.instance) || has(self.instanceRef) || has(self.instanceSelector) || has(self.clusterInstance) || has(self.clusterInstanceRef) || has(self.clusterInstanceSelector)",fieldPath=".instance",message="is required: name the PostgresqlInstance to back up, one of this namespace with instance, instanceRef or instanceSelector, or a cluster-scoped one with clusterInstance, clusterInstanceRef or clusterInstanceSelector"
// +kubebuilder:validation:XValidation:rule="!((has(self.instance) || has(self.instanceRef) || has(self.instanceSelector)) && (has(self.clusterInstance) || has(self.clusterInstanceRef) || has(self.clusterInstanceSelector)))",fieldPath=".clusterInstance",message="cannot be used together with instance, instanceRef or instanceSelector: a backup is of one PostgresqlInstance, either of this namespace (instance*) or cluster-scoped (clusterInstance*); remove one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.instanceRef) || !has(self.instanceRef.namespace) || size(self.instanceRef.namespace) == 0",fieldPath=".instanceRef.namespace",message="must be omitted: a namespaced PostgresqlBackup may back up only a PostgresqlInstance of its own namespace; use clusterInstanceRef for a cluster-scoped instance"
// +kubebuilder:validation:XValidation:rule="!has(self.instanceSelector) || !has(self.instanceSelector.namespace) || size(self.instanceSelector.namespace) == 0",fieldPath=".instanceSelector.namespace",message="must be omitted: a namespaced PostgresqlBackup may back up only a PostgresqlInstance of its own namespace; use clusterInstanceSelector for a cluster-scoped instance"
type PostgresqlBackupParameters struct {
	// Instance is the metadata.name of the PostgresqlInstance, of this
	// namespace, to back up. Set it, or let instanceRef or instanceSelector
	// set it. Cannot be changed once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Instance string `json:"instance,omitempty"`

	// InstanceRef names the PostgresqlInstance, of this namespace, to back
	// up; it sets instance. Its namespace must be omitted.
	// +optional
	InstanceRef *xpv2.NamespacedReference `json:"instanceRef,omitempty"`

	// InstanceSelector selects, by its labels, the PostgresqlInstance of this
	// namespace to back up; it sets instanceRef and instance. Its namespace
	// must be omitted.
	// +optional
	InstanceSelector *xpv2.NamespacedSelector `json:"instanceSelector,omitempty"`

	// ClusterInstance is the metadata.name of the cluster-scoped
	// PostgresqlInstance to back up; it must admit this namespace (its
	// spec.tenancy or spec.injection). Set it, or let clusterInstanceRef or
	// clusterInstanceSelector set it. Cannot be changed once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterInstance string `json:"clusterInstance,omitempty"`

	// ClusterInstanceRef names the cluster-scoped PostgresqlInstance to back
	// up; it sets clusterInstance.
	// +optional
	ClusterInstanceRef *xpv2.Reference `json:"clusterInstanceRef,omitempty"`

	// ClusterInstanceSelector selects, by its labels, the cluster-scoped
	// PostgresqlInstance to back up; it sets clusterInstanceRef and
	// clusterInstance.
	// +optional
	ClusterInstanceSelector *xpv2.Selector `json:"clusterInstanceSelector,omitempty"`

	clusterv1alpha1.PostgresqlBackupSettings `json:",inline"`
}

// A PostgresqlBackupSpec defines the desired state of a namespaced
// PostgresqlBackup. A backup is taken once: nothing of it can change
// afterwards.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.forProvider.instance) || (has(self.forProvider.instance) && self.forProvider.instance == oldSelf.forProvider.instance)",fieldPath=".forProvider.instance",messageExpression="'cannot be changed or removed once set (was ' + oldSelf.forProvider.instance + '): a backup is of one instance; create a new PostgresqlBackup to back up another'"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.forProvider.clusterInstance) || (has(self.forProvider.clusterInstance) && self.forProvider.clusterInstance == oldSelf.forProvider.clusterInstance)",fieldPath=".forProvider.clusterInstance",messageExpression="'cannot be changed or removed once set (was ' + oldSelf.forProvider.clusterInstance + '): a backup is of one instance; create a new PostgresqlBackup to back up another'"
// +kubebuilder:validation:XValidation:rule="has(self.forProvider.description) == has(oldSelf.forProvider.description) && (!has(self.forProvider.description) || self.forProvider.description == oldSelf.forProvider.description)",fieldPath=".forProvider.description",message="is immutable: Cloud SQL keeps the description a backup was taken with; create a new PostgresqlBackup for another"
type PostgresqlBackupSpec struct {
	// ManagementPolicies are the actions the provider may take on the backup:
	// ["*"] (the default) for all, or ["Observe"] to only observe an existing
	// backup run, named by the crossplane.io/external-name annotation (its ID).
	// +optional
	// +kubebuilder:default={"*"}
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	// ForProvider holds the settings of the backup.
	ForProvider PostgresqlBackupParameters `json:"forProvider"`
}

// A PostgresqlBackupStatus represents the observed state of a
// PostgresqlBackup.
type PostgresqlBackupStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	// AtProvider is what Cloud SQL last reported about the backup run.
	AtProvider clusterv1alpha1.PostgresqlBackupObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A PostgresqlBackup is an on-demand backup, belonging to a namespace, of a
// Cloud SQL for PostgreSQL instance of the same namespace or of a
// cluster-scoped instance that admits the namespace: creating one takes the
// backup, which is Ready once Cloud SQL reports it SUCCESSFUL. Its ID is in
// status.atProvider.id and the crossplane.io/external-name annotation. Its
// Cloud SQL project and credentials are its instance's. Deleting one deletes
// the backup only when it carries the annotation
// cloudsql.travelaudience.com/allow-deletion: "true".
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="INSTANCE",type="string",JSONPath=".spec.forProvider.instance"
// +kubebuilder:printcolumn:name="CLUSTER INSTANCE",type="string",JSONPath=".spec.forProvider.clusterInstance"
// +kubebuilder:printcolumn:name="STATE",type="string",JSONPath=".status.atProvider.state"
// +kubebuilder:printcolumn:name="SIZE",type="integer",JSONPath=".status.atProvider.sizeBytes"
// +kubebuilder:printcolumn:name="ENDED",type="date",JSONPath=".status.atProvider.endTime"
// +kubebuilder:printcolumn:name="ID",type="string",JSONPath=".status.atProvider.id",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudsql}
type PostgresqlBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PostgresqlBackupSpec   `json:"spec"`
	Status PostgresqlBackupStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PostgresqlBackupList contains a list of PostgresqlBackup.
type PostgresqlBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PostgresqlBackup `json:"items"`
}
