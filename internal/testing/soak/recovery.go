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
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// plainRecoverySources is how many instances without PostgreSQL are cloned
// (now and at a point in time): their recoveries cost the machine nothing,
// those of the instances with PostgreSQL a server each.
const plainRecoverySources = 2

// pitrLogDays is the log retention of the sources' point-in-time recovery,
// which a clone at a point in time needs; it is on from their creation, so
// that turning it on costs no patch and no wait.
const pitrLogDays = 7

// sourceWrites are the requests that would change a source instance, its
// users, databases or backups: a recovery sends none of them.
var sourceWrites = []string{
	emulator.MethodInstancesPatch, emulator.MethodInstancesUpdate, emulator.MethodInstancesDelete,
	emulator.MethodUsersInsert, emulator.MethodUsersUpdate, emulator.MethodUsersDelete,
	emulator.MethodDatabasesInsert, emulator.MethodDatabasesPatch, emulator.MethodDatabasesUpdate, emulator.MethodDatabasesDelete,
	emulator.MethodBackupRunsInsert, emulator.MethodBackupRunsDelete,
}

// A recovered is a PostgresqlInstance recovered from source (both the
// objects' and the Cloud SQL instances' names), on emu.
type recovered struct {
	name, source string
	emu          *emulator.Server
	uid          string
}

// plainSources names the instances without PostgreSQL that are cloned:
// neither those whose tier changes nor those deleted without the annotation,
// so that the clones' sources are quiet through the phase.
func plainSources(names []string) []string {
	from, to := len(names)/3, len(names)-max(1, len(names)/4)
	if from >= to {
		return nil
	}
	return names[from:min(to, from+plainRecoverySources)]
}

// withPITR turns point-in-time recovery on, for the sources of clones at a
// point in time.
func withPITR(pi *v1alpha1.PostgresqlInstance) *v1alpha1.PostgresqlInstance {
	pi.Spec.ForProvider.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true, LogRetentionDays: pitrLogDays}
	return pi
}

// recoverInstances recovers, all at once while the provider is killed, each
// of the sources: a clone now and one at a point in time of each, and of
// each instance with PostgreSQL a restore of its first PostgresqlBackup
// (which takeBackups took, and are deleted only after). It waits until each
// is Ready with its recovery Done, then counts the recoveries whose
// connection secret ever held a source's postgres password, those created
// twice, those without their own owner label, and the writes the sources
// received; then it deletes them.
func (w *world) recoverInstances(ctx context.Context, plain []string, r *Report) error {
	var all []recovered
	var objs []*v1alpha1.PostgresqlInstance
	// A second ago, and a second earlier once metav1.Time drops the
	// fraction: after the sources were made (and their backups taken),
	// within the window of their logs.
	at := metav1.NewTime(time.Now().Add(-time.Second))
	add := func(src, suffix string, emu *emulator.Server, s v1alpha1.Source) {
		var pi *v1alpha1.PostgresqlInstance
		if emu == w.sqlEmu {
			pi = newSQLInstance(src + suffix)
		} else {
			pi = newInstance(src + suffix)
		}
		pi.Spec.ForProvider.Source = &s
		objs = append(objs, pi)
		all = append(all, recovered{name: pi.Name, source: src, emu: emu})
	}
	for _, src := range plain {
		add(src, "-clone", w.emu, v1alpha1.Source{Instance: src})
		add(src, "-pitr", w.emu, v1alpha1.Source{Instance: src, PointInTime: &at})
	}
	for _, src := range w.sqlAll {
		add(src, "-clone", w.sqlEmu, v1alpha1.Source{Instance: src})
		add(src, "-pitr", w.sqlEmu, v1alpha1.Source{Instance: src, PointInTime: &at})
		add(src, "-restore", w.sqlEmu, v1alpha1.Source{Backup: backupName(src, 0)})
	}
	if len(all) == 0 {
		return nil
	}
	sources := slices.Concat(plain, w.sqlAll)
	sourcePasswords := map[string]bool{}
	for _, src := range sources {
		s := &corev1.Secret{}
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: src + "-postgres"}, s); err != nil {
			return err
		}
		sourcePasswords[string(s.Data[cloudsql.ConnectionKeyPassword])] = true
	}

	wctx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	secrets := map[string]string{}
	for _, rc := range all {
		secrets[rc.name+"-postgres"] = rc.name
	}
	published, err := w.watchPublished(wctx, secrets, sourcePasswords)
	if err != nil {
		return err
	}

	w.logf("recovering %d instances from %d sources (clones now and at a point in time, restores of PostgresqlBackups)", len(all), len(sources))
	start := time.Now()
	for _, pi := range objs {
		if err := w.c.Create(ctx, pi); err != nil {
			return err
		}
	}
	// Killed while the recoveries are asked for, whatever the killer's
	// schedule, and again once the first is RUNNABLE, while the provider
	// secures it.
	time.Sleep(time.Duration(rand.Int64N(int64(2 * time.Second))))
	if err := w.kill(); err != nil {
		return err
	}
	r.RecoveryKills++
	securing := false
	err = w.waitFor(ctx, "every recovery Ready and Done", func() (bool, error) {
		done := true
		for i := range all {
			pi := &v1alpha1.PostgresqlInstance{}
			if err := w.c.Get(ctx, client.ObjectKey{Name: all[i].name}, pi); err != nil {
				return false, err
			}
			all[i].uid = string(pi.UID)
			rec := pi.Status.AtProvider.Recovery
			if pi.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue || rec == nil || rec.Phase != v1alpha1.RecoveryDone {
				done = false
			}
			if db, err := all[i].emu.Instance(project, all[i].name); !securing && err == nil && db.State == emulator.StateRunnable && (rec == nil || rec.Phase != v1alpha1.RecoveryDone) {
				securing = true
				if err := w.kill(); err != nil {
					return false, err
				}
				r.RecoveryKills++
			}
		}
		return done, nil
	})
	if err != nil {
		return err
	}
	r.Recoveries = len(all)

	// The secrets are settled: the watch has seen what there was to see.
	stopWatching()
	ever := published()
	for _, rc := range all {
		s := &corev1.Secret{}
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: rc.name + "-postgres"}, s); err != nil {
			return err
		}
		if sourcePasswords[string(s.Data[cloudsql.ConnectionKeyPassword])] {
			ever[rc.name] = true
		}
	}
	for n := range ever {
		w.logf("the connection secret of recovered PostgresqlInstance %s held a source's postgres password", n)
	}
	r.SourcePasswords = len(ever)
	for _, emu := range []*emulator.Server{w.emu, w.sqlEmu} {
		var names []string
		for _, rc := range all {
			if rc.emu == emu {
				names = append(names, rc.name)
			}
		}
		if len(names) == 0 {
			continue
		}
		bad, err := w.badPasswords(ctx, emu, names)
		if err != nil {
			return err
		}
		r.BadPasswords += bad
		r.Unprotected += w.unprotected(emu, names)
	}
	r.RecoveredTwice = recoveredTwice(all)
	r.RecoveriesNotOwned = notOwned(all)
	left, err := w.cloneRecords(ctx, all)
	if err != nil {
		return err
	}
	r.CloneRecordsLeft = left

	w.recovered = append(w.recovered, all...)
	w.logf("deleting the %d recovered instances", len(all))
	for _, rc := range all {
		pi := &v1alpha1.PostgresqlInstance{}
		pi.SetName(rc.name)
		if err := w.c.Delete(ctx, pi); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	err = w.waitFor(ctx, "every recovered instance deleted", func() (bool, error) {
		for _, rc := range all {
			err := w.c.Get(ctx, client.ObjectKey{Name: rc.name}, &v1alpha1.PostgresqlInstance{})
			if err == nil {
				return false, nil
			}
			if !kerrors.IsNotFound(err) {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	r.SourceWrites = writesTo(sources, start, w.emu, w.sqlEmu)
	return nil
}

// watchPublished watches the connection secrets named in secrets (each to
// its recovered instance) until ctx ends, and returns what tells the
// recovered instances whose secret held one of passwords. A watch, not a
// poll: a password held between two polls would go unseen.
func (w *world) watchPublished(ctx context.Context, secrets map[string]string, passwords map[string]bool) (func() map[string]bool, error) {
	wc, err := client.NewWithWatch(w.env.Config, client.Options{Scheme: w.env.Scheme})
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	found := map[string]bool{}
	see := func(s *corev1.Secret) {
		if n, ok := secrets[s.Name]; ok && passwords[string(s.Data[cloudsql.ConnectionKeyPassword])] {
			mu.Lock()
			found[n] = true
			mu.Unlock()
		}
	}
	list := func() (string, error) {
		l := &corev1.SecretList{}
		if err := wc.List(ctx, l, client.InNamespace(secretNS)); err != nil {
			return "", err
		}
		for i := range l.Items {
			see(&l.Items[i])
		}
		return l.ResourceVersion, nil
	}
	rv, err := list()
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			wt, err := wc.Watch(ctx, &corev1.SecretList{}, client.InNamespace(secretNS), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range wt.ResultChan() {
				if s, ok := ev.Object.(*corev1.Secret); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					see(s)
					rv = s.ResourceVersion
				}
				if ev.Type == watch.Error {
					// Too old to resume from: start again from what
					// there is now.
					wt.Stop()
					if now, err := list(); err == nil {
						rv = now
					}
				}
			}
		}
	})
	return func() map[string]bool {
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return found
	}, nil
}

// recoveredTwice counts the recovered instances that Cloud SQL made more
// than once: a clone or restore operation that targets one, beyond the
// first. Each is an accepted instances.clone or instances.restoreBackup
// (Cloud SQL refuses a second of a name that exists, so a second means one
// was made, deleted and made again).
func recoveredTwice(all []recovered) int {
	ops := map[*emulator.Server]map[string]int{}
	n := 0
	for _, rc := range all {
		if ops[rc.emu] == nil {
			ops[rc.emu] = map[string]int{}
			for _, op := range rc.emu.Operations(project) {
				if op.OperationType == emulator.OpClone || op.OperationType == emulator.OpRestoreVolume {
					ops[rc.emu][op.TargetId]++
				}
			}
		}
		n += max(0, ops[rc.emu][rc.name]-1)
	}
	return n
}

// notOwned counts the recovered instances whose Cloud SQL owner label is
// not their object's UID (a clone's is its source's until relabelled).
func notOwned(all []recovered) int {
	n := 0
	for _, rc := range all {
		db, err := rc.emu.Instance(project, rc.name)
		if err != nil || db.Settings == nil || db.Settings.UserLabels[v1alpha1.OwnerUIDLabelKey] != rc.uid {
			n++
		}
	}
	return n
}

// cloneRecords counts the records that tie a clone to its object while it
// carries its source's label and are left once the recoveries are Done.
func (w *world) cloneRecords(ctx context.Context, all []recovered) (int, error) {
	l := &coordinationv1.LeaseList{}
	if err := w.c.List(ctx, l, client.InNamespace(core.DefaultRecordNamespace), client.MatchingLabels{tenancy.LabelRecord: tenancy.KindClone}); err != nil {
		return 0, err
	}
	n := 0
	for _, rec := range l.Items {
		if slices.ContainsFunc(all, func(rc recovered) bool { return rec.Annotations[v1alpha1.Group+"/instance"] == rc.name }) {
			n++
		}
	}
	return n, nil
}

// writesTo counts the requests, since start, that would change the instances
// named sources (or their users, databases and backups).
func writesTo(sources []string, start time.Time, emus ...*emulator.Server) int {
	n := 0
	for _, emu := range emus {
		if emu == nil {
			continue
		}
		for _, q := range emu.Requests() {
			if q.Project == project && q.Time.After(start) && slices.Contains(sources, q.Instance) && slices.Contains(sourceWrites, q.Method) {
				n++
			}
		}
	}
	return n
}
