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
	"net/http"
	"slices"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// guardedDeletes deletes the instances named names without the
// allow-deletion annotation (the soak's API server runs no admission webhook,
// so only the controller's own check stands between them and Cloud SQL),
// waits until each object says why it is kept, and counts the writes the
// provider made to them meanwhile and those left unprotected. Then it gives
// the annotation back, and the final deletion takes them.
func (w *world) guardedDeletes(ctx context.Context, names []string, r *Report) error {
	w.logf("deleting %d instances without the allow-deletion annotation", len(names))
	start := time.Now()
	for _, n := range names {
		if err := w.update(ctx, n, func(pi *v1alpha1.PostgresqlInstance) {
			delete(pi.Annotations, v1alpha1.AnnotationAllowDeletion)
		}); err != nil {
			return err
		}
		pi := &v1alpha1.PostgresqlInstance{}
		pi.SetName(n)
		if err := w.c.Delete(ctx, pi); err != nil {
			return err
		}
	}
	err := w.waitFor(ctx, "every unannotated deletion refused", func() (bool, error) {
		for _, n := range names {
			pi := &v1alpha1.PostgresqlInstance{}
			if err := w.c.Get(ctx, client.ObjectKey{Name: n}, pi); err != nil {
				return false, err
			}
			if !strings.Contains(pi.GetCondition(xpv2.TypeSynced).Message, "without the annotation "+v1alpha1.AnnotationAllowDeletion) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, q := range w.emu.Requests() {
		if q.Project == project && q.HTTPMethod != http.MethodGet && q.Time.After(start) && slices.Contains(names, q.Instance) {
			r.UnallowedWrites++
		}
	}
	r.Unprotected += w.unprotected(w.emu, names)
	for _, n := range names {
		if err := w.update(ctx, n, func(pi *v1alpha1.PostgresqlInstance) {
			pi.Annotations[v1alpha1.AnnotationAllowDeletion] = "true"
		}); err != nil {
			return err
		}
	}
	return nil
}

// unprotected counts the instances named names that emu has, live, without
// Cloud SQL's deletion protection, which every instance the soak creates
// has by default.
func (w *world) unprotected(emu *emulator.Server, names []string) int {
	n := 0
	for _, name := range names {
		db, err := emu.Instance(project, name)
		if err == nil && db.State == emulator.StateRunnable && (db.Settings == nil || !db.Settings.DeletionProtectionEnabled) {
			n++
		}
	}
	return n
}

// finalBackups counts the instances named names, all deleted, of which emu
// lists no final backup, and those of which it lists more than one.
func finalBackups(emu *emulator.Server, names []string) (lost, twice int) {
	finals := map[string]int{}
	for _, b := range emu.Backups(project) {
		if b.Type == emulator.BackupFinal {
			finals[b.Instance]++
		}
	}
	for _, n := range names {
		switch {
		case finals[n] == 0:
			lost++
		case finals[n] > 1:
			twice++
		}
	}
	return lost, twice
}
