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

// AnnotationDatabaseName on a pod that names a PostgresqlUser (with
// AnnotationUserName) picks, among the databases that user owns, the one the
// injector sets as PGDATABASE: the database's name in PostgreSQL. Without it,
// the user's connection secret's database key is used.
const AnnotationDatabaseName = Group + "/postgresql-database"

// Defaults of a PostgresqlDatabase, Cloud SQL's own.
const (
	DefaultCharset   = "UTF8"
	DefaultCollation = "en_US.UTF8"
)

// PostgresqlDatabaseSettings are the settings of a database that both
// PostgresqlDatabase kinds share.
type PostgresqlDatabaseSettings struct {
	// Name of the database in PostgreSQL. When omitted, metadata.name is used,
	// which must then be a valid name. 1 to 63 characters: lowercase letters,
	// digits, '_', '$' and '-', starting with a letter or '_'; not postgres,
	// template0, template1 or cloudsqladmin, which every Cloud SQL instance
	// has. Immutable.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z_][a-z0-9_$-]*$')",message="must start with a lowercase letter or '_' and hold only lowercase letters, digits, '_', '$' and '-'"
	// +kubebuilder:validation:XValidation:rule="!(self in ['postgres', 'template0', 'template1', 'cloudsqladmin'])",messageExpression="'is reserved: every Cloud SQL instance has a database ' + self + '; choose another name'"
	Name *string `json:"name,omitempty"`

	// Charset is the character set of the database, for example UTF8.
	// Immutable.
	// +optional
	// +kubebuilder:default=UTF8
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_]+$')",message="must be a PostgreSQL character set name such as UTF8: letters, digits and '_'"
	Charset string `json:"charset,omitempty"`

	// Collation of the database, for example en_US.UTF8 or C. Immutable.
	// +optional
	// +kubebuilder:default="en_US.UTF8"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_.@-]+$')",message="must be a collation name such as en_US.UTF8 or C: letters, digits, '_', '.', '@' and '-'"
	Collation string `json:"collation,omitempty"`
}

// PostgresqlDatabaseParameters are the configurable fields of a database of a
// Cloud SQL for PostgreSQL instance.
// +kubebuilder:validation:XValidation:rule="has(self.instance) || has(self.instanceRef) || has(self.instanceSelector)",fieldPath=".instance",message="is required: name the PostgresqlInstance the database belongs to with instance, instanceRef or instanceSelector"
type PostgresqlDatabaseParameters struct {
	// Instance is the metadata.name of the PostgresqlInstance the database
	// belongs to. Set it, or let instanceRef or instanceSelector set it. Cannot
	// be changed once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Instance string `json:"instance,omitempty"`

	// InstanceRef names the PostgresqlInstance the database belongs to; it
	// sets instance.
	// +optional
	InstanceRef *xpv2.Reference `json:"instanceRef,omitempty"`

	// InstanceSelector selects, by its labels, the PostgresqlInstance the
	// database belongs to; it sets instanceRef and instance.
	// +optional
	InstanceSelector *xpv2.Selector `json:"instanceSelector,omitempty"`

	PostgresqlDatabaseSettings `json:",inline"`

	// Owner is the metadata.name of the PostgresqlUser, of the same instance,
	// that owns the database: the only login that may connect to it and use
	// it. Without an owner the database stays owned by cloudsqlsuperuser and
	// no application login can own it. The owner may change.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Owner string `json:"owner,omitempty"`

	// OwnerRef names the PostgresqlUser that owns the database; it sets owner.
	// +optional
	OwnerRef *xpv2.Reference `json:"ownerRef,omitempty"`

	// OwnerSelector selects, by its labels, the PostgresqlUser that owns the
	// database; it sets ownerRef and owner.
	// +optional
	OwnerSelector *xpv2.Selector `json:"ownerSelector,omitempty"`
}

// PostgresqlDatabaseObservation is the observed state of a database, as Cloud
// SQL and PostgreSQL report it.
type PostgresqlDatabaseObservation struct {
	// Instance is the name of the Cloud SQL instance that holds the database.
	Instance string `json:"instance,omitempty"`

	// Name of the database in PostgreSQL.
	Name string `json:"name,omitempty"`

	// Charset of the database.
	Charset string `json:"charset,omitempty"`

	// Collation of the database.
	Collation string `json:"collation,omitempty"`

	// Owner is the role that owns the database, as read with SQL.
	Owner string `json:"owner,omitempty"`

	// PublicConnect is true while PUBLIC (every login of the instance) may
	// still connect to the database; the provider revokes that. Absent until
	// read with SQL.
	PublicConnect *bool `json:"publicConnect,omitempty"`
}

// A PostgresqlDatabaseSpec defines the desired state of a PostgresqlDatabase.
// The name, charset and collation cannot change once the provider may create
// the database; while it only observes (managementPolicies Observe), they may
// be corrected to describe an imported database.
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || has(self.forProvider.name) == has(oldSelf.forProvider.name)",fieldPath=".forProvider.name",message="cannot be added or removed after creation: the database keeps the name it was created with"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || !has(self.forProvider.name) || !has(oldSelf.forProvider.name) || self.forProvider.name == oldSelf.forProvider.name",fieldPath=".forProvider.name",messageExpression="'is immutable: the database is named ' + oldSelf.forProvider.name + '; create a new PostgresqlDatabase to use another name'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.charset == oldSelf.forProvider.charset",fieldPath=".forProvider.charset",messageExpression="'is immutable (was ' + oldSelf.forProvider.charset + '): PostgreSQL cannot change the character set of a database; create a new PostgresqlDatabase'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.collation == oldSelf.forProvider.collation",fieldPath=".forProvider.collation",messageExpression="'is immutable (was ' + oldSelf.forProvider.collation + '): PostgreSQL cannot change the collation of a database; create a new PostgresqlDatabase'"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.forProvider.instance) || (has(self.forProvider.instance) && self.forProvider.instance == oldSelf.forProvider.instance)",fieldPath=".forProvider.instance",messageExpression="'cannot be changed or removed once set (was ' + oldSelf.forProvider.instance + '): a database cannot move to another instance; create a new PostgresqlDatabase'"
// +kubebuilder:validation:XValidation:rule="!has(self.writeConnectionSecretToRef) || size(self.writeConnectionSecretToRef.namespace) > 0",fieldPath=".writeConnectionSecretToRef.namespace",message="must be a namespace name: a PostgresqlDatabase is cluster-scoped, so its connection secret's namespace must be given"
type PostgresqlDatabaseSpec struct {
	// WriteConnectionSecretToReference names the secret the database's
	// connection details are written to. Optional: the owner's
	// PostgresqlUser secret carries what clients need.
	// +optional
	WriteConnectionSecretToReference *xpv2.SecretReference `json:"writeConnectionSecretToRef,omitempty"`

	// ManagementPolicies are the actions the provider may take on the
	// database: ["*"] (the default) for all, or ["Observe"] to only observe an
	// existing database (an import).
	// +optional
	// +kubebuilder:default={"*"}
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	// DeletionPolicy says what happens to the database when this object is
	// deleted: Delete (drop it, which also needs the annotation
	// cloudsql.travelaudience.com/allow-deletion: "true") or Orphan (keep it).
	// +optional
	// +kubebuilder:default=Delete
	DeletionPolicy xpv2.DeletionPolicy `json:"deletionPolicy,omitempty"`

	// ForProvider holds the settings of the database.
	ForProvider PostgresqlDatabaseParameters `json:"forProvider"`
}

// A PostgresqlDatabaseStatus represents the observed state of a
// PostgresqlDatabase.
type PostgresqlDatabaseStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	// AtProvider is what Cloud SQL and PostgreSQL last reported about the
	// database.
	AtProvider PostgresqlDatabaseObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A PostgresqlDatabase is a database of a Cloud SQL for PostgreSQL instance,
// owned by one PostgresqlUser: the provider revokes CONNECT from everyone
// else. Its Cloud SQL project and credentials are its instance's. Deleting one
// drops the database only when it carries the annotation
// cloudsql.travelaudience.com/allow-deletion: "true".
// +kubebuilder:validation:XValidation:rule="has(self.spec.forProvider.name) || (size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z_][a-z0-9_$-]*$') && !(self.metadata.name in ['postgres', 'template0', 'template1', 'cloudsqladmin']))",fieldPath=".spec.forProvider.name",message="is required when metadata.name is not a valid database name (at most 63 lowercase letters, digits, '_', '$' or '-', not postgres, template0, template1 or cloudsqladmin): name the database here"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="INSTANCE",type="string",JSONPath=".spec.forProvider.instance"
// +kubebuilder:printcolumn:name="DATABASE",type="string",JSONPath=".status.atProvider.name"
// +kubebuilder:printcolumn:name="OWNER",type="string",JSONPath=".status.atProvider.owner"
// +kubebuilder:printcolumn:name="CHARSET",type="string",JSONPath=".spec.forProvider.charset",priority=1
// +kubebuilder:printcolumn:name="COLLATION",type="string",JSONPath=".spec.forProvider.collation",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.instance"
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.instanceRef.name"
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cloudsql},shortName=pgdb
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
