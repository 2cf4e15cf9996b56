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
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// AllNamespaces in a list of allowed namespaces allows every namespace.
const AllNamespaces = "*"

const (
	errBadSelector  = "PostgresqlInstance %s: %s.namespaceSelector is invalid: fix it"
	errReadSelected = "cannot read namespace %s to match it against %s.namespaceSelector of PostgresqlInstance %s"
)

// A Policy decides which namespaces may request which instances: an instance's
// spec.injection when it has one, else the provider's default list, for the
// postgres password (Allows); that or its spec.tenancy for namespaced users
// and databases (AdmitsObjects).
type Policy struct {
	// DefaultAllowedNamespaces applies to instances without spec.injection:
	// namespace names, or "*" for every namespace.
	DefaultAllowedNamespaces []string
}

// Allows reports whether pods in namespace ns may request pi. namespace reads the
// namespace, which is needed only when pi selects namespaces by label.
func (p Policy) Allows(ctx context.Context, pi *v1alpha1.PostgresqlInstance, ns string, namespace func(context.Context, string) (*corev1.Namespace, error)) (bool, error) {
	inj := pi.Spec.Injection
	if inj == nil {
		return listed(p.DefaultAllowedNamespaces, ns), nil
	}
	return selects(ctx, pi.Name, "spec.injection", inj.AllowedNamespaces, inj.NamespaceSelector, ns, namespace)
}

// AdmitsObjects reports whether namespaced PostgresqlUsers and
// PostgresqlDatabases of namespace ns may use pi, and pods of ns may name
// those users: pi's spec.tenancy admits ns, or pi serves ns's pods postgres
// (Allows), which is every right already. Receiving postgres is never implied
// by this: a namespace admitted by spec.tenancy alone is denied the instance
// annotation.
func (p Policy) AdmitsObjects(ctx context.Context, pi *v1alpha1.PostgresqlInstance, ns string, namespace func(context.Context, string) (*corev1.Namespace, error)) (bool, error) {
	if t := pi.Spec.Tenancy; t != nil {
		ok, err := selects(ctx, pi.Name, "spec.tenancy", t.AllowedNamespaces, t.NamespaceSelector, ns, namespace)
		if err != nil || ok {
			return ok, err
		}
	}
	return p.Allows(ctx, pi, ns, namespace)
}

// selects reports whether names or selector (of field of instance name)
// admit namespace ns.
func selects(ctx context.Context, name, field string, names []string, selector *metav1.LabelSelector, ns string, namespace func(context.Context, string) (*corev1.Namespace, error)) (bool, error) {
	if listed(names, ns) {
		return true, nil
	}
	if selector == nil {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return false, errors.Wrapf(err, errBadSelector, name, field)
	}
	n, err := namespace(ctx, ns)
	if err != nil {
		return false, errors.Wrapf(err, errReadSelected, ns, field, name)
	}
	return sel.Matches(labels.Set(n.Labels)), nil
}

// ExplainObjects says, for a denial of a namespaced PostgresqlUser or
// PostgresqlDatabase, which namespaces pi admits and how to change that.
func (p Policy) ExplainObjects(pi *v1alpha1.PostgresqlInstance, ns string) string {
	var admits []string
	if t := pi.Spec.Tenancy; t != nil {
		if len(t.AllowedNamespaces) > 0 {
			admits = append(admits, "spec.tenancy.allowedNamespaces "+QuoteList(t.AllowedNamespaces))
		}
		if t.NamespaceSelector != nil {
			admits = append(admits, "spec.tenancy.namespaceSelector "+metav1.FormatLabelSelector(t.NamespaceSelector))
		}
	}
	if inj := pi.Spec.Injection; inj != nil {
		if len(inj.AllowedNamespaces) > 0 {
			admits = append(admits, "spec.injection.allowedNamespaces "+QuoteList(inj.AllowedNamespaces))
		}
		if inj.NamespaceSelector != nil {
			admits = append(admits, "spec.injection.namespaceSelector "+metav1.FormatLabelSelector(inj.NamespaceSelector))
		}
	} else if len(p.DefaultAllowedNamespaces) > 0 {
		admits = append(admits, "the provider's [injection] default_allowed_namespaces "+QuoteList(p.DefaultAllowedNamespaces))
	}
	how := "ask the instance's owner to add " + ns + " to spec.tenancy.allowedNamespaces (its users and databases, without the postgres password)"
	switch {
	case pi.Spec.Tenancy != nil && pi.Spec.Tenancy.NamespaceSelector != nil:
		how += ", or to label the namespace to match spec.tenancy.namespaceSelector"
	case pi.Spec.Injection != nil && pi.Spec.Injection.NamespaceSelector != nil:
		how += ", or to label the namespace to match spec.injection.namespaceSelector"
	}
	if len(admits) == 0 {
		return "it admits no namespace; " + how
	}
	return fmt.Sprintf("it admits only %s; %s", strings.Join(admits, " and "), how)
}

// Explain says, for a denial, which namespaces pi allows and how to change that.
func (p Policy) Explain(pi *v1alpha1.PostgresqlInstance, ns string) string {
	inj := pi.Spec.Injection
	if inj == nil {
		return fmt.Sprintf("it has no spec.injection, so the provider's [injection] default_allowed_namespaces (%s) applies; "+
			"ask the instance's owner to set spec.injection.allowedNamespaces to include %s", QuoteList(p.DefaultAllowedNamespaces), ns)
	}
	var allows []string
	if len(inj.AllowedNamespaces) > 0 {
		allows = append(allows, "spec.injection.allowedNamespaces "+QuoteList(inj.AllowedNamespaces))
	}
	if inj.NamespaceSelector != nil {
		allows = append(allows, "spec.injection.namespaceSelector "+metav1.FormatLabelSelector(inj.NamespaceSelector))
	}
	if len(allows) == 0 {
		return "its spec.injection is empty, which allows no namespace; ask the instance's owner to add " + ns + " to spec.injection.allowedNamespaces"
	}
	how := "ask the instance's owner to add " + ns + " to spec.injection.allowedNamespaces"
	if inj.NamespaceSelector != nil {
		how += ", or to label the namespace to match spec.injection.namespaceSelector"
	}
	return fmt.Sprintf("it allows only %s; %s", strings.Join(allows, " and "), how)
}

func listed(names []string, ns string) bool {
	return slices.Contains(names, AllNamespaces) || slices.Contains(names, ns)
}

// QuoteList writes a list of namespace names as denials show it, saying so
// when it is empty.
func QuoteList(names []string) string {
	if len(names) == 0 {
		return "[] (none)"
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// NamespaceGetter reads namespaces through r, in the form that Allows and
// AdmitsObjects take: they read a namespace only when a selector needs its labels.
func NamespaceGetter(r client.Reader) func(context.Context, string) (*corev1.Namespace, error) {
	return func(ctx context.Context, name string) (*corev1.Namespace, error) {
		n := &corev1.Namespace{}
		return n, r.Get(ctx, types.NamespacedName{Name: name}, n)
	}
}
