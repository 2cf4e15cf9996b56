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

package composetest

import (
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/composepg"
)

// The composite of examples/composition/xr.yaml.
const (
	xrName   = "orders-db-x7k2p"
	claimNS  = "team-orders"
	vpc      = "projects/my-project-1/global/networks/default"
	stepName = "compose-postgresqlinstance"
)

// sizeCases are the composites rendered for each size: xr.yaml as shipped (medium),
// each size written out, and no size at all, which the XRD defaults to small.
var sizeCases = []struct {
	name string
	size composepg.Size
	set  func(xr *unstructured.Unstructured)
}{
	{"AsShipped", composepg.SizeMedium, func(*unstructured.Unstructured) {}},
	{"Small", composepg.SizeSmall, setSize("small")},
	{"Medium", composepg.SizeMedium, setSize("medium")},
	{"Large", composepg.SizeLarge, setSize("large")},
	{"DefaultedByTheXRD", composepg.SizeSmall, func(xr *unstructured.Unstructured) {
		unstructured.RemoveNestedField(xr.Object, "spec", "size")
	}},
}

func setSize(size string) func(xr *unstructured.Unstructured) {
	return func(xr *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(xr.Object, size, "spec", "size")
	}
}

// instanceOf returns the one PostgresqlInstance of r, decoded strictly: a field the
// API type does not have is an error rather than something the API server would
// silently drop.
func instanceOf(g Gomega, r rendered) (*v1alpha1.PostgresqlInstance, *unstructured.Unstructured) {
	g.ExpectWithOffset(1, r.composed).To(HaveLen(1), "the composition should compose exactly one resource")
	u := r.composed[0]
	pi := &v1alpha1.PostgresqlInstance{}
	decodeStrictly(g, u, v1alpha1.SchemeGroupVersion.String(), v1alpha1.PostgresqlInstanceKind, pi)
	return pi, u
}

// decodeStrictly checks that u is of apiVersion and kind, and decodes it into o
// strictly. Its failures name the line that called its caller, a helper such as
// instanceOf.
func decodeStrictly(g Gomega, u *unstructured.Unstructured, apiVersion, kind string, o any) {
	g.ExpectWithOffset(2, u.GetAPIVersion()).To(Equal(apiVersion))
	g.ExpectWithOffset(2, u.GetKind()).To(Equal(kind))
	g.ExpectWithOffset(2, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, o, true)).To(Succeed())
}

func TestRenderEachSize(t *testing.T) {
	for _, tc := range sizeCases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := render(t, compositeFile(t, tc.set), "--xrd", example("definition.yaml"))
			g.Expect(err).NotTo(HaveOccurred())

			pi, u := instanceOf(g, r)
			expectSized(g, pi.Spec.ForProvider, tc.size)
			g.Expect(pi.Spec.ForProvider.Edition).To(Equal(v1alpha1.EditionEnterprise))
			g.Expect(pi.Spec.Injection).To(Equal(&v1alpha1.Injection{AllowedNamespaces: []string{claimNS}}))
			g.Expect(pi.GetDeletionPolicy()).To(Equal(xpv2.DeletionDelete))
			g.Expect(pi.GetWriteConnectionSecretToReference()).To(Equal(&xpv2.SecretReference{Name: xrName + "-postgres", Namespace: "crossplane-system"}))
			g.Expect(pi.GetAnnotations()).To(HaveKeyWithValue(v1alpha1.AnnotationAllowDeletion, "true"))

			// Crossplane's part: a name generated from the composite's, the
			// composite as controller, the claim's labels.
			g.Expect(pi.GetName()).To(BeEmpty())
			g.Expect(pi.GetGenerateName()).To(Equal(xrName + "-"))
			g.Expect(pi.GetAnnotations()).To(HaveKeyWithValue("crossplane.io/composition-resource-name", string(composepg.ResourceName)))
			g.Expect(pi.GetLabels()).To(HaveKeyWithValue("crossplane.io/claim-namespace", claimNS))
			g.Expect(pi.GetOwnerReferences()).To(HaveLen(1))
			g.Expect(pi.GetOwnerReferences()[0].Name).To(Equal(xrName))
			// The function owns no status.
			g.Expect(u.Object).NotTo(HaveKey("status"))

			// Nothing observed yet: the composite waits for the instance.
			g.Expect(condition(r.composite, xpv2.TypeReady)).To(Equal(map[string]any{
				"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: postgresqlinstance",
			}))
			g.Expect(condition(r.composite, composepg.ConditionTypeSpecValid)).To(HaveKeyWithValue("status", "True"))
		})
	}
}

// expectSized checks the settings of fp that size, and otherwise the XRDs'
// defaults, decide.
func expectSized(g Gomega, fp v1alpha1.PostgresqlInstanceParameters, size composepg.Size) {
	shape := composepg.Shapes[size]
	g.ExpectWithOffset(1, fp.Resources.InstanceType).To(Equal(shape.InstanceType))
	g.ExpectWithOffset(1, fp.Resources.Disk).To(Equal(v1alpha1.Disk{SizeMinimumGb: shape.DiskMinimumGb, SizeMaximumGb: shape.DiskMaximumGb, Type: v1alpha1.DiskTypeSSD}))
	g.ExpectWithOffset(1, fp.Availability.Type).To(Equal(shape.Availability))
	g.ExpectWithOffset(1, fp.Version).To(Equal("18"))
	g.ExpectWithOffset(1, fp.Location).To(Equal(v1alpha1.Location{Region: "europe-west1", Zone: v1alpha1.Any}))
	g.ExpectWithOffset(1, fp.Networking).To(Equal(v1alpha1.Networking{PublicIP: v1alpha1.PublicIP{Enabled: true}}))
}

func TestRenderPrivateNetworking(t *testing.T) {
	g := NewWithT(t)
	xr := compositeFile(t, func(xr *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(xr.Object, "private", "spec", "networking")
		_ = unstructured.SetNestedField(xr.Object, vpc, "spec", "network")
		_ = unstructured.SetNestedStringSlice(xr.Object, []string{"web", "jobs"}, "spec", "allowedNamespaces")
		_ = unstructured.SetNestedField(xr.Object, "Orphan", "spec", "deletionPolicy")
	})
	r, err := render(t, xr, "--xrd", example("definition.yaml"))
	g.Expect(err).NotTo(HaveOccurred())

	pi, _ := instanceOf(g, r)
	g.Expect(pi.Spec.ForProvider.Networking).To(Equal(v1alpha1.Networking{PrivateIP: v1alpha1.PrivateIP{Enabled: true, Network: vpc}}))
	g.Expect(pi.Spec.Injection).To(Equal(&v1alpha1.Injection{AllowedNamespaces: []string{"web", "jobs"}}))
	g.Expect(pi.GetDeletionPolicy()).To(Equal(xpv2.DeletionOrphan))
}

// observedFile is the instance rendered for xr.yaml as Crossplane would observe it
// once created, with its Ready condition.
func observedFile(t *testing.T, g Gomega, ready corev1.ConditionStatus) string {
	t.Helper()
	r, err := render(t, example("xr.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	_, u := instanceOf(g, r)
	observe(g, u, xrName+"-q9z3l", ready)
	return writeManifests(t, "observed.yaml", u)
}

// observe makes u, a rendered instance of either kind, the instance as Crossplane
// observes it once it is created under name: with a Ready condition whose status
// is ready.
func observe(g Gomega, u *unstructured.Unstructured, name string, ready corev1.ConditionStatus) {
	u.SetName(name)
	u.SetGenerateName("")
	c := xpv2.Available()
	if ready != corev1.ConditionTrue {
		c = xpv2.Creating()
	}
	g.ExpectWithOffset(1, unstructured.SetNestedSlice(u.Object, []any{map[string]any{
		"type": string(c.Type), "status": string(c.Status), "reason": string(c.Reason), "lastTransitionTime": "2024-01-01T00:00:00Z",
	}}, "status", "conditions")).To(Succeed())
}

func TestRenderReadyWhenTheInstanceIs(t *testing.T) {
	cases := map[string]struct {
		observed corev1.ConditionStatus
		want     map[string]any
	}{
		"Ready": {
			observed: corev1.ConditionTrue,
			want:     map[string]any{"type": "Ready", "status": "True", "reason": "Available"},
		},
		"NotYet": {
			observed: corev1.ConditionFalse,
			want:     map[string]any{"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: postgresqlinstance"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			r, err := render(t, example("xr.yaml"), "--observed-resources", observedFile(t, g, tc.observed))
			g.Expect(err).NotTo(HaveOccurred())

			g.Expect(condition(r.composite, xpv2.TypeReady)).To(Equal(tc.want))
			g.Expect(r.composite.Object).To(HaveKeyWithValue("status", HaveKeyWithValue("instanceName", xrName+"-q9z3l")))
			// The existing instance keeps its name.
			pi, _ := instanceOf(g, r)
			g.Expect(pi.GetName()).To(Equal(xrName + "-q9z3l"))
		})
	}
}

func TestRenderRefusesMistakes(t *testing.T) {
	checkMistakes(t, render, compositeFile, map[string]mistake{
		"ASizeThatDoesNotExist": {
			set:  setSize("huge"),
			want: `spec.size "huge" is not a size: use small, medium or large`,
		},
		"PrivateNetworkingWithoutANetwork": privateWithoutNetwork,
	})
}

// mistake is a change of a composite that the function refuses with a fatal result
// whose message starts with want.
type mistake struct {
	set  func(xr *unstructured.Unstructured)
	want string
}

// privateWithoutNetwork is a mistake that the composites of both APIs can make.
var privateWithoutNetwork = mistake{
	set: func(xr *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(xr.Object, "private", "spec", "networking")
	},
	want: "spec.network is required when spec.networking is private",
}

// checkMistakes renders, with renderFile, the composite file that file writes for
// each case's change, and checks that the function's refusal fails the render.
func checkMistakes(t *testing.T, renderFile func(t *testing.T, xrPath string, args ...string) (rendered, error),
	file func(t *testing.T, fn func(xr *unstructured.Unstructured)) string, cases map[string]mistake) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := renderFile(t, file(t, tc.set))
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(`pipeline step "` + stepName + `" returned a fatal result: ` + tc.want))
		})
	}
}

// condition returns the composite's condition of type ct without its time, or nil.
func condition(xr *unstructured.Unstructured, ct xpv2.ConditionType) map[string]any {
	cs, _, _ := unstructured.NestedSlice(xr.Object, "status", "conditions")
	for _, c := range cs {
		m, ok := c.(map[string]any)
		if ok && m["type"] == string(ct) {
			delete(m, "lastTransitionTime")
			return m
		}
	}
	return nil
}

// validate runs `crossplane beta validate` with the XRD and the provider's CRDs as
// extensions. Crossplane's own schemas come from CROSSPLANE_CRDS, put where the CLI
// would cache them after a download, so that nothing is downloaded.
func validate(t *testing.T, resources ...string) (string, error) {
	t.Helper()
	return validateWith(t, example("definition.yaml")+","+repoPath("package", "crds"), resources...)
}

// validateWith runs `crossplane beta validate` with extensions, a comma-separated
// list of files and directories, as validate does.
func validateWith(t *testing.T, extensions string, resources ...string) (string, error) {
	t.Helper()
	cache := t.TempDir()
	dir := cache + "/" + strings.ReplaceAll(crossplaneImage, ":", "@")
	copyDir(t, crds, dir)
	stdout, stderr, err := crossplane(t, "beta", "validate", extensions, strings.Join(resources, ","),
		"--cache-dir", cache, "--crossplane-image", crossplaneImage)
	return stdout + stderr, err
}

func TestValidateExamplesAgainstTheXRD(t *testing.T) {
	g := NewWithT(t)
	var composed []*unstructured.Unstructured
	for _, tc := range sizeCases {
		r, err := render(t, compositeFile(t, tc.set), "--xrd", example("definition.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		// The API server would complete the generated name; validate does not,
		// and the CRD checks that the name can be a Cloud SQL name.
		for _, u := range r.composed {
			u.SetName(u.GetGenerateName() + "q9z3l")
		}
		composed = append(composed, r.composed...)
	}
	out, err := validate(t,
		example("claim.yaml"), example("xr.yaml"), example("definition.yaml"),
		example("composition.yaml"), example("composition-patch-and-transform.yaml"), example("functions.yaml"),
		writeManifests(t, "rendered.yaml", composed...))
	g.Expect(err).NotTo(HaveOccurred(), out)
	// Every file but the patch-and-transform input, whose schema ships with that
	// function, has a schema to be checked against.
	g.Expect(out).To(ContainSubstring("Total 12 resources: 1 missing schemas, 11 success cases, 0 failure cases"))
}

func TestValidateRejectsBadClaims(t *testing.T) {
	cases := map[string]struct {
		spec map[string]any
		want string
	}{
		"AnUnknownSize": {
			spec: map[string]any{"size": "huge"},
			want: `spec.size: Unsupported value: "huge": supported values: "small", "medium", "large"`,
		},
		"PrivateWithoutANetwork": {
			spec: map[string]any{"networking": "private"},
			want: "spec.network: Invalid value: is required when networking is private: give the VPC network as projects/<project-id>/global/networks/<network-name>",
		},
		"ANetworkWithPublicNetworking": {
			spec: map[string]any{"network": vpc},
			want: "spec.network: Invalid value: may only be set when networking is private",
		},
		"EveryNamespaceAndOneMore": {
			spec: map[string]any{"allowedNamespaces": []any{"*", "web"}},
			want: "'*' already allows every namespace: list either '*' alone or namespace names",
		},
		"NoNamespace": {
			spec: map[string]any{"allowedNamespaces": []any{}},
			want: "spec.allowedNamespaces: Invalid value: 0: spec.allowedNamespaces in body should have at least 1 items",
		},
		"AVersionNotOffered": {
			spec: map[string]any{"version": "9.6"},
			want: `spec.version: Unsupported value: "9.6"`,
		},
		"AZoneForARegion": {
			spec: map[string]any{"region": "europe-west1-b"},
			want: `spec.region: Invalid value: "europe-west1-b": spec.region in body should match`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			claim := readManifests(t, example("claim.yaml"))[0]
			for k, v := range tc.spec {
				g.Expect(unstructured.SetNestedField(claim.Object, v, "spec", k)).To(Succeed())
			}
			out, err := validate(t, writeManifests(t, "claim.yaml", claim))
			g.Expect(err).To(HaveOccurred(), out)
			g.Expect(out).To(ContainSubstring(tc.want))
		})
	}
}
