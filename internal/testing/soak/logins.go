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

package soak

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

const (
	errNoPostgres = "the instances with users and databases need PostgreSQL's server (initdb, postgres): run `make postgres`, or soak without them"
	errSQLKey     = "cannot make the service-account key of the emulator with PostgreSQL"
)

const (
	// sqlConfig is the ProviderConfig of the emulator with PostgreSQL.
	sqlConfig = "sql"
	// sqlKeySecret holds its service-account key, whose token_uri is that
	// emulator's: the SQL connector's Admin API requests need a token it
	// accepts.
	sqlKeySecret = "sql-key"
	// loginSecretSuffix ends the names of the users' connection secrets.
	loginSecretSuffix = "-login"
	// postgresLogin and postgresDatabase are what every instance has,
	// which no object claims.
	postgresLogin    = cloudsql.RootUser
	postgresDatabase = "postgres"
)

// serveSQL starts the emulator whose instances each run a real PostgreSQL
// server (its data plane), with the faults of the other and failed
// operations on top, and returns its endpoint and how to stop it. Only the
// few instances that get users and databases live there: a server each is
// what a machine of two cores affords.
func (w *world) serveSQL() (string, func(), error) {
	cfg, err := postgres.Config{}.Resolve()
	if err != nil {
		return "", nil, errors.Wrap(err, errNoPostgres)
	}
	w.sqlEmu = emulator.New(emulator.WithPostgres(cfg), emulator.WithRequestBudget(w.o.Quota),
		emulator.WithDelays(3*time.Second, 2*time.Second, 2*time.Second))
	faults := []emulator.Fault{{ServerErrorShare: 0.2}, {RateLimitShare: 0.1}, {Method: emulator.MethodInstancesInsert, Latency: 2 * time.Second}}
	// A fifth of the changes to users and databases end in a failed
	// operation instead of taking effect.
	for _, m := range []string{emulator.MethodUsersInsert, emulator.MethodUsersUpdate, emulator.MethodUsersDelete,
		emulator.MethodDatabasesInsert, emulator.MethodDatabasesDelete} {
		faults = append(faults, emulator.Fault{Method: m, FailOperationShare: 0.2})
	}
	for _, f := range faults {
		if err := w.sqlEmu.InjectFault(f); err != nil {
			return "", nil, err
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: w.sqlEmu, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	return "http://" + lis.Addr().String() + "/", func() { _ = srv.Close(); _ = w.sqlEmu.Close() }, nil
}

// sqlObjects are the key secret and ProviderConfig of the emulator with
// PostgreSQL at endpoint.
func sqlObjects(endpoint string) ([]client.Object, error) {
	key, err := emulator.ServiceAccountKey(project, strings.TrimSuffix(endpoint, "/")+emulator.TokenPath)
	if err != nil {
		return nil, errors.Wrap(err, errSQLKey)
	}
	return []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: sqlKeySecret}, Data: map[string][]byte{"key.json": key}},
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: sqlConfig}, Spec: v1alpha1.ProviderConfigSpec{
			Project: v1alpha1.Project{ProjectID: project, Endpoint: endpoint},
			Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceSecret, CommonCredentialSelectors: xpv2.CommonCredentialSelectors{
				SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: secretNS, Name: sqlKeySecret}, Key: "key.json"},
			}},
		}},
	}, nil
}

// sqlInstances names the instances with users and databases, and the users
// (each owning the database of the same name) of each.
func (w *world) sqlInstances() []string {
	var names []string
	for i := range w.o.SQLInstances {
		n := fmt.Sprintf("sql-%02d", i)
		names = append(names, n)
		for j := range w.o.Logins {
			w.logins = append(w.logins, login{object: fmt.Sprintf("%s-app-%d", n, j), instance: n})
		}
	}
	return names
}

// A login is a PostgresqlUser and the PostgresqlDatabase of the same name
// that it owns.
type login struct {
	object, instance string
}

func newSQLInstance(name string) *v1alpha1.PostgresqlInstance {
	pi := newInstance(name)
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: sqlConfig}
	return pi
}

func (l login) user() *v1alpha1.PostgresqlUser {
	u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: l.object}}
	u.Spec.ForProvider.Instance = l.instance
	u.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: l.object + loginSecretSuffix}
	return u
}

func (l login) database() *v1alpha1.PostgresqlDatabase {
	d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: l.object}}
	d.Spec.ForProvider.Instance = l.instance
	d.Spec.ForProvider.Owner = l.object
	meta.AddAnnotations(d, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
	return d
}

// createLogins creates every user and database at once, with their
// instances: they wait for them.
func (w *world) createLogins(ctx context.Context) error {
	w.logf("creating %d PostgresqlUsers and as many PostgresqlDatabases owned by them on %d instances with PostgreSQL", len(w.logins), len(w.sqlAll))
	for _, l := range w.logins {
		for _, o := range []client.Object{l.user(), l.database()} {
			if err := w.c.Create(ctx, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// loginProblems describes each user and database that is not Ready with the
// least privilege the controller records, or whose connection secret does
// not offer its database.
func (w *world) loginProblems(ctx context.Context) ([]string, error) {
	var problems []string
	for _, l := range w.logins {
		u := &v1alpha1.PostgresqlUser{}
		if err := w.c.Get(ctx, client.ObjectKey{Name: l.object}, u); err != nil {
			return nil, err
		}
		o := u.Status.AtProvider
		switch {
		case u.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue:
			problems = append(problems, "PostgresqlUser "+l.object+" not Ready: "+conditionText(u.Status.Conditions))
		case !isFalse(o.SuperuserMember) || !isFalse(o.CreateRole) || !isFalse(o.CreateDB):
			problems = append(problems, fmt.Sprintf("PostgresqlUser %s Ready but not seen least privileged: superuserMember %s, createRole %s, createDB %s",
				l.object, show(o.SuperuserMember), show(o.CreateRole), show(o.CreateDB)))
		case !slices.Equal(o.Databases, []string{l.object}):
			problems = append(problems, fmt.Sprintf("PostgresqlUser %s owns databases %v, not [%s]", l.object, o.Databases, l.object))
		}
		s := &corev1.Secret{}
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: l.object + loginSecretSuffix}, s); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		if string(s.Data[cloudsql.ConnectionKeyDatabase]) != l.object || string(s.Data[cloudsql.ConnectionKeyUsername]) != l.object {
			problems = append(problems, fmt.Sprintf("connection secret of PostgresqlUser %s offers user %q and database %q", l.object,
				s.Data[cloudsql.ConnectionKeyUsername], s.Data[cloudsql.ConnectionKeyDatabase]))
		}

		d := &v1alpha1.PostgresqlDatabase{}
		if err := w.c.Get(ctx, client.ObjectKey{Name: l.object}, d); err != nil {
			return nil, err
		}
		do := d.Status.AtProvider
		switch {
		case d.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue:
			problems = append(problems, "PostgresqlDatabase "+l.object+" not Ready: "+conditionText(d.Status.Conditions))
		case do.Owner != l.object || !isFalse(do.PublicConnect):
			problems = append(problems, fmt.Sprintf("PostgresqlDatabase %s Ready but owned by %q, publicConnect %s", l.object, do.Owner, show(do.PublicConnect)))
		}
	}
	return problems, nil
}

func isFalse(b *bool) bool { return b != nil && !*b }

func show(b *bool) string {
	if b == nil {
		return "unknown"
	}
	return fmt.Sprint(*b)
}

func conditionText(cs []xpv2.Condition) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s %s %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, "; ")
}

// waitLogins waits until every user and database is Ready with least
// privilege; those that are not within the timeout are counted, not an
// error, so that the report shows them.
func (w *world) waitLogins(ctx context.Context, r *Report) error {
	start := time.Now()
	for {
		problems, err := w.loginProblems(ctx)
		if err != nil {
			return err
		}
		if len(problems) == 0 {
			w.logf("every user and database Ready, least privileged, after %s", time.Since(start).Round(time.Second))
			return nil
		}
		if time.Since(start) > w.o.Timeout {
			w.logf("not Ready, least privileged, after %s:\n      %s", w.o.Timeout, strings.Join(problems, "\n      "))
			r.NotLeastPrivileged = len(problems)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// checkLogins counts, while every user and database exists, the users whose
// password in Cloud SQL is not the one in their connection secret, and the
// logins and databases in Cloud SQL that no object, or more than one,
// claims.
func (w *world) checkLogins(ctx context.Context, r *Report) error {
	users := &v1alpha1.PostgresqlUserList{}
	if err := w.c.List(ctx, users); err != nil {
		return err
	}
	dbs := &v1alpha1.PostgresqlDatabaseList{}
	if err := w.c.List(ctx, dbs); err != nil {
		return err
	}
	userClaims, dbClaims := map[string]int{}, map[string]int{}
	for i := range users.Items {
		u := &users.Items[i]
		userClaims[u.Spec.ForProvider.Instance+"/"+cloudsql.UserName(u.Settings(), u.Name)]++
	}
	for i := range dbs.Items {
		d := &dbs.Items[i]
		dbClaims[d.Spec.ForProvider.Instance+"/"+cloudsql.DatabaseName(d.Settings(), d.Name)]++
	}
	for _, inst := range w.sqlAll {
		logins, err := w.sqlEmu.UserNames(project, inst)
		if err != nil {
			return err
		}
		for _, n := range logins {
			if n == postgresLogin {
				continue
			}
			switch claims := userClaims[inst+"/"+n]; {
			case claims == 0:
				w.logf("login %s of %s belongs to no PostgresqlUser", n, inst)
				r.OrphanUsers++
			case claims > 1:
				w.logf("login %s of %s belongs to %d PostgresqlUsers", n, inst, claims)
				r.UsersTwice++
			}
		}
		names, err := w.sqlEmu.DatabaseNames(project, inst)
		if err != nil {
			return err
		}
		for _, n := range names {
			if n == postgresDatabase {
				continue
			}
			switch claims := dbClaims[inst+"/"+n]; {
			case claims == 0:
				w.logf("database %s of %s belongs to no PostgresqlDatabase", n, inst)
				r.OrphanDatabases++
			case claims > 1:
				w.logf("database %s of %s belongs to %d PostgresqlDatabases", n, inst, claims)
				r.DatabasesTwice++
			}
		}
	}
	lost, err := w.lostPasswords(ctx)
	r.LostPasswords = lost
	return err
}

// lostPasswords counts the users that exist in Cloud SQL whose connection
// secret does not hold their password.
func (w *world) lostPasswords(ctx context.Context) (int, error) {
	lost := 0
	for _, l := range w.logins {
		logins, err := w.sqlEmu.UserNames(project, l.instance)
		if err != nil {
			return 0, err
		}
		if !slices.Contains(logins, l.object) {
			continue
		}
		s := &corev1.Secret{}
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: l.object + loginSecretSuffix}, s); client.IgnoreNotFound(err) != nil {
			return 0, err
		}
		if pw := string(s.Data[cloudsql.ConnectionKeyPassword]); pw == "" || !w.sqlEmu.PasswordIs(project, l.instance, l.object, pw) {
			w.logf("the connection secret of PostgresqlUser %s does not hold the password Cloud SQL has", l.object)
			lost++
		}
	}
	return lost, nil
}

// deleteLogins deletes every user and database at once.
func (w *world) deleteLogins(ctx context.Context) error {
	w.logf("deleting the %d users and %d databases", len(w.logins), len(w.logins))
	for _, l := range w.logins {
		for _, o := range []client.Object{l.user(), l.database()} {
			if err := w.c.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	w.loginsDeleted = time.Now()
	return nil
}

// loginsGone waits until the objects of the deleted users and databases are
// gone, and counts the logins and databases left in Cloud SQL. Objects still
// there after the timeout are counted at the end, not an error, so that the
// instances are still deleted.
func (w *world) loginsGone(ctx context.Context, r *Report) error {
	start := w.loginsDeleted
	for {
		users := &v1alpha1.PostgresqlUserList{}
		dbs := &v1alpha1.PostgresqlDatabaseList{}
		if err := w.c.List(ctx, users); err != nil {
			return err
		}
		if err := w.c.List(ctx, dbs); err != nil {
			return err
		}
		if len(users.Items)+len(dbs.Items) == 0 {
			w.logf("every user and database object gone after %s", time.Since(start).Round(time.Second))
			break
		}
		if time.Since(start) > w.o.Timeout {
			var left []string
			for i := range users.Items {
				left = append(left, "PostgresqlUser "+users.Items[i].Name+": "+conditionText(users.Items[i].Status.Conditions))
			}
			for i := range dbs.Items {
				left = append(left, "PostgresqlDatabase "+dbs.Items[i].Name+": "+conditionText(dbs.Items[i].Status.Conditions))
			}
			w.logf("left after %s:\n      %s", w.o.Timeout, strings.Join(left, "\n      "))
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	for _, inst := range w.sqlAll {
		logins, err := w.sqlEmu.UserNames(project, inst)
		if err != nil {
			return err
		}
		for _, n := range logins {
			if n != postgresLogin {
				w.logf("login %s of %s is left after its PostgresqlUser was deleted", n, inst)
				r.OrphanUsers++
			}
		}
		names, err := w.sqlEmu.DatabaseNames(project, inst)
		if err != nil {
			return err
		}
		for _, n := range names {
			if n != postgresDatabase {
				w.logf("database %s of %s is left after its PostgresqlDatabase was deleted", n, inst)
				r.OrphanDatabases++
			}
		}
	}
	return nil
}

// createdTwice counts the users and databases that Cloud SQL created more
// than once: an operation that created one and did not fail, beyond one per
// object.
func (w *world) createdTwice(r *Report) {
	users, dbs := 0, 0
	for _, op := range w.sqlEmu.Operations(project) {
		if op.Error != nil || op.Status != emulator.OperationDone {
			continue
		}
		switch op.OperationType {
		case emulator.OpCreateUser:
			users++
		case emulator.OpCreateDatabase:
			dbs++
		}
	}
	r.UsersTwice += max(0, users-len(w.logins))
	r.DatabasesTwice += max(0, dbs-len(w.logins))
}
