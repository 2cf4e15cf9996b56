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
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// desiredStateChanged is crossplane-runtime's resource.DesiredStateChanged (a
// change of the spec, the labels or the annotations brings a reconcile), except
// that the provider's own bookkeeping does not: the create-pending,
// create-failed and create-succeeded annotations (the managed reconciler asks
// for its next reconcile itself, and after a create that is put off until the
// operation can have ended: see backoffToPoll), and the external-name annotation when it is first set to the name the
// instance already had. That last write is the initializer's, made in the
// reconcile that goes on to observe the instance; reconciling again for it would
// double the first pass over an imported fleet of 10,000.
func desiredStateChanged() predicate.Predicate {
	return predicate.Or(
		predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return false
			}
			return annotationsChanged(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations(), e.ObjectNew.GetName())
		}},
		predicate.LabelChangedPredicate{},
		predicate.GenerationChangedPredicate{},
	)
}

// notGone leaves out the events of objects that are gone: the managed
// reconciler did its last work when it removed its finalizer, and a reconcile
// that finds nothing would still take a slot of max_reconcile_rate, which a
// burst of deletes would take from the visits that finish the other deletes.
func notGone() predicate.Predicate {
	return predicate.Funcs{DeleteFunc: func(event.DeleteEvent) bool { return false }}
}

// annotationsChanged compares the annotations of the object named name before
// and after an update, leaving out what desiredStateChanged ignores.
func annotationsChanged(before, after map[string]string, name string) bool {
	ignored := func(k, v string) bool {
		switch k {
		case meta.AnnotationKeyExternalCreatePending, meta.AnnotationKeyExternalCreateFailed, meta.AnnotationKeyExternalCreateSucceeded:
			return true
		case meta.AnnotationKeyExternalName:
			_, had := before[k]
			return !had && v == name
		}
		return false
	}
	kept := 0
	for k, v := range after {
		if ignored(k, v) {
			continue
		}
		kept++
		if bv, ok := before[k]; !ok || bv != v {
			return true
		}
	}
	for k, v := range before {
		if !ignored(k, v) {
			kept--
		}
	}
	// Every kept key of after is in before with its value: a difference left
	// is a key before had and after lost.
	return kept != 0
}
