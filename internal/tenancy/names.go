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

package tenancy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	coordinationv1 "k8s.io/api/coordination/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Kinds of names.
const (
	KindLogin    = "login"
	KindDatabase = "database"
	// KindClone is a Cloud SQL instance that an object made as a clone of
	// another: until the object gives it its own owner label, the clone
	// carries the source's, and only this record says it is the object's.
	KindClone = "clone"
)

// Labels and annotations of a record, so that `kubectl get leases -l
// cloudsql.travelaudience.com/name-record` shows who holds what.
const (
	LabelRecord          = v1alpha1.Group + "/name-record"
	annotationProject    = v1alpha1.Group + "/project"
	annotationInstance   = v1alpha1.Group + "/instance"
	annotationName       = v1alpha1.Group + "/name"
	annotationHolder     = v1alpha1.Group + "/holder"
	annotationHolderGVK  = v1alpha1.Group + "/holder-gvk"
	annotationHow        = v1alpha1.Group + "/how"
	annotationSince      = v1alpha1.Group + "/since"
	recordPrefix         = "cloudsql-"
	markerName           = "cloudsql-name-records"
	defaultMemoTTL       = 10 * time.Minute
	errReadRecord        = "cannot read the record of who holds %s (Lease %s/%s): check that the provider may read Leases in its namespace"
	errWriteRecord       = "cannot record that %s holds %s (Lease %s/%s): check that the provider may write Leases in its namespace; nothing is changed on Cloud SQL until it can"
	errReleaseRecord     = "cannot release the record of %s held by %s (Lease %s/%s)"
	errReadHolder        = "cannot read %s, which the record of %s names as its holder"
	errReadMarker        = "cannot read or write Lease %s/%s, which says since when the provider records who holds each login and database: check that the provider may read and write Leases in its namespace"
	errHeldFmt           = "%s is held by %s, which created it (or took it over first): this object never changes, gives away or drops it; give this one another name, or ask the team of %s to delete it first"
	recordHolderIdentity = "uid/"
)

// Ways a name comes to be held, recorded for the people who read the record.
const (
	// Created: the object made the login or database.
	Created = "created"
	// Imported: it existed, nobody held it, and the instance's import
	// policy let the object take it over.
	Imported = "imported"
	// Migrated: the object managed it before the provider recorded
	// holders.
	Migrated = "migrated"
)

// A Name is a login or a database of one Cloud SQL instance.
type Name struct {
	// Kind is KindLogin or KindDatabase.
	Kind     string
	Project  string
	Instance string
	Name     string
}

// String names n in messages.
func (n Name) String() string {
	return fmt.Sprintf("%s %s of Cloud SQL instance %s in project %s", n.Kind, n.Name, n.Instance, n.Project)
}

// record is the name of n's Lease: a digest, since logins may hold
// characters a Kubernetes name may not, and names of any length.
func (n Name) record() string {
	sum := sha256.Sum256([]byte(n.Project + "\x00" + n.Instance + "\x00" + n.Name))
	return recordPrefix + n.Kind + "-" + hex.EncodeToString(sum[:20])
}

// A Holder is the object that holds a name.
type Holder struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	UID       types.UID
}

// HolderOf is obj, of kind gvk, as a holder.
func HolderOf(obj client.Object, gvk schema.GroupVersionKind) Holder {
	return Holder{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()}
}

// String names h in messages, as kubectl would find it.
func (h Holder) String() string {
	if h.Namespace == "" {
		return fmt.Sprintf("%s %s (cluster-scoped, %s)", h.GVK.Kind, h.Name, h.GVK.Group)
	}
	return fmt.Sprintf("%s %s/%s (%s)", h.GVK.Kind, h.Namespace, h.Name, h.GVK.Group)
}

// A HeldError says that another live object holds a name.
type HeldError struct {
	Name   Name
	Holder Holder
}

func (e *HeldError) Error() string {
	return fmt.Sprintf(errHeldFmt, e.Name, e.Holder, e.Holder)
}

// HeldBy returns the holder that err says holds a name, if it says so.
func HeldBy(err error) (Holder, bool) {
	var h *HeldError
	if errors.As(err, &h) {
		return h.Holder, true
	}
	return Holder{}, false
}

// Records keeps which object holds each login and database, one Lease per
// name in the provider's own namespace: no team writes there, a Lease's
// creation is atomic (two objects racing for a name cannot both win), and
// it outlives the provider's restarts. Holders are read through the API
// server, not a cache; what this replica confirmed is remembered a while, so
// that the steady state costs no request.
type Records struct {
	kube      client.Client
	live      client.Reader
	namespace string
	ttl       time.Duration
	now       func() time.Time
	// started is when these records were made, at the provider's start:
	// the latest time the marker may say (Since).
	started time.Time

	mu   sync.Mutex
	memo map[string]memo
	// since is when the provider first recorded holders; zero until read.
	since time.Time
}

type memo struct {
	uid types.UID
	at  time.Time
}

// NewRecords returns the records kept in namespace, written through kube and
// read through live, which should not be a cache.
func NewRecords(kube client.Client, live client.Reader, namespace string) *Records {
	return &Records{kube: kube, live: live, namespace: namespace, ttl: defaultMemoTTL, now: time.Now, started: time.Now(), memo: map[string]memo{}}
}

// Since is when the provider began to record holders: objects created
// before it may have made their logins and databases without a record
// (Migrated). It is recorded once, the first time it is asked for, as the
// time these records were made: an object created after the provider
// started, and before the first question, is never taken for one made
// before (it could otherwise take over a name no object holds).
func (r *Records) Since(ctx context.Context) (time.Time, error) {
	r.mu.Lock()
	since := r.since
	r.mu.Unlock()
	if !since.IsZero() {
		return since, nil
	}
	l := &coordinationv1.Lease{}
	key := types.NamespacedName{Namespace: r.namespace, Name: markerName}
	err := r.live.Get(ctx, key, l)
	if kerrors.IsNotFound(err) {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: r.namespace, Name: markerName,
			Annotations: map[string]string{annotationSince: r.started.UTC().Format(time.RFC3339)}}}
		err = r.kube.Create(ctx, l)
		if kerrors.IsAlreadyExists(err) {
			err = r.live.Get(ctx, key, l)
		}
	}
	if err != nil {
		return time.Time{}, errors.Wrapf(err, errReadMarker, r.namespace, markerName)
	}
	since, err = time.Parse(time.RFC3339, l.Annotations[annotationSince])
	if err != nil {
		// A marker someone edited: the record starts now.
		since = l.CreationTimestamp.Time
	}
	r.mu.Lock()
	r.since = since
	r.mu.Unlock()
	return since, nil
}

// Holder returns the live object that holds n, if any. A record whose object
// is gone (deleted, or replaced by another of the same name) holds nothing.
// asker is the object that asks: when the memo says it holds n, no request
// is made.
func (r *Records) Holder(ctx context.Context, n Name, asker Holder) (*Holder, error) {
	rec := n.record()
	if r.remembered(rec, asker.UID) {
		return &asker, nil
	}
	l, err := r.get(ctx, n, rec)
	if err != nil || l == nil {
		return nil, err
	}
	h, ok := holderOf(l)
	if !ok {
		return nil, nil
	}
	if h.UID == asker.UID {
		r.remember(rec, h.UID)
		return &h, nil
	}
	alive, err := r.alive(ctx, n, h)
	if err != nil || !alive {
		return nil, err
	}
	return &h, nil
}

// Claim records that h holds n, as how (Created, Imported, Migrated). It
// returns a HeldError when another live object holds n; a record of an
// object that is gone is taken over. fresh says that h did not hold n before.
func (r *Records) Claim(ctx context.Context, n Name, h Holder, how string) (fresh bool, err error) {
	rec := n.record()
	if r.remembered(rec, h.UID) {
		return false, nil
	}
	l, err := r.get(ctx, n, rec)
	if err != nil {
		return false, err
	}
	if l == nil {
		l = r.lease(n, rec, h, how)
		err := r.kube.Create(ctx, l)
		if kerrors.IsAlreadyExists(err) {
			// Another object won the race: it holds the name.
			return r.Claim(ctx, n, h, how)
		}
		if err != nil {
			return false, errors.Wrapf(err, errWriteRecord, h, n, r.namespace, rec)
		}
		r.remember(rec, h.UID)
		return true, nil
	}
	held, ok := holderOf(l)
	if ok && held.UID == h.UID {
		// Ours already: how it came to be held stays as recorded (an
		// import stays an import, however the next create calls it).
		r.remember(rec, h.UID)
		return false, nil
	}
	if ok {
		alive, err := r.alive(ctx, n, held)
		if err != nil {
			return false, err
		}
		if alive {
			return false, &HeldError{Name: n, Holder: held}
		}
	}
	// Its holder is gone: written with the version read, so that of two
	// objects taking over a stale record only one wins.
	want := r.lease(n, rec, h, how)
	l.Labels, l.Annotations, l.Spec = want.Labels, want.Annotations, want.Spec
	if err := r.kube.Update(ctx, l); err != nil {
		if kerrors.IsConflict(err) {
			return r.Claim(ctx, n, h, how)
		}
		return false, errors.Wrapf(err, errWriteRecord, h, n, r.namespace, rec)
	}
	r.remember(rec, h.UID)
	return true, nil
}

// How is how h came to hold n (what Claim was told), or "" when h does
// not hold n.
func (r *Records) How(ctx context.Context, n Name, h Holder) (string, error) {
	l, err := r.get(ctx, n, n.record())
	if err != nil || l == nil {
		return "", err
	}
	if held, ok := holderOf(l); !ok || held.UID != h.UID {
		return "", nil
	}
	return l.Annotations[annotationHow], nil
}

// Release removes the record of n if h holds it: the login or database is
// gone, or no longer managed (deletionPolicy Orphan).
func (r *Records) Release(ctx context.Context, n Name, h Holder) error {
	rec := n.record()
	r.mu.Lock()
	delete(r.memo, rec)
	r.mu.Unlock()
	l, err := r.get(ctx, n, rec)
	if err != nil || l == nil {
		return err
	}
	if held, ok := holderOf(l); ok && held.UID != h.UID {
		return nil
	}
	err = r.kube.Delete(ctx, l, client.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion})
	if err != nil && !kerrors.IsNotFound(err) && !kerrors.IsConflict(err) {
		return errors.Wrapf(err, errReleaseRecord, n, h, r.namespace, rec)
	}
	return nil
}

func (r *Records) get(ctx context.Context, n Name, rec string) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	err := r.live.Get(ctx, types.NamespacedName{Namespace: r.namespace, Name: rec}, l)
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, errReadRecord, n, r.namespace, rec)
	}
	return l, nil
}

// alive says whether h still exists as the object that took the record.
func (r *Records) alive(ctx context.Context, n Name, h Holder) (bool, error) {
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(h.GVK)
	err := r.live.Get(ctx, types.NamespacedName{Namespace: h.Namespace, Name: h.Name}, o)
	if kerrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, errors.Wrapf(err, errReadHolder, h, n)
	}
	return o.GetUID() == h.UID, nil
}

func (r *Records) remembered(rec string, uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.memo[rec]
	return ok && m.uid == uid && r.now().Sub(m.at) < r.ttl
}

func (r *Records) remember(rec string, uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.memo[rec] = memo{uid: uid, at: r.now()}
}

func (r *Records) lease(n Name, rec string, h Holder, how string) *coordinationv1.Lease {
	id := recordHolderIdentity + string(h.UID)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: r.namespace, Name: rec,
			Labels: map[string]string{LabelRecord: n.Kind},
			Annotations: map[string]string{
				annotationProject: n.Project, annotationInstance: n.Instance, annotationName: n.Name,
				annotationHolder: holderRef(h), annotationHolderGVK: h.GVK.GroupVersion().String() + ", Kind=" + h.GVK.Kind,
				annotationHow: how,
			},
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &id},
	}
}

// holderRef is namespace/name, or name for a cluster-scoped holder.
func holderRef(h Holder) string {
	if h.Namespace == "" {
		return h.Name
	}
	return h.Namespace + "/" + h.Name
}

// holderOf reads the holder of a record; false for a record without one
// (edited by hand): it holds nothing.
func holderOf(l *coordinationv1.Lease) (Holder, bool) {
	if l.Spec.HolderIdentity == nil || len(*l.Spec.HolderIdentity) <= len(recordHolderIdentity) {
		return Holder{}, false
	}
	gvk, ok := parseGVK(l.Annotations[annotationHolderGVK])
	if !ok {
		return Holder{}, false
	}
	h := Holder{GVK: gvk, UID: types.UID((*l.Spec.HolderIdentity)[len(recordHolderIdentity):])}
	ref := l.Annotations[annotationHolder]
	if ns, name, namespaced := strings.Cut(ref, "/"); namespaced {
		h.Namespace, h.Name = ns, name
	} else {
		h.Name = ref
	}
	return h, h.Name != ""
}

// parseGVK reads "group/version, Kind=kind", as schema.GroupVersionKind
// prints itself.
func parseGVK(s string) (schema.GroupVersionKind, bool) {
	gv, kind, ok := strings.Cut(s, ", Kind=")
	if !ok || kind == "" {
		return schema.GroupVersionKind{}, false
	}
	v, err := schema.ParseGroupVersion(gv)
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	return v.WithKind(kind), true
}
