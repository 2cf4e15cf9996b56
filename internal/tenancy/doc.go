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

// Package tenancy holds who may use what between the teams of one cluster,
// so that the webhooks, the controllers and the injector decide it alike:
//
//   - which namespaces may use a PostgresqlInstance: receive its postgres
//     password (Policy.Allows), or keep namespaced users and databases on it
//     (Policy.AdmitsObjects), by name or by namespace selector;
//   - which namespaces a ClusterProviderConfig lends itself to, and whether
//     its instances may import (Admits, CheckLent, ImportAllowed), decided
//     on namespaces read live where a label just set must count;
//   - which object holds a login or a database of a Cloud SQL instance,
//     recorded where no team can write and where it survives restarts
//     (Records, Decide).
package tenancy
