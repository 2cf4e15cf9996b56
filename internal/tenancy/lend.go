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
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
)

const (
	errNotLent = "%s does not admit namespace %s: %s. Ask the platform team to add %s to the ClusterProviderConfig's " +
		"spec.namespaces.names%s, or name a ProviderConfig of namespace %s in spec.providerConfigRef"
	errBadLendSelector  = "%s: spec.namespaces.selector is invalid (%v), so it admits no namespace by label; the platform team must fix it"
	errGetNamespace     = "cannot read the labels of namespace %s to match them against spec.namespaces.selector of %s: check that the provider may get namespaces (cluster/deploy/provider.yaml and examples/install/provider.yaml grant it)"
	errGetClusterConfig = "cannot get ClusterProviderConfig %q named by spec.providerConfigRef"
	errImportDenied     = "%s does not allow importing a Cloud SQL instance that no PostgresqlInstance created " +
		"(its spec.importPolicy is %s): give this PostgresqlInstance a name that is not taken (spec.forProvider.name or metadata.name), " +
		"or ask the platform team to set spec.importPolicy: Allow on the ClusterProviderConfig"
)

// A NotLentError says that a ClusterProviderConfig does not admit a namespace,
// and what the platform team must change so that it does.
type NotLentError struct{ msg string }

func (e *NotLentError) Error() string { return e.msg }

// IsNotLent reports whether err, or its cause, is a *NotLentError.
func IsNotLent(err error) bool {
	var nl *NotLentError
	return errors.As(err, &nl)
}

// NeedsLabels reports whether Admits needs the labels of namespace ns to decide
// for cpc: the namespace is not listed by name, and cpc selects by label (a
// selector without requirements matches every namespace, whatever its labels).
func NeedsLabels(cpc *nsv1alpha1.ClusterProviderConfig, ns string) bool {
	n := cpc.Spec.Namespaces
	if n == nil || n.Selector == nil || slices.Contains(n.Names, ns) {
		return false
	}
	return len(n.Selector.MatchLabels) > 0 || len(n.Selector.MatchExpressions) > 0
}

// Admits decides whether ClusterProviderConfig cpc lends itself to namespace
// ns, whose labels are nsLabels (read only when NeedsLabels says so; nil
// otherwise). A namespace is admitted when spec.namespaces.names lists it or
// spec.namespaces.selector matches its labels; without spec.namespaces none
// is. It returns nil, or a *NotLentError naming cpc, ns and what to add.
func Admits(cpc *nsv1alpha1.ClusterProviderConfig, ns string, nsLabels map[string]string) error {
	name := providerconfig.Named(nsv1alpha1.ClusterProviderConfigKind, cpc.Name, "")
	n := cpc.Spec.Namespaces
	if n == nil || (len(n.Names) == 0 && n.Selector == nil) {
		return &NotLentError{msg: fmt.Sprintf(errNotLent, name, ns, "its spec.namespaces admits no namespace", ns, "", ns)}
	}
	if slices.Contains(n.Names, ns) {
		return nil
	}
	var admits []string
	if len(n.Names) > 0 {
		admits = append(admits, "spec.namespaces.names ["+strings.Join(n.Names, ", ")+"]")
	}
	orLabel := ""
	if n.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(n.Selector)
		if err != nil {
			return &NotLentError{msg: fmt.Sprintf(errBadLendSelector, name, err)}
		}
		if sel.Matches(labels.Set(nsLabels)) {
			return nil
		}
		admits = append(admits, "spec.namespaces.selector "+metav1.FormatLabelSelector(n.Selector))
		orLabel = ", or label the namespace to match spec.namespaces.selector"
	}
	why := "it admits only " + strings.Join(admits, " and ")
	return &NotLentError{msg: fmt.Sprintf(errNotLent, name, ns, why, ns, orLabel, ns)}
}

// ImportAllowed reports whether the namespaced PostgresqlInstances that use
// cpc may import a Cloud SQL instance that no PostgresqlInstance created.
func ImportAllowed(cpc *nsv1alpha1.ClusterProviderConfig) bool {
	return cpc.Spec.ImportPolicy == nsv1alpha1.ImportAllow
}

// ImportDenied explains that cpc does not allow importing, and what to do.
func ImportDenied(cpc *nsv1alpha1.ClusterProviderConfig) error {
	p := cpc.Spec.ImportPolicy
	if p == "" {
		p = nsv1alpha1.ImportDeny
	}
	return errors.Errorf(errImportDenied, providerconfig.Named(nsv1alpha1.ClusterProviderConfigKind, cpc.Name, ""), p)
}

// CheckLent returns a *NotLentError when cpc does not admit namespace ns,
// reading the namespace's labels through namespaces (an uncached reader, so
// that a label just set counts) only when cpc's selector needs them.
func CheckLent(ctx context.Context, namespaces client.Reader, cpc *nsv1alpha1.ClusterProviderConfig, ns string) error {
	var l map[string]string
	if NeedsLabels(cpc, ns) {
		n := &corev1.Namespace{}
		if err := namespaces.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
			return errors.Wrapf(err, errGetNamespace, ns, providerconfig.Named(nsv1alpha1.ClusterProviderConfigKind, cpc.Name, ""))
		}
		l = n.Labels
	}
	return Admits(cpc, ns, l)
}

// LentClusterConfig reads ClusterProviderConfig name through kube, and returns
// it if it admits namespace ns (see CheckLent), else a *NotLentError.
func LentClusterConfig(ctx context.Context, kube, namespaces client.Reader, ns, name string) (*nsv1alpha1.ClusterProviderConfig, error) {
	cpc := &nsv1alpha1.ClusterProviderConfig{}
	if err := kube.Get(ctx, types.NamespacedName{Name: name}, cpc); err != nil {
		return nil, errors.Wrapf(err, errGetClusterConfig, name)
	}
	if err := CheckLent(ctx, namespaces, cpc, ns); err != nil {
		return nil, err
	}
	return cpc, nil
}

// CheckNamespacedRef returns a *NotLentError when ref, the configuration of a
// namespaced PostgresqlInstance of namespace ns, is a ClusterProviderConfig
// that does not admit ns. It returns nil for a ProviderConfig (a namespace's
// own), for no ref, and for a ClusterProviderConfig that does not exist:
// callers report those themselves, and nothing is lent by them.
func CheckNamespacedRef(ctx context.Context, configs, namespaces client.Reader, ns string, ref *xpv2.ProviderConfigReference) error {
	if ref == nil || ref.Kind != nsv1alpha1.ClusterProviderConfigKind {
		return nil
	}
	_, err := LentClusterConfig(ctx, configs, namespaces, ns, ref.Name)
	if kerrors.IsNotFound(errors.Cause(err)) {
		return nil
	}
	return err
}
