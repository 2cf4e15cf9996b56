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

package emulator_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"google.golang.org/api/googleapi"
)

// The real client can't send malformed requests, so these go over plain
// HTTP; googleapi.CheckResponse turns the answers into *googleapi.Error
// exactly as the client would.
func TestMalformedRequestsGetGoogleErrors(t *testing.T) {
	e := newEnv(t)
	e.insert("orders")
	big := `{"name":"` + strings.Repeat("a", 2<<20) + `"}`
	cases := map[string]struct {
		method, path, body string
		code               int
		reason             string
	}{
		"BrokenJSONOnInsert":       {"POST", "instances", `{"name":`, 400, "parseError"},
		"EmptyBodyOnInsert":        {"POST", "instances", ``, 400, "parseError"},
		"ArrayBodyOnInsert":        {"POST", "instances", `[1,2]`, 400, "invalid"},
		"WrongTypeOnInsert":        {"POST", "instances", `{"name":5}`, 400, "invalid"},
		"UnknownFieldOnInsert":     {"POST", "instances", `{"nmae":"x"}`, 400, "invalid"},
		"TooLargeABody":            {"POST", "instances", big, 400, "parseError"},
		"BrokenJSONOnPatch":        {"PATCH", "instances/orders", `{"settings":{`, 400, "parseError"},
		"SettingsNotAnObject":      {"PATCH", "instances/orders", `{"settings":"fast"}`, 400, "invalid"},
		"BrokenJSONOnUpdate":       {"PUT", "instances/orders", `nope`, 400, "parseError"},
		"BrokenJSONOnUsersInsert":  {"POST", "instances/orders/users", `{`, 400, "parseError"},
		"BrokenJSONOnUsersUpdate":  {"PUT", "instances/orders/users?name=postgres", `{`, 400, "parseError"},
		"BrokenJSONOnEphemeral":    {"POST", "instances/orders:generateEphemeralCert", `{`, 400, "parseError"},
		"UnknownCollection":        {"GET", "databases", ``, 404, "notFound"},
		"UnknownSubResource":       {"GET", "instances/orders/sslCerts", ``, 404, "notFound"},
		"WrongVerbOnAnInstance":    {"POST", "instances/orders", `{}`, 404, "notFound"},
		"WrongVerbOnOperations":    {"DELETE", "operations", ``, 404, "notFound"},
		"EmptySegmentInThePath":    {"GET", "instances//users", ``, 404, "notFound"},
		"UnknownInstanceOnAMethod": {"GET", "instances/ghost/connectSettings", ``, 404, "instanceDoesNotExist"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			req, err := http.NewRequest(tc.method, e.url+"/sql/v1beta4/projects/test-project/"+tc.path, strings.NewReader(tc.body))
			g.Expect(err).NotTo(HaveOccurred())
			resp, err := http.DefaultClient.Do(req)
			g.Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			g.Expect(resp.Header.Get("Content-Type")).To(HavePrefix("application/json"))
			expectAPIError(g, googleapi.CheckResponse(resp), tc.code, tc.reason)
		})
	}

	t.Run("OutsideTheAPI", func(t *testing.T) {
		g := NewWithT(t)
		resp, err := http.Get(e.url + "/v1/projects/test-project/instances")
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		expectAPIError(g, googleapi.CheckResponse(resp), 404, "notFound")
	})
}

func TestErrorEnvelopeHasGooglesShape(t *testing.T) {
	e := newEnv(t)
	resp, err := http.Get(e.url + "/sql/v1beta4/projects/test-project/instances/ghost")
	e.g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	e.g.Expect(resp.StatusCode).To(Equal(http.StatusNotFound))
	var env struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
			Errors  []struct {
				Message string `json:"message"`
				Domain  string `json:"domain"`
				Reason  string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	e.g.Expect(json.NewDecoder(resp.Body).Decode(&env)).To(Succeed())
	e.g.Expect(env.Error.Code).To(Equal(404))
	// Cloud SQL's own errors carry no status (recorded real traffic).
	e.g.Expect(env.Error.Status).To(BeEmpty())
	e.g.Expect(env.Error.Message).To(Equal("The Cloud SQL instance does not exist."))
	e.g.Expect(env.Error.Errors).To(HaveLen(1))
	e.g.Expect(env.Error.Errors[0].Domain).To(Equal("global"))
	e.g.Expect(env.Error.Errors[0].Reason).To(Equal("instanceDoesNotExist"))
	e.g.Expect(env.Error.Errors[0].Message).To(Equal(env.Error.Message))
}
