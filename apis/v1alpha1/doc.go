// Package v1alpha1 contains the cloudsql.travelaudience.com/v1alpha1 API: the
// PostgresqlInstance managed resource, which stands for one Cloud SQL for PostgreSQL
// instance, and the ProviderConfig that says which Google Cloud project to manage it in
// and with which credentials.
// +kubebuilder:object:generate=true
// +groupName=cloudsql.travelaudience.com
// +versionName=v1alpha1
package v1alpha1
