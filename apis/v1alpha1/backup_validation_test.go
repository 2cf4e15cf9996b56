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
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// backup is the smallest valid PostgresqlBackup, changed by fns.
func backup(name string, fns ...func(p *v1alpha1.PostgresqlBackupParameters)) *v1alpha1.PostgresqlBackup {
	b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: name}}
	b.Spec.ForProvider.Instance = "shared"
	for _, fn := range fns {
		fn(&b.Spec.ForProvider)
	}
	return b
}

func TestBackupValidation(t *testing.T) {
	controlplane.Need(t)
	const fp = "spec.forProvider."
	type params = v1alpha1.PostgresqlBackupParameters
	ctx := context.Background()

	t.Run("Defaults", func(t *testing.T) {
		g := NewWithT(t)
		b := backup("backup-defaults")
		g.Expect(env.Client.Create(ctx, b)).To(Succeed())
		g.Expect(b.Spec.ManagementPolicies).To(Equal(xpv2.ManagementPolicies{xpv2.ManagementActionAll}))
		g.Expect(b.Spec.DeletionPolicy).To(Equal(xpv2.DeletionDelete))
		g.Expect(b.InstanceKey()).To(Equal(types.NamespacedName{Name: "shared"}))
		g.Expect(b.GetProviderConfigReference()).To(BeNil(), "a backup's project and credentials are its instance's")
	})

	creates := map[string]struct {
		fn   func(p *params)
		want []string
	}{
		"NoInstance": {fn: func(p *params) { p.Instance = "" }, want: []string{fp + "instance", "is required: name the PostgresqlInstance to back up"}},
		"BySelector": {fn: func(p *params) {
			p.Instance, p.InstanceSelector = "", &xpv2.Selector{MatchLabels: map[string]string{"a": "b"}}
		}},
		"Described":        {fn: func(p *params) { p.Description = ptr.To("before the upgrade") }},
		"EmptyDescription": {fn: func(p *params) { p.Description = ptr.To("") }, want: []string{fp + "description"}},
	}
	for name, tc := range creates {
		t.Run("Create"+name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(ctx, backup(objectName("backup-create-", name), tc.fn))
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}

	described := func(p *params) { p.Description = ptr.To("nightly") }
	updates := map[string]struct {
		initial func(p *params)
		update  func(p *params)
		want    []string
	}{
		"InstanceChanged":    {update: func(p *params) { p.Instance = "other" }, want: []string{fp + "instance", "cannot be changed or removed once set (was shared): a backup is of one instance; create a new PostgresqlBackup"}},
		"DescriptionChanged": {initial: described, update: func(p *params) { p.Description = ptr.To("weekly") }, want: []string{fp + "description", "is immutable: Cloud SQL keeps the description a backup was taken with"}},
		"DescriptionAdded":   {update: described, want: []string{fp + "description", "is immutable"}},
		"DescriptionRemoved": {initial: described, update: func(p *params) { p.Description = nil }, want: []string{fp + "description", "is immutable"}},
		"ReferenceResolved":  {update: func(p *params) { p.InstanceRef = &xpv2.Reference{Name: "shared"} }},
	}
	for name, tc := range updates {
		t.Run("Update"+name, func(t *testing.T) {
			g := NewWithT(t)
			b := backup(objectName("backup-update-", name))
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
