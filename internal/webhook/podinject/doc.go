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

// Package podinject is the pod injection webhook: a pod created with the annotation
// cloudsql.travelaudience.com/postgresqlinstance-name: <PostgresqlInstance> gets
// what follows; one created with cloudsql.travelaudience.com/postgresqluser-name:
// <PostgresqlUser> gets the same for the user's instance, but PGUSER is the user's
// login, PGDATABASE one of its databases, and the password file is written from
// the user's connection secret, never the instance's:
//
//   - the Cloud SQL Auth Proxy v2, listening on 127.0.0.1:<random port>, as a native
//     sidecar (an init container with restartPolicy Always) on Kubernetes 1.29 and
//     later or as a regular container before (configurable), calling the Cloud
//     SQL Admin API at the endpoint of the instance's configuration, if it has one;
//   - PGHOST=127.0.0.1, PGPORT=<port>, PGUSER=postgres and PGPASSFILE on every
//     container and init container, except where the container sets one itself
//     (PGHOST and PGPORT as a pair: a container that sets either gets neither);
//   - a password file per user the containers run as, mode 0600 and owned by that
//     user (libpq reads no other), written at start by an init container from a
//     copy of the instance's password in the pod's namespace;
//   - the proxy's service-account key, when the ProviderConfig has one, mounted
//     into the proxy only;
//   - the annotation cloudsql.travelaudience.com/proxy-injected: "true".
//
// Mutate is the pure change of the pod; Injector is the admission handler that
// looks up the instance (or the user and its instance), decides whether the
// pod's namespace may use it, copies the secrets and calls Mutate; a CopyReconciler for each Source
// (instances of either scope, cluster-scoped users) keeps the copies equal to
// their sources and removes those that may no longer exist.
package podinject
