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

package configfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// TestMalformedConfigFiles writes malformed configuration files and loads them as
// `provider --config` does: each must stop start-up with a message that names the
// file, the key (or, for a syntax error, the line and column, with the line quoted)
// and what is wrong.
func TestMalformedConfigFiles(t *testing.T) {
	const incompatible = "incompatible types: TOML value has type "
	cases := map[string]struct {
		text string
		want []string
	}{
		// Syntax errors: the position, the line quoted, and what the parser expected.
		"TableExtraBracket":   {text: "[reconcile]]\n", want: []string{"At line 1, column 12", "[reconcile]]", "expected a top-level item to end with a newline"}},
		"TableUnclosed":       {text: "[webhook\nport = 9443\n", want: []string{"At line 2", "[webhook", "expected '.' or ']' to end table name"}},
		"MissingEquals":       {text: "[reconcile]\npoll_interval \"5m\"\n", want: []string{"At line 2, column 15", `poll_interval "5m"`, "expected '.' or '='"}},
		"MissingValue":        {text: "[reconcile]\npoll_interval =\n", want: []string{"At line 2, column 16", "poll_interval =", "expected value but found '\\n'"}},
		"BlankKey":            {text: "[reconcile]\n= \"5m\"\n", want: []string{"At line 2", "key name appears blank"}},
		"StringUnterminated":  {text: "[reconcile]\npoll_interval = \"5m\n", want: []string{"At line 2, column 20", `poll_interval = "5m`, "strings cannot contain newlines"}},
		"TrailingGarbage":     {text: "[reconcile]\npoll_interval = \"5m\" extra\n", want: []string{"At line 2, column 21", `poll_interval = "5m" extra`, "expected a top-level item to end"}},
		"BareWord":            {text: "[logging]\ndebug = True\n", want: []string{"At line 2, column 9", "debug = True", `expected value but found "True"`}},
		"KeyTwice":            {text: "[reconcile]\npoll_interval = \"5m\"\npoll_interval = \"6m\"\n", want: []string{"At line 3", "Key 'reconcile.poll_interval' has already been defined"}},
		"TableTwice":          {text: "[reconcile]\ntimeout = \"1m\"\n[reconcile]\n", want: []string{"At line 3", "Key 'reconcile' has already been defined"}},
		"ArrayUnclosed":       {text: "[injection]\ndefault_allowed_namespaces = [\"team-a\"\n", want: []string{"At line 2", "default_allowed_namespaces", "expected a comma (',') or array terminator (']')"}},
		"InlineTableUnclosed": {text: "[proxy]\nimage = { name = \"proxy\"\n", want: []string{"At line 2", "image = {", "expected a comma or an inline table terminator '}'"}},
		"NoSeparator":         {text: "reconcile\n", want: []string{"At line 1, column 10", "reconcile", "expected '.' or '='"}},
		"NulByte":             {text: "[proxy]\nimage = \"\x00\"\n", want: []string{"At line 2, column 9", "image", "TOML files cannot contain control characters: '0x00'"}},
		"InvalidUtf8":         {text: "[proxy]\nimage = \"gcr.io/\xff\"\n", want: []string{"At line 2", "image", "invalid UTF-8 byte: 0xff"}},
		"Utf16":               {text: "\xff\xfe[\x00l\x00o\x00g\x00g\x00i\x00n\x00g\x00]\x00\n\x00", want: []string{"At line 1", "files cannot contain NULL bytes; probably using UTF-16; TOML files must be UTF-8"}},
		"YamlInstead":         {text: "reconcile:\n  poll_interval: 5m\n", want: []string{"At line 1, column 10", "reconcile:", "expected '.' or '=', but got ':'"}},

		// Wrong types: the key, the type found and the type wanted.
		"RateString":       {text: "[reconcile]\nmax_reconcile_rate = \"10\"\n", want: []string{`last key "reconcile.max_reconcile_rate"`, incompatible + "string; destination has type integer"}},
		"RateFloat":        {text: "[reconcile]\nmax_reconcile_rate = 10.5\n", want: []string{`last key "reconcile.max_reconcile_rate"`, incompatible + "float64; destination has type integer"}},
		"BudgetExponent":   {text: "[cloudsql]\nrequests_per_minute = 1e3\n", want: []string{`last key "cloudsql.requests_per_minute"`, incompatible + "float64"}},
		"PortString":       {text: "[webhook]\nport = \"9443\"\n", want: []string{`last key "webhook.port"`, incompatible + "string; destination has type integer"}},
		"DebugString":      {text: "[logging]\ndebug = \"true\"\n", want: []string{`last key "logging.debug"`, incompatible + "string; destination has type boolean"}},
		"DebugInt":         {text: "[logging]\ndebug = 1\n", want: []string{`last key "logging.debug"`, incompatible + "int64; destination has type boolean"}},
		"ObserveList":      {text: "[reconcile]\nobserve = [\"list\"]\n", want: []string{`last key "reconcile.observe"`, incompatible + "[]any; destination has type string"}},
		"TableIsInt":       {text: "reconcile = 5\n", want: []string{`last key "reconcile"`, "expected table but found int64"}},
		"TableIsArray":     {text: "[[reconcile]]\npoll_interval = \"5m\"\n", want: []string{`last key "reconcile"`, "expected table but found []map[string]any"}},
		"DurationTable":    {text: "[reconcile]\npoll_interval = { value = \"5m\" }\n", want: []string{`last key "reconcile.poll_interval"`, incompatible + "map[string]any"}},
		"DurationSubtable": {text: "[reconcile.poll_interval]\nvalue = \"5m\"\n", want: []string{`last key "reconcile.poll_interval"`, incompatible + "map[string]any"}},
		"QuantityInt":      {text: "[proxy]\ncpu_request = 50\n", want: []string{`last key "proxy.cpu_request"`, incompatible + "int64; destination has type string"}},
		"CertDirInt":       {text: "[webhook]\ncert_dir = 5\n", want: []string{`last key "webhook.cert_dir"`, incompatible + "int64; destination has type string"}},
		"NamespacesString": {text: "[injection]\ndefault_allowed_namespaces = \"*\"\n", want: []string{`last key "injection.default_allowed_namespaces"`, incompatible + "string; destination has type slice"}},
		"NamespacesInts":   {text: "[injection]\ndefault_allowed_namespaces = [1, 2]\n", want: []string{`last key "injection.default_allowed_namespaces"`, incompatible + "int64; destination has type string"}},
		"WriterImageInt":   {text: "[injection]\npgpass_writer_image = 7\n", want: []string{`last key "injection.pgpass_writer_image"`, incompatible + "int64; destination has type string"}},
		"SidecarModeBool":  {text: "[proxy]\nsidecar_mode = true\n", want: []string{`last key "proxy.sidecar_mode"`, incompatible + "bool; destination has type string"}},
		"ProxyTableIsList": {text: "proxy = [\"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0\"]\n", want: []string{`last key "proxy"`, "expected table"}},

		// Durations: the value, with the key on the quoted line, and how to write one.
		"DurationSpaced":   {text: "[reconcile]\npoll_interval = \"5 m\"\n", want: []string{"poll_interval", `"5 m" is not a duration: write it like 30s, 5m or 1h`}},
		"DurationInt":      {text: "[reconcile]\npoll_interval = 300\n", want: []string{"poll_interval = 300", `"300" is not a duration`}},
		"DurationNoUnit":   {text: "[webhook]\ncloudsql_timeout = \"5\"\n", want: []string{"cloudsql_timeout", `"5" is not a duration`}},
		"DurationWords":    {text: "[reconcile]\nbusy_poll_interval = \"1 second\"\n", want: []string{"busy_poll_interval", `"1 second" is not a duration`}},
		"DurationEmpty":    {text: "[reconcile]\ntimeout = \"\"\n", want: []string{"timeout", `"" is not a duration`}},
		"DurationOverflow": {text: "[reconcile]\npoll_interval = \"99999999999h\"\n", want: []string{"poll_interval", `"99999999999h" is not a duration`}},
		"DurationDays":     {text: "[reconcile]\npoll_interval = \"1d\"\n", want: []string{"poll_interval", `"1d" is not a duration`}},
		// A TOML local time is not a duration; the message shows it as a date-time.
		"DurationTomlTime": {text: "[reconcile]\npoll_interval = 00:05:00\n", want: []string{"poll_interval = 00:05:00", "is not a duration"}},
		"PollNegative":     {text: "[reconcile]\npoll_interval = \"-5m\"\n", want: []string{"reconcile.poll_interval", "must be at least 10s, got -5m0s"}},
		"PollTooShort":     {text: "[reconcile]\npoll_interval = \"9s\"\nbusy_poll_interval = \"5s\"\n", want: []string{"reconcile.poll_interval", "must be at least 10s, got 9s"}},
		"BusySubSecond":    {text: "[reconcile]\nbusy_poll_interval = \"500ms\"\n", want: []string{"reconcile.busy_poll_interval", "must be at least 1s and at most reconcile.poll_interval (5m0s), got 500ms"}},
		"BusyAbovePoll":    {text: "[reconcile]\npoll_interval = \"1h\"\nbusy_poll_interval = \"2h\"\n", want: []string{"reconcile.busy_poll_interval", "at most reconcile.poll_interval (1h0m0s), got 2h0m0s"}},
		"TimeoutShort":     {text: "[reconcile]\ntimeout = \"9s\"\n", want: []string{"reconcile.timeout", "must be at least 10s, got 9s"}},
		"LookupZero":       {text: "[webhook]\ncloudsql_timeout = \"0s\"\n", want: []string{"webhook.cloudsql_timeout", "must be between 1s and 8s (the API server waits 10s for the webhook), got 0s"}},
		"LookupMinute":     {text: "[webhook]\ncloudsql_timeout = \"1m\"\n", want: []string{"webhook.cloudsql_timeout", "must be between 1s and 8s", "got 1m0s"}},

		// Numbers out of range.
		"RateNegative":   {text: "[reconcile]\nmax_reconcile_rate = -1\n", want: []string{"reconcile.max_reconcile_rate", "must be at least 1, got -1"}},
		"RateInt64":      {text: "[reconcile]\nmax_reconcile_rate = 99999999999999999999\n", want: []string{"max_reconcile_rate = 99999999999999999999", "is out of range for int64"}},
		"BudgetNegative": {text: "[cloudsql]\nrequests_per_minute = -5\n", want: []string{"cloudsql.requests_per_minute", "must be at least 1, got -5"}},
		"PortNegative":   {text: "[webhook]\nport = -443\n", want: []string{"webhook.port", "must be a TCP port between 1 and 65535, got -443"}},
		"Port65536":      {text: "[webhook]\nport = 65536\n", want: []string{"webhook.port", "got 65536"}},
		"PortMillion":    {text: "[webhook]\nport = 1_000_000\n", want: []string{"webhook.port", "got 1000000"}},

		// Values outside their set.
		"ObserveUpper":       {text: "[reconcile]\nobserve = \"LIST\"\n", want: []string{"reconcile.observe", `must be "list"`, `got "LIST"`}},
		"ObserveEmpty":       {text: "[reconcile]\nobserve = \"\"\n", want: []string{"reconcile.observe", `got ""`}},
		"SidecarCapitalised": {text: "[proxy]\nsidecar_mode = \"Native\"\n", want: []string{"proxy.sidecar_mode", `must be auto, native or classic, got "Native"`}},
		"QuantitySpaced":     {text: "[proxy]\ncpu_request = \"50 m\"\n", want: []string{"proxy.cpu_request", `"50 m" is not a Kubernetes quantity: write it like 50m or 64Mi`}},
		"QuantityHuge":       {text: "[proxy]\nmemory_limit = \"1e100Ei\"\n", want: []string{"proxy.memory_limit", `"1e100Ei" is not a Kubernetes quantity`}},
		"QuantityEmpty":      {text: "[proxy]\nmemory_request = \"\"\n", want: []string{"proxy.memory_request", `"" is not a Kubernetes quantity`}},
		"QuantityUnit":       {text: "[proxy]\nmemory_request = \"64MB\"\n", want: []string{"proxy.memory_request", `"64MB" is not a Kubernetes quantity`}},
		"NamespaceEmpty":     {text: "[injection]\ndefault_allowed_namespaces = [\"\"]\n", want: []string{"injection.default_allowed_namespaces", `"" is neither a namespace name nor "*"`}},
		"Namespace64":        {text: "[injection]\ndefault_allowed_namespaces = [\"" + strings.Repeat("a", 64) + "\"]\n", want: []string{"injection.default_allowed_namespaces", "is neither a namespace name"}},
		"NamespaceDot":       {text: "[injection]\ndefault_allowed_namespaces = [\"team.a\"]\n", want: []string{"injection.default_allowed_namespaces", `"team.a" is neither a namespace name nor "*"`}},
		"NamespaceGlob":      {text: "[injection]\ndefault_allowed_namespaces = [\"team-*\"]\n", want: []string{"injection.default_allowed_namespaces", `"team-*" is neither`}},
		"WriterImageEmpty":   {text: "[injection]\npgpass_writer_image = \"\"\n", want: []string{"injection.pgpass_writer_image", "must name an image with /bin/sh"}},
		"SeveralInOneTable":  {text: "[reconcile]\nmax_reconcile_rate = 0\ntimeout = \"1s\"\nobserve = \"watch\"\n", want: []string{"reconcile.max_reconcile_rate", "reconcile.timeout", "reconcile.observe", `got "watch"`}},

		// Unknown keys: every one is named, with where the keys are documented.
		"UnknownInTable":    {text: "[logging]\ndebug = true\nlevel = \"info\"\n", want: []string{"unknown key logging.level", "see examples/config.toml for every key"}},
		"UnknownTopLevel":   {text: "poll_interval = \"5m\"\n", want: []string{"unknown key poll_interval", "examples/config.toml"}},
		"UnknownSubtable":   {text: "[reconcile.extra]\nx = 1\n", want: []string{"unknown key reconcile.extra, reconcile.extra.x", "examples/config.toml"}},
		"UnknownTableTypo":  {text: "[webhooks]\nport = 9443\n", want: []string{"unknown key webhooks, webhooks.port", "examples/config.toml"}},
		"UnknownPullPolicy": {text: "[proxy]\nimage_pull_policy = \"Always\"\n", want: []string{"unknown key proxy.image_pull_policy", "examples/config.toml"}},
		"UnknownDotted":     {text: "proxy.cpu_limit = \"1\"\n", want: []string{"unknown key proxy.cpu_limit", "examples/config.toml"}},
		"UnknownHyphen":     {text: "[reconcile]\npoll-interval = \"5m\"\n", want: []string{"unknown key reconcile.poll-interval", "examples/config.toml"}},

		// Files that parse but cannot be meant as written.
		"KeyCase":            {text: "[Reconcile]\nPoll_Interval = \"30s\"\n", want: []string{"unknown key Reconcile", "lowercase"}},
		"KeyTwiceByCase":     {text: "[reconcile]\npoll_interval = \"30s\"\nPOLL_INTERVAL = \"1m\"\n", want: []string{"POLL_INTERVAL", "lowercase"}},
		"NamespaceHyphens":   {text: "[injection]\ndefault_allowed_namespaces = [\"-team\", \"team-\"]\n", want: []string{"injection.default_allowed_namespaces", `"-team" is neither a namespace name nor "*"`}},
		"NamespaceStarNames": {text: "[injection]\ndefault_allowed_namespaces = [\"*\", \"team-a\"]\n", want: []string{"injection.default_allowed_namespaces", "'*'"}},
		"NegativeCpu":        {text: "[proxy]\ncpu_request = \"-50m\"\n", want: []string{"proxy.cpu_request", "-50m", "negative"}},
		"SigtermCapTooLong":  {text: "[proxy]\nmax_sigterm_delay = \"2h\"\n", want: []string{"proxy.max_sigterm_delay", "between 0s", "2h0m0s"}},
		"CapNotAbove0":       {text: "[proxy]\nmax_memory_limit = \"0\"\n", want: []string{"proxy.max_memory_limit", "not above 0", "leave it empty"}},
		"UnknownIPType":      {text: "[proxy]\nip_types = [\"public\", \"vpn\"]\n", want: []string{"proxy.ip_types", `"vpn" is none of public, private, psc`}},
		"LimitBelowRequest":  {text: "[proxy]\nmemory_request = \"64Mi\"\nmemory_limit = \"32Mi\"\n", want: []string{"proxy.memory_limit", "proxy.memory_request"}},
		"ImageNotAReference": {text: "[proxy]\nimage = \"not an image!\"\n", want: []string{"proxy.image", "not an image!"}},
		"WriterImageBlank":   {text: "[injection]\npgpass_writer_image = \" \"\n", want: []string{"injection.pgpass_writer_image", "must name an image"}},
		// The TOML library's positioned message panics on these (an error on
		// the first line, reported as line 0): the key still names the place.
		"EscapeAtEnd":  {text: "reconcile.poll_interval = \"5m\\", want: []string{"reconcile.poll_interval", "invalid escape"}},
		"CrlfInString": {text: "proxy.image = \"gcr.io/proxy\r\n\"\r\n", want: []string{"proxy.image", "strings cannot contain newlines"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(len(tc.want)).To(BeNumerically(">=", 2), "a case needs the key (or position) and what is wrong")
			path := filepath.Join(t.TempDir(), "config.toml")
			g.Expect(os.WriteFile(path, []byte(tc.text), 0o600)).To(Succeed())
			panicked, err := loadRecovering(path)
			g.Expect(panicked).To(BeEmpty(), "Load panicked on:\n%q", tc.text)
			g.Expect(err).To(HaveOccurred(), "Load accepted:\n%s", tc.text)
			g.Expect(err.Error()).To(ContainSubstring(path), "the message must name the file")
			for _, f := range tc.want {
				g.Expect(err.Error()).To(ContainSubstring(f))
			}
		})
	}
}

// loadRecovering is Load, with a panic caught and returned as its message, so that
// an input that crashes the loader fails its own case
// rather than the whole test.
func loadRecovering(path string) (panicked string, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprint(r)
		}
	}()
	_, err = Load(path)
	return panicked, err
}
