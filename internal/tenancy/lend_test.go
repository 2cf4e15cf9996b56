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

package tenancy

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
)

func TestAdmits(t *testing.T) {
	lent := func(n *nsv1alpha1.NamespaceSelection) *nsv1alpha1.ClusterProviderConfig {
		return &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: nsv1alpha1.ClusterProviderConfigSpec{Namespaces: n}}
	}
	shared := &metav1.LabelSelector{MatchLabels: map[string]string{"cloudsql": "shared"}}
	type args struct {
		cpc    *nsv1alpha1.ClusterProviderConfig
		ns     string
		labels map[string]string
	}
	type want struct {
		needsLabels bool
		// err is the denial, "" when admitted.
		err string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NoNamespaces": {
			reason: "Without spec.namespaces no namespace may use a ClusterProviderConfig.",
			args:   args{cpc: lent(nil), ns: "team-a"},
			want: want{err: `ClusterProviderConfig "shared" does not admit namespace team-a: its spec.namespaces admits no namespace. ` +
				"Ask the platform team to add team-a to the ClusterProviderConfig's spec.namespaces.names, or name a ProviderConfig of namespace team-a in spec.providerConfigRef"},
		},
		"EmptyNamespaces": {
			reason: "An empty spec.namespaces admits no namespace either.",
			args:   args{cpc: lent(&nsv1alpha1.NamespaceSelection{}), ns: "team-a"},
			want: want{err: `ClusterProviderConfig "shared" does not admit namespace team-a: its spec.namespaces admits no namespace. ` +
				"Ask the platform team to add team-a to the ClusterProviderConfig's spec.namespaces.names, or name a ProviderConfig of namespace team-a in spec.providerConfigRef"},
		},
		"Listed": {
			reason: "A namespace listed by name is admitted without reading its labels.",
			args:   args{cpc: lent(&nsv1alpha1.NamespaceSelection{Names: []string{"team-a"}, Selector: shared}), ns: "team-a"},
		},
		"NotListed": {
			reason: "A namespace not listed is denied, with the names it admits.",
			args:   args{cpc: lent(&nsv1alpha1.NamespaceSelection{Names: []string{"team-b", "team-c"}}), ns: "team-a"},
			want: want{err: `ClusterProviderConfig "shared" does not admit namespace team-a: it admits only spec.namespaces.names [team-b, team-c]. ` +
				"Ask the platform team to add team-a to the ClusterProviderConfig's spec.namespaces.names, or name a ProviderConfig of namespace team-a in spec.providerConfigRef"},
		},
		"Selected": {
			reason: "A namespace whose labels the selector matches is admitted.",
			args:   args{cpc: lent(&nsv1alpha1.NamespaceSelection{Selector: shared}), ns: "team-a", labels: map[string]string{"cloudsql": "shared", "x": "y"}},
			want:   want{needsLabels: true},
		},
		"NotSelected": {
			reason: "A namespace whose labels the selector does not match is denied, with the selector and how to match it.",
			args:   args{cpc: lent(&nsv1alpha1.NamespaceSelection{Selector: shared}), ns: "team-a", labels: map[string]string{"cloudsql": "private"}},
			want: want{needsLabels: true, err: `ClusterProviderConfig "shared" does not admit namespace team-a: it admits only spec.namespaces.selector cloudsql=shared. ` +
				"Ask the platform team to add team-a to the ClusterProviderConfig's spec.namespaces.names, or label the namespace to match spec.namespaces.selector, " +
				"or name a ProviderConfig of namespace team-a in spec.providerConfigRef"},
		},
		"EmptySelector": {
			reason: "An empty selector matches every namespace, whose labels need not be read.",
			args:   args{cpc: lent(&nsv1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{}}), ns: "team-a"},
		},
		"InvalidSelector": {
			reason: "A selector that cannot be parsed admits nobody by label (fail closed), and says who must fix it.",
			args: args{cpc: lent(&nsv1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "cloudsql", Operator: "Matches"},
			}}}), ns: "team-a"},
			want: want{needsLabels: true, err: `ClusterProviderConfig "shared": spec.namespaces.selector is invalid (` +
				`"Matches" is not a valid label selector operator), so it admits no namespace by label; the platform team must fix it`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := want{needsLabels: NeedsLabels(tc.args.cpc, tc.args.ns)}
			if err := Admits(tc.args.cpc, tc.args.ns, tc.args.labels); err != nil {
				got.err = err.Error()
				if !IsNotLent(err) {
					t.Errorf("\n%s\nAdmits(...): %v is not a *NotLentError", tc.reason, err)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("\n%s\nAdmits(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// CheckLent reads a namespace's labels only when the selector needs them, and
// from the reader it is given.
func TestCheckLent(t *testing.T) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	live := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"cloudsql": "shared"}}},
	).Build()
	cpc := &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: nsv1alpha1.ClusterProviderConfigSpec{
		Namespaces: &nsv1alpha1.NamespaceSelection{Names: []string{"team-b"}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"cloudsql": "shared"}}},
	}}
	if err := CheckLent(context.Background(), live, cpc, "team-a"); err != nil {
		t.Errorf("a namespace whose live labels match: %v", err)
	}
	// team-b is listed: no read (the namespace does not even exist).
	if err := CheckLent(context.Background(), live, cpc, "team-b"); err != nil {
		t.Errorf("a listed namespace: %v", err)
	}
	if err := CheckLent(context.Background(), live, cpc, "team-c"); err == nil || IsNotLent(err) {
		t.Errorf("a namespace that cannot be read: want the read's error, got %v", err)
	}
}
