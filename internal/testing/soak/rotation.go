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
	"sync"
	"sync/atomic"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

const (
	// rotations is how many times each user's password is rotated.
	rotations = 2
	// followLag is how long after its connection secret settles (a password
	// that has stopped changing and is confirmed) a client may still fail:
	// an injected pod's password file follows the secret within the
	// kubelet's sync period, which a client here does not wait for.
	followLag = 10 * time.Second
	// clientEvery is how often each client connects.
	clientEvery = 250 * time.Millisecond
)

// rotateLogins gives every user a rotation period and rotates each one's
// password rotations times (by putting the secret's record of when it was
// set an hour and more back), killing the provider within two seconds of each
// round's start, with a client per
// user connecting all along with the password its secret holds. It counts the
// clients' failed connections once their secret had settled for followLag,
// and then the users whose secret lost the password Cloud SQL has.
func (w *world) rotateLogins(ctx context.Context, r *Report) error {
	w.logf("rotating the %d users' passwords %d times, with a client per user connecting every %s", len(w.logins), rotations, clientEvery)
	for _, l := range w.logins {
		if err := w.updateUser(ctx, l.object, func(u *v1alpha1.PostgresqlUser) {
			u.Spec.ForProvider.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: time.Hour}}
		}); err != nil {
			return err
		}
	}

	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var attempts, failed atomic.Int64
	for _, l := range w.logins {
		wg.Go(func() { w.client(cctx, l, &attempts, &failed) })
	}
	defer func() {
		stop()
		wg.Wait()
		r.ClientConnections, r.FailedConnections = int(attempts.Load()), int(failed.Load())
	}()

	start := time.Now()
	for round := range rotations {
		old := map[string]string{}
		for _, l := range w.logins {
			var pw string
			if err := w.updateSecret(ctx, l.object, func(s *corev1.Secret) {
				pw = string(s.Data[cloudsql.ConnectionKeyPassword])
				s.Annotations[v1alpha1.AnnotationPasswordSetAt] = time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
			}); err != nil {
				return err
			}
			old[l.object] = pw
		}
		// Killed while it rotates (storing the new passwords, or setting
		// them), whatever the killer's schedule.
		time.Sleep(time.Duration(rand.Int64N(int64(2 * time.Second))))
		if err := w.kill(); err != nil {
			return err
		}
		r.RotationKills++
		if err := w.waitFor(ctx, "every user's password rotated", func() (bool, error) {
			for _, l := range w.logins {
				s, err := w.loginSecret(ctx, l.object)
				if err != nil {
					return false, err
				}
				pw := string(s.Data[cloudsql.ConnectionKeyPassword])
				if pw == old[l.object] || s.Annotations[v1alpha1.AnnotationPasswordUnconfirmed] == "true" || !w.sqlEmu.PasswordIs(project, l.instance, l.object, pw) {
					return false, nil
				}
			}
			return true, nil
		}); err != nil {
			return err
		}
		r.Rotations += len(w.logins)
		w.logf("rotation %d of every user's password done after %s", round+1, time.Since(start).Round(time.Second))
	}
	// Clients keep connecting past the last rotation's settling.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(followLag + 2*time.Second):
	}
	lost, err := w.lostPasswords(ctx)
	r.LostPasswords += lost
	return err
}

// client connects as l's login with the password its connection secret
// holds, every clientEvery, until ctx ends. A refusal counts as failed only
// when the secret's password had not changed, and had been confirmed, for
// followLag: before that an injected pod's file may not have followed yet,
// or the provider (killed) may not have set the new password yet.
func (w *world) client(ctx context.Context, l login, attempts, failed *atomic.Int64) {
	var last string
	settled := time.Now()
	for ctx.Err() == nil {
		s, err := w.loginSecret(ctx, l.object)
		if err == nil {
			pw := string(s.Data[cloudsql.ConnectionKeyPassword])
			if pw != last || s.Annotations[v1alpha1.AnnotationPasswordUnconfirmed] == "true" {
				last, settled = pw, time.Now()
			}
			attempts.Add(1)
			if !w.sqlEmu.PasswordIs(project, l.instance, l.object, pw) && time.Since(settled) > followLag {
				failed.Add(1)
				w.logf("client of PostgresqlUser %s refused with the password its secret has held, confirmed, for %s", l.object, time.Since(settled).Round(time.Second))
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(clientEvery):
		}
	}
}

func (w *world) loginSecret(ctx context.Context, user string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	return s, w.c.Get(ctx, client.ObjectKey{Namespace: secretNS, Name: user + loginSecretSuffix}, s)
}

// updateUser changes the PostgresqlUser named with fn, again on conflicts.
func (w *world) updateUser(ctx context.Context, name string, fn func(*v1alpha1.PostgresqlUser)) error {
	for {
		u := &v1alpha1.PostgresqlUser{}
		if err := w.c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return err
		}
		fn(u)
		err := w.c.Update(ctx, u)
		if !kerrors.IsConflict(err) {
			return errors.Wrapf(err, "cannot update PostgresqlUser %s", name)
		}
	}
}

// updateSecret changes the connection secret of the user named with fn,
// again on conflicts (the provider writes it too).
func (w *world) updateSecret(ctx context.Context, user string, fn func(*corev1.Secret)) error {
	for {
		s, err := w.loginSecret(ctx, user)
		if err != nil {
			return err
		}
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		fn(s)
		err = w.c.Update(ctx, s)
		if !kerrors.IsConflict(err) {
			return errors.Wrapf(err, "cannot update the connection secret of PostgresqlUser %s", user)
		}
	}
}
