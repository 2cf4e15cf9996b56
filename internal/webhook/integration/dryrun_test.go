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

package integration_test

import (
	"context"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/observer"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// dryRunListingAge is how old a listing may be and still answer a name check
// in these tests: long enough that the listing a test makes stays fresh.
const dryRunListingAge = time.Minute

// A dryRunWorld is a project of its own, named by a ProviderConfig and a
// ClusterProviderConfig lent to every namespace, with instance taken in it
// and a namespace for namespaced instances, behind a webhook that checks
// names in listings: a test counts the requests for its project alone.
type dryRunWorld struct {
	project, config, namespace string
}

func newDryRunWorld(t *testing.T, name string) dryRunWorld {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	w := dryRunWorld{project: name + "-123", config: name, namespace: name + "-app"}
	spec := v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: w.project, Endpoint: endpoint},
		Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}}
	g.Expect(env.Client.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: w.config}, Spec: spec})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &nsv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: w.config}, Spec: lentToAll(spec)})).To(Succeed())
	namespace(t, w.namespace, nil)
	g.Expect(emu.Seed(w.project, &sqladmin.DatabaseInstance{
		Name: "taken", DatabaseVersion: "POSTGRES_15", Region: "europe-west1",
		Settings: &sqladmin.Settings{Tier: "db-custom-1-3840"},
	})).To(Succeed())
	instances.withListings(t, observer.New(), dryRunListingAge)
	return w
}

// cluster is a cluster-scoped PostgresqlInstance name of w's configuration
// that wants Cloud SQL instance sql.
func (w dryRunWorld) cluster(name, sql string) *v1alpha1.PostgresqlInstance {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.Reference{Name: w.config}
	pi.Spec.ForProvider.Name = ptr.To(sql)
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: secretNS, Name: name}
	return pi
}

// namespaced is a namespaced PostgresqlInstance name of w's namespace, through
// w's ClusterProviderConfig, that wants Cloud SQL instance sql.
func (w dryRunWorld) namespaced(name, sql string) *nsv1alpha1.PostgresqlInstance {
	pi := &nsv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: nsv1alpha1.ClusterProviderConfigKind, Name: w.config}
	pi.Spec.ForProvider.Name = ptr.To(sql)
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name}
	return pi
}

// both are a PostgresqlInstance of each kind named name that want sql.
func (w dryRunWorld) both(name, sql string) []client.Object {
	return []client.Object{w.cluster(name, sql), w.namespaced(name, sql)}
}

// requests is how many requests for w's project the emulator answered.
func (w dryRunWorld) requests() int {
	n := 0
	for _, r := range emu.Requests() {
		if r.Project == w.project {
			n++
		}
	}
	return n
}

// list has the webhook list w's project, as a real create of either kind
// does (or the controllers' observations would).
func (w dryRunWorld) list(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	for _, pi := range w.both(w.config+"-listed", w.config+"-listed") {
		g.Expect(env.Client.Create(context.Background(), pi)).To(Succeed())
	}
	g.Expect(w.requests()).To(BeNumerically(">", 0), "a real create lists the project")
}

// notCreated says that a dry run created nothing.
func notCreated(g Gomega, pi client.Object) {
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(pi), pi.DeepCopyObject().(client.Object))
	g.Expect(kerrors.IsNotFound(err)).To(BeTrue(), "a dry run creates nothing: %v", err)
}

// A dry run (kubectl apply --dry-run=server) of either kind whose name a
// fresh listing at hand shows taken is denied as the real create would be,
// and Cloud SQL hears nothing of it.
func TestDryRunOfANameTakenInAListingAtHandIsDenied(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	w := newDryRunWorld(t, "dry-taken")
	w.list(t)
	before := w.requests()
	for _, pi := range w.both(w.config+"-wants-taken", "taken") {
		ref := pi.GetName()
		if ns := pi.GetNamespace(); ns != "" {
			ref = ns + "/" + ref
		}
		g.Expect(env.Client.Create(context.Background(), pi, client.DryRunAll)).To(MatchError(And(
			ContainSubstring("PostgresqlInstance "+ref+": a Cloud SQL instance named taken already exists in project "+w.project),
			ContainSubstring("choose another spec.forProvider.name"),
		)), "%T", pi)
	}
	g.Expect(w.requests()).To(Equal(before), "no request for a dry run")
}

// A dry run of either kind whose name a fresh, complete listing at hand shows
// free is admitted with a warning that says so and how old the listing is,
// at no request.
func TestDryRunOfANameFreeInAListingAtHandSaysSo(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	w := newDryRunWorld(t, "dry-free")
	w.list(t)
	before := w.requests()
	for _, pi := range w.both(w.config+"-wants-free", "free") {
		c, warned := warningClient(t)
		g.Expect(c.Create(context.Background(), pi, client.DryRunAll)).To(Succeed(), "%T", pi)
		g.Expect(warned.all()).To(ConsistOf(And(
			ContainSubstring("no Cloud SQL instance named free was in a listing of project "+w.project+" made "),
			ContainSubstring("the real create checks the name again"),
		)), "%T", pi)
		notCreated(g, pi)
	}
	g.Expect(w.requests()).To(Equal(before), "no request for a dry run")
}

// A dry run of either kind with no fresh listing at hand is admitted with a
// warning that its name was not checked and why, and lists nothing: dry
// runs spend none of the request budget.
func TestDryRunWithoutAListingAtHandIsNotChecked(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	w := newDryRunWorld(t, "dry-unlisted")
	for _, pi := range w.both(w.config+"-wants-taken", "taken") {
		c, warned := warningClient(t)
		g.Expect(c.Create(context.Background(), pi, client.DryRunAll)).To(Succeed(), "%T", pi)
		g.Expect(warned.all()).To(ConsistOf(And(
			ContainSubstring("whether a Cloud SQL instance named taken exists in project "+w.project+" was not checked on this dry run: "+
				"no listing of the project from the last 1m0s is at hand, and dry runs spend none of the Cloud SQL request budget"),
			ContainSubstring("choose another spec.forProvider.name"),
		)), "%T", pi)
		notCreated(g, pi)
	}
	g.Expect(w.requests()).To(BeZero(), "no listing, no instances.get")
}
