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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	nsXRName   = "orders-db"
	nsPIName   = "orders-db-q9z3l"
	nsXRHeader = `"apiVersion": "platform.example.org/v1alpha1", "kind": "PostgreSQLDatabase"`
)

// namespacedXR is a namespaced composite in teamNS with the given spec fields (JSON,
// without braces), as Crossplane sends it.
func namespacedXR(spec string) *structpb.Struct {
	return resource.MustStructJSON(fmt.Sprintf(`{%s, "metadata": {"name": %q, "namespace": %q}, "spec": {%s}}`, nsXRHeader, nsXRName, teamNS, spec))
}

// namespacedInstance is what the function should compose for namespacedXR; the
// patches replace keys of spec.forProvider and of spec (null removes one).
func namespacedInstance(t *testing.T, forProvider, spec string) map[string]any {
	t.Helper()
	want := instance(t, forProvider, spec)
	want["apiVersion"] = "cloudsql.m.travelaudience.com/v1alpha1"
	want["metadata"].(map[string]any)["namespace"] = teamNS
	s := want["spec"].(map[string]any)
	// The namespaced kind has neither a deletion policy nor injection: its
	// management policies decide, and only pods of its namespace may use it.
	if s["deletionPolicy"] == "Orphan" {
		s["managementPolicies"] = []any{"Observe", "Create", "Update", "LateInitialize"}
	}
	delete(s, "deletionPolicy")
	delete(s, "injection")
	s["writeConnectionSecretToRef"] = map[string]any{"name": "orders-db-postgresqlinstance"}
	s["providerConfigRef"] = map[string]any{"kind": "ClusterProviderConfig", "name": "default"}
	return want
}

// observedNamespacedInstance is the namespaced PostgresqlInstance as Crossplane
// observed it.
func observedNamespacedInstance(forProvider, conditions string, details resource.ConnectionDetails) *fnv1.Resource {
	return &fnv1.Resource{
		Resource: resource.MustStructJSON(fmt.Sprintf(`{
			"apiVersion": "cloudsql.m.travelaudience.com/v1alpha1", "kind": "PostgresqlInstance",
			"metadata": {"name": %q, "namespace": %q},
			"spec": {"forProvider": {%s}, "writeConnectionSecretToRef": {"name": "orders-db-postgresqlinstance"}},
			"status": {"conditions": [%s]}}`, nsPIName, teamNS, forProvider, conditions)),
		ConnectionDetails: details,
	}
}

// observedSecret is the team's Secret as Crossplane observed it.
func observedSecret(data map[string][]byte) *fnv1.Resource {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "orders-db-postgres", Namespace: teamNS},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	j, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return &fnv1.Resource{Resource: resource.MustStructJSON(string(j))}
}

// fiveDetails are the keys the team's Secret holds, from allDetails.
func fiveDetails() map[string][]byte {
	d := allDetails()
	return map[string][]byte{"connectionName": d["connectionName"], "endpoint": d["endpoint"], "port": d["port"], "username": d["username"], "password": d["password"]}
}

// secretWith is the Secret the function should compose, with data (nil: none).
func secretWith(data map[string][]byte) map[string]any {
	s := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "orders-db-postgres", "namespace": teamNS},
		"type":     "Opaque",
	}
	if data != nil {
		d := map[string]any{}
		for k, v := range data {
			d[k] = base64(v)
		}
		s["data"] = d
	}
	return s
}

func base64(b []byte) string {
	j, _ := json.Marshal(b)
	return strings.Trim(string(j), `"`)
}

func TestRunFunctionComposesNamespaced(t *testing.T) {
	type want struct {
		instance    map[string]any
		ready       fnv1.Ready
		secret      map[string][]byte
		secretReady fnv1.Ready
		status      map[string]any
		warning     string
	}
	statusBefore := map[string]any{"connectionSecretName": "orders-db-postgres"}
	statusAfter := map[string]any{"connectionSecretName": "orders-db-postgres", "instanceName": nsPIName}
	cases := map[string]struct {
		xr       *structpb.Struct
		observed map[string]*fnv1.Resource
		want     func(t *testing.T) want
	}{
		"AnEmptySpecIsASmallPublicInstanceAndASecretWithoutDataUntilTheInstancePublishesItsDetails": {
			xr: namespacedXR(""),
			want: func(t *testing.T) want {
				return want{instance: namespacedInstance(t, "", ""), ready: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE, status: statusBefore}
			},
		},
		"LargeAndPrivate": {
			xr: namespacedXR(`"size": "large", "region": "europe-west4", "version": "17", "networking": "private", "network": "` + vpc + `"`),
			want: func(t *testing.T) want {
				return want{instance: namespacedInstance(t, `"version": "17", "location": {"region": "europe-west4", "zone": "Any"}, "availability": {"type": "Regional"},
					"networking": {"privateIp": {"enabled": true, "network": "`+vpc+`"}, "publicIp": {"enabled": false}},
					"resources": {"instanceType": "db-custom-4-15360", "disk": {"sizeMinimumGb": 100, "sizeMaximumGb": 1000, "type": "SSD"}}`, ""),
					ready: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE, status: statusBefore}
			},
		},
		"OrphanKeepsEveryManagementActionButDelete": {
			xr: namespacedXR(`"deletionPolicy": "Orphan"`),
			want: func(t *testing.T) want {
				return want{instance: namespacedInstance(t, "", `"deletionPolicy": "Orphan"`), ready: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE, status: statusBefore}
			},
		},
		"ReadyWithTheInstanceTheSecretHoldingTheFiveKeysAndOnlyThose": {
			xr:       namespacedXR(""),
			observed: map[string]*fnv1.Resource{string(ResourceName): observedNamespacedInstance(defaultedSmall, readyTrue, allDetails())},
			want: func(t *testing.T) want {
				return want{instance: namespacedInstance(t, "", ""), ready: fnv1.Ready_READY_TRUE, secret: fiveDetails(), secretReady: fnv1.Ready_READY_TRUE, status: statusAfter}
			},
		},
		"TheSecretGetsDataOnlyOnceAllFiveKeysAreThere": {
			xr: namespacedXR(""),
			observed: map[string]*fnv1.Resource{string(ResourceName): observedNamespacedInstance(defaultedSmall, readyFalse,
				resource.ConnectionDetails{"password": []byte("s3cret"), "username": []byte("postgres"), "port": []byte("5432"), "connectionName": []byte("p:r:i"), "endpoint": {}})},
			want: func(t *testing.T) want {
				return want{instance: namespacedInstance(t, "", ""), ready: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE, status: statusAfter}
			},
		},
		"ACompleteSecretKeepsItsDataWhileTheInstancesDetailsAreIncomplete": {
			xr: namespacedXR(""),
			observed: map[string]*fnv1.Resource{
				string(ResourceName):                 observedNamespacedInstance(defaultedSmall, readyTrue, nil),
				string(ConnectionSecretResourceName): observedSecret(fiveDetails()),
			},
			want: func(t *testing.T) want {
				return want{instance: namespacedInstance(t, "", ""), ready: fnv1.Ready_READY_TRUE, secret: fiveDetails(), secretReady: fnv1.Ready_READY_TRUE, status: statusAfter}
			},
		},
		"NewDetailsReplaceThoseTheSecretHolds": {
			xr: namespacedXR(""),
			observed: map[string]*fnv1.Resource{
				string(ResourceName):                 observedNamespacedInstance(defaultedSmall, readyTrue, allDetails()),
				string(ConnectionSecretResourceName): observedSecret(map[string][]byte{"connectionName": []byte("old"), "endpoint": []byte("old"), "port": []byte("old"), "username": []byte("old"), "password": []byte("old")}),
			},
			want: func(t *testing.T) want {
				return want{instance: namespacedInstance(t, "", ""), ready: fnv1.Ready_READY_TRUE, secret: fiveDetails(), secretReady: fnv1.Ready_READY_TRUE, status: statusAfter}
			},
		},
		"WhyAnInstanceIsNotSyncedReachesTheComposite": {
			xr:       namespacedXR(""),
			observed: map[string]*fnv1.Resource{string(ResourceName): observedNamespacedInstance(defaultedSmall, notSynced, nil)},
			want: func(t *testing.T) want {
				return want{instance: namespacedInstance(t, "", ""), ready: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE, status: statusAfter,
					warning: "PostgresqlInstance " + nsPIName + " is not synced with Cloud SQL (ReconcileError): the name is reserved"}
			},
		},
		"ASmallerSizeKeepsTheDisk": {
			xr:       namespacedXR(`"size": "small"`),
			observed: map[string]*fnv1.Resource{string(ResourceName): observedNamespacedInstance(`"version": "18", "location": {"region": "europe-west1"}, "resources": {"disk": {"sizeMinimumGb": 100}}`, readyFalse, nil)},
			want: func(t *testing.T) want {
				return want{instance: namespacedInstance(t, `"resources": {"instanceType": "db-custom-1-3840", "disk": {"sizeMinimumGb": 100, "sizeMaximumGb": 100, "type": "SSD"}}`, ""),
					ready: fnv1.Ready_READY_FALSE, secretReady: fnv1.Ready_READY_FALSE, status: statusAfter}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			w := tc.want(t)

			rsp := run(g, &fnv1.RunFunctionRequest{
				Meta:     &fnv1.RequestMeta{Tag: "t"},
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: tc.xr}, Resources: tc.observed},
			})

			expectWarnings(g, rsp, fnv1.Target_TARGET_COMPOSITE, w.warning)
			g.Expect(rsp.GetDesired().GetResources()).To(HaveLen(2))
			expectDesired(g, rsp, ResourceName, normalise(t, w.instance), w.ready)
			expectDesired(g, rsp, ConnectionSecretResourceName, secretWith(w.secret), w.secretReady)

			// A v2 composite has no connection details; its status names the
			// instance once it exists, and the Secret.
			g.Expect(rsp.GetDesired().GetComposite().GetConnectionDetails()).To(BeEmpty())
			g.Expect(rsp.GetDesired().GetComposite().GetResource().AsMap()).To(Equal(map[string]any{"status": w.status}))
			g.Expect(rsp.GetDesired().GetComposite().GetReady()).To(Equal(fnv1.Ready_READY_UNSPECIFIED))
			expectSpecValid(g, rsp)
			g.Expect(rsp.GetConditions()[0].GetTarget()).To(Equal(fnv1.Target_TARGET_COMPOSITE))
		})
	}
}

func TestRunFunctionRefusesNamespaced(t *testing.T) {
	nsXR := func(name, spec string) *structpb.Struct {
		return resource.MustStructJSON(fmt.Sprintf(`{%s, "metadata": {"name": %q, "namespace": %q}, "spec": {%s}}`, nsXRHeader, name, teamNS, spec))
	}
	cases := map[string]refusal{
		"AllowedNamespacesWhichANamespacedInstanceCannotHave": {
			xr:   namespacedXR(`"allowedNamespaces": ["web"]`),
			want: "spec.allowedNamespaces of PostgreSQLDatabase team-orders/orders-db cannot be set: its PostgresqlInstance is namespaced and serves only pods of namespace team-orders; remove the field, and create the PostgreSQLDatabase in the namespace of the pods that use it",
		},
		"AnUnknownSize": {
			xr:   namespacedXR(`"size": "huge"`),
			want: `spec.size "huge" is not a size: use small, medium or large`,
		},
		"AnUnknownDeletionPolicy": {
			xr:   namespacedXR(`"deletionPolicy": "Keep"`),
			want: `spec.deletionPolicy "Keep" is not a deletion policy: use Delete (the Cloud SQL instance goes with the PostgreSQLDatabase) or Orphan (it stays)`,
		},
		"ANameThatCannotStartACloudSQLName": {
			xr:   nsXR("1st.db", ""),
			want: `metadata.name "1st.db" of PostgreSQLDatabase team-orders/1st.db cannot start a Cloud SQL instance name: it must start with a lowercase letter and hold only lowercase letters, digits and '-'; create the PostgreSQLDatabase again under such a name`,
		},
		"ANameThatLeavesNoRoomForTheInstancesSecret": {
			xr:   nsXR("d"+strings.Repeat("b", 234), ""),
			want: `metadata.name "d` + strings.Repeat("b", 234) + `" of PostgreSQLDatabase team-orders/d` + strings.Repeat("b", 234) + ` is longer than 234 characters: create the PostgreSQLDatabase again under a shorter name`,
		},
	}
	for name, tc := range withChangesRefused(cases, namespacedXR, observedNamespacedInstance, "PostgreSQLDatabase") {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			rsp := run(g, &fnv1.RunFunctionRequest{Observed: observing(tc.xr, tc.observed)})

			expectRefused(g, rsp, fnv1.Target_TARGET_COMPOSITE, tc.want)
			// Nothing is desired: Crossplane keeps what exists as it is.
			g.Expect(rsp.GetDesired().GetResources()).To(BeEmpty())
		})
	}
}

func TestRunFunctionNamespacedMalformedSecret(t *testing.T) {
	g := NewWithT(t)
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{
		Composite: &fnv1.Resource{Resource: namespacedXR("")},
		Resources: map[string]*fnv1.Resource{string(ConnectionSecretResourceName): {Resource: resource.MustStructJSON(`{"apiVersion": "v1", "kind": "Secret", "data": {"password": 5}}`)}},
	}}

	expectFatal(g, run(g, req), HavePrefix(errReadObservedSecret+": "))
}

func TestConnectionSecret(t *testing.T) {
	p := Parameters{Name: nsXRName, Namespace: teamNS}
	five := fiveDetails()
	without := func(key string) map[string][]byte {
		d := fiveDetails()
		delete(d, key)
		return d
	}
	cases := map[string]struct {
		details  resource.ConnectionDetails
		observed map[string][]byte
		want     map[string][]byte
	}{
		"NoDetailsYet":         {},
		"AllOfThemAndOnlyFive": {details: allDetails(), want: five},
		"ThePasswordMissing":   {details: without("password")},
		"TheEndpointEmpty": {details: func() map[string][]byte {
			d := fiveDetails()
			d["endpoint"] = []byte{}
			return d
		}()},
		"TheObservedSecretsDataWhileDetailsAreMissing": {observed: five, want: five},
		"AnIncompleteObservedSecretIsNotKept":          {details: without("port"), observed: without("username")},
		"DetailsWinOverTheObservedSecret": {
			details:  allDetails(),
			observed: map[string][]byte{"connectionName": []byte("a"), "endpoint": []byte("b"), "port": []byte("c"), "username": []byte("d"), "password": []byte("e")},
			want:     five,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var observed *corev1.Secret
			if tc.observed != nil {
				observed = &corev1.Secret{Data: tc.observed}
			}
			s, complete := ConnectionSecret(p, tc.details, observed)
			g.Expect(s.GetName()).To(Equal("orders-db-postgres"))
			g.Expect(s.GetNamespace()).To(Equal(teamNS))
			g.Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
			g.Expect(complete).To(Equal(tc.want != nil))
			if tc.want == nil {
				g.Expect(s.Data).To(BeNil())
			} else {
				g.Expect(s.Data).To(Equal(tc.want))
			}
		})
	}
}
