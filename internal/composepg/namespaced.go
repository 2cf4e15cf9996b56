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

package composepg

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// ConnectionSecretResourceName names the Secret that a namespaced composite gets in
// the pipeline's desired and observed state. Changing it would make Crossplane
// replace the Secret, so it is part of the function's contract.
const ConnectionSecretResourceName resource.Name = "connection-secret"

// Names of a namespaced composite's secrets, both in its namespace: the composite's
// name followed by these suffixes.
const (
	// ConnectionSecretSuffix names the Secret that the team's pods read: the
	// five ConnectionDetailKeys and nothing else, as a claim's secret holds.
	ConnectionSecretSuffix = "-postgres"
	// InstanceSecretSuffix names the PostgresqlInstance's own connection secret,
	// which the provider writes (with the pgpass line, the CA and both IPs
	// besides); it must not be the team's Secret, which the function owns.
	InstanceSecretSuffix = "-postgresqlinstance"
)

// FieldStatusConnectionSecretName is where a namespaced composite shows the name of
// its Secret, so that its owners need not derive it.
const FieldStatusConnectionSecretName = "status.connectionSecretName"

// ClusterProviderConfigDefault is the provider configuration the namespaced
// PostgresqlInstances of the function use: the ClusterProviderConfig named
// default, which must admit the composite's namespace (its spec.namespaces).
var ClusterProviderConfigDefault = xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: "default"}

// orphanPolicies are the management policies of a namespaced PostgresqlInstance
// whose composite asks for deletionPolicy Orphan: the namespaced kind has no
// deletion policy, and every action but Delete keeps the Cloud SQL instance when
// the PostgresqlInstance goes.
var orphanPolicies = xpv2.ManagementPolicies{
	xpv2.ManagementActionObserve,
	xpv2.ManagementActionCreate,
	xpv2.ManagementActionUpdate,
	xpv2.ManagementActionLateInitialize,
}

// ComposeNamespaced returns the namespaced PostgresqlInstance
// (cloudsql.m.travelaudience.com) that p, the parameters of a namespaced composite,
// asks for, in the composite's namespace. observed is the instance as it exists,
// or nil before it is created; see ForProvider for the changes it refuses.
func ComposeNamespaced(p Parameters, observed *nsv1alpha1.PostgresqlInstance) (*nsv1alpha1.PostgresqlInstance, error) {
	fp, err := ForProvider(p, parametersOf(observed))
	if err != nil {
		return nil, err
	}
	pcr := ClusterProviderConfigDefault
	pi := &nsv1alpha1.PostgresqlInstance{
		TypeMeta: metav1.TypeMeta{APIVersion: nsv1alpha1.SchemeGroupVersion.String(), Kind: nsv1alpha1.PostgresqlInstanceKind},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: p.Namespace,
			// Deleting the composite is how a team gives its database back, so
			// the webhook's guard against deleting instances by accident must
			// not block it; deletionPolicy says whether the data goes too.
			Annotations: map[string]string{v1alpha1.AnnotationAllowDeletion: "true"},
		},
		Spec: nsv1alpha1.PostgresqlInstanceSpec{
			WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: p.Name + InstanceSecretSuffix},
			ProviderConfigReference:          &pcr,
			ForProvider:                      fp,
		},
	}
	// Delete leaves the CRD's default, every action.
	if p.DeletionPolicy == xpv2.DeletionOrphan {
		pi.SetManagementPolicies(orphanPolicies)
	}
	return pi, nil
}

// ConnectionSecret returns the Secret that a namespaced composite's pods read, named
// after the composite (ConnectionSecretSuffix) in its namespace, and whether it is
// complete. details are the connection details of the observed PostgresqlInstance,
// observed the Secret as it exists (nil before it is created).
//
// The Secret holds the five ConnectionDetailKeys once the instance has published
// every one of them, and no data before: a pod must not start with an empty
// password. Once complete, it keeps what it holds while the instance's details are
// incomplete (a connection secret being rewritten, say), rather than taking the
// credentials away from running applications. It is complete, and ready, only with
// all five keys.
func ConnectionSecret(p Parameters, details resource.ConnectionDetails, observed *corev1.Secret) (*corev1.Secret, bool) {
	return connectionSecret(p, ConnectionDetailKeys, details, observed)
}

// connectionSecret is ConnectionSecret for the given keys: ConnectionDetailKeys
// for an instance of the composite's own, SharedConnectionDetailKeys for a user on
// a shared instance, whose Secret is complete only once the user owns its database.
func connectionSecret(p Parameters, keys []string, details resource.ConnectionDetails, observed *corev1.Secret) (*corev1.Secret, bool) {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name + ConnectionSecretSuffix, Namespace: p.Namespace},
		Type:       corev1.SecretTypeOpaque,
	}
	data := completeDetails(keys, details)
	if data == nil && observed != nil {
		data = completeDetails(keys, observed.Data)
	}
	if data == nil {
		return s, false
	}
	s.Data = data
	return s, true
}

// completeDetails returns the keys of details, or nil unless every one of them is
// there and not empty.
func completeDetails(keys []string, details map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(keys))
	for _, k := range keys {
		v := details[k]
		if len(v) == 0 {
			return nil
		}
		out[k] = v
	}
	return out
}
