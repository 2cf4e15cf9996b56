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

// AnnotationUserName on a pod names the PostgresqlUser whose instance's proxy
// and whose credentials the injector adds to the pod: name (the one of the
// pod's namespace, else the cluster-scoped one; a name of both is denied),
// namespace/name, or /name for the cluster-scoped one.
const AnnotationUserName = Group + "/postgresqluser-name"

// LabelUser is set, with the metadata.name of a cluster-scoped PostgresqlUser
// as its value, on every copy of that user's connection secret the provider
// makes in other namespaces, so that they can be found and removed with it.
const LabelUser = Group + "/postgresqluser"

// Types of PostgresqlUser, as Cloud SQL names them.
const (
	// UserTypeBuiltIn is a login with a password, which the provider
	// generates.
	UserTypeBuiltIn = "BUILT_IN"
	// UserTypeCloudIAMServiceAccount is a Google service account that logs
	// in with IAM database authentication.
	UserTypeCloudIAMServiceAccount = "CLOUD_IAM_SERVICE_ACCOUNT"
	// UserTypeCloudIAMUser is a Google account of a person that logs in with
	// IAM database authentication.
	UserTypeCloudIAMUser = "CLOUD_IAM_USER"
)

// ServiceAccountEmailSuffix ends the email of every Google service account; a
// CLOUD_IAM_SERVICE_ACCOUNT user's login name is its email without it.
const ServiceAccountEmailSuffix = ".gserviceaccount.com"

// PostgresqlUserSettings are the settings of a login that both PostgresqlUser
// kinds share.
// +kubebuilder:validation:XValidation:rule="self.type == 'BUILT_IN' || has(self.iamPrincipal)",fieldPath=".iamPrincipal",message="is required for CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER users: give the email of the service account or of the person"
// +kubebuilder:validation:XValidation:rule="self.type != 'BUILT_IN' || !has(self.iamPrincipal)",fieldPath=".iamPrincipal",message="must be omitted for a BUILT_IN user, which logs in with a password; remove it, or set type to CLOUD_IAM_SERVICE_ACCOUNT or CLOUD_IAM_USER"
// +kubebuilder:validation:XValidation:rule="self.type != 'CLOUD_IAM_SERVICE_ACCOUNT' || !has(self.iamPrincipal) || self.iamPrincipal.endsWith('.gserviceaccount.com')",fieldPath=".iamPrincipal",message="must be a service account's email, ending in .gserviceaccount.com, for type CLOUD_IAM_SERVICE_ACCOUNT; for a person's account use type CLOUD_IAM_USER"
// +kubebuilder:validation:XValidation:rule="self.type != 'CLOUD_IAM_USER' || !has(self.iamPrincipal) || !self.iamPrincipal.endsWith('.gserviceaccount.com')",fieldPath=".iamPrincipal",message="is a service account's email: use type CLOUD_IAM_SERVICE_ACCOUNT for it; CLOUD_IAM_USER is for a person's account"
// +kubebuilder:validation:XValidation:rule="self.type == 'BUILT_IN' || !has(self.passwordRotation)",fieldPath=".passwordRotation",message="must be omitted for CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER users, which have no password; remove it, or set type to BUILT_IN"
// +kubebuilder:validation:XValidation:rule="self.type == 'BUILT_IN' || !has(self.name)",fieldPath=".name",message="must be omitted for CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER users: their login name follows from iamPrincipal (the email, without .gserviceaccount.com for a service account)"
type PostgresqlUserSettings struct {
	// Name of the login (role) in PostgreSQL, for BUILT_IN users. When
	// omitted, metadata.name is used, which must then be a valid name. 1 to 63
	// characters: lowercase letters, digits, '_', '$' and '-', starting with a
	// letter or '_'; not postgres and not starting with cloudsql, which Cloud
	// SQL reserves. Immutable.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z_][a-z0-9_$-]*$')",message="must start with a lowercase letter or '_' and hold only lowercase letters, digits, '_', '$' and '-'"
	// +kubebuilder:validation:XValidation:rule="self != 'postgres' && !self.startsWith('cloudsql')",messageExpression="'is reserved: ' + self + (self == 'postgres' ? ' is the administrator of every Cloud SQL instance' : ': Cloud SQL reserves the names that start with cloudsql') + '; choose another name'"
	Name *string `json:"name,omitempty"`

	// Type of the login: BUILT_IN (a password, which the provider generates
	// and stores in the connection secret), CLOUD_IAM_SERVICE_ACCOUNT or
	// CLOUD_IAM_USER (IAM database authentication, no password). Immutable.
	// +optional
	// +kubebuilder:default=BUILT_IN
	// +kubebuilder:validation:Enum=BUILT_IN;CLOUD_IAM_SERVICE_ACCOUNT;CLOUD_IAM_USER
	Type string `json:"type,omitempty"`

	// IAMPrincipal is the email of the Google service account (type
	// CLOUD_IAM_SERVICE_ACCOUNT) or of the person (type CLOUD_IAM_USER) that
	// logs in; required for those types, not allowed for BUILT_IN. A service
	// account's login name is its email without .gserviceaccount.com, a
	// person's the whole email. Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=254
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+([.][A-Za-z0-9-]+)+$')",message="must be an email address, for example app@my-project.iam.gserviceaccount.com or jane@example.com"
	IAMPrincipal string `json:"iamPrincipal,omitempty"`

	// PasswordRotation has the provider give a BUILT_IN login a new
	// generated password at a period. When omitted, the password changes
	// only when it is lost or edited in the connection secret.
	// +optional
	PasswordRotation *PasswordRotation `json:"passwordRotation,omitempty"`
}

// PostgresqlUserParameters are the configurable fields of a login of a Cloud
// SQL for PostgreSQL instance.
// +kubebuilder:validation:XValidation:rule="has(self.instance) || has(self.instanceRef) || has(self.instanceSelector)",fieldPath=".instance",message="is required: name the PostgresqlInstance the user belongs to with instance, instanceRef or instanceSelector"
type PostgresqlUserParameters struct {
	// Instance is the metadata.name of the PostgresqlInstance the user
	// belongs to. Set it, or let instanceRef or instanceSelector set it.
	// Cannot be changed once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Instance string `json:"instance,omitempty"`

	// InstanceRef names the PostgresqlInstance the user belongs to; it sets
	// instance.
	// +optional
	InstanceRef *xpv2.Reference `json:"instanceRef,omitempty"`

	// InstanceSelector selects, by its labels, the PostgresqlInstance the user
	// belongs to; it sets instanceRef and instance.
	// +optional
	InstanceSelector *xpv2.Selector `json:"instanceSelector,omitempty"`

	PostgresqlUserSettings `json:",inline"`

	// Injection narrows which namespaces' pods may request this user with the
	// annotation cloudsql.travelaudience.com/postgresqluser-name. When
	// omitted, or when allowedNamespaces is empty, the instance's
	// spec.injection decides.
	// +optional
	Injection *UserInjection `json:"injection,omitempty"`
}

// UserInjection narrows the namespaces that may request a cluster-scoped
// PostgresqlUser. A namespace must be allowed by the user's instance as well.
type UserInjection struct {
	// AllowedNamespaces are the names of the namespaces whose pods may request
	// this user, among those the instance allows. Empty: every namespace the
	// instance allows.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a namespace name: lowercase letters, digits and '-', starting and ending with a letter or digit ('*' is not allowed here: the instance's allow-list is the widest a user can have)"
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`
}

// PostgresqlUserObservation is the observed state of a login, as Cloud SQL and
// PostgreSQL report it.
type PostgresqlUserObservation struct {
	// Instance is the name of the Cloud SQL instance that holds the login.
	Instance string `json:"instance,omitempty"`

	// Name of the login in PostgreSQL.
	Name string `json:"name,omitempty"`

	// Type of the login as Cloud SQL reports it.
	Type string `json:"type,omitempty"`

	// IAMStatus is Cloud SQL's status of an IAM login's database
	// authentication.
	IAMStatus string `json:"iamStatus,omitempty"`

	// SuperuserMember is true while the login is a member of
	// cloudsqlsuperuser, as every login created through Cloud SQL starts; the
	// provider revokes that. Absent until read with SQL.
	SuperuserMember *bool `json:"superuserMember,omitempty"`

	// CreateRole is true while the login may create roles; the provider
	// revokes that. Absent until read with SQL.
	CreateRole *bool `json:"createRole,omitempty"`

	// CreateDB is true while the login may create databases; the provider
	// revokes that. Absent until read with SQL.
	CreateDB *bool `json:"createDB,omitempty"`

	// Databases are the databases the login owns, by name, as read with SQL.
	// +listType=atomic
	Databases []string `json:"databases,omitempty"`
}

// A PostgresqlUserSpec defines the desired state of a PostgresqlUser. The
// name, type and IAM principal cannot change once the provider may create the
// login; while it only observes (managementPolicies Observe), they may be
// corrected to describe an imported login.
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || has(self.forProvider.name) == has(oldSelf.forProvider.name)",fieldPath=".forProvider.name",message="cannot be added or removed after creation: the login keeps the name it was created with"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || !has(self.forProvider.name) || !has(oldSelf.forProvider.name) || self.forProvider.name == oldSelf.forProvider.name",fieldPath=".forProvider.name",messageExpression="'is immutable: the login is named ' + oldSelf.forProvider.name + '; create a new PostgresqlUser to use another name'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.type == oldSelf.forProvider.type",fieldPath=".forProvider.type",messageExpression="'is immutable (was ' + oldSelf.forProvider.type + '): create a new PostgresqlUser for another type of login'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || (has(self.forProvider.iamPrincipal) == has(oldSelf.forProvider.iamPrincipal) && (!has(self.forProvider.iamPrincipal) || self.forProvider.iamPrincipal == oldSelf.forProvider.iamPrincipal))",fieldPath=".forProvider.iamPrincipal",message="is immutable: the login's name follows from it; create a new PostgresqlUser for another principal"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.forProvider.instance) || (has(self.forProvider.instance) && self.forProvider.instance == oldSelf.forProvider.instance)",fieldPath=".forProvider.instance",messageExpression="'cannot be changed or removed once set (was ' + oldSelf.forProvider.instance + '): a login cannot move to another instance; create a new PostgresqlUser'"
// +kubebuilder:validation:XValidation:rule="self.forProvider.type != 'BUILT_IN' || has(self.writeConnectionSecretToRef) || (has(self.managementPolicies) && !self.managementPolicies.exists(p, p == '*' || p == 'Create'))",fieldPath=".writeConnectionSecretToRef",message="is required for a BUILT_IN user the provider may create: its generated password is stored there before the login is created, so that it is never lost"
// +kubebuilder:validation:XValidation:rule="!has(self.writeConnectionSecretToRef) || size(self.writeConnectionSecretToRef.namespace) > 0",fieldPath=".writeConnectionSecretToRef.namespace",message="must be a namespace name: a PostgresqlUser is cluster-scoped, so its connection secret's namespace must be given"
type PostgresqlUserSpec struct {
	// WriteConnectionSecretToReference names the secret the login's
	// credentials and connection details are written to: username, password
	// (BUILT_IN only), the instance's address and connection name, the
	// databases the login owns and a pgpass line. Required for BUILT_IN users.
	// +optional
	WriteConnectionSecretToReference *xpv2.SecretReference `json:"writeConnectionSecretToRef,omitempty"`

	// ManagementPolicies are the actions the provider may take on the login:
	// ["*"] (the default) for all, or ["Observe"] to only observe an existing
	// login (an import).
	// +optional
	// +kubebuilder:default={"*"}
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	// DeletionPolicy says what happens to the login when this object is
	// deleted: Delete (drop it; a login that still owns a database is kept
	// until the database has another owner) or Orphan (keep it).
	// +optional
	// +kubebuilder:default=Delete
	DeletionPolicy xpv2.DeletionPolicy `json:"deletionPolicy,omitempty"`

	// ForProvider holds the settings of the login.
	ForProvider PostgresqlUserParameters `json:"forProvider"`
}

// A PostgresqlUserStatus represents the observed state of a PostgresqlUser.
type PostgresqlUserStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	// AtProvider is what Cloud SQL and PostgreSQL last reported about the
	// login.
	AtProvider PostgresqlUserObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A PostgresqlUser is a login of a Cloud SQL for PostgreSQL instance with the
// least privileges: it can log in and own the databases that name it as owner,
// and nothing else. A BUILT_IN user's generated password is published in its
// connection secret; pods ask for it with the annotation
// cloudsql.travelaudience.com/postgresqluser-name. Its Cloud SQL project and
// credentials are its instance's.
// +kubebuilder:validation:XValidation:rule="self.spec.forProvider.type != 'BUILT_IN' || has(self.spec.forProvider.name) || (size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z_][a-z0-9_$-]*$') && self.metadata.name != 'postgres' && !self.metadata.name.startsWith('cloudsql'))",fieldPath=".spec.forProvider.name",message="is required when metadata.name is not a valid login name (at most 63 lowercase letters, digits, '_', '$' or '-', not postgres, not starting with cloudsql): name the login here"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="INSTANCE",type="string",JSONPath=".spec.forProvider.instance"
// +kubebuilder:printcolumn:name="LOGIN",type="string",JSONPath=".status.atProvider.name"
// +kubebuilder:printcolumn:name="TYPE",type="string",JSONPath=".spec.forProvider.type"
// +kubebuilder:printcolumn:name="DATABASES",type="string",JSONPath=".status.atProvider.databases",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.instance"
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.instanceRef.name"
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cloudsql},shortName=pgu
type PostgresqlUser struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PostgresqlUserSpec   `json:"spec"`
	Status PostgresqlUserStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PostgresqlUserList contains a list of PostgresqlUser.
type PostgresqlUserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PostgresqlUser `json:"items"`
}
