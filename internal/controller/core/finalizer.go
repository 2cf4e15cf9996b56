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
	"reflect"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// ManagedFinalizer is the managed reconciler's finalizer on every kind; a
// kind's own finalizer embeds one of this name.
const ManagedFinalizer = "finalizer.managedresource.crossplane.io"

// statusKeeper adds the finalizer without losing what the observation before
// it wrote in the status. The managed reconciler adds its finalizer after the
// first Observe that succeeds, with an Update whose answer (the stored
// object, its old status included) replaces the object in memory: the
// observation (status.atProvider, the Ready condition) would be left out of
// the status written next, and show only at the next poll. For an imported
// object, the first observation is the first Observe, and in a fleet of
// thousands the next poll is twenty minutes away.
type statusKeeper struct {
	resource.Finalizer
	name string
}

// AddFinalizer adds the finalizer, keeping the status obj had.
func (k statusKeeper) AddFinalizer(ctx context.Context, obj resource.Object) error {
	if meta.FinalizerExists(obj, k.name) {
		return nil
	}
	before := obj.DeepCopyObject()
	if err := k.Finalizer.AddFinalizer(ctx, obj); err != nil {
		return err
	}
	// Every kind of the provider keeps its status in a field named Status, as
	// the Kubernetes API conventions have it.
	now, was := statusField(obj), statusField(before)
	if now.IsValid() && was.IsValid() && now.CanSet() && now.Type() == was.Type() {
		now.Set(was)
	}
	return nil
}

// statusField is the Status field of the struct o points to, or the zero
// Value when it has none.
func statusField(o any) reflect.Value {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName("Status")
}
