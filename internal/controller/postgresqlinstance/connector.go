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

package postgresqlinstance

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/spf13/afero"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
)

// A connector turns a provider configuration into a Cloud SQL Admin API client.
// It keeps one client per configuration and reuses it across reconciles until
// the configuration or its credentials change. T is the PostgresqlInstance kind
// it connects.
type connector[T core.Instance] struct {
	kube     client.Client
	secrets  client.Reader // uncached, so that the provider does not cache every secret
	services *providerconfig.ServiceCache
	pacing   *core.Pacing
	fs       afero.Fs
	// observer is shared by every reconcile (observe = list); nil reads each
	// instance with instances.get.
	observer *observer.Observer
	// owner is the kind T, for the owner references of connection secrets.
	owner schema.GroupVersionKind
	// config records that mg uses its provider configuration, and returns it
	// as the cluster-scoped kind's: its name is unique among every kind's
	// configurations (it keys the clients and the listings they share), and
	// its secrets are named with their namespaces.
	config func(ctx context.Context, mg T) (core.Configuration, error)
	// connection resolves the PostgresqlInstance a source names; clones
	// records the clones made.
	connection connectionOf
	clones     core.Clones
	// admitsSource says whether a namespaced instance may recover from a
	// cluster-scoped one.
	admitsSource admitsSourceFunc
}

// Connect implements managed.TypedExternalConnector. The managed reconciler
// puts the errors of the connection and of the client into the Synced
// condition and events whole: they are cut to cloudsql.MaxMessage.
func (c *connector[T]) Connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	ext, err := c.connect(ctx, mg)
	if err != nil {
		return nil, cloudsql.Truncated(err)
	}
	return truncating[T]{ext}, nil
}

func (c *connector[T]) connect(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	goes, err := c.goesWithNamespace(ctx, mg)
	if err != nil {
		return nil, err
	}
	if goes && mg.GetAnnotations()[v1alpha1.AnnotationAllowDeletion] != "true" {
		return core.Released[T]{}, nil
	}
	ext, err := c.connectConfigured(ctx, mg)
	if goes && kerrors.IsNotFound(errors.Cause(err)) {
		// Its configuration (or key) went first, with the namespace:
		// nothing can delete the Cloud SQL instance now, and the namespace
		// must not wait for ever.
		return core.Released[T]{}, nil
	}
	return ext, err
}

// goesWithNamespace reports whether mg is a namespaced PostgresqlInstance being
// Deleted because its namespace is. The deletion guard lets such deletions
// through without the allow-deletion annotation so that the namespace does not
// stay Terminating for ever; an unannotated one then lets go of its Cloud SQL
// instance (kept, with its data, to be imported again), exactly as the guard
// would have kept it. Neither its configuration nor its usage of it is needed
// for that: the namespace controller may have deleted both already.
func (c *connector[T]) goesWithNamespace(ctx context.Context, mg T) (bool, error) {
	return core.GoesWithNamespace(ctx, c.secrets, mg)
}

// connectConfigured connects mg through the configuration it names.
func (c *connector[T]) connectConfigured(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	cfg, err := c.config(ctx, mg)
	if err != nil {
		return nil, err
	}
	pc := cfg.ProviderConfig
	creds, err := providerconfig.Credentials(ctx, c.secrets, c.fs, pc)
	if err != nil {
		return nil, err
	}
	svc, err := c.services.Get(pc, creds)
	if err != nil {
		return nil, err
	}
	return &external[T]{
		svc:      svc,
		project:  pc.Spec.ProjectID,
		secrets:  core.NewPasswords(c.kube, c.secrets, c.owner),
		pacing:   c.pacing,
		observer: c.observer,
		source:   pc.Name,
		noImport: cfg.NoImport,

		kube:         c.kube,
		connection:   c.connection,
		clones:       c.clones,
		admitsSource: c.admitsSource,
	}, nil
}

// truncating cuts the errors of an external client to cloudsql.MaxMessage:
// Cloud SQL's error text reaches conditions and events, and an endpoint may
// answer with more than a user should read.
type truncating[T core.Instance] struct {
	managed.TypedExternalClient[T]
}

func (t truncating[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	o, err := t.TypedExternalClient.Observe(ctx, mg)
	return o, cloudsql.Truncated(err)
}

func (t truncating[T]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	c, err := t.TypedExternalClient.Create(ctx, mg)
	return c, cloudsql.Truncated(err)
}

func (t truncating[T]) Update(ctx context.Context, mg T) (managed.ExternalUpdate, error) {
	u, err := t.TypedExternalClient.Update(ctx, mg)
	return u, cloudsql.Truncated(err)
}

func (t truncating[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	d, err := t.TypedExternalClient.Delete(ctx, mg)
	return d, cloudsql.Truncated(err)
}
