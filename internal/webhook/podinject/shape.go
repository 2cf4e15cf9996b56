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

package podinject

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
)

// DefaultMaxSigtermDelay is how long a proxy whose pod does not ask otherwise
// waits for open connections to close after SIGTERM.
const DefaultMaxSigtermDelay = 10 * time.Second

// fileSource names the provider's configuration file in messages.
const fileSource = "of the provider's configuration file"

// A bound is one cap on what pods may ask of their proxy, and where it was
// set, for messages.
type bound[T any] struct {
	max  T
	set  bool
	from string
}

// Limits are the caps on what a pod may ask of its proxy with the proxy-*
// annotations: the configuration file's, narrowed by the instance's provider
// configuration (Narrow).
type Limits struct {
	cpuRequest, cpuLimit, memoryRequest, memoryLimit bound[resource.Quantity]
	sigtermDelay                                     bound[time.Duration]
	maxConnections                                   bound[int64]
	// ipTypes are the allowed proxy-ip-type values; set is always true once
	// built by LimitsFrom.
	ipTypes bound[[]string]
}

// LimitsFrom are the caps of the configuration file's [proxy] table, which
// configfile.Validate has checked.
func LimitsFrom(p configfile.Proxy) (Limits, error) {
	var l Limits
	for _, q := range []struct {
		key, value string
		into       *bound[resource.Quantity]
	}{
		{"proxy.max_cpu_request", p.MaxCPURequest, &l.cpuRequest},
		{"proxy.max_cpu_limit", p.MaxCPULimit, &l.cpuLimit},
		{"proxy.max_memory_request", p.MaxMemoryRequest, &l.memoryRequest},
		{"proxy.max_memory_limit", p.MaxMemoryLimit, &l.memoryLimit},
	} {
		if q.value == "" {
			continue
		}
		v, err := resource.ParseQuantity(q.value)
		if err != nil {
			return Limits{}, errors.Errorf(errQuantity, q.key, q.value)
		}
		*q.into = bound[resource.Quantity]{max: v, set: true, from: q.key + " " + fileSource}
	}
	// Always a cap (configfile keeps it within an hour): 0s allows no
	// delay, and no sum of delays can overflow the grace period.
	l.sigtermDelay = bound[time.Duration]{max: p.MaxSigtermDelay.Duration, set: true, from: "proxy.max_sigterm_delay " + fileSource}
	if p.MaxConnections > 0 {
		l.maxConnections = bound[int64]{max: int64(p.MaxConnections), set: true, from: "proxy.max_connections " + fileSource}
	}
	l.ipTypes = bound[[]string]{max: slices.Clone(p.IPTypes), set: true, from: "proxy.ip_types " + fileSource}
	return l, nil
}

// Narrow are l, narrowed by a provider configuration's spec.proxyLimits (pl
// may be nil); config names the configuration in messages. A limit of the
// configuration that is wider than l's is ignored: the platform's caps hold.
func (l Limits) Narrow(pl *v1alpha1.ProxyLimits, config string) Limits {
	if pl == nil {
		return l
	}
	from := func(field string) string { return "spec.proxyLimits." + field + " of " + config }
	quantity := func(b *bound[resource.Quantity], q *resource.Quantity, field string) {
		if q != nil && (!b.set || q.Cmp(b.max) < 0) {
			*b = bound[resource.Quantity]{max: q.DeepCopy(), set: true, from: from(field)}
		}
	}
	quantity(&l.cpuRequest, pl.MaxCPURequest, "maxCPURequest")
	quantity(&l.cpuLimit, pl.MaxCPULimit, "maxCPULimit")
	quantity(&l.memoryRequest, pl.MaxMemoryRequest, "maxMemoryRequest")
	quantity(&l.memoryLimit, pl.MaxMemoryLimit, "maxMemoryLimit")
	if d := pl.MaxSigtermDelay; d != nil && d.Duration >= 0 && (!l.sigtermDelay.set || d.Duration < l.sigtermDelay.max) {
		l.sigtermDelay = bound[time.Duration]{max: d.Duration, set: true, from: from("maxSigtermDelay")}
	}
	if n := pl.MaxConnections; n != nil && *n > 0 && (!l.maxConnections.set || *n < l.maxConnections.max) {
		l.maxConnections = bound[int64]{max: *n, set: true, from: from("maxConnections")}
	}
	if pl.IPTypes != nil {
		var both []string
		for _, t := range pl.IPTypes {
			if !l.ipTypes.set || slices.Contains(l.ipTypes.max, t) {
				both = append(both, t)
			}
		}
		l.ipTypes = bound[[]string]{max: both, set: true, from: from("ipTypes") + " (within " + l.ipTypes.from + ")"}
	}
	return l
}

// Paths are the ways to an instance that it offers, as its status shows them.
type Paths struct {
	Public, Private, PSC bool
}

// A Shape is what a pod's annotations ask of its proxy. The zero Shape is the
// proxy every pod gets.
type Shape struct {
	// Resources replace the configuration file's requests and limits; nil
	// keeps them.
	Resources *corev1.ResourceRequirements
	// MinSigtermDelay is --min-sigterm-delay; 0 sets no flag.
	MinSigtermDelay time.Duration
	// MaxSigtermDelay is --max-sigterm-delay; nil is DefaultMaxSigtermDelay.
	MaxSigtermDelay *time.Duration
	// MaxConnections is --max-connections; 0 sets no flag.
	MaxConnections int64
	// LazyRefresh is --lazy-refresh.
	LazyRefresh bool
	// UnixSocket makes the proxy listen on a Unix socket in SocketDir.
	UnixSocket bool
	// IPType is public, private or psc; empty takes the public IP, or the
	// private one of an instance without a public IP.
	IPType string
	// Prometheus is --prometheus, on the health-check port.
	Prometheus bool
	// Quit is --quitquitquit, with CSQL_PROXY_QUIT_URLS for the application.
	Quit bool
	// DatabaseURL gives the application DATABASE_URL.
	DatabaseURL bool
}

// shapeAnnotations are the annotations ParseShape reads, in the order its
// messages and the documentation list them.
var shapeAnnotations = []string{
	v1alpha1.AnnotationProxyCPURequest, v1alpha1.AnnotationProxyCPULimit,
	v1alpha1.AnnotationProxyMemoryRequest, v1alpha1.AnnotationProxyMemoryLimit,
	v1alpha1.AnnotationProxyMinSigtermDelay, v1alpha1.AnnotationProxyMaxSigtermDelay,
	v1alpha1.AnnotationProxyMaxConnections, v1alpha1.AnnotationProxyLazyRefresh,
	v1alpha1.AnnotationProxyUnixSocket, v1alpha1.AnnotationProxyIPType,
	v1alpha1.AnnotationProxyPrometheus, v1alpha1.AnnotationProxyQuitEndpoint,
	v1alpha1.AnnotationDatabaseURL,
}

// otherProxyAnnotations are the other annotations of the group that start
// with proxy- and that a pod may carry: every other proxy-* annotation is a
// typo, which ParseShape denies rather than ignores.
var otherProxyAnnotations = []string{
	v1alpha1.AnnotationProxyInjected, v1alpha1.AnnotationProxyCredentialsSecret, AnnotationProxyConfig,
	v1alpha1.AnnotationProxyRollout,
}

// Messages of ParseShape. Each completes "pod <ns>/<name>: ", names the
// annotation and says what to write.
const (
	errShapeUnknown    = "annotation %s is not one the injector knows: the proxy's annotations are %s; fix its name or remove it"
	errShapeQuantity   = "annotation %s is %q, which is not a Kubernetes quantity above 0: write it like 100m or 128Mi"
	errShapeAboveCap   = "annotation %s is %s, above the cap of %v (%s): ask for at most %v, or ask the platform's administrators to raise the cap"
	errShapeRequest    = "annotation %s asks for a %s request of %s, above the proxy's %s limit of %s%s: the API server would refuse the pod; set %s to at least %s too, or ask for less"
	errShapeLimit      = "annotation %s is %s, below the proxy's %s request of %s (proxy.%s_request of the provider's configuration file): the API server would refuse the pod; set %s to at most %s too, or raise the limit"
	errShapeDuration   = "annotation %s is %q, which is not a duration of 0s or more: write it like 30s or 2m"
	errShapeCount      = "annotation %s is %q, which is not a whole number of 1 or more"
	errShapeBool       = "annotation %s is %q: write \"true\" or \"false\""
	errShapeIPType     = "annotation %s is %q: write public, private or psc"
	errShapeIPNotAllow = "annotation %s is %s, which %s does not allow (it allows %s): use one of those, or remove the annotation"
	errShapeNoPath     = "annotation %s is %s, but the instance has no %s (%s): use a path it has, or give the instance one"
)

// ParseShape reads what the annotations ask of the proxy, within l and the
// paths p of the instance; base are the configuration file's requests and
// limits. Every annotation that asks for too much, or is malformed, is named
// in the error, with its cap.
func ParseShape(annotations map[string]string, base corev1.ResourceRequirements, l Limits, p Paths) (Shape, error) {
	var s Shape
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	for k := range annotations {
		rest, ok := strings.CutPrefix(k, v1alpha1.Group+"/proxy-")
		if ok && rest != "" && !slices.Contains(shapeAnnotations, k) && !slices.Contains(otherProxyAnnotations, k) {
			bad(errShapeUnknown, k, strings.Join(shapeAnnotations, ", "))
		}
	}
	slices.Sort(problems)

	var res *corev1.ResourceRequirements
	for _, r := range []struct {
		key   string
		name  corev1.ResourceName
		limit bool
		cap   bound[resource.Quantity]
	}{
		{v1alpha1.AnnotationProxyCPURequest, corev1.ResourceCPU, false, l.cpuRequest},
		{v1alpha1.AnnotationProxyCPULimit, corev1.ResourceCPU, true, l.cpuLimit},
		{v1alpha1.AnnotationProxyMemoryRequest, corev1.ResourceMemory, false, l.memoryRequest},
		{v1alpha1.AnnotationProxyMemoryLimit, corev1.ResourceMemory, true, l.memoryLimit},
	} {
		v, ok := annotations[r.key]
		if !ok {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() <= 0 {
			bad(errShapeQuantity, r.key, v)
			continue
		}
		if r.cap.set && q.Cmp(r.cap.max) > 0 {
			bad(errShapeAboveCap, r.key, v, r.cap.max.String(), r.cap.from, r.cap.max.String())
			continue
		}
		if res == nil {
			res = base.DeepCopy()
		}
		into := &res.Requests
		if r.limit {
			into = &res.Limits
		}
		if *into == nil {
			*into = corev1.ResourceList{}
		}
		(*into)[r.name] = q
	}
	if res != nil {
		for _, r := range []struct {
			name              corev1.ResourceName
			request, limitKey string
		}{
			{corev1.ResourceCPU, v1alpha1.AnnotationProxyCPURequest, v1alpha1.AnnotationProxyCPULimit},
			{corev1.ResourceMemory, v1alpha1.AnnotationProxyMemoryRequest, v1alpha1.AnnotationProxyMemoryLimit},
		} {
			req, hasReq := res.Requests[r.name]
			limit, hasLimit := res.Limits[r.name]
			if !hasReq || !hasLimit || req.Cmp(limit) <= 0 {
				continue
			}
			_, askedRequest := annotations[r.request]
			_, askedLimit := annotations[r.limitKey]
			switch {
			case !askedRequest:
				// The request is the configuration file's.
				bad(errShapeLimit, r.limitKey, limit.String(), r.name, req.String(), r.name, r.request, limit.String())
			case !askedLimit:
				bad(errShapeRequest, r.request, r.name, req.String(), r.name, limit.String(),
					" (proxy."+string(r.name)+"_limit of the provider's configuration file)", r.limitKey, req.String())
			default:
				bad(errShapeRequest, r.request, r.name, req.String(), r.name, limit.String(), "", r.limitKey, req.String())
			}
		}
		s.Resources = res
	}

	delay := func(key string) (time.Duration, bool) {
		v, ok := annotations[key]
		if !ok {
			return 0, false
		}
		d, err := time.ParseDuration(v)
		switch {
		case err != nil || d < 0:
			bad(errShapeDuration, key, v)
			return 0, false
		case l.sigtermDelay.set && d > l.sigtermDelay.max:
			bad(errShapeAboveCap, key, v, l.sigtermDelay.max, l.sigtermDelay.from, l.sigtermDelay.max)
			return 0, false
		}
		return d, true
	}
	if d, ok := delay(v1alpha1.AnnotationProxyMinSigtermDelay); ok {
		s.MinSigtermDelay = d
	}
	if d, ok := delay(v1alpha1.AnnotationProxyMaxSigtermDelay); ok {
		s.MaxSigtermDelay = &d
	} else if _, asked := annotations[v1alpha1.AnnotationProxyMaxSigtermDelay]; !asked && l.sigtermDelay.set && l.sigtermDelay.max < DefaultMaxSigtermDelay {
		// A cap below the default binds the pods that do not ask too.
		s.MaxSigtermDelay = ptr.To(l.sigtermDelay.max)
	}

	if l.maxConnections.set {
		s.MaxConnections = l.maxConnections.max
	}
	if v, ok := annotations[v1alpha1.AnnotationProxyMaxConnections]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil || n < 1:
			bad(errShapeCount, v1alpha1.AnnotationProxyMaxConnections, v)
		case l.maxConnections.set && n > l.maxConnections.max:
			bad(errShapeAboveCap, v1alpha1.AnnotationProxyMaxConnections, v, l.maxConnections.max, l.maxConnections.from, l.maxConnections.max)
		default:
			s.MaxConnections = n
		}
	}

	for _, b := range []struct {
		key  string
		into *bool
	}{
		{v1alpha1.AnnotationProxyLazyRefresh, &s.LazyRefresh},
		{v1alpha1.AnnotationProxyUnixSocket, &s.UnixSocket},
		{v1alpha1.AnnotationProxyPrometheus, &s.Prometheus},
		{v1alpha1.AnnotationProxyQuitEndpoint, &s.Quit},
		{v1alpha1.AnnotationDatabaseURL, &s.DatabaseURL},
	} {
		switch v, ok := annotations[b.key]; {
		case !ok, v == "false":
		case v == "true":
			*b.into = true
		default:
			bad(errShapeBool, b.key, v)
		}
	}

	if v, ok := annotations[v1alpha1.AnnotationProxyIPType]; ok {
		has := map[string]struct {
			ok        bool
			what, why string
		}{
			v1alpha1.ProxyIPTypePublic:  {p.Public, "public IP", "status.atProvider.publicIp is empty"},
			v1alpha1.ProxyIPTypePrivate: {p.Private, "private IP", "status.atProvider.privateIp is empty"},
			v1alpha1.ProxyIPTypePSC:     {p.PSC, "Private Service Connect", "status.atProvider.pscEnabled is not true"},
		}
		path, known := has[v]
		switch {
		case !known:
			bad(errShapeIPType, v1alpha1.AnnotationProxyIPType, v)
		case l.ipTypes.set && !slices.Contains(l.ipTypes.max, v):
			allowed := "none"
			if len(l.ipTypes.max) > 0 {
				allowed = strings.Join(l.ipTypes.max, ", ")
			}
			bad(errShapeIPNotAllow, v1alpha1.AnnotationProxyIPType, v, l.ipTypes.from, allowed)
		case !path.ok:
			bad(errShapeNoPath, v1alpha1.AnnotationProxyIPType, v, path.what, path.why)
		default:
			s.IPType = v
		}
	}

	if len(problems) > 0 {
		return Shape{}, errors.New(strings.Join(problems, "; "))
	}
	return s, nil
}

// gracePeriod is the time the proxy's SIGTERM delays need: their sum, in
// whole seconds, rounded up. 0 when they are no longer than every proxy's
// (no minimum, DefaultMaxSigtermDelay at most): the pod's grace period then
// stays as it always was.
func (s Shape) gracePeriod() int64 {
	if s.MinSigtermDelay == 0 && s.maxSigtermDelay() <= DefaultMaxSigtermDelay {
		return 0
	}
	return int64(math.Ceil((s.MinSigtermDelay + s.maxSigtermDelay()).Seconds()))
}

func (s Shape) maxSigtermDelay() time.Duration {
	if s.MaxSigtermDelay == nil {
		return DefaultMaxSigtermDelay
	}
	return *s.MaxSigtermDelay
}

// String is the shape as the proxy-config annotation records it: the choices
// that differ from the zero Shape, in a fixed order; empty for the zero Shape.
func (s Shape) String() string {
	var parts []string
	if r := s.Resources; r != nil {
		for _, q := range []struct {
			name string
			list corev1.ResourceList
			res  corev1.ResourceName
		}{
			{"cpu-request", r.Requests, corev1.ResourceCPU}, {"cpu-limit", r.Limits, corev1.ResourceCPU},
			{"memory-request", r.Requests, corev1.ResourceMemory}, {"memory-limit", r.Limits, corev1.ResourceMemory},
		} {
			if v, ok := q.list[q.res]; ok {
				parts = append(parts, q.name+"="+v.String())
			}
		}
	}
	if s.MinSigtermDelay > 0 {
		parts = append(parts, "min-sigterm-delay="+s.MinSigtermDelay.String())
	}
	if s.MaxSigtermDelay != nil {
		parts = append(parts, "max-sigterm-delay="+s.MaxSigtermDelay.String())
	}
	if s.MaxConnections > 0 {
		parts = append(parts, "max-connections="+strconv.FormatInt(s.MaxConnections, 10))
	}
	for _, f := range []struct {
		name string
		on   bool
	}{{"lazy-refresh", s.LazyRefresh}, {"unix-socket", s.UnixSocket}, {"prometheus", s.Prometheus}, {"quit-endpoint", s.Quit}, {"database-url", s.DatabaseURL}} {
		if f.on {
			parts = append(parts, f.name)
		}
	}
	if s.IPType != "" {
		parts = append(parts, "ip-type="+s.IPType)
	}
	return strings.Join(parts, ",")
}
