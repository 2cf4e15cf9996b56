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
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const errGetNamespace = "cannot read namespace %s to decide whether its deletion keeps the Cloud SQL instance: check that the provider may get namespaces (cluster/deploy/provider.yaml and examples/install/provider.yaml grant it)"

// GoesWithNamespace reports whether mg, a namespaced object, is being deleted
// because its namespace is: the deletion guard of the objects that hold data
// (instances, databases) lets such deletions through, and the controller then
// lets go of what mg manages unless mg carries the allow-deletion annotation.
// live reads the namespace without a cache.
func GoesWithNamespace(ctx context.Context, live client.Reader, mg client.Object) (bool, error) {
	if !meta.WasDeleted(mg) || mg.GetNamespace() == "" {
		return false, nil
	}
	n := &corev1.Namespace{}
	// Read live: only deleted objects ask, and a cache of every namespace is
	// not worth it for them.
	err := live.Get(ctx, types.NamespacedName{Name: mg.GetNamespace()}, n)
	if err != nil && !kerrors.IsNotFound(err) {
		return false, errors.Wrapf(err, errGetNamespace, mg.GetNamespace())
	}
	return err == nil && n.DeletionTimestamp != nil, nil
}

// Released is the client of an object that lets go of what it manages: a
// PostgresqlInstance deleted with its namespace (see goesWithNamespace), or a
// database or user whose instance is gone. There is nothing to observe, so the
// managed reconciler removes the object without a Cloud SQL request.
type Released[T resource.Managed] struct{}

// Observe implements managed.TypedExternalClient: nothing exists.
func (Released[T]) Observe(context.Context, T) (managed.ExternalObservation, error) {
	return managed.ExternalObservation{ResourceExists: false}, nil
}

// Create implements managed.TypedExternalClient: it does nothing.
func (Released[T]) Create(context.Context, T) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

// Update implements managed.TypedExternalClient: it does nothing.
func (Released[T]) Update(context.Context, T) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

// Delete implements managed.TypedExternalClient: it does nothing.
func (Released[T]) Delete(context.Context, T) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

// Disconnect implements managed.TypedExternalClient.
func (Released[T]) Disconnect(context.Context) error { return nil }
