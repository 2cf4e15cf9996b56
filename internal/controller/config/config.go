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

// Package config reconciles ProviderConfigs: it counts the managed resources that
// use each one and keeps a ProviderConfig in use from being deleted.
package config

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/ratewait"
)

// Setup adds the ProviderConfig controller to mgr.
func Setup(mgr ctrl.Manager, o controller.Options) error {
	name := providerconfig.ControllerName(v1alpha1.ProviderConfigGroupKind)
	of := resource.ProviderConfigKinds{
		Config:    v1alpha1.ProviderConfigGroupVersionKind,
		Usage:     v1alpha1.ProviderConfigUsageGroupVersionKind,
		UsageList: v1alpha1.ProviderConfigUsageListGroupVersionKind,
	}
	r := providerconfig.NewReconciler(mgr, of,
		providerconfig.WithLogger(o.Logger.WithValues("controller", name)),
		//lint:ignore SA1019 crossplane-runtime's event.NewAPIRecorder takes only the old API's record.EventRecorder, and GetEventRecorder's events.k8s.io Events are outside the RBAC Crossplane grants providers (core events only)
		providerconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))))
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.ProviderConfig{}).
		Watches(&v1alpha1.ProviderConfigUsage{}, settled{&resource.EnqueueRequestForProviderConfig{}}).
		Complete(ratewait.New(name, r, o.GlobalRateLimiter))
}

// SetupNamespaced adds the controllers of the namespaced group's provider
// configurations to mgr: ProviderConfigs (of a namespace) and
// ClusterProviderConfigs, whose uses the namespaced PostgresqlInstances record
// in ProviderConfigUsages of their own namespaces.
func SetupNamespaced(mgr ctrl.Manager, o controller.Options) error {
	for _, k := range []struct {
		kind   string
		gvk    schema.GroupVersionKind
		object client.Object
	}{
		{kind: nsv1alpha1.ProviderConfigKind, gvk: nsv1alpha1.ProviderConfigGroupVersionKind, object: &nsv1alpha1.ProviderConfig{}},
		{kind: nsv1alpha1.ClusterProviderConfigKind, gvk: nsv1alpha1.ClusterProviderConfigGroupVersionKind, object: &nsv1alpha1.ClusterProviderConfig{}},
	} {
		name := providerconfig.ControllerName(k.gvk.GroupKind().String())
		r := providerconfig.NewReconciler(mgr, resource.ProviderConfigKinds{
			Config:    k.gvk,
			Usage:     nsv1alpha1.ProviderConfigUsageGroupVersionKind,
			UsageList: nsv1alpha1.ProviderConfigUsageListGroupVersionKind,
		},
			providerconfig.WithLogger(o.Logger.WithValues("controller", name)),
			//lint:ignore SA1019 crossplane-runtime's event.NewAPIRecorder takes only the old API's record.EventRecorder, and GetEventRecorder's events.k8s.io Events are outside the RBAC Crossplane grants providers (core events only)
			providerconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))))
		err := ctrl.NewControllerManagedBy(mgr).
			Named(name).
			WithOptions(o.ForControllerRuntime()).
			For(k.object).
			Watches(&nsv1alpha1.ProviderConfigUsage{}, settled{&resource.EnqueueRequestForProviderConfig{Kind: k.kind}}).
			Complete(ratewait.New(name, r, o.GlobalRateLimiter))
		if err != nil {
			return err
		}
	}
	return nil
}

// usageSettle is how long a configuration's count of users waits after a
// usage appears, changes or goes: a burst of applies or deletes (each object
// records its usage) then costs a reconcile or two of the configuration, not
// one per few objects, each of which would take a slot of
// max_reconcile_rate from the objects' own reconciles.
const usageSettle = time.Second

// settled enqueues what inner enqueues, usageSettle later: the work queue
// holds one of each request however often it is added meanwhile.
type settled struct{ inner handler.EventHandler }

func (s settled) Create(ctx context.Context, e ctrlevent.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	s.inner.Create(ctx, e, later{q})
}

func (s settled) Update(ctx context.Context, e ctrlevent.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	s.inner.Update(ctx, e, later{q})
}

func (s settled) Delete(ctx context.Context, e ctrlevent.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	s.inner.Delete(ctx, e, later{q})
}

func (s settled) Generic(ctx context.Context, e ctrlevent.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	s.inner.Generic(ctx, e, later{q})
}

// later is a work queue whose Add waits usageSettle.
type later struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
}

func (l later) Add(r reconcile.Request) { l.AddAfter(r, usageSettle) }
