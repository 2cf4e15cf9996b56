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

package postgresqlbackup

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/objecttest"
)

// These tests reach every branch of external against the emulator served by
// httptest; the controllers' tests tell the same story end to end.

const (
	unitProject  = "unit-project"
	unitInstance = "shared"
	unitUID      = types.UID("uid-backup")
)

type backupMod func(*v1alpha1.PostgresqlBackup)

// nightly is a cluster-scoped PostgresqlBackup "nightly" of instance
// "shared".
func nightly(mods ...backupMod) *v1alpha1.PostgresqlBackup {
	b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: "nightly", UID: unitUID}}
	b.Spec.ForProvider.Instance = unitInstance
	for _, m := range mods {
		m(b)
	}
	return b
}

func deleted(b *v1alpha1.PostgresqlBackup) { b.SetDeletionTimestamp(&metav1.Time{Time: time.Now()}) }

func allowed(b *v1alpha1.PostgresqlBackup) {
	meta.AddAnnotations(b, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
}

// insertAsked is an object whose insert was sent, its answer lost.
func insertAsked(b *v1alpha1.PostgresqlBackup) { meta.SetExternalCreatePending(b, time.Now()) }

func named(id string) backupMod {
	return func(b *v1alpha1.PostgresqlBackup) { meta.SetExternalName(b, id) }
}

// run is a backup run the emulator holds before the call; the zero run is
// none.
type run int

const (
	// mine is the object's run, SUCCESSFUL, named by its external name
	// unless the case names another.
	mine run = iota + 1
	// mineLost is the object's run, its ID not recorded.
	mineLost
	// failed is the object's run, FAILED.
	failed
	// running is the object's run, not over.
	running
	// deleting is the object's run, its deletion under way.
	deleting
	// others is a run of another object.
	others
)

// args are one case's world before the call.
type args struct {
	mg  *v1alpha1.PostgresqlBackup
	run run
	// state is the instance's state as its object observed it (RUNNABLE
	// when empty).
	state string
	// lose is a method whose next request is carried out and answered
	// 503, as when its answer is lost.
	lose string
}

// result is what a call did.
type result struct {
	Err          string
	Exists       bool
	LateInit     bool
	Condition    string
	Pacing       []string
	Calls        []string
	ExternalName string
	State        string
	// Runs are the instance's runs after the call: status and description.
	Runs []string
}

func call(t *testing.T, a args, method string) result {
	t.Helper()
	ctx := context.Background()
	emu := emulator.New(emulator.WithRequestBudget(0), emulator.WithDelays(0, time.Hour, 0))
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Seed(unitProject, &sqladmin.DatabaseInstance{
		Name: unitInstance, DatabaseVersion: "POSTGRES_15", Region: "europe-west1", RootPassword: "root",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	}); err != nil {
		t.Fatal(err)
	}
	mg := a.mg
	insert := func(uid types.UID) string {
		t.Helper()
		op, err := svc.BackupRuns.Insert(unitProject, unitInstance, cloudsql.GenerateBackupRun(mg.Settings(), "nightly", uid)).Do()
		if err != nil {
			t.Fatal(err)
		}
		return cloudsql.BackupRunID(op.BackupContext.BackupId)
	}
	var id string
	switch a.run {
	case mine, mineLost, deleting:
		id = insert(mg.GetUID())
		emu.FinishOperations()
	case failed:
		if err := emu.FailNextBackup(unitProject, unitInstance, "disk full"); err != nil {
			t.Fatal(err)
		}
		id = insert(mg.GetUID())
		emu.FinishOperations()
	case running:
		id = insert(mg.GetUID())
	case others:
		insert("uid-other")
		emu.FinishOperations()
	}
	if a.run == deleting {
		n, _ := cloudsql.ParseBackupRunID(id)
		if _, err := svc.BackupRuns.Delete(unitProject, unitInstance, n).Do(); err != nil {
			t.Fatal(err)
		}
	}
	if id != "" && a.run != mineLost && meta.GetExternalName(mg) == "" {
		meta.SetExternalName(mg, id)
	}
	emu.ResetCounts()
	if a.lose != "" {
		if err := emu.InjectFault(emulator.Fault{Method: a.lose, LoseAnswerShare: 1, Count: 1}); err != nil {
			t.Fatal(err)
		}
	}
	state := a.state
	if state == "" {
		state = "RUNNABLE"
	}
	conn := &core.InstanceConnection{
		Service: svc, Project: unitProject, Instance: unitInstance, Source: "pc",
		Observed: v1alpha1.PostgresqlInstanceObservation{State: state, ConnectionName: unitProject + ":europe-west1:" + unitInstance},
	}
	rec := &objecttest.Marks{}
	e := &external[*v1alpha1.PostgresqlBackup]{conn: conn, pacer: rec, instance: types.NamespacedName{Name: unitInstance}}
	var r result
	switch method {
	case "Observe":
		o, oerr := e.Observe(ctx, mg)
		err, r.Exists, r.LateInit = oerr, o.ResourceExists, o.ResourceLateInitialized
	case "Create":
		_, err = e.Create(ctx, mg)
	case "Delete":
		if _, oerr := e.Observe(ctx, mg); oerr != nil {
			t.Fatal(oerr)
		}
		emu.ResetCounts()
		_, err = e.Delete(ctx, mg)
	}
	r.Err = objecttest.Shown(err)
	r.Condition, r.Calls = objecttest.Condition(mg), objecttest.Calls(emu.Requests())
	r.Pacing = rec.List()
	r.ExternalName = meta.GetExternalName(mg)
	if r.ExternalName == id && id != "" {
		r.ExternalName = "the run's ID"
	}
	r.State = mg.Status.AtProvider.State
	runs, err := svc.BackupRuns.List(unitProject, unitInstance).Do()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range runs.Items {
		r.Runs = append(r.Runs, x.Status+" "+x.Description)
	}
	return r
}

const mark = "PostgresqlBackup nightly, uid uid-backup"

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"InstanceNotReady": {
			reason: "A backup is taken only of a RUNNABLE instance: the condition says which instance holds it back, and no request is sent.",
			args:   args{mg: nightly(), state: "PENDING_CREATE"},
			want: result{
				Err:    "PostgresqlInstance shared is not ready (Cloud SQL reports it PENDING_CREATE): the backup is created once it is; this is retried",
				Pacing: []string{"waiting"},
			},
		},
		"NotTakenYet": {
			reason: "An object without an ID whose insert was never sent has no backup: nothing is asked of Cloud SQL.",
			args:   args{mg: nightly(), run: others},
			want:   result{Runs: []string{"SUCCESSFUL PostgresqlBackup nightly, uid uid-other"}},
		},
		"InsertAnswerLost": {
			reason: "An object whose insert was sent but whose ID was not recorded finds its run by its UID, with one listing, and records the ID.",
			args:   args{mg: nightly(insertAsked), run: mineLost},
			want: result{
				Exists: true, LateInit: true, Condition: "Available: ", Pacing: []string{"settled"},
				Calls: []string{emulator.MethodBackupRunsList}, ExternalName: "the run's ID", State: "SUCCESSFUL",
				Runs: []string{"SUCCESSFUL " + mark},
			},
		},
		"InsertLostNoRun": {
			reason: "An insert that took no backup leaves nothing to find: Create takes it.",
			args:   args{mg: nightly(insertAsked), run: others},
			want: result{
				Calls: []string{emulator.MethodBackupRunsList},
				Runs:  []string{"SUCCESSFUL PostgresqlBackup nightly, uid uid-other"},
			},
		},
		"Successful": {
			reason: "A SUCCESSFUL run is Ready, and looked at rarely from now on.",
			args:   args{mg: nightly(), run: mine},
			want: result{
				Exists: true, Condition: "Available: ", Pacing: []string{"settled"}, Calls: []string{emulator.MethodBackupRunsGet},
				ExternalName: "the run's ID", State: "SUCCESSFUL", Runs: []string{"SUCCESSFUL " + mark},
			},
		},
		"Running": {
			reason: "A run under way is Creating, and looked at again soon.",
			args:   args{mg: nightly(), run: running},
			want: result{
				Exists: true, Pacing: []string{"busy"}, Calls: []string{emulator.MethodBackupRunsGet},
				ExternalName: "the run's ID", State: "ENQUEUED", Runs: []string{"ENQUEUED " + mark},
			},
		},
		"Failed": {
			reason: "A FAILED run is not Ready: the condition carries Cloud SQL's error and what to do.",
			args:   args{mg: nightly(), run: failed},
			want: result{
				Exists: true, Pacing: []string{"settled"}, Calls: []string{emulator.MethodBackupRunsGet},
				ExternalName: "the run's ID", State: "FAILED", Runs: []string{"FAILED " + mark},
			},
		},
		"Gone": {
			reason: "A run that no longer exists is not taken again (the object keeps its ID): the error says what to do.",
			args:   args{mg: nightly(named("42")), run: others},
			want: result{
				Err:       "backup run 42 of Cloud SQL instance shared in project unit-project no longer exists (deleted outside the provider, or with its instance): delete this PostgresqlBackup, and create a new one to take another backup",
				Condition: "Unavailable: backup run 42 of Cloud SQL instance shared in project unit-project no longer exists (deleted outside the provider, or with its instance): delete this PostgresqlBackup, and create a new one to take another backup",
				Pacing:    []string{"stalled"}, Calls: []string{emulator.MethodBackupRunsGet}, ExternalName: "42",
				Runs: []string{"SUCCESSFUL PostgresqlBackup nightly, uid uid-other"},
			},
		},
		"GoneWhileDeleted": {
			reason: "A deleted object whose run is gone is done.",
			args:   args{mg: nightly(named("42"), deleted), run: others},
			want: result{
				Calls: []string{emulator.MethodBackupRunsGet}, ExternalName: "42",
				Runs: []string{"SUCCESSFUL PostgresqlBackup nightly, uid uid-other"},
			},
		},
		"NotAnID": {
			reason: "An external name that is no backup run ID is refused without a request.",
			args:   args{mg: nightly(named("nightly"))},
			want: result{
				Err:    `the annotation crossplane.io/external-name is "nightly", which is not a backup run ID: set it to the ID of a backup run of instance shared (gcloud sql backups list --instance shared), or remove it from an object that should take a backup`,
				Pacing: []string{"stalled"}, ExternalName: "nightly",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := call(t, tc.args, "Observe")
			if name == "Failed" {
				// The run's ID is in the message: checked apart.
				want := "Unavailable: backup run " + meta.GetExternalName(tc.args.mg) + " of Cloud SQL instance shared FAILED: disk full; delete this PostgresqlBackup and create a new one to take the backup again"
				if got.Condition != want {
					t.Errorf("%s\nObserve(...): condition %q, want %q", tc.reason, got.Condition, want)
				}
				got.Condition = ""
			}
			if name == "Running" {
				got.Condition = ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nObserve(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"TakesOneBackup": {
			reason: "Create sends one backupRuns.insert, whose description marks the object, and records the run's ID from its operation.",
			args:   args{mg: nightly(func(b *v1alpha1.PostgresqlBackup) { b.Spec.ForProvider.Description = ptr.To("before the upgrade") })},
			want: result{
				Condition: "Creating: ", Pacing: []string{"busy"}, Calls: []string{emulator.MethodBackupRunsInsert},
				ExternalName: "set", Runs: []string{"ENQUEUED before the upgrade (" + mark + ")"},
			},
		},
		"InsertAnswerLost": {
			reason: "A backupRuns.insert carried out and answered 503 is the reconcile's error; the run is not asked for again, and the next attempt, at the busy poll interval, finds it by its description.",
			args:   args{mg: nightly(), lose: emulator.MethodBackupRunsInsert},
			want: result{
				Err:    "cannot take a backup of Cloud SQL instance shared in project unit-project: googleapi 503",
				Pacing: []string{"busy", "retried"}, Calls: []string{emulator.MethodBackupRunsInsert},
				Runs: []string{"ENQUEUED " + mark},
			},
		},
		"InstanceNotReady": {
			reason: "No backup is asked of an instance that is not RUNNABLE.",
			args:   args{mg: nightly(), state: "MAINTENANCE"},
			want: result{
				Err:    "PostgresqlInstance shared is not ready (Cloud SQL reports it MAINTENANCE): the backup is created once it is; this is retried",
				Pacing: []string{"waiting"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := call(t, tc.args, "Create")
			if _, ok := cloudsql.ParseBackupRunID(got.ExternalName); ok {
				got.ExternalName = "set"
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCreate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   args
		want   result
	}{
		"WithoutTheAnnotation": {
			reason: "Without the allow-deletion annotation nothing is written: the backup stays, and the error says how to delete it or keep it.",
			args:   args{mg: nightly(deleted), run: mine},
			want: result{
				Err: `PostgresqlBackup nightly is being deleted without the annotation cloudsql.travelaudience.com/allow-deletion: "true", so the provider does not delete backup run ` +
					`the run's ID of Cloud SQL instance shared: add the annotation to delete the backup, or keep it by letting the object go (deletionPolicy Orphan for a cluster-scoped PostgresqlBackup; managementPolicies without Delete for a namespaced one)`,
				Exists: false, Condition: "Available: ", Pacing: []string{"stalled", "settled"},
				ExternalName: "the run's ID", State: "SUCCESSFUL", Runs: []string{"SUCCESSFUL " + mark},
			},
		},
		"WithTheAnnotation": {
			reason: "With the annotation, one backupRuns.delete; the run goes when its operation ends.",
			args:   args{mg: nightly(deleted, allowed), run: mine},
			want: result{
				Condition: "Deleting: ", Pacing: []string{"busy", "settled"}, Calls: []string{emulator.MethodBackupRunsDelete},
				ExternalName: "the run's ID", State: "SUCCESSFUL", Runs: []string{"DELETION_PENDING " + mark},
			},
		},
		"AskedAlready": {
			reason: "A run whose deletion is under way is not asked again.",
			args:   args{mg: nightly(deleted, allowed), run: deleting},
			want: result{
				Condition: "Deleting: ", Pacing: []string{"busy"},
				ExternalName: "the run's ID", State: "DELETION_PENDING", Runs: []string{"DELETION_PENDING " + mark},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := call(t, tc.args, "Delete")
			if id := meta.GetExternalName(tc.args.mg); id != "" {
				got.Err = strings.ReplaceAll(got.Err, id, "the run's ID")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDelete(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestNamespacedBackupIsMarkedWithItsNamespace: the description names a
// namespaced object with its namespace, and the same mark finds it.
func TestNamespacedBackupIsMarkedWithItsNamespace(t *testing.T) {
	b := &nsv1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "nightly", UID: unitUID}}
	r := cloudsql.GenerateBackupRun(b.Settings(), core.ObjectKey(b), b.GetUID())
	if want := "PostgresqlBackup team-a/nightly, uid uid-backup"; r.Description != want {
		t.Errorf("description %q, want %q", r.Description, want)
	}
	r.Type = v1alpha1.BackupTypeOnDemand
	if !cloudsql.IsBackupOf(r, unitUID) {
		t.Errorf("IsBackupOf(%q, %q) = false", r.Description, unitUID)
	}
}

// A namespaced PostgresqlBackup whose external name is set by hand to a run
// it did not take (another team's backup, the platform's automated one)
// neither shows that run nor deletes it, even when deleted with the
// allow-deletion annotation: it only lets go.
func TestNamespacedBackupManagesOnlyItsOwnRun(t *testing.T) {
	ctx := context.Background()
	emu := emulator.New(emulator.WithRequestBudget(0))
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	svc, err := sqladmin.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Seed(unitProject, &sqladmin.DatabaseInstance{
		Name: unitInstance, DatabaseVersion: "POSTGRES_15", Region: "europe-west1", RootPassword: "root",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	}); err != nil {
		t.Fatal(err)
	}
	op, err := svc.BackupRuns.Insert(unitProject, unitInstance, cloudsql.GenerateBackupRun(&v1alpha1.PostgresqlBackupSettings{}, "team-b/theirs", "uid-team-b")).Do()
	if err != nil {
		t.Fatal(err)
	}
	emu.FinishOperations()
	theirs := cloudsql.BackupRunID(op.BackupContext.BackupId)
	conn := &core.InstanceConnection{
		Service: svc, Project: unitProject, Instance: unitInstance, Source: "pc",
		Observed: v1alpha1.PostgresqlInstanceObservation{State: "RUNNABLE"},
	}
	for _, gone := range []bool{false, true} {
		b := &nsv1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "mine", UID: unitUID}}
		meta.SetExternalName(b, theirs)
		meta.AddAnnotations(b, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
		if gone {
			b.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
		}
		e := &external[*nsv1alpha1.PostgresqlBackup]{conn: conn, pacer: &objecttest.Marks{}, instance: types.NamespacedName{Namespace: "team-a", Name: unitInstance}}
		o, err := e.Observe(ctx, b)
		want := "backup run " + theirs + " of Cloud SQL instance shared was not taken by PostgresqlBackup team-a/mine (its description does not carry this object's UID): " +
			"a namespaced PostgresqlBackup manages only the backup it takes, so that no namespace can read or delete another's; remove the annotation crossplane.io/external-name and create the object again to take a backup of its own"
		switch {
		case gone && (err != nil || o.ResourceExists):
			t.Errorf("deleted: Observe(...) = %+v, %v; want it let go (the run does not exist for it)", o, err)
		case !gone && objecttest.Shown(err) != want:
			t.Errorf("Observe(...): error %q, want %q", objecttest.Shown(err), want)
		}
		if b.Status.AtProvider.ID != "" || b.Status.AtProvider.Description != "" {
			t.Errorf("the other team's run shows in the status: %+v", b.Status.AtProvider)
		}
	}
	runs, err := svc.BackupRuns.List(unitProject, unitInstance).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Items) != 1 || runs.Items[0].Status != "SUCCESSFUL" {
		t.Errorf("the other team's run changed: %+v", runs.Items)
	}
}
