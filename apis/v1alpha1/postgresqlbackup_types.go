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
)

// States of a backup run (status.atProvider.state), as Cloud SQL spells them.
const (
	BackupStateEnqueued   = "ENQUEUED"
	BackupStateRunning    = "RUNNING"
	BackupStateSuccessful = "SUCCESSFUL"
	BackupStateFailed     = "FAILED"
	// The states of a run being deleted, and deleted.
	BackupStateDeletionPending = "DELETION_PENDING"
	BackupStateDeletionFailed  = "DELETION_FAILED"
	BackupStateDeleted         = "DELETED"

	// BackupTypeOnDemand is the type (status.atProvider.type) of the
	// backups a PostgresqlBackup takes.
	BackupTypeOnDemand = "ON_DEMAND"
)

// PostgresqlBackupSettings are the settings of an on-demand backup that both
// PostgresqlBackup kinds share.
type PostgresqlBackupSettings struct {
	// Description of the backup, shown by Cloud SQL (gcloud sql backups
	// list) with the name and UID of this object appended, by which the
	// provider finds its backup again. At most 200 characters. Immutable.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	Description *string `json:"description,omitempty"`
}

// PostgresqlBackupParameters are the configurable fields of an on-demand
// backup of a Cloud SQL for PostgreSQL instance.
// +kubebuilder:validation:XValidation:rule="has(self.instance) || has(self.instanceRef) || has(self.instanceSelector)",fieldPath=".instance",message="is required: name the PostgresqlInstance to back up with instance, instanceRef or instanceSelector"
type PostgresqlBackupParameters struct {
	// Instance is the metadata.name of the PostgresqlInstance to back up. Set
	// it, or let instanceRef or instanceSelector set it. Cannot be changed
	// once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Instance string `json:"instance,omitempty"`

	// InstanceRef names the PostgresqlInstance to back up; it sets instance.
	// +optional
	InstanceRef *xpv2.Reference `json:"instanceRef,omitempty"`

	// InstanceSelector selects, by its labels, the PostgresqlInstance to back
	// up; it sets instanceRef and instance.
	// +optional
	InstanceSelector *xpv2.Selector `json:"instanceSelector,omitempty"`

	PostgresqlBackupSettings `json:",inline"`
}

// PostgresqlBackupObservation is the observed state of a backup run, as Cloud
// SQL reports it (backupRuns.get).
type PostgresqlBackupObservation struct {
	// ID of the backup run in Cloud SQL, also the object's
	// crossplane.io/external-name: what a restore names
	// (gcloud sql backups restore ID).
	ID string `json:"id,omitempty"`

	// Instance is the name of the Cloud SQL instance the backup is of.
	Instance string `json:"instance,omitempty"`

	// State of the backup run: ENQUEUED, RUNNING, SUCCESSFUL or FAILED;
	// DELETION_PENDING while it is deleted.
	State string `json:"state,omitempty"`

	// Type of the backup run: ON_DEMAND for the backups this kind takes.
	Type string `json:"type,omitempty"`

	// Description of the backup run, as Cloud SQL keeps it.
	Description string `json:"description,omitempty"`

	// EnqueuedTime is when Cloud SQL accepted the backup.
	EnqueuedTime *metav1.Time `json:"enqueuedTime,omitempty"`

	// StartTime is when the backup began.
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// EndTime is when the backup ended, successfully or not.
	EndTime *metav1.Time `json:"endTime,omitempty"`

	// SizeBytes is the backup's size as Cloud SQL bills it
	// (maxChargeableBytes), once it is known.
	SizeBytes *int64 `json:"sizeBytes,omitempty"`

	// Error is Cloud SQL's message when the backup FAILED.
	Error string `json:"error,omitempty"`

	// Location is where the backup is stored (a region or multi-region).
	Location string `json:"location,omitempty"`

	// DatabaseVersion is the PostgreSQL version of the instance when the
	// backup was taken, for example POSTGRES_16.
	DatabaseVersion string `json:"databaseVersion,omitempty"`
}

// A PostgresqlBackupSpec defines the desired state of a PostgresqlBackup. A
// backup is taken once: nothing of it can change afterwards.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.forProvider.instance) || (has(self.forProvider.instance) && self.forProvider.instance == oldSelf.forProvider.instance)",fieldPath=".forProvider.instance",messageExpression="'cannot be changed or removed once set (was ' + oldSelf.forProvider.instance + '): a backup is of one instance; create a new PostgresqlBackup to back up another'"
// +kubebuilder:validation:XValidation:rule="has(self.forProvider.description) == has(oldSelf.forProvider.description) && (!has(self.forProvider.description) || self.forProvider.description == oldSelf.forProvider.description)",fieldPath=".forProvider.description",message="is immutable: Cloud SQL keeps the description a backup was taken with; create a new PostgresqlBackup for another"
type PostgresqlBackupSpec struct {
	// ManagementPolicies are the actions the provider may take on the backup:
	// ["*"] (the default) for all, or ["Observe"] to only observe an existing
	// backup run, named by the crossplane.io/external-name annotation (its ID).
	// +optional
	// +kubebuilder:default={"*"}
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	// DeletionPolicy says what happens to the backup when this object is
	// deleted: Delete (delete the backup run, which also needs the annotation
	// cloudsql.travelaudience.com/allow-deletion: "true") or Orphan (keep it).
	// +optional
	// +kubebuilder:default=Delete
	DeletionPolicy xpv2.DeletionPolicy `json:"deletionPolicy,omitempty"`

	// ForProvider holds the settings of the backup.
	ForProvider PostgresqlBackupParameters `json:"forProvider"`
}

// A PostgresqlBackupStatus represents the observed state of a
// PostgresqlBackup.
type PostgresqlBackupStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	// AtProvider is what Cloud SQL last reported about the backup run.
	AtProvider PostgresqlBackupObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A PostgresqlBackup is an on-demand backup of a Cloud SQL for PostgreSQL
// instance (a backup run of type ON_DEMAND): creating one takes the backup,
// which is Ready once Cloud SQL reports it SUCCESSFUL. Its ID is in
// status.atProvider.id and the crossplane.io/external-name annotation. Its
// Cloud SQL project and credentials are its instance's. Deleting one deletes
// the backup only when it carries the annotation
// cloudsql.travelaudience.com/allow-deletion: "true".
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="INSTANCE",type="string",JSONPath=".spec.forProvider.instance"
// +kubebuilder:printcolumn:name="STATE",type="string",JSONPath=".status.atProvider.state"
// +kubebuilder:printcolumn:name="SIZE",type="integer",JSONPath=".status.atProvider.sizeBytes"
// +kubebuilder:printcolumn:name="ENDED",type="date",JSONPath=".status.atProvider.endTime"
// +kubebuilder:printcolumn:name="ID",type="string",JSONPath=".status.atProvider.id",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cloudsql},shortName=pgbackup
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
