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

// A ProviderConfigSpec says which Google Cloud project to manage Cloud SQL
// instances in, and with which credentials.
// +kubebuilder:validation:XValidation:rule="self.credentials.source != 'None' || has(self.endpoint)",fieldPath=".credentials.source",message="None is only allowed together with spec.endpoint (an emulator or an endpoint that needs no credentials); Google's API needs credentials"
type ProviderConfigSpec struct {
	Project `json:",inline"`

	// Credentials the provider uses to call the Cloud SQL Admin API; the
	// service account needs roles/cloudsql.admin on the project.
	Credentials ProviderCredentials `json:"credentials"`

	// ProxyCredentials is a secret key holding the JSON key of a service
	// account with roles/cloudsql.client, which the injected Cloud SQL Auth
	// Proxy sidecars use. When omitted, the proxies authenticate as the pod's
	// own identity (GKE Workload Identity), which keeps admin rights out of
	// application pods.
	// +optional
	ProxyCredentials *xpv2.SecretKeySelector `json:"proxyCredentials,omitempty"`

	// ProxyLimits bound what the pods of this configuration's instances may
	// ask of their proxy with the proxy-* annotations, within the caps of
	// the provider's configuration file.
	// +optional
	ProxyLimits *ProxyLimits `json:"proxyLimits,omitempty"`
}

// Project is the Google Cloud project a provider configuration manages
// instances in, and the endpoint of its Cloud SQL Admin API: the part of every
// kind of provider configuration that does not depend on where its credentials
// live.
type Project struct {
	// ProjectID is the Google Cloud project that holds the instances, for
	// example my-project-123456 (or example.com:my-project for domain-scoped
	// projects).
	// +kubebuilder:validation:MinLength=6
	// +kubebuilder:validation:MaxLength=94
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$')",message="must be a Google Cloud project ID: 6 to 30 lowercase letters, digits and hyphens, starting with a letter (not the project number or display name)"
	ProjectID string `json:"projectID"`

	// Endpoint overrides the base URL of the Cloud SQL Admin API, for example
	// a Private Service Connect endpoint or a local emulator
	// (http://127.0.0.1:8085/). Empty means Google's public endpoint.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (url(self).getScheme() == 'https' || url(self).getScheme() == 'http') && url(self).getHostname() != ''",message="must be an http:// or https:// URL with a host, such as https://sqladmin.googleapis.com/"
	Endpoint string `json:"endpoint,omitempty"`
}

// ProviderCredentials says where the provider finds its Google Cloud
// credentials.
// +kubebuilder:validation:XValidation:rule="self.source != 'Secret' || has(self.secretRef)",fieldPath=".secretRef",message="is required when source is Secret: name the namespace, name and key of the secret holding the service-account key JSON"
// +kubebuilder:validation:XValidation:rule="self.source != 'Environment' || has(self.env)",fieldPath=".env",message="is required when source is Environment: name the environment variable holding the service-account key JSON"
// +kubebuilder:validation:XValidation:rule="self.source != 'Filesystem' || has(self.fs)",fieldPath=".fs",message="is required when source is Filesystem: give the path of the file holding the service-account key JSON"
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || (size(self.secretRef.name) > 0 && size(self.secretRef.namespace) > 0 && size(self.secretRef.key) > 0)",fieldPath=".secretRef",message="must give the namespace, name and key of the secret holding the service-account key JSON; none may be empty"
// +kubebuilder:validation:XValidation:rule="!has(self.env) || size(self.env.name) > 0",fieldPath=".env.name",message="must name the environment variable holding the service-account key JSON"
// +kubebuilder:validation:XValidation:rule="!has(self.fs) || self.fs.path.startsWith('/')",fieldPath=".fs.path",message="must be an absolute path (starting with /) to the file holding the service-account key JSON"
type ProviderCredentials struct {
	// Source of the credentials: Secret (a service-account key JSON in a
	// secret), InjectedIdentity (the provider pod's own identity, for example
	// Workload Identity), Environment, Filesystem, or None (no credentials at
	// all, only for an endpoint that needs none, such as the local emulator).
	// +kubebuilder:validation:Enum=Secret;InjectedIdentity;Environment;Filesystem;None
	Source xpv2.CredentialsSource `json:"source"`

	xpv2.CommonCredentialSelectors `json:",inline"`
}

// A ProviderConfigStatus reflects the observed state of a ProviderConfig.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// +kubebuilder:object:root=true

// A ProviderConfig configures the Cloud SQL provider: the Google Cloud
// project and the credentials used to manage instances in it.
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="PROJECT",type="string",JSONPath=".spec.projectID"
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source",priority=1
// +kubebuilder:printcolumn:name="USERS",type="integer",JSONPath=".status.users"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,cloudsql}
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

// A ProviderConfigUsage records that a managed resource uses a
// ProviderConfig, so that the ProviderConfig is not deleted while in use.
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type="string",JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,cloudsql}
type ProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.ProviderConfigUsage `json:",inline"`
}

// +kubebuilder:object:root=true

// ProviderConfigUsageList contains a list of ProviderConfigUsage.
type ProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfigUsage `json:"items"`
}
