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

// Package composepg is the composition function of provider-cloudsql-postgres: it
// turns a composite resource that asks for "a small PostgreSQL in europe-west1" into
// one PostgresqlInstance with the defaults of that size, and hands the instance's
// connection details back to the composite (and so to its claim).
//
// The composite resource's spec (see examples/composition/definition.yaml) holds
//
//	size:              small | medium | large       (default small)
//	region:            a Google Cloud region         (default europe-west1)
//	version:           PostgreSQL major version      (default "18")
//	networking:        public | private              (default public)
//	network:           projects/<p>/global/networks/<n>, required for private
//	allowedNamespaces: namespaces whose pods may inject the instance
//	                   (default: the claim's namespace)
//	deletionPolicy:    Delete | Orphan               (default Delete)
//
// A namespaced composite (Crossplane v2, examples/composition/definition-v2.yaml)
// has the same fields but allowedNamespaces, and gets a namespaced PostgresqlInstance
// and a Secret <composite>-postgres with the five connection details in its own
// namespace, since v2 composites have no connection secret of their own.
//
// A Composition may instead name a shared PostgresqlInstance in the function's
// input (Input, apiVersion cloudsql.fn.travelaudience.com/v1alpha1):
//
//	sharedInstance:
//	  clusterInstance: <a cluster-scoped PostgresqlInstance>
//	  instance:        <a PostgresqlInstance of the composite's namespace>
//
// and every composite of that Composition gets, instead of an instance, a
// PostgresqlUser and a PostgresqlDatabase that it owns on that instance (in the
// composite's namespace for a namespaced composite), and the user's credentials
// rather than postgres's (see ComposeShared, ComposeSharedNamespaced).
//
// Parsing, validation and building the PostgresqlInstance are pure functions
// (Parse, Compose, Ready, ConnectionDetailsFrom; ParseNamespaced, ComposeNamespaced,
// ConnectionSecret for namespaced composites); Function glues them to
// function-sdk-go's RunFunction. Every mistake in the composite's spec becomes a
// fatal result whose message names the field and says what to do, so that it shows on
// the claim instead of as a PostgresqlInstance the API server refuses.
package composepg
