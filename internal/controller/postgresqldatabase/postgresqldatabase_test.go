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

package postgresqldatabase

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/travelaudience/cloudsql-postgres-operator/apis"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/listcache"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const (
	project  = "test-project"
	instance = "shared"
)

// TestObserveImported: a database that is only observed is observed from the
// shared listing alone, whatever state its owner is in; one the provider may
// change waits for its owner.
func TestObserveImported(t *testing.T) {
	emu := emulator.New(emulator.WithRequestBudget(0))
	srv := httptest.NewServer(emu)
	defer srv.Close()
	if err := emu.Seed(project, &sqladmin.DatabaseInstance{Name: instance, DatabaseVersion: "POSTGRES_15", Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"}}); err != nil {
		t.Fatal(err)
	}
	if err := emu.SeedDatabase(project, instance, &sqladmin.Database{Name: "orders"}); err != nil {
		t.Fatal(err)
	}
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := coordinationv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	// The owner's login exists, but its object has not been observed yet.
	owner := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: "orders-app"}}
	owner.Spec.ForProvider.Instance = instance

	database := func(pols ...xpv2.ManagementAction) *v1alpha1.PostgresqlDatabase {
		d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: "orders"}}
		d.Spec.ForProvider.Instance = instance
		d.Spec.ForProvider.Owner = owner.Name
		d.Spec.ManagementPolicies = pols
		return d
	}

	type want struct {
		o         managed.ExternalObservation
		err       error
		condition xpv2.Condition
	}
	cases := map[string]struct {
		reason string
		mg     *v1alpha1.PostgresqlDatabase
		want   want
	}{
		"ObserveOnly": {
			reason: "An imported database that is only observed needs no ready owner: it is Available once the listing shows it.",
			mg:     database(xpv2.ManagementActionObserve),
			want: want{
				o:         managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
				condition: xpv2.Available(),
			},
		},
		"Managed": {
			reason: "A database the provider may change is given to its owner once the owner is ready.",
			mg:     database(),
			want: want{
				err:       errors.Errorf(errOwnerNotReady, owner.Name),
				condition: xpv2.Condition{Type: xpv2.TypeReady, Status: "Unknown"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kube := fake.NewClientBuilder().WithScheme(s).WithObjects(owner.DeepCopy()).Build()
			e := &external[*v1alpha1.PostgresqlDatabase]{
				kube: kube,
				conn: &core.InstanceConnection{
					Service: svc, Project: project, Instance: instance, Source: "default",
					Observed: v1alpha1.PostgresqlInstanceObservation{State: "RUNNABLE", ConnectionName: project + ":us-east1:" + instance},
				},
				lists:    listcache.New(func() time.Duration { return time.Minute }),
				instance: types.NamespacedName{Name: instance},
				// Made before the record began (no creation time): the
				// database it finds is the one it managed.
				holders: core.NewHolders(tenancy.NewRecords(kube, kube, "crossplane-system"), v1alpha1.PostgresqlDatabaseGroupVersionKind),
				// The zero Pacer marks nothing.
				pacer: core.Pacer{},
			}
			got, err := e.Observe(context.Background(), tc.mg)
			if diff := cmp.Diff(tc.want.err, err, test.EquateErrors()); diff != "" {
				t.Errorf("\n%s\nObserve(...): -want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.o, got); diff != "" {
				t.Errorf("\n%s\nObserve(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.condition, tc.mg.GetCondition(xpv2.TypeReady), test.EquateConditions()); diff != "" {
				t.Errorf("\n%s\nObserve(...): -want Ready, +got Ready:\n%s", tc.reason, diff)
			}
			if err == nil && (tc.mg.Status.AtProvider.Name != "orders" || tc.mg.Status.AtProvider.Charset != "UTF8") {
				t.Errorf("\n%s\nObserve(...): status.atProvider %+v does not show the listed database", tc.reason, tc.mg.Status.AtProvider)
			}
		})
	}
}
