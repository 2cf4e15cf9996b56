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
	type want struct{ notFound, exists, inProgress, stale, rateLimited, retryable bool }
	cases := map[string]struct {
		err  error
		want want
	}{
		"Nil":                     {nil, want{}},
		"NotAnAPIError":           {errors.New("dial tcp: connection refused"), want{}},
		"NilAPIError":             {(*googleapi.Error)(nil), want{}},
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
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
