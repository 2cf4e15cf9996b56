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

// Package controller wires every controller of the provider into a manager.
package controller

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/config"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/postgresqlbackup"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/postgresqldatabase"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/postgresqlinstance"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/postgresqluser"
)

const (
	errLateSetup     = "cannot start the %s controller once its CRDs were established"
	errNotDiscovered = "the API server does not serve kind %s %s after its CRD was established"
)

// ConfigKinds are the kinds the ProviderConfig controller reads.
var ConfigKinds = []schema.GroupVersionKind{v1alpha1.ProviderConfigGroupVersionKind, v1alpha1.ProviderConfigUsageGroupVersionKind}

// InstanceKinds are the kinds the PostgresqlInstance controller reads (and the
// pod injector's copy reconciler).
var InstanceKinds = append([]schema.GroupVersionKind{v1alpha1.PostgresqlInstanceGroupVersionKind}, ConfigKinds...)

// NamespacedConfigKinds are the kinds the controllers of the namespaced group's
// provider configurations read.
var NamespacedConfigKinds = []schema.GroupVersionKind{
	nsv1alpha1.ProviderConfigGroupVersionKind, nsv1alpha1.ClusterProviderConfigGroupVersionKind, nsv1alpha1.ProviderConfigUsageGroupVersionKind,
}

// NamespacedInstanceKinds are the kinds the namespaced PostgresqlInstance
// controller reads.
var NamespacedInstanceKinds = append([]schema.GroupVersionKind{nsv1alpha1.PostgresqlInstanceGroupVersionKind}, NamespacedConfigKinds...)

// ObjectKinds are the kinds the controllers of the cluster-scoped
// PostgresqlDatabase, PostgresqlUser and PostgresqlBackup kinds read, besides their own: their
// instances and the instances' configurations.
var ObjectKinds = InstanceKinds

// NamespacedObjectKinds are the kinds the controllers of the namespaced
// PostgresqlDatabase, PostgresqlUser and PostgresqlBackup kinds need, besides their own: the
// namespaced instances and their configurations. They read cluster-scoped
// instances too, for the objects that name one (clusterInstance), but do not
// wait for that kind: a cluster that serves only the namespaced group has
// none to name.
var NamespacedObjectKinds = NamespacedInstanceKinds

// Setup adds the controllers of every kind to mgr.
func Setup(mgr ctrl.Manager, o core.Options) error {
	if err := config.Setup(mgr, o.Options); err != nil {
		return err
	}
	if err := config.SetupNamespaced(mgr, o.Options); err != nil {
		return err
	}
	c, err := core.New(mgr, o)
	if err != nil {
		return err
	}
	for _, setup := range []func(ctrl.Manager, *core.Core) error{
		postgresqlinstance.SetupCluster, postgresqlinstance.SetupNamespaced,
		postgresqluser.SetupCluster, postgresqluser.SetupNamespaced,
		postgresqldatabase.SetupCluster, postgresqldatabase.SetupNamespaced,
		postgresqlbackup.SetupCluster, postgresqlbackup.SetupNamespaced,
	} {
		if err := setup(mgr, c); err != nil {
			return err
		}
	}
	return nil
}

// SetupGated adds each controller to mgr once the CRDs of the kinds it reads
// are established, as o.Gate learns from crossplane-runtime's CRD gate
// controller (customresourcesgate). With Crossplane's safe-start, a
// PostgresqlInstance CRD exists only while a ManagedResourceActivationPolicy
// activates it: the provider starts without it, and reconciles instances from
// the moment it appears. Both PostgresqlInstance controllers share one core (the
// fleet's pacing, the request budget's share, the listings), made at once. A
// setup that fails that late is given to failed. It returns the core, whose
// listings the admission webhook shares.
func SetupGated(mgr ctrl.Manager, o core.Options, failed func(error)) (*core.Core, error) {
	c, err := core.New(mgr, o)
	if err != nil {
		return nil, err
	}
	WhenEstablished(mgr, o.Gate, failed, "ProviderConfig", func() error { return config.Setup(mgr, o.Options) }, ConfigKinds...)
	WhenEstablished(mgr, o.Gate, failed, "namespaced ProviderConfig and ClusterProviderConfig", func() error { return config.SetupNamespaced(mgr, o.Options) }, NamespacedConfigKinds...)
	WhenEstablished(mgr, o.Gate, failed, "PostgresqlInstance", func() error { return postgresqlinstance.SetupCluster(mgr, c) }, InstanceKinds...)
	WhenEstablished(mgr, o.Gate, failed, "namespaced PostgresqlInstance", func() error { return postgresqlinstance.SetupNamespaced(mgr, c) }, NamespacedInstanceKinds...)
	// A user's controller watches the databases that name it as owner.
	WhenEstablished(mgr, o.Gate, failed, "PostgresqlUser", func() error { return postgresqluser.SetupCluster(mgr, c) },
		append([]schema.GroupVersionKind{v1alpha1.PostgresqlUserGroupVersionKind, v1alpha1.PostgresqlDatabaseGroupVersionKind}, ObjectKinds...)...)
	WhenEstablished(mgr, o.Gate, failed, "namespaced PostgresqlUser", func() error { return postgresqluser.SetupNamespaced(mgr, c) },
		append([]schema.GroupVersionKind{nsv1alpha1.PostgresqlUserGroupVersionKind, nsv1alpha1.PostgresqlDatabaseGroupVersionKind}, NamespacedObjectKinds...)...)
	WhenEstablished(mgr, o.Gate, failed, "PostgresqlDatabase", func() error { return postgresqldatabase.SetupCluster(mgr, c) },
		append([]schema.GroupVersionKind{v1alpha1.PostgresqlDatabaseGroupVersionKind, v1alpha1.PostgresqlUserGroupVersionKind}, ObjectKinds...)...)
	WhenEstablished(mgr, o.Gate, failed, "namespaced PostgresqlDatabase", func() error { return postgresqldatabase.SetupNamespaced(mgr, c) },
		append([]schema.GroupVersionKind{nsv1alpha1.PostgresqlDatabaseGroupVersionKind, nsv1alpha1.PostgresqlUserGroupVersionKind}, NamespacedObjectKinds...)...)
	WhenEstablished(mgr, o.Gate, failed, "PostgresqlBackup", func() error { return postgresqlbackup.SetupCluster(mgr, c) },
		append([]schema.GroupVersionKind{v1alpha1.PostgresqlBackupGroupVersionKind}, ObjectKinds...)...)
	WhenEstablished(mgr, o.Gate, failed, "namespaced PostgresqlBackup", func() error { return postgresqlbackup.SetupNamespaced(mgr, c) },
		append([]schema.GroupVersionKind{nsv1alpha1.PostgresqlBackupGroupVersionKind}, NamespacedObjectKinds...)...)
	return c, nil
}

// discoveryWait bounds how long a kind whose CRD is established may take to
// appear in the API server's discovery.
const discoveryWait = time.Minute

// WhenEstablished runs setup, the setup of the controller of mgr called what,
// once g has seen the CRDs of every one of kinds established and mgr's REST
// mapper finds them, and gives its error to failed.
func WhenEstablished(mgr ctrl.Manager, g controller.Gate, failed func(error), what string, setup func() error, kinds ...schema.GroupVersionKind) {
	g.Register(func() {
		// A CRD is established a moment before discovery serves its kind, and
		// a setup that reads the kind then would fail for nothing.
		ctx, cancel := context.WithTimeout(context.Background(), discoveryWait)
		defer cancel()
		for _, k := range kinds {
			err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
				_, err := mgr.GetRESTMapper().RESTMapping(k.GroupKind(), k.Version)
				return err == nil, nil
			})
			if err != nil {
				failed(errors.Wrapf(errors.Errorf(errNotDiscovered, k, discoveryWait), errLateSetup, what))
				return
			}
		}
		if err := setup(); err != nil {
			failed(errors.Wrapf(err, errLateSetup, what))
		}
	}, kinds...)
}
