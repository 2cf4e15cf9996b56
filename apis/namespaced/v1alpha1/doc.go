// Package v1alpha1 contains the cloudsql.m.travelaudience.com/v1alpha1 API, the
// namespaced kinds of Crossplane v2: a PostgresqlInstance that lives in a team's
// namespace, with its connection secret beside it, and the ProviderConfig (in a
// namespace) and ClusterProviderConfig that say which Google Cloud project to manage
// it in and with which credentials. The instance's settings (spec.forProvider) are
// the cluster-scoped kind's, one Go type for both.
// +kubebuilder:object:generate=true
// +groupName=cloudsql.m.travelaudience.com
// +versionName=v1alpha1
package v1alpha1
