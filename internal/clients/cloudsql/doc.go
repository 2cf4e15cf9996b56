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

// Package cloudsql translates between the PostgresqlInstance API
// (cloudsql.travelaudience.com/v1alpha1) and the Cloud SQL Admin API v1beta4
// types of google.golang.org/api/sqladmin/v1beta4.
//
// Everything here is a pure function over Go values: no Kubernetes client,
// no network. The controller orchestrates (connect, observe, decide, call)
// and uses this package for the decisions:
//
//   - InstanceName: which Cloud SQL instance a PostgresqlInstance manages.
//   - GenerateInstance: the body of instances.insert.
//   - Compare and IsUpToDate: whether the instance matches the spec, and
//     which differences a patch can fix (Diff.Updatable) and which it cannot
//     (Diff.Immutable).
//   - GeneratePatch: the body of instances.patch that fixes Diff.Updatable.
//   - GenerateObservation and LateInitialize: status.atProvider and the spec
//     fields filled from the instance.
//   - ConnectionDetails and GeneratePassword: the connection secret.
//   - IsNotFound, IsAlreadyExists, IsOperationInProgress, IsRateLimited and
//     IsRetryable: classification of API errors.
//
// # Unset fields
//
// In a cluster the CRD defaults every field but networking, so the functions
// normally see complete parameters. A field that is nevertheless empty (a
// zero string, a nil pointer, a zero disk size) is treated as unmanaged: it
// is left out of the insert body (Cloud SQL's default applies), it is not
// compared and it is not patched. LateInitialize fills such fields from the
// observed instance.
package cloudsql
