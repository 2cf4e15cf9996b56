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

package core

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Instance is a PostgresqlInstance of either kind: the cluster-scoped
// cloudsql.travelaudience.com one, or the namespaced cloudsql.m one. Both share
// the instance's settings and observation types; the controller reads them, and
// where the connection secret is, through this.
type Instance interface {
	resource.Managed
	Parameters() *v1alpha1.PostgresqlInstanceParameters
	Observation() *v1alpha1.PostgresqlInstanceObservation
	ConnectionSecret() *xpv2.SecretReference
}

// The Cloud SQL states that the core reads, besides those of the instances'
// external client (an operation's status is cloudsql.OperationDone).
const (
	// StateRunnable is the state of an instance that serves.
	StateRunnable = "RUNNABLE"
)

// ObjectKey names an object in the controller's own bookkeeping (pacing,
// listings): its name, prefixed by its namespace when it has one. A cluster-scoped
// name holds no "/", so the keys of the two kinds never meet.
func ObjectKey(mg interface {
	GetNamespace() string
	GetName() string
}) string {
	if ns := mg.GetNamespace(); ns != "" {
		return ns + "/" + mg.GetName()
	}
	return mg.GetName()
}
