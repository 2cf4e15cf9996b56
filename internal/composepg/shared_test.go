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

package composepg

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/types/known/structpb"
)

const (
	sharedPI   = "shared-pg"
	userName   = "orders-db-x7k2p-u4v5w"
	dbName     = "orders-db-x7k2p-d6e7f"
	nsUserName = "orders-db-u4v5w"
	nsDBName   = "orders-db-d6e7f"
	inputHead  = `"apiVersion": "cloudsql.fn.travelaudience.com/v1alpha1", "kind": "Input"`
)

// input is the function's input with the given fields (JSON, without braces).
func input(fields string) *structpb.Struct {
	if fields != "" {
		fields = ", " + fields
	}
	return resource.MustStructJSON("{" + inputHead + fields + "}")
}

var (
	onCluster    = input(`"sharedInstance": {"clusterInstance": "` + sharedPI + `"}`)
	onNamespaced = input(`"sharedInstance": {"instance": "` + sharedPI + `"}`)
)

// object decodes JSON into what AsMap returns.
func object(t *testing.T, j string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(j), &m); err != nil {
		t.Fatalf("bad JSON %s: %v", j, err)
	}
	return normalise(t, m)
}

// observedComposed is a user or database of apiVersion and kind, named name in
// namespace (or cluster-scoped), on the instance of forProvider, as Crossplane
// observed it.
func observedComposed(apiVersion, kind, namespace, name, forProvider, conditions string, details resource.ConnectionDetails) *fnv1.Resource {
	return &fnv1.Resource{
		Resource: resource.MustStructJSON(fmt.Sprintf(`{"apiVersion": %q, "kind": %q,
			"metadata": {"name": %q, "namespace": %q}, "spec": {"forProvider": {%s}}, "status": {"conditions": [%s]}}`,
			apiVersion, kind, name, namespace, forProvider, conditions)),
		ConnectionDetails: details,
	}
}

const (
	clusterAPI    = "cloudsql.travelaudience.com/v1alpha1"
	namespacedAPI = "cloudsql.m.travelaudience.com/v1alpha1"
	onSharedPI    = `"instance": "` + sharedPI + `"`
	onClusterPI   = `"clusterInstance": "` + sharedPI + `"`
)

// userDetails are what the provider publishes for a user that owns its database.
func userDetails(user, db string) resource.ConnectionDetails {
	return resource.ConnectionDetails{
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

// sixDetails are the keys of userDetails that a composite passes on.
func sixDetails(user, db string) map[string][]byte {
	d := userDetails(user, db)
	delete(d, "pgpass")
	delete(d, "publicIP")
	delete(d, "databases")
	return d
}

func TestRunFunctionComposesShared(t *testing.T) {
	user := func(injection string) string {
		return `{"apiVersion": "` + clusterAPI + `", "kind": "PostgresqlUser",
			"spec": {"deletionPolicy": "Delete",
				"writeConnectionSecretToRef": {"name": "orders-db-x7k2p-postgres", "namespace": "crossplane-system"},
				"forProvider": {"instance": "` + sharedPI + `", "type": "BUILT_IN"` + injection + `}}}`
	}
	claimsNS := `, "injection": {"allowedNamespaces": ["` + teamNS + `"]}`
	database := func(owner string) string {
		return `{"apiVersion": "` + clusterAPI + `", "kind": "PostgresqlDatabase",
			"metadata": {"annotations": {"cloudsql.travelaudience.com/allow-deletion": "true"}},
			"spec": {"deletionPolicy": "Delete",
				"forProvider": {"instance": "` + sharedPI + `", "ownerSelector": {"matchControllerRef": true}` + owner + `}}}`
	}
	ownedByUser := `, "owner": "` + userName + `"`
	type want struct {
		user, database           string
		userReady, databaseReady fnv1.Ready
		status                   map[string]any
		details                  map[string][]byte
		warning                  string
	}
	cases := map[string]struct {
		xr       *structpb.Struct
		observed map[string]*fnv1.Resource
		want     want
	}{
		"ANewClaimGetsAUserForItsNamespaceAndADatabaseWhoseOwnerTheProviderResolves": {
			xr:   claimed(""),
			want: want{user: user(claimsNS), database: database(""), userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE},
		},
		"TheSizeAndTheRestOfTheInstancesSettingsAreThePlatforms": {
			xr:   claimed(`"size": "large", "region": "us-central1", "networking": "private", "network": "` + vpc + `"`),
			want: want{user: user(claimsNS), database: database(""), userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE},
		},
		"OnceTheUserExistsItOwnsTheDatabaseByName": {
			xr: claimed(""),
			observed: map[string]*fnv1.Resource{
				string(ResourceNameUser): observedComposed(clusterAPI, "PostgresqlUser", "", userName, onSharedPI, readyFalse, nil),
			},
			want: want{user: user(claimsNS), database: database(ownedByUser), userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE,
				status: map[string]any{"userName": userName}},
		},
		"ReadyWithBothAndTheClaimGetsTheUsersCredentialsAndDatabase": {
			xr: claimed(""),
			observed: map[string]*fnv1.Resource{
				string(ResourceNameUser):     observedComposed(clusterAPI, "PostgresqlUser", "", userName, onSharedPI, readyTrue, userDetails(userName, dbName)),
				string(ResourceNameDatabase): observedComposed(clusterAPI, "PostgresqlDatabase", "", dbName, onSharedPI, readyTrue, nil),
			},
			want: want{user: user(claimsNS), database: database(ownedByUser), userReady: fnv1.Ready_READY_TRUE, databaseReady: fnv1.Ready_READY_TRUE,
				status: map[string]any{"userName": userName, "databaseName": dbName}, details: sixDetails(userName, dbName)},
		},
		"TheUserReadyTheDatabaseNot": {
			xr: claimed(""),
			observed: map[string]*fnv1.Resource{
				string(ResourceNameUser):     observedComposed(clusterAPI, "PostgresqlUser", "", userName, onSharedPI, readyTrue, userDetails(userName, "")),
				string(ResourceNameDatabase): observedComposed(clusterAPI, "PostgresqlDatabase", "", dbName, onSharedPI, readyFalse, nil),
			},
			want: want{user: user(claimsNS), database: database(ownedByUser), userReady: fnv1.Ready_READY_TRUE, databaseReady: fnv1.Ready_READY_FALSE,
				status: map[string]any{"userName": userName, "databaseName": dbName}, details: func() map[string][]byte {
					d := sixDetails(userName, "")
					delete(d, "database")
					return d
				}()},
		},
		"WhyADatabaseIsNotSyncedReachesTheClaim": {
			xr: claimed(""),
			observed: map[string]*fnv1.Resource{
				string(ResourceNameDatabase): observedComposed(clusterAPI, "PostgresqlDatabase", "", dbName, onSharedPI, notSynced, nil),
			},
			want: want{user: user(claimsNS), database: database(""), userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE,
				status:  map[string]any{"databaseName": dbName},
				warning: "PostgresqlDatabase " + dbName + " is not synced with Cloud SQL (ReconcileError): the name is reserved"},
		},
		"AllowedNamespacesNarrowTheUser": {
			xr:   claimed(`"allowedNamespaces": ["web", "jobs"]`),
			want: want{user: user(`, "injection": {"allowedNamespaces": ["web", "jobs"]}`), database: database(""), userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE},
		},
		"EveryNamespaceLeavesItToTheInstancesAllowList": {
			xr:   claimed(`"allowedNamespaces": ["*"]`),
			want: want{user: user(""), database: database(""), userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE},
		},
		"AnUnclaimedCompositeLeavesItToTheInstancesAllowList": {
			xr:   resource.MustStructJSON(`{` + xrHeader + `, "metadata": {"name": "` + xrName + `"}, "spec": {}}`),
			want: want{user: user(""), database: database(""), userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE},
		},
		"OrphanKeepsTheUserAndTheDatabase": {
			xr: claimed(`"deletionPolicy": "Orphan"`),
			want: want{
				user:     strings.Replace(user(claimsNS), `"Delete"`, `"Orphan"`, 1),
				database: strings.Replace(database(""), `"Delete"`, `"Orphan"`, 1), userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			rsp := run(g, &fnv1.RunFunctionRequest{Input: onCluster, Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: tc.xr}, Resources: tc.observed}})

			expectWarnings(g, rsp, fnv1.Target_TARGET_COMPOSITE_AND_CLAIM, tc.want.warning)
			g.Expect(rsp.GetDesired().GetResources()).To(HaveLen(2))
			expectDesired(g, rsp, ResourceNameUser, object(t, tc.want.user), tc.want.userReady)
			expectDesired(g, rsp, ResourceNameDatabase, object(t, tc.want.database), tc.want.databaseReady)
			if tc.want.status == nil {
				g.Expect(rsp.GetDesired().GetComposite().GetResource().AsMap()).To(BeEmpty())
			} else {
				g.Expect(rsp.GetDesired().GetComposite().GetResource().AsMap()).To(Equal(map[string]any{"status": tc.want.status}))
			}
			if tc.want.details == nil {
				g.Expect(rsp.GetDesired().GetComposite().GetConnectionDetails()).To(BeEmpty())
			} else {
				g.Expect(rsp.GetDesired().GetComposite().GetConnectionDetails()).To(Equal(tc.want.details))
			}
			expectSpecValid(g, rsp)
			g.Expect(rsp.GetConditions()[0].GetTarget()).To(Equal(fnv1.Target_TARGET_COMPOSITE_AND_CLAIM))
		})
	}
}

func TestRunFunctionComposesSharedNamespaced(t *testing.T) {
	user := func(on, policies string) string {
		return `{"apiVersion": "` + namespacedAPI + `", "kind": "PostgresqlUser", "metadata": {"namespace": "` + teamNS + `"},
			"spec": {"writeConnectionSecretToRef": {"name": "orders-db-postgresqluser"}` + policies + `,
				"forProvider": {` + on + `, "type": "BUILT_IN"}}}`
	}
	database := func(on, owner, policies string) string {
		return `{"apiVersion": "` + namespacedAPI + `", "kind": "PostgresqlDatabase",
			"metadata": {"namespace": "` + teamNS + `", "annotations": {"cloudsql.travelaudience.com/allow-deletion": "true"}},
			"spec": {"forProvider": {` + on + `, "ownerSelector": {"matchControllerRef": true}` + owner + `}` + policies + `}}`
	}
	orphan := `, "managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]`
	ownedByUser := `, "owner": "` + nsUserName + `"`
	statusBefore := map[string]any{"connectionSecretName": "orders-db-postgres"}
	type want struct {
		user, database                        string
		userReady, databaseReady, secretReady fnv1.Ready
		secret                                map[string][]byte
		status                                map[string]any
	}
	cases := map[string]struct {
		input    *structpb.Struct
		xr       *structpb.Struct
		observed map[string]*fnv1.Resource
		want     want
	}{
		"OnAClusterInstanceTheSecretWithoutDataUntilTheUserPublishes": {
			input: onCluster,
			xr:    namespacedXR(""),
			want: want{user: user(onClusterPI, ""), database: database(onClusterPI, "", ""), status: statusBefore,
				userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE},
		},
		"OnAnInstanceOfTheNamespace": {
			input: onNamespaced,
			xr:    namespacedXR(""),
			want: want{user: user(onSharedPI, ""), database: database(onSharedPI, "", ""), status: statusBefore,
				userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE},
		},
		"OrphanKeepsEveryManagementActionButDelete": {
			input: onCluster,
			xr:    namespacedXR(`"deletionPolicy": "Orphan"`),
			want: want{user: user(onClusterPI, orphan), database: database(onClusterPI, "", orphan), status: statusBefore,
				userReady: fnv1.Ready_READY_FALSE, databaseReady: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE},
		},
		"ReadyWithBothAndTheSecretHoldingTheUsersSixKeys": {
			input: onCluster,
			xr:    namespacedXR(""),
			observed: map[string]*fnv1.Resource{
				string(ResourceNameUser):     observedComposed(namespacedAPI, "PostgresqlUser", teamNS, nsUserName, onClusterPI, readyTrue, userDetails(nsUserName, nsDBName)),
				string(ResourceNameDatabase): observedComposed(namespacedAPI, "PostgresqlDatabase", teamNS, nsDBName, onClusterPI, readyTrue, nil),
			},
			want: want{user: user(onClusterPI, ""), database: database(onClusterPI, ownedByUser, ""),
				status:    map[string]any{"connectionSecretName": "orders-db-postgres", "userName": nsUserName, "databaseName": nsDBName},
				userReady: fnv1.Ready_READY_TRUE, databaseReady: fnv1.Ready_READY_TRUE, secretReady: fnv1.Ready_READY_TRUE, secret: sixDetails(nsUserName, nsDBName)},
		},
		"TheSecretGetsNoDataBeforeTheUserOwnsTheDatabase": {
			input: onNamespaced,
			xr:    namespacedXR(""),
			observed: map[string]*fnv1.Resource{
				string(ResourceNameUser):     observedComposed(namespacedAPI, "PostgresqlUser", teamNS, nsUserName, onSharedPI, readyTrue, userDetails(nsUserName, "")),
				string(ResourceNameDatabase): observedComposed(namespacedAPI, "PostgresqlDatabase", teamNS, nsDBName, onSharedPI, readyFalse, nil),
			},
			want: want{user: user(onSharedPI, ""), database: database(onSharedPI, ownedByUser, ""),
				status:    map[string]any{"connectionSecretName": "orders-db-postgres", "userName": nsUserName, "databaseName": nsDBName},
				userReady: fnv1.Ready_READY_TRUE, databaseReady: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE},
		},
		"ACompleteSecretKeepsItsDataWhileTheUsersDetailsAreIncomplete": {
			input: onCluster,
			xr:    namespacedXR(""),
			observed: map[string]*fnv1.Resource{
				string(ResourceNameUser):             observedComposed(namespacedAPI, "PostgresqlUser", teamNS, nsUserName, onClusterPI, readyTrue, nil),
				string(ConnectionSecretResourceName): observedSecret(sixDetails(nsUserName, nsDBName)),
			},
			want: want{user: user(onClusterPI, ""), database: database(onClusterPI, ownedByUser, ""),
				status:    map[string]any{"connectionSecretName": "orders-db-postgres", "userName": nsUserName},
				userReady: fnv1.Ready_READY_TRUE, databaseReady: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_TRUE, secret: sixDetails(nsUserName, nsDBName)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			rsp := run(g, &fnv1.RunFunctionRequest{Input: tc.input, Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: tc.xr}, Resources: tc.observed}})

			expectWarnings(g, rsp, fnv1.Target_TARGET_COMPOSITE, "")
			g.Expect(rsp.GetDesired().GetResources()).To(HaveLen(3))
			expectDesired(g, rsp, ResourceNameUser, object(t, tc.want.user), tc.want.userReady)
			expectDesired(g, rsp, ResourceNameDatabase, object(t, tc.want.database), tc.want.databaseReady)
			expectDesired(g, rsp, ConnectionSecretResourceName, secretWith(tc.want.secret), tc.want.secretReady)
			g.Expect(rsp.GetDesired().GetComposite().GetConnectionDetails()).To(BeEmpty())
			g.Expect(rsp.GetDesired().GetComposite().GetResource().AsMap()).To(Equal(map[string]any{"status": tc.want.status}))
			expectSpecValid(g, rsp)
			g.Expect(rsp.GetConditions()[0].GetTarget()).To(Equal(fnv1.Target_TARGET_COMPOSITE))
		})
	}
}

// The function's input is the platform team's: its mistakes stop composition with
// a fatal result, but do not make the team's spec invalid.
func TestRunFunctionRefusesInput(t *testing.T) {
	cases := map[string]struct {
		input *structpb.Struct
		xr    *structpb.Struct
		want  string
	}{
		"AnUnknownField": {
			input: input(`"sharedInstance": {"name": "shared-pg"}`),
			want:  `cannot read the function's input (the Composition's pipeline step input): unknown field "name"; write apiVersion: cloudsql.fn.travelaudience.com/v1alpha1, kind: Input and, for shared instances, sharedInstance.clusterInstance or sharedInstance.instance`,
		},
		"AnotherFunctionsInput": {
			input: resource.MustStructJSON(`{"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources"}`),
			want:  `the function's input is apiVersion "pt.fn.crossplane.io/v1beta1", kind "Resources", which is not this function's: write apiVersion: cloudsql.fn.travelaudience.com/v1alpha1, kind: Input`,
		},
		"ASharedInstanceWithoutAName": {
			input: input(`"sharedInstance": {}`),
			want:  "input.sharedInstance names no PostgresqlInstance: set clusterInstance to the name of a cluster-scoped PostgresqlInstance or, for namespaced composites, instance to the name of a PostgresqlInstance in each composite's namespace; or remove sharedInstance to give each composite an instance of its own",
		},
		"BothKindsOfInstance": {
			input: input(`"sharedInstance": {"clusterInstance": "a", "instance": "b"}`),
			want:  `input.sharedInstance names both clusterInstance "a" and instance "b": a database belongs to one PostgresqlInstance; keep one of them`,
		},
		"AClusterInstanceThatIsNotAName": {
			input: input(`"sharedInstance": {"clusterInstance": "Shared_PG"}`),
			want:  `input.sharedInstance.clusterInstance "Shared_PG" is not the name of a PostgresqlInstance: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`,
		},
		"AnInstanceThatIsNotAName": {
			input: input(`"sharedInstance": {"instance": "-pg"}`),
			xr:    namespacedXR(""),
			want:  `input.sharedInstance.instance "-pg" is not the name of a PostgresqlInstance: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`,
		},
		"ANamespacedInstanceForAClaim": {
			input: onNamespaced,
			want:  `input.sharedInstance.instance "shared-pg" names a namespaced PostgresqlInstance, which the cluster-scoped XPostgreSQLInstance orders-db-x7k2p cannot use: name a cluster-scoped PostgresqlInstance with clusterInstance in this Composition`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			xr := tc.xr
			if xr == nil {
				xr = claimed("")
			}
			rsp := run(g, &fnv1.RunFunctionRequest{Input: tc.input, Observed: observing(xr, nil)})

			expectFatal(g, rsp, Equal(tc.want))
			g.Expect(rsp.GetConditions()).To(BeEmpty())
			g.Expect(rsp.GetDesired().GetResources()).To(BeEmpty())
		})
	}
}

func TestRunFunctionRefusesShared(t *testing.T) {
	long := "d" + strings.Repeat("b", 57)
	cases := map[string]struct {
		input    *structpb.Struct
		xr       *structpb.Struct
		observed map[string]*fnv1.Resource
		target   fnv1.Target
		want     string
	}{
		"AClaimWhoseNameLeavesNoRoomForPostgreSQLNames": {
			input:  onCluster,
			xr:     resource.MustStructJSON(`{` + xrHeader + `, "metadata": {"name": "` + long + `"}, "spec": {}}`),
			target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM,
			want:   `metadata.name "` + long + `" of the composite is longer than 57 characters: its PostgresqlUser and PostgresqlDatabase are named after it, and PostgreSQL names hold at most 63 characters; give it (or its claim) a shorter name`,
		},
		"ANamespacedCompositeWhoseNameLeavesNoRoomForPostgreSQLNames": {
			input:  onNamespaced,
			xr:     resource.MustStructJSON(`{` + nsXRHeader + `, "metadata": {"name": "` + long + `", "namespace": "` + teamNS + `"}, "spec": {}}`),
			target: fnv1.Target_TARGET_COMPOSITE,
			want:   `metadata.name "` + long + `" of PostgreSQLDatabase ` + teamNS + `/` + long + ` is longer than 57 characters: its PostgresqlUser and PostgresqlDatabase are named after it, and PostgreSQL names hold at most 63 characters; create the PostgreSQLDatabase again under a shorter name`,
		},
		"AClaimWithAnInstanceOfItsOwn": {
			input:    onCluster,
			xr:       claimed(""),
			observed: map[string]*fnv1.Resource{string(ResourceName): observedInstance(defaultedSmall, readyTrue, nil)},
			target:   fnv1.Target_TARGET_COMPOSITE_AND_CLAIM,
			want:     "the Composition now asks for a database on the shared cluster-scoped PostgresqlInstance shared-pg, but this claim has a PostgresqlInstance of its own, " + piName + ", which composing the database would delete with its data: select a Composition without sharedInstance for it (spec.compositionRef), or create a new claim and migrate the data",
		},
		"ANamespacedCompositeWithAnInstanceOfItsOwn": {
			input:    onNamespaced,
			xr:       namespacedXR(""),
			observed: map[string]*fnv1.Resource{string(ResourceName): observedNamespacedInstance(defaultedSmall, readyTrue, nil)},
			target:   fnv1.Target_TARGET_COMPOSITE,
			want:     "the Composition now asks for a database on the shared PostgresqlInstance shared-pg of namespace " + teamNS + ", but this PostgreSQLDatabase has a PostgresqlInstance of its own, " + nsPIName + ", which composing the database would delete with its data: select a Composition without sharedInstance for it (spec.compositionRef), or create a new PostgreSQLDatabase and migrate the data",
		},
		"AClaimsUserOnAnotherSharedInstance": {
			input:    onCluster,
			xr:       claimed(""),
			observed: map[string]*fnv1.Resource{string(ResourceNameUser): observedComposed(clusterAPI, "PostgresqlUser", "", userName, `"instance": "old-pg"`, readyTrue, nil)},
			target:   fnv1.Target_TARGET_COMPOSITE_AND_CLAIM,
			want:     "the Composition now names the shared cluster-scoped PostgresqlInstance shared-pg, but the PostgresqlUser " + userName + " of this claim is on the cluster-scoped PostgresqlInstance old-pg and cannot move: name that instance in the Composition's input again, or create a new claim and migrate the data",
		},
		"ANamespacedDatabaseOnTheClusterInstanceOfTheSameName": {
			input:    onNamespaced,
			xr:       namespacedXR(""),
			observed: map[string]*fnv1.Resource{string(ResourceNameDatabase): observedComposed(namespacedAPI, "PostgresqlDatabase", teamNS, nsDBName, onClusterPI, readyTrue, nil)},
			target:   fnv1.Target_TARGET_COMPOSITE,
			want:     "the Composition now names the shared PostgresqlInstance shared-pg of namespace " + teamNS + ", but the PostgresqlDatabase " + nsDBName + " of this PostgreSQLDatabase is on the cluster-scoped PostgresqlInstance shared-pg and cannot move: name that instance in the Composition's input again, or create a new PostgreSQLDatabase and migrate the data",
		},
		"AClaimOnASharedInstanceGivenAnInstanceOfItsOwn": {
			xr:       claimed(""),
			observed: map[string]*fnv1.Resource{string(ResourceNameDatabase): observedComposed(clusterAPI, "PostgresqlDatabase", "", dbName, onSharedPI, readyTrue, nil)},
			target:   fnv1.Target_TARGET_COMPOSITE_AND_CLAIM,
			want:     "the Composition now asks for a PostgresqlInstance of its own, but this claim has the PostgresqlDatabase " + dbName + " on the shared cluster-scoped PostgresqlInstance shared-pg, which composing an instance would delete with its data: select a Composition with that sharedInstance for it (spec.compositionRef), or create a new claim and migrate the data",
		},
		"ANamespacedCompositeOnASharedInstanceGivenAnInstanceOfItsOwn": {
			input:    input(""),
			xr:       namespacedXR(""),
			observed: map[string]*fnv1.Resource{string(ResourceNameUser): observedComposed(namespacedAPI, "PostgresqlUser", teamNS, nsUserName, onClusterPI, readyTrue, nil)},
			target:   fnv1.Target_TARGET_COMPOSITE,
			want:     "the Composition now asks for a PostgresqlInstance of its own, but this PostgreSQLDatabase has the PostgresqlUser " + nsUserName + " on the shared cluster-scoped PostgresqlInstance shared-pg, which composing an instance would delete with its data: select a Composition with that sharedInstance for it (spec.compositionRef), or create a new PostgreSQLDatabase and migrate the data",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			rsp := run(g, &fnv1.RunFunctionRequest{Input: tc.input, Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: tc.xr}, Resources: tc.observed}})

			expectRefused(g, rsp, tc.target, tc.want)
			g.Expect(rsp.GetConditions()[0].GetReason()).To(Equal(ReasonInvalidSpec))
			// Nothing is desired: Crossplane keeps what exists as it is.
			g.Expect(rsp.GetDesired().GetResources()).To(BeEmpty())
		})
	}
}
