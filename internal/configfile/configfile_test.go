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
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// The example file documents every key with its default, so it must parse to exactly
// the defaults.
func TestExampleFileIsTheDefaults(t *testing.T) {
	g := NewWithT(t)
	c, err := Load(filepath.Join("..", "..", "examples", "config.toml"))
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(c).To(Equal(Defaults()))
}

// A security-conscious platform gets the closed settings without writing them.
func TestDefaultsAreClosed(t *testing.T) {
	g := NewWithT(t)
	c := Defaults()
	g.Expect(c.Credentials.AllowExternalAccountSources).To(BeFalse(), "platform keys read no file, URL or program unless allowed")
	g.Expect(c.Credentials.AllowKeyTokenURI).To(BeFalse(), "platform keys get their tokens from Google unless allowed")
	g.Expect(c.Tenancy.NamespacedEndpoints).To(BeEmpty(), "namespaced ProviderConfigs use Google's endpoint unless allowed")
}

func TestLoad(t *testing.T) {
	g := NewWithT(t)
	c, err := Load("")
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(c).To(Equal(Defaults()))

	_, err = Load(filepath.Join(t.TempDir(), "missing.toml"))
	g.Expect(err).To(MatchError(ContainSubstring("cannot read configuration file")))

	path := filepath.Join(t.TempDir(), "bad.toml")
	g.Expect(os.WriteFile(path, []byte("[reconcile]\npoll_interval = \"1s\"\n"), 0o600)).To(Succeed())
	_, err = Load(path)
	g.Expect(err).To(MatchError(And(ContainSubstring(path), ContainSubstring("reconcile.poll_interval: must be at least 10s, got 1s"))))
}

func TestParse(t *testing.T) {
	cases := map[string]struct {
		text    string
		want    func(c *Config)
		wantErr []string
	}{
		"Empty": {text: "", want: func(*Config) {}},
		"Overrides": {
			text: "[reconcile]\npoll_interval = \"30s\"\n[cloudsql]\nrequests_per_minute = 60\n[proxy]\nsidecar_mode = \"classic\"\nmemory_limit = \"\"\n[injection]\ndefault_allowed_namespaces = []\n",
			want: func(c *Config) {
				c.Reconcile.PollInterval = Duration{30 * time.Second}
				c.CloudSQL.RequestsPerMinute = 60
				c.Proxy.SidecarMode = SidecarClassic
				c.Proxy.MemoryLimit = ""
				c.Injection.DefaultAllowedNamespaces = []string{}
			},
		},
		"UnknownKey":          {text: "[reconcile]\npoll = \"1m\"\n", wantErr: []string{"unknown key reconcile.poll", "examples/config.toml"}},
		"UnknownTable":        {text: "[metrics]\nport = 8080\n", wantErr: []string{"unknown key metrics"}},
		"BadDuration":         {text: "[reconcile]\npoll_interval = \"often\"\n", wantErr: []string{"poll_interval", `"often" is not a duration`}},
		"WrongType":           {text: "[cloudsql]\nrequests_per_minute = \"many\"\n", wantErr: []string{"requests_per_minute"}},
		"Syntax":              {text: "[reconcile\n", wantErr: []string{"At line 2", "to end table name"}},
		"RateZero":            {text: "[reconcile]\nmax_reconcile_rate = 0\n", wantErr: []string{"reconcile.max_reconcile_rate: must be at least 1, got 0"}},
		"ObjectShareTooSmall": {text: "[reconcile]\nobject_share = 0.05\n", wantErr: []string{"reconcile.object_share: must be at least 0.1 and at most 0.7"}},
		"ObjectShareTooLarge": {text: "[reconcile]\nobject_share = 0.9\n", wantErr: []string{"reconcile.object_share: must be at least 0.1 and at most 0.7", "got 0.9"}},
		"ObserveOther":        {text: "[reconcile]\nobserve = \"watch\"\n", wantErr: []string{"reconcile.observe", `"list"`, `"get"`, `got "watch"`}},
		"BusyTooLong":         {text: "[reconcile]\npoll_interval = \"1m\"\nbusy_poll_interval = \"2m\"\n", wantErr: []string{"reconcile.busy_poll_interval: must be at least 1s and at most reconcile.poll_interval (1m0s), got 2m0s"}},
		"TimeoutShort":        {text: "[reconcile]\ntimeout = \"1s\"\n", wantErr: []string{"reconcile.timeout: must be at least 10s"}},
		"BudgetZero":          {text: "[cloudsql]\nrequests_per_minute = 0\n", wantErr: []string{"cloudsql.requests_per_minute: must be at least 1"}},
		"Shares": {
			text: "[cloudsql]\nnamespace_share = 0.1\nall_namespaces_share = 0.3\n",
			want: func(c *Config) { c.CloudSQL.NamespaceShare, c.CloudSQL.AllNamespacesShare = 0.1, 0.3 },
		},
		"ShareZero":     {text: "[cloudsql]\nnamespace_share = 0.0\n", wantErr: []string{"cloudsql.namespace_share: must be above 0 and at most 1", "got 0"}},
		"ShareAboveOne": {text: "[cloudsql]\nnamespace_share = 1.5\nall_namespaces_share = 1.5\n", wantErr: []string{"cloudsql.namespace_share: must be above 0 and at most 1", "cloudsql.all_namespaces_share: must be at least cloudsql.namespace_share (1.5) and at most 1"}},
		"AllBelowOne":   {text: "[cloudsql]\nnamespace_share = 0.4\nall_namespaces_share = 0.2\n", wantErr: []string{"cloudsql.all_namespaces_share: must be at least cloudsql.namespace_share (0.4) and at most 1, got 0.2"}},
		"ShareNotFloat": {text: "[cloudsql]\nnamespace_share = \"a quarter\"\n", wantErr: []string{"namespace_share"}},
		"PortRange":     {text: "[webhook]\nport = 70000\n", wantErr: []string{"webhook.port: must be a TCP port between 1 and 65535, got 70000"}},
		"ImageEmpty":    {text: "[proxy]\nimage = \"\"\n", wantErr: []string{"proxy.image: must name the Cloud SQL Auth Proxy v2 image"}},
		"WriterEmpty":   {text: "[injection]\npgpass_writer_image = \"\"\n", wantErr: []string{"injection.pgpass_writer_image: must name an image with /bin/sh"}},
		"LookupLong":    {text: "[webhook]\ncloudsql_timeout = \"10s\"\n", wantErr: []string{"webhook.cloudsql_timeout: must be between 1s and 8s"}},
		"SidecarMode":   {text: "[proxy]\nsidecar_mode = \"always\"\n", wantErr: []string{`proxy.sidecar_mode: must be auto, native or classic, got "always"`}},
		"Quantity":      {text: "[proxy]\ncpu_request = \"lots\"\n", wantErr: []string{`proxy.cpu_request: "lots" is not a Kubernetes quantity`}},
		"Namespace":     {text: "[injection]\ndefault_allowed_namespaces = [\"Team_A\"]\n", wantErr: []string{`injection.default_allowed_namespaces: "Team_A" is neither a namespace name nor "*"`}},
		"TenancyAndCredentials": {
			text: "[credentials]\nallow_external_account_sources = true\nallow_key_token_uri = true\n[tenancy]\nnamespaced_endpoints = [\"https://sqladmin.example.com/\", \"http://emulator.cloudsql:8080\"]\n",
			want: func(c *Config) {
				c.Credentials.AllowExternalAccountSources = true
				c.Credentials.AllowKeyTokenURI = true
				c.Tenancy.NamespacedEndpoints = []string{"https://sqladmin.example.com/", "http://emulator.cloudsql:8080"}
			},
		},
		"AnyEndpoint":       {text: "[tenancy]\nnamespaced_endpoints = [\"*\"]\n", want: func(c *Config) { c.Tenancy.NamespacedEndpoints = []string{"*"} }},
		"EndpointNotURL":    {text: "[tenancy]\nnamespaced_endpoints = [\"sqladmin.example.com\"]\n", wantErr: []string{`tenancy.namespaced_endpoints: "sqladmin.example.com" is neither an http or https base URL`}},
		"EndpointQuery":     {text: "[tenancy]\nnamespaced_endpoints = [\"https://x.example.com/?a=b\"]\n", wantErr: []string{`tenancy.namespaced_endpoints: "https://x.example.com/?a=b"`}},
		"EndpointScheme":    {text: "[tenancy]\nnamespaced_endpoints = [\"file:///etc/passwd\"]\n", wantErr: []string{`tenancy.namespaced_endpoints: "file:///etc/passwd"`}},
		"EndpointStarMixed": {text: "[tenancy]\nnamespaced_endpoints = [\"*\", \"https://x.example.com\"]\n", wantErr: []string{"tenancy.namespaced_endpoints: '*' allows every endpoint and must stand alone"}},
		"SourcesNotBool":    {text: "[credentials]\nallow_external_account_sources = \"yes\"\n", wantErr: []string{"allow_external_account_sources"}},
		"TokenURINotBool":   {text: "[credentials]\nallow_key_token_uri = \"yes\"\n", wantErr: []string{"allow_key_token_uri"}},
		"SeveralWrong":      {text: "[reconcile]\nmax_reconcile_rate = 0\n[webhook]\nport = 0\n", wantErr: []string{"reconcile.max_reconcile_rate", "webhook.port"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := Parse(tc.text)
			if tc.wantErr != nil {
				g.Expect(err).To(HaveOccurred())
				for _, f := range tc.wantErr {
					g.Expect(err.Error()).To(ContainSubstring(f))
				}
				return
			}
			g.Expect(err).ToNot(HaveOccurred())
			want := Defaults()
			tc.want(&want)
			g.Expect(c).To(Equal(want))
		})
	}
}

// A configuration that lets every namespace use every instance without
// spec.injection is valid, but warned about; the defaults allow none.
func TestWarnings(t *testing.T) {
	cases := map[string]struct {
		reason string
		text   string
		want   []string
		// says and fix are in every warning: what it lets a tenant do, and
		// what to set instead.
		says, fix string
	}{
		"Defaults": {reason: "the defaults allow no namespace and warn of nothing", text: ""},
		"Names":    {reason: "a list of namespaces is what the key is for", text: "[injection]\ndefault_allowed_namespaces = [\"team-a\"]\n"},
		"EveryOne": {reason: `"*" hands every instance without spec.injection to every namespace`, text: "[injection]\ndefault_allowed_namespaces = [\"*\"]\n",
			want: []string{`[injection] default_allowed_namespaces is ["*"]`}, says: "spec.injection", fix: "set it to []"},
		"ExternalSources": {reason: "a platform key Secret that a tenant can write hands over the provider's identity",
			text: "[credentials]\nallow_external_account_sources = true\n",
			want: []string{"[credentials] allow_external_account_sources is true"}, says: "can take the provider's identity", fix: "set it to false"},
		"KeyTokenURI": {reason: "a platform key Secret that a tenant can write points the provider at internal URLs",
			text: "[credentials]\nallow_key_token_uri = true\n",
			want: []string{"[credentials] allow_key_token_uri is true"}, says: "call and read internal URLs", fix: "set it to false"},
		"AnyEndpoint": {reason: `"*" lets a tenant's configuration name any URL`,
			text: "[tenancy]\nnamespaced_endpoints = [\"*\"]\n",
			want: []string{`[tenancy] namespaced_endpoints contains "*"`}, says: "call internal URLs", fix: "or [] for Google's only"},
		"SpecificEndpoint": {reason: "listing endpoints is what the key is for", text: "[tenancy]\nnamespaced_endpoints = [\"https://sqladmin.example.com/\"]\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := Parse(tc.text)
			g.Expect(err).ToNot(HaveOccurred())
			w := c.Warnings()
			g.Expect(w).To(HaveLen(len(tc.want)), tc.reason)
			for i, s := range tc.want {
				g.Expect(w[i]).To(And(ContainSubstring(s), ContainSubstring(tc.says), ContainSubstring(tc.fix)), tc.reason)
			}
		})
	}
}

// The default allows no namespace: an instance names who may use it.
func TestDefaultAllowsNoNamespace(t *testing.T) {
	NewWithT(t).Expect(Defaults().Injection.DefaultAllowedNamespaces).To(BeEmpty())
}
