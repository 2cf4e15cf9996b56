package podinject

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// ReplicaName is the name of the copied secret of a kind for an instance:
// cloudsql-pgpass-<instance> or cloudsql-proxy-credentials-<instance>, shortened
// with a hash when the instance's name is too long for that.
func ReplicaName(kind, instance string) string {
	name := "cloudsql-" + kind + "-" + instance
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(instance))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	return name[:maxNameLength-len(suffix)] + suffix
}

// replica is the secret of a kind that the injector keeps in namespace ns for pi,
// holding value under key.
func replica(pi *v1alpha1.PostgresqlInstance, ns, kind, key string, value []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      ReplicaName(kind, pi.Name),
			Labels:    map[string]string{v1alpha1.LabelInstance: pi.Name, LabelReplica: kind},
			// A namespaced object may be owned by a cluster-scoped one: the
			// garbage collector removes the copies with the instance even when
			// the provider does not run (the injector alone).
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.SchemeGroupVersion.String(),
				Kind:       v1alpha1.PostgresqlInstanceKind,
				Name:       pi.Name,
				UID:        pi.UID,
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{key: value},
	}
}

// pgpassReplica is the copy of the password file of pi in ns.
func pgpassReplica(pi *v1alpha1.PostgresqlInstance, ns string, pgpass []byte) *corev1.Secret {
	return replica(pi, ns, ReplicaPgpass, cloudsql.ConnectionKeyPgpass, pgpass)
}

// proxyCredentialsReplica is the copy of the proxy's key for pi in ns.
func proxyCredentialsReplica(pi *v1alpha1.PostgresqlInstance, ns string, key []byte) *corev1.Secret {
	return replica(pi, ns, ReplicaProxyCredentials, ProxyCredentialsKey, key)
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
		if have.Labels[v1alpha1.LabelInstance] != want.Labels[v1alpha1.LabelInstance] {
			return errors.Errorf(errNotOurReplica, want.Namespace, want.Name, want.Labels[v1alpha1.LabelInstance], v1alpha1.LabelInstance, want.Labels[v1alpha1.LabelInstance])
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
