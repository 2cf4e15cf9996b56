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

package postgresqluser

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
)

// benchDatabases is the fleet of the figure: 5,000 users, each the
// owner of one of 5,000 databases.
const benchDatabases = 5000

// staticListWatch serves a fixed list, and a watch that never changes it,
// to the informer of a controller-runtime cache: the cache's own reader and
// indexes, without an API server.
type staticListWatch struct {
	*toolscache.ListWatch
}

// IsWatchListSemanticsUnSupported makes the reflector list, not stream.
func (staticListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// benchCache is a started controller-runtime cache of dbs, with the owner
// index the user's setup registers.
func benchCache(b *testing.B, dbs []v1alpha1.PostgresqlDatabase) client.Reader {
	b.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.SchemeBuilder.AddToScheme(s); err != nil {
		b.Fatal(err)
	}
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{v1alpha1.SchemeGroupVersion})
	m.Add(v1alpha1.PostgresqlDatabaseGroupVersionKind, meta.RESTScopeRoot)
	lw := staticListWatch{&toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &v1alpha1.PostgresqlDatabaseList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: dbs}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}}
	c, err := cache.New(&rest.Config{}, cache.Options{
		Scheme: s, Mapper: m,
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
			return toolscache.NewSharedIndexInformer(lw, obj, resync, idx)
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.IndexField(context.Background(), &v1alpha1.PostgresqlDatabase{}, core.FieldOwner, core.ReferrerKeys(core.OwnerOf)); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	if _, err := c.GetInformer(ctx, &v1alpha1.PostgresqlDatabase{}); err != nil {
		b.Fatal(err)
	}
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the cache did not sync")
	}
	return c
}

// walkOwned is owned as it was before the owner index: a List of every
// database of the scope, filtered by owner and instance.
func walkOwned(ctx context.Context, kube client.Reader, mg *v1alpha1.PostgresqlUser) ([]string, error) {
	l := &v1alpha1.PostgresqlDatabaseList{}
	if err := kube.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var names []string
	for _, o := range resource.ManagedList(l).GetItems() {
		d, ok := o.(database)
		if ok && d.OwnerKey() == client.ObjectKeyFromObject(mg) && d.InstanceKey() == mg.InstanceKey() {
			names = append(names, cloudsql.DatabaseName(d.Settings(), d.GetName()))
		}
	}
	slices.Sort(names)
	return names, nil
}

// BenchmarkOwned compares one user's lookup of its databases among 5,000
// in the manager's cache: a walk of them all against the owner index. A
// fleet's users each make one per observation. Figures only: no timing is
// asserted.
func BenchmarkOwned(b *testing.B) {
	dbs := make([]v1alpha1.PostgresqlDatabase, benchDatabases)
	for i := range dbs {
		dbs[i].Name = fmt.Sprintf("db-%d", i)
		dbs[i].Spec.ForProvider.Owner = fmt.Sprintf("user-%d", i)
		dbs[i].Spec.ForProvider.Instance = fmt.Sprintf("pg-%d", i%100)
	}
	kube := benchCache(b, dbs)
	user := func(i int) *v1alpha1.PostgresqlUser {
		u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("user-%d", i%benchDatabases)}}
		u.Spec.ForProvider.Instance = fmt.Sprintf("pg-%d", i%benchDatabases%100)
		return u
	}
	e := &external[*v1alpha1.PostgresqlUser]{kube: kube}
	ctx := context.Background()
	b.Run(fmt.Sprintf("Walk/%d", benchDatabases), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if names, err := walkOwned(ctx, kube, user(i)); err != nil || len(names) != 1 {
				b.Fatalf("walkOwned(...) = %v, %v; want one database", names, err)
			}
		}
	})
	b.Run(fmt.Sprintf("Index/%d", benchDatabases), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if names, err := e.owned(ctx, user(i)); err != nil || len(names) != 1 {
				b.Fatalf("owned(...) = %v, %v; want one database", names, err)
			}
		}
	})
}
