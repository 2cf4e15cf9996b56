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

package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

const (
	errNoConnectionSecret = "spec.writeConnectionSecretToRef is not set: a generated password is stored there before Cloud SQL is given it, so that it is never lost; name a secret there"
	errReadSecret         = "cannot read connection secret %s/%s"
	errWriteSecret        = "cannot store the password of user %s in connection secret %s/%s"
	errSecretNotOurs      = "connection secret %s/%s belongs to another object: point spec.writeConnectionSecretToRef at a secret of its own"
	errGenerate           = "cannot generate a new password for login %s"
	errCompleteSecret     = "cannot write the connection details into connection secret %s/%s (of type %s)"
	errPasswordUnusable   = "connection secret %s/%s: key password holds a line break or a NUL character, which a .pgpass entry (key pgpass) cannot carry: " +
		"store a password without them there, or remove the key to have the provider set a new one; this is retried at the poll interval"
)

// UnusablePassword is a stored password that cannot be published: only an
// edit of the secret fixes it.
type UnusablePassword struct{ Message string }

func (e UnusablePassword) Error() string { return e.Message }

// IsUnusablePassword says whether err is, or wraps, an UnusablePassword.
func IsUnusablePassword(err error) bool {
	var u UnusablePassword
	return errors.As(err, &u)
}

// SecretHolder is an object whose connection secret holds a login's
// Get: a PostgresqlInstance (postgres's), or a PostgresqlUser (its own).
type SecretHolder interface {
	resource.Object
	ConnectionSecret() *xpv2.SecretReference
}

// Passwords keeps logins' passwords in their objects' connection secrets (an
// instance's postgres password, a user's own). A password is written there
// before Cloud SQL is told about it, so that no crash can leave a login whose
// Get nobody knows.
type Passwords struct {
	kube   client.Client
	reader client.Reader
	// now is the clock of the password-set-at records and rotations.
	now func() time.Time
	// owner is the kind of the instances whose secrets these are, for the
	// secrets' owner references.
	owner schema.GroupVersionKind
}

// NewPasswords returns the password store of the objects of kind owner (the
// kind that controls their connection secrets). reader should not cache
// every secret of the cluster.
func NewPasswords(kube client.Client, reader client.Reader, owner schema.GroupVersionKind) *Passwords {
	return &Passwords{kube: kube, reader: reader, owner: owner, now: time.Now}
}

// A StoredPassword is the password in the connection secret, and whether it is
// known to be set on Cloud SQL.
type StoredPassword struct {
	// Value is the password; empty when none is stored.
	Value string
	// Unconfirmed is true when the password is not known to be set on the
	// instance: generated and not yet set, or edited in the secret since the
	// provider set it.
	Unconfirmed bool
	// Unrecorded is true for a secret written before fingerprints were kept:
	// its password is taken as set, and its fingerprint recorded.
	Unrecorded bool
	// setAt is when the provider last set the password (zero: unknown).
	setAt time.Time
	// operation is the users.update operation that sets an unconfirmed
	// password (empty: none sent, or not known).
	operation string
	// CompleteHere holds the connection secret when this object controls it
	// but it is not of crossplane's connection-secret type (Opaque, say):
	// crossplane-runtime publishes nothing into such a secret, and a secret's
	// type cannot change, so Observe completes it.
	CompleteHere *corev1.Secret
}

// Confirmed says whether the password is known to be set on Cloud SQL.
func (pw StoredPassword) Confirmed() bool { return pw.Value != "" && !pw.Unconfirmed }

// Get returns the stored password; an empty value when there is no secret or
// no password in it.
func (s *Passwords) Get(ctx context.Context, mg SecretHolder) (StoredPassword, error) {
	ref := mg.ConnectionSecret()
	if ref == nil {
		return StoredPassword{}, nil
	}
	sec := &corev1.Secret{}
	err := s.reader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, sec)
	if kerrors.IsNotFound(err) {
		return StoredPassword{}, nil
	}
	if err != nil {
		return StoredPassword{}, errors.Wrapf(err, errReadSecret, ref.Namespace, ref.Name)
	}
	// Another object's password is neither ours to use nor to overwrite.
	if c := metav1.GetControllerOf(sec); c != nil && c.UID != mg.GetUID() {
		return StoredPassword{}, errors.Errorf(errSecretNotOurs, ref.Namespace, ref.Name)
	}
	value := string(sec.Data[cloudsql.ConnectionKeyPassword])
	if strings.ContainsAny(value, "\n\r\x00") {
		return StoredPassword{}, UnusablePassword{Message: fmt.Sprintf(errPasswordUnusable, ref.Namespace, ref.Name)}
	}
	fp, recorded := sec.GetAnnotations()[v1alpha1.AnnotationPasswordSHA256]
	pw := StoredPassword{
		Value:       value,
		Unconfirmed: sec.GetAnnotations()[v1alpha1.AnnotationPasswordUnconfirmed] == "true" || (recorded && value != "" && fp != Fingerprint(mg, value)),
		Unrecorded:  !recorded && value != "",
	}
	if t, err := time.Parse(time.RFC3339, sec.GetAnnotations()[v1alpha1.AnnotationPasswordSetAt]); err == nil {
		pw.setAt = t
	}
	if pw.Unconfirmed {
		pw.operation = sec.GetAnnotations()[v1alpha1.AnnotationPasswordOperation]
	}
	if c := metav1.GetControllerOf(sec); c != nil && sec.Type != resource.SecretTypeConnection {
		pw.CompleteHere = sec
	}
	return pw, nil
}

// Complete writes the connection details into a connection secret that
// crossplane-runtime does not publish into (see StoredPassword.completeHere),
// when any differs.
func (s *Passwords) Complete(ctx context.Context, sec *corev1.Secret, details map[string][]byte) error {
	changed := false
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	for k, v := range details {
		if !bytes.Equal(sec.Data[k], v) {
			sec.Data[k] = v
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return errors.Wrapf(s.kube.Update(ctx, sec), errCompleteSecret, sec.Namespace, sec.Name, sec.Type)
}

// Store writes the password of login (with the username, pgpass and url
// entries derived from it) into the connection secret, creating the secret when needed.
// unconfirmed marks a password that is about to be set on an existing instance.
func (s *Passwords) Store(ctx context.Context, mg SecretHolder, login, password string, unconfirmed bool) error {
	return s.write(ctx, mg, login, password, unconfirmed, "")
}

// StoreSending is Store of an unconfirmed password with the users.update
// operation that sets it (see AnnotationPasswordOperation).
func (s *Passwords) StoreSending(ctx context.Context, mg SecretHolder, login, password, operation string) error {
	return s.write(ctx, mg, login, password, true, operation)
}

// write stores login's password in mg's connection secret, with the
// users.update operation that sets it when one was sent.
func (s *Passwords) write(ctx context.Context, mg SecretHolder, login, password string, unconfirmed bool, operation string) error {
	ref := mg.ConnectionSecret()
	if ref == nil {
		return errors.New(errNoConnectionSecret)
	}
	data := map[string][]byte{
		cloudsql.ConnectionKeyUsername: []byte(login),
		cloudsql.ConnectionKeyPassword: []byte(password),
		cloudsql.ConnectionKeyPgpass:   []byte(cloudsql.Pgpass(cloudsql.ProxyAddress, "*", login, password)),
		cloudsql.ConnectionKeyURL:      []byte(cloudsql.URL(login, password, "")),
	}
	sec := &corev1.Secret{}
	err := s.reader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, sec)
	switch {
	case kerrors.IsNotFound(err):
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       ref.Namespace,
				Name:            ref.Name,
				OwnerReferences: []metav1.OwnerReference{meta.AsController(meta.TypedReferenceTo(mg, s.owner))},
			},
			Type: resource.SecretTypeConnection,
		}
		sec.Data = data
		if unconfirmed {
			meta.AddAnnotations(sec, map[string]string{v1alpha1.AnnotationPasswordUnconfirmed: "true"})
		} else {
			meta.AddAnnotations(sec, map[string]string{
				v1alpha1.AnnotationPasswordSHA256: Fingerprint(mg, password),
				v1alpha1.AnnotationPasswordSetAt:  s.now().UTC().Format(time.RFC3339),
			})
		}
		return errors.Wrapf(s.kube.Create(ctx, sec), errWriteSecret, login, ref.Namespace, ref.Name)
	case err != nil:
		return errors.Wrapf(err, errReadSecret, ref.Namespace, ref.Name)
	}
	if c := metav1.GetControllerOf(sec); c != nil && c.UID != mg.GetUID() {
		return errors.Errorf(errSecretNotOurs, ref.Namespace, ref.Name)
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	// The URL keeps the database the secret names (a PostgresqlUser's).
	data[cloudsql.ConnectionKeyURL] = []byte(cloudsql.URL(login, password, string(sec.Data[cloudsql.ConnectionKeyDatabase])))
	for k, v := range data {
		sec.Data[k] = v
	}
	meta.RemoveAnnotations(sec, v1alpha1.AnnotationPasswordOperation)
	if unconfirmed {
		meta.AddAnnotations(sec, map[string]string{v1alpha1.AnnotationPasswordUnconfirmed: "true"})
		if operation != "" {
			meta.AddAnnotations(sec, map[string]string{v1alpha1.AnnotationPasswordOperation: operation})
		}
	} else {
		fp := Fingerprint(mg, password)
		a := sec.GetAnnotations()
		if a[v1alpha1.AnnotationPasswordSHA256] != fp || a[v1alpha1.AnnotationPasswordSetAt] == "" {
			// A password set now (or first recorded): rotation counts from here.
			meta.AddAnnotations(sec, map[string]string{v1alpha1.AnnotationPasswordSetAt: s.now().UTC().Format(time.RFC3339)})
		}
		meta.RemoveAnnotations(sec, v1alpha1.AnnotationPasswordUnconfirmed)
		meta.AddAnnotations(sec, map[string]string{v1alpha1.AnnotationPasswordSHA256: fp})
	}
	return errors.Wrapf(s.kube.Update(ctx, sec), errWriteSecret, login, ref.Namespace, ref.Name)
}

// Rotate replaces a confirmed password whose rotation is due (rotationDue)
// with a new generated one, stored unconfirmed before Cloud SQL is given it:
// the caller sets it as it sets a lost or edited password, and a crash in
// between leaves the new password in the secret, to be set by the next
// reconcile. A confirmed password with no record of when it was set gets one
// (now), so that a rotation added to a fleet starts its period rather than
// rotating everything at once. period 0: no rotation.
func (s *Passwords) Rotate(ctx context.Context, mg SecretHolder, login string, pw StoredPassword, period time.Duration) (StoredPassword, error) {
	if period <= 0 || pw.Value == "" || pw.Unconfirmed {
		return pw, nil
	}
	if pw.setAt.IsZero() {
		return pw, s.Store(ctx, mg, login, pw.Value, false)
	}
	if !rotationDue(pw.setAt, period, string(mg.GetUID()), s.now()) {
		return pw, nil
	}
	gen, err := cloudsql.GeneratePassword()
	if err != nil {
		return pw, errors.Wrapf(err, errGenerate, login)
	}
	if err := s.Store(ctx, mg, login, gen, true); err != nil {
		return pw, err
	}
	return StoredPassword{Value: gen, Unconfirmed: true}, nil
}

// rotationSpread is the share of a rotation period, at its end, over which
// the rotations of logins whose passwords were set at the same time are
// spread (by their objects' UIDs).
const rotationSpread = 0.1

// rotationDue says whether a password set at setAt is due for rotation at now,
// with the given period: at setAt + period, less a part of the period's last
// tenth that key (the object's UID) picks, the same at every reconcile.
func rotationDue(setAt time.Time, period time.Duration, key string, now time.Time) bool {
	if period <= 0 || setAt.IsZero() {
		return false
	}
	spread := int64(float64(period) * rotationSpread)
	var early time.Duration
	if spread > 0 {
		h := sha256.Sum256([]byte(key))
		early = time.Duration(binary.BigEndian.Uint64(h[:8]) % uint64(spread))
	}
	return !now.Before(setAt.Add(period - early))
}

// Fingerprint identifies a password set on mg's instance without revealing it to
// whoever may read the secret's annotations but not its data: the password is
// 190 random bits unless someone chose it.
func Fingerprint(mg SecretHolder, password string) string {
	sum := sha256.Sum256([]byte("cloudsql-postgres\x00" + string(mg.GetUID()) + "\x00" + password))
	return hex.EncodeToString(sum[:])
}

// A PasswordChange is what became of the users.update that sets an
// unconfirmed password.
type PasswordChange int

const (
	// ChangeUnsent: no users.update is known to have been sent (or the one
	// sent failed): send one.
	ChangeUnsent PasswordChange = iota
	// ChangeRunning: its operation is not done yet: wait.
	ChangeRunning
	// ChangeDone: its operation is done without an error: the password is
	// confirmed.
	ChangeDone
)

const errGetPasswordOperation = "cannot read operation %s, which sets the password of login %s"

// Settle confirms an unconfirmed password whose users.update operation is
// done without an error. Cloud SQL answers users.update with an operation,
// and the password changes only if that operation succeeds: confirming it on
// the answer alone would record as set a password that a failed operation
// never set, and lose it. A failed operation, or one Cloud SQL no longer
// knows, is sent again.
func (s *Passwords) Settle(ctx context.Context, ops *sqladmin.OperationsService, project string, mg SecretHolder, login string, pw StoredPassword) (StoredPassword, PasswordChange, error) {
	if !pw.Unconfirmed || pw.Value == "" || pw.operation == "" {
		return pw, ChangeUnsent, nil
	}
	op, err := ops.Get(project, pw.operation).Context(ctx).Do()
	switch {
	case cloudsql.IsNotFound(err):
		return pw, ChangeUnsent, nil
	case err != nil:
		return pw, ChangeRunning, errors.Wrapf(err, errGetPasswordOperation, pw.operation, login)
	case op.Status != cloudsql.OperationDone:
		return pw, ChangeRunning, nil
	case cloudsql.OperationFailed(op):
		return pw, ChangeUnsent, nil
	}
	if err := s.Store(ctx, mg, login, pw.Value, false); err != nil {
		return pw, ChangeDone, err
	}
	// Read back: the record of when it was set is new too, and a rotation
	// must not count from the one before.
	pw, err = s.Get(ctx, mg)
	return pw, ChangeDone, err
}
