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

package soak

import (
	"testing"

	. "github.com/onsi/gomega"
)

// A few recoveries cover every kind and as many sources as they can; all of
// them are three of each instance with PostgreSQL and two of each other.
func TestRecoveryPlan(t *testing.T) {
	g := NewWithT(t)
	sql, plain := []string{"sql-00", "sql-01", "sql-02"}, []string{"soak-003", "soak-004"}
	g.Expect(recoveryPlan(sql, plain, 5)).To(Equal([]planned{
		{"sql-00", kindClone}, {"sql-01", kindPITR}, {"sql-02", kindRestore}, {"soak-003", kindClone}, {"soak-004", kindPITR},
	}))
	all := recoveryPlan(sql, plain, -1)
	g.Expect(all).To(HaveLen(3*3 + 2*2))
	g.Expect(all).To(ContainElements(planned{"sql-00", kindRestore}, planned{"sql-02", kindClone}, planned{"soak-003", kindPITR}, planned{"soak-004", kindClone}))
	g.Expect(recoveryPlan(nil, plain, -1)).To(ConsistOf(
		planned{"soak-003", kindClone}, planned{"soak-004", kindPITR}, planned{"soak-003", kindPITR}, planned{"soak-004", kindClone},
	), "without PostgreSQL, no restores: the soak backs up no other instance")
	g.Expect(plainSources([]string{"a"})).To(BeEmpty(), "one instance is deleted without the annotation, no quiet source is left")
}
