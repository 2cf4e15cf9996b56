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

// LabelUser is set, with the metadata.name of a namespaced PostgresqlUser as
// its value, on the secrets the provider copies for it. It differs from the
// cluster-scoped kind's label so that the copies of two users of the same name,
// one of each kind, never mix.
const LabelUser = Group + "/postgresqluser"

// PostgresqlUserParameters are the configurable fields of a login of a Cloud
// SQL for PostgreSQL instance, named either as a PostgresqlInstance of the
// user's namespace (instance, instanceRef, instanceSelector) or as a
// cluster-scoped PostgresqlInstance (clusterInstance, clusterInstanceRef,
// clusterInstanceSelector) whose spec.injection admits the namespace.
// +kubebuilder:validation:XValidation:rule="has(self.instance) || has(self.instanceRef) || has(self.instanceSelector) || has(self.clusterInstance) || has(self.clusterInstanceRef) || has(self.clusterInstanceSelector)",fieldPath=".instance",message="is required: name the PostgresqlInstance the user belongs to, one of this namespace with instance, instanceRef or instanceSelector, or a cluster-scoped one with clusterInstance, clusterInstanceRef or clusterInstanceSelector"
// +kubebuilder:validation:XValidation:rule="!((has(self.instance) || has(self.instanceRef) || has(self.instanceSelector)) && (has(self.clusterInstance) || has(self.clusterInstanceRef) || has(self.clusterInstanceSelector)))",fieldPath=".clusterInstance",message="cannot be used together with instance, instanceRef or instanceSelector: a user belongs to one PostgresqlInstance, either of this namespace (instance*) or cluster-scoped (clusterInstance*); remove one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.instanceRef) || !has(self.instanceRef.namespace) || size(self.instanceRef.namespace) == 0",fieldPath=".instanceRef.namespace",message="must be omitted: a namespaced PostgresqlUser may belong only to a PostgresqlInstance of its own namespace; use clusterInstanceRef for a cluster-scoped instance"
// +kubebuilder:validation:XValidation:rule="!has(self.instanceSelector) || !has(self.instanceSelector.namespace) || size(self.instanceSelector.namespace) == 0",fieldPath=".instanceSelector.namespace",message="must be omitted: a namespaced PostgresqlUser may belong only to a PostgresqlInstance of its own namespace; use clusterInstanceSelector for a cluster-scoped instance"
type PostgresqlUserParameters struct {
	// Instance is the metadata.name of the PostgresqlInstance, of this
	// namespace, that the user belongs to. Set it, or let instanceRef or
	// instanceSelector set it. Cannot be changed once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Instance string `json:"instance,omitempty"`

	// InstanceRef names the PostgresqlInstance, of this namespace, that the
	// user belongs to; it sets instance. Its namespace must be omitted.
	// +optional
	InstanceRef *xpv2.NamespacedReference `json:"instanceRef,omitempty"`

	// InstanceSelector selects, by its labels, the PostgresqlInstance of this
	// namespace that the user belongs to; it sets instanceRef and instance.
	// Its namespace must be omitted.
	// +optional
	InstanceSelector *xpv2.NamespacedSelector `json:"instanceSelector,omitempty"`

	// ClusterInstance is the metadata.name of the cluster-scoped
	// PostgresqlInstance that the user belongs to; its spec.injection must
	// admit this namespace. Set it, or let clusterInstanceRef or
	// clusterInstanceSelector set it. Cannot be changed once set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterInstance string `json:"clusterInstance,omitempty"`

	// ClusterInstanceRef names the cluster-scoped PostgresqlInstance that the
	// user belongs to; it sets clusterInstance.
	// +optional
	ClusterInstanceRef *xpv2.Reference `json:"clusterInstanceRef,omitempty"`

	// ClusterInstanceSelector selects, by its labels, the cluster-scoped
	// PostgresqlInstance that the user belongs to; it sets clusterInstanceRef
	// and clusterInstance.
	// +optional
	ClusterInstanceSelector *xpv2.Selector `json:"clusterInstanceSelector,omitempty"`

	clusterv1alpha1.PostgresqlUserSettings `json:",inline"`
}

// A PostgresqlUserSpec defines the desired state of a namespaced
// PostgresqlUser. The name, type and IAM principal cannot change once the
// provider may create the login; while it only observes (managementPolicies
// Observe), they may be corrected to describe an imported login.
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || has(self.forProvider.name) == has(oldSelf.forProvider.name)",fieldPath=".forProvider.name",message="cannot be added or removed after creation: the login keeps the name it was created with"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || !has(self.forProvider.name) || !has(oldSelf.forProvider.name) || self.forProvider.name == oldSelf.forProvider.name",fieldPath=".forProvider.name",messageExpression="'is immutable: the login is named ' + oldSelf.forProvider.name + '; create a new PostgresqlUser to use another name'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.type == oldSelf.forProvider.type",fieldPath=".forProvider.type",messageExpression="'is immutable (was ' + oldSelf.forProvider.type + '): create a new PostgresqlUser for another type of login'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || (has(self.forProvider.iamPrincipal) == has(oldSelf.forProvider.iamPrincipal) && (!has(self.forProvider.iamPrincipal) || self.forProvider.iamPrincipal == oldSelf.forProvider.iamPrincipal))",fieldPath=".forProvider.iamPrincipal",message="is immutable: the login's name follows from it; create a new PostgresqlUser for another principal"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.forProvider.instance) || (has(self.forProvider.instance) && self.forProvider.instance == oldSelf.forProvider.instance)",fieldPath=".forProvider.instance",messageExpression="'cannot be changed or removed once set (was ' + oldSelf.forProvider.instance + '): a login cannot move to another instance; create a new PostgresqlUser'"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.forProvider.clusterInstance) || (has(self.forProvider.clusterInstance) && self.forProvider.clusterInstance == oldSelf.forProvider.clusterInstance)",fieldPath=".forProvider.clusterInstance",messageExpression="'cannot be changed or removed once set (was ' + oldSelf.forProvider.clusterInstance + '): a login cannot move to another instance; create a new PostgresqlUser'"
// +kubebuilder:validation:XValidation:rule="self.forProvider.type != 'BUILT_IN' || has(self.writeConnectionSecretToRef) || (has(self.managementPolicies) && !self.managementPolicies.exists(p, p == '*' || p == 'Create'))",fieldPath=".writeConnectionSecretToRef",message="is required for a BUILT_IN user the provider may create: its generated password is stored there, in the user's namespace, before the login is created, so that it is never lost"
type PostgresqlUserSpec struct {
	// WriteConnectionSecretToReference names the secret of this namespace
	// that the login's credentials and connection details are written to:
	// username, password (BUILT_IN only), the instance's address and
	// connection name, the databases the login owns and a pgpass line.
	// Required for BUILT_IN users.
	// +optional
	WriteConnectionSecretToReference *xpv2.LocalSecretReference `json:"writeConnectionSecretToRef,omitempty"`

	// ManagementPolicies are the actions the provider may take on the login:
	// ["*"] (the default) for all, or ["Observe"] to only observe an existing
	// login (an import).
	// +optional
	// +kubebuilder:default={"*"}
	ManagementPolicies xpv2.ManagementPolicies `json:"managementPolicies,omitempty"`

	// ForProvider holds the settings of the login.
	ForProvider PostgresqlUserParameters `json:"forProvider"`
}

// A PostgresqlUserStatus represents the observed state of a PostgresqlUser.
type PostgresqlUserStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	// AtProvider is what Cloud SQL and PostgreSQL last reported about the
	// login.
	AtProvider clusterv1alpha1.PostgresqlUserObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A PostgresqlUser is a login, belonging to a namespace, of a Cloud SQL for
// PostgreSQL instance of the same namespace or of a cluster-scoped instance
// that admits the namespace. It has the least privileges: it can log in and own
// the databases that name it as owner, and nothing else. A BUILT_IN user's
// generated password is published in its connection secret; pods of its
// namespace, and only those, ask for it with the annotation
// cloudsql.travelaudience.com/postgresqluser-name. Its Cloud SQL project and
// credentials are its instance's.
// +kubebuilder:validation:XValidation:rule="self.spec.forProvider.type != 'BUILT_IN' || has(self.spec.forProvider.name) || (size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z_][a-z0-9_$-]*$') && self.metadata.name != 'postgres' && !self.metadata.name.startsWith('cloudsql'))",fieldPath=".spec.forProvider.name",message="is required when metadata.name is not a valid login name (at most 63 lowercase letters, digits, '_', '$' or '-', not postgres, not starting with cloudsql): name the login here"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="INSTANCE",type="string",JSONPath=".spec.forProvider.instance"
// +kubebuilder:printcolumn:name="CLUSTER INSTANCE",type="string",JSONPath=".spec.forProvider.clusterInstance"
// +kubebuilder:printcolumn:name="LOGIN",type="string",JSONPath=".status.atProvider.name"
// +kubebuilder:printcolumn:name="TYPE",type="string",JSONPath=".spec.forProvider.type"
// +kubebuilder:printcolumn:name="DATABASES",type="string",JSONPath=".status.atProvider.databases",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.instance"
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.clusterInstance"
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.instanceRef.name"
// +kubebuilder:selectablefield:JSONPath=".spec.forProvider.clusterInstanceRef.name"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,cloudsql}
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
