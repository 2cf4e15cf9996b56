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

import sqladmin "google.golang.org/api/sqladmin/v1beta4"

// OperationDone is the status of an operation that ended, with or without an
// error.
const OperationDone = "DONE"

// OperationFailed reports whether op carries errors: Cloud SQL marks a failed
// operation DONE too, and says why in its errors.
func OperationFailed(op *sqladmin.Operation) bool {
	return op != nil && op.Error != nil && len(op.Error.Errors) > 0
}

// OperationSucceeded reports whether op ended without an error: what it did
// is done.
func OperationSucceeded(op *sqladmin.Operation) bool {
	return op != nil && op.Status == OperationDone && !OperationFailed(op)
}
