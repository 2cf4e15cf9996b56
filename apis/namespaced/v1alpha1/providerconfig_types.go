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

// A ProviderConfigSpec says which Google Cloud project the instances of a
// namespace are managed in, and with which credentials, found in the same
// namespace.
// +kubebuilder:validation:XValidation:rule="self.credentials.source != 'None' || has(self.endpoint)",fieldPath=".credentials.source",message="None is only allowed together with spec.endpoint (an emulator or an endpoint that needs no credentials); Google's API needs credentials"
type ProviderConfigSpec struct {
	clusterv1alpha1.Project `json:",inline"`

	// Credentials the provider uses to call the Cloud SQL Admin API for the
	// instances of this namespace; the service account needs
	// roles/cloudsql.admin on the project.
	Credentials LocalCredentials `json:"credentials"`

	// ProxyCredentials is a key of a secret in this namespace holding the JSON
	// key of a service account with roles/cloudsql.client, which the injected
	// Cloud SQL Auth Proxy sidecars use. When omitted, the proxies authenticate
	// as the pod's own identity (GKE Workload Identity).
	// +optional
	ProxyCredentials *xpv2.LocalSecretKeySelector `json:"proxyCredentials,omitempty"`

	// ProxyLimits narrow, for the pods of this namespace's instances that
	// use this configuration, what they may ask of their proxy with the
	// proxy-* annotations; the platform's caps (the provider's configuration
	// file) still bound them.
	// +optional
	ProxyLimits *clusterv1alpha1.ProxyLimits `json:"proxyLimits,omitempty"`
}

// LocalCredentials are the credentials of a namespaced ProviderConfig: a key in
// a secret of its own namespace. The provider's own identity, environment and
// files belong to the platform, not to a namespace: use a ClusterProviderConfig
// for them.
// +kubebuilder:validation:XValidation:rule="self.source != 'Secret' || has(self.secretRef)",fieldPath=".secretRef",message="is required when source is Secret: name the secret of this namespace, and its key, holding the service-account key JSON"
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || (size(self.secretRef.name) > 0 && size(self.secretRef.key) > 0)",fieldPath=".secretRef",message="must give the name and key of the secret holding the service-account key JSON; neither may be empty"
type LocalCredentials struct {
	// Source of the credentials: Secret (a service-account key JSON in a
	// secret of this namespace), or None (no credentials at all, only for an
	// endpoint that needs none, such as the local emulator).
	// +kubebuilder:validation:Enum=Secret;None
	Source xpv2.CredentialsSource `json:"source"`

	// SecretRef is the key of a secret in this namespace that holds the
	// service-account key JSON.
	// +optional
	SecretRef *xpv2.LocalSecretKeySelector `json:"secretRef,omitempty"`
}

// A ProviderConfigStatus reflects the observed state of a ProviderConfig or a
// ClusterProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// +kubebuilder:object:root=true

// A ProviderConfig configures the Cloud SQL provider for the PostgresqlInstances
// of its namespace: the Google Cloud project, and credentials from a secret of
// the same namespace.
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="PROJECT",type="string",JSONPath=".spec.projectID"
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source",priority=1
// +kubebuilder:printcolumn:name="USERS",type="integer",JSONPath=".status.users"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,cloudsql}
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name may hold at most 63 characters: Crossplane records which resources use a ProviderConfig in labels, whose values are limited to 63"
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProviderConfigList contains a list of ProviderConfig.
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}

// +kubebuilder:object:root=true

// A ClusterProviderConfig configures the Cloud SQL provider for the namespaced
// PostgresqlInstances of the namespaces it names in spec.namespaces (none
// unless it names some): the Google Cloud project, and credentials from a
// secret of the namespace it names, the provider's own identity, its
// environment or a file.
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="PROJECT",type="string",JSONPath=".spec.projectID"
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source",priority=1
// +kubebuilder:printcolumn:name="USERS",type="integer",JSONPath=".status.users"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,cloudsql}
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name may hold at most 63 characters: Crossplane records which resources use a ProviderConfig in labels, whose values are limited to 63"
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterProviderConfigSpec `json:"spec"`
	Status ProviderConfigStatus      `json:"status,omitempty"`
}

// ImportPolicy says whether namespaced PostgresqlInstances may import Cloud
// SQL instances that no PostgresqlInstance created.
// +kubebuilder:validation:Enum=Deny;Allow
type ImportPolicy string

// Import policies of a ClusterProviderConfig.
const (
	// ImportDeny: a namespaced PostgresqlInstance neither observes nor takes
	// over a Cloud SQL instance that no PostgresqlInstance created.
	ImportDeny ImportPolicy = "Deny"
	// ImportAllow: a namespaced PostgresqlInstance of an admitted namespace
	// may observe (managementPolicies [Observe]) and then take over a Cloud
	// SQL instance of the project that no PostgresqlInstance created.
	ImportAllow ImportPolicy = "Allow"
)

// A ClusterProviderConfigSpec says which Google Cloud project the namespaced
// PostgresqlInstances that name it are managed in, with which credentials,
// and which namespaces may name it. The rules of the embedded
// ProviderConfigSpec apply to it.
type ClusterProviderConfigSpec struct {
	clusterv1alpha1.ProviderConfigSpec `json:",inline"`

	// Namespaces are the namespaces whose PostgresqlInstances may use this
	// configuration: those listed in names, and those whose labels match
	// selector. When omitted, or empty, no namespace may use it: a
	// namespace that names it gets an error condition on its instances,
	// and its pods get neither the proxy's key nor a password through it.
	// Whoever uses it manages Cloud SQL instances of spec.projectID with
	// these credentials, so lend it only to namespaces you trust with that.
	// +optional
	Namespaces *NamespaceSelection `json:"namespaces,omitempty"`

	// ImportPolicy says whether the namespaced PostgresqlInstances that use
	// this configuration may import a Cloud SQL instance of the project that
	// no PostgresqlInstance created: observe it (managementPolicies
	// [Observe]), then take it over (reset the postgres password, change,
	// delete it). Deny (the default) refuses both, so that a namespace can
	// reach only the Cloud SQL instances it created; Allow permits them.
	// Instances created through this configuration are not affected.
	// +optional
	// +kubebuilder:default=Deny
	ImportPolicy ImportPolicy `json:"importPolicy,omitempty"`
}

// NamespaceSelection names namespaces: those listed in names, and those whose
// labels match selector.
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || !has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",fieldPath=".selector.matchExpressions",message="each operator must be In, NotIn, Exists or DoesNotExist"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || !has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, !(e.operator in ['In', 'NotIn']) || (has(e.values) && size(e.values) > 0))",fieldPath=".selector.matchExpressions",message="operators In and NotIn need at least one value"
// +kubebuilder:validation:XValidation:rule="!has(self.selector) || !has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, !(e.operator in ['Exists', 'DoesNotExist']) || !has(e.values) || size(e.values) == 0)",fieldPath=".selector.matchExpressions",message="operators Exists and DoesNotExist take no values"
type NamespaceSelection struct {
	// Names are the names of the namespaces that may use this
	// configuration, for example [team-a, team-b]. There is no wildcard: to
	// lend it to many namespaces, use selector.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a namespace name: lowercase letters, digits and '-', starting and ending with a letter or digit"
	Names []string `json:"names,omitempty"`

	// Selector selects, by their labels, the namespaces that may use this
	// configuration, for example {matchLabels: {platform.example.com/cloudsql: shared}}.
	// Whoever may label namespaces can then use it, so prefer labels that
	// only administrators set, such as kubernetes.io/metadata.name. An empty
	// selector ({}) matches every namespace.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterProviderConfigList contains a list of ClusterProviderConfig.
type ClusterProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfig `json:"items"`
}

// +kubebuilder:object:root=true

// A ProviderConfigUsage records that a namespaced PostgresqlInstance uses a
// ProviderConfig or a ClusterProviderConfig, so that it is not deleted while
// in use.
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="CONFIG-KIND",type="string",JSONPath=".providerConfigRef.kind"
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type="string",JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,cloudsql}
type ProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}

// +kubebuilder:object:root=true

// ProviderConfigUsageList contains a list of ProviderConfigUsage.
type ProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfigUsage `json:"items"`
}

// +kubebuilder:object:root=true

// A ClusterProviderConfigUsage records that a managed resource uses a
// ClusterProviderConfig, so that it is not deleted while in use.
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type="string",JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,cloudsql}
type ClusterProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}

// +kubebuilder:object:root=true

// ClusterProviderConfigUsageList contains a list of ClusterProviderConfigUsage.
type ClusterProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfigUsage `json:"items"`
}
