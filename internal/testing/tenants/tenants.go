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

// Package tenants describes applications that share one PostgresqlInstance,
// each with a PostgresqlUser and a PostgresqlDatabase of its own, and what
// each of them may and may not do with psql: use its own database, but not
// connect to another's, read another's table, take another's role, or create
// roles or databases. The end-to-end tests (make e2e, with the pods run as
// local processes, and make node-e2e, on a real kubelet) run the same
// applications and the same checks. It is test tooling, not part of the
// provider.
package tenants

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

const errListSecrets = "cannot list the secrets of namespace %s"

// An App is an application with a login and a database of its own on a
// shared, cluster-scoped PostgresqlInstance.
type App struct {
	// Namespace is where its pods run.
	Namespace string
	// User is the metadata.name of its PostgresqlUser, which its pods name
	// with the annotation cloudsql.travelaudience.com/postgresqluser-name.
	User string
	// Login is the user's spec.forProvider.name: its role in PostgreSQL.
	Login string
	// Database is the metadata.name of its PostgresqlDatabase and the name of
	// the database.
	Database string
	// Cluster makes its user and database cluster-scoped, the user lent to
	// Namespace alone (spec.forProvider.injection.allowedNamespaces), its
	// secret in SecretNamespace; otherwise both are namespaced, in Namespace,
	// and name the instance with clusterInstanceRef.
	Cluster bool
}

// Apps are the applications the end-to-end tests run on one shared
// instance: two with namespaced users and databases (clusterInstanceRef), one
// with a cluster-scoped user lent to its namespace alone and a
// cluster-scoped database.
var Apps = []App{
	{Namespace: "shop", User: "shop-api", Login: "shop_api", Database: "shop"},
	{Namespace: "billing", User: "billing-api", Login: "billing_api", Database: "billing"},
	{Namespace: "reports", User: "reports-app", Login: "reports_app", Database: "reports", Cluster: true},
}

// Others are the applications of apps other than a.
func (a App) Others(apps []App) []App {
	var others []App
	for _, o := range apps {
		if o.User != a.User {
			others = append(others, o)
		}
	}
	return others
}

// SecretNamespace holds the connection secrets of cluster-scoped users.
const SecretNamespace = "crossplane-system"

// Table is the table the application creates in its database.
func (a App) Table() string { return a.Login + "_orders" }

// SecretName is the name of the user's connection secret.
func (a App) SecretName() string { return a.User + "-login" }

// Objects are the application's PostgresqlUser and PostgresqlDatabase on the
// cluster-scoped PostgresqlInstance instance, user first. Deleting the
// database is allowed (cloudsql.travelaudience.com/allow-deletion).
func (a App) Objects(instance string) []client.Object {
	allow := map[string]string{v1alpha1.AnnotationAllowDeletion: "true"}
	if a.Cluster {
		u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: a.User}}
		u.Spec.ForProvider.InstanceRef = &xpv2.Reference{Name: instance}
		u.Spec.ForProvider.Name = ptr.To(a.Login)
		u.Spec.ForProvider.Injection = &v1alpha1.UserInjection{AllowedNamespaces: []string{a.Namespace}}
		u.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: SecretNamespace, Name: a.SecretName()}
		d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: a.Database, Annotations: allow}}
		d.Spec.ForProvider.InstanceRef = &xpv2.Reference{Name: instance}
		d.Spec.ForProvider.OwnerRef = &xpv2.Reference{Name: a.User}
		return []client.Object{u, d}
	}
	u := &nsv1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.User}}
	u.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: instance}
	u.Spec.ForProvider.Name = ptr.To(a.Login)
	u.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: a.SecretName()}
	d := &nsv1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.Database, Annotations: allow}}
	d.Spec.ForProvider.ClusterInstanceRef = &xpv2.Reference{Name: instance}
	d.Spec.ForProvider.OwnerRef = &xpv2.NamespacedReference{Name: a.User}
	return []client.Object{u, d}
}

// Namespaces are the namespaces the applications' pods run in, sorted.
func Namespaces(apps []App) []string {
	var ns []string
	for _, a := range apps {
		ns = append(ns, a.Namespace)
	}
	sort.Strings(ns)
	return ns
}

// PodAnnotations make a pod connect as the application's login.
func (a App) PodAnnotations() map[string]string {
	return map[string]string{v1alpha1.AnnotationUserName: a.User}
}

// PsqlFlags make psql print bare rows, stop at the first error and read no
// psqlrc; the injected environment says where, as whom and to which database
// it connects.
var PsqlFlags = []string{"--no-psqlrc", "--tuples-only", "--no-align", "--set", "ON_ERROR_STOP=1"}

// Use is what psql runs, with PsqlFlags and the injected environment, to use
// the application's own database: it creates the table, inserts a row and
// prints who and where it is and how many rows the table has.
func (a App) Use() []string {
	return []string{"--command", fmt.Sprintf(
		"CREATE TABLE IF NOT EXISTS %[1]s (id serial PRIMARY KEY, item text NOT NULL); "+
			"INSERT INTO %[1]s (item) VALUES ('written by %[2]s'); "+
			"SELECT current_user || ' ' || current_database() || ' ' || count(*) FROM %[1]s", a.Table(), a.Login)}
}

// Used is the first line Use prints: the login and its database.
func (a App) Used() string { return a.Login + " " + a.Database + " " }

// A Refusal is something an application's login must not be able to do:
// psql with Args (after PsqlFlags, in the injected environment) fails, and
// what it prints contains Want.
type Refusal struct {
	What string
	Args []string
	Want string
}

// Refusals are what a's login must be refused on an instance it shares with
// other: connecting to other's database, reading its table (which is not
// even reachable), taking its role, and creating roles and databases.
func (a App) Refusals(other App) []Refusal {
	return []Refusal{
		{
			What: "CONNECT to " + other.Database + ", the database of " + other.User,
			Args: []string{"--dbname", other.Database, "--command", "SELECT 1"},
			Want: fmt.Sprintf("permission denied for database %q", other.Database),
		},
		{
			What: "reading " + other.Table() + ", the table of " + other.User,
			Args: []string{"--dbname", other.Database, "--command", "SELECT * FROM " + other.Table()},
			Want: fmt.Sprintf("permission denied for database %q", other.Database),
		},
		{
			What: "SET ROLE " + other.Login,
			Args: []string{"--command", "SET ROLE " + other.Login},
			Want: fmt.Sprintf("permission denied to set role %q", other.Login),
		},
		{
			What: "CREATE ROLE",
			Args: []string{"--command", "CREATE ROLE " + a.Login + "_extra LOGIN"},
			Want: "permission denied to create role",
		},
		{
			What: "CREATE DATABASE",
			Args: []string{"--command", "CREATE DATABASE " + a.Login + "_extra"},
			Want: "permission denied to create database",
		},
	}
}

// Script is a shell script for a pod's container (sh and psql on its PATH)
// that runs psql as Use does, or, when others are given, expects every
// Refusal of a towards them and prints each with its error, marked by
// Marker. It exits non-zero when any psql that must fail succeeds.
func (a App) Script(others ...App) string {
	var b strings.Builder
	b.WriteString("set -u\n")
	psql := "psql " + strings.Join(quoteAll(PsqlFlags), " ") + " "
	if len(others) == 0 {
		b.WriteString("exec " + psql + strings.Join(quoteAll(a.Use()), " ") + "\n")
		return b.String()
	}
	for _, o := range others {
		for _, r := range a.Refusals(o) {
			fmt.Fprintf(&b, "if out=$(%s%s 2>&1); then echo %s; exit 1; fi\n",
				psql, strings.Join(quoteAll(r.Args), " "), shellQuote("ALLOWED: "+r.What+": "))
			fmt.Fprintf(&b, "echo %s\"$out\"\n", shellQuote(Marker+r.What+": "))
		}
	}
	return b.String()
}

// Marker starts each line of Script's output that reports a refusal.
const Marker = "refused: "

func quoteAll(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return q
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// SecretsHolding names the secrets of namespace ns that hold value, as
// namespace/name.
func SecretsHolding(ctx context.Context, c client.Reader, ns, value string) ([]string, error) {
	l := &corev1.SecretList{}
	if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
		return nil, errors.Wrapf(err, errListSecrets, ns)
	}
	var names []string
	for _, s := range l.Items {
		for _, v := range s.Data {
			if bytes.Contains(v, []byte(value)) {
				names = append(names, ns+"/"+s.Name)
				break
			}
		}
	}
	return names, nil
}

// A Phase is the Cloud SQL Admin API requests that one project received
// during a span of the emulator's time, by method.
type Phase struct {
	Name   string
	Took   time.Duration
	Counts map[string]int
}

// Count is the phase name: the requests of project in reqs (the emulator's
// request log) that arrived from from (inclusive) to to (exclusive).
func Count(name string, reqs []emulator.Request, project string, from, to time.Time) Phase {
	p := Phase{Name: name, Took: to.Sub(from), Counts: map[string]int{}}
	for _, r := range reqs {
		if r.Project == project && r.Method != "" && !r.Time.Before(from) && r.Time.Before(to) {
			p.Counts[r.Method]++
		}
	}
	return p
}

// Total is the number of requests of the phase.
func (p Phase) Total() int {
	n := 0
	for _, c := range p.Counts {
		n += c
	}
	return n
}

// String is the phase on one line: its name, how long it took, its total
// and per minute, and its requests by method, most first.
func (p Phase) String() string {
	methods := make([]string, 0, len(p.Counts))
	for m := range p.Counts {
		methods = append(methods, m)
	}
	sort.Slice(methods, func(i, j int) bool {
		if p.Counts[methods[i]] != p.Counts[methods[j]] {
			return p.Counts[methods[i]] > p.Counts[methods[j]]
		}
		return methods[i] < methods[j]
	})
	parts := make([]string, len(methods))
	for i, m := range methods {
		parts[i] = fmt.Sprintf("%s %d", m, p.Counts[m])
	}
	perMinute := 0.0
	if p.Took > 0 {
		perMinute = float64(p.Total()) / p.Took.Minutes()
	}
	return fmt.Sprintf("%-28s %5.1fs %4d requests (%5.1f/min): %s", p.Name, p.Took.Seconds(), p.Total(), perMinute, strings.Join(parts, ", "))
}
