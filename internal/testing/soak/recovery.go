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
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/controller/core"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

// plainRecoverySources is how many instances without PostgreSQL may be
// cloned (now and at a point in time): their recoveries cost the machine
// nothing, those of the instances with PostgreSQL a server each.
const plainRecoverySources = 2

// The ways the soak recovers an instance: a clone now, a clone at a point
// in time, a restore of a PostgresqlBackup (of an instance with PostgreSQL
// only: the soak backs up no other).
const (
	kindClone   = "-clone"
	kindPITR    = "-pitr"
	kindRestore = "-restore"
)

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

// A planned recovery is of kind from source.
type planned struct {
	source, kind string
}

// recoveryPlan lists n recoveries (all when n is negative) from the instances
// with PostgreSQL, sql, and the others, plain: each round gives every source
// one recovery, each of a kind the source has not had yet, the kinds
// staggered across sources, so that a few recoveries cover every kind and
// many sources.
func recoveryPlan(sql, plain []string, n int) []planned {
	var out []planned
	kinds := []string{kindClone, kindPITR, kindRestore}
	for round := range kinds {
		for i, src := range sql {
			out = append(out, planned{src, kinds[(i+round)%len(kinds)]})
		}
		if round < 2 {
			for i, src := range plain {
				out = append(out, planned{src, kinds[(i+round)%2]})
			}
		}
	}
	if n >= 0 && n < len(out) {
		out = out[:n]
	}
	return out
}

// withPITR turns point-in-time recovery on, for the sources of clones at a
// point in time.
func withPITR(pi *v1alpha1.PostgresqlInstance) *v1alpha1.PostgresqlInstance {
	pi.Spec.ForProvider.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true, LogRetentionDays: pitrLogDays}
	return pi
}

// recoverInstances makes, all at once while the provider is killed, the
// recoveries recoveryPlan lists from the instances with PostgreSQL and from
// plain: clones now, clones at a point in time, and restores of the first
// PostgresqlBackup of an instance with PostgreSQL (which takeBackups took,
// and are deleted only after). It waits until each is Ready with its
// recovery Done, then counts the recoveries whose connection secret ever
// held a source's postgres password, those created twice, those without
// their own owner label, and the writes the sources received; then it
// deletes them, without waiting: deleteAll waits for them.
func (w *world) recoverInstances(ctx context.Context, plain []string, r *Report) error {
	var all []recovered
	var objs []*v1alpha1.PostgresqlInstance
	// A second ago, and a second earlier once metav1.Time drops the
	// fraction: after the sources were made (and their backups taken),
	// within the window of their logs.
	at := metav1.NewTime(time.Now().Add(-time.Second))
	var sources []string
	for _, p := range recoveryPlan(w.sqlAll, plain, w.o.Recoveries) {
		pi, emu := newInstance(p.source+p.kind), w.emu
		if slices.Contains(w.sqlAll, p.source) {
			pi, emu = newSQLInstance(p.source+p.kind), w.sqlEmu
		}
		s := v1alpha1.Source{Instance: p.source}
		switch p.kind {
		case kindPITR:
			s.PointInTime = &at
		case kindRestore:
			s = v1alpha1.Source{Backup: backupName(p.source, 0)}
		}
		pi.Spec.ForProvider.Source = &s
		objs = append(objs, pi)
		all = append(all, recovered{name: pi.Name, source: p.source, emu: emu})
		if !slices.Contains(sources, p.source) {
			sources = append(sources, p.source)
		}
	}
	if len(all) == 0 {
		return nil
	}
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
	took := map[string]time.Duration{}
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
			} else if _, ok := took[all[i].name]; !ok {
				took[all[i].name] = time.Since(start).Round(time.Second)
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
	w.logf("recoveries Done after: %v", took)

	// The secrets are settled: the watch has seen what there was to see.
	stopWatching()
	<-published.done
	ever := published.seen()
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
	r.SourceWrites = writesTo(sources, start, w.emu, w.sqlEmu)
	// Deleted while the later phases run, and the provider is killed; the
	// final deletion waits for them with the others.
	w.logf("deleting the %d recovered instances", len(all))
	for _, rc := range all {
		pi := &v1alpha1.PostgresqlInstance{}
		pi.SetName(rc.name)
		if err := w.c.Delete(ctx, pi); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// A secretWatch records the recovered instances whose connection secret
// held a source's password, until done is closed.
type secretWatch struct {
	done  chan struct{}
	mu    sync.Mutex
	found map[string]bool
}

// seen names the recovered instances whose secret held a source's password
// so far.
func (sw *secretWatch) seen() map[string]bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return maps.Clone(sw.found)
}

// watchPublished watches the connection secrets named in secrets (each to
// its recovered instance) until ctx ends, recording those that hold one of
// passwords. A watch, not a poll: a password held between two polls would
// go unseen.
func (w *world) watchPublished(ctx context.Context, secrets map[string]string, passwords map[string]bool) (*secretWatch, error) {
	wc, err := client.NewWithWatch(w.env.Config, client.Options{Scheme: w.env.Scheme})
	if err != nil {
		return nil, err
	}
	sw := &secretWatch{done: make(chan struct{}), found: map[string]bool{}}
	see := func(s *corev1.Secret) {
		if n, ok := secrets[s.Name]; ok && passwords[string(s.Data[cloudsql.ConnectionKeyPassword])] {
			sw.mu.Lock()
			sw.found[n] = true
			sw.mu.Unlock()
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
	go func() {
		defer close(sw.done)
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
	}()
	return sw, nil
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
