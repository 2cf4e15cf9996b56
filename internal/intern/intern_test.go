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

package intern_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/travelaudience/cloudsql-postgres-operator/apis"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/intern"
)

// decoder decodes objects as an informer does: into a struct the scheme
// makes, every string a copy of its own.
func decoder(tb testing.TB) kruntime.Decoder {
	tb.Helper()
	s := kruntime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		tb.Fatal(err)
	}
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}

// decode decodes testdata/file, its names and UID made the i-th's.
func decode(tb testing.TB, d kruntime.Decoder, file string, i int) kruntime.Object {
	tb.Helper()
	raw, err := os.ReadFile("testdata/" + file)
	if err != nil {
		tb.Fatal(err)
	}
	doc := strings.ReplaceAll(string(raw), "fleet-00000", fmt.Sprintf("fleet-%05d", i))
	doc = strings.Replace(doc, `"uid": "`, fmt.Sprintf(`"uid": "%08d`, i), 1)
	o, _, err := d.Decode([]byte(doc), nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// same says whether a and b are one string in memory, not only equal.
func same(a, b string) bool {
	return a == b && unsafe.StringData(a) == unsafe.StringData(b)
}

func TestObjectsChangesNoValue(t *testing.T) {
	d := decoder(t)
	for _, file := range []string{"user.json", "database.json", "instance.json"} {
		t.Run(file, func(t *testing.T) {
			g := NewWithT(t)
			o := decode(t, d, file, 1)
			before := o.DeepCopyObject()
			got, err := intern.Objects(o)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(BeIdenticalTo(o), "interned in place")
			g.Expect(got).To(Equal(before))
		})
	}
}

func TestObjectsSharesWhatObjectsRepeat(t *testing.T) {
	g := NewWithT(t)
	d := decoder(t)
	// Two logins of one instance (same instance name in both documents).
	a := decode(t, d, "user.json", 0).(*v1alpha1.PostgresqlUser)
	b := decode(t, d, "user.json", 0).(*v1alpha1.PostgresqlUser)
	b.Name, b.UID = "fleet-00000-u1", "other"
	for _, o := range []*v1alpha1.PostgresqlUser{a, b} {
		_, err := intern.Objects(o)
		g.Expect(err).NotTo(HaveOccurred())
	}

	shared := map[string][2]string{
		"apiVersion":                           {a.APIVersion, b.APIVersion},
		"kind":                                 {a.Kind, b.Kind},
		"finalizer":                            {a.Finalizers[0], b.Finalizers[0]},
		"deletionPolicy":                       {string(a.Spec.DeletionPolicy), string(b.Spec.DeletionPolicy)},
		"managementPolicies":                   {string(a.Spec.ManagementPolicies[0]), string(b.Spec.ManagementPolicies[0])},
		"writeConnectionSecretToRef.namespace": {a.Spec.WriteConnectionSecretToReference.Namespace, b.Spec.WriteConnectionSecretToReference.Namespace},
		"forProvider.instance":                 {a.Spec.ForProvider.Instance, b.Spec.ForProvider.Instance},
		"forProvider.type":                     {a.Spec.ForProvider.Type, b.Spec.ForProvider.Type},
		"atProvider.instance":                  {a.Status.AtProvider.Instance, b.Status.AtProvider.Instance},
		"atProvider.iamStatus":                 {a.Status.AtProvider.IAMStatus, b.Status.AtProvider.IAMStatus},
		"condition type":                       {string(a.Status.Conditions[1].Type), string(b.Status.Conditions[1].Type)},
		"condition status":                     {string(a.Status.Conditions[1].Status), string(b.Status.Conditions[1].Status)},
		"condition reason":                     {string(a.Status.Conditions[1].Reason), string(b.Status.Conditions[1].Reason)},
		"label key":                            {labelKey(a.Labels), labelKey(b.Labels)},
		"label value":                          {a.Labels["team"], b.Labels["team"]},
		"annotation key":                       {labelKey(a.Annotations), labelKey(b.Annotations)},
	}
	for field, v := range shared {
		g.Expect(v[0]).NotTo(BeEmpty(), field)
		g.Expect(same(v[0], v[1])).To(BeTrue(), "%s is held once", field)
	}
	// An object's own strings stay its own: interned, they would only fill
	// the table.
	own := map[string][2]string{
		"atProvider.name":  {a.Status.AtProvider.Name, b.Status.AtProvider.Name},
		"annotation value": {a.Annotations["crossplane.io/external-name"], b.Annotations["crossplane.io/external-name"]},
		"message":          {a.Status.Conditions[1].Message, b.Status.Conditions[1].Message},
	}
	for field, v := range own {
		g.Expect(v[0]).NotTo(BeEmpty(), field)
		g.Expect(same(v[0], v[1])).To(BeFalse(), "%s is not interned", field)
	}
}

// labelKey is the one key of m.
func labelKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

func TestObjectsLeavesWhatItDoesNotKnow(t *testing.T) {
	g := NewWithT(t)
	u := &unstructured.Unstructured{Object: map[string]any{"kind": "Thing"}}
	var nilUser *v1alpha1.PostgresqlUser
	got, err := intern.Objects(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeNil())
	for _, o := range []any{"a string", v1alpha1.PostgresqlUser{}, nilUser, u} {
		got, err := intern.Objects(o)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(o))
	}
}

func TestStringHoldsACopy(t *testing.T) {
	g := NewWithT(t)
	big := strings.Repeat("x", 4096) + "NotSeenBefore"
	s := intern.String(big[4096:])
	g.Expect(s).To(Equal("NotSeenBefore"))
	g.Expect(same(intern.String(strings.Clone("NotSeenBefore")), s)).To(BeTrue())
	// The interned copy does not point into the larger string.
	g.Expect(unsafe.StringData(s) != unsafe.StringData(big[4096:])).To(BeTrue())
	g.Expect(intern.String("")).To(BeEmpty())
}

func TestTheTableStartsAgainWhenFull(t *testing.T) {
	g := NewWithT(t)
	for i := range intern.MaxEntries + 10 {
		intern.String(fmt.Sprintf("value-%d", i))
	}
	g.Expect(intern.Len()).To(BeNumerically("<", 100))
	// What repeats comes back at once.
	a := intern.String(strings.Clone("Ready"))
	g.Expect(same(intern.String(strings.Clone("Ready")), a)).To(BeTrue())
}

// BenchmarkCachedObjectMemory prints what a cached database, login and
// instance take in memory, decoded as the informer decodes them and after
// Objects: the heap each adds when 20,000 of them are held, 10 per instance.
func BenchmarkCachedObjectMemory(b *testing.B) {
	d := decoder(b)
	const n = 20000
	for _, file := range []string{"user.json", "database.json", "instance.json"} {
		for _, interned := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/interned=%t", strings.TrimSuffix(file, ".json"), interned), func(b *testing.B) {
				for range b.N {
					objs := make([]kruntime.Object, n)
					before := liveHeap()
					for i := range objs {
						objs[i] = decode(b, d, file, i/10)
						if interned {
							_, _ = intern.Objects(objs[i])
						}
					}
					b.ReportMetric(float64(liveHeap()-before)/n, "bytes/object")
					runtimeKeepAlive(objs)
				}
			})
		}
	}
}

// liveHeap is the heap's live bytes, after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func runtimeKeepAlive(v any) { runtime.KeepAlive(v) }
