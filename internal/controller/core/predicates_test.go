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
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

func TestDesiredStateChanged(t *testing.T) {
	obj := func(generation int64, labels, annotations map[string]string) *v1alpha1.PostgresqlInstance {
		return &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: generation, Labels: labels, Annotations: annotations}}
	}
	ext := meta.AnnotationKeyExternalName
	cases := []struct {
		name       string
		old, new   *v1alpha1.PostgresqlInstance
		wantUpdate bool
	}{
		{name: "StatusOnly", old: obj(1, nil, nil), new: obj(1, nil, nil)},
		{name: "Spec", old: obj(1, nil, nil), new: obj(2, nil, nil), wantUpdate: true},
		{name: "LabelAdded", old: obj(1, nil, nil), new: obj(1, map[string]string{"team": "a"}, nil), wantUpdate: true},
		{name: "AnnotationAdded", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{"note": "x"}), wantUpdate: true},
		{name: "AnnotationRemoved", old: obj(1, nil, map[string]string{"note": "x"}), new: obj(1, nil, nil), wantUpdate: true},
		{name: "AnnotationChanged", old: obj(1, nil, map[string]string{"note": "x"}), new: obj(1, nil, map[string]string{"note": "y"}), wantUpdate: true},
		{name: "TheInitializerRecordsTheObjectsOwnName", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{ext: "db"})},
		{name: "AnotherNameIsRecorded", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{ext: "other"}), wantUpdate: true},
		{name: "TheExternalNameChanges", old: obj(1, nil, map[string]string{ext: "db"}), new: obj(1, nil, map[string]string{ext: "other"}), wantUpdate: true},
		{name: "TheExternalNameIsRemoved", old: obj(1, nil, map[string]string{ext: "db"}), new: obj(1, nil, nil), wantUpdate: true},
		{name: "CreatePendingIsBookkeeping", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{meta.AnnotationKeyExternalCreatePending: "t"})},
		{name: "CreateFailedIsBookkeeping", old: obj(1, nil, map[string]string{meta.AnnotationKeyExternalCreatePending: "t"}), new: obj(1, nil, map[string]string{meta.AnnotationKeyExternalCreateFailed: "t"})},
		{name: "CreateSucceededIsBookkeeping", old: obj(1, nil, map[string]string{meta.AnnotationKeyExternalCreatePending: "t"}), new: obj(1, nil, map[string]string{meta.AnnotationKeyExternalCreateSucceeded: "t"})},
		{name: "TheObjectsNameRecordedWithAnotherAnnotation", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{ext: "db", "note": "x"}), wantUpdate: true},
	}
	p := desiredStateChanged()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})).To(Equal(tc.wantUpdate))
		})
	}
	g := NewWithT(t)
	g.Expect(p.Create(event.CreateEvent{Object: obj(1, nil, nil)})).To(BeTrue(), "every new object is reconciled")
	g.Expect(p.Delete(event.DeleteEvent{Object: obj(1, nil, nil)})).To(BeTrue())
	g.Expect(p.Update(event.UpdateEvent{ObjectNew: obj(1, nil, nil)})).To(BeFalse(), "no old object: nothing to compare")
}

// What wakes the objects waiting on an instance: its readiness turning
// either way, a change of its desired state, its deletion; not its creation,
// nor a change of its status that leaves its readiness as it was.
func TestInstanceChangesThatWakeItsObjects(t *testing.T) {
	obj := func(state, conn string, generation int64) *v1alpha1.PostgresqlInstance {
		pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: generation}}
		pi.Status.AtProvider.State, pi.Status.AtProvider.ConnectionName = state, conn
		return pi
	}
	const conn = "p:r:db"
	cases := map[string]struct {
		old, new *v1alpha1.PostgresqlInstance
		want     bool
	}{
		"ObservedReady":          {old: obj("", "", 1), new: obj(StateRunnable, conn, 1), want: true},
		"NoLongerReady":          {old: obj(StateRunnable, conn, 1), new: obj("MAINTENANCE", conn, 1), want: true},
		"RunnableWithoutAddress": {old: obj("PENDING_CREATE", "", 1), new: obj(StateRunnable, "", 1)},
		"OtherStatus":            {old: obj("PENDING_CREATE", "", 1), new: obj("PENDING_CREATE", conn, 1)},
		"SpecChanged":            {old: obj(StateRunnable, conn, 1), new: obj(StateRunnable, conn, 2), want: true},
	}
	p := newWakes(logging.NewNopLogger()).changed
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})).To(Equal(tc.want))
		})
	}
	g := NewWithT(t)
	g.Expect(p.Create(event.CreateEvent{Object: obj(StateRunnable, conn, 1)})).To(BeFalse())
	g.Expect(p.Delete(event.DeleteEvent{Object: obj(StateRunnable, conn, 1)})).To(BeTrue())
}

// A controller that does not run (this replica does not lead) never drains
// its wakes: sending more than it holds must not stall the instances'
// informer, which the webhooks read too.
func TestAWakeNeverBlocksTheInformer(t *testing.T) {
	g := NewWithT(t)
	w := newWakes(nil)
	ch := w.kind()
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "db"}}
	for range cap(ch) + 10 {
		w.send(pi)
	}
	g.Expect(ch).To(HaveLen(cap(ch)))
}

// An object that is gone brings no reconcile; its deletion (the deletion
// timestamp set, a spec change) did.
func TestNotGone(t *testing.T) {
	g := NewWithT(t)
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "db"}}
	p := notGone()
	g.Expect(p.Delete(event.DeleteEvent{Object: pi})).To(BeFalse())
	g.Expect(p.Create(event.CreateEvent{Object: pi})).To(BeTrue())
	g.Expect(p.Update(event.UpdateEvent{ObjectOld: pi, ObjectNew: pi})).To(BeTrue(), "updates are desiredStateChanged's to judge")
	g.Expect(p.Generic(event.GenericEvent{Object: pi})).To(BeTrue())
}
