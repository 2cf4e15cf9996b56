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

package cloudsql

import (
	"testing"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

func TestOperationOutcome(t *testing.T) {
	failed := &sqladmin.OperationErrors{Errors: []*sqladmin.OperationError{{Code: "ERROR_RDBMS"}}}
	cases := map[string]struct {
		op                *sqladmin.Operation
		failed, succeeded bool
	}{
		"NoAnswer":          {op: nil},
		"Running":           {op: &sqladmin.Operation{Status: "RUNNING"}},
		"Done":              {op: &sqladmin.Operation{Status: OperationDone}, succeeded: true},
		"DoneWithNoErrors":  {op: &sqladmin.Operation{Status: OperationDone, Error: &sqladmin.OperationErrors{}}, succeeded: true},
		"DoneWithAnError":   {op: &sqladmin.Operation{Status: OperationDone, Error: failed}, failed: true},
		"RunningWithErrors": {op: &sqladmin.Operation{Status: "RUNNING", Error: failed}, failed: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(OperationFailed(tc.op)).To(Equal(tc.failed))
			g.Expect(OperationSucceeded(tc.op)).To(Equal(tc.succeeded))
		})
	}
}
