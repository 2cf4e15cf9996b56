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

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/budget"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/providerproc"
)

const errDenied = "%s was not admitted: %w"

// createPhase is what the create phase measured: instances and their
// databases and users applied one by one through the webhooks, as users
// apply them, and timed to Ready.
type createPhase struct {
	instances, objects           int
	instancesReady, objectsReady int
	// instancesAt and objectsAt are when the last instance, the last
	// object, was seen Ready (polled every 10 s); took is the whole phase.
	instancesAt, objectsAt, took time.Duration
	// requests are the phase's Cloud SQL requests by method; admission
	// those that the webhooks' name checks sent; throttled the 429s.
	requests             map[string]int
	admission, throttled int
	busiest              int
}

// holdWebhooks takes the provider's webhook configurations out of the API
// server and returns them, so that the imported fleet is written as it
// stands before the provider runs.
func holdWebhooks(ctx context.Context, c client.Client) ([]client.Object, error) {
	var held []client.Object
	vs := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := c.List(ctx, vs); err != nil {
		return nil, err
	}
	for i := range vs.Items {
		held = append(held, &vs.Items[i])
	}
	ms := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	if err := c.List(ctx, ms); err != nil {
		return nil, err
	}
	for i := range ms.Items {
		held = append(held, &ms.Items[i])
	}
	for _, o := range held {
		if err := c.Delete(ctx, o); err != nil {
			return nil, err
		}
	}
	return held, nil
}

// restoreWebhooks puts the held webhook configurations back.
func restoreWebhooks(ctx context.Context, c client.Client, held []client.Object) error {
	for _, o := range held {
		o.SetResourceVersion("")
		o.SetUID("")
		if err := c.Create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// createNew applies -create new instances and their objects, where this
// mode is among -create-modes, and waits for all of them to be Ready.
func (b *bench) createNew(ctx context.Context) error {
	if b.o.create == 0 || !slices.Contains(b.o.createModes, b.mode) {
		return nil
	}
	if err := restoreWebhooks(ctx, b.env.Client, b.webhooks); err != nil {
		return err
	}
	cp := &b.r.cp
	cp.instances = b.o.create
	cp.objects = b.o.create * (b.o.createDatabases + b.o.createUsers)
	fmt.Fprintf(os.Stderr, "    applying %d new instances with %d databases and %d users each, one by one through the webhooks\n",
		b.o.create, b.o.createDatabases, b.o.createUsers)
	before := time.Now()
	t := time.Now()
	if err := parallel(b.o.create, 8, func(i int) error { return b.apply(ctx, i) }); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "    applied in %s\n", time.Since(t).Round(time.Second))
	for time.Since(t) < b.o.createLimit {
		if err := pause(ctx, 10*time.Second); err != nil {
			return err
		}
		r, err := b.watch(ctx)
		if err != nil {
			return err
		}
		inst, objs, err := countWith(ctx, r, xpv2.TypeReady, "new-")
		if err != nil {
			return err
		}
		if inst > cp.instancesReady {
			cp.instancesReady, cp.instancesAt = inst, time.Since(t)
		}
		if objs > cp.objectsReady {
			cp.objectsReady, cp.objectsAt = objs, time.Since(t)
		}
		fmt.Fprintf(os.Stderr, "    %d/%d new instances and %d/%d of their databases and users Ready after %s\n",
			inst, cp.instances, objs, cp.objects, time.Since(t).Round(time.Second))
		if inst == cp.instances && objs == cp.objects {
			break
		}
	}
	cp.took = time.Since(t)
	cp.requests = map[string]int{}
	var phase []emulator.Request
	for _, q := range b.emu.Requests() {
		if q.Time.Before(before) {
			continue
		}
		phase = append(phase, q)
		cp.requests[q.Method]++
		if q.Reason == budget.AdmissionReason {
			cp.admission++
		}
		if q.Status == http.StatusTooManyRequests {
			cp.throttled++
		}
	}
	cp.busiest = busiestMinute(phase)
	return nil
}

// apply creates the i-th new instance, then its users and databases, each
// once the webhooks admit it: a denial is an error of the benchmark's.
func (b *bench) apply(ctx context.Context, i int) error {
	c := b.env.Client
	name := fmt.Sprintf("new-%05d", i)
	objs := []client.Object{newInstance(name)}
	for j := range b.o.createUsers {
		u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-u%d", name, j)}}
		// The emulator has no PostgreSQL at this scale: the SQL that takes
		// Cloud SQL's grants from a login (Update) cannot run, so the
		// provider creates and deletes the logins and leaves their grants.
		u.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionDelete, xpv2.ManagementActionLateInitialize}
		u.Spec.ForProvider.Instance = name
		u.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: u.Name}
		objs = append(objs, u)
	}
	for j := range b.o.createDatabases {
		d := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-d%d", name, j)}}
		d.Spec.ForProvider.Instance = name
		objs = append(objs, d)
	}
	for _, o := range objs {
		if err := providerproc.CreateWhenAdmitted(ctx, c, o); err != nil {
			return errors.Errorf(errDenied, o.GetName(), err)
		}
	}
	return nil
}

// countWith counts the instances, and the databases and users, whose names
// begin with prefix and whose condition cond is true.
func countWith(ctx context.Context, c client.Reader, cond xpv2.ConditionType, prefix string) (instances, objects int, err error) {
	with := func(o client.Object, s interface {
		GetCondition(xpv2.ConditionType) xpv2.Condition
	}) int {
		if strings.HasPrefix(o.GetName(), prefix) && s.GetCondition(cond).Status == corev1.ConditionTrue {
			return 1
		}
		return 0
	}
	pis := &v1alpha1.PostgresqlInstanceList{}
	if err := c.List(ctx, pis, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, err
	}
	for i := range pis.Items {
		instances += with(&pis.Items[i], &pis.Items[i])
	}
	users := &v1alpha1.PostgresqlUserList{}
	if err := c.List(ctx, users, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, err
	}
	for i := range users.Items {
		objects += with(&users.Items[i], &users.Items[i])
	}
	dbs := &v1alpha1.PostgresqlDatabaseList{}
	if err := c.List(ctx, dbs, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, err
	}
	for i := range dbs.Items {
		objects += with(&dbs.Items[i], &dbs.Items[i])
	}
	return instances, objects, nil
}

// summary is the create phase's cell of the main table.
func (cp createPhase) summary() string {
	switch {
	case cp.took == 0:
		return "-"
	case cp.instancesReady < cp.instances || cp.objectsReady < cp.objects:
		return fmt.Sprintf("> %.0f (%d+%d Ready)", cp.took.Seconds(), cp.instancesReady, cp.objectsReady)
	}
	return fmt.Sprintf("%.0f", cp.took.Seconds())
}

// least is the fewest requests that the phase needs: an insert of each
// instance and object, and, for each instance with objects, one listing of
// its databases and one of its users that sees them made. objects is the
// part of them made for the databases and users.
func (cp createPhase) least(databases, users int) (all, objects int) {
	objects = cp.objects
	if databases > 0 {
		objects += cp.instances
	}
	if users > 0 {
		objects += cp.instances
	}
	return cp.instances + objects, objects
}

// leastTime is the least time that the quota allows the phase: its least
// requests at the whole quota, and at least its objects' requests at the
// share of the quota that the provider gives objects (reconcile.object_share:
// the rest is kept for the instances' writes and reads and the backup
// health reads, so that objects never slow the instances).
func (cp createPhase) leastTime(o options) (atQuota, atShares time.Duration) {
	all, objects := cp.least(o.createDatabases, o.createUsers)
	perMinute := func(n int, rate float64) time.Duration {
		return time.Duration(float64(n) / rate * float64(time.Minute))
	}
	atQuota = perMinute(all, float64(o.quota))
	return atQuota, max(atQuota, perMinute(objects, o.objectShare*float64(o.quota)))
}

// printCreate prints the create phase's table.
func printCreate(o options, rows []row) {
	if o.create == 0 {
		return
	}
	fmt.Printf("\ncreate phase: %d instances with %d databases and %d users each, applied one by one through the webhooks (8 at a time); users with managementPolicies Observe, Create, Delete, LateInitialize (no PostgreSQL at this scale)\n\n",
		o.create, o.createDatabases, o.createUsers)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "fleet\tobserve\tinstances Ready\tobjects Ready\tall Ready after\trequests\tleast needed\tleast at the quota\tleast at object_share\tall Ready / least at the quota\tall Ready / least at object_share\tadmission lookups\t429s\tbusiest minute\tby method")
	for _, r := range rows {
		cp := r.cp
		if cp.took == 0 {
			continue
		}
		total := 0
		var methods []string
		for m, n := range cp.requests {
			total += n
			methods = append(methods, fmt.Sprintf("%s %d", m, n))
		}
		slices.Sort(methods)
		least, _ := cp.least(o.createDatabases, o.createUsers)
		atQuota, atShares := cp.leastTime(o)
		fmt.Fprintf(w, "%d\t%s\t%d/%d at %s\t%d/%d at %s\t%s\t%d\t%d\t%s\t%s\t%.2f\t%.2f\t%d\t%d\t%d\t%s\n",
			r.n, r.mode, cp.instancesReady, cp.instances, cp.instancesAt.Round(time.Second), cp.objectsReady, cp.objects, cp.objectsAt.Round(time.Second),
			cp.took.Round(time.Second), total, least, atQuota.Round(time.Second), atShares.Round(time.Second),
			cp.took.Seconds()/atQuota.Seconds(), cp.took.Seconds()/atShares.Seconds(),
			cp.admission, cp.throttled, cp.busiest, strings.Join(methods, ", "))
	}
	_ = w.Flush()
}
