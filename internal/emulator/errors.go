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

package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Reasons carried in errors[0].reason of Google's error envelope. A client
// sees them as (*googleapi.Error).Errors[0].Reason.
const (
	ReasonInstanceDoesNotExist  = "instanceDoesNotExist"
	ReasonInstanceAlreadyExists = "instanceAlreadyExists"
	ReasonOperationInProgress   = "operationInProgress"
	ReasonOperationDoesNotExist = "operationDoesNotExist"
	ReasonStaleData             = "staleData"
	ReasonInvalid               = "invalid"
	ReasonInvalidFlagValue      = "invalidFlagValue"
	ReasonParseError            = "parseError"
	ReasonRateLimitExceeded     = "rateLimitExceeded"
	ReasonBackendError          = "backendError"
	ReasonNotFound              = "notFound"
	ReasonUserDoesNotExist      = "userDoesNotExist"
	ReasonUserAlreadyExists     = "userAlreadyExists"
	ReasonRequired              = "required"
)

// Canonical status strings of Google's error envelope.
const (
	// statusCloudSQL is the status of the errors Cloud SQL itself answers
	// with a reason of its own (instanceDoesNotExist, operationInProgress,
	// ...): none. Recorded real traffic shows instanceDoesNotExist without
	// one, while errors of the API front end (notFound, parse errors,
	// quota) carry it.
	statusCloudSQL = ""

	statusInvalidArgument    = "INVALID_ARGUMENT"
	statusNotFound           = "NOT_FOUND"
	statusFailedPrecondition = "FAILED_PRECONDITION"
	statusResourceExhausted  = "RESOURCE_EXHAUSTED"
	statusInternal           = "INTERNAL"
	statusUnavailable        = "UNAVAILABLE"
)

// Messages. They follow the wording of the real API where it is known, so
// that anything matching on them (and people reading logs) see the same text.
const (
	msgInstanceDoesNotExist  = "The Cloud SQL instance does not exist."
	msgInstanceAlreadyExists = "The Cloud SQL instance already exists."
	msgNameReserved          = "The Cloud SQL instance already exists. When you delete an instance, you can't reuse the name of the deleted instance until the reservation period has passed: the name %q was used by a deleted instance and can't be reused until %s."
	msgOperationInProgress   = "Operation failed because another operation was already in progress. Try your request after the current operation is complete."
	msgInstanceInMaintenance = "Operation failed because the instance is undergoing maintenance. Try your request after the maintenance is complete."
	msgOperationDoesNotExist = "The Cloud SQL operation does not exist."
	msgStaleData             = "Condition does not match."
	msgRateLimitExceeded     = "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service 'sqladmin.googleapis.com' for consumer 'project_number:%d'."
	msgInternal              = "Internal error encountered."
	msgUnavailable           = "The service is currently unavailable."
	msgMethodNotFound        = "Method not found."
	msgUserDoesNotExist      = "The Cloud SQL user does not exist."
	msgUserAlreadyExists     = "The Cloud SQL user already exists."
	msgParseError            = "Invalid JSON payload received. %s"
	msgInvalidPrefix         = "Invalid request: "
	msgDeletionProtection    = "The instance is protected. Please disable the deletion protection and try again. To disable deletion protection, update the instance settings with deletionProtectionEnabled set to false."
	msgOperationFailed       = "An internal error occurred while processing the operation (injected by the emulator)."
	msgDatabaseNotFound      = "Not Found"
	msgInstanceNotRunning    = "Invalid request since instance is not running."
)

// errorDomain is the domain Google puts in every errors[] entry.
const errorDomain = "global"

// apiError is an error answered in Google's JSON envelope.
type apiError struct {
	code    int
	status  string
	reason  string
	message string
}

// Error describes the error for logs and wrapping.
func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.code, e.reason, e.message)
}

// envelope mirrors {"error":{"code","message","errors":[...],"status"}}, which
// googleapi.CheckResponse decodes into *googleapi.Error.
type envelope struct {
	Error envelopeError `json:"error"`
}

type envelopeError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Errors  []envelopeItem `json:"errors"`
	Status  string         `json:"status,omitempty"`
}

type envelopeItem struct {
	Message string `json:"message"`
	Domain  string `json:"domain"`
	Reason  string `json:"reason"`
}

func (e *apiError) envelope() envelope {
	return envelope{Error: envelopeError{
		Code:    e.code,
		Message: e.message,
		Errors:  []envelopeItem{{Message: e.message, Domain: errorDomain, Reason: e.reason}},
		Status:  e.status,
	}}
}

// writeError answers err in Google's envelope. Errors that are not *apiError
// are bugs in the emulator and are reported as a 500 with their text, so that
// a test shows them instead of a generic message.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{code: http.StatusInternalServerError, status: statusInternal, reason: ReasonBackendError, message: err.Error()}
	}
	body, _ := json.Marshal(ae.envelope()) // cannot fail: plain strings and ints
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(ae.code)
	_, _ = w.Write(body)
}

func errInstanceNotFound() error {
	return &apiError{http.StatusNotFound, statusCloudSQL, ReasonInstanceDoesNotExist, msgInstanceDoesNotExist}
}

func errInstanceExists() error {
	return &apiError{http.StatusConflict, statusCloudSQL, ReasonInstanceAlreadyExists, msgInstanceAlreadyExists}
}

func errNameReserved(name string, until time.Time) error {
	return &apiError{http.StatusConflict, statusCloudSQL, ReasonInstanceAlreadyExists,
		fmt.Sprintf(msgNameReserved, name, formatTime(until))}
}

func errOperationInProgress() error {
	return &apiError{http.StatusConflict, statusCloudSQL, ReasonOperationInProgress, msgOperationInProgress}
}

func errInMaintenance() error {
	return &apiError{http.StatusConflict, statusCloudSQL, ReasonOperationInProgress, msgInstanceInMaintenance}
}

func errOperationNotFound() error {
	return &apiError{http.StatusNotFound, statusCloudSQL, ReasonOperationDoesNotExist, msgOperationDoesNotExist}
}

func errStaleData() error {
	return &apiError{http.StatusPreconditionFailed, statusFailedPrecondition, ReasonStaleData, msgStaleData}
}

func errInvalid(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, statusInvalidArgument, ReasonInvalid, msgInvalidPrefix + fmt.Sprintf(format, args...)}
}

func errRequired(field string) error {
	return &apiError{http.StatusBadRequest, statusInvalidArgument, ReasonRequired,
		msgInvalidPrefix + fmt.Sprintf("Missing required field: %s.", field)}
}

func errInvalidFlag(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, statusInvalidArgument, ReasonInvalidFlagValue, fmt.Sprintf(format, args...)}
}

func errParse(detail string) error {
	return &apiError{http.StatusBadRequest, statusInvalidArgument, ReasonParseError, fmt.Sprintf(msgParseError, detail)}
}

func errRateLimited(project string) error {
	return &apiError{http.StatusTooManyRequests, statusResourceExhausted, ReasonRateLimitExceeded,
		fmt.Sprintf(msgRateLimitExceeded, projectNumber(project))}
}

func errInternal() error {
	return &apiError{http.StatusInternalServerError, statusInternal, ReasonBackendError, msgInternal}
}

func errUnavailable() error {
	return &apiError{http.StatusServiceUnavailable, statusUnavailable, ReasonBackendError, msgUnavailable}
}

func errMethodNotFound() error {
	return &apiError{http.StatusNotFound, statusNotFound, ReasonNotFound, msgMethodNotFound}
}

func errUserNotFound() error {
	return &apiError{http.StatusNotFound, statusCloudSQL, ReasonUserDoesNotExist, msgUserDoesNotExist}
}

func errUserExists() error {
	return &apiError{http.StatusConflict, statusCloudSQL, ReasonUserAlreadyExists, msgUserAlreadyExists}
}

// errDeletionProtected is Cloud SQL's refusal to delete a protected
// instance: 400 with the text of ERROR_PROTECTED_INSTANCE_DELETION_FAILURE
// in Cloud SQL's list of Admin API errors, which is also what gcloud and the
// Terraform provider's acceptance test
// (TestAccSqlDatabaseInstance_settings_deletionProtectionEnabled) show, with
// no "Invalid request: " before it. No recording holds the envelope, so the
// reason is the one Cloud SQL gives its other 400s (invalid) and, as one of
// Cloud SQL's own errors, it carries no status.
func errDeletionProtected() error {
	return &apiError{http.StatusBadRequest, statusCloudSQL, ReasonInvalid, msgDeletionProtection}
}

// errDatabaseNotFound is what databases.get answers for a database that
// isn't there (recorded against real Cloud SQL: 404 notFound "Not Found").
func errDatabaseNotFound() error {
	return &apiError{http.StatusNotFound, statusNotFound, ReasonNotFound, msgDatabaseNotFound}
}

// errInstanceNotRunning is Cloud SQL's answer to calls that need the
// instance's database server while it has none (databases.list on a
// PENDING_CREATE instance answers it, as reported against the real API).
func errInstanceNotRunning() error {
	return &apiError{http.StatusBadRequest, statusInvalidArgument, ReasonInvalid, msgInvalidPrefix + msgInstanceNotRunning}
}
