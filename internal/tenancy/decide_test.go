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

package tenancy_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

func TestDecide(t *testing.T) {
	team := tenancy.Holder{Namespace: "team-a", Name: "app", UID: "a"}
	platform := tenancy.Holder{Name: "app", UID: "p"}
	other := &tenancy.Holder{Namespace: "team-b", Name: "orders", UID: "b"}
	cases := map[string]struct {
		reason string
		facts  tenancy.Facts
		want   tenancy.Verdict
	}{
		"HeldBySelf": {
			reason: "An object manages what it holds, existing or not (a login dropped by hand is made again).",
			facts:  tenancy.Facts{Self: team, Holder: &team, Policy: v1alpha1.ObjectImportDeny},
			want:   tenancy.Verdict{Action: tenancy.Manage},
		},
		"HeldByOther": {
			reason: "Another live object's login is never touched, whatever the import policy.",
			facts:  tenancy.Facts{Self: team, Holder: other, Exists: true, Policy: v1alpha1.ObjectImportAllow},
			want:   tenancy.Verdict{Action: tenancy.RefuseHeld},
		},
		"HeldByOtherNotYetCreated": {
			reason: "A name another object holds is refused before it exists too: its holder is about to create it.",
			facts:  tenancy.Facts{Self: team, Holder: other, Policy: v1alpha1.ObjectImportAllow},
			want:   tenancy.Verdict{Action: tenancy.RefuseHeld},
		},
		"HeldByOtherWhileDeleting": {
			reason: "An object deleted while another holds its name goes without a request: no drop of the other's login.",
			facts:  tenancy.Facts{Self: team, Holder: other, Exists: true, Deleting: true},
			want:   tenancy.Verdict{Action: tenancy.Leave},
		},
		"HeldByOtherObservedByPlatform": {
			reason: "A cluster-scoped object that only observes may see what a team holds.",
			facts:  tenancy.Facts{Self: platform, Holder: other, Exists: true, ObserveOnly: true},
			want:   tenancy.Verdict{Action: tenancy.Observe},
		},
		"HeldByOtherObservedByTeam": {
			reason: "A namespaced object may not even observe another team's login.",
			facts:  tenancy.Facts{Self: team, Holder: other, Exists: true, ObserveOnly: true, Policy: v1alpha1.ObjectImportAllow},
			want:   tenancy.Verdict{Action: tenancy.RefuseHeld},
		},
		"Absent": {
			reason: "A name that neither exists nor is held may be created.",
			facts:  tenancy.Facts{Self: team, Policy: v1alpha1.ObjectImportDeny},
			want:   tenancy.Verdict{Action: tenancy.Absent},
		},
		"UnheldNamespacedDefault": {
			reason: "A namespaced object does not take over a login nobody holds unless the instance allows it.",
			facts:  tenancy.Facts{Self: team, Exists: true, Policy: v1alpha1.ObjectImportClusterScoped},
			want:   tenancy.Verdict{Action: tenancy.RefuseImport},
		},
		"UnheldNamespacedAllowed": {
			reason: "Policy Allow lets a namespaced object import.",
			facts:  tenancy.Facts{Self: team, Exists: true, Policy: v1alpha1.ObjectImportAllow},
			want:   tenancy.Verdict{Action: tenancy.Manage, Claim: tenancy.Imported},
		},
		"UnheldClusterDefault": {
			reason: "A cluster-scoped object imports under the default policy.",
			facts:  tenancy.Facts{Self: platform, Exists: true, Policy: v1alpha1.ObjectImportClusterScoped},
			want:   tenancy.Verdict{Action: tenancy.Manage, Claim: tenancy.Imported},
		},
		"UnheldClusterDenied": {
			reason: "Policy Deny keeps even the platform's objects from importing.",
			facts:  tenancy.Facts{Self: platform, Exists: true, Policy: v1alpha1.ObjectImportDeny},
			want:   tenancy.Verdict{Action: tenancy.RefuseImport},
		},
		"UnheldObservedWhenAllowed": {
			reason: "An object that only observes an importable name records no hold.",
			facts:  tenancy.Facts{Self: platform, Exists: true, ObserveOnly: true, Policy: v1alpha1.ObjectImportClusterScoped},
			want:   tenancy.Verdict{Action: tenancy.Observe},
		},
		"UnheldWhileDeleting": {
			reason: "An object deleted before it held its name never drops a login nobody gave it.",
			facts:  tenancy.Facts{Self: platform, Exists: true, Deleting: true, Policy: v1alpha1.ObjectImportAllow},
			want:   tenancy.Verdict{Action: tenancy.Leave},
		},
		"Migrating": {
			reason: "An object made before holders were recorded keeps what it managed, whatever the policy.",
			facts:  tenancy.Facts{Self: team, Exists: true, Migrating: true, Policy: v1alpha1.ObjectImportDeny},
			want:   tenancy.Verdict{Action: tenancy.Manage, Claim: tenancy.Migrated},
		},
		"MigratingWhileDeleting": {
			reason: "An object made before holders were recorded deletes what it managed, as it would have.",
			facts:  tenancy.Facts{Self: team, Exists: true, Migrating: true, Deleting: true},
			want:   tenancy.Verdict{Action: tenancy.Manage, Claim: tenancy.Migrated},
		},
		"MigratingButHeld": {
			reason: "A record beats the migration: an older object does not take a name another holds.",
			facts:  tenancy.Facts{Self: team, Holder: other, Exists: true, Migrating: true},
			want:   tenancy.Verdict{Action: tenancy.RefuseHeld},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(tenancy.Decide(tc.facts)).To(Equal(tc.want), tc.reason)
		})
	}
}
