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
	"fmt"
	"net/http"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// backupsPerInstance is how many PostgresqlBackups the soak takes of each
// instance that runs PostgreSQL.
const backupsPerInstance = 2

// backupName names the PostgresqlBackup i of instance.
func backupName(instance string, i int) string {
	return fmt.Sprintf("%s-b%d", instance, i)
}

// takeBackups creates backupsPerInstance PostgresqlBackups of each instance
// that runs PostgreSQL, all at once, while the provider is killed; waits
// until each is Ready; and counts the runs taken more than once and the
// Ready ones whose run Cloud SQL does not list. They stay for the
// recoveries, which restore some; deleteBackups deletes them.
func (w *world) takeBackups(ctx context.Context, r *Report) error {
	var names []string
	for _, inst := range w.sqlAll {
		for i := range backupsPerInstance {
			b := &v1alpha1.PostgresqlBackup{ObjectMeta: metav1.ObjectMeta{Name: backupName(inst, i)}}
			b.Spec.ForProvider.Instance = inst
			meta.AddAnnotations(b, map[string]string{v1alpha1.AnnotationAllowDeletion: "true"})
			if err := w.c.Create(ctx, b); err != nil {
				return err
			}
			names = append(names, b.Name)
		}
	}
	w.logf("taking %d PostgresqlBackups of the instances with PostgreSQL", len(names))
	ids := map[string]string{}
	err := w.waitFor(ctx, "every backup Ready", func() (bool, error) {
		for _, n := range names {
			b := &v1alpha1.PostgresqlBackup{}
			if err := w.c.Get(ctx, client.ObjectKey{Name: n}, b); err != nil {
				return false, err
			}
			if b.GetCondition(xpv2.TypeReady).Status != corev1.ConditionTrue {
				return false, nil
			}
			ids[n] = b.Status.AtProvider.ID
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	r.Backups = len(names)
	inserted := 0
	for _, q := range w.sqlEmu.Requests() {
		if q.Project == project && q.Method == emulator.MethodBackupRunsInsert && q.Status == http.StatusOK {
			inserted++
		}
	}
	r.BackupsTwice = max(0, inserted-len(names))
	listed := onDemandBackups(w.sqlEmu)
	for _, id := range ids {
		if !listed[id] {
			r.BackupsLost++
		}
	}
	w.backupIDs = ids
	return nil
}

// deleteBackups deletes the PostgresqlBackups that takeBackups took (with
// the allow-deletion annotation), waits until they are gone and counts the
// runs left.
func (w *world) deleteBackups(ctx context.Context, r *Report) error {
	for n := range w.backupIDs {
		b := &v1alpha1.PostgresqlBackup{}
		b.SetName(n)
		if err := w.c.Delete(ctx, b); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	err := w.waitFor(ctx, "every backup deleted", func() (bool, error) {
		l := &v1alpha1.PostgresqlBackupList{}
		if err := w.c.List(ctx, l); err != nil {
			return false, err
		}
		return len(l.Items) == 0, nil
	})
	if err != nil {
		return err
	}
	listed := onDemandBackups(w.sqlEmu)
	for _, id := range w.backupIDs {
		if listed[id] {
			r.BackupsLeft++
		}
	}
	return nil
}

// onDemandBackups are the IDs of the on-demand backups emu lists.
func onDemandBackups(emu *emulator.Server) map[string]bool {
	ids := map[string]bool{}
	for _, b := range emu.Backups(project) {
		if b.Type == emulator.BackupOnDemand {
			ids[b.Name[strings.LastIndex(b.Name, "/")+1:]] = true
		}
	}
	return ids
}
