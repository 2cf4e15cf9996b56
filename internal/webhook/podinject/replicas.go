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
	"maps"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

// LabelReplica tells the two kinds of secret that the injector copies into
// application namespaces apart. Both also carry v1alpha1.LabelInstance, with the
// name of the instance, and an owner reference to it, so that they go with it.
const LabelReplica = v1alpha1.Group + "/replica"

// Kinds of copied secret: the value of LabelReplica.
const (
	// ReplicaPgpass holds only the pgpass entry of the connection secret.
	ReplicaPgpass = "pgpass"
	// ReplicaProxyCredentials holds only the proxy's service-account key, under
	// ProxyCredentialsKey.
	ReplicaProxyCredentials = "proxy-credentials"
)

const (
	errGetReplica    = "cannot read secret %s/%s"
	errWriteReplica  = "cannot write secret %s/%s"
	errDeleteReplica = "cannot delete secret %s/%s"
	errNotOurReplica = "secret %s/%s already exists and was not copied for PostgresqlInstance %s (it lacks label %s=%s): delete or rename it so that the injector can use the name"
)

// maxNameLength is the longest name of a secret (a DNS subdomain).
const maxNameLength = 253

// ReplicaName is the name of the copied secret of a kind for a cluster-scoped
// instance: cloudsql-pgpass-<instance> or cloudsql-proxy-credentials-<instance>,
// shortened with a hash when the instance's name is too long for that.
func ReplicaName(kind, instance string) string {
	return replicaName("cloudsql-"+kind+"-", instance)
}

// NamespacedReplicaName is the name of the copied secret of a kind for a
// namespaced instance, cloudsql-m-<kind>-<instance>: no copy of a cluster-scoped
// instance has that prefix, so a namespaced instance and a cluster-scoped one of
// the same name never claim the same secret.
func NamespacedReplicaName(kind, instance string) string {
	return replicaName("cloudsql-m-"+kind+"-", instance)
}

func replicaName(prefix, instance string) string {
	name := prefix + instance
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(instance))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	return name[:maxNameLength-len(suffix)] + suffix
}

// replica is the secret of a kind that the injector keeps in namespace ns for t,
// holding value under key.
func replica(t target, ns, kind, key string, value []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      t.replicaName(kind),
			Labels:    map[string]string{t.label(): t.name(), LabelReplica: kind},
			// A namespaced object may be owned by a cluster-scoped one: the
			// garbage collector removes the copies with the instance even when
			// the provider does not run (the injector alone).
			OwnerReferences: []metav1.OwnerReference{t.owner()},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{key: value},
	}
}

// pgpassReplica is the copy of the password file of t in ns.
func pgpassReplica(t target, ns string, pgpass []byte) *corev1.Secret {
	return replica(t, ns, ReplicaPgpass, cloudsql.ConnectionKeyPgpass, pgpass)
}

// proxyCredentialsReplica is the copy of the proxy's key for t in ns.
func proxyCredentialsReplica(t target, ns string, key []byte) *corev1.Secret {
	return replica(t, ns, ReplicaProxyCredentials, ProxyCredentialsKey, key)
}

// current reports whether have already is want: same data, labels and owners.
func current(have, want *corev1.Secret) bool {
	if len(have.Data) != len(want.Data) {
		return false
	}
	for k, v := range want.Data {
		if !bytes.Equal(have.Data[k], v) {
			return false
		}
	}
	for k, v := range want.Labels {
		if have.Labels[k] != v {
			return false
		}
	}
	return len(have.OwnerReferences) == 1 && have.OwnerReferences[0].UID == want.OwnerReferences[0].UID
}

// ensureReplica creates want, or updates the secret of its name to it. It reads
// through live (uncached) so that it never acts on a stale copy, and refuses to
// take over a secret that it did not create.
func ensureReplica(ctx context.Context, live client.Reader, w client.Writer, want *corev1.Secret) error {
	return retry.OnError(retry.DefaultRetry, func(err error) bool {
		// Two pods admitted at once may both create, or both update.
		return kerrors.IsAlreadyExists(err) || kerrors.IsConflict(err)
	}, func() error {
		have := &corev1.Secret{}
		err := live.Get(ctx, types.NamespacedName{Namespace: want.Namespace, Name: want.Name}, have)
		if kerrors.IsNotFound(err) {
			return errors.Wrapf(w.Create(ctx, want.DeepCopy()), errWriteReplica, want.Namespace, want.Name)
		}
		if err != nil {
			return errors.Wrapf(err, errGetReplica, want.Namespace, want.Name)
		}
		label := instanceLabel(want)
		if have.Labels[label] != want.Labels[label] {
			return errors.Errorf(errNotOurReplica, want.Namespace, want.Name, want.Labels[label], label, want.Labels[label])
		}
		if current(have, want) {
			return nil
		}
		have.Data = want.Data
		if have.Labels == nil {
			have.Labels = map[string]string{}
		}
		maps.Copy(have.Labels, want.Labels)
		have.OwnerReferences = want.OwnerReferences
		return errors.Wrapf(w.Update(ctx, have), errWriteReplica, want.Namespace, want.Name)
	})
}

// settle deletes copy s when it should not be kept, or brings it to want (nil:
// leave it as it is).
func settle(ctx context.Context, live client.Reader, w client.Writer, log logging.Logger, s, want *corev1.Secret, keep bool) error {
	switch {
	case !keep:
		log.Debug("Deleting copied secret", "secret", s.Namespace+"/"+s.Name)
		if err := w.Delete(ctx, s); err != nil && !kerrors.IsNotFound(err) {
			return errors.Wrapf(err, errDeleteReplica, s.Namespace, s.Name)
		}
	case want != nil && !current(s, want):
		log.Debug("Refreshing copied secret", "secret", s.Namespace+"/"+s.Name)
		return ensureReplica(ctx, live, w, want)
	}
	return nil
}

// instanceLabel is the label of a copy that names its instance.
func instanceLabel(s *corev1.Secret) string {
	if _, ok := s.Labels[nsv1alpha1.LabelInstance]; ok {
		return nsv1alpha1.LabelInstance
	}
	return v1alpha1.LabelInstance
}

// listReplicas lists the secrets copied for the instance named instance, in every
// namespace, without caching every secret of the cluster.
func listReplicas(ctx context.Context, live client.Reader, instance string) ([]corev1.Secret, error) {
	l := &corev1.SecretList{}
	if err := live.List(ctx, l, client.MatchingLabels{v1alpha1.LabelInstance: instance}); err != nil {
		return nil, err
	}
	// The label alone is not enough: anyone who can write a secret can set it, and
	// the refresher deletes what it lists. Copies also have the copies' names.
	names := map[string]bool{ReplicaName(ReplicaPgpass, instance): true, ReplicaName(ReplicaProxyCredentials, instance): true}
	out := l.Items[:0]
	for _, s := range l.Items {
		if names[s.Name] {
			out = append(out, s)
		}
	}
	return out, nil
}
