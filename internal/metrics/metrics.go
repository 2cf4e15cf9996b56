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

// Package metrics holds the provider's own Prometheus metrics, served on /metrics
// beside controller-runtime's and crossplane-runtime's managed-resource metrics.
package metrics

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	// CloudSQLRequests counts every attempt at a Cloud SQL Admin API call, retries
	// included, by API method and outcome (the HTTP status, or "error" when there is
	// none), so that quota use and error storms show on a dashboard.
	CloudSQLRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "cloudsql_postgres",
		Name:      "cloudsql_requests_total",
		Help:      "Cloud SQL Admin API requests sent, retries included, by API method and HTTP status (error: no answer).",
	}, []string{"method", "code"})

	// PollInterval is the time between two reconciles of an unchanged instance
	// that the request budget and the reconcile rate allow for the fleet:
	// poll_interval, or longer when reconciling every instance that often would
	// not fit.
	PollInterval = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "cloudsql_postgres",
		Name:      "poll_interval_seconds",
		Help:      "Effective time between two reconciles of an unchanged instance: reconcile.poll_interval, or longer when the request budget or reconcile.max_reconcile_rate cannot afford reconciling the fleet that often. With reconcile.observe = list, listings observe every instance more often (listing_period_seconds).",
	})

	// ObjectPollInterval is the time between two observations of an
	// unchanged database, user or backup.
	ObjectPollInterval = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "cloudsql_postgres",
		Name:      "object_poll_interval_seconds",
		Help:      "Effective time between two observations of an unchanged PostgresqlDatabase, PostgresqlUser or PostgresqlBackup, and between two listings of one instance's databases (users): reconcile.poll_interval, or longer when the objects' share of the request budget and of reconcile.max_reconcile_rate (reconcile.object_share, less what the instances' polls take) cannot afford more.",
	})

	// ObjectShare is the share of the request budget that the objects may
	// use now.
	ObjectShare = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "cloudsql_postgres",
		Name:      "object_budget_share",
		Help:      "Share of cloudsql.requests_per_minute that the requests made for databases, users and backups may use now: what the instances' polls, their backup-health reads and the write reserve leave, at most reconcile.object_share.",
	})

	// ListPeriod is how often each watched project is listed (observe = list).
	ListPeriod = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "cloudsql_postgres",
		Name:      "listing_period_seconds",
		Help:      "How often each project with PostgresqlInstances is listed (reconcile.observe = list): half of reconcile.poll_interval, or longer when the request budget cannot afford more.",
	})

	// ObservationGap is the time between two reads of an instance from Cloud SQL.
	ObservationGap = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "cloudsql_postgres",
		Name:      "observation_gap_seconds",
		Help:      "Time between two successive reads of an instance from Cloud SQL (a listing of its project, or an instances.get): how late an out-of-band change can be noticed.",
		Buckets:   []float64{15, 30, 45, 60, 90, 120, 180, 300, 450, 600, 900, 1800, 3600, 7200},
	})

	// ObjectObservationGap is the time between two reads of a database's or
	// user's state from Cloud SQL: the listings of its instance that served
	// two successive observations of its object.
	ObjectObservationGap = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "cloudsql_postgres",
		Name:      "object_observation_gap_seconds",
		Help:      "Time between the reads from Cloud SQL (a databases.list or users.list of its instance, shared by the instance's objects) behind two successive observations of a PostgresqlDatabase or PostgresqlUser: how late an out-of-band change of a database or user can be noticed.",
		Buckets:   []float64{15, 30, 45, 60, 90, 120, 180, 300, 450, 600, 900, 1800, 3600, 7200},
	}, []string{"kind"})

	// ReconcileRateWait is how long a reconcile waited for the global rate
	// limiter (reconcile.max_reconcile_rate), and its kind's share of it,
	// before it started, by controller.
	ReconcileRateWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "cloudsql_postgres",
		Name:      "reconcile_rate_wait_seconds",
		Help:      "Time a reconcile waited for reconcile.max_reconcile_rate (and its kind's share of it) before it started, by controller: steadily above a few seconds, the controller is asked for more reconciles than the rate allows.",
		Buckets:   []float64{0, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300},
	}, []string{"controller"})

	// Observations counts the reconciles that observed an instance, by where the
	// observation came from.
	Observations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "cloudsql_postgres",
		Name:      "observations_total",
		Help:      "Reconciles that observed an instance, by source: listing (a shared instances.list of its project, no request of its own) or get (an instances.get).",
	}, []string{"source"})

	// FleetSize is how many PostgresqlInstances the provider observes.
	FleetSize = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "cloudsql_postgres",
		Name:      "observed_instances",
		Help:      "PostgresqlInstances the pacing of observations is computed for: those that exist, or those observed within the last intervals if more.",
	})

	// Injections counts pod admissions by namespace and outcome (injected,
	// denied, error).
	Injections = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "cloudsql_postgres",
		Name:      "pod_injections_total",
		Help:      "Pods that asked for a PostgresqlInstance, by namespace and outcome (injected, denied, error).",
	}, []string{"namespace", "outcome"})
)

// Outcomes of a pod admission.
const (
	OutcomeInjected = "injected"
	OutcomeDenied   = "denied"
	// OutcomeError is an admission that failed (the pod is refused, but not by
	// a rule: the API server or a lookup failed).
	OutcomeError = "error"
)

// Register adds the metrics to r.
func Register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{CloudSQLRequests, Injections, PollInterval, ObjectPollInterval, ObjectShare, ListPeriod, FleetSize, ObservationGap, ObjectObservationGap, Observations, ReconcileRateWait} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// ObserveCloudSQL records one attempt of a Cloud SQL call; it fits
// budget.WithObserver.
func ObserveCloudSQL(req *http.Request, code int, err error) {
	outcome := strconv.Itoa(code)
	if err != nil || code == 0 {
		outcome = "error"
	}
	CloudSQLRequests.WithLabelValues(Method(req.Method, req.URL.Path), outcome).Inc()
}

// Method names the Cloud SQL Admin API v1beta4 method of a request, such as
// "instances.get", or "other".
func Method(verb, path string) string {
	i := strings.Index(path, "/projects/")
	if i < 0 {
		return "other"
	}
	// projects/{project}/<rest...>
	parts := strings.Split(strings.Trim(path[i:], "/"), "/")
	if len(parts) < 3 {
		return "other"
	}
	rest := parts[2:]
	switch {
	case rest[0] == "operations" && len(rest) == 1:
		return "operations.list"
	case rest[0] == "operations" && len(rest) == 2:
		return "operations.get"
	case rest[0] != "instances":
		return "other"
	case len(rest) == 1:
		return byVerb(verb, "instances", map[string]string{http.MethodGet: "list", http.MethodPost: "insert"})
	case len(rest) == 2 && strings.HasSuffix(rest[1], ":generateEphemeralCert"):
		return "connect.generateEphemeral"
	case len(rest) == 2:
		return byVerb(verb, "instances", map[string]string{http.MethodGet: "get", http.MethodPatch: "patch", http.MethodPut: "update", http.MethodDelete: "delete"})
	case rest[2] == "connectSettings":
		return "connect.get"
	case rest[2] == "users" && len(rest) == 4:
		return "users.get"
	case rest[2] == "users":
		return byVerb(verb, "users", map[string]string{http.MethodGet: "list", http.MethodPost: "insert", http.MethodPut: "update", http.MethodDelete: "delete"})
	case rest[2] == "databases" && len(rest) == 3:
		return byVerb(verb, "databases", map[string]string{http.MethodGet: "list", http.MethodPost: "insert"})
	case rest[2] == "databases" && len(rest) == 4:
		return byVerb(verb, "databases", map[string]string{http.MethodGet: "get", http.MethodPatch: "patch", http.MethodPut: "update", http.MethodDelete: "delete"})
	}
	return "other"
}

func byVerb(verb, resource string, m map[string]string) string {
	if v, ok := m[verb]; ok {
		return resource + "." + v
	}
	return "other"
}
