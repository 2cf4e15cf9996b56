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
		"table-extra-bracket":   {text: "[reconcile]]\n", want: []string{"At line 1, column 12", "[reconcile]]", "expected a top-level item to end with a newline"}},
		"table-unclosed":        {text: "[webhook\nport = 9443\n", want: []string{"At line 2", "[webhook", "expected '.' or ']' to end table name"}},
		"missing-equals":        {text: "[reconcile]\npoll_interval \"5m\"\n", want: []string{"At line 2, column 15", `poll_interval "5m"`, "expected '.' or '='"}},
		"missing-value":         {text: "[reconcile]\npoll_interval =\n", want: []string{"At line 2, column 16", "poll_interval =", "expected value but found '\\n'"}},
		"blank-key":             {text: "[reconcile]\n= \"5m\"\n", want: []string{"At line 2", "key name appears blank"}},
		"string-unterminated":   {text: "[reconcile]\npoll_interval = \"5m\n", want: []string{"At line 2, column 20", `poll_interval = "5m`, "strings cannot contain newlines"}},
		"trailing-garbage":      {text: "[reconcile]\npoll_interval = \"5m\" extra\n", want: []string{"At line 2, column 21", `poll_interval = "5m" extra`, "expected a top-level item to end"}},
		"bare-word":             {text: "[logging]\ndebug = True\n", want: []string{"At line 2, column 9", "debug = True", `expected value but found "True"`}},
		"key-twice":             {text: "[reconcile]\npoll_interval = \"5m\"\npoll_interval = \"6m\"\n", want: []string{"At line 3", "Key 'reconcile.poll_interval' has already been defined"}},
		"table-twice":           {text: "[reconcile]\ntimeout = \"1m\"\n[reconcile]\n", want: []string{"At line 3", "Key 'reconcile' has already been defined"}},
		"array-unclosed":        {text: "[injection]\ndefault_allowed_namespaces = [\"team-a\"\n", want: []string{"At line 2", "default_allowed_namespaces", "expected a comma (',') or array terminator (']')"}},
		"inline-table-unclosed": {text: "[proxy]\nimage = { name = \"proxy\"\n", want: []string{"At line 2", "image = {", "expected a comma or an inline table terminator '}'"}},
		"no-separator":          {text: "reconcile\n", want: []string{"At line 1, column 10", "reconcile", "expected '.' or '='"}},
		"nul-byte":              {text: "[proxy]\nimage = \"\x00\"\n", want: []string{"At line 2, column 9", "image", "TOML files cannot contain control characters: '0x00'"}},
		"invalid-utf8":          {text: "[proxy]\nimage = \"gcr.io/\xff\"\n", want: []string{"At line 2", "image", "invalid UTF-8 byte: 0xff"}},
		"utf16":                 {text: "\xff\xfe[\x00l\x00o\x00g\x00g\x00i\x00n\x00g\x00]\x00\n\x00", want: []string{"At line 1", "files cannot contain NULL bytes; probably using UTF-16; TOML files must be UTF-8"}},
		"yaml-instead":          {text: "reconcile:\n  poll_interval: 5m\n", want: []string{"At line 1, column 10", "reconcile:", "expected '.' or '=', but got ':'"}},

		// Wrong types: the key, the type found and the type wanted.
		"rate-string":         {text: "[reconcile]\nmax_reconcile_rate = \"10\"\n", want: []string{`last key "reconcile.max_reconcile_rate"`, incompatible + "string; destination has type integer"}},
		"rate-float":          {text: "[reconcile]\nmax_reconcile_rate = 10.5\n", want: []string{`last key "reconcile.max_reconcile_rate"`, incompatible + "float64; destination has type integer"}},
		"budget-exponent":     {text: "[cloudsql]\nrequests_per_minute = 1e3\n", want: []string{`last key "cloudsql.requests_per_minute"`, incompatible + "float64"}},
		"port-string":         {text: "[webhook]\nport = \"9443\"\n", want: []string{`last key "webhook.port"`, incompatible + "string; destination has type integer"}},
		"debug-string":        {text: "[logging]\ndebug = \"true\"\n", want: []string{`last key "logging.debug"`, incompatible + "string; destination has type boolean"}},
		"debug-int":           {text: "[logging]\ndebug = 1\n", want: []string{`last key "logging.debug"`, incompatible + "int64; destination has type boolean"}},
		"observe-list":        {text: "[reconcile]\nobserve = [\"list\"]\n", want: []string{`last key "reconcile.observe"`, incompatible + "[]any; destination has type string"}},
		"table-is-int":        {text: "reconcile = 5\n", want: []string{`last key "reconcile"`, "expected table but found int64"}},
		"table-is-array":      {text: "[[reconcile]]\npoll_interval = \"5m\"\n", want: []string{`last key "reconcile"`, "expected table but found []map[string]any"}},
		"duration-table":      {text: "[reconcile]\npoll_interval = { value = \"5m\" }\n", want: []string{`last key "reconcile.poll_interval"`, incompatible + "map[string]any"}},
		"duration-subtable":   {text: "[reconcile.poll_interval]\nvalue = \"5m\"\n", want: []string{`last key "reconcile.poll_interval"`, incompatible + "map[string]any"}},
		"quantity-int":        {text: "[proxy]\ncpu_request = 50\n", want: []string{`last key "proxy.cpu_request"`, incompatible + "int64; destination has type string"}},
		"cert-dir-int":        {text: "[webhook]\ncert_dir = 5\n", want: []string{`last key "webhook.cert_dir"`, incompatible + "int64; destination has type string"}},
		"namespaces-string":   {text: "[injection]\ndefault_allowed_namespaces = \"*\"\n", want: []string{`last key "injection.default_allowed_namespaces"`, incompatible + "string; destination has type slice"}},
		"namespaces-ints":     {text: "[injection]\ndefault_allowed_namespaces = [1, 2]\n", want: []string{`last key "injection.default_allowed_namespaces"`, incompatible + "int64; destination has type string"}},
		"writer-image-int":    {text: "[injection]\npgpass_writer_image = 7\n", want: []string{`last key "injection.pgpass_writer_image"`, incompatible + "int64; destination has type string"}},
		"sidecar-mode-bool":   {text: "[proxy]\nsidecar_mode = true\n", want: []string{`last key "proxy.sidecar_mode"`, incompatible + "bool; destination has type string"}},
		"proxy-table-is-list": {text: "proxy = [\"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0\"]\n", want: []string{`last key "proxy"`, "expected table"}},

		// Durations: the value, with the key on the quoted line, and how to write one.
		"duration-spaced":   {text: "[reconcile]\npoll_interval = \"5 m\"\n", want: []string{"poll_interval", `"5 m" is not a duration: write it like 30s, 5m or 1h`}},
		"duration-int":      {text: "[reconcile]\npoll_interval = 300\n", want: []string{"poll_interval = 300", `"300" is not a duration`}},
		"duration-no-unit":  {text: "[webhook]\ncloudsql_timeout = \"5\"\n", want: []string{"cloudsql_timeout", `"5" is not a duration`}},
		"duration-words":    {text: "[reconcile]\nbusy_poll_interval = \"1 second\"\n", want: []string{"busy_poll_interval", `"1 second" is not a duration`}},
		"duration-empty":    {text: "[reconcile]\ntimeout = \"\"\n", want: []string{"timeout", `"" is not a duration`}},
		"duration-overflow": {text: "[reconcile]\npoll_interval = \"99999999999h\"\n", want: []string{"poll_interval", `"99999999999h" is not a duration`}},
		"duration-days":     {text: "[reconcile]\npoll_interval = \"1d\"\n", want: []string{"poll_interval", `"1d" is not a duration`}},
		// A TOML local time is not a duration; the message shows it as a date-time.
		"duration-toml-time": {text: "[reconcile]\npoll_interval = 00:05:00\n", want: []string{"poll_interval = 00:05:00", "is not a duration"}},
		"poll-negative":      {text: "[reconcile]\npoll_interval = \"-5m\"\n", want: []string{"reconcile.poll_interval", "must be at least 10s, got -5m0s"}},
		"poll-too-short":     {text: "[reconcile]\npoll_interval = \"9s\"\nbusy_poll_interval = \"5s\"\n", want: []string{"reconcile.poll_interval", "must be at least 10s, got 9s"}},
		"busy-sub-second":    {text: "[reconcile]\nbusy_poll_interval = \"500ms\"\n", want: []string{"reconcile.busy_poll_interval", "must be at least 1s and at most reconcile.poll_interval (5m0s), got 500ms"}},
		"busy-above-poll":    {text: "[reconcile]\npoll_interval = \"1h\"\nbusy_poll_interval = \"2h\"\n", want: []string{"reconcile.busy_poll_interval", "at most reconcile.poll_interval (1h0m0s), got 2h0m0s"}},
		"timeout-short":      {text: "[reconcile]\ntimeout = \"9s\"\n", want: []string{"reconcile.timeout", "must be at least 10s, got 9s"}},
		"lookup-zero":        {text: "[webhook]\ncloudsql_timeout = \"0s\"\n", want: []string{"webhook.cloudsql_timeout", "must be between 1s and 8s (the API server waits 10s for the webhook), got 0s"}},
		"lookup-minute":      {text: "[webhook]\ncloudsql_timeout = \"1m\"\n", want: []string{"webhook.cloudsql_timeout", "must be between 1s and 8s", "got 1m0s"}},

		// Numbers out of range.
		"rate-negative":   {text: "[reconcile]\nmax_reconcile_rate = -1\n", want: []string{"reconcile.max_reconcile_rate", "must be at least 1, got -1"}},
		"rate-int64":      {text: "[reconcile]\nmax_reconcile_rate = 99999999999999999999\n", want: []string{"max_reconcile_rate = 99999999999999999999", "is out of range for int64"}},
		"budget-negative": {text: "[cloudsql]\nrequests_per_minute = -5\n", want: []string{"cloudsql.requests_per_minute", "must be at least 1, got -5"}},
		"port-negative":   {text: "[webhook]\nport = -443\n", want: []string{"webhook.port", "must be a TCP port between 1 and 65535, got -443"}},
		"port-65536":      {text: "[webhook]\nport = 65536\n", want: []string{"webhook.port", "got 65536"}},
		"port-million":    {text: "[webhook]\nport = 1_000_000\n", want: []string{"webhook.port", "got 1000000"}},

		// Values outside their set.
		"observe-upper":        {text: "[reconcile]\nobserve = \"LIST\"\n", want: []string{"reconcile.observe", `must be "list"`, `got "LIST"`}},
		"observe-empty":        {text: "[reconcile]\nobserve = \"\"\n", want: []string{"reconcile.observe", `got ""`}},
		"sidecar-capitalised":  {text: "[proxy]\nsidecar_mode = \"Native\"\n", want: []string{"proxy.sidecar_mode", `must be auto, native or classic, got "Native"`}},
		"quantity-spaced":      {text: "[proxy]\ncpu_request = \"50 m\"\n", want: []string{"proxy.cpu_request", `"50 m" is not a Kubernetes quantity: write it like 50m or 64Mi`}},
		"quantity-huge":        {text: "[proxy]\nmemory_limit = \"1e100Ei\"\n", want: []string{"proxy.memory_limit", `"1e100Ei" is not a Kubernetes quantity`}},
		"quantity-empty":       {text: "[proxy]\nmemory_request = \"\"\n", want: []string{"proxy.memory_request", `"" is not a Kubernetes quantity`}},
		"quantity-unit":        {text: "[proxy]\nmemory_request = \"64MB\"\n", want: []string{"proxy.memory_request", `"64MB" is not a Kubernetes quantity`}},
		"namespace-empty":      {text: "[injection]\ndefault_allowed_namespaces = [\"\"]\n", want: []string{"injection.default_allowed_namespaces", `"" is neither a namespace name nor "*"`}},
		"namespace-64":         {text: "[injection]\ndefault_allowed_namespaces = [\"" + strings.Repeat("a", 64) + "\"]\n", want: []string{"injection.default_allowed_namespaces", "is neither a namespace name"}},
		"namespace-dot":        {text: "[injection]\ndefault_allowed_namespaces = [\"team.a\"]\n", want: []string{"injection.default_allowed_namespaces", `"team.a" is neither a namespace name nor "*"`}},
		"namespace-glob":       {text: "[injection]\ndefault_allowed_namespaces = [\"team-*\"]\n", want: []string{"injection.default_allowed_namespaces", `"team-*" is neither`}},
		"writer-image-empty":   {text: "[injection]\npgpass_writer_image = \"\"\n", want: []string{"injection.pgpass_writer_image", "must name an image with /bin/sh and cat"}},
		"several-in-one-table": {text: "[reconcile]\nmax_reconcile_rate = 0\ntimeout = \"1s\"\nobserve = \"watch\"\n", want: []string{"reconcile.max_reconcile_rate", "reconcile.timeout", "reconcile.observe", `got "watch"`}},

		// Unknown keys: every one is named, with where the keys are documented.
		"unknown-in-table":    {text: "[logging]\ndebug = true\nlevel = \"info\"\n", want: []string{"unknown key logging.level", "see examples/config.toml for every key"}},
		"unknown-top-level":   {text: "poll_interval = \"5m\"\n", want: []string{"unknown key poll_interval", "examples/config.toml"}},
		"unknown-subtable":    {text: "[reconcile.extra]\nx = 1\n", want: []string{"unknown key reconcile.extra, reconcile.extra.x", "examples/config.toml"}},
		"unknown-table-typo":  {text: "[webhooks]\nport = 9443\n", want: []string{"unknown key webhooks, webhooks.port", "examples/config.toml"}},
		"unknown-pull-policy": {text: "[proxy]\nimage_pull_policy = \"Always\"\n", want: []string{"unknown key proxy.image_pull_policy", "examples/config.toml"}},
		"unknown-dotted":      {text: "proxy.cpu_limit = \"1\"\n", want: []string{"unknown key proxy.cpu_limit", "examples/config.toml"}},
		"unknown-hyphen":      {text: "[reconcile]\npoll-interval = \"5m\"\n", want: []string{"unknown key reconcile.poll-interval", "examples/config.toml"}},

		// Files that parse but cannot be meant as written.
		"key-case":              {text: "[Reconcile]\nPoll_Interval = \"30s\"\n", want: []string{"unknown key Reconcile", "lowercase"}},
		"key-twice-by-case":     {text: "[reconcile]\npoll_interval = \"30s\"\nPOLL_INTERVAL = \"1m\"\n", want: []string{"POLL_INTERVAL", "lowercase"}},
		"namespace-hyphens":     {text: "[injection]\ndefault_allowed_namespaces = [\"-team\", \"team-\"]\n", want: []string{"injection.default_allowed_namespaces", `"-team" is neither a namespace name nor "*"`}},
		"namespace-star-names":  {text: "[injection]\ndefault_allowed_namespaces = [\"*\", \"team-a\"]\n", want: []string{"injection.default_allowed_namespaces", "'*'"}},
		"negative-cpu":          {text: "[proxy]\ncpu_request = \"-50m\"\n", want: []string{"proxy.cpu_request", "-50m", "negative"}},
		"limit-below-request":   {text: "[proxy]\nmemory_request = \"64Mi\"\nmemory_limit = \"32Mi\"\n", want: []string{"proxy.memory_limit", "proxy.memory_request"}},
		"image-not-a-reference": {text: "[proxy]\nimage = \"not an image!\"\n", want: []string{"proxy.image", "not an image!"}},
		"writer-image-blank":    {text: "[injection]\npgpass_writer_image = \" \"\n", want: []string{"injection.pgpass_writer_image", "must name an image"}},
		// The TOML library's positioned message panics on these (an error on
		// the first line, reported as line 0): the key still names the place.
		"escape-at-end":  {text: "reconcile.poll_interval = \"5m\\", want: []string{"reconcile.poll_interval", "invalid escape"}},
		"crlf-in-string": {text: "proxy.image = \"gcr.io/proxy\r\n\"\r\n", want: []string{"proxy.image", "strings cannot contain newlines"}},
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
