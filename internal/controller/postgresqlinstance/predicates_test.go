package postgresqlinstance

import (
	"testing"

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
		{name: "status only", old: obj(1, nil, nil), new: obj(1, nil, nil)},
		{name: "spec", old: obj(1, nil, nil), new: obj(2, nil, nil), wantUpdate: true},
		{name: "label added", old: obj(1, nil, nil), new: obj(1, map[string]string{"team": "a"}, nil), wantUpdate: true},
		{name: "annotation added", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{"note": "x"}), wantUpdate: true},
		{name: "annotation removed", old: obj(1, nil, map[string]string{"note": "x"}), new: obj(1, nil, nil), wantUpdate: true},
		{name: "annotation changed", old: obj(1, nil, map[string]string{"note": "x"}), new: obj(1, nil, map[string]string{"note": "y"}), wantUpdate: true},
		{name: "the initializer records the object's own name", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{ext: "db"})},
		{name: "another name is recorded", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{ext: "other"}), wantUpdate: true},
		{name: "the external name changes", old: obj(1, nil, map[string]string{ext: "db"}), new: obj(1, nil, map[string]string{ext: "other"}), wantUpdate: true},
		{name: "the external name is removed", old: obj(1, nil, map[string]string{ext: "db"}), new: obj(1, nil, nil), wantUpdate: true},
		{name: "create pending is bookkeeping", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{meta.AnnotationKeyExternalCreatePending: "t"})},
		{name: "create failed is bookkeeping", old: obj(1, nil, map[string]string{meta.AnnotationKeyExternalCreatePending: "t"}), new: obj(1, nil, map[string]string{meta.AnnotationKeyExternalCreateFailed: "t"})},
		{name: "create succeeded brings the reconcile that observes the new instance", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{meta.AnnotationKeyExternalCreateSucceeded: "t"}), wantUpdate: true},
		{name: "the object's name recorded with another annotation", old: obj(1, nil, nil), new: obj(1, nil, map[string]string{ext: "db", "note": "x"}), wantUpdate: true},
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
