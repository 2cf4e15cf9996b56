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

// Package configfile reads the provider's TOML configuration file, which
// `provider --config PATH` names. Every key has a default, so the file and every key in
// it are optional; an unknown key or a bad value stops start-up with an error that
// names the key and says what is expected. examples/config.toml documents every key.
package configfile

//go:generate go run ../../hack/proxyversion --gomod ../../hack/proxy/go.mod --header ../../hack/boilerplate.go.txt --out zz_generated.proxyversion.go

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
)

const (
	errNotDuration  = "%q is not a duration: write it like 30s, 5m or 1h"
	errReadFile     = "cannot read configuration file"
	errConfigFile   = "configuration file %s"
	errUppercaseKey = "unknown key %s: keys are lowercase, see examples/config.toml for every key"
	errUnknownKeys  = "unknown key %s: see examples/config.toml for every key"
)

// Sidecar modes for the injected Cloud SQL Auth Proxy.
const (
	// SidecarAuto uses a native sidecar (an init container with restartPolicy
	// Always) when the API server is 1.29 or newer, else a regular container.
	SidecarAuto = "auto"
	// SidecarNative always uses a native sidecar.
	SidecarNative = "native"
	// SidecarClassic always makes the proxy the pod's first container, which
	// the application's containers start after (a postStart hook waits until
	// it listens).
	SidecarClassic = "classic"
)

// ProxyImageRepository is where Google publishes the Cloud SQL Auth Proxy v2 images.
const ProxyImageRepository = "gcr.io/cloud-sql-connectors/cloud-sql-proxy"

// Ways of observing instances ([reconcile] observe).
const (
	// ObserveList reads every instance of a project with one instances.list per
	// 500 instances, shared by all of them: a listing serves an instance when it
	// began after the provider's last change of it and is recent enough (younger
	// than the busy poll interval while something is under way or after a spec
	// change), and instances.get confirms an absence that could mislead.
	ObserveList = "list"
	// ObserveGet asks instances.get for each instance at each poll.
	ObserveGet = "get"
)

// Config is the provider's configuration.
type Config struct {
	Reconcile   Reconcile   `toml:"reconcile"`
	CloudSQL    CloudSQL    `toml:"cloudsql"`
	Webhook     Webhook     `toml:"webhook"`
	Proxy       Proxy       `toml:"proxy"`
	Injection   Injection   `toml:"injection"`
	Credentials Credentials `toml:"credentials"`
	Tenancy     Tenancy     `toml:"tenancy"`
	Logging     Logging     `toml:"logging"`
}

// Reconcile tunes the PostgresqlInstance controller.
type Reconcile struct {
	// PollInterval is the longest time between two checks of an instance against
	// Cloud SQL (the resync period): out-of-band changes are reverted this late at
	// the latest. Each check costs one Cloud SQL request.
	PollInterval Duration `toml:"poll_interval"`
	// BusyPollInterval is how soon an instance is checked again while an
	// operation of the provider's is under way (creating, updating, deleting),
	// so that Ready and deletion show without waiting a whole PollInterval.
	BusyPollInterval Duration `toml:"busy_poll_interval"`
	// BackupHealthInterval is how often each instance's backup health is
	// read (backupRuns.list, and instances.getLatestRecoveryTime with
	// point-in-time recovery on), each instance at a time of its own; longer
	// when the fleet's reads would take more than a tenth of the budget.
	BackupHealthInterval Duration `toml:"backup_health_interval"`
	// MaxReconcileRate is how many reconciles per second the provider starts at most.
	MaxReconcileRate int `toml:"max_reconcile_rate"`
	// ObjectShare is the most of cloudsql.requests_per_minute and of
	// MaxReconcileRate that the databases, users and backups of instances
	// may take: they get what the instances' polls, backup-health reads
	// and writes leave, up to this share, so that an instance is observed
	// as often with thousands of objects as without.
	ObjectShare float64 `toml:"object_share"`
	// Timeout bounds one reconcile, Cloud SQL calls included.
	Timeout Duration `toml:"timeout"`
	// Observe is how instances are read at each poll: list or get (see the
	// Observe* constants).
	Observe string `toml:"observe"`
}

// CloudSQL tunes the calls to the Cloud SQL Admin API.
type CloudSQL struct {
	// RequestsPerMinute is the client-side budget shared by every reconcile, kept
	// below the project's quota ("Queries per minute per user") so that the
	// provider never exhausts it for the proxies and people.
	RequestsPerMinute int `toml:"requests_per_minute"`
	// NamespaceShare is the share (above 0, at most 1) of the platform's
	// budget that the requests made for the objects of one namespace may
	// use (namespaced users, databases and instances that reach Cloud SQL
	// through a cluster-scoped instance or a ClusterProviderConfig), so that
	// a busy team cannot delay the platform's objects.
	NamespaceShare float64 `toml:"namespace_share"`
	// AllNamespacesShare is the share (at least NamespaceShare, at most 1)
	// that the requests of every namespace together may use.
	AllNamespacesShare float64 `toml:"all_namespaces_share"`
}

// Webhook configures the admission webhooks' HTTPS server.
type Webhook struct {
	// Port the webhook server listens on.
	Port int `toml:"port"`
	// CertDir holds tls.crt and tls.key. Empty means $WEBHOOK_TLS_CERT_DIR, which
	// the Crossplane package manager sets, else a self-signed certificate is made.
	CertDir string `toml:"cert_dir"`
	// CloudSQLTimeout bounds the Cloud SQL lookup with which the PostgresqlInstance
	// webhook checks that a name is free; it must end well within the API server's
	// webhook timeout (10s). When it expires the instance is admitted.
	CloudSQLTimeout Duration `toml:"cloudsql_timeout"`
}

// Proxy configures the injected Cloud SQL Auth Proxy container.
type Proxy struct {
	// Image of the Cloud SQL Auth Proxy v2.
	Image string `toml:"image"`
	// SidecarMode is auto, native or classic (see the Sidecar* constants).
	SidecarMode string `toml:"sidecar_mode"`
	// CPURequest and MemoryRequest are the proxy container's resource requests.
	CPURequest    string `toml:"cpu_request"`
	MemoryRequest string `toml:"memory_request"`
	// MemoryLimit caps the proxy's memory; empty sets no limit.
	MemoryLimit string `toml:"memory_limit"`

	// The caps of what a pod may ask of its proxy with the proxy-*
	// annotations; a provider configuration's spec.proxyLimits may narrow
	// them for its instances, never widen them. An empty quantity caps
	// nothing.
	MaxCPURequest    string `toml:"max_cpu_request"`
	MaxCPULimit      string `toml:"max_cpu_limit"`
	MaxMemoryRequest string `toml:"max_memory_request"`
	MaxMemoryLimit   string `toml:"max_memory_limit"`
	// MaxSigtermDelay caps proxy-min-sigterm-delay and
	// proxy-max-sigterm-delay, each, between 0s (no delay may be asked
	// for) and 1h: a pod's grace period is raised to fit their sum, which a
	// node's drain then waits for.
	MaxSigtermDelay Duration `toml:"max_sigterm_delay"`
	// MaxConnections caps proxy-max-connections, and is what the proxy of a
	// pod that does not ask gets; 0 caps nothing.
	MaxConnections int `toml:"max_connections"`
	// IPTypes are the paths to instances that pods may ask for with
	// proxy-ip-type: public, private, psc.
	IPTypes []string `toml:"ip_types"`
}

// Injection configures which pods may use which instances.
type Injection struct {
	// DefaultAllowedNamespaces applies to PostgresqlInstances that do not say which
	// namespaces may request them: an empty list (the default) none, so that an
	// instance names who may use it; "*" allows every namespace (anyone who can
	// create a pod anywhere can then use the instance, and Warnings says so).
	DefaultAllowedNamespaces []string `toml:"default_allowed_namespaces"`
	// PgpassWriterImage runs the init containers that copy the password into a
	// file owned by the user of each container (libpq reads no other), and the
	// sidecars that rewrite it when the password changes; it needs /bin/sh,
	// sleep and mv.
	PgpassWriterImage string `toml:"pgpass_writer_image"`
	// RolloutsPerMinute bounds how many workloads a minute the provider
	// restarts in each namespace (so that one namespace cannot spend
	// another's) because their injected proxy no longer matches (a new proxy
	// image, connection name, endpoint or key), for instances and namespaces
	// that opt in with cloudsql.travelaudience.com/proxy-rollout; 0 turns
	// the rollout off.
	RolloutsPerMinute int `toml:"rollouts_per_minute"`
}

// Credentials configures which credentials provider configurations may use.
type Credentials struct {
	// AllowExternalAccountSources lets the platform's configurations
	// (cluster-scoped ProviderConfigs and ClusterProviderConfigs) use
	// external_account keys (workload identity federation) whose
	// credential_source reads a file, fetches a URL, runs a program or reads
	// a cloud's metadata: the provider then reads what the key names with its
	// own permissions (its Kubernetes token, the metadata server) and sends it
	// to the key's token_url. Namespaced ProviderConfigs never may: their keys
	// are service-account keys only.
	AllowExternalAccountSources bool `toml:"allow_external_account_sources"`
	// AllowKeyTokenURI lets the service-account keys of the platform's
	// configurations get their tokens from the token_uri the key holds (an
	// emulator, a private endpoint). Off, every service-account key gets its
	// tokens from Google's endpoint: a key Secret that someone else can write
	// could otherwise make the provider send signed assertions to, and show
	// the answers of, a URL of their choosing. Namespaced ProviderConfigs'
	// keys always use Google's endpoint.
	AllowKeyTokenURI bool `toml:"allow_key_token_uri"`
}

// Tenancy configures what namespaced ProviderConfigs, which the teams of
// namespaces write, may name.
type Tenancy struct {
	// NamespacedEndpoints are the Cloud SQL Admin API base URLs that a
	// namespaced ProviderConfig's spec.endpoint may name; "*" allows any, an
	// empty list none (Google's endpoint only).
	NamespacedEndpoints []string `toml:"namespaced_endpoints"`
}

// Logging configures the provider's logs.
type Logging struct {
	// Debug turns on debug logs.
	Debug bool `toml:"debug"`
}

// Duration is a time.Duration written as a string such as "5m" or "30s".
type Duration struct{ time.Duration }

// UnmarshalText parses a duration such as "5m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return errors.Errorf(errNotDuration, string(b))
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as Go does, for example 5m0s.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// maxObjectShare is the most of the budget that reconcile.object_share may
// give objects: the write reserve and the backup-health reads' share are
// never theirs, so a larger share could never be given.
const maxObjectShare = 1 - budget.DefaultWriteReserve - budget.HealthShare

// Defaults is the configuration used for every key the file leaves out.
func Defaults() Config {
	return Config{
		Reconcile: Reconcile{
			PollInterval:         Duration{5 * time.Minute},
			BusyPollInterval:     Duration{15 * time.Second},
			BackupHealthInterval: Duration{time.Hour},
			MaxReconcileRate:     10,
			ObjectShare:          budget.DefaultObjectShare,
			Timeout:              Duration{2 * time.Minute},
			Observe:              ObserveList,
		},
		CloudSQL: CloudSQL{RequestsPerMinute: 180, NamespaceShare: budget.DefaultNamespaceShare, AllNamespacesShare: budget.DefaultAllNamespacesShare},
		Webhook:  Webhook{Port: 9443, CloudSQLTimeout: Duration{5 * time.Second}},
		Proxy: Proxy{
			Image:         ProxyImageRepository + ":" + ProxyVersion,
			SidecarMode:   SidecarAuto,
			CPURequest:    "50m",
			MemoryRequest: "64Mi",
			MemoryLimit:   "256Mi",
			// Enough for a busy proxy, too little for thousands of pods to
			// each reserve a node's worth.
			MaxCPURequest:    "500m",
			MaxCPULimit:      "1",
			MaxMemoryRequest: "256Mi",
			MaxMemoryLimit:   "1Gi",
			MaxSigtermDelay:  Duration{time.Minute},
			IPTypes:          []string{"public", "private", "psc"},
		},
		Injection: Injection{
			// None: an instance's spec.injection names who may use it.
			DefaultAllowedNamespaces: []string{},
			// The same release's Alpine variant: it has /bin/sh, and a
			// node that runs the proxy already has most of its layers.
			PgpassWriterImage: ProxyImageRepository + ":" + ProxyVersion + "-alpine",
			// A few a minute: a new proxy image restarts every opted-in
			// workload of the cluster, and should not take all at once.
			RolloutsPerMinute: 5,
		},
		// A namespaced ProviderConfig's endpoint receives its key and the
		// provider's requests, answers into the provider's messages and is
		// given to its namespace's proxies: by default only Google's.
		Tenancy: Tenancy{NamespacedEndpoints: []string{}},
	}
}

// Warnings are what a valid configuration allows that a shared cluster should
// not, one message each: the provider logs them at start.
func (c Config) Warnings() []string {
	var w []string
	if slices.Contains(c.Injection.DefaultAllowedNamespaces, "*") {
		w = append(w, `[injection] default_allowed_namespaces is ["*"]: pods of every namespace may request every cluster-scoped `+
			`PostgresqlInstance without spec.injection, and receive its postgres password; set it to [] (or to the namespaces `+
			`that may) and give each instance spec.injection.allowedNamespaces or spec.injection.namespaceSelector`)
	}
	if c.Credentials.AllowExternalAccountSources {
		w = append(w, `[credentials] allow_external_account_sources is true: an external_account key of a cluster-scoped ProviderConfig or `+
			`ClusterProviderConfig makes the provider read the file, URL, program or cloud metadata it names (its own Kubernetes token, `+
			`the metadata server) and send it to the key's token_url, so whoever can write such a key Secret can take the provider's `+
			`identity; set it to false unless every such Secret lives in a namespace only the platform team writes`)
	}
	if c.Credentials.AllowKeyTokenURI {
		w = append(w, `[credentials] allow_key_token_uri is true: a service-account key of a cluster-scoped ProviderConfig or `+
			`ClusterProviderConfig sends signed assertions to the token_uri it holds, and the answers show in conditions, so whoever `+
			`can write such a key Secret can make the provider call and read internal URLs; set it to false (Google's token endpoint) `+
			`unless every such Secret lives in a namespace only the platform team writes`)
	}
	if slices.Contains(c.Tenancy.NamespacedEndpoints, "*") {
		w = append(w, `[tenancy] namespaced_endpoints contains "*": a namespaced ProviderConfig may name any URL as its endpoint, so `+
			`a namespace's team can make the provider (and its namespace's proxies) call internal URLs and read up to 1 KiB of their `+
			`answers in conditions; set it to the Cloud SQL Admin API endpoints that tenants may use, or [] for Google's only`)
	}
	return w
}

// Load reads the file at path over the defaults. An empty path means defaults only.
func Load(path string) (Config, error) {
	c := Defaults()
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return c, errors.Wrap(err, errReadFile)
	}
	c, err = Parse(string(data))
	if err != nil {
		return c, errors.Wrapf(err, errConfigFile, path)
	}
	return c, nil
}

// Parse reads TOML text over the defaults and validates the result.
func Parse(text string) (Config, error) {
	c := Defaults()
	md, err := toml.Decode(text, &c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return c, errors.New(positioned(pe))
		}
		return c, err
	}
	// The TOML library matches keys to settings without regard to case, but
	// TOML keys are case-sensitive: Poll_Interval is not poll_interval, and two
	// keys that differ only in case must not fill one setting.
	for _, k := range md.Keys() {
		if s := k.String(); s != strings.ToLower(s) {
			return c, errors.Errorf(errUppercaseKey, s)
		}
	}
	if u := md.Undecoded(); len(u) > 0 {
		keys := make([]string, 0, len(u))
		for _, k := range u {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		return c, errors.Errorf(errUnknownKeys, strings.Join(keys, ", "))
	}
	return c, c.Validate()
}

// positioned is the parse error with the source line it is on. The TOML
// library's ErrorWithPosition panics on some inputs (a file that ends inside a
// string, a carriage return in one); its one-line form says where then.
func positioned(pe toml.ParseError) (msg string) {
	defer func() {
		if recover() != nil {
			msg = fmt.Sprintf("toml: after key %s: %s", pe.LastKey, pe.Message)
			if pe.Position.Line > 0 {
				msg = fmt.Sprintf("toml: line %d, after key %s: %s", pe.Position.Line, pe.LastKey, pe.Message)
			}
		}
	}()
	return pe.ErrorWithPosition()
}

var (
	// namespaceRE is a Kubernetes namespace name (an RFC 1123 label).
	namespaceRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	// imageRE is an image reference: [host[:port]/]path[:tag][@digest], in
	// the characters the API server accepts, without spaces.
	imageRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*(:[0-9]+)?(/[a-z0-9]+([._-]+[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@[a-z0-9]+:[a-f0-9]{32,})?$`)
)

// endpointURL reports whether s is a base URL that a ProviderConfig's
// spec.endpoint can be: http or https, a host, nothing after the path.
func endpointURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.User == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && !strings.ContainsAny(s, " \t\n")
}

// Validate checks every value, naming the first key that is wrong.
func (c Config) Validate() error {
	var msgs []string
	bad := func(key, format string, a ...any) {
		msgs = append(msgs, key+": "+fmt.Sprintf(format, a...))
	}
	if c.Reconcile.PollInterval.Duration < 10*time.Second {
		bad("reconcile.poll_interval", "must be at least 10s, got %s", c.Reconcile.PollInterval)
	}
	if c.Reconcile.BusyPollInterval.Duration < time.Second || c.Reconcile.BusyPollInterval.Duration > c.Reconcile.PollInterval.Duration {
		bad("reconcile.busy_poll_interval", "must be at least 1s and at most reconcile.poll_interval (%s), got %s", c.Reconcile.PollInterval, c.Reconcile.BusyPollInterval)
	}
	if c.Reconcile.BackupHealthInterval.Duration < time.Minute {
		bad("reconcile.backup_health_interval", "must be at least 1m (each read is one or two Cloud SQL requests per instance), got %s", c.Reconcile.BackupHealthInterval)
	}
	if c.Reconcile.MaxReconcileRate < 1 {
		bad("reconcile.max_reconcile_rate", "must be at least 1, got %d", c.Reconcile.MaxReconcileRate)
	}
	if s := c.Reconcile.ObjectShare; !(s >= budget.MinObjectShare && s <= maxObjectShare) {
		bad("reconcile.object_share", "must be at least %g and at most %g (the most of cloudsql.requests_per_minute and of reconcile.max_reconcile_rate that databases, users and backups may take; the rest is the instances' and the writes'), got %g",
			budget.MinObjectShare, maxObjectShare, s)
	}
	if c.Reconcile.Timeout.Duration < 10*time.Second {
		bad("reconcile.timeout", "must be at least 10s, got %s", c.Reconcile.Timeout)
	}
	if c.Reconcile.Observe != ObserveList && c.Reconcile.Observe != ObserveGet {
		bad("reconcile.observe", "must be %q (one instances.list per 500 instances, shared) or %q (one instances.get per instance), got %q", ObserveList, ObserveGet, c.Reconcile.Observe)
	}
	if c.CloudSQL.RequestsPerMinute < 1 {
		bad("cloudsql.requests_per_minute", "must be at least 1, got %d", c.CloudSQL.RequestsPerMinute)
	}
	if s := c.CloudSQL.NamespaceShare; !(s > 0 && s <= 1) {
		bad("cloudsql.namespace_share", "must be above 0 and at most 1 (a share of requests_per_minute; 1: no bound but the budget), got %g", s)
	}
	if s := c.CloudSQL.AllNamespacesShare; !(s >= c.CloudSQL.NamespaceShare && s <= 1) {
		bad("cloudsql.all_namespaces_share", "must be at least cloudsql.namespace_share (%g) and at most 1, got %g", c.CloudSQL.NamespaceShare, s)
	}
	if c.Webhook.Port < 1 || c.Webhook.Port > 65535 {
		bad("webhook.port", "must be a TCP port between 1 and 65535, got %d", c.Webhook.Port)
	}
	if t := c.Webhook.CloudSQLTimeout.Duration; t < time.Second || t > 8*time.Second {
		bad("webhook.cloudsql_timeout", "must be between 1s and 8s (the API server waits 10s for the webhook), got %s", c.Webhook.CloudSQLTimeout)
	}
	if r := c.Injection.RolloutsPerMinute; r < 0 || r > 600 {
		bad("injection.rollouts_per_minute", "must be between 0 (no rollouts) and 600, got %d", r)
	}
	if !imageRE.MatchString(c.Injection.PgpassWriterImage) {
		bad("injection.pgpass_writer_image", "must name an image with /bin/sh, sleep and mv, for example %s, got %q", Defaults().Injection.PgpassWriterImage, c.Injection.PgpassWriterImage)
	}
	if !imageRE.MatchString(c.Proxy.Image) {
		bad("proxy.image", "must name the Cloud SQL Auth Proxy v2 image, for example %s, got %q", Defaults().Proxy.Image, c.Proxy.Image)
	}
	switch c.Proxy.SidecarMode {
	case SidecarAuto, SidecarNative, SidecarClassic:
	default:
		bad("proxy.sidecar_mode", "must be %s, %s or %s, got %q", SidecarAuto, SidecarNative, SidecarClassic, c.Proxy.SidecarMode)
	}
	for key, q := range map[string]string{"proxy.cpu_request": c.Proxy.CPURequest, "proxy.memory_request": c.Proxy.MemoryRequest, "proxy.memory_limit": c.Proxy.MemoryLimit} {
		if q == "" && key == "proxy.memory_limit" {
			continue
		}
		qty, err := resource.ParseQuantity(q)
		switch {
		case err != nil:
			bad(key, "%q is not a Kubernetes quantity: write it like 50m or 64Mi", q)
		case qty.Sign() < 0:
			bad(key, "%q is negative: the API server refuses negative requests and limits", q)
		}
	}
	for key, q := range map[string]string{"proxy.max_cpu_request": c.Proxy.MaxCPURequest, "proxy.max_cpu_limit": c.Proxy.MaxCPULimit,
		"proxy.max_memory_request": c.Proxy.MaxMemoryRequest, "proxy.max_memory_limit": c.Proxy.MaxMemoryLimit} {
		if q == "" {
			continue
		}
		qty, err := resource.ParseQuantity(q)
		switch {
		case err != nil:
			bad(key, "%q is not a Kubernetes quantity: write it like 500m or 256Mi, or leave it empty to cap nothing", q)
		case qty.Sign() <= 0:
			bad(key, "%q is not above 0: no pod could ask for anything; leave it empty to cap nothing", q)
		}
	}
	if d := c.Proxy.MaxSigtermDelay.Duration; d < 0 || d > time.Hour {
		bad("proxy.max_sigterm_delay", "must be between 0s (pods may ask for no SIGTERM delay) and 1h, got %s", c.Proxy.MaxSigtermDelay)
	}
	if c.Proxy.MaxConnections < 0 {
		bad("proxy.max_connections", "must be 0 (no cap) or more, got %d", c.Proxy.MaxConnections)
	}
	for _, t := range c.Proxy.IPTypes {
		if t != "public" && t != "private" && t != "psc" {
			bad("proxy.ip_types", "%q is none of public, private, psc", t)
		}
	}
	if c.Proxy.MemoryLimit != "" {
		req, rerr := resource.ParseQuantity(c.Proxy.MemoryRequest)
		limit, lerr := resource.ParseQuantity(c.Proxy.MemoryLimit)
		if rerr == nil && lerr == nil && limit.Cmp(req) < 0 {
			bad("proxy.memory_limit", "%s is below proxy.memory_request (%s): the API server would refuse every injected pod", c.Proxy.MemoryLimit, c.Proxy.MemoryRequest)
		}
	}
	for _, ns := range c.Injection.DefaultAllowedNamespaces {
		if ns != "*" && !namespaceRE.MatchString(ns) {
			bad("injection.default_allowed_namespaces", "%q is neither a namespace name nor \"*\"", ns)
		}
	}
	if len(c.Injection.DefaultAllowedNamespaces) > 1 && slices.Contains(c.Injection.DefaultAllowedNamespaces, "*") {
		bad("injection.default_allowed_namespaces", "'*' allows every namespace and must stand alone, got %q", c.Injection.DefaultAllowedNamespaces)
	}
	for _, e := range c.Tenancy.NamespacedEndpoints {
		if e != "*" && !endpointURL(e) {
			bad("tenancy.namespaced_endpoints", "%q is neither an http or https base URL without query, fragment or user (for example https://sqladmin.example.com/) nor \"*\"", e)
		}
	}
	if len(c.Tenancy.NamespacedEndpoints) > 1 && slices.Contains(c.Tenancy.NamespacedEndpoints, "*") {
		bad("tenancy.namespaced_endpoints", "'*' allows every endpoint and must stand alone, got %q", c.Tenancy.NamespacedEndpoints)
	}
	if len(msgs) == 0 {
		return nil
	}
	// One line each, as the standard library's errors.Join writes them
	// (crossplane-runtime's Join would write [a, b] on one line).
	sort.Strings(msgs)
	return errors.New(strings.Join(msgs, "\n"))
}
