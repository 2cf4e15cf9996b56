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

// Package v1alpha1 contains the cloudsql.travelaudience.com/v1alpha1 API: the
// PostgresqlInstance managed resource, which stands for one Cloud SQL for PostgreSQL
// instance, and the ProviderConfig that says which Google Cloud project to manage it in
// and with which credentials.
// +kubebuilder:object:generate=true
// +groupName=cloudsql.travelaudience.com
// +versionName=v1alpha1
package v1alpha1
