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

package conformance

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestMethodOf(t *testing.T) {
	const p = "/sql/v1beta4/projects/${projectId}/"
	cases := map[string]struct {
		verb, url, want string
	}{
		"InstancesInsert": {"POST", p + "instances?alt=json", "instances.insert"},
		"InstancesList":   {"GET", p + "instances", "instances.list"},
		"InstancesGet":    {"GET", p + "instances/i?alt=json&prettyPrint=false", "instances.get"},
		"InstancesPatch":  {"PATCH", p + "instances/i", "instances.patch"},
		"InstancesUpdate": {"PUT", p + "instances/i", "instances.update"},
		"InstancesDelete": {"DELETE", p + "instances/i", "instances.delete"},
		"InstancesClone":  {"POST", p + "instances/i/clone?alt=json", "instances.clone"},
		"UsersList":       {"GET", p + "instances/i/users", "users.list"},
		"UsersInsert":     {"POST", p + "instances/i/users", "users.insert"},
		"UsersUpdate":     {"PUT", p + "instances/i/users?name=u&host=%25", "users.update"},
		"UsersDelete":     {"DELETE", p + "instances/i/users?name=u", "users.delete"},
		"DatabasesGet":    {"GET", p + "instances/i/databases/d", "databases.get"},
		"DatabasesPatch":  {"PATCH", p + "instances/i/databases/d", "databases.patch"},
		"DatabasesUpdate": {"PUT", p + "instances/i/databases/d", "databases.update"},
		"DatabasesDelete": {"DELETE", p + "instances/i/databases/d", "databases.delete"},
		"OperationsGet":   {"GET", p + "operations/${operationID}", "operations.get"},
		"OtherAPI":        {"GET", "/compute/v1/projects/p/global/networks/n", "unknown"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(MethodOf(tc.verb, tc.url)).To(Equal(tc.want))
		})
	}
}

func TestCompare(t *testing.T) {
	cases := map[string]struct {
		want, got Answer
		engine    string
		diffs     []Difference
	}{
		"Same": {
			want: Answer{200, []byte(`{"a":1,"b":{"c":"x"}}`)},
			got:  Answer{200, []byte(`{"b":{"c":"x"},"a":1}`)},
		},
		"StatusOnly": {
			want:  Answer{200, []byte(`{"a":1}`)},
			got:   Answer{404, []byte(`{"error":{}}`)},
			diffs: []Difference{{Kind: KindStatus, Path: "-", Want: "200", Got: "404"}},
		},
		"ReasonAndMessage": {
			want: Answer{404, []byte(`{"error":{"message":"Not Found","errors":[{"reason":"notFound","message":"Not Found"}]}}`)},
			got:  Answer{404, []byte(`{"error":{"message":"Gone","errors":[{"reason":"gone","message":"Not Found"}]}}`)},
			diffs: []Difference{
				{Kind: KindMessage, Path: "-", Want: "Not Found", Got: "Gone"},
				{Kind: KindReason, Path: "-", Want: "notFound", Got: "gone"},
				{Kind: KindValue, Path: "error.errors[].reason", Want: `"notFound"`, Got: `"gone"`},
				{Kind: KindValue, Path: "error.message", Want: `"Not Found"`, Got: `"Gone"`},
			},
		},
		"FalseFieldMissing": {
			want:  Answer{200, []byte(`{"settings":{"deletionProtectionEnabled":false,"tier":"t"}}`)},
			got:   Answer{200, []byte(`{"settings":{"tier":"t"}}`)},
			diffs: []Difference{{Kind: KindMissing, Path: "settings.deletionProtectionEnabled", Want: "false"}},
		},
		"UnsetWindowExtra": {
			want:  Answer{200, []byte(`{"settings":{}}`)},
			got:   Answer{200, []byte(`{"settings":{"maintenanceWindow":{"kind":"sql#maintenanceWindow"}}}`)},
			diffs: []Difference{{Kind: KindExtra, Path: "settings.maintenanceWindow.kind", Got: `"sql#maintenanceWindow"`}, {Kind: KindMissing, Path: "settings", Want: "{}"}},
		},
		"ArraysByIndex": {
			want:  Answer{200, []byte(`{"items":[{"name":"a"},{"name":"b"}]}`)},
			got:   Answer{200, []byte(`{"items":[{"name":"a"},{"name":"c"}]}`)},
			diffs: []Difference{{Kind: KindValue, Path: "items[].name", Want: `"b"`, Got: `"c"`}},
		},
		"UnstableValuesAreNotCompared": {
			want: Answer{200, []byte(`{"etag":"x","createTime":"t1","settings":{"settingsVersion":"123","backupConfiguration":{"startTime":"12:00"}},"ipAddresses":[{"ipAddress":"1.2.3.4"}]}`)},
			got:  Answer{200, []byte(`{"etag":"y","createTime":"t2","settings":{"settingsVersion":"1","backupConfiguration":{"startTime":"03:00"}},"ipAddresses":[{"ipAddress":"5.6.7.8"}]}`)},
		},
		"NormalisedEmptyArraySaysNothing": {
			want: Answer{200, []byte(`{"settings":{"authorizedGaeApplications":[],"ipConfiguration":{"authorizedNetworks":[]}}}`)},
			got:  Answer{200, []byte(`{"settings":{"ipConfiguration":{"authorizedNetworks":[{"value":"0.0.0.0/0"}]}}}`)},
		},
		"OtherEnginesCharsetIsNotCompared": {
			want:   Answer{200, []byte(`{"charset":"utf8mb4","collation":"utf8mb4_bin"}`)},
			got:    Answer{200, []byte(`{"charset":"UTF8","collation":"en_US.UTF8"}`)},
			engine: "mysql",
		},
		"PostgresCharsetIsCompared": {
			want:   Answer{200, []byte(`{"charset":"UTF8"}`)},
			got:    Answer{200, []byte(`{"charset":"SQL_ASCII"}`)},
			engine: EnginePostgres,
			diffs:  []Difference{{Kind: KindValue, Path: "charset", Want: `"UTF8"`, Got: `"SQL_ASCII"`}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			engine := tc.engine
			if engine == "" {
				engine = EnginePostgres
			}
			got := Compare(tc.want, tc.got, engine)
			if tc.diffs == nil {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(ConsistOf(tc.diffs))
		})
	}
}

func TestParseAllowList(t *testing.T) {
	g := NewWithT(t)
	a, err := ParseAllowList(strings.NewReader("# comment\n\n* instances.get extra etag Why it differs.\nmysql users.list value items[].name MySQL's users.\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a).To(HaveLen(2))

	x := Exchange{Log: "log-1", Engine: "mysql", Method: "users.list"}
	k, reason, ok := a.Reason(x, Difference{Kind: KindValue, Path: "items[].name"})
	g.Expect(ok).To(BeTrue())
	g.Expect(k).To(Equal(AllowKey{Scope: "mysql", Key: "users.list value items[].name"}))
	g.Expect(reason).To(Equal("MySQL's users."))
	_, _, ok = a.Reason(Exchange{Log: "log-2", Engine: EnginePostgres, Method: "users.list"}, Difference{Kind: KindValue, Path: "items[].name"})
	g.Expect(ok).To(BeFalse(), "an engine's entry does not explain another engine's difference")
	_, _, ok = a.Reason(Exchange{Engine: EnginePostgres, Method: "instances.get"}, Difference{Kind: KindExtra, Path: "etag"})
	g.Expect(ok).To(BeTrue())

	_, err = ParseAllowList(strings.NewReader("* instances.get extra etag\n"))
	g.Expect(err).To(MatchError(ContainSubstring("line 1")), "an entry without a reason is refused")
}

func TestPlaceholdersRoundTrip(t *testing.T) {
	g := NewWithT(t)
	url := "/sql/v1beta4/projects/${projectId}/instances/db-${uniqueId}"
	sent := substitute(url)
	g.Expect(sent).NotTo(ContainSubstring("${"))
	answer := []byte(`{"name":"op-1","targetLink":"https://x` + sent + `"}`)
	g.Expect(string(restore(answer, []string{"op-1"}))).To(Equal(`{"name":"${operationID}","targetLink":"https://x` + url + `"}`))
}
