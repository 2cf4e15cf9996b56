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
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"google.golang.org/api/googleapi"
)

// Reasons (googleapi.ErrorItem.Reason) that tell apart errors with the same
// HTTP status.
const (
	// ReasonInstanceAlreadyExists: the name is taken by a live instance, or
	// was used by one deleted within about a week.
	ReasonInstanceAlreadyExists = "instanceAlreadyExists"
	// ReasonOperationInProgress: another operation on the instance is
	// running; mutations are refused until it ends.
	ReasonOperationInProgress = "operationInProgress"
	// ReasonInstanceDoesNotExist: the 404 of an instance that does not exist.
	ReasonInstanceDoesNotExist = "instanceDoesNotExist"
	// ReasonUserDoesNotExist and ReasonUserAlreadyExists: a user's 404 and
	// 409.
	ReasonUserDoesNotExist  = "userDoesNotExist"
	ReasonUserAlreadyExists = "userAlreadyExists"
	// ReasonNotFound: the 404 of a database that does not exist (Cloud SQL
	// answers databases with the API front end's generic reason).
	ReasonNotFound = "notFound"
)

// IsUserNotFound reports whether err is the 404 of a user that does not
// exist.
func IsUserNotFound(err error) bool {
	return hasReason(err, http.StatusNotFound, ReasonUserDoesNotExist)
}

// IsUserExists reports whether err is the 409 of users.insert for a login
// that exists.
func IsUserExists(err error) bool {
	return hasReason(err, http.StatusConflict, ReasonUserAlreadyExists)
}

// IsDatabaseExists reports whether err is Cloud SQL's refusal to create a
// database that exists: a 400 whose message carries PostgreSQL's "already
// exists".
func IsDatabaseExists(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusBadRequest && strings.Contains(ge.Message, "already exists")
}

// IsDatabaseInUse reports whether err is Cloud SQL's refusal to delete a
// database that sessions are connected to: a 400 whose message carries
// PostgreSQL's "is being accessed by other users".
func IsDatabaseInUse(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusBadRequest && strings.Contains(ge.Message, "is being accessed by other users")
}

// IsDatabaseNotFound reports whether err is the 404 of a database that does
// not exist.
func IsDatabaseNotFound(err error) bool {
	return hasReason(err, http.StatusNotFound, ReasonNotFound)
}

// IsNotFound reports whether err says that the instance does not exist: a 404
// of reason instanceDoesNotExist. A 404 of another reason (an endpoint whose
// path the server does not serve answers "Method not found") says nothing of
// the instance, and must never pass for its absence: the provider would then
// try to create an instance it cannot see, or let go of one it deletes.
func IsNotFound(err error) bool {
	return hasReason(err, http.StatusNotFound, ReasonInstanceDoesNotExist)
}

// IsForbidden reports whether err is a 403: the credentials lack a permission.
func IsForbidden(err error) bool {
	return hasCode(err, http.StatusForbidden)
}

// IsAlreadyExists reports whether err is the 409 of instances.insert for a
// name that is taken or reserved.
func IsAlreadyExists(err error) bool {
	return hasReason(err, http.StatusConflict, ReasonInstanceAlreadyExists)
}

// IsOperationInProgress reports whether err is the 409 for a mutation of an
// instance on which another operation is running.
func IsOperationInProgress(err error) bool {
	return hasReason(err, http.StatusConflict, ReasonOperationInProgress)
}

// IsStale reports whether err is the 412 of a patch or update whose
// settingsVersion no longer matches: someone changed the instance since it
// was observed, so it must be observed again before it is changed.
func IsStale(err error) bool {
	return hasCode(err, http.StatusPreconditionFailed)
}

// IsRateLimited reports whether err is a 429: the project spent its quota.
func IsRateLimited(err error) bool {
	return hasCode(err, http.StatusTooManyRequests)
}

// IsRetryable reports whether err may go away by itself, so the call is
// worth repeating after a backoff: 429 and the server errors 500, 502, 503
// and 504.
func IsRetryable(err error) bool {
	e, ok := apiError(err)
	if !ok {
		return false
	}
	switch e.Code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// IsUnanswered reports whether err carries no answer from Cloud SQL (a lost
// connection, a deadline that cut the wait): whether the call was carried
// out is then known only from a read made after it.
func IsUnanswered(err error) bool {
	_, answered := apiError(err)
	return err != nil && !answered
}

// IsUnsettled reports whether a write answered err may still have been
// carried out, or may pass by itself (IsRetryable, IsUnanswered): a read made
// after it, not the error, tells what to do next.
func IsUnsettled(err error) bool {
	return IsRetryable(err) || IsUnanswered(err)
}

// apiError finds the *googleapi.Error in err's chain.
func apiError(err error) (*googleapi.Error, bool) {
	var e *googleapi.Error
	if err == nil || !errors.As(err, &e) || e == nil {
		return nil, false
	}
	return e, true
}

func hasCode(err error, code int) bool {
	e, ok := apiError(err)
	return ok && e.Code == code
}

func hasReason(err error, code int, reason string) bool {
	e, ok := apiError(err)
	if !ok || e.Code != code {
		return false
	}
	for _, item := range e.Errors {
		if item.Reason == reason {
			return true
		}
	}
	return false
}

// MaxMessage is the most bytes of error text that the provider puts into a
// condition, an event or an admission warning. Cloud SQL's own messages are a
// few hundred bytes; an endpoint that answers with more must not fill the
// status of objects (etcd's limit is 1.5 MiB) or a kubectl user's terminal.
const MaxMessage = 1024

// cutMarker ends text that Truncate cut, saying how much went.
const cutMarker = "... [%d more bytes cut]"

// Truncate is s cut to MaxMessage bytes, at a character boundary, with a
// marker that says how many bytes were cut. Every message that carries error
// text from Cloud SQL goes through it.
func Truncate(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	keep := MaxMessage - len(fmt.Sprintf(cutMarker, len(s)))
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + fmt.Sprintf(cutMarker, len(s)-keep)
}

// Truncated is err with its text cut by Truncate. errors.As and errors.Is
// still see err's chain (the *googleapi.Error of IsNotFound and others).
func Truncated(err error) error {
	if err == nil || len(err.Error()) <= MaxMessage {
		return err
	}
	return truncated{err}
}

type truncated struct{ err error }

func (t truncated) Error() string { return Truncate(t.err.Error()) }
func (t truncated) Unwrap() error { return t.err }
