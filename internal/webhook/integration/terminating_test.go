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

package integration_test

import (
	"context"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// The deletion guard never keeps a namespace Terminating: once the namespace is
// being deleted, the deletions of its PostgresqlInstances are admitted without
// the annotation (the controller then keeps their Cloud SQL instances), while
// in a namespace that stays they are still denied.
func TestDeletionGuardLetsANamespaceGo(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace(t, "team-leaving", nil)
	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "team-leaving", Name: "kept"}}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: "kept"}
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: pcDefault}
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, pi)).To(MatchError(ContainSubstring("PostgresqlInstance team-leaving/kept may not be deleted")))

	// envtest runs no namespace controller: the namespace stays Terminating,
	// and the test deletes its objects as that controller would.
	g.Expect(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-leaving"}})).To(Succeed())
	g.Expect(env.Client.Delete(ctx, pi)).To(Succeed())
}
