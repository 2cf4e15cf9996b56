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

// Package composetest tests examples/composition end to end, the way a platform team
// would use it: `crossplane render` runs the example Composition against the
// function served in the test process, `crossplane beta validate` checks the claim
// and the composite against the XRD (offline, with Crossplane's own CRDs), and a
// real kube-apiserver with Crossplane's CRDs beside the provider's accepts the XRD,
// the Compositions and every PostgresqlInstance the function renders, and, for the
// Compositions on a shared instance, every PostgresqlUser and PostgresqlDatabase.
//
// It needs the Crossplane CLI (CROSSPLANE_CLI) and the directory of Crossplane's
// CRDs (CROSSPLANE_CRDS), both of which `make test` provides, besides
// KUBEBUILDER_ASSETS.
package composetest
