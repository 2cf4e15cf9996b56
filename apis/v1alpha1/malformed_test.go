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
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
)

// The malformed-manifest tests send manifests as users write them, as text, through
// the provider's manifest loader (internal/testing/manifests) and the real API server, so that
// what Go types cannot express is exercised too: a string where a number belongs, an
// object where a list does, fields the schema does not know, fields left out. Every
// case must be refused with a message that names the field and says what is wrong.

// pgiBase is the smallest valid PostgresqlInstance; each case changes it.
const pgiBase = `
apiVersion: cloudsql.travelaudience.com/v1alpha1
kind: PostgresqlInstance
metadata:
  name: replaced-by-the-test
spec:
  writeConnectionSecretToRef:
    namespace: crossplane-system
    name: malformed-postgres
  forProvider:
    networking:
      publicIp:
        enabled: true
`

// pcBase is a valid ProviderConfig; each case changes it.
const pcBase = `
apiVersion: cloudsql.travelaudience.com/v1alpha1
kind: ProviderConfig
metadata:
  name: replaced-by-the-test
spec:
  projectID: my-project-123
  credentials:
    source: Secret
    secretRef:
      namespace: crossplane-system
      name: gcp
      key: key.json
`

// A malformed case is a manifest the API server must refuse.
type malformed struct {
	// patch is a JSON merge patch (RFC 7386), written in YAML, applied to the base
	// manifest: objects merge, anything else replaces, null removes a field.
	patch string
	// doc, when set, is the whole manifest (YAML or JSON) instead.
	doc string
	// want are fragments of the refusal: the field's path, and what is wrong.
	want []string
}

func TestMalformedPostgresqlInstances(t *testing.T) {
	controlplane.Need(t)
	const fp = "spec.forProvider."
	const typeString, typeInt, typeBool, typeObject, typeArray = "must be of type string", "must be of type integer", "must be of type boolean", "must be of type object", "must be of type array"
	cases := map[string]malformed{
		// Wrong types. YAML reads an unquoted 13 or 9.6 as a number, not a version.
		"VersionInt":        {patch: `spec: {forProvider: {version: 13}}`, want: []string{fp + "version", typeString}},
		"VersionFloat":      {patch: `spec: {forProvider: {version: 9.6}}`, want: []string{fp + "version", typeString}},
		"EditionBool":       {patch: `spec: {forProvider: {edition: true}}`, want: []string{fp + "edition", typeString}},
		"BackupsEnabledStr": {patch: `spec: {forProvider: {backups: {daily: {enabled: "yes"}}}}`, want: []string{fp + "backups.daily.enabled", typeBool}},
		"BackupsStartInt":   {patch: `spec: {forProvider: {backups: {daily: {startTime: 2200}}}}`, want: []string{fp + "backups.daily.startTime", typeString}},
		"BackupsList":       {patch: `spec: {forProvider: {backups: [daily]}}`, want: []string{fp + "backups", typeObject}},
		"FlagsString":       {patch: `spec: {forProvider: {flags: "autovacuum=on"}}`, want: []string{fp + "flags", typeArray}},
		"FlagsItemInt":      {patch: `spec: {forProvider: {flags: [1]}}`, want: []string{fp + "flags[0]", typeString}},
		// With strict field validation, an object where a string or list belongs is
		// reported by its first unknown key rather than by its type.
		"FlagsItemObject":  {patch: `spec: {forProvider: {flags: [{autovacuum: "on"}]}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.flags[0].autovacuum"`}},
		"LabelsList":       {patch: `spec: {forProvider: {labels: ["team=payments"]}}`, want: []string{fp + "labels", typeObject}},
		"LabelsValueInt":   {patch: `spec: {forProvider: {labels: {cost: 42}}}`, want: []string{fp + "labels.cost", typeString}},
		"LocationString":   {patch: `spec: {forProvider: {location: europe-west1}}`, want: []string{fp + "location", typeObject}},
		"RegionBool":       {patch: `spec: {forProvider: {location: {region: no}}}`, want: []string{fp + "location.region", typeString}},
		"PublicEnabledStr": {patch: `spec: {forProvider: {networking: {publicIp: {enabled: "true"}}}}`, want: []string{fp + "networking.publicIp.enabled", typeBool}},
		"AclObject":        {patch: `spec: {forProvider: {networking: {publicIp: {authorizedNetworks: {cidr: 10.0.0.0/8}}}}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.networking.publicIp.authorizedNetworks.cidr"`}},
		"AclItemString":    {patch: `spec: {forProvider: {networking: {publicIp: {authorizedNetworks: [10.0.0.0/8]}}}}`, want: []string{fp + "networking.publicIp.authorizedNetworks[0]", typeObject}},
		"DiskMinString":    {patch: `spec: {forProvider: {resources: {disk: {sizeMinimumGb: "20"}}}}`, want: []string{fp + "resources.disk.sizeMinimumGb", typeInt}},
		"DiskMinFraction":  {patch: `spec: {forProvider: {resources: {disk: {sizeMinimumGb: 20.5}}}}`, want: []string{fp + "resources.disk.sizeMinimumGb", typeInt}},
		"DiskMaxQuantity":  {patch: `spec: {forProvider: {resources: {disk: {sizeMaximumGb: 100Gi}}}}`, want: []string{fp + "resources.disk.sizeMaximumGb", typeInt}},
		"ForProviderList":  {patch: `spec: {forProvider: [networking]}`, want: []string{fp[:len(fp)-1], typeObject}},
		"SpecString":       {patch: `spec: small`, want: []string{"spec", typeObject}},
		"DeletionInt":      {patch: `spec: {deletionPolicy: 1}`, want: []string{"spec.deletionPolicy", typeString}},
		"PoliciesString":   {patch: `spec: {managementPolicies: Observe}`, want: []string{"spec.managementPolicies", typeArray}},
		"AllowedNsString":  {patch: `spec: {injection: {allowedNamespaces: team-a}}`, want: []string{"spec.injection.allowedNamespaces", typeArray}},
		"SelectorLabelInt": {patch: `spec: {injection: {namespaceSelector: {matchLabels: {tier: 1}}}}`, want: []string{"spec.injection.namespaceSelector.matchLabels.tier", typeString}},

		// Numbers and sizes out of range.
		"DiskMinHuge":     {patch: `spec: {forProvider: {resources: {disk: {sizeMinimumGb: 70000}}}}`, want: []string{fp + "resources.disk.sizeMinimumGb", "less than or equal to 65536"}},
		"DiskMinInt32":    {patch: `spec: {forProvider: {resources: {disk: {sizeMinimumGb: 4294967306}}}}`, want: []string{fp + "resources.disk.sizeMinimumGb", "less than or equal to 65536"}},
		"DiskMinNegative": {patch: `spec: {forProvider: {resources: {disk: {sizeMinimumGb: -10}}}}`, want: []string{fp + "resources.disk.sizeMinimumGb", "greater than or equal to 10"}},
		"DiskMaxHuge":     {patch: `spec: {forProvider: {resources: {disk: {sizeMaximumGb: 65537}}}}`, want: []string{fp + "resources.disk.sizeMaximumGb", "less than or equal to 65536"}},
		"Flags65":         {patch: `spec: {forProvider: {flags: ` + flagList(65) + `}}`, want: []string{fp + "flags", "must have at most 64 items"}},
		"Flag257Chars":    {patch: `spec: {forProvider: {flags: ["search_path=` + strings.Repeat("s", 245) + `"]}}`, want: []string{fp + "flags[0]", "Too long"}},
		"Name2Chars":      {patch: `spec: {forProvider: {name: ab}}`, want: []string{fp + "name", "at least 3 chars long"}},
		"AclName129":      {patch: `spec: {forProvider: {networking: {publicIp: {authorizedNetworks: [{cidr: 10.0.0.0/8, name: ` + strings.Repeat("n", 129) + `}]}}}}`, want: []string{fp + "networking.publicIp.authorizedNetworks[0].name", "Too long"}},
		"Acl257":          {patch: `spec: {forProvider: {networking: {publicIp: {authorizedNetworks: ` + aclList(257) + `}}}}`, want: []string{fp + "networking.publicIp.authorizedNetworks", "must have at most 256 items"}},
		"AllowedNs257":    {patch: `spec: {injection: {allowedNamespaces: ` + nsList(257) + `}}`, want: []string{"spec.injection.allowedNamespaces", "must have at most 256 items"}},

		// Values outside an enumeration; enumerations are case-sensitive.
		"Version19":         {patch: `spec: {forProvider: {version: "19"}}`, want: []string{fp + "version", `Unsupported value: "19"`}},
		"VersionPatchLevel": {patch: `spec: {forProvider: {version: "15.4"}}`, want: []string{fp + "version", `Unsupported value: "15.4"`}},
		"EditionSpaced":     {patch: `spec: {forProvider: {edition: Enterprise Plus}}`, want: []string{fp + "edition", `Unsupported value: "Enterprise Plus"`}},
		"AvailabilityLower": {patch: `spec: {forProvider: {availability: {type: zonal}}}`, want: []string{fp + "availability.type", `Unsupported value: "zonal"`}},
		"DiskTypeLower":     {patch: `spec: {forProvider: {resources: {disk: {type: ssd}}}}`, want: []string{fp + "resources.disk.type", `Unsupported value: "ssd"`}},
		"DayLower":          {patch: `spec: {forProvider: {maintenance: {day: monday}}}`, want: []string{fp + "maintenance.day", `Unsupported value: "monday"`}},
		"DayNumber":         {patch: `spec: {forProvider: {maintenance: {day: 1}}}`, want: []string{fp + "maintenance.day", typeString}},
		"DeletionRetain":    {patch: `spec: {deletionPolicy: Retain}`, want: []string{"spec.deletionPolicy", `Unsupported value: "Retain"`}},
		"PoliciesUnknown":   {patch: `spec: {managementPolicies: [Observe, Destroy]}`, want: []string{"spec.managementPolicies[1]", `Unsupported value: "Destroy"`}},
		"PoliciesLower":     {patch: `spec: {managementPolicies: [observe]}`, want: []string{"spec.managementPolicies[0]", `Unsupported value: "observe"`}},
		"RefResolution":     {patch: `spec: {providerConfigRef: {name: default, policy: {resolution: Sometimes}}}`, want: []string{"spec.providerConfigRef.policy.resolution", `Unsupported value: "Sometimes"`}},
		"RefResolve":        {patch: `spec: {providerConfigRef: {name: default, policy: {resolve: Never}}}`, want: []string{"spec.providerConfigRef.policy.resolve", `Unsupported value: "Never"`}},

		// Authorized networks.
		"CidrPrefix33":    {patch: aclPatch("10.0.0.0/33"), want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "must be an IPv4 network in CIDR notation"}},
		"CidrLeadingZero": {patch: aclPatch("010.0.0.0/8"), want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "must be an IPv4 network in CIDR notation"}},
		"CidrHostname":    {patch: aclPatch("db.example.com/32"), want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "must be an IPv4 network in CIDR notation"}},
		"CidrRange":       {patch: aclPatch("10.0.0.1-10.0.0.9"), want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "must be an IPv4 network in CIDR notation"}},
		"CidrEmpty":       {patch: aclPatch(""), want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "must be an IPv4 network in CIDR notation"}},
		"CidrTooLong":     {patch: aclPatch("100.100.100.100/32 "), want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "Too long"}},
		"CidrMappedIpv6":  {patch: aclPatch("::ffff:a00:0/104"), want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "must be an IPv4 network"}},
		"CidrMissing":     {patch: `spec: {forProvider: {networking: {publicIp: {authorizedNetworks: [{name: office}]}}}}`, want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "Required value"}},

		// Labels.
		"LabelKeyDot":     {patch: `spec: {forProvider: {labels: {team.name: payments}}}`, want: []string{fp + "labels", "label keys must start with a lowercase letter"}},
		"LabelKeyEmpty":   {doc: pgiWith(`"labels": {"": "payments"}`), want: []string{fp + "labels", "label keys must start with a lowercase letter"}},
		"LabelKeyUnicode": {patch: `spec: {forProvider: {labels: {équipe: payments}}}`, want: []string{fp + "labels", "label keys must start with a lowercase letter"}},
		"LabelKey64":      {patch: `spec: {forProvider: {labels: {` + strings.Repeat("k", 64) + `: v}}}`, want: []string{fp + "labels", "hold at most 63"}},
		"LabelValueSpace": {patch: `spec: {forProvider: {labels: {team: pay ments}}}`, want: []string{fp + "labels.team", "should match '^[a-z0-9_-]*$'"}},
		"LabelValueSlash": {patch: `spec: {forProvider: {labels: {repo: org/repo}}}`, want: []string{fp + "labels.repo", "should match"}},
		"Labels64":        {patch: `spec: {forProvider: {labels: ` + labelMap(64) + `}}`, want: []string{fp + "labels", "must have at most 63 items"}},
		"Labels63":        {patch: `spec: {forProvider: {labels: ` + labelMap(63) + `}}`, want: []string{fp + "labels", "at most 62 labels besides owner"}},
		"LabelOwnerEmpty": {patch: `spec: {forProvider: {labels: {owner: ""}}}`, want: []string{fp + "labels", "the owner label is reserved"}},
		"LabelOwnerUid":   {patch: `spec: {forProvider: {labels: {owner-uid: 0b1c}}}`, want: []string{fp + "labels", "the owner-uid label is reserved"}},

		// Flags.
		"FlagNoName":     {patch: `spec: {forProvider: {flags: ["=on"]}}`, want: []string{fp + "flags[0]", "each flag must be written as name=value"}},
		"FlagNoValue":    {patch: `spec: {forProvider: {flags: ["autovacuum="]}}`, want: []string{fp + "flags[0]", "each flag must be written as name=value"}},
		"FlagUpper":      {patch: `spec: {forProvider: {flags: ["AUTOVACUUM=on"]}}`, want: []string{fp + "flags[0]", "names are lowercase letters"}},
		"FlagSpaces":     {patch: `spec: {forProvider: {flags: ["autovacuum = on"]}}`, want: []string{fp + "flags[0]", "name=value"}},
		"FlagSecondBad":  {patch: `spec: {forProvider: {flags: ["autovacuum=on", "-x=1"]}}`, want: []string{fp + "flags[1]", "name=value"}},
		"FlagTwice":      {patch: `spec: {forProvider: {flags: ["work_mem=4096", "log_connections=on", "work_mem=8192"]}}`, want: []string{fp + "flags", "each flag name may appear only once"}},
		"FlagColon":      {patch: `spec: {forProvider: {flags: ["autovacuum: on"]}}`, want: []string{fp + "flags[0]", "name=value"}},
		"FlagEmptyEntry": {patch: `spec: {forProvider: {flags: [""]}}`, want: []string{fp + "flags[0]", "name=value"}},

		// Regions, zones and hours.
		"RegionNoNumber":   {patch: `spec: {forProvider: {location: {region: europe-west}}}`, want: []string{fp + "location.region", "must be a Google Cloud region such as europe-west1"}},
		"RegionUnderscore": {patch: `spec: {forProvider: {location: {region: europe_west1}}}`, want: []string{fp + "location.region", "must be a Google Cloud region"}},
		"RegionIsZone":     {patch: `spec: {forProvider: {location: {region: europe-west1-b}}}`, want: []string{fp + "location.region", "must be a Google Cloud region"}},
		"RegionTooLong":    {patch: `spec: {forProvider: {location: {region: ` + strings.Repeat("a", 20) + `-` + strings.Repeat("b", 11) + `1}}}`, want: []string{fp + "location.region", "Too long"}},
		"ZoneTwoLetters":   {patch: `spec: {forProvider: {location: {zone: europe-west1-bc}}}`, want: []string{fp + "location.zone", "must be Any or a Google Cloud zone"}},
		"ZoneAnyLower":     {patch: `spec: {forProvider: {location: {zone: any}}}`, want: []string{fp + "location.zone", "must be Any or a Google Cloud zone"}},
		"ZoneOtherRegion":  {patch: `spec: {forProvider: {location: {region: us-central1, zone: europe-west1-b}}}`, want: []string{fp + "location.zone", "must be Any or a zone of region us-central1"}},
		"Hour25":           {patch: `spec: {forProvider: {maintenance: {day: Monday, hour: "25:00"}}}`, want: []string{fp + "maintenance.hour", "must be Any or a full hour"}},
		"HourHalf":         {patch: `spec: {forProvider: {maintenance: {day: Monday, hour: "16:30"}}}`, want: []string{fp + "maintenance.hour", "full hour"}},
		"HourInt":          {patch: `spec: {forProvider: {maintenance: {day: Monday, hour: 16}}}`, want: []string{fp + "maintenance.hour", typeString}},
		"BackupStartShort": {patch: `spec: {forProvider: {backups: {daily: {startTime: "7:00"}}}}`, want: []string{fp + "backups.daily.startTime", "must be a full hour in 24-hour UTC time"}},
		"BackupStartLong":  {patch: `spec: {forProvider: {backups: {daily: {startTime: "07:00:00"}}}}`, want: []string{fp + "backups.daily.startTime", "Too long"}},

		// Machine types.
		"TypeNoMemory":     {patch: `spec: {forProvider: {resources: {instanceType: db-custom-2}}}`, want: []string{fp + "resources.instanceType", "must be db-f1-micro, db-g1-small, db-custom-<vCPUs>-<MiB>"}},
		"TypeUpper":        {patch: `spec: {forProvider: {resources: {instanceType: DB-CUSTOM-1-3840}}}`, want: []string{fp + "resources.instanceType", "must be db-f1-micro"}},
		"TypePerf6":        {patch: `spec: {forProvider: {edition: EnterprisePlus, resources: {instanceType: db-perf-optimized-N-6}}}`, want: []string{fp + "resources.instanceType", "Enterprise Plus machines have 2, 4, 8"}},
		"TypeCustom0Vcpus": {patch: `spec: {forProvider: {resources: {instanceType: db-custom-0-3840}}}`, want: []string{fp + "resources.instanceType", "has 0 vCPUs"}},

		// Networking.
		"NetworkingOff":     {patch: `spec: {forProvider: {networking: {publicIp: {enabled: false}}}}`, want: []string{fp + "networking", "enable at least one of networking.publicIp and networking.privateIp"}},
		"NetworkingEmpty":   {patch: `spec: {forProvider: {networking: {publicIp: null}}}`, want: []string{fp + "networking", "enable at least one"}},
		"NetworkUrl":        {patch: `spec: {forProvider: {networking: {privateIp: {enabled: true, network: "https://www.googleapis.com/compute/v1/projects/my-project-123/global/networks/default"}}}}`, want: []string{fp + "networking.privateIp.network", "must be a VPC network resource link"}},
		"NetworkNoProject":  {patch: `spec: {forProvider: {networking: {privateIp: {enabled: true, network: "projects//global/networks/default"}}}}`, want: []string{fp + "networking.privateIp.network", "must be a VPC network resource link"}},
		"NetworkEnabledStr": {patch: `spec: {forProvider: {networking: {privateIp: {enabled: "false"}}}}`, want: []string{fp + "networking.privateIp.enabled", typeBool}},

		// Required fields left out.
		"SpecMissing":        {patch: `spec: null`, want: []string{"spec", "Required value"}},
		"ForProviderMissing": {patch: `spec: {forProvider: null}`, want: []string{fp[:len(fp)-1], "Required value"}},
		"NetworkingMissing":  {patch: `spec: {forProvider: {networking: null}}`, want: []string{fp + "networking", "Required value"}},
		"SecretRefMissing":   {patch: `spec: {writeConnectionSecretToRef: null}`, want: []string{"spec.writeConnectionSecretToRef", "is required when the provider may create the instance"}},
		"SecretNsMissing":    {patch: `spec: {writeConnectionSecretToRef: {namespace: null}}`, want: []string{"spec.writeConnectionSecretToRef.namespace", "Required value"}},
		"SecretNameMissing":  {patch: `spec: {writeConnectionSecretToRef: {name: null}}`, want: []string{"spec.writeConnectionSecretToRef.name", "Required value"}},
		"PcRefNameMissing":   {patch: `spec: {providerConfigRef: {policy: {resolution: Required}}}`, want: []string{"spec.providerConfigRef.name", "Required value"}},
		"SelectorNoOperator": {patch: `spec: {injection: {namespaceSelector: {matchExpressions: [{key: team, values: [a]}]}}}`, want: []string{"spec.injection.namespaceSelector.matchExpressions[0].operator", "Required value"}},

		// Fields the schema does not know: kubectl sends manifests with strict field
		// validation (its default), as this test does.
		"UnknownTier":      {patch: `spec: {forProvider: {tier: db-custom-1-3840}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.tier"`}},
		"UnknownDiskSize":  {patch: `spec: {forProvider: {resources: {disk: {sizeGb: 20}}}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.resources.disk.sizeGb"`}},
		"UnknownAclValue":  {patch: `spec: {forProvider: {networking: {publicIp: {authorizedNetworks: [{cidr: 10.0.0.0/8, value: 10.0.0.0/8}]}}}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.networking.publicIp.authorizedNetworks[0].value"`}},
		"UnknownCasing":    {patch: `spec: {forProvider: {networking: {publicIP: {enabled: true}}}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.networking.publicIP"`}},
		"UnknownTopLevel":  {patch: `specs: {forProvider: {}}`, want: []string{"strict decoding error", `unknown field "specs"`}},
		"UnknownSecretKey": {patch: `spec: {writeConnectionSecretToRef: {key: password}}`, want: []string{"strict decoding error", `unknown field "spec.writeConnectionSecretToRef.key"`}},

		// References.
		"PcRefNameInt":     {patch: `spec: {providerConfigRef: {name: 5}}`, want: []string{"spec.providerConfigRef.name", typeString}},
		"PcRefString":      {patch: `spec: {providerConfigRef: default}`, want: []string{"spec.providerConfigRef", typeObject}},
		"SecretRefString":  {patch: `spec: {writeConnectionSecretToRef: malformed-postgres}`, want: []string{"spec.writeConnectionSecretToRef", typeObject}},
		"AllowedNsBad":     {patch: `spec: {injection: {allowedNamespaces: [Team_A]}}`, want: []string{"spec.injection.allowedNamespaces[0]", "must be a namespace name"}},
		"AllowedNsStarToo": {patch: `spec: {injection: {allowedNamespaces: [team-a, "*"]}}`, want: []string{"spec.injection.allowedNamespaces", "list either '*' alone or namespace names"}},
		"SelectorOperator": {patch: `spec: {injection: {namespaceSelector: {matchExpressions: [{key: team, operator: Equals, values: [a]}]}}}`, want: []string{"spec.injection.namespaceSelector.matchExpressions", "each operator must be In, NotIn, Exists or DoesNotExist"}},

		// Whole documents, as JSON and YAML.
		"JsonTypeErrors": {doc: `{"apiVersion": "cloudsql.travelaudience.com/v1alpha1", "kind": "PostgresqlInstance", "metadata": {"name": "x"},
			"spec": {"writeConnectionSecretToRef": {"namespace": "crossplane-system", "name": "x"},
			"forProvider": {"networking": {"publicIp": {"enabled": 1}}, "resources": {"disk": {"sizeMinimumGb": [10]}}}}}`,
			want: []string{fp + "networking.publicIp.enabled", typeBool, fp + "resources.disk.sizeMinimumGb", typeInt}},
		"YamlNorway": {doc: "apiVersion: cloudsql.travelaudience.com/v1alpha1\nkind: PostgresqlInstance\nmetadata:\n  name: x\nspec:\n" +
			"  writeConnectionSecretToRef: {namespace: crossplane-system, name: x}\n  forProvider:\n    networking: {publicIp: {enabled: true}}\n    location: {region: europe-west1, zone: off}\n",
			want: []string{fp + "location.zone", typeString}},

		// References that cannot work.
		"PcRefNameEmpty": {patch: `spec: {providerConfigRef: {name: ""}}`, want: []string{"spec.providerConfigRef.name", "must name a ProviderConfig"}},
		"SecretNsEmpty":  {patch: `spec: {writeConnectionSecretToRef: {namespace: ""}}`, want: []string{"spec.writeConnectionSecretToRef.namespace", "must be a namespace name"}},
	}
	runMalformed(t, pgiBase, "malformed-", cases)
}

func TestMalformedProviderConfigs(t *testing.T) {
	controlplane.Need(t)
	const typeString, typeObject = "must be of type string", "must be of type object"
	cases := map[string]malformed{
		// Wrong types.
		"ProjectInt":        {patch: `spec: {projectID: 123456789}`, want: []string{"spec.projectID", typeString}},
		"SourceList":        {patch: `spec: {credentials: {source: [Secret]}}`, want: []string{"spec.credentials.source", typeString}},
		"SecretRefString":   {patch: `spec: {credentials: {secretRef: gcp}}`, want: []string{"spec.credentials.secretRef", typeObject}},
		"FsPathInt":         {patch: `spec: {credentials: {source: Filesystem, secretRef: null, fs: {path: 7}}}`, want: []string{"spec.credentials.fs.path", typeString}},
		"EndpointInt":       {patch: `spec: {endpoint: 8085}`, want: []string{"spec.endpoint", typeString}},
		"CredentialsString": {patch: `spec: {credentials: Secret}`, want: []string{"spec.credentials", typeObject}},
		"SpecList":          {patch: `spec: [my-project-123]`, want: []string{"spec", typeObject}},

		// Project IDs.
		"ProjectShort":      {patch: `spec: {projectID: abc}`, want: []string{"spec.projectID", "at least 6 chars long"}},
		"ProjectLong":       {patch: `spec: {projectID: ` + strings.Repeat("a", 95) + `}`, want: []string{"spec.projectID", "Too long"}},
		"ProjectUnderscore": {patch: `spec: {projectID: my_project_123}`, want: []string{"spec.projectID", "must be a Google Cloud project ID"}},
		"Project31Chars":    {patch: `spec: {projectID: ` + strings.Repeat("a", 31) + `}`, want: []string{"spec.projectID", "6 to 30 lowercase letters"}},
		"ProjectHyphenEnd":  {patch: `spec: {projectID: my-project-}`, want: []string{"spec.projectID", "must be a Google Cloud project ID"}},

		// Credentials.
		"SourceLower":     {patch: `spec: {credentials: {source: secret}}`, want: []string{"spec.credentials.source", `Unsupported value: "secret"`}},
		"SourceUpbound":   {patch: `spec: {credentials: {source: Upbound}}`, want: []string{"spec.credentials.source", `Unsupported value: "Upbound"`}},
		"SourceMissing":   {patch: `spec: {credentials: {source: null}}`, want: []string{"spec.credentials.source", "Required value"}},
		"SecretKeyMiss":   {patch: `spec: {credentials: {secretRef: {key: null}}}`, want: []string{"spec.credentials.secretRef.key", "Required value"}},
		"SecretNsMiss":    {patch: `spec: {credentials: {secretRef: {namespace: null}}}`, want: []string{"spec.credentials.secretRef.namespace", "Required value"}},
		"SecretRefMiss":   {patch: `spec: {credentials: {secretRef: null}}`, want: []string{"spec.credentials.secretRef", "is required when source is Secret"}},
		"EnvNoName":       {patch: `spec: {credentials: {source: Environment, env: {}}}`, want: []string{"spec.credentials.env.name", "Required value"}},
		"EnvMissing":      {patch: `spec: {credentials: {source: Environment, secretRef: null}}`, want: []string{"spec.credentials.env", "is required when source is Environment"}},
		"FsMissing":       {patch: `spec: {credentials: {source: Filesystem}}`, want: []string{"spec.credentials.fs", "is required when source is Filesystem"}},
		"NoneNoEndpoint":  {patch: `spec: {credentials: {source: None, secretRef: null}}`, want: []string{"spec.credentials.source", "None is only allowed together with spec.endpoint"}},
		"ProxyNoKey":      {patch: `spec: {proxyCredentials: {namespace: crossplane-system, name: proxy}}`, want: []string{"spec.proxyCredentials.key", "Required value"}},
		"ProxyCredsStr":   {patch: `spec: {proxyCredentials: proxy-key}`, want: []string{"spec.proxyCredentials", typeObject}},
		"CredentialsMiss": {patch: `spec: {credentials: null}`, want: []string{"spec.credentials", "Required value"}},
		"ProjectMiss":     {patch: `spec: {projectID: null}`, want: []string{"spec.projectID", "Required value"}},
		"SpecMissing":     {patch: `spec: null`, want: []string{"spec", "Required value"}},
		"EndpointNoHttp":  {patch: `spec: {endpoint: sqladmin.googleapis.com}`, want: []string{"spec.endpoint", "must be an http:// or https:// URL"}},
		"EndpointGrpc":    {patch: `spec: {endpoint: "grpc://127.0.0.1:8085"}`, want: []string{"spec.endpoint", "must be an http:// or https:// URL"}},
		"EndpointEmpty":   {patch: `spec: {endpoint: ""}`, want: []string{"spec.endpoint", "must be an http:// or https:// URL"}},
		"EndpointTooLong": {patch: `spec: {endpoint: "https://example.com/` + strings.Repeat("p", 2030) + `"}`, want: []string{"spec.endpoint", "Too long"}},

		// Unknown fields.
		"UnknownRegion":    {patch: `spec: {region: europe-west1}`, want: []string{"strict decoding error", `unknown field "spec.region"`}},
		"UnknownKeyFile":   {patch: `spec: {credentials: {secretRef: {keyFile: key.json}}}`, want: []string{"strict decoding error", `unknown field "spec.credentials.secretRef.keyFile"`}},
		"UnknownProjectId": {patch: `spec: {projectId: my-project-123}`, want: []string{"strict decoding error", `unknown field "spec.projectId"`}},

		// Credentials and endpoints that cannot work.
		"SecretNameEmpty": {patch: `spec: {credentials: {secretRef: {name: ""}}}`, want: []string{"spec.credentials.secretRef", "none may be empty"}},
		"EnvNameEmpty":    {patch: `spec: {credentials: {source: Environment, secretRef: null, env: {name: ""}}}`, want: []string{"spec.credentials.env.name", "must name the environment variable"}},
		"FsPathRelative":  {patch: `spec: {credentials: {source: Filesystem, secretRef: null, fs: {path: key.json}}}`, want: []string{"spec.credentials.fs.path", "absolute"}},
		"EndpointNoHost":  {patch: `spec: {endpoint: "http:///sql/"}`, want: []string{"spec.endpoint", "with a host"}},
	}
	runMalformed(t, pcBase, "malformed-pc-", cases)
}

// runMalformed builds each case's manifest from base, reads it with the provider's
// manifest loader and creates it with strict field validation, as kubectl does; the
// loader or the API server must refuse it with a message holding every fragment of
// want.
func runMalformed(t *testing.T, base, prefix string, cases map[string]malformed) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			// Every case names the field and says what is wrong with it.
			g.Expect(len(tc.want)).To(BeNumerically(">=", 2), "a case needs the field's path and what is wrong")
			text := tc.doc
			if text == "" {
				text = mergeYAML(g, base, tc.patch)
			}
			// A manifest the loader refuses never reaches the API server; its message
			// is checked the same way.
			objs, err := manifests.Decode([]byte(text))
			if err == nil {
				g.Expect(objs).To(HaveLen(1))
				u := objs[0]
				// Objects of the other tests of this package live in the same API server.
				u.SetName(objectName(prefix, name))
				err = env.Client.Create(context.Background(), u, client.FieldValidation(metav1.FieldValidationStrict))
			}
			g.Expect(err).To(HaveOccurred(), "the loader and the API server accepted:\n%s", text)
			denied(g, err, tc.want...)
		})
	}
}

// mergeYAML applies patch to base as a JSON merge patch and writes the result as
// YAML, the form the loader reads.
func mergeYAML(g Gomega, base, patch string) string {
	var b, p map[string]any
	g.ExpectWithOffset(1, yaml.Unmarshal([]byte(base), &b)).To(Succeed())
	g.ExpectWithOffset(1, yaml.Unmarshal([]byte(patch), &p)).To(Succeed())
	out, err := yaml.Marshal(mergePatch(b, p))
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return string(out)
}

// mergePatch is RFC 7386: objects merge key by key, null removes, anything else
// replaces.
func mergePatch(dst, patch map[string]any) map[string]any {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(dst, k)
		case map[string]any:
			dv, ok := dst[k].(map[string]any)
			if !ok {
				dv = map[string]any{}
			}
			dst[k] = mergePatch(dv, pv)
		default:
			dst[k] = v
		}
	}
	return dst
}

// pgiWith is the base PostgresqlInstance as JSON with more fields of forProvider,
// for inputs a merge patch cannot express (a null value, an empty key).
func pgiWith(forProvider string) string {
	return `{"apiVersion": "cloudsql.travelaudience.com/v1alpha1", "kind": "PostgresqlInstance", "metadata": {"name": "x"},
		"spec": {"writeConnectionSecretToRef": {"namespace": "crossplane-system", "name": "x"},
		"forProvider": {"networking": {"publicIp": {"enabled": true}}, ` + forProvider + `}}}`
}

// aclPatch authorizes one network, written as cidr.
func aclPatch(cidr string) string {
	return fmt.Sprintf(`spec: {forProvider: {networking: {publicIp: {authorizedNetworks: [{cidr: %q}]}}}}`, cidr)
}

// flagList is n distinct valid flags, as a YAML flow sequence.
func flagList(n int) string {
	fs := make([]string, n)
	for i := range fs {
		fs[i] = fmt.Sprintf("flag_%d=on", i)
	}
	return "[" + strings.Join(fs, ", ") + "]"
}

// aclList is n distinct valid authorized networks.
func aclList(n int) string {
	as := make([]string, n)
	for i := range as {
		as[i] = fmt.Sprintf("{cidr: 10.%d.%d.0/24}", i/256, i%256)
	}
	return "[" + strings.Join(as, ", ") + "]"
}

// nsList is n distinct namespace names.
func nsList(n int) string {
	ns := make([]string, n)
	for i := range ns {
		ns[i] = fmt.Sprintf("team-%d", i)
	}
	return "[" + strings.Join(ns, ", ") + "]"
}

// labelMap is n distinct valid labels, as a YAML flow mapping.
func labelMap(n int) string {
	ls := make([]string, n)
	for i := range ls {
		ls[i] = fmt.Sprintf("label-%d: v", i)
	}
	return "{" + strings.Join(ls, ", ") + "}"
}

// pgdbBase is a valid PostgresqlDatabase; each case changes it.
const pgdbBase = `
apiVersion: cloudsql.travelaudience.com/v1alpha1
kind: PostgresqlDatabase
metadata:
  name: replaced-by-the-test
spec:
  forProvider:
    instance: shared
    owner: app
`

// pguBase is a valid BUILT_IN PostgresqlUser; each case changes it.
const pguBase = `
apiVersion: cloudsql.travelaudience.com/v1alpha1
kind: PostgresqlUser
metadata:
  name: replaced-by-the-test
spec:
  writeConnectionSecretToRef:
    namespace: crossplane-system
    name: app-credentials
  forProvider:
    instance: shared
`

func TestMalformedPostgresqlDatabases(t *testing.T) {
	controlplane.Need(t)
	const fp = "spec.forProvider."
	const typeString, typeObject = "must be of type string", "must be of type object"
	cases := map[string]malformed{
		// Wrong types.
		"NameInt":          {patch: `spec: {forProvider: {name: 42}}`, want: []string{fp + "name", typeString}},
		"CharsetList":      {patch: `spec: {forProvider: {charset: [UTF8]}}`, want: []string{fp + "charset", typeString}},
		"InstanceRefStr":   {patch: `spec: {forProvider: {instance: null, instanceRef: shared}}`, want: []string{fp + "instanceRef", typeObject}},
		"OwnerSelectorStr": {patch: `spec: {forProvider: {ownerSelector: app}}`, want: []string{fp + "ownerSelector", typeObject}},
		"ForProviderList":  {patch: `spec: {forProvider: [shared]}`, want: []string{fp[:len(fp)-1], typeObject}},

		// Missing and unknown fields. A database has no providerConfigRef: its
		// project and credentials are its instance's.
		"ForProviderMissing": {patch: `spec: {forProvider: null}`, want: []string{"spec.forProvider", "Required value"}},
		"NoInstance":         {patch: `spec: {forProvider: {instance: null}}`, want: []string{fp + "instance", "is required: name the PostgresqlInstance the database belongs to with instance, instanceRef or instanceSelector"}},
		"InstanceRefNoName":  {patch: `spec: {forProvider: {instance: null, instanceRef: {}}}`, want: []string{fp + "instanceRef.name", "Required value"}},
		"OwnerRefNoName":     {patch: `spec: {forProvider: {ownerRef: {policy: {resolve: Always}}}}`, want: []string{fp + "ownerRef.name", "Required value"}},
		"ProviderConfigRef":  {patch: `spec: {providerConfigRef: {name: default}}`, want: []string{"strict decoding error", `unknown field "spec.providerConfigRef"`}},
		"ClusterInstance":    {patch: `spec: {forProvider: {clusterInstance: shared}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.clusterInstance"`}},
		"UnknownEncoding":    {patch: `spec: {forProvider: {encoding: UTF8}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.encoding"`}},

		// Names PostgreSQL or Cloud SQL refuse.
		"NameEmpty":         {patch: `spec: {forProvider: {name: ""}}`, want: []string{fp + "name", "at least 1 chars long"}},
		"NameTooLong":       {patch: `spec: {forProvider: {name: ` + strings.Repeat("a", 64) + `}}`, want: []string{fp + "name", "Too long", "63"}},
		"NameUppercase":     {patch: `spec: {forProvider: {name: Orders}}`, want: []string{fp + "name", "must start with a lowercase letter or '_' and hold only lowercase letters, digits"}},
		"NameStartsDigit":   {patch: `spec: {forProvider: {name: 1orders}}`, want: []string{fp + "name", "must start with a lowercase letter or '_'"}},
		"NameDot":           {patch: `spec: {forProvider: {name: team.orders}}`, want: []string{fp + "name", "hold only lowercase letters, digits, '_', '$' and '-'"}},
		"NameQuote":         {patch: `spec: {forProvider: {name: "orders\"; DROP"}}`, want: []string{fp + "name", "hold only lowercase letters"}},
		"NamePostgres":      {patch: `spec: {forProvider: {name: postgres}}`, want: []string{fp + "name", "is reserved: every Cloud SQL instance has a database postgres; choose another name"}},
		"NameTemplate0":     {patch: `spec: {forProvider: {name: template0}}`, want: []string{fp + "name", "is reserved", "template0"}},
		"NameTemplate1":     {patch: `spec: {forProvider: {name: template1}}`, want: []string{fp + "name", "is reserved", "template1"}},
		"NameCloudsqladmin": {patch: `spec: {forProvider: {name: cloudsqladmin}}`, want: []string{fp + "name", "is reserved", "cloudsqladmin"}},
		"CharsetEmpty":      {patch: `spec: {forProvider: {charset: ""}}`, want: []string{fp + "charset", "at least 1 chars long"}},
		"CharsetSpace":      {patch: `spec: {forProvider: {charset: "UTF 8"}}`, want: []string{fp + "charset", "must be a PostgreSQL character set name such as UTF8"}},
		"CollationQuote":    {patch: `spec: {forProvider: {collation: "en_US'"}}`, want: []string{fp + "collation", "must be a collation name such as en_US.UTF8 or C"}},
		"InstanceEmpty":     {patch: `spec: {forProvider: {instance: ""}}`, want: []string{fp + "instance", "at least 1 chars long"}},
		"OwnerEmpty":        {patch: `spec: {forProvider: {owner: ""}}`, want: []string{fp + "owner", "at least 1 chars long"}},

		// Policies and the secret.
		"DeletionPolicyBad":   {patch: `spec: {deletionPolicy: Drop}`, want: []string{"spec.deletionPolicy", `Unsupported value: "Drop"`}},
		"ManagementPolicyBad": {patch: `spec: {managementPolicies: [Drop]}`, want: []string{"spec.managementPolicies[0]", `Unsupported value: "Drop"`}},
		"SecretNsEmpty":       {patch: `spec: {writeConnectionSecretToRef: {name: orders, namespace: ""}}`, want: []string{"spec.writeConnectionSecretToRef.namespace", "must be a namespace name: a PostgresqlDatabase is cluster-scoped"}},
		"SecretNsMissing":     {patch: `spec: {writeConnectionSecretToRef: {name: orders}}`, want: []string{"spec.writeConnectionSecretToRef.namespace", "Required value"}},
	}
	runMalformed(t, pgdbBase, "malformed-pgdb-", cases)
}

func TestMalformedPostgresqlUsers(t *testing.T) {
	controlplane.Need(t)
	const fp = "spec.forProvider."
	const typeString, typeArray = "must be of type string", "must be of type array"
	const sa = "app@my-project-123.iam.gserviceaccount.com"
	cases := map[string]malformed{
		// Wrong types.
		"TypeInt":            {patch: `spec: {forProvider: {type: 1}}`, want: []string{fp + "type", typeString}},
		"IamPrincipalList":   {patch: `spec: {forProvider: {type: CLOUD_IAM_USER, iamPrincipal: [jane@example.com]}}`, want: []string{fp + "iamPrincipal", typeString}},
		"AllowedNsString":    {patch: `spec: {forProvider: {injection: {allowedNamespaces: team-a}}}`, want: []string{fp + "injection.allowedNamespaces", typeArray}},
		"ProviderConfigRef":  {patch: `spec: {providerConfigRef: {name: default}}`, want: []string{"strict decoding error", `unknown field "spec.providerConfigRef"`}},
		"ClusterInstanceRef": {patch: `spec: {forProvider: {clusterInstanceRef: {name: shared}}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.clusterInstanceRef"`}},
		"PasswordField":      {patch: `spec: {forProvider: {password: hunter2}}`, want: []string{"strict decoding error", `unknown field "spec.forProvider.password"`}},

		// The instance and the secret.
		"NoInstance":      {patch: `spec: {forProvider: {instance: null}}`, want: []string{fp + "instance", "is required: name the PostgresqlInstance the user belongs to with instance, instanceRef or instanceSelector"}},
		"NoSecret":        {patch: `spec: {writeConnectionSecretToRef: null}`, want: []string{"spec.writeConnectionSecretToRef", "is required for a BUILT_IN user the provider may create: its generated password is stored there before the login is created"}},
		"SecretNsEmpty":   {patch: `spec: {writeConnectionSecretToRef: {namespace: ""}}`, want: []string{"spec.writeConnectionSecretToRef.namespace", "must be a namespace name: a PostgresqlUser is cluster-scoped"}},
		"DeletionPolicy":  {patch: `spec: {deletionPolicy: delete}`, want: []string{"spec.deletionPolicy", `Unsupported value: "delete"`}},
		"TypeUnknown":     {patch: `spec: {forProvider: {type: CLOUD_IAM_GROUP}}`, want: []string{fp + "type", `Unsupported value: "CLOUD_IAM_GROUP"`, "BUILT_IN"}},
		"TypeLowercase":   {patch: `spec: {forProvider: {type: built_in}}`, want: []string{fp + "type", `Unsupported value: "built_in"`}},
		"InstanceRefName": {patch: `spec: {forProvider: {instance: null, instanceRef: {policy: {resolution: Optional}}}}`, want: []string{fp + "instanceRef.name", "Required value"}},

		// Login names PostgreSQL or Cloud SQL refuse.
		"NamePostgres":       {patch: `spec: {forProvider: {name: postgres}}`, want: []string{fp + "name", "is reserved: postgres is the administrator of every Cloud SQL instance; choose another name"}},
		"NameCloudsqlPrefix": {patch: `spec: {forProvider: {name: cloudsqlsuperuser}}`, want: []string{fp + "name", "is reserved: cloudsqlsuperuser: Cloud SQL reserves the names that start with cloudsql"}},
		"NameUppercase":      {patch: `spec: {forProvider: {name: App}}`, want: []string{fp + "name", "must start with a lowercase letter or '_'"}},
		"NameTooLong":        {patch: `spec: {forProvider: {name: ` + strings.Repeat("u", 64) + `}}`, want: []string{fp + "name", "Too long"}},
		"NameEmpty":          {patch: `spec: {forProvider: {name: ""}}`, want: []string{fp + "name", "at least 1 chars long"}},

		// IAM principals.
		"IamForBuiltIn":      {patch: `spec: {forProvider: {iamPrincipal: jane@example.com}}`, want: []string{fp + "iamPrincipal", "must be omitted for a BUILT_IN user, which logs in with a password"}},
		"IamSaWithout":       {patch: `spec: {forProvider: {type: CLOUD_IAM_SERVICE_ACCOUNT}}`, want: []string{fp + "iamPrincipal", "is required for CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER users"}},
		"IamUserWithout":     {patch: `spec: {forProvider: {type: CLOUD_IAM_USER}}`, want: []string{fp + "iamPrincipal", "is required for CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER users"}},
		"IamNotEmail":        {patch: `spec: {forProvider: {type: CLOUD_IAM_USER, iamPrincipal: jane}}`, want: []string{fp + "iamPrincipal", "must be an email address"}},
		"IamSaPersonEmail":   {patch: `spec: {forProvider: {type: CLOUD_IAM_SERVICE_ACCOUNT, iamPrincipal: jane@example.com}}`, want: []string{fp + "iamPrincipal", "must be a service account's email, ending in .gserviceaccount.com"}},
		"IamUserSaEmail":     {patch: `spec: {forProvider: {type: CLOUD_IAM_USER, iamPrincipal: ` + sa + `}}`, want: []string{fp + "iamPrincipal", "is a service account's email: use type CLOUD_IAM_SERVICE_ACCOUNT"}},
		"IamWithName":        {patch: `spec: {forProvider: {type: CLOUD_IAM_SERVICE_ACCOUNT, iamPrincipal: ` + sa + `, name: app}}`, want: []string{fp + "name", "must be omitted for CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER users: their login name follows from iamPrincipal"}},
		"IamTooLong":         {patch: `spec: {forProvider: {type: CLOUD_IAM_USER, iamPrincipal: ` + strings.Repeat("j", 250) + `@example.com}}`, want: []string{fp + "iamPrincipal", "Too long"}},
		"AllowedNsWildcard":  {patch: `spec: {forProvider: {injection: {allowedNamespaces: ["*"]}}}`, want: []string{fp + "injection.allowedNamespaces[0]", "'*' is not allowed here"}},
		"AllowedNsBadName":   {patch: `spec: {forProvider: {injection: {allowedNamespaces: [Team_A]}}}`, want: []string{fp + "injection.allowedNamespaces[0]", "must be a namespace name"}},
		"AllowedNsDuplicate": {patch: `spec: {forProvider: {injection: {allowedNamespaces: [team-a, team-a]}}}`, want: []string{fp + "injection.allowedNamespaces[1]", "Duplicate value"}},
		"AllowedNsTooMany":   {patch: `spec: {forProvider: {injection: {allowedNamespaces: ` + nsList(257) + `}}}`, want: []string{fp + "injection.allowedNamespaces", "must have at most 256 items"}},
	}
	runMalformed(t, pguBase, "malformed-pgu-", cases)
}
