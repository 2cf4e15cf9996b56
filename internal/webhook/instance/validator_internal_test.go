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

package instance

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

func TestDeletesExternal(t *testing.T) {
	t.Parallel()
	type args struct {
		policies xpv2.ManagementPolicies
		orphan   bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   bool
	}{
		"NoPolicies":          {reason: "Without management policies the provider deletes the instance.", want: true},
		"All":                 {reason: "Management policies [*] delete.", args: args{policies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}}, want: true},
		"WithDelete":          {reason: "Management policies holding Delete delete.", args: args{policies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionDelete}}, want: true},
		"ObserveOnly":         {reason: "Management policies [Observe] do not delete.", args: args{policies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}}},
		"EverythingButDelete": {reason: "Management policies without Delete or * do not delete.", args: args{policies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}}},
		"Orphan":              {reason: "deletionPolicy Orphan does not delete.", args: args{orphan: true}},
		"OrphanWithAll":       {reason: "deletionPolicy Orphan does not delete, whatever the management policies.", args: args{orphan: true, policies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}}},
		"OrphanWithDelete":    {reason: "deletionPolicy Orphan does not delete, even with Delete among the management policies.", args: args{orphan: true, policies: xpv2.ManagementPolicies{xpv2.ManagementActionDelete}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := deletesExternal(&subject{policies: tc.args.policies, orphan: tc.args.orphan})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\ndeletesExternal(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMayCreate(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason   string
		policies xpv2.ManagementPolicies
		orphan   bool
		want     bool
	}{
		"NoPolicies":          {reason: "Without management policies the provider creates the instance.", want: true},
		"All":                 {reason: "Management policies [*] create.", policies: xpv2.ManagementPolicies{xpv2.ManagementActionAll}, want: true},
		"WithCreate":          {reason: "Management policies holding Create create.", policies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate}, want: true},
		"ObserveOnly":         {reason: "Management policies [Observe] do not create.", policies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}},
		"EverythingButCreate": {reason: "Management policies without Create or * do not create.", policies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize, xpv2.ManagementActionDelete}},
		"OrphanCreates":       {reason: "deletionPolicy Orphan is about deletion: the provider still creates.", orphan: true, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := mayCreate(&subject{policies: tc.policies, orphan: tc.orphan})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nmayCreate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// summary is what subjectOf made of a request, and what its config read.
type summary struct {
	Ref, Kubectl    string
	Policies        xpv2.ManagementPolicies
	Orphan          bool
	ForProviderName *string
	// PCName and Project are config's, NotFound whether it found nothing, Err
	// any other error it returned.
	PCName, Project string
	NotFound        bool
	Err             error
}

func TestSubjectOf(t *testing.T) {
	t.Parallel()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, v1alpha1.SchemeBuilder.AddToScheme, nsv1alpha1.SchemeBuilder.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	errBoom := errors.New("boom")
	failing := &test.MockClient{MockGet: test.NewMockGetFn(errBoom)}
	clusterKind := metav1.GroupVersionKind{Group: v1alpha1.Group, Version: v1alpha1.Version, Kind: v1alpha1.PostgresqlInstanceKind}
	nsKind := metav1.GroupVersionKind{Group: nsv1alpha1.Group, Version: nsv1alpha1.Version, Kind: nsv1alpha1.PostgresqlInstanceKind}
	projectOf := func(p string) v1alpha1.ProviderConfigSpec {
		return v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: p}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}}
	}
	pc := func(name, p string) client.Object {
		return &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: projectOf(p)}
	}
	cpc := func(name, p string) client.Object {
		return &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: nsv1alpha1.ClusterProviderConfigSpec{
			ProviderConfigSpec: projectOf(p), Namespaces: &nsv1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{}},
		}}
	}
	nspc := func(namespace, name, p string) client.Object {
		return &nsv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: nsv1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: p}, Credentials: nsv1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceNone}}}
	}
	cluster := func(fn func(*v1alpha1.PostgresqlInstance)) []byte {
		pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "orders"}}
		pi.SetGroupVersionKind(v1alpha1.PostgresqlInstanceGroupVersionKind)
		if fn != nil {
			fn(pi)
		}
		b, _ := json.Marshal(pi)
		return b
	}
	namespaced := func(fn func(*nsv1alpha1.PostgresqlInstance)) []byte {
		pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "team-x", Name: "orders"}}
		pi.SetGroupVersionKind(nsv1alpha1.PostgresqlInstanceGroupVersionKind)
		pi.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "default"})
		if fn != nil {
			fn(pi)
		}
		b, _ := json.Marshal(pi)
		return b
	}
	const (
		clusterCmd = "postgresqlinstances.cloudsql.travelaudience.com orders"
		nsCmd      = "-n team-x postgresqlinstances.cloudsql.m.travelaudience.com orders"
	)

	type args struct {
		kind         metav1.GroupVersionKind
		raw          []byte
		kube, late   []client.Object
		pcs, secrets client.Reader
	}
	type want struct {
		summary *summary
		err     error
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"ClusterScoped": {
			reason: "The cluster-scoped kind is named by its name, its policies, deletion policy and spec.forProvider.name are kept, and ProviderConfig default is its configuration.",
			args: args{kind: clusterKind, kube: []client.Object{pc("default", "p-default"), cpc("default", "p-cpc")}, raw: cluster(func(pi *v1alpha1.PostgresqlInstance) {
				pi.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
				pi.SetDeletionPolicy(xpv2.DeletionOrphan)
				pi.Spec.ForProvider.Name = ptr.To("orders-db")
			})},
			want: want{summary: &summary{Ref: "orders", Kubectl: clusterCmd, Policies: xpv2.ManagementPolicies{xpv2.ManagementActionObserve}, Orphan: true,
				ForProviderName: ptr.To("orders-db"), PCName: `ProviderConfig "default"`, Project: "p-default"}},
		},
		"ClusterScopedDeletionPolicyDelete": {
			reason: "deletionPolicy Delete is no orphan.",
			args: args{kind: clusterKind, kube: []client.Object{pc("default", "p-default")}, raw: cluster(func(pi *v1alpha1.PostgresqlInstance) {
				pi.SetDeletionPolicy(xpv2.DeletionDelete)
			})},
			want: want{summary: &summary{Ref: "orders", Kubectl: clusterCmd, PCName: `ProviderConfig "default"`, Project: "p-default"}},
		},
		"ClusterScopedNamedConfig": {
			reason: "The ProviderConfig spec.providerConfigRef names is the configuration.",
			args: args{kind: clusterKind, kube: []client.Object{pc("default", "p-default"), pc("team-a", "p-team-a")}, raw: cluster(func(pi *v1alpha1.PostgresqlInstance) {
				pi.SetProviderConfigReference(&xpv2.Reference{Name: "team-a"})
			})},
			want: want{summary: &summary{Ref: "orders", Kubectl: clusterCmd, PCName: `ProviderConfig "team-a"`, Project: "p-team-a"}},
		},
		"ClusterScopedEmptyConfigName": {
			reason: "A spec.providerConfigRef without a name means ProviderConfig default.",
			args: args{kind: clusterKind, kube: []client.Object{pc("default", "p-default")}, raw: cluster(func(pi *v1alpha1.PostgresqlInstance) {
				pi.SetProviderConfigReference(&xpv2.Reference{})
			})},
			want: want{summary: &summary{Ref: "orders", Kubectl: clusterCmd, PCName: `ProviderConfig "default"`, Project: "p-default"}},
		},
		"ClusterScopedConfigFromTheAPIServer": {
			reason: "A ProviderConfig missing from the cache is read from the API server.",
			args:   args{kind: clusterKind, late: []client.Object{pc("default", "p-late")}, raw: cluster(nil)},
			want:   want{summary: &summary{Ref: "orders", Kubectl: clusterCmd, PCName: `ProviderConfig "default"`, Project: "p-late"}},
		},
		"ClusterScopedConfigMissing": {
			reason: "A ProviderConfig that neither reader holds is not found.",
			args:   args{kind: clusterKind, kube: []client.Object{cpc("default", "p-cpc")}, raw: cluster(nil)},
			want:   want{summary: &summary{Ref: "orders", Kubectl: clusterCmd, PCName: `ProviderConfig "default"`, NotFound: true}},
		},
		"ClusterScopedConfigReadFails": {
			reason: "An error of the cache is returned as it is, without asking the API server.",
			args:   args{kind: clusterKind, pcs: failing, late: []client.Object{pc("default", "p-late")}, raw: cluster(nil)},
			want:   want{summary: &summary{Ref: "orders", Kubectl: clusterCmd, PCName: `ProviderConfig "default"`, Err: errBoom}},
		},
		"ClusterScopedAPIServerReadFails": {
			reason: "An error of the API server, asked after the cache found nothing, is returned.",
			args:   args{kind: clusterKind, secrets: failing, raw: cluster(nil)},
			want:   want{summary: &summary{Ref: "orders", Kubectl: clusterCmd, PCName: `ProviderConfig "default"`, Err: errBoom}},
		},
		"ClusterScopedUndecodable": {
			reason: "An object that is not JSON cannot be decoded.",
			args:   args{kind: clusterKind, raw: []byte("{")},
			want:   want{err: cmpopts.AnyError},
		},
		"ClusterScopedCarryingANamespacedObject": {
			reason: "An object of the namespaced group is not decoded as the cluster-scoped kind.",
			args:   args{kind: clusterKind, raw: namespaced(nil)},
			want:   want{err: cmpopts.AnyError},
		},
		"UnknownKind": {
			reason: "A kind of neither group is read as the cluster-scoped kind.",
			args:   args{kind: metav1.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Database"}, kube: []client.Object{pc("default", "p-default")}, raw: cluster(nil)},
			want:   want{summary: &summary{Ref: "orders", Kubectl: clusterCmd, PCName: `ProviderConfig "default"`, Project: "p-default"}},
		},
		"Namespaced": {
			reason: "The namespaced kind is named with its namespace, never orphans, and ClusterProviderConfig default is its configuration.",
			args: args{kind: nsKind, kube: []client.Object{pc("default", "p-default"), cpc("default", "p-cpc")}, raw: namespaced(func(pi *nsv1alpha1.PostgresqlInstance) {
				pi.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
				pi.Spec.ForProvider.Name = ptr.To("team-x-orders")
			})},
			want: want{summary: &summary{Ref: "team-x/orders", Kubectl: nsCmd, Policies: xpv2.ManagementPolicies{xpv2.ManagementActionAll},
				ForProviderName: ptr.To("team-x-orders"), PCName: `ClusterProviderConfig "default"`, Project: "p-cpc"}},
		},
		"NamespacedNamedClusterProviderConfig": {
			reason: "The ClusterProviderConfig spec.providerConfigRef names is the configuration.",
			args: args{kind: nsKind, kube: []client.Object{cpc("default", "p-cpc"), cpc("shared", "p-shared")}, raw: namespaced(func(pi *nsv1alpha1.PostgresqlInstance) {
				pi.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "shared"})
			})},
			want: want{summary: &summary{Ref: "team-x/orders", Kubectl: nsCmd, PCName: `ClusterProviderConfig "shared"`, Project: "p-shared"}},
		},
		"NamespacedProviderConfig": {
			reason: "A ProviderConfig of the instance's namespace is named with that namespace.",
			args: args{kind: nsKind, kube: []client.Object{nspc("team-x", "team", "p-team"), nspc("team-y", "team", "p-other")}, raw: namespaced(func(pi *nsv1alpha1.PostgresqlInstance) {
				pi.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: nsv1alpha1.ProviderConfigKind, Name: "team"})
			})},
			want: want{summary: &summary{Ref: "team-x/orders", Kubectl: nsCmd, PCName: `ProviderConfig "team" of namespace team-x`, Project: "p-team"}},
		},
		"NamespacedNoConfigRef": {
			reason: "Without spec.providerConfigRef no configuration is used, not even ClusterProviderConfig default.",
			args: args{kind: nsKind, kube: []client.Object{cpc("default", "p-cpc")}, raw: namespaced(func(pi *nsv1alpha1.PostgresqlInstance) {
				pi.SetProviderConfigReference(nil)
			})},
			want: want{summary: &summary{Ref: "team-x/orders", Kubectl: nsCmd, PCName: "no configuration (spec.providerConfigRef is not set)", Err: cmpopts.AnyError}},
		},
		"NamespacedConfigFromTheAPIServer": {
			reason: "A configuration missing from the cache is read from the API server.",
			args:   args{kind: nsKind, late: []client.Object{cpc("default", "p-late")}, raw: namespaced(nil)},
			want:   want{summary: &summary{Ref: "team-x/orders", Kubectl: nsCmd, PCName: `ClusterProviderConfig "default"`, Project: "p-late"}},
		},
		"NamespacedConfigMissing": {
			reason: "A configuration that neither reader holds is not found.",
			args:   args{kind: nsKind, kube: []client.Object{pc("default", "p-default")}, raw: namespaced(nil)},
			want:   want{summary: &summary{Ref: "team-x/orders", Kubectl: nsCmd, PCName: `ClusterProviderConfig "default"`, NotFound: true}},
		},
		"NamespacedConfigReadFails": {
			reason: "An error of the cache is returned, unwrapped, without asking the API server.",
			args:   args{kind: nsKind, pcs: failing, late: []client.Object{cpc("default", "p-late")}, raw: namespaced(nil)},
			want:   want{summary: &summary{Ref: "team-x/orders", Kubectl: nsCmd, PCName: `ClusterProviderConfig "default"`, Err: errBoom}},
		},
		"NamespacedAPIServerReadFails": {
			reason: "An error of the API server, asked after the cache found nothing, is returned.",
			args:   args{kind: nsKind, secrets: failing, raw: namespaced(nil)},
			want:   want{summary: &summary{Ref: "team-x/orders", Kubectl: nsCmd, PCName: `ClusterProviderConfig "default"`, Err: errBoom}},
		},
		"NamespacedUnknownConfigKind": {
			reason: "A spec.providerConfigRef.kind that is no configuration's is an error, not a missing configuration.",
			args: args{kind: nsKind, kube: []client.Object{cpc("default", "p-cpc")}, raw: namespaced(func(pi *nsv1alpha1.PostgresqlInstance) {
				pi.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: "Secret", Name: "team"})
			})},
			want: want{summary: &summary{Ref: "team-x/orders", Kubectl: nsCmd, PCName: `Secret "team"`, Err: cmpopts.AnyError}},
		},
		"NamespacedUndecodable": {
			reason: "An empty object cannot be decoded.",
			args:   args{kind: nsKind},
			want:   want{err: cmpopts.AnyError},
		},
		"NamespacedCarryingAClusterObject": {
			reason: "An object of the cluster-scoped group is not decoded as the namespaced kind.",
			args:   args{kind: nsKind, raw: cluster(nil)},
			want:   want{err: cmpopts.AnyError},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var pcs, secrets client.Reader = fake.NewClientBuilder().WithScheme(s).WithObjects(tc.args.kube...).Build(),
				fake.NewClientBuilder().WithScheme(s).WithObjects(append(append([]client.Object{}, tc.args.kube...), tc.args.late...)...).Build()
			if tc.args.pcs != nil {
				pcs = tc.args.pcs
			}
			if tc.args.secrets != nil {
				secrets = tc.args.secrets
			}
			v := New(pcs, secrets, s, nil)
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Kind: tc.args.kind}}
			sub, err := v.subjectOf(req, runtime.RawExtension{Raw: tc.args.raw})
			got := want{err: err}
			if sub != nil {
				got.summary = &summary{Ref: sub.ref, Kubectl: sub.kubectl, Policies: sub.policies, Orphan: sub.orphan, ForProviderName: sub.forProviderName}
				pc, pcName, err := sub.config(context.Background())
				got.summary.PCName = pcName
				switch {
				case kerrors.IsNotFound(err):
					got.summary.NotFound = true
				case err != nil:
					got.summary.Err = err
				default:
					got.summary.Project = pc.Spec.ProjectID
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateErrors(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("\n%s\nsubjectOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
