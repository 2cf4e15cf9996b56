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
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/spf13/afero"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
)

const (
	errTrackUsage        = "cannot track ProviderConfig usage"
	errNoProviderConfig  = "spec.providerConfigRef is not set: name the ProviderConfig that holds the project and credentials"
	errGetProviderConfig = "cannot get ProviderConfig %q named by spec.providerConfigRef"
	errGetNamespace      = "cannot read namespace %s to decide whether its deletion keeps the Cloud SQL instance: check that the provider may get namespaces (cluster/deploy/provider.yaml and examples/install/provider.yaml grant it)"
)

// A connector turns a provider configuration into a Cloud SQL Admin API client.
// It keeps one client per configuration and reuses it across reconciles until
// the configuration or its credentials change. T is the PostgresqlInstance kind
// it connects.
type connector[T instance] struct {
	kube     client.Client
	secrets  client.Reader // uncached, so that the provider does not cache every secret
	services *providerconfig.ServiceCache
	pacing   *pacing
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
	config func(ctx context.Context, mg T) (configuration, error)
}

// A configuration is the provider configuration an instance uses, as the
// cluster-scoped kind's, and what it forbids.
type configuration struct {
	pc *v1alpha1.ProviderConfig
	// noImport, when not nil, says why the instance may not import a Cloud
	// SQL instance that no PostgresqlInstance created (observe it, or take
	// it over), and what to do.
	noImport error
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
		return Released[T]{}, nil
	}
	ext, err := c.connectConfigured(ctx, mg)
	if goes && kerrors.IsNotFound(errors.Cause(err)) {
		// Its configuration (or key) went first, with the namespace:
		// nothing can delete the Cloud SQL instance now, and the namespace
		// must not wait for ever.
		return Released[T]{}, nil
	}
	return ext, err
}

// goesWithNamespace reports whether mg is a namespaced PostgresqlInstance being
// deleted because its namespace is. The deletion guard lets such deletions
// through without the allow-deletion annotation so that the namespace does not
// stay Terminating for ever; an unannotated one then lets go of its Cloud SQL
// instance (kept, with its data, to be imported again), exactly as the guard
// would have kept it. Neither its configuration nor its usage of it is needed
// for that: the namespace controller may have deleted both already.
func (c *connector[T]) goesWithNamespace(ctx context.Context, mg T) (bool, error) {
	return GoesWithNamespace(ctx, c.secrets, mg)
}

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

// connectConfigured connects mg through the configuration it names.
func (c *connector[T]) connectConfigured(ctx context.Context, mg T) (managed.TypedExternalClient[T], error) {
	cfg, err := c.config(ctx, mg)
	if err != nil {
		return nil, err
	}
	pc := cfg.pc
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
		secrets:  newSecretStore(c.kube, c.secrets, c.owner),
		pacing:   c.pacing,
		observer: c.observer,
		source:   pc.Name,
		noImport: cfg.noImport,
	}, nil
}

// truncating cuts the errors of an external client to cloudsql.MaxMessage:
// Cloud SQL's error text reaches conditions and events, and an endpoint may
// answer with more than a user should read.
type truncating[T instance] struct {
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

// legacyConfig is the config of the cluster-scoped kind: its ProviderConfig.
func legacyConfig(kube client.Client) func(context.Context, *v1alpha1.PostgresqlInstance) (configuration, error) {
	usage := resource.NewLegacyProviderConfigUsageTracker(kube, &v1alpha1.ProviderConfigUsage{})
	return func(ctx context.Context, mg *v1alpha1.PostgresqlInstance) (configuration, error) {
		if err := usage.Track(ctx, mg); err != nil {
			return configuration{}, errors.Wrap(err, errTrackUsage)
		}
		ref := mg.GetProviderConfigReference()
		if ref == nil || ref.Name == "" {
			return configuration{}, errors.New(errNoProviderConfig)
		}
		pc, err := platformConfig(ctx, kube, ref.Name)
		// Cluster-scoped instances are the platform team's: they may import.
		return configuration{pc: pc}, err
	}
}

// platformConfig reads the cluster-scoped ProviderConfig name.
func platformConfig(ctx context.Context, kube client.Reader, name string) (*v1alpha1.ProviderConfig, error) {
	pc := &v1alpha1.ProviderConfig{}
	if err := kube.Get(ctx, types.NamespacedName{Name: name}, pc); err != nil {
		return nil, errors.Wrapf(err, errGetProviderConfig, name)
	}
	return pc, nil
}
