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
// admitted in the last minute) in a Lease of the provider's namespace, so that
// a provider that restarts, crashes or loses its leadership does not spend
// again what the previous process already spent of the project's quota.
package budgetlease

import (
	"context"
	"encoding/json"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	coordinationv1 "k8s.io/api/coordination/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
)

// AnnotationRecord holds the record, as JSON, on the Lease.
const AnnotationRecord = v1alpha1.Group + "/budget-record"

// DefaultName is the Lease's name.
const DefaultName = "provider-cloudsql-postgres-budget"

// saveEvery is how often the record is saved while the budget admits requests.
const saveEvery = time.Second

// Unrecorded is how long a process may have sent requests after its last
// saved record: a save a second, and one that takes as long again.
const Unrecorded = 2 * saveEvery

const (
	errGet     = "cannot read the request budget's record from Lease %s"
	errSave    = "cannot save the request budget's record in Lease %s"
	errDecode  = "cannot decode the request budget's record in Lease %s (annotation %s)"
	errEncode  = "cannot encode the request budget's record"
	errRestore = "the request budget starts without the record of the previous process: it may send, in its first minute, requests that the previous one already counted against the quota"
)

// A Keeper restores the record into a window at start, and saves it while the
// window admits requests.
type Keeper struct {
	reader client.Reader
	writer client.Client
	key    types.NamespacedName
	window *budget.Window
	log    logging.Logger

	// last is the newest admission of the last saved record.
	last time.Time
}

// New returns a Keeper of window's record in the Lease key, read through
// reader (uncached: the provider may read only its own namespace's leases) and
// written through writer.
func New(reader client.Reader, writer client.Client, key types.NamespacedName, window *budget.Window, log logging.Logger) *Keeper {
	return &Keeper{reader: reader, writer: writer, key: key, window: window, log: log}
}

// Restore counts in the window what the previous process recorded (see
// budget.Window.Restore). With no record, nothing is restored; when the record
// cannot be read, it logs why and restores nothing, since the provider must
// still start.
func (k *Keeper) Restore(ctx context.Context) {
	l := &coordinationv1.Lease{}
	err := k.reader.Get(ctx, k.key, l)
	if kerrors.IsNotFound(err) {
		return
	}
	if err != nil {
		k.log.Info(errRestore, "error", errors.Wrapf(err, errGet, k.key).Error())
		return
	}
	raw, ok := l.GetAnnotations()[AnnotationRecord]
	if !ok {
		return
	}
	var r budget.Record
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		k.log.Info(errRestore, "error", errors.Wrapf(err, errDecode, k.key, AnnotationRecord).Error())
		return
	}
	k.window.Restore(r, Unrecorded)
	k.log.Debug("Restored the request budget's record", "lease", k.key.String(), "requests", len(r.Admitted), "written", r.Written)
}

// Start saves the record every second in which the window admitted something,
// until ctx ends. It implements manager.Runnable.
func (k *Keeper) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := k.save(ctx); err != nil {
			k.log.Debug("Cannot save the request budget's record", "error", err)
		}
	}, saveEvery)
	return nil
}

// NeedLeaderElection says that only the leader, which runs the controllers,
// saves: a replica that only serves webhooks would overwrite its record.
func (k *Keeper) NeedLeaderElection() bool { return true }

func (k *Keeper) save(ctx context.Context) error {
	r := k.window.Record()
	if len(r.Admitted) == 0 || !r.Admitted[len(r.Admitted)-1].After(k.last) {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return errors.Wrap(err, errEncode)
	}
	l := &coordinationv1.Lease{}
	err = k.reader.Get(ctx, k.key, l)
	switch {
	case kerrors.IsNotFound(err):
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: k.key.Namespace, Name: k.key.Name,
			Annotations: map[string]string{AnnotationRecord: string(b)}}}
		err = k.writer.Create(ctx, l)
	case err == nil:
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[AnnotationRecord] = string(b)
		err = k.writer.Update(ctx, l)
	}
	if err != nil {
		return errors.Wrapf(err, errSave, k.key)
	}
	k.last = r.Admitted[len(r.Admitted)-1]
	return nil
}
