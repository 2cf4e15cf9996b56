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
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	. "github.com/onsi/gomega"
	"google.golang.org/api/googleapi"
)

func TestErrorClassification(t *testing.T) {
	apiErr := func(code int, reasons ...string) error {
		e := &googleapi.Error{Code: code, Message: "from the API"}
		for _, r := range reasons {
			e.Errors = append(e.Errors, googleapi.ErrorItem{Reason: r})
		}
		return e
	}
	type want struct{ notFound, exists, inProgress, stale, rateLimited, retryable, unanswered bool }
	cases := map[string]struct {
		err  error
		want want
	}{
		"Nil":                     {nil, want{}},
		"NotAnAPIError":           {errors.New("dial tcp: connection refused"), want{unanswered: true}},
		"WrappedDeadline":         {errors.Wrap(context.DeadlineExceeded, "insert"), want{unanswered: true}},
		"NilAPIError":             {(*googleapi.Error)(nil), want{unanswered: true}},
		"NotFound":                {apiErr(404, "instanceDoesNotExist"), want{notFound: true}},
		"WrappedNotFound":         {errors.Wrap(apiErr(404, "instanceDoesNotExist"), "cannot get instance"), want{notFound: true}},
		"NotFoundOfAnotherReason": {apiErr(404, "notFound"), want{}},
		"NotFoundWithoutReason":   {apiErr(404), want{}},
		"AlreadyExists":           {apiErr(409, "instanceAlreadyExists"), want{exists: true}},
		"WrappedAlreadyExists":    {errors.Wrap(apiErr(409, "instanceAlreadyExists"), "insert"), want{exists: true}},
		"OperationInProgress":     {apiErr(409, "operationInProgress"), want{inProgress: true}},
		"ConflictWithoutReason":   {apiErr(409), want{}},
		"SecondReasonCounts":      {apiErr(409, "conflict", "operationInProgress"), want{inProgress: true}},
		"ReasonWithOtherCode":     {apiErr(400, "instanceAlreadyExists"), want{}},
		"RateLimited":             {apiErr(429, "rateLimitExceeded"), want{rateLimited: true, retryable: true}},
		"InternalError":           {apiErr(500, "backendError"), want{retryable: true}},
		"BadGateway":              {apiErr(502), want{retryable: true}},
		"ServiceUnavailable":      {apiErr(503, "backendError"), want{retryable: true}},
		"GatewayTimeout":          {apiErr(504), want{retryable: true}},
		"WrappedUnavailable":      {errors.Wrap(errors.Wrap(apiErr(503), "b"), "a"), want{retryable: true}},
		"BadRequestIsFinal":       {apiErr(400, "invalid"), want{}},
		"ForbiddenIsFinal":        {apiErr(403, "forbidden"), want{}},
		"StaleDataIsNotRetryable": {apiErr(412, "staleData"), want{stale: true}},
		"NotImplementedIsFinal":   {apiErr(501), want{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			got := want{
				notFound:    IsNotFound(tc.err),
				exists:      IsAlreadyExists(tc.err),
				inProgress:  IsOperationInProgress(tc.err),
				stale:       IsStale(tc.err),
				rateLimited: IsRateLimited(tc.err),
				retryable:   IsRetryable(tc.err),
				unanswered:  IsUnanswered(tc.err),
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("x", 5000)
	cases := map[string]struct {
		reason string
		in     string
		check  func(t *testing.T, got string)
	}{
		"Short": {reason: "A message within the limit is kept whole.", in: "short", check: func(t *testing.T, got string) {
			if got != "short" {
				t.Errorf("got %q", got)
			}
		}},
		"AtTheLimit": {reason: "A message of exactly MaxMessage bytes is kept whole.", in: long[:MaxMessage], check: func(t *testing.T, got string) {
			if got != long[:MaxMessage] {
				t.Errorf("cut a message at the limit")
			}
		}},
		"Long": {reason: "A longer message is cut to MaxMessage bytes with a marker saying how much went.", in: long, check: func(t *testing.T, got string) {
			if len(got) > MaxMessage || !strings.HasPrefix(got, "xxxx") || !strings.HasSuffix(got, fmt.Sprintf("... [%d more bytes cut]", 5000-strings.Count(got, "x"))) {
				t.Errorf("got %d bytes ending %q", len(got), got[len(got)-40:])
			}
		}},
		"Runes": {reason: "A cut never splits a character.", in: strings.Repeat("é", 3000), check: func(t *testing.T, got string) {
			if !utf8.ValidString(got) || len(got) > MaxMessage {
				t.Errorf("got %d bytes, valid UTF-8: %t", len(got), utf8.ValidString(got))
			}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Log(tc.reason)
			tc.check(t, Truncate(tc.in))
		})
	}
}

// Truncated cuts the text and keeps the chain that IsNotFound and the others read.
func TestTruncated(t *testing.T) {
	api := &googleapi.Error{Code: http.StatusNotFound, Message: strings.Repeat("m", 4000), Errors: []googleapi.ErrorItem{{Reason: ReasonInstanceDoesNotExist}}}
	err := Truncated(errors.Wrap(api, "cannot get"))
	if len(err.Error()) > MaxMessage || !strings.Contains(err.Error(), "more bytes cut") {
		t.Errorf("Truncated(...): %d bytes: %.80q", len(err.Error()), err.Error())
	}
	if !IsNotFound(err) {
		t.Errorf("Truncated(...) lost the *googleapi.Error")
	}
	if Truncated(nil) != nil {
		t.Errorf("Truncated(nil) is not nil")
	}
}

func TestUserAndDatabaseErrors(t *testing.T) {
	apiErr := func(code int, reason, msg string) error {
		return &googleapi.Error{Code: code, Message: msg, Errors: []googleapi.ErrorItem{{Reason: reason}}}
	}
	type want struct{ userNotFound, userExists, dbNotFound, dbInUse bool }
	cases := map[string]struct {
		err  error
		want want
	}{
		"UserNotFound":       {apiErr(404, "userDoesNotExist", "The Cloud SQL user does not exist."), want{userNotFound: true}},
		"UserExists":         {errors.Wrap(apiErr(409, "userAlreadyExists", ""), "insert"), want{userExists: true}},
		"InstanceNotFound":   {apiErr(404, "instanceDoesNotExist", ""), want{}},
		"DatabaseNotFound":   {apiErr(404, "notFound", "Not Found"), want{dbNotFound: true}},
		"DatabaseInUse":      {apiErr(400, "invalid", `Invalid request: failed to delete database sales. Detail: pq: database "sales" is being accessed by other users.`), want{dbInUse: true}},
		"OtherBadRequest":    {apiErr(400, "invalid", "Invalid request: something else."), want{}},
		"InProgressIsNotUse": {apiErr(409, "operationInProgress", "is being accessed by other users"), want{}},
		"NotAnAPIError":      {errors.New("database is being accessed by other users"), want{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(want{IsUserNotFound(tc.err), IsUserExists(tc.err), IsDatabaseNotFound(tc.err), IsDatabaseInUse(tc.err)}).To(Equal(tc.want))
		})
	}
}
