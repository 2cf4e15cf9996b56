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

package composetest

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	nsv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/composepg"
)

// The shared instance of examples/composition/shared-instance.yaml, which both
// shared Compositions name, and the names Crossplane would give what they compose.
const (
	sharedPI     = "shared-pg"
	sharedUser   = xrName + "-u4v5w"
	sharedDB     = xrName + "-d6e7f"
	nsSharedUser = dbName + "-u4v5w"
	nsSharedDB   = dbName + "-d6e7f"
	nsUserSecret = dbName + "-postgresqluser"
)

// renderShared renders composition-shared.yaml for the claimed composite in xrPath,
// defaulted by definition.yaml.
func renderShared(t *testing.T, xrPath string, args ...string) (rendered, error) {
	t.Helper()
	return renderWith(t, example("composition-shared.yaml"), xrPath, append([]string{"--xrd", example("definition.yaml")}, args...)...)
}

// renderSharedNamespaced renders composition-shared-v2.yaml for the
// PostgreSQLDatabase in xrPath, defaulted by definition-v2.yaml.
func renderSharedNamespaced(t *testing.T, xrPath string, args ...string) (rendered, error) {
	t.Helper()
	return renderWith(t, example("composition-shared-v2.yaml"), xrPath, append([]string{"--xrd", example("definition-v2.yaml")}, args...)...)
}

// sharedComposed returns the PostgresqlDatabase and PostgresqlUser of r (of the
// namespaced kinds when namespaced), decoded strictly into db and user, and both
// as rendered; a namespaced composite's Secret comes first.
func sharedComposed(g Gomega, r rendered, namespaced bool, db, user any) (du, uu *unstructured.Unstructured) {
	// render sorts by resource name: [connection-secret,] postgresqldatabase, postgresqluser.
	want, api := 2, v1alpha1.SchemeGroupVersion.String()
	if namespaced {
		want, api = 3, nsv1alpha1.SchemeGroupVersion.String()
	}
	g.ExpectWithOffset(1, r.composed).To(HaveLen(want))
	du, uu = r.composed[want-2], r.composed[want-1]
	g.ExpectWithOffset(1, du.GetAnnotations()).To(HaveKeyWithValue("crossplane.io/composition-resource-name", string(composepg.ResourceNameDatabase)))
	g.ExpectWithOffset(1, uu.GetAnnotations()).To(HaveKeyWithValue("crossplane.io/composition-resource-name", string(composepg.ResourceNameUser)))
	decodeStrictly(g, du, api, v1alpha1.PostgresqlDatabaseKind, db)
	decodeStrictly(g, uu, api, v1alpha1.PostgresqlUserKind, user)
	g.ExpectWithOffset(1, du.Object).NotTo(HaveKey("status"))
	g.ExpectWithOffset(1, uu.Object).NotTo(HaveKey("status"))
	return du, uu
}

func TestRenderSharedClaim(t *testing.T) {
	g := NewWithT(t)
	r, err := renderShared(t, example("xr.yaml"))
	g.Expect(err).NotTo(HaveOccurred())

	db, user := &v1alpha1.PostgresqlDatabase{}, &v1alpha1.PostgresqlUser{}
	sharedComposed(g, r, false, db, user)

	// The user writes its secret where the claim's instance would, and serves
	// the claim's namespace only.
	g.Expect(user.Spec.ForProvider.Instance).To(Equal(sharedPI))
	g.Expect(user.Spec.ForProvider.Type).To(Equal(v1alpha1.UserTypeBuiltIn))
	g.Expect(user.Spec.ForProvider.Name).To(BeNil())
	g.Expect(user.Spec.ForProvider.Injection).To(Equal(&v1alpha1.UserInjection{AllowedNamespaces: []string{claimNS}}))
	g.Expect(user.GetWriteConnectionSecretToReference()).To(Equal(&xpv2.SecretReference{Name: xrName + "-postgres", Namespace: "crossplane-system"}))
	g.Expect(user.GetDeletionPolicy()).To(Equal(xpv2.DeletionDelete))

	// The database is owned by the user that the same composite controls.
	g.Expect(db.Spec.ForProvider.Instance).To(Equal(sharedPI))
	g.Expect(db.Spec.ForProvider.Owner).To(BeEmpty())
	g.Expect(db.Spec.ForProvider.OwnerSelector).To(Equal(&xpv2.Selector{MatchControllerRef: ptr.To(true)}))
	g.Expect(db.GetAnnotations()).To(HaveKeyWithValue(v1alpha1.AnnotationAllowDeletion, "true"))
	g.Expect(db.GetDeletionPolicy()).To(Equal(xpv2.DeletionDelete))

	// Crossplane's part: names generated from the composite's, which the
	// provider uses in PostgreSQL too, the composite as controller.
	for _, o := range []interface {
		GetName() string
		GetGenerateName() string
		GetLabels() map[string]string
	}{db, user} {
		g.Expect(o.GetName()).To(BeEmpty())
		g.Expect(o.GetGenerateName()).To(Equal(xrName + "-"))
		g.Expect(o.GetLabels()).To(HaveKeyWithValue("crossplane.io/claim-namespace", claimNS))
	}
	g.Expect(db.GetOwnerReferences()).To(ConsistOf(HaveField("Name", xrName)))
	g.Expect(user.GetOwnerReferences()).To(ConsistOf(HaveField("Name", xrName)))

	g.Expect(condition(r.composite, xpv2.TypeReady)).To(Equal(map[string]any{
		"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: postgresqldatabase, postgresqluser",
	}))
	g.Expect(condition(r.composite, composepg.ConditionTypeSpecValid)).To(HaveKeyWithValue("status", "True"))
}

// observedSharedFile is what render composes with composition for xrPath, as
// Crossplane would observe it once created: the user and the database named user
// and db, with the Ready conditions given, and anything else (the Secret) as
// composed.
func observedSharedFile(t *testing.T, g Gomega, renderFile func(t *testing.T, xrPath string, args ...string) (rendered, error), xrPath, user, db string, userReady, dbReady corev1.ConditionStatus) string {
	t.Helper()
	r, err := renderFile(t, xrPath)
	g.Expect(err).NotTo(HaveOccurred())
	for _, u := range r.composed {
		switch u.GetKind() {
		case v1alpha1.PostgresqlUserKind:
			observe(g, u, user, userReady)
		case v1alpha1.PostgresqlDatabaseKind:
			observe(g, u, db, dbReady)
		}
	}
	return writeManifests(t, "observed.yaml", r.composed...)
}

func TestRenderSharedClaimReadyWithTheUserAndTheDatabase(t *testing.T) {
	cases := map[string]struct {
		user, db corev1.ConditionStatus
		want     map[string]any
	}{
		"BothReady": {
			user: corev1.ConditionTrue, db: corev1.ConditionTrue,
			want: map[string]any{"type": "Ready", "status": "True", "reason": "Available"},
		},
		"TheDatabaseNotYet": {
			user: corev1.ConditionTrue, db: corev1.ConditionFalse,
			want: map[string]any{"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: postgresqldatabase"},
		},
		"TheUserNotYet": {
			user: corev1.ConditionFalse, db: corev1.ConditionTrue,
			want: map[string]any{"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: postgresqluser"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			observed := observedSharedFile(t, g, renderShared, example("xr.yaml"), sharedUser, sharedDB, tc.user, tc.db)
			r, err := renderShared(t, example("xr.yaml"), "--observed-resources", observed)
			g.Expect(err).NotTo(HaveOccurred())

			g.Expect(condition(r.composite, xpv2.TypeReady)).To(Equal(tc.want))
			g.Expect(r.composite.Object).To(HaveKeyWithValue("status", And(
				HaveKeyWithValue("userName", sharedUser), HaveKeyWithValue("databaseName", sharedDB), Not(HaveKey("instanceName")))))
			// The existing user owns the database by name.
			db, user := &v1alpha1.PostgresqlDatabase{}, &v1alpha1.PostgresqlUser{}
			sharedComposed(g, r, false, db, user)
			g.Expect(user.GetName()).To(Equal(sharedUser))
			g.Expect(db.GetName()).To(Equal(sharedDB))
			g.Expect(db.Spec.ForProvider.Owner).To(Equal(sharedUser))
		})
	}
}

// userSecret is what the provider writes into a user's connection secret once the
// user owns the database db.
func userSecret(user, db string) map[string][]byte {
	return map[string][]byte{
		"connectionName": []byte("my-project-1:europe-west1:" + sharedPI),
		"endpoint":       []byte("34.1.2.3"),
		"port":           []byte("5432"),
		"username":       []byte(user),
		"password":       []byte("u-s3cret"),
		"pgpass":         []byte("127.0.0.1:*:*:" + user + ":u-s3cret"),
		"publicIP":       []byte("34.1.2.3"),
		"database":       []byte(db),
		"databases":      []byte(db),
	}
}

func TestRenderSharedNamespaced(t *testing.T) {
	g := NewWithT(t)
	r, err := renderSharedNamespaced(t, example("xr-v2.yaml"))
	g.Expect(err).NotTo(HaveOccurred())

	db, user := &nsv1alpha1.PostgresqlDatabase{}, &nsv1alpha1.PostgresqlUser{}
	sharedComposed(g, r, true, db, user)
	for _, o := range []interface {
		GetNamespace() string
		GetGenerateName() string
	}{db, user} {
		g.Expect(o.GetNamespace()).To(Equal(dbNS))
		g.Expect(o.GetGenerateName()).To(Equal(dbName + "-"))
	}
	g.Expect(user.Spec.ForProvider.ClusterInstance).To(Equal(sharedPI))
	g.Expect(user.Spec.ForProvider.Instance).To(BeEmpty())
	g.Expect(user.Spec.ForProvider.Type).To(Equal(v1alpha1.UserTypeBuiltIn))
	g.Expect(user.GetWriteConnectionSecretToReference()).To(Equal(&xpv2.LocalSecretReference{Name: nsUserSecret}))
	g.Expect(user.GetManagementPolicies()).To(BeEmpty())
	g.Expect(db.Spec.ForProvider.ClusterInstance).To(Equal(sharedPI))
	g.Expect(db.Spec.ForProvider.OwnerSelector).To(Equal(&xpv2.NamespacedSelector{MatchControllerRef: ptr.To(true)}))
	g.Expect(db.GetAnnotations()).To(HaveKeyWithValue(v1alpha1.AnnotationAllowDeletion, "true"))

	s := &corev1.Secret{}
	decodeStrictly(g, r.composed[0], "v1", "Secret", s)
	g.Expect(s.GetName()).To(Equal(dbSecret))
	g.Expect(s.Data).To(BeEmpty())

	g.Expect(condition(r.composite, xpv2.TypeReady)).To(Equal(map[string]any{
		"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: connection-secret, postgresqldatabase, and postgresqluser",
	}))
}

func TestRenderSharedNamespacedReadyWithTheUsersSecret(t *testing.T) {
	six := userSecret(nsSharedUser, nsSharedDB)
	delete(six, "pgpass")
	delete(six, "publicIP")
	delete(six, "databases")
	cases := map[string]struct {
		published map[string][]byte
		wantData  map[string][]byte
		wantReady map[string]any
	}{
		"TheUserOwnsTheDatabaseTheSecretHoldsItsSixKeys": {
			published: userSecret(nsSharedUser, nsSharedDB),
			wantData:  six,
			wantReady: map[string]any{"type": "Ready", "status": "True", "reason": "Available"},
		},
		"TheUserOwnsNoDatabaseYet": {
			published: userSecret(nsSharedUser, ""),
			wantReady: map[string]any{"type": "Ready", "status": "False", "reason": "Creating", "message": "Unready resources: connection-secret"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			publishConnectionSecret(t, dbNS, nsUserSecret, tc.published)
			observed := observedSharedFile(t, g, renderSharedNamespaced, example("xr-v2.yaml"), nsSharedUser, nsSharedDB, corev1.ConditionTrue, corev1.ConditionTrue)
			r, err := renderSharedNamespaced(t, example("xr-v2.yaml"), "--observed-resources", observed)
			g.Expect(err).NotTo(HaveOccurred())

			db, user := &nsv1alpha1.PostgresqlDatabase{}, &nsv1alpha1.PostgresqlUser{}
			sharedComposed(g, r, true, db, user)
			g.Expect(db.Spec.ForProvider.Owner).To(Equal(nsSharedUser))
			s := &corev1.Secret{}
			decodeStrictly(g, r.composed[0], "v1", "Secret", s)
			if tc.wantData == nil {
				g.Expect(s.Data).To(BeEmpty())
			} else {
				g.Expect(s.Data).To(Equal(tc.wantData))
			}
			g.Expect(condition(r.composite, xpv2.TypeReady)).To(Equal(tc.wantReady))
			g.Expect(r.composite.Object).To(HaveKeyWithValue("status", And(
				HaveKeyWithValue("userName", nsSharedUser), HaveKeyWithValue("databaseName", nsSharedDB), HaveKeyWithValue("connectionSecretName", dbSecret))))
		})
	}
}

func TestRenderSharedRefusesMistakes(t *testing.T) {
	checkMistakes(t, renderShared, compositeFile, map[string]mistake{
		"AClaimWhoseNameLeavesNoRoomForPostgreSQLNames": {
			set: func(xr *unstructured.Unstructured) {
				xr.SetName("orders-database-of-the-payments-team-in-europe-west1-x7k2p")
			},
			want: `metadata.name "orders-database-of-the-payments-team-in-europe-west1-x7k2p" of the composite is longer than 57 characters`,
		},
	})
	checkMistakes(t, renderSharedNamespaced, databaseFile, map[string]mistake{
		"AllowedNamespacesFromAnXRDThatStillDeclaresThem": {
			set: func(xr *unstructured.Unstructured) {
				_ = unstructured.SetNestedStringSlice(xr.Object, []string{"*"}, "spec", "allowedNamespaces")
			},
			want: "spec.allowedNamespaces of PostgreSQLDatabase team-orders/orders-db cannot be set",
		},
	})
}

func TestValidateSharedExamples(t *testing.T) {
	g := NewWithT(t)
	r, err := renderShared(t, example("xr.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	rn, err := renderSharedNamespaced(t, example("xr-v2.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	composed := append(r.composed, rn.composed...)
	// The API server would complete the generated names; validate does not,
	// and the CRDs check that the names can be PostgreSQL names.
	for _, u := range composed {
		if u.GetName() == "" {
			u.SetName(u.GetGenerateName() + "q9z3l")
		}
	}
	out, err := validateWith(t, example("definition.yaml")+","+example("definition-v2.yaml")+","+repoPath("package", "crds"),
		example("composition-shared.yaml"), example("composition-shared-v2.yaml"), example("shared-instance.yaml"),
		writeManifests(t, "rendered.yaml", composed...))
	g.Expect(err).NotTo(HaveOccurred(), out)
	// The function's input and the Secret have no schema to be checked against.
	g.Expect(out).To(ContainSubstring("Total 10 resources: 3 missing schemas, 7 success cases, 0 failure cases"))
}
