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

// Package budgetlease keeps the Cloud SQL request budget's record (what it
// admitted in the last minute) in a Lease of the provider's namespace, shared
// by every replica: each merges its admissions into the record and the others'
// into its window, so that the leader's controllers and every replica's
// admission lookups count against one quota, and a replica that becomes leader
// (after a crash, a restart, a rolling update) does not spend again what the
// previous leader already spent.
package budgetlease

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	coordinationv1 "k8s.io/api/coordination/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
)

// AnnotationRecord holds the record, as JSON, on the Lease.
const AnnotationRecord = v1alpha1.Group + "/budget-record"

// DefaultName is the Lease's name.
const DefaultName = "provider-cloudsql-postgres-budget"

// syncEvery is how often each replica merges the record into its window and
// its own admissions into the record.
const syncEvery = time.Second

// Unrecorded is how long a process may have sent requests after its last
// saved record: a save a second, and one that takes as long again.
const Unrecorded = 2 * syncEvery

// flushTimeout bounds the last save of a stopping process.
const flushTimeout = 2 * time.Second

// saveBackoff spaces the retries of a save that lost a race to another
// replica. Client-go's DefaultRetry (5 tries, 10ms apart, little jitter) keeps
// two replicas that sync together in lockstep, so both can run out of tries;
// doubling, fully jittered waits (about 2.5s at most) pull them apart.
var saveBackoff = wait.Backoff{Steps: 8, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 1}

// restoreTimeout bounds the restore of a new leader, which holds its
// controllers' requests until it is done.
const restoreTimeout = 10 * time.Second

const (
	errGet     = "cannot read the request budget's record from Lease %s"
	errSave    = "cannot save the request budget's record in Lease %s"
	errDecode  = "cannot decode the request budget's record in Lease %s (annotation %s); the next save replaces it"
	errEncode  = "cannot encode the request budget's record"
	errRestore = "the leader starts without the record of the previous one: it may send, in its first minute, requests that the previous leader already counted against the quota"
	errSync    = "cannot share the request budget's record with the other replicas: their requests and this replica's are counted apart until it can"
)

// A Keeper shares a window's record through a Lease with the other replicas,
// and restores the previous leader's record when this replica becomes leader.
type Keeper struct {
	reader client.Reader
	writer client.Client
	key    types.NamespacedName
	window *budget.Window
	log    logging.Logger

	// restored closes once this replica leads and has restored the record.
	restored chan struct{}
	once     sync.Once
	// kick asks for a save before the next tick: the window admits only so
	// many requests beyond the last saved record.
	kick chan struct{}
}

// New returns a Keeper of window's record in the Lease key, read through
// reader (uncached: the provider may read only its own namespace's leases) and
// written through writer.
func New(reader client.Reader, writer client.Client, key types.NamespacedName, window *budget.Window, log logging.Logger) *Keeper {
	k := &Keeper{reader: reader, writer: writer, key: key, window: window, log: log, restored: make(chan struct{}), kick: make(chan struct{}, 1)}
	window.BoundUnrecorded(func() {
		select {
		case k.kick <- struct{}{}:
		default:
		}
	})
	return k
}

// Restore counts in the window what the previous leader recorded, and what it
// may have sent unrecorded (see budget.Window.Restore), on top of what the
// window holds. When the record cannot be read, it logs why and counts only
// what may have gone unrecorded, since the provider must still reconcile.
func (k *Keeper) Restore(ctx context.Context) {
	r, _, err := k.read(ctx)
	if err != nil {
		k.log.Info(errRestore, "error", err.Error())
	}
	k.window.Restore(r, Unrecorded)
	k.log.Debug("Restored the request budget's record", "lease", k.key.String(), "requests", len(r.Admitted), "written", r.Written)
}

// Sync merges the record into the window, then saves in the record what the
// window admitted that the record lacks, with optimistic concurrency: a
// replica never overwrites another's admissions, it merges with them.
func (k *Keeper) Sync(ctx context.Context) error {
	return retry.OnError(saveBackoff, func(err error) bool {
		return kerrors.IsConflict(err) || kerrors.IsAlreadyExists(err)
	}, func() error { return k.sync(ctx) })
}

// Start syncs every second until ctx ends, then once more, so that what this
// replica admitted while stopping is counted by the one that takes over. Every
// replica runs it (it implements manager.Runnable and needs no leadership):
// the admission webhooks, served by every replica, spend the same quota.
func (k *Keeper) Start(ctx context.Context) error {
	t := time.NewTicker(syncEvery)
	defer t.Stop()
	for {
		if err := k.Sync(ctx); err != nil {
			k.log.Debug(errSync, "error", err)
		}
		select {
		case <-t.C:
		case <-k.kick:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	if err := k.Sync(fctx); err != nil {
		k.log.Debug(errSync, "error", err)
	}
	return nil
}

// NeedLeaderElection says that every replica shares its record.
func (k *Keeper) NeedLeaderElection() bool { return false }

// Leading is the runnable that, once this replica leads, restores the
// previous leader's record and then lets the requests that Gate holds go.
func (k *Keeper) Leading() manager.Runnable { return leading{k: k} }

// Gate holds every request sent through next until this replica leads and has
// restored the previous leader's record, so that the controllers, which start
// once it leads (in no set order with Leading), cannot spend before that
// record is counted. Admission lookups, which every replica makes, must not
// go through it.
func (k *Keeper) Gate(next http.RoundTripper) http.RoundTripper { return gate{k: k, next: next} }

type leading struct{ k *Keeper }

func (l leading) Start(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, restoreTimeout)
	l.k.Restore(rctx)
	cancel()
	l.k.once.Do(func() { close(l.k.restored) })
	l.k.log.Info("Leading: the request budget counts what the previous leader spent", "lease", l.k.key.String())
	<-ctx.Done()
	return nil
}

func (l leading) NeedLeaderElection() bool { return true }

type gate struct {
	k    *Keeper
	next http.RoundTripper
}

// PerMinute is the limit of the budget the gated transport sends within.
func (g gate) PerMinute() int { return budget.PerMinuteOf(g.next) }

func (g gate) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case <-g.k.restored:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return g.next.RoundTrip(req)
}

// read returns the record held by the Lease, and the Lease (nil when there is
// none). A record that cannot be decoded is logged and taken as empty: the
// next save replaces it.
func (k *Keeper) read(ctx context.Context) (budget.Record, *coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	err := k.reader.Get(ctx, k.key, l)
	if kerrors.IsNotFound(err) {
		return budget.Record{}, nil, nil
	}
	if err != nil {
		return budget.Record{}, nil, errors.Wrapf(err, errGet, k.key)
	}
	var r budget.Record
	raw, ok := l.GetAnnotations()[AnnotationRecord]
	if !ok {
		return r, l, nil
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		k.log.Info(errSync, "error", errors.Wrapf(err, errDecode, k.key, AnnotationRecord).Error())
		return budget.Record{}, l, nil
	}
	return r, l, nil
}

func (k *Keeper) sync(ctx context.Context) error {
	stored, l, err := k.read(ctx)
	if err != nil {
		return err
	}
	k.window.Merge(stored)
	r := k.window.Record()
	if holds(stored, r) {
		k.window.Recorded(r)
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return errors.Wrap(err, errEncode)
	}
	if l == nil {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: k.key.Namespace, Name: k.key.Name,
			Annotations: map[string]string{AnnotationRecord: string(b)}}}
		if err := k.writer.Create(ctx, l); err != nil {
			return errors.Wrapf(err, errSave, k.key)
		}
		k.window.Recorded(r)
		return nil
	}
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[AnnotationRecord] = string(b)
	// The Lease as read, resourceVersion included: a replica that saved in
	// between makes this a conflict, and the next try merges its record.
	if err := k.writer.Update(ctx, l); err != nil {
		return errors.Wrapf(err, errSave, k.key)
	}
	k.window.Recorded(r)
	return nil
}

// holds reports whether stored holds every admission of r (as often).
func holds(stored, r budget.Record) bool {
	n := map[int64]int{}
	for _, t := range stored.Admitted {
		n[t.UnixNano()]++
	}
	for _, t := range r.Admitted {
		k := t.UnixNano()
		if n[k] == 0 {
			return false
		}
		n[k]--
	}
	return true
}
