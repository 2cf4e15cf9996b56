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
	"context"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/tenancy"
)

const errNameAppeared = "%s was made outside the provider while this object was creating it, so it is not this object's: " +
	"the next observation decides, by spec.tenancy.importPolicy of PostgresqlInstance %s, whether this object may import it"

const errNameNotImported = "%s exists, and no PostgresqlUser or PostgresqlDatabase holds it (it was made with psql or gcloud, or by an object since deleted with deletionPolicy Orphan): " +
	"spec.tenancy.importPolicy of PostgresqlInstance %s is %s, so this %s object does not take it over; give this one another name, " +
	"or ask the instance's owner to set spec.tenancy.importPolicy to Allow (which lets namespaced objects import too) while you import it"

// A Standing is what one object may do with its name, for one reconcile.
type Standing struct {
	tenancy.Verdict
	// Err, for a refusal, says why, naming the holder or the policy.
	Err error
}

// Holders settle, for the objects of one kind, who holds their logins or
// databases (tenancy.Records).
type Holders struct {
	records *tenancy.Records
	gvk     schema.GroupVersionKind
}

// NewHolders returns the Holders of the objects of kind gvk, kept in records.
func NewHolders(records *tenancy.Records, gvk schema.GroupVersionKind) Holders {
	return Holders{records: records, gvk: gvk}
}

// Holders are the Holders of the objects of kind gvk.
func (c *Core) Holders(gvk schema.GroupVersionKind) Holders { return NewHolders(c.names, gvk) }

// Standing settles what mg may do with name n of its instance
// (tenancy.Decide), which Cloud SQL lists (exists) or not, reading who holds
// it; a hold the verdict asks for is recorded before it is returned.
// instance names the PostgresqlInstance in messages.
func (h Holders) Standing(ctx context.Context, mg resource.Managed, n tenancy.Name, exists bool, conn *InstanceConnection, instance string) (Standing, error) {
	self := tenancy.HolderOf(mg, h.gvk)
	holder, err := h.records.Holder(ctx, n, self)
	if err != nil {
		return Standing{}, err
	}
	f := tenancy.Facts{Exists: exists, Holder: holder, Self: self, Deleting: meta.WasDeleted(mg), ObserveOnly: observesOnly(mg), Policy: conn.ImportPolicy}
	if exists && holder == nil {
		since, err := h.records.Since(ctx)
		if err != nil {
			return Standing{}, err
		}
		f.Migrating = mg.GetCreationTimestamp().Time.Before(since)
	}
	st := Standing{Verdict: tenancy.Decide(f)}
	switch st.Action {
	case tenancy.RefuseHeld:
		st.Err = &tenancy.HeldError{Name: n, Holder: *holder}
	case tenancy.RefuseImport:
		scope := "namespaced"
		if self.Namespace == "" {
			scope = "cluster-scoped"
		}
		st.Err = errors.Errorf(errNameNotImported, n, instance, conn.ImportPolicy, scope)
	}
	if st.Claim != "" {
		if _, err := h.records.Claim(ctx, n, self, st.Claim); err != nil {
			return Standing{}, err
		}
	}
	return st, nil
}

// Claim records that mg holds name n, which it is about to create. It fails,
// naming the holder, when another object holds n. fresh says that mg did not
// hold n before: should the create then find n made already, it was made
// outside the provider after the listing that showed it absent, and is not
// mg's to take (Appeared).
func (h Holders) Claim(ctx context.Context, mg resource.Managed, n tenancy.Name) (fresh bool, err error) {
	return h.records.Claim(ctx, n, tenancy.HolderOf(mg, h.gvk), tenancy.Created)
}

// Appeared is what a create of name n that found it made already reports,
// when mg claimed n fresh for it: the hold is released, so that the next
// observation treats n as any name made outside the provider, as the
// instance's import policy says. A name mg held before this create (an
// earlier attempt made it, then failed to learn so) stays mg's: nil.
func (h Holders) Appeared(ctx context.Context, mg resource.Managed, n tenancy.Name, fresh bool, instance string) error {
	if !fresh {
		return nil
	}
	if err := h.Release(ctx, mg, n); err != nil {
		return err
	}
	return errors.Errorf(errNameAppeared, n, instance)
}

// Made says whether mg holds name n because it made it (Claim before its
// create), not because it took over what existed.
func (h Holders) Made(ctx context.Context, mg resource.Managed, n tenancy.Name) (bool, error) {
	how, err := h.records.How(ctx, n, tenancy.HolderOf(mg, h.gvk))
	return how == tenancy.Created, err
}

// Release forgets that mg holds name n: it is gone.
func (h Holders) Release(ctx context.Context, mg resource.Managed, n tenancy.Name) error {
	return h.records.Release(ctx, n, tenancy.HolderOf(mg, h.gvk))
}

// observesOnly says whether mg's management policies allow no write at all.
func observesOnly(mg resource.Managed) bool {
	pols := mg.GetManagementPolicies()
	if len(pols) == 0 {
		return false
	}
	return !slices.ContainsFunc(pols, func(p xpv2.ManagementAction) bool {
		return p == xpv2.ManagementActionAll || p == xpv2.ManagementActionCreate || p == xpv2.ManagementActionUpdate || p == xpv2.ManagementActionDelete
	})
}

// importPolicy is the import policy of instance obj, with its kind's default.
func importPolicy(obj Instance) v1alpha1.ObjectImportPolicy {
	switch pi := obj.(type) {
	case *v1alpha1.PostgresqlInstance:
		return v1alpha1.ImportPolicyOf(pi.Spec.Tenancy)
	case *nsv1alpha1.PostgresqlInstance:
		return nsv1alpha1.ImportPolicyOf(pi.Spec.Tenancy)
	}
	return v1alpha1.ObjectImportDeny
}

// Clones record which object made a Cloud SQL instance as a clone of
// another, so that the clone, which carries its source's owner label until
// the object gives it its own, is known as the object's and nobody else's.
type Clones struct {
	records *tenancy.Records
	gvk     schema.GroupVersionKind
}

// Clones are the Clones of the PostgresqlInstances of kind gvk.
func (c *Core) Clones(gvk schema.GroupVersionKind) Clones {
	return Clones{records: c.names, gvk: gvk}
}

// cloneName is the record of Cloud SQL instance name of project.
func cloneName(project, name string) tenancy.Name {
	return tenancy.Name{Kind: tenancy.KindClone, Project: project, Instance: name, Name: name}
}

// clonedFrom is how a clone of the instance whose owner label is owner is
// recorded.
func clonedFrom(owner string) string { return "cloned-from-owner-uid/" + owner }

// Claim records, before the clone is asked for, that mg makes instance name
// of project as a clone of the instance whose owner label is owner. fresh
// says that mg did not hold the record before: a name then found taken is
// someone else's instance.
func (c Clones) Claim(ctx context.Context, mg resource.Managed, project, name, owner string) (fresh bool, err error) {
	return c.records.Claim(ctx, cloneName(project, name), tenancy.HolderOf(mg, c.gvk), clonedFrom(owner))
}

// Made says whether mg made instance name of project as a clone of the
// instance whose owner label is owner.
func (c Clones) Made(ctx context.Context, mg resource.Managed, project, name, owner string) (bool, error) {
	if owner == "" {
		return false, nil
	}
	how, err := c.records.How(ctx, cloneName(project, name), tenancy.HolderOf(mg, c.gvk))
	return how == clonedFrom(owner), err
}

// Release forgets the record: the clone carries mg's own label, or was
// never made.
func (c Clones) Release(ctx context.Context, mg resource.Managed, project, name string) error {
	return c.records.Release(ctx, cloneName(project, name), tenancy.HolderOf(mg, c.gvk))
}
