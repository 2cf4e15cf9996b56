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
