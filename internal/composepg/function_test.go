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
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/cloudsql"
)

const (
	xrName   = "orders-db-x7k2p"
	teamNS   = "team-orders"
	vpc      = "projects/my-project-1/global/networks/default"
	piName   = "orders-db-x7k2p-q9z3l"
	xrHeader = `"apiVersion": "platform.example.org/v1alpha1", "kind": "XPostgreSQLInstance"`
)

// claimed is a claimed composite resource with the given spec fields (JSON,
// without braces), as Crossplane sends it.
func claimed(spec string) *structpb.Struct {
	if spec != "" {
		spec += ","
	}
	return resource.MustStructJSON(fmt.Sprintf(`{%s,
		"metadata": {"name": %q},
		"spec": {%s "claimRef": {"apiVersion": "platform.example.org/v1alpha1", "kind": "PostgreSQLInstance", "name": "orders-db", "namespace": %q}}}`,
		xrHeader, xrName, spec, teamNS))
}

// instance is what the function should compose; fields overrides parts of the
// small, public, claimed default (JSON objects are merged one level deep into
// spec.forProvider, other keys replace spec's).
func instance(t *testing.T, forProvider, spec string) map[string]any {
	t.Helper()
	base := fmt.Sprintf(`{
		"apiVersion": "cloudsql.travelaudience.com/v1alpha1", "kind": "PostgresqlInstance",
		"metadata": {"annotations": {"cloudsql.travelaudience.com/allow-deletion": "true"}},
		"spec": {
			"deletionPolicy": "Delete",
			"writeConnectionSecretToRef": {"name": "orders-db-x7k2p-postgres", "namespace": "crossplane-system"},
			"injection": {"allowedNamespaces": [%q]},
			"forProvider": {
				"version": "18", "edition": "Enterprise",
				"availability": {"type": "Zonal"},
				"location": {"region": "europe-west1", "zone": "Any"},
				"networking": {"privateIp": {"enabled": false}, "publicIp": {"enabled": true}},
				"resources": {"instanceType": "db-custom-1-3840", "disk": {"sizeMinimumGb": 10, "sizeMaximumGb": 50, "type": "SSD"}}
			}
		}}`, teamNS)
	var want map[string]any
	if err := json.Unmarshal([]byte(base), &want); err != nil {
		t.Fatal(err)
	}
	merge := func(into map[string]any, patch string) {
		if patch == "" {
			return
		}
		var m map[string]any
		if err := json.Unmarshal([]byte("{"+patch+"}"), &m); err != nil {
			t.Fatalf("bad patch %s: %v", patch, err)
		}
		for k, v := range m {
			if v == nil {
				delete(into, k)
				continue
			}
			into[k] = v
		}
	}
	s := want["spec"].(map[string]any)
	merge(s["forProvider"].(map[string]any), forProvider)
	merge(s, spec)
	return want
}

// observedInstance is the PostgresqlInstance as Crossplane observed it.
func observedInstance(forProvider string, conditions string, details resource.ConnectionDetails) *fnv1.Resource {
	return &fnv1.Resource{
		Resource: resource.MustStructJSON(fmt.Sprintf(`{
			"apiVersion": "cloudsql.travelaudience.com/v1alpha1", "kind": "PostgresqlInstance",
			"metadata": {"name": %q},
			"spec": {"forProvider": {%s}, "writeConnectionSecretToRef": {"name": "orders-db-x7k2p-postgres", "namespace": "crossplane-system"}},
			"status": {"conditions": [%s]}}`, piName, forProvider, conditions)),
		ConnectionDetails: details,
	}
}

const (
	defaultedSmall = `"version": "18", "edition": "Enterprise", "location": {"region": "europe-west1", "zone": "Any"},
		"networking": {"publicIp": {"enabled": true}, "privateIp": {"enabled": false}},
		"resources": {"instanceType": "db-custom-1-3840", "disk": {"sizeMinimumGb": 10, "sizeMaximumGb": 50, "type": "SSD"}}`
	readyTrue   = `{"type": "Ready", "status": "True", "reason": "Available"}, {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}`
	readyFalse  = `{"type": "Ready", "status": "False", "reason": "Creating"}, {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}`
	notSynced   = `{"type": "Ready", "status": "False", "reason": "Creating"}, {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "the name is reserved"}`
	withPrivate = `"version": "18", "location": {"region": "europe-west1"}, "networking": {"privateIp": {"enabled": true, "network": "` + vpc + `"}},
		"resources": {"disk": {"sizeMinimumGb": 10}}`
)

func allDetails() resource.ConnectionDetails {
	return resource.ConnectionDetails{
		"connectionName": []byte("my-project-1:europe-west1:" + piName),
		"endpoint":       []byte("10.0.0.3"),
		"port":           []byte("5432"),
		"username":       []byte("postgres"),
		"password":       []byte("s3cret"),
		"pgpass":         []byte("*:*:*:postgres:s3cret"),
		"publicIP":       []byte("34.1.2.3"),
		"privateIP":      []byte("10.0.0.3"),
	}
}

func TestRunFunctionComposes(t *testing.T) {
	type want struct {
		instance map[string]any
		ready    fnv1.Ready
		details  resource.ConnectionDetails
		warning  string
	}
	cases := map[string]struct {
		xr       *structpb.Struct
		observed *fnv1.Resource
		want     func(t *testing.T) want
	}{
		"AnEmptySpecIsASmallPublicInstanceTheClaimsNamespaceMayUse": {
			xr:   claimed(""),
			want: func(t *testing.T) want { return want{instance: instance(t, "", ""), ready: fnv1.Ready_READY_FALSE} },
		},
		"SmallWrittenOut": {
			xr: claimed(`"size": "small", "region": "europe-west1", "version": "18", "networking": "public", "deletionPolicy": "Delete"`),
			want: func(t *testing.T) want {
				return want{instance: instance(t, "", ""), ready: fnv1.Ready_READY_FALSE}
			},
		},
		"Medium": {
			xr: claimed(`"size": "medium", "region": "europe-west4", "version": "17"`),
			want: func(t *testing.T) want {
				return want{instance: instance(t, `"version": "17", "location": {"region": "europe-west4", "zone": "Any"},
					"resources": {"instanceType": "db-custom-2-7680", "disk": {"sizeMinimumGb": 50, "sizeMaximumGb": 250, "type": "SSD"}}`, ""), ready: fnv1.Ready_READY_FALSE}
			},
		},
		"LargeIsRegional": {
			xr: claimed(`"size": "large"`),
			want: func(t *testing.T) want {
				return want{instance: instance(t, `"availability": {"type": "Regional"},
					"resources": {"instanceType": "db-custom-4-15360", "disk": {"sizeMinimumGb": 100, "sizeMaximumGb": 1000, "type": "SSD"}}`, ""), ready: fnv1.Ready_READY_FALSE}
			},
		},
		"PrivateNetworkingHasNoPublicIP": {
			xr: claimed(`"networking": "private", "network": "` + vpc + `"`),
			want: func(t *testing.T) want {
				return want{instance: instance(t, `"networking": {"privateIp": {"enabled": true, "network": "`+vpc+`"}, "publicIp": {"enabled": false}}`, ""), ready: fnv1.Ready_READY_FALSE}
			},
		},
		"AllowedNamespacesReplaceTheClaimsAndOrphanIsPassedOn": {
			xr: claimed(`"allowedNamespaces": ["web", "jobs", "web"], "deletionPolicy": "Orphan"`),
			want: func(t *testing.T) want {
				return want{instance: instance(t, "", `"injection": {"allowedNamespaces": ["web", "jobs"]}, "deletionPolicy": "Orphan"`), ready: fnv1.Ready_READY_FALSE}
			},
		},
		"EveryNamespace": {
			xr: claimed(`"allowedNamespaces": ["*"]`),
			want: func(t *testing.T) want {
				return want{instance: instance(t, "", `"injection": {"allowedNamespaces": ["*"]}`), ready: fnv1.Ready_READY_FALSE}
			},
		},
		"AnUnclaimedCompositeLeavesInjectionToTheProvidersConfiguration": {
			xr: resource.MustStructJSON(`{` + xrHeader + `, "metadata": {"name": "` + xrName + `"}, "spec": {}}`),
			want: func(t *testing.T) want {
				return want{instance: instance(t, "", `"injection": null`), ready: fnv1.Ready_READY_FALSE}
			},
		},
		"AnUnclaimedCompositesClaimLabelStillCounts": {
			xr:   resource.MustStructJSON(`{` + xrHeader + `, "metadata": {"name": "` + xrName + `", "labels": {"crossplane.io/claim-namespace": "` + teamNS + `"}}, "spec": {}}`),
			want: func(t *testing.T) want { return want{instance: instance(t, "", ""), ready: fnv1.Ready_READY_FALSE} },
		},
		"TheSecretGoesWhereTheCompositeWritesItsOwn": {
			xr: resource.MustStructJSON(`{` + xrHeader + `, "metadata": {"name": "` + xrName + `"},
				"spec": {"writeConnectionSecretToRef": {"name": "uid", "namespace": "platform"}, "claimRef": {"name": "orders-db", "namespace": "` + teamNS + `"}}}`),
			want: func(t *testing.T) want {
				return want{instance: instance(t, "", `"writeConnectionSecretToRef": {"name": "orders-db-x7k2p-postgres", "namespace": "platform"}`), ready: fnv1.Ready_READY_FALSE}
			},
		},
		"ReadyOnceTheInstanceIsWithItsConnectionDetailsAndOnlyThose": {
			xr:       claimed(""),
			observed: observedInstance(defaultedSmall, readyTrue, allDetails()),
			want: func(t *testing.T) want {
				d := allDetails()
				return want{instance: instance(t, "", ""), ready: fnv1.Ready_READY_TRUE, details: resource.ConnectionDetails{
					"connectionName": d["connectionName"], "endpoint": d["endpoint"], "port": d["port"], "username": d["username"], "password": d["password"],
				}}
			},
		},
		"NotReadyWhileTheInstanceIsNotWithWhatItHasPublishedSoFar": {
			xr:       claimed(""),
			observed: observedInstance(defaultedSmall, readyFalse, resource.ConnectionDetails{"password": []byte("s3cret"), "endpoint": {}}),
			want: func(t *testing.T) want {
				return want{instance: instance(t, "", ""), ready: fnv1.Ready_READY_FALSE, details: resource.ConnectionDetails{"password": []byte("s3cret")}}
			},
		},
		"AnInstanceWithoutConditionsIsNotReady": {
			xr:       claimed(""),
			observed: observedInstance(defaultedSmall, "", nil),
			want: func(t *testing.T) want {
				return want{instance: instance(t, "", ""), ready: fnv1.Ready_READY_FALSE}
			},
		},
		"WhyAnInstanceIsNotSyncedReachesTheClaim": {
			xr:       claimed(""),
			observed: observedInstance(defaultedSmall, notSynced, nil),
			want: func(t *testing.T) want {
				return want{instance: instance(t, "", ""), ready: fnv1.Ready_READY_FALSE,
					warning: "PostgresqlInstance " + piName + " is not synced with Cloud SQL (ReconcileError): the name is reserved"}
			},
		},
		"ASmallerSizeKeepsTheDiskWhichCannotShrink": {
			xr:       claimed(`"size": "small"`),
			observed: observedInstance(`"version": "18", "location": {"region": "europe-west1"}, "resources": {"disk": {"sizeMinimumGb": 100, "sizeMaximumGb": 1000}}`, readyTrue, nil),
			want: func(t *testing.T) want {
				return want{instance: instance(t, `"resources": {"instanceType": "db-custom-1-3840", "disk": {"sizeMinimumGb": 100, "sizeMaximumGb": 100, "type": "SSD"}}`, ""), ready: fnv1.Ready_READY_TRUE}
			},
		},
		"ALargerSizeGrowsTheDisk": {
			xr:       claimed(`"size": "medium"`),
			observed: observedInstance(defaultedSmall, readyTrue, nil),
			want: func(t *testing.T) want {
				return want{instance: instance(t, `"resources": {"instanceType": "db-custom-2-7680", "disk": {"sizeMinimumGb": 50, "sizeMaximumGb": 250, "type": "SSD"}}`, ""), ready: fnv1.Ready_READY_TRUE}
			},
		},
		"APrivateInstanceMayChangeItsNetwork": {
			xr:       claimed(`"networking": "private", "network": "projects/my-project-1/global/networks/other"`),
			observed: observedInstance(withPrivate, readyTrue, nil),
			want: func(t *testing.T) want {
				return want{instance: instance(t, `"networking": {"privateIp": {"enabled": true, "network": "projects/my-project-1/global/networks/other"}, "publicIp": {"enabled": false}}`, ""), ready: fnv1.Ready_READY_TRUE}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			w := tc.want(t)

			rsp := run(g, &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "t"}, Observed: observing(tc.xr, tc.observed)})

			expectWarnings(g, rsp, fnv1.Target_TARGET_COMPOSITE_AND_CLAIM, w.warning)
			g.Expect(rsp.GetDesired().GetResources()).To(HaveLen(1))
			expectDesired(g, rsp, ResourceName, normalise(t, w.instance), w.ready)
			if tc.observed == nil {
				g.Expect(rsp.GetDesired().GetComposite().GetResource().AsMap()).To(BeEmpty())
			} else {
				g.Expect(rsp.GetDesired().GetComposite().GetResource().AsMap()).To(Equal(map[string]any{"status": map[string]any{"instanceName": piName}}))
			}
			if w.details == nil {
				g.Expect(rsp.GetDesired().GetComposite().GetConnectionDetails()).To(BeEmpty())
			} else {
				g.Expect(rsp.GetDesired().GetComposite().GetConnectionDetails()).To(Equal(map[string][]byte(w.details)))
			}
			expectSpecValid(g, rsp)
			g.Expect(rsp.GetMeta().GetTag()).To(Equal("t"))
		})
	}
}

// normalise round-trips want through structpb, which holds every number as a float64.
func normalise(t *testing.T, want map[string]any) map[string]any {
	t.Helper()
	s, err := structpb.NewStruct(want)
	if err != nil {
		t.Fatal(err)
	}
	return s.AsMap()
}

// observing is the observed state of a request: the composite xr and, unless nil,
// the PostgresqlInstance as Crossplane observed it.
func observing(xr *structpb.Struct, pi *fnv1.Resource) *fnv1.State {
	s := &fnv1.State{Composite: &fnv1.Resource{Resource: xr}}
	if pi != nil {
		s.Resources = map[string]*fnv1.Resource{string(ResourceName): pi}
	}
	return s
}

// run runs a Function made with o on req. The call itself must succeed: the
// function reports what it refuses in the response.
func run(g Gomega, req *fnv1.RunFunctionRequest, o ...Option) *fnv1.RunFunctionResponse {
	rsp, err := New(o...).RunFunction(context.Background(), req)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return rsp
}

// expectWarnings checks that rsp has no fatal result and that its results, all for
// target, are the one warning want, or none when want is empty.
func expectWarnings(g Gomega, rsp *fnv1.RunFunctionResponse, target fnv1.Target, want string) {
	var warnings []string
	for _, r := range rsp.GetResults() {
		g.ExpectWithOffset(1, r.GetSeverity()).NotTo(Equal(fnv1.Severity_SEVERITY_FATAL), r.GetMessage())
		warnings = append(warnings, r.GetMessage())
		g.ExpectWithOffset(1, r.GetTarget()).To(Equal(target))
	}
	if want == "" {
		g.ExpectWithOffset(1, warnings).To(BeEmpty())
	} else {
		g.ExpectWithOffset(1, warnings).To(ConsistOf(want))
	}
}

// expectDesired checks the resource that rsp desires under name: want (as AsMap
// returns it, see normalise), marked ready.
func expectDesired(g Gomega, rsp *fnv1.RunFunctionResponse, name resource.Name, want map[string]any, ready fnv1.Ready) {
	got := rsp.GetDesired().GetResources()[string(name)]
	g.ExpectWithOffset(1, got.GetResource().AsMap()).To(Equal(want))
	g.ExpectWithOffset(1, got.GetReady()).To(Equal(ready))
}

// expectSpecValid checks that rsp's one condition is SpecValid, True.
func expectSpecValid(g Gomega, rsp *fnv1.RunFunctionResponse) {
	g.ExpectWithOffset(1, rsp.GetConditions()).To(HaveLen(1))
	g.ExpectWithOffset(1, rsp.GetConditions()[0].GetType()).To(Equal(ConditionTypeSpecValid))
	g.ExpectWithOffset(1, rsp.GetConditions()[0].GetStatus()).To(Equal(fnv1.Status_STATUS_CONDITION_TRUE))
}

// expectFatal checks that rsp's one result is fatal, with a message that matches
// message.
func expectFatal(g Gomega, rsp *fnv1.RunFunctionResponse, message types.GomegaMatcher) {
	g.ExpectWithOffset(1, rsp.GetResults()).To(HaveLen(1))
	g.ExpectWithOffset(1, rsp.GetResults()[0].GetSeverity()).To(Equal(fnv1.Severity_SEVERITY_FATAL))
	g.ExpectWithOffset(1, rsp.GetResults()[0].GetMessage()).To(message)
}

// expectRefused checks that rsp refuses the composite with the message want, both
// as its one result (fatal) and as its one condition (SpecValid, False, for target).
func expectRefused(g Gomega, rsp *fnv1.RunFunctionResponse, target fnv1.Target, want string) {
	expectFatal(g, rsp, Equal(want))
	g.ExpectWithOffset(1, rsp.GetConditions()).To(HaveLen(1))
	c := rsp.GetConditions()[0]
	g.ExpectWithOffset(1, c.GetType()).To(Equal(ConditionTypeSpecValid))
	g.ExpectWithOffset(1, c.GetStatus()).To(Equal(fnv1.Status_STATUS_CONDITION_FALSE))
	g.ExpectWithOffset(1, c.GetMessage()).To(Equal(want))
	g.ExpectWithOffset(1, c.GetTarget()).To(Equal(target))
}

// refusal is a composite that the function refuses with the message want, given
// the instance observed (nil before it exists).
type refusal struct {
	xr       *structpb.Struct
	observed *fnv1.Resource
	want     string
}

// withChangesRefused adds to cases, and returns, the refusals of changes that an
// existing instance cannot take, for the composites that xr makes and the instances
// that observed makes; their messages ask for a new noun.
func withChangesRefused(cases map[string]refusal, xr func(spec string) *structpb.Struct, observed func(forProvider, conditions string, details resource.ConnectionDetails) *fnv1.Resource, noun string) map[string]refusal {
	maps.Copy(cases, map[string]refusal{
		"LowerVersionForAnExistingInstance": {
			xr:       xr(`"version": "17"`),
			observed: observed(defaultedSmall, readyTrue, nil),
			want:     "spec.version cannot go down from 18 to 17: Cloud SQL upgrades a major version in place but never downgrades; to go back, restore the backup taken before the upgrade into a new " + noun,
		},
		"AnotherRegionForAnExistingInstance": {
			xr:       xr(`"region": "us-central1"`),
			observed: observed(defaultedSmall, readyTrue, nil),
			want:     "spec.region cannot change from europe-west1 to us-central1: a Cloud SQL instance cannot move; create a new " + noun + " in the new region and migrate the data",
		},
		"PublicNetworkingForAnInstanceWithAPrivateIP": {
			xr:       xr(""),
			observed: observed(withPrivate, readyTrue, nil),
			want:     "spec.networking cannot change from private to public: Cloud SQL cannot remove a private IP once the instance has one; set networking: private again",
		},
	})
	return cases
}

func TestRunFunctionRefuses(t *testing.T) {
	cases := map[string]refusal{
		"AnUnknownSize": {
			xr:   claimed(`"size": "huge"`),
			want: `spec.size "huge" is not a size: use small, medium or large`,
		},
		"PrivateNetworkingWithoutANetwork": {
			xr:   claimed(`"networking": "private"`),
			want: "spec.network is required when spec.networking is private: give the VPC network as projects/<project-id>/global/networks/<network-name>",
		},
		"ANetworkWithPublicNetworking": {
			xr:   claimed(`"network": "` + vpc + `"`),
			want: "spec.network may only be set when spec.networking is private: remove it, or set networking: private",
		},
		"ANetworkThatIsNotAResourceLink": {
			xr:   claimed(`"networking": "private", "network": "default"`),
			want: `spec.network "default" is not a VPC network resource link: use projects/<project-id>/global/networks/<network-name>`,
		},
		"AnUnknownKindOfNetworking": {
			xr:   claimed(`"networking": "vpn"`),
			want: `spec.networking "vpn" is not a kind of networking: use public or private`,
		},
		"AZoneInsteadOfARegion": {
			xr:   claimed(`"region": "europe-west1-b"`),
			want: `spec.region "europe-west1-b" is not a Google Cloud region: use one such as europe-west1`,
		},
		"AVersionThatIsANumber": {
			xr:   claimed(`"version": 17`),
			want: `spec.version must be a string, not 17: quote it, for example version: "17"`,
		},
		"AVersionNotOffered": {
			xr:   claimed(`"version": "9.6"`),
			want: `spec.version "9.6" is not offered: use one of 14, 15, 16, 17, 18`,
		},
		"AnUnknownDeletionPolicy": {
			xr:   claimed(`"deletionPolicy": "Keep"`),
			want: `spec.deletionPolicy "Keep" is not a deletion policy: use Delete (the Cloud SQL instance goes with the claim) or Orphan (it stays)`,
		},
		"NoAllowedNamespaces": {
			xr:   claimed(`"allowedNamespaces": []`),
			want: `spec.allowedNamespaces is empty, which would let no pod use the database: list namespaces, ["*"] for all, or remove it to allow the claim's namespace`,
		},
		"AllowedNamespacesThatAreNotAList": {
			xr:   claimed(`"allowedNamespaces": "web"`),
			want: `spec.allowedNamespaces must be a list of namespace names, not web`,
		},
		"AnAllowedNamespaceThatIsNotAName": {
			xr:   claimed(`"allowedNamespaces": ["web", "Web_2"]`),
			want: `spec.allowedNamespaces[1] Web_2 is not a namespace name: use lowercase letters, digits and '-', or "*" alone for every namespace`,
		},
		"EveryNamespaceAndSome": {
			xr:   claimed(`"allowedNamespaces": ["*", "web"]`),
			want: `spec.allowedNamespaces lists "*" with other namespaces: "*" already allows every namespace, so list either "*" alone or namespace names`,
		},
		"ACompositeWhoseNameCannotStartACloudSQLName": {
			xr:   resource.MustStructJSON(`{` + xrHeader + `, "metadata": {"name": "1st.db-x7k2p"}, "spec": {}}`),
			want: `metadata.name "1st.db-x7k2p" of the composite cannot start a Cloud SQL instance name: it must start with a lowercase letter and hold only lowercase letters, digits and '-' (for a claim, rename the claim)`,
		},
		"ACompositeWhoseNameLeavesNoRoomForTheSecrets": {
			xr:   resource.MustStructJSON(`{` + xrHeader + `, "metadata": {"name": "` + "d" + strings.Repeat("b", 244) + `"}, "spec": {}}`),
			want: `metadata.name "d` + strings.Repeat("b", 244) + `" of the composite is longer than 244 characters: give it (or its claim) a shorter name`,
		},
	}
	for name, tc := range withChangesRefused(cases, claimed, observedInstance, "claim") {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			rsp := run(g, &fnv1.RunFunctionRequest{
				Observed: observing(tc.xr, tc.observed),
				Desired:  &fnv1.State{Resources: map[string]*fnv1.Resource{"other": {Resource: resource.MustStructJSON(`{"apiVersion": "v1", "kind": "ConfigMap"}`)}}},
			})

			expectRefused(g, rsp, fnv1.Target_TARGET_COMPOSITE_AND_CLAIM, tc.want)
			g.Expect(rsp.GetConditions()[0].GetReason()).To(Equal(ReasonInvalidSpec))
			// What earlier steps desired is passed on untouched, and no instance
			// is added: Crossplane keeps the existing one as it is.
			g.Expect(rsp.GetDesired().GetResources()).To(HaveLen(1))
			g.Expect(rsp.GetDesired().GetResources()).To(HaveKey("other"))
		})
	}
}

func TestRunFunctionKeepsEarlierSteps(t *testing.T) {
	g := NewWithT(t)
	req := &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{Resource: claimed("")},
			Resources: map[string]*fnv1.Resource{string(ResourceName): observedInstance(defaultedSmall, readyTrue, resource.ConnectionDetails{"password": []byte("s3cret")})},
		},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{
				Resource:          resource.MustStructJSON(`{"status": {"note": "from an earlier step"}}`),
				ConnectionDetails: map[string][]byte{"database": []byte("orders")},
			},
			Resources: map[string]*fnv1.Resource{"other": {Resource: resource.MustStructJSON(`{"apiVersion": "v1", "kind": "ConfigMap"}`), Ready: fnv1.Ready_READY_TRUE}},
		},
	}

	rsp := run(g, req)
	g.Expect(rsp.GetResults()).To(BeEmpty())
	g.Expect(rsp.GetDesired().GetResources()).To(HaveKey("other"))
	g.Expect(rsp.GetDesired().GetResources()["other"].GetReady()).To(Equal(fnv1.Ready_READY_TRUE))
	g.Expect(rsp.GetDesired().GetResources()).To(HaveKey(string(ResourceName)))
	g.Expect(rsp.GetDesired().GetComposite().GetResource().AsMap()).To(Equal(map[string]any{"status": map[string]any{"note": "from an earlier step", "instanceName": piName}}))
	g.Expect(rsp.GetDesired().GetComposite().GetConnectionDetails()).To(Equal(map[string][]byte{"database": []byte("orders"), "password": []byte("s3cret")}))
	// Readiness of the composite is Crossplane's to derive from all resources.
	g.Expect(rsp.GetDesired().GetComposite().GetReady()).To(Equal(fnv1.Ready_READY_UNSPECIFIED))
}

func TestWithConnectionSecretNamespace(t *testing.T) {
	g := NewWithT(t)
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: claimed("")}}}

	rsp := run(g, req, WithConnectionSecretNamespace("platform-secrets"))
	g.Expect(rsp.GetResults()).To(BeEmpty())
	spec := rsp.GetDesired().GetResources()[string(ResourceName)].GetResource().AsMap()["spec"].(map[string]any)
	g.Expect(spec["writeConnectionSecretToRef"]).To(Equal(map[string]any{"name": "orders-db-x7k2p-postgres", "namespace": "platform-secrets"}))
}

func TestRunFunctionMalformedRequest(t *testing.T) {
	g := NewWithT(t)
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{
		Composite: &fnv1.Resource{Resource: claimed("")},
		Resources: map[string]*fnv1.Resource{string(ResourceName): {Resource: resource.MustStructJSON(`{"spec": {"forProvider": {"version": 18}}}`)}},
	}}

	expectFatal(g, run(g, req), HavePrefix(errReadObserved+": "))
}

// The composite passes on keys of the provider's connection secret; a key renamed
// there must be renamed here.
func TestConnectionDetailKeysAreTheProviders(t *testing.T) {
	NewWithT(t).Expect(ConnectionDetailKeys).To(Equal([]string{
		cloudsql.ConnectionKeyConnectionName,
		cloudsql.ConnectionKeyEndpoint,
		cloudsql.ConnectionKeyPort,
		cloudsql.ConnectionKeyUsername,
		cloudsql.ConnectionKeyPassword,
	}))
}
