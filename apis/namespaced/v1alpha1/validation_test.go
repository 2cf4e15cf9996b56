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

package v1alpha1_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/namespaced/v1alpha1"
	clusterv1alpha1 "github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
)

// The kinds are what crossplane-runtime's reconcilers take.
var (
	_ resource.ModernManaged            = &v1alpha1.PostgresqlInstance{}
	_ resource.ProviderConfig           = &v1alpha1.ProviderConfig{}
	_ resource.ProviderConfig           = &v1alpha1.ClusterProviderConfig{}
	_ resource.TypedProviderConfigUsage = &v1alpha1.ProviderConfigUsage{}
	_ resource.TypedProviderConfigUsage = &v1alpha1.ClusterProviderConfigUsage{}
)

var env *controlplane.Env

const team = "team-a"

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // make unit: the tests that need a control plane skip
	}
	var err error
	if env, err = controlplane.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot stop the test control plane:", err)
	}
	os.Exit(code)
}

// instance is the smallest valid namespaced PostgresqlInstance.
func instance(name string) *v1alpha1.PostgresqlInstance {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: name}}
	pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "shared"}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	return pi
}

func denied(g Gomega, err error, fragments ...string) {
	g.ExpectWithOffset(1, err).To(HaveOccurred(), "the API server accepted an object it should reject")
	for _, f := range fragments {
		g.ExpectWithOffset(1, err.Error()).To(ContainSubstring(f))
	}
}

func TestNamespacedInstance(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}})).To(Succeed())

	// The same defaults as the cluster-scoped kind, from the one shared type.
	pi := instance("defaults")
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())
	g.Expect(pi.Spec.ForProvider.Version).To(Equal("18"))
	g.Expect(pi.Spec.ForProvider.Resources.InstanceType).To(Equal("db-custom-1-3840"))
	g.Expect(pi.Spec.ManagementPolicies).To(ConsistOf(xpv2.ManagementActionAll))

	cases := map[string]struct {
		change    func(pi *v1alpha1.PostgresqlInstance)
		fragments []string
	}{
		"NoProviderConfig": {
			// No configuration is used implicitly: none is defaulted.
			change: func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.ProviderConfigReference = nil },
			fragments: []string{"spec.providerConfigRef", "is required: name the configuration that holds the project and credentials",
				"no configuration is used implicitly"},
		},
		"NoConnectionSecret": {
			change:    func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.WriteConnectionSecretToReference = nil },
			fragments: []string{"spec.writeConnectionSecretToRef", "is required when the provider may create the instance"},
		},
		"AKindOfProviderConfigThatDoesNotExist": {
			change: func(pi *v1alpha1.PostgresqlInstance) {
				pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "Secret", Name: "x"}
			},
			fragments: []string{"spec.providerConfigRef.kind", "must be ClusterProviderConfig"},
		},
		"AnEmptyProviderConfigName": {
			change: func(pi *v1alpha1.PostgresqlInstance) {
				pi.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ProviderConfig"}
			},
			fragments: []string{"spec.providerConfigRef.name", "must name a ClusterProviderConfig that the platform team lends to this namespace, or a ProviderConfig of this namespace"},
		},
		"TheSharedForProviderRules": {
			change:    func(pi *v1alpha1.PostgresqlInstance) { pi.Spec.ForProvider.Networking.PublicIP.Enabled = false },
			fragments: []string{"spec.forProvider.networking", "enable at least one of networking.publicIp and networking.privateIp"},
		},
		"TheFinalBackupRetention": {
			change: func(pi *v1alpha1.PostgresqlInstance) {
				pi.Spec.ForProvider.Backups.FinalBackup = &clusterv1alpha1.FinalBackup{Enabled: true, RetentionDays: 400}
			},
			fragments: []string{"spec.forProvider.backups.finalBackup.retentionDays", "must be between 1 and 365 days"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			pi := instance("bad")
			tc.change(pi)
			denied(g, env.Client.Create(ctx, pi), tc.fragments...)
		})
	}

	// Only up, like the cluster-scoped kind's.
	pi.Spec.ForProvider.Version = "17"
	denied(g, env.Client.Update(ctx, pi), "spec.forProvider.version", "cannot go down (was 18)")

	// A retained backup of a deleted instance belongs to no namespace; a
	// cluster-scoped source is named as such.
	retained := instance("retained")
	retained.Spec.ForProvider.Source = &clusterv1alpha1.Source{RetainedBackup: "projects/my-project-123/backups/12"}
	denied(g, env.Client.Create(ctx, retained), "spec.forProvider.source.retainedBackup", "is for cluster-scoped PostgresqlInstances only")
	clone := instance("clone")
	clone.Spec.ForProvider.Source = &clusterv1alpha1.Source{ClusterInstance: "shared", PointInTime: &metav1.Time{Time: time.Now()}}
	g.Expect(env.Client.Create(ctx, clone)).To(Succeed())
}

func TestProviderConfigs(t *testing.T) {
	controlplane.Need(t)
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}))).To(Succeed())
	project := clusterv1alpha1.Project{ProjectID: "team-a-123456"}
	cases := map[string]struct {
		creds     v1alpha1.LocalCredentials
		fragments []string
	}{
		"AKeyOfASecretOfItsNamespace": {creds: v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: &xpv2.LocalSecretKeySelector{LocalSecretReference: xpv2.LocalSecretReference{Name: "gcp"}, Key: "key.json"}}},
		"ASecretWithoutAReference": {
			creds:     v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret},
			fragments: []string{"spec.credentials.secretRef", "is required when source is Secret"},
		},
		"TheProvidersOwnIdentityBelongsToThePlatform": {
			creds:     v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceInjectedIdentity},
			fragments: []string{"spec.credentials.source", "Unsupported value", "Secret", "None"},
		},
		"NoCredentialsWithoutAnEndpoint": {
			creds:     v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceNone},
			fragments: []string{"spec.credentials.source", "None is only allowed together with spec.endpoint"},
		},
	}
	i := 0
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			i++
			pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: fmt.Sprintf("pc-%d", i)},
				Spec: v1alpha1.ProviderConfigSpec{Project: project, Credentials: tc.creds}}
			err := env.Client.Create(ctx, pc)
			if len(tc.fragments) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			denied(g, err, tc.fragments...)
		})
	}

	// A ClusterProviderConfig has the cluster-scoped ProviderConfig's spec.
	cpc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ClusterProviderConfigSpec{ProviderConfigSpec: clusterv1alpha1.ProviderConfigSpec{
		Project: project, Credentials: clusterv1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity},
	}}}
	g.Expect(env.Client.Create(ctx, cpc)).To(Succeed())
	// It lends itself to no namespace unless told, and forbids importing.
	g.Expect(cpc.Spec.Namespaces).To(BeNil())
	g.Expect(cpc.Spec.ImportPolicy).To(Equal(v1alpha1.ImportDeny))
	for name, tc := range map[string]struct {
		lend      v1alpha1.NamespaceSelection
		fragments []string
	}{
		"NotANamespaceName": {
			lend:      v1alpha1.NamespaceSelection{Names: []string{"Team_A"}},
			fragments: []string{"spec.namespaces.names[0]", "must be a namespace name"},
		},
		"NoWildcard": {
			lend:      v1alpha1.NamespaceSelection{Names: []string{"*"}},
			fragments: []string{"spec.namespaces.names[0]", "must be a namespace name"},
		},
		"UnknownOperator": {
			lend: v1alpha1.NamespaceSelection{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "team", Operator: "Matches", Values: []string{"a"}},
			}}},
			fragments: []string{"spec.namespaces.selector.matchExpressions", "each operator must be In, NotIn, Exists or DoesNotExist"},
		},
	} {
		bad := cpc.DeepCopy()
		bad.ObjectMeta = metav1.ObjectMeta{Name: "lent-" + strings.ToLower(name)}
		bad.Spec.Namespaces = &tc.lend
		denied(g, env.Client.Create(ctx, bad), tc.fragments...)
	}
	cpc2 := cpc.DeepCopy()
	cpc2.ObjectMeta = metav1.ObjectMeta{Name: "secret-without-namespace"}
	cpc2.Spec.Credentials = clusterv1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceSecret}
	denied(g, env.Client.Create(ctx, cpc2), "spec.credentials.secretRef", "is required when source is Secret")
}

// The new kinds are namespaced managed resources for crossplane-runtime, with
// reference resolution.
var (
	_ resource.ModernManaged = &v1alpha1.PostgresqlDatabase{}
	_ resource.ModernManaged = &v1alpha1.PostgresqlUser{}
	_ resource.ManagedList   = &v1alpha1.PostgresqlDatabaseList{}
	_ resource.ManagedList   = &v1alpha1.PostgresqlUserList{}
	_ interface {
		ResolveReferences(ctx context.Context, c client.Reader) error
	} = &v1alpha1.PostgresqlDatabase{}
	_ interface {
		ResolveReferences(ctx context.Context, c client.Reader) error
	} = &v1alpha1.PostgresqlUser{}
)

// database is the smallest valid namespaced PostgresqlDatabase, on the instance
// "shared" of its namespace, changed by fns.
func database(name string, fns ...func(p *v1alpha1.PostgresqlDatabaseParameters)) *v1alpha1.PostgresqlDatabase {
	db := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: name}}
	db.Spec.ForProvider.Instance = "shared"
	for _, fn := range fns {
		fn(&db.Spec.ForProvider)
	}
	return db
}

// user is the smallest valid namespaced BUILT_IN PostgresqlUser, on the instance
// "shared" of its namespace, changed by fns.
func user(name string, fns ...func(p *v1alpha1.PostgresqlUserParameters)) *v1alpha1.PostgresqlUser {
	u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: name}}
	u.Spec.WriteConnectionSecretToReference = &xpv2.LocalSecretReference{Name: name + "-credentials"}
	u.Spec.ForProvider.Instance = "shared"
	for _, fn := range fns {
		fn(&u.Spec.ForProvider)
	}
	return u
}

// onClusterInstance moves an object's instance to the cluster-scoped "shared".
func onClusterInstance(instance, clusterInstance *string) {
	*instance = ""
	*clusterInstance = "shared"
}

func TestNamespacedDatabasesAndUsers(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}))).To(Succeed())

	// The defaults of the cluster-scoped kinds, from the shared settings.
	db := database("defaults")
	g.Expect(env.Client.Create(ctx, db)).To(Succeed())
	g.Expect(db.Spec.ForProvider.Charset).To(Equal(clusterv1alpha1.DefaultCharset))
	g.Expect(db.Spec.ForProvider.Collation).To(Equal(clusterv1alpha1.DefaultCollation))
	g.Expect(db.Spec.ManagementPolicies).To(ConsistOf(xpv2.ManagementActionAll))
	g.Expect(db.GetProviderConfigReference()).To(BeNil(), "a database's project and credentials are its instance's")
	g.Expect(db.InstanceKey()).To(Equal(types.NamespacedName{Namespace: team, Name: "shared"}))
	u := user("defaults", func(p *v1alpha1.PostgresqlUserParameters) { onClusterInstance(&p.Instance, &p.ClusterInstance) })
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	g.Expect(u.Spec.ForProvider.Type).To(Equal(clusterv1alpha1.UserTypeBuiltIn))
	g.Expect(u.InstanceKey()).To(Equal(types.NamespacedName{Name: "shared"}), "a cluster-scoped instance has no namespace")
	g.Expect(u.ConnectionSecret()).To(Equal(&xpv2.SecretReference{Namespace: team, Name: "defaults-credentials"}))

	const fp = "spec.forProvider."
	cases := map[string]struct {
		object client.Object
		// want is empty for objects the API server must accept, else every fragment
		// of the expected denial.
		want []string
	}{
		// Exactly one instance, of this namespace or cluster-scoped.
		"DatabaseOnClusterInstance": {object: database("on-cluster", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			onClusterInstance(&p.Instance, &p.ClusterInstance)
		})},
		"DatabaseByClusterInstanceRef": {object: database("by-cluster-ref", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.Instance = ""
			p.ClusterInstanceRef = &xpv2.Reference{Name: "shared"}
		})},
		"DatabaseByClusterInstanceSelector": {object: database("by-cluster-selector", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.Instance = ""
			p.ClusterInstanceSelector = &xpv2.Selector{MatchLabels: map[string]string{"tier": "shared"}}
		})},
		"DatabaseNoInstance": {object: database("no-instance", func(p *v1alpha1.PostgresqlDatabaseParameters) { p.Instance = "" }),
			want: []string{fp + "instance", "is required: name the PostgresqlInstance the database belongs to, one of this namespace with instance, instanceRef or instanceSelector, or a cluster-scoped one with clusterInstance"}},
		"DatabaseBothInstances": {object: database("both", func(p *v1alpha1.PostgresqlDatabaseParameters) { p.ClusterInstance = "shared" }),
			want: []string{fp + "clusterInstance", "cannot be used together with instance, instanceRef or instanceSelector: a database belongs to one PostgresqlInstance"}},
		"DatabaseRefAndClusterSelector": {object: database("ref-and-selector", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.Instance = ""
			p.InstanceRef = &xpv2.NamespacedReference{Name: "shared"}
			p.ClusterInstanceSelector = &xpv2.Selector{MatchLabels: map[string]string{"tier": "shared"}}
		}), want: []string{fp + "clusterInstance", "cannot be used together with instance, instanceRef or instanceSelector"}},
		"UserNoInstance": {object: user("no-instance", func(p *v1alpha1.PostgresqlUserParameters) { p.Instance = "" }),
			want: []string{fp + "instance", "is required: name the PostgresqlInstance the user belongs to"}},
		"UserBothInstances": {object: user("both", func(p *v1alpha1.PostgresqlUserParameters) { p.ClusterInstanceRef = &xpv2.Reference{Name: "shared"} }),
			want: []string{fp + "clusterInstance", "cannot be used together with instance, instanceRef or instanceSelector: a user belongs to one PostgresqlInstance"}},

		// References stay in the object's namespace.
		"DatabaseInstanceRefOtherNamespace": {object: database("ref-other-ns", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.Instance = ""
			p.InstanceRef = &xpv2.NamespacedReference{Name: "shared", Namespace: "team-b"}
		}), want: []string{fp + "instanceRef.namespace", "must be omitted: a namespaced PostgresqlDatabase may belong only to a PostgresqlInstance of its own namespace; use clusterInstanceRef"}},
		"DatabaseInstanceSelectorOtherNamespace": {object: database("selector-other-ns", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.Instance = ""
			p.InstanceSelector = &xpv2.NamespacedSelector{MatchLabels: map[string]string{"tier": "shared"}, Namespace: "team-b"}
		}), want: []string{fp + "instanceSelector.namespace", "must be omitted", "use clusterInstanceSelector"}},
		"DatabaseOwnerRefOtherNamespace": {object: database("owner-other-ns", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.OwnerRef = &xpv2.NamespacedReference{Name: "app", Namespace: "team-b"}
		}), want: []string{fp + "ownerRef.namespace", "must be omitted: the owner is a PostgresqlUser of the database's own namespace"}},
		"DatabaseOwnerSelectorOtherNamespace": {object: database("owner-selector-other-ns", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.OwnerSelector = &xpv2.NamespacedSelector{MatchLabels: map[string]string{"app": "orders"}, Namespace: "team-b"}
		}), want: []string{fp + "ownerSelector.namespace", "must be omitted"}},
		"DatabaseOwnerInNamespace": {object: database("owner-here", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.OwnerRef = &xpv2.NamespacedReference{Name: "app"}
		})},
		"UserInstanceRefOtherNamespace": {object: user("ref-other-ns", func(p *v1alpha1.PostgresqlUserParameters) {
			p.Instance = ""
			p.InstanceRef = &xpv2.NamespacedReference{Name: "shared", Namespace: "team-b"}
		}), want: []string{fp + "instanceRef.namespace", "must be omitted: a namespaced PostgresqlUser may belong only to a PostgresqlInstance of its own namespace"}},
		"UserInstanceSelectorOtherNamespace": {object: user("selector-other-ns", func(p *v1alpha1.PostgresqlUserParameters) {
			p.Instance = ""
			p.InstanceSelector = &xpv2.NamespacedSelector{MatchLabels: map[string]string{"tier": "shared"}, Namespace: "team-b"}
		}), want: []string{fp + "instanceSelector.namespace", "must be omitted"}},

		// The shared settings' rules and the rules on the whole object.
		"DatabaseReservedName": {object: database("reserved", func(p *v1alpha1.PostgresqlDatabaseParameters) { p.Name = ptr.To("template0") }),
			want: []string{fp + "name", "is reserved: every Cloud SQL instance has a database template0"}},
		"DatabaseMetadataDots":   {object: database("team.orders"), want: []string{fp + "name", "is required when metadata.name is not a valid database name"}},
		"DatabaseCollationQuote": {object: database("collation", func(p *v1alpha1.PostgresqlDatabaseParameters) { p.Collation = "C'" }), want: []string{fp + "collation", "must be a collation name"}},
		"UserReservedName":       {object: user("reserved", func(p *v1alpha1.PostgresqlUserParameters) { p.Name = ptr.To("cloudsqliamuser") }), want: []string{fp + "name", "is reserved", "Cloud SQL reserves the names that start with cloudsql"}},
		"UserMetadataPostgres":   {object: user("postgres"), want: []string{fp + "name", "is required when metadata.name is not a valid login name"}},
		"UserNoSecret": {object: func() client.Object {
			u := user("no-secret")
			u.Spec.WriteConnectionSecretToReference = nil
			return u
		}(), want: []string{"spec.writeConnectionSecretToRef", "is required for a BUILT_IN user the provider may create", "in the user's namespace"}},
		"UserIamWithoutSecret": {object: func() client.Object {
			u := user("iam", func(p *v1alpha1.PostgresqlUserParameters) {
				p.Type = clusterv1alpha1.UserTypeCloudIAMServiceAccount
				p.IAMPrincipal = "orders@my-project-123.iam.gserviceaccount.com"
			})
			u.Spec.WriteConnectionSecretToReference = nil
			return u
		}()},
		"UserIamWithoutPrincipal": {object: user("iam-no-principal", func(p *v1alpha1.PostgresqlUserParameters) { p.Type = clusterv1alpha1.UserTypeCloudIAMUser }),
			want: []string{fp + "iamPrincipal", "is required for CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER users"}},
		"UserBuiltInWithPrincipal": {object: user("builtin-principal", func(p *v1alpha1.PostgresqlUserParameters) { p.IAMPrincipal = "jane@example.com" }),
			want: []string{fp + "iamPrincipal", "must be omitted for a BUILT_IN user"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(ctx, tc.object)
			if len(tc.want) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}

	// Immutable like the cluster-scoped kinds, and the instance cannot change,
	// not even to the other family.
	db.Spec.ForProvider.Charset = "LATIN1"
	denied(g, env.Client.Update(ctx, db), fp+"charset", "is immutable (was UTF8)")
	db.Spec.ForProvider.Charset = clusterv1alpha1.DefaultCharset
	db.Spec.ForProvider.Instance = ""
	db.Spec.ForProvider.ClusterInstance = "shared"
	denied(g, env.Client.Update(ctx, db), fp+"instance", "cannot be changed or removed once set (was shared): a database cannot move to another instance")
	u.Spec.ForProvider.ClusterInstance = "other"
	denied(g, env.Client.Update(ctx, u), fp+"clusterInstance", "cannot be changed or removed once set (was shared): a login cannot move to another instance")
	u.Spec.ForProvider.ClusterInstance = "shared"
	u.Spec.ForProvider.Type = clusterv1alpha1.UserTypeCloudIAMUser
	u.Spec.ForProvider.IAMPrincipal = "jane@example.com"
	denied(g, env.Client.Update(ctx, u), fp+"type", "is immutable (was BUILT_IN)")
}

func TestNamespacedMalformedManifests(t *testing.T) {
	controlplane.Need(t)
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}))).To(Succeed())
	const head = "apiVersion: cloudsql.m.travelaudience.com/v1alpha1\nmetadata: {namespace: " + team + ", name: malformed}\n"
	cases := map[string]struct {
		doc  string
		want []string
	}{
		// No providerConfigRef: the project and credentials are the instance's.
		"DatabaseProviderConfigRef": {doc: head + "kind: PostgresqlDatabase\nspec: {providerConfigRef: {kind: ProviderConfig, name: team}, forProvider: {instance: shared}}",
			want: []string{"strict decoding error", `unknown field "spec.providerConfigRef"`}},
		"UserProviderConfigRef": {doc: head + "kind: PostgresqlUser\nspec: {providerConfigRef: {kind: ProviderConfig, name: team}, writeConnectionSecretToRef: {name: x}, forProvider: {instance: shared}}",
			want: []string{"strict decoding error", `unknown field "spec.providerConfigRef"`}},
		// A namespaced object has no deletionPolicy (management policies only), and a
		// namespaced user no allow-list of its own: it serves its own namespace.
		"DatabaseDeletionPolicy": {doc: head + "kind: PostgresqlDatabase\nspec: {deletionPolicy: Orphan, forProvider: {instance: shared}}",
			want: []string{"strict decoding error", `unknown field "spec.deletionPolicy"`}},
		"UserInjection": {doc: head + "kind: PostgresqlUser\nspec: {writeConnectionSecretToRef: {name: x}, forProvider: {instance: shared, injection: {allowedNamespaces: [team-b]}}}",
			want: []string{"strict decoding error", `unknown field "spec.forProvider.injection"`}},
		"UserSecretNamespace": {doc: head + "kind: PostgresqlUser\nspec: {writeConnectionSecretToRef: {name: x, namespace: team-b}, forProvider: {instance: shared}}",
			want: []string{"strict decoding error", `unknown field "spec.writeConnectionSecretToRef.namespace"`}},
		"ClusterInstanceRefNamespace": {doc: head + "kind: PostgresqlDatabase\nspec: {forProvider: {clusterInstanceRef: {name: shared, namespace: team-a}}}",
			want: []string{"strict decoding error", `unknown field "spec.forProvider.clusterInstanceRef.namespace"`}},
		"ClusterInstanceInt": {doc: head + "kind: PostgresqlDatabase\nspec: {forProvider: {clusterInstance: 7}}",
			want: []string{"spec.forProvider.clusterInstance", "must be of type string"}},
		"TypeUnknown": {doc: head + "kind: PostgresqlUser\nspec: {writeConnectionSecretToRef: {name: x}, forProvider: {instance: shared, type: PASSWORD}}",
			want: []string{"spec.forProvider.type", `Unsupported value: "PASSWORD"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			objs, err := manifests.Decode([]byte(tc.doc))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(objs).To(HaveLen(1))
			objs[0].SetName("malformed-" + strings.ToLower(name))
			denied(g, env.Client.Create(ctx, objs[0], client.FieldValidation(metav1.FieldValidationStrict)), tc.want...)
		})
	}
}

// TestNamespacedResolveReferences resolves the references of both kinds as the
// managed reconciler does, against the API server: those of the object's
// namespace with the namespaced resolver, clusterInstance* with the cluster one.
func TestNamespacedResolveReferences(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	for _, ns := range []string{team, "team-b"} {
		g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
	}
	local := instance("resolve-local")
	local.SetLabels(map[string]string{"tier": "resolve-local"})
	g.Expect(env.Client.Create(ctx, local)).To(Succeed())
	// An instance of another namespace that the selectors below would match.
	elsewhere := instance("resolve-elsewhere")
	elsewhere.SetNamespace("team-b")
	elsewhere.SetLabels(map[string]string{"tier": "resolve-elsewhere"})
	g.Expect(env.Client.Create(ctx, elsewhere)).To(Succeed())
	shared := &clusterv1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "resolve-shared", Labels: map[string]string{"tier": "resolve-shared"}}}
	shared.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: "crossplane-system", Name: "resolve-shared"}
	shared.Spec.ForProvider.Networking.PublicIP.Enabled = true
	g.Expect(env.Client.Create(ctx, shared)).To(Succeed())
	owner := user("resolve-owner", func(p *v1alpha1.PostgresqlUserParameters) {
		p.Instance = ""
		p.ClusterInstanceSelector = &xpv2.Selector{MatchLabels: map[string]string{"tier": "resolve-shared"}}
	})
	owner.SetLabels(map[string]string{"app": "resolve-orders"})
	g.Expect(env.Client.Create(ctx, owner)).To(Succeed())

	g.Expect(owner.ResolveReferences(ctx, env.Client)).To(Succeed())
	g.Expect(owner.Spec.ForProvider.ClusterInstance).To(Equal(shared.GetName()))
	g.Expect(owner.Spec.ForProvider.ClusterInstanceRef).To(Equal(&xpv2.Reference{Name: shared.GetName()}))
	g.Expect(owner.Spec.ForProvider.Instance).To(BeEmpty())
	g.Expect(owner.InstanceKey()).To(Equal(types.NamespacedName{Name: shared.GetName()}))

	cases := map[string]struct {
		params func(p *v1alpha1.PostgresqlDatabaseParameters)
		// want are the values resolution sets, or errs the fragments of its error.
		want v1alpha1.PostgresqlDatabaseParameters
		errs []string
	}{
		"LocalReferences": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.InstanceRef = &xpv2.NamespacedReference{Name: local.GetName()}
				p.OwnerRef = &xpv2.NamespacedReference{Name: owner.GetName()}
			},
			want: v1alpha1.PostgresqlDatabaseParameters{
				Instance: local.GetName(), InstanceRef: &xpv2.NamespacedReference{Name: local.GetName()},
				Owner: owner.GetName(), OwnerRef: &xpv2.NamespacedReference{Name: owner.GetName()},
			},
		},
		"LocalSelectors": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.InstanceSelector = &xpv2.NamespacedSelector{MatchLabels: map[string]string{"tier": "resolve-local"}}
				p.OwnerSelector = &xpv2.NamespacedSelector{MatchLabels: map[string]string{"app": "resolve-orders"}}
			},
			want: v1alpha1.PostgresqlDatabaseParameters{
				Instance: local.GetName(), InstanceRef: &xpv2.NamespacedReference{Name: local.GetName(), Namespace: team},
				InstanceSelector: &xpv2.NamespacedSelector{MatchLabels: map[string]string{"tier": "resolve-local"}},
				Owner:            owner.GetName(), OwnerRef: &xpv2.NamespacedReference{Name: owner.GetName(), Namespace: team},
				OwnerSelector: &xpv2.NamespacedSelector{MatchLabels: map[string]string{"app": "resolve-orders"}},
			},
		},
		"ClusterInstanceRef": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.ClusterInstanceRef = &xpv2.Reference{Name: shared.GetName()}
			},
			want: v1alpha1.PostgresqlDatabaseParameters{ClusterInstance: shared.GetName(), ClusterInstanceRef: &xpv2.Reference{Name: shared.GetName()}},
		},
		"AnInstanceOfAnotherNamespaceIsNotSelected": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.InstanceSelector = &xpv2.NamespacedSelector{MatchLabels: map[string]string{"tier": "resolve-elsewhere"}}
			},
			errs: []string{"cannot resolve spec.forProvider.instanceRef or instanceSelector to a PostgresqlInstance of this namespace", "no resources matched selector"},
		},
		"AnInstanceOfAnotherNamespaceIsNotFound": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.InstanceRef = &xpv2.NamespacedReference{Name: elsewhere.GetName()}
			},
			errs: []string{"cannot resolve spec.forProvider.instanceRef or instanceSelector to a PostgresqlInstance of this namespace", "not found"},
		},
		"ANamespacedInstanceIsNotAClusterInstance": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.ClusterInstanceRef = &xpv2.Reference{Name: local.GetName()}
			},
			errs: []string{"cannot resolve spec.forProvider.clusterInstanceRef or clusterInstanceSelector to a cluster-scoped PostgresqlInstance", "not found"},
		},
		"NoOwner": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.Instance = local.GetName()
				p.OwnerRef = &xpv2.NamespacedReference{Name: "resolve-nobody"}
			},
			errs: []string{"cannot resolve spec.forProvider.ownerRef or ownerSelector to a PostgresqlUser of this namespace", "not found"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			db := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "resolve-" + strings.ToLower(name)}}
			tc.params(&db.Spec.ForProvider)
			err := db.ResolveReferences(ctx, env.Client)
			if len(tc.errs) > 0 {
				denied(g, err, tc.errs...)
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(db.Spec.ForProvider).To(Equal(tc.want))
		})
	}
}
