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

package podinject

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/intern"
)

// LabelCopyKind tells the two kinds of secret that the injector copies into
// application namespaces apart. Both also carry v1alpha1.LabelInstance, with the
// name of the instance, and an owner reference to it, so that they go with it.
// The label's key keeps the word "replica" that copies on clusters carry.
const LabelCopyKind = v1alpha1.Group + "/replica"

// Kinds of copied secret: the value of LabelCopyKind.
const (
	// CopyPgpass holds only the pgpass entry of the connection secret.
	CopyPgpass = "pgpass"
	// CopyProxyCredentials holds only the proxy's service-account key, under
	// ProxyCredentialsKey.
	CopyProxyCredentials = "proxy-credentials"
)

// AnnotationDataHash on a copy is the SHA-256 of what it holds: the copy reconciler
// reads copies from a cache of secrets' metadata, and tells from it alone
// whether a copy is current.
const AnnotationDataHash = v1alpha1.Group + "/data-sha256"

const (
	errGetCopy    = "cannot read secret %s/%s"
	errWriteCopy  = "cannot write secret %s/%s"
	errDeleteCopy = "cannot delete secret %s/%s"
	errNotOurCopy = "secret %s/%s already exists and was not copied for %s (it lacks label %s=%s or an owner reference to the instance): delete or rename it so that the injector can use the name"
	errListCopies = "cannot list the secrets labelled %s=%s"
)

// maxNameLength is the longest name of a secret (a DNS subdomain).
const maxNameLength = 253

// CopyName is the name of the copied secret of a kind for a cluster-scoped
// instance: cloudsql-pgpass-<instance> or cloudsql-proxy-credentials-<instance>,
// shortened with a hash when the instance's name is too long for that.
func CopyName(kind, instance string) string {
	return copyName("cloudsql-"+kind+"-", instance)
}

// NamespacedCopyName is the name of the copied secret of a kind for a
// namespaced instance, cloudsql-m-<kind>-<instance>: no copy of a cluster-scoped
// instance has that prefix, so a namespaced instance and a cluster-scoped one of
// the same name never claim the same secret.
func NamespacedCopyName(kind, instance string) string {
	return copyName("cloudsql-m-"+kind+"-", instance)
}

func copyName(prefix, instance string) string {
	name := prefix + instance
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(instance))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	return name[:maxNameLength-len(suffix)] + suffix
}

// copySecret is the secret of a kind that the injector keeps in namespace ns for t,
// holding value under key.
func copySecret(t target, ns, kind, key string, value []byte) *corev1.Secret {
	data := map[string][]byte{key: value}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   ns,
			Name:        t.copyName(kind),
			Labels:      map[string]string{t.label(): t.name(), LabelCopyKind: kind},
			Annotations: map[string]string{AnnotationDataHash: dataHash(data)},
			// A namespaced object may be owned by a cluster-scoped one: the
			// garbage collector removes the copies with the instance even when
			// the provider does not run (the injector alone).
			OwnerReferences: []metav1.OwnerReference{t.owner()},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
}

// dataHash is the SHA-256 of a secret's data, keys in order.
func dataHash(data map[string][]byte) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		// Lengths first: no two different maps write the same bytes.
		_, _ = fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(data[k]))
		_, _ = h.Write(data[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// pgpassCopy is the copy of the password file of t in ns.
func pgpassCopy(t target, ns string, pgpass []byte) *corev1.Secret {
	return copySecret(t, ns, CopyPgpass, cloudsql.ConnectionKeyPgpass, pgpass)
}

// proxyKeyCopy is the copy of the proxy's key for t in ns.
func proxyKeyCopy(t target, ns string, key []byte) *corev1.Secret {
	return copySecret(t, ns, CopyProxyCredentials, ProxyCredentialsKey, key)
}

// current reports whether have already is want: same data, labels, annotation
// and owners.
func current(have, want *corev1.Secret) bool {
	if len(have.Data) != len(want.Data) {
		return false
	}
	for k, v := range want.Data {
		if !bytes.Equal(have.Data[k], v) {
			return false
		}
	}
	return currentMeta(have, want)
}

// currentMeta reports whether the metadata of have is want's: the same labels,
// owner and hash of the data. The copy reconciler, which sees only metadata, takes a
// copy with want's hash for one that holds want's data.
func currentMeta(have metav1.Object, want *corev1.Secret) bool {
	for k, v := range want.Labels {
		if have.GetLabels()[k] != v {
			return false
		}
	}
	owners := have.GetOwnerReferences()
	return have.GetAnnotations()[AnnotationDataHash] == want.Annotations[AnnotationDataHash] &&
		len(owners) == 1 && owners[0].UID == want.OwnerReferences[0].UID
}

// ownedBy reports whether s names owner (its API group, kind and name) in an
// owner reference, and with owner's UID unless anyUID. The injector sets that
// reference on every copy it makes; a secret that someone else made with a
// copy's name and labels has none to the instance's UID, which they cannot
// choose, and is neither written nor deleted by the copy reconcilers.
func ownedBy(s metav1.Object, owner metav1.OwnerReference, anyUID bool) bool {
	want, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return false
	}
	for _, o := range s.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err == nil && gv.Group == want.Group && o.Kind == owner.Kind && o.Name == owner.Name && (anyUID || o.UID == owner.UID) {
			return true
		}
	}
	return false
}

// ensureCopy creates want, or updates the secret of its name to it. It reads
// through live (uncached) so that it never acts on a stale copy, and refuses to
// take over a secret that it did not create.
func ensureCopy(ctx context.Context, live client.Reader, w client.Writer, want *corev1.Secret) error {
	return retry.OnError(retry.DefaultRetry, func(err error) bool {
		// Two pods admitted at once may both create, or both update.
		return kerrors.IsAlreadyExists(err) || kerrors.IsConflict(err)
	}, func() error {
		have := &corev1.Secret{}
		err := live.Get(ctx, types.NamespacedName{Namespace: want.Namespace, Name: want.Name}, have)
		if kerrors.IsNotFound(err) {
			return errors.Wrapf(w.Create(ctx, want.DeepCopy()), errWriteCopy, want.Namespace, want.Name)
		}
		if err != nil {
			return errors.Wrapf(err, errGetCopy, want.Namespace, want.Name)
		}
		// A copy of an instance that was deleted and created again names the
		// old one's UID: the name and kind are enough to take it over here,
		// where the pod's namespace has just been allowed the new one.
		label := copyLabel(want)
		if have.Labels[label] != want.Labels[label] || !ownedBy(have, want.OwnerReferences[0], true) {
			return errors.Errorf(errNotOurCopy, want.Namespace, want.Name, ownerString(want.OwnerReferences[0]), label, want.Labels[label])
		}
		if current(have, want) {
			return nil
		}
		have.Data = want.Data
		if have.Labels == nil {
			have.Labels = map[string]string{}
		}
		maps.Copy(have.Labels, want.Labels)
		if have.Annotations == nil {
			have.Annotations = map[string]string{}
		}
		maps.Copy(have.Annotations, want.Annotations)
		have.OwnerReferences = want.OwnerReferences
		return errors.Wrapf(w.Update(ctx, have), errWriteCopy, want.Namespace, want.Name)
	})
}

// ownerString names the owner of a copy in messages.
func ownerString(o metav1.OwnerReference) string {
	gv, _ := schema.ParseGroupVersion(o.APIVersion)
	return fmt.Sprintf("%s %q (%s)", o.Kind, o.Name, gv.Group)
}

// settle deletes copy s (its metadata) when it should not be kept, or brings it
// to want (nil: leave it as it is).
func settle(ctx context.Context, live client.Reader, w client.Writer, log logging.Logger, s *metav1.PartialObjectMetadata, want *corev1.Secret, keep bool) error {
	switch {
	case !keep:
		log.Debug("Deleting copied secret", "secret", s.Namespace+"/"+s.Name)
		// Only the copy that was judged: a secret made again under its name
		// since has another UID.
		del := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name}}
		if err := w.Delete(ctx, del, client.Preconditions{UID: &s.UID}); err != nil && !kerrors.IsNotFound(err) && !kerrors.IsConflict(err) {
			return errors.Wrapf(err, errDeleteCopy, s.Namespace, s.Name)
		}
	case want != nil && !currentMeta(s, want):
		log.Debug("Refreshing copied secret", "secret", s.Namespace+"/"+s.Name)
		return ensureCopy(ctx, live, w, want)
	}
	return nil
}

// copyLabel is the label of a copy that names its instance or user.
func copyLabel(s *corev1.Secret) string {
	for _, l := range []string{nsv1alpha1.LabelInstance, v1alpha1.LabelUser, nsv1alpha1.LabelUser} {
		if _, ok := s.Labels[l]; ok {
			return l
		}
	}
	return v1alpha1.LabelInstance
}

// Cache index of the metadata of secrets: the instance whose copy a secret may
// be, by its label, for secrets that also have that copy's name.
const indexCopyOf = "podinject.copyOf"

// Values of indexCopyOf: the kind of instance and its name, or the
// cluster-scoped user's name.
func clusterCopyKey(instance string) string    { return "cluster/" + instance }
func namespacedCopyKey(instance string) string { return "namespaced/" + instance }
func userCopyKey(user string) string           { return "user/" + user }

// copyKeys are the index values of a secret: what it may be a copy of, judged
// by its labels and name only (the copy reconcilers check its owner).
func copyKeys(o client.Object) []string {
	var keys []string
	if n := o.GetLabels()[v1alpha1.LabelInstance]; n != "" && copyKind(o.GetName(), n, CopyName) != "" {
		keys = append(keys, clusterCopyKey(n))
	}
	if n := o.GetLabels()[nsv1alpha1.LabelInstance]; n != "" && copyKind(o.GetName(), n, NamespacedCopyName) != "" {
		keys = append(keys, namespacedCopyKey(n))
	}
	if n := o.GetLabels()[v1alpha1.LabelUser]; n != "" && o.GetName() == UserCopyName(n) {
		keys = append(keys, userCopyKey(n))
	}
	return keys
}

// copyKind is the kind of copy (CopyPgpass or CopyProxyCredentials) that
// a secret of this name is for instance, or "" when the name is no copy's.
// The name decides, never a label: anyone who can write a secret can label it.
func copyKind(name, instance string, copyName func(kind, instance string) string) string {
	for _, kind := range []string{CopyPgpass, CopyProxyCredentials} {
		if name == copyName(kind, instance) {
			return kind
		}
	}
	return ""
}

// secretMetadata is the metadata of a secret, as the cache of secrets' metadata
// holds it.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// listCopies lists, from the cache of secrets' metadata, the secrets named and
// labelled as copies by key (copyKeys), in namespace ns or in every namespace
// when ns is empty. An index serves it: no request to the API server, and no
// walk through every secret of the cluster.
func listCopies(ctx context.Context, cache client.Reader, ns, key string) ([]metav1.PartialObjectMetadata, error) {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	opts := []client.ListOption{client.MatchingFields{indexCopyOf: key}}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := cache.List(ctx, l, opts...); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// indexed records the managers whose cache has indexCopyOf.
var indexed sync.Map

// indexCopies adds indexCopyOf to mgr's cache, once: the injector and the
// copy reconciler need it, and an informer takes indexes only before it starts.
func indexCopies(mgr ctrl.Manager) error {
	if _, done := indexed.LoadOrStore(mgr, true); done {
		return nil
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), secretMetadata(), indexCopyOf, copyKeys); err != nil {
		indexed.Delete(mgr)
		return errors.Wrap(err, errIndex)
	}
	return nil
}

// SecretCacheOptions is how the manager's cache must hold secrets, which only
// the copy reconcilers read from it (metadata): without the managed fields and the
// last applied configuration, which holds the whole data of a secret applied
// with kubectl and should not sit in the provider's memory, and with one copy
// of the strings many secrets repeat (intern.Objects). The provider and
// its tests take it from here, so that they cannot differ.
func SecretCacheOptions() cache.ByObject {
	return cache.ByObject{Transform: transformSecretMetadata}
}

// transformSecretMetadata is the cache transform of secrets (see
// SecretCacheOptions).
func transformSecretMetadata(o any) (any, error) {
	if m, ok := o.(metav1.Object); ok {
		m.SetManagedFields(nil)
		if a := m.GetAnnotations(); a != nil {
			delete(a, corev1.LastAppliedConfigAnnotation)
			m.SetAnnotations(a)
		}
	}
	return intern.Objects(o)
}
