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

package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// A namespaced PostgresqlBackup is what crossplane-runtime's reconciler of a
// namespaced managed resource takes.
var _ resource.ModernManaged = &v1alpha1.PostgresqlBackup{}

// backupTeam is the namespace of the backups below, apart from the other
// tests', which create theirs.
const backupTeam = "team-backups"

func nsBackup(name string, fns ...func(p *v1alpha1.PostgresqlBackupParameters)) *v1alpha1.PostgresqlBackup {
	b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: backupTeam, Name: name}}
	b.Spec.ForProvider.Instance = "shared"
	for _, fn := range fns {
		fn(&b.Spec.ForProvider)
	}
	return b
}

func TestNamespacedBackupValidation(t *testing.T) {
	controlplane.Need(t)
	const fp = "spec.forProvider."
	type params = v1alpha1.PostgresqlBackupParameters
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: backupTeam}}))).To(Succeed())
	onCluster := func(p *params) { p.Instance, p.ClusterInstance = "", "shared" }

	b := nsBackup("backup-defaults", onCluster)
	g.Expect(env.Client.Create(ctx, b)).To(Succeed())
	g.Expect(b.Spec.ManagementPolicies).To(ConsistOf(xpv2.ManagementActionAll))
	g.Expect(b.InstanceKey()).To(Equal(types.NamespacedName{Name: "shared"}), "a cluster-scoped instance has no namespace")
	g.Expect(nsBackup("x").InstanceKey()).To(Equal(types.NamespacedName{Namespace: backupTeam, Name: "shared"}))

	creates := map[string]struct {
		fn   func(p *params)
		want []string
	}{
		"NoInstance": {fn: func(p *params) { p.Instance = "" }, want: []string{fp + "instance", "is required: name the PostgresqlInstance to back up"}},
		"Both": {fn: func(p *params) { p.ClusterInstance = "shared" },
			want: []string{fp + "clusterInstance", "cannot be used together with instance, instanceRef or instanceSelector"}},
		"RefToAnotherNamespace": {fn: func(p *params) {
			p.Instance, p.InstanceRef = "", &xpv2.NamespacedReference{Name: "shared", Namespace: "team-b"}
		},
			want: []string{fp + "instanceRef.namespace", "must be omitted: a namespaced PostgresqlBackup may back up only a PostgresqlInstance of its own namespace"}},
		"ClusterRef": {fn: func(p *params) { p.Instance, p.ClusterInstanceRef = "", &xpv2.Reference{Name: "shared"} }},
	}
	for name, tc := range creates {
		t.Run("Create"+name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(ctx, nsBackup("backup-create-"+strings.ToLower(name), tc.fn))
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}

	updates := map[string]struct {
		initial func(p *params)
		update  func(p *params)
		want    []string
	}{
		"InstanceChanged": {update: func(p *params) { p.Instance = "other" }, want: []string{fp + "instance", "cannot be changed or removed once set (was shared)"}},
		"ClusterInstanceChanged": {initial: onCluster, update: func(p *params) { p.ClusterInstance = "other" },
			want: []string{fp + "clusterInstance", "cannot be changed or removed once set (was shared): a backup is of one instance"}},
		"DescriptionAdded": {update: func(p *params) { p.Description = ptr.To("x") }, want: []string{fp + "description", "is immutable"}},
	}
	for name, tc := range updates {
		t.Run("Update"+name, func(t *testing.T) {
			g := NewWithT(t)
			b := nsBackup("backup-update-" + strings.ToLower(name))
			if tc.initial != nil {
				tc.initial(&b.Spec.ForProvider)
			}
			g.Expect(env.Client.Create(ctx, b)).To(Succeed())
			tc.update(&b.Spec.ForProvider)
			err := env.Client.Update(ctx, b)
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}
}
