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

package cloudsql

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

func TestInstanceName(t *testing.T) {
	cases := map[string]struct {
		name         *string
		externalName string
		want         string
	}{
		"ForProviderNameWins":            {name: ptr.To("from-spec"), externalName: "from-annotation", want: "from-spec"},
		"ExternalNameWithoutSpecName":    {externalName: "imported-instance", want: "imported-instance"},
		"MetadataNameWhenNothingElse":    {want: "pgi-metadata-name"},
		"EmptySpecNameFallsBackToAnnot":  {name: ptr.To(""), externalName: "from-annotation", want: "from-annotation"},
		"EmptySpecNameAndNoAnnotation":   {name: ptr.To(""), want: "pgi-metadata-name"},
		"SpecNameWithoutAnnotationIsSet": {name: ptr.To("from-spec"), want: "from-spec"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			mg := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: "pgi-metadata-name"}}
			mg.Spec.ForProvider.Name = tc.name
			if tc.externalName != "" {
				meta.SetExternalName(mg, tc.externalName)
			}
			g.Expect(InstanceName(mg)).To(Equal(tc.want))
		})
	}
}

func TestDatabaseVersion(t *testing.T) {
	cases := map[string]struct {
		api, cloudSQL string
	}{
		"9.6": {"9.6", "POSTGRES_9_6"},
		"10":  {"10", "POSTGRES_10"},
		"15":  {"15", "POSTGRES_15"},
		"18":  {"18", "POSTGRES_18"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(DatabaseVersion(tc.api)).To(Equal(tc.cloudSQL))
			g.Expect(FromDatabaseVersion(tc.cloudSQL)).To(Equal(tc.api))
		})
	}
	t.Run("Unset", func(t *testing.T) {
		NewWithT(t).Expect(DatabaseVersion("")).To(BeEmpty())
	})
	t.Run("NotPostgres", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(FromDatabaseVersion("MYSQL_8_0")).To(BeEmpty())
		g.Expect(FromDatabaseVersion("POSTGRES_")).To(BeEmpty())
		g.Expect(FromDatabaseVersion("")).To(BeEmpty())
	})
}

// TestEnumerations checks each mapping both ways, and that values the other
// side has no word for map to "" rather than to a wrong value.
func TestEnumerations(t *testing.T) {
	type mapping struct {
		to, from func(string) string
		pairs    [][2]string
		unknown  [2]string
	}
	cases := map[string]mapping{
		"Edition": {Edition, FromEdition,
			[][2]string{{"Enterprise", "ENTERPRISE"}, {"EnterprisePlus", "ENTERPRISE_PLUS"}},
			[2]string{"Standard", "EDITION_UNSPECIFIED"}},
		"AvailabilityType": {AvailabilityType, FromAvailabilityType,
			[][2]string{{"Zonal", "ZONAL"}, {"Regional", "REGIONAL"}},
			[2]string{"zonal", "SQL_AVAILABILITY_TYPE_UNSPECIFIED"}},
		"DataDiskType": {DataDiskType, FromDataDiskType,
			[][2]string{{"SSD", "PD_SSD"}, {"HDD", "PD_HDD"}},
			[2]string{"Hyperdisk", "HYPERDISK_BALANCED"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			for _, p := range tc.pairs {
				g.Expect(tc.to(p[0])).To(Equal(p[1]), "to Cloud SQL: %s", p[0])
				g.Expect(tc.from(p[1])).To(Equal(p[0]), "from Cloud SQL: %s", p[1])
			}
			g.Expect(tc.to(tc.unknown[0])).To(BeEmpty())
			g.Expect(tc.to("")).To(BeEmpty())
			g.Expect(tc.from(tc.unknown[1])).To(BeEmpty())
			g.Expect(tc.from("")).To(BeEmpty())
		})
	}
}

func TestMaintenanceDay(t *testing.T) {
	cases := map[string]struct {
		day string
		num int64
	}{
		"Any":       {"Any", 0},
		"Monday":    {"Monday", 1},
		"Tuesday":   {"Tuesday", 2},
		"Wednesday": {"Wednesday", 3},
		"Thursday":  {"Thursday", 4},
		"Friday":    {"Friday", 5},
		"Saturday":  {"Saturday", 6},
		"Sunday":    {"Sunday", 7},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(MaintenanceDay(tc.day)).To(Equal(tc.num))
			g.Expect(FromMaintenanceDay(tc.num)).To(Equal(tc.day))
		})
	}
	t.Run("OutOfRange", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(MaintenanceDay("")).To(Equal(int64(0)))
		g.Expect(MaintenanceDay("monday")).To(Equal(int64(0)))
		g.Expect(FromMaintenanceDay(8)).To(Equal("Any"))
		g.Expect(FromMaintenanceDay(-1)).To(Equal("Any"))
	})
}

func TestMaintenanceHour(t *testing.T) {
	cases := map[string]struct {
		hour string
		num  int64
		back string
	}{
		"Midnight":      {"00:00", 0, "00:00"},
		"Morning":       {"04:00", 4, "04:00"},
		"Afternoon":     {"16:00", 16, "16:00"},
		"LastHour":      {"23:00", 23, "23:00"},
		"Any":           {"Any", 0, "00:00"},
		"Unset":         {"", 0, "00:00"},
		"NotFullHour":   {"16:30", 0, "00:00"},
		"OutOfRange":    {"24:00", 0, "00:00"},
		"NoLeadingZero": {"4:00", 0, "00:00"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(MaintenanceHour(tc.hour)).To(Equal(tc.num))
			g.Expect(FromMaintenanceHour(tc.num)).To(Equal(tc.back))
		})
	}
	t.Run("FromOutOfRange", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(FromMaintenanceHour(24)).To(BeEmpty())
		g.Expect(FromMaintenanceHour(-1)).To(BeEmpty())
	})
}

func TestUserLabels(t *testing.T) {
	cases := map[string]struct {
		in   map[string]v1alpha1.LabelValue
		want map[string]string
	}{
		"None":          {nil, map[string]string{"owner": "cloudsql-postgres-operator"}},
		"UserLabels":    {map[string]v1alpha1.LabelValue{"team": "payments", "env": "prod"}, map[string]string{"owner": "cloudsql-postgres-operator", "team": "payments", "env": "prod"}},
		"OwnerRepeated": {map[string]v1alpha1.LabelValue{"owner": "cloudsql-postgres-operator"}, map[string]string{"owner": "cloudsql-postgres-operator"}},
		"EmptyValue":    {map[string]v1alpha1.LabelValue{"flag": ""}, map[string]string{"owner": "cloudsql-postgres-operator", "flag": ""}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, UserLabels(tc.in)); diff != "" {
				t.Errorf("UserLabels(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestDatabaseFlags(t *testing.T) {
	cases := map[string]struct {
		in   []string
		want []*sqladmin.DatabaseFlags
		back []string
	}{
		"None": {nil, nil, nil},
		"Several": {
			in:   []string{"max_connections=200", "autovacuum=on"},
			want: []*sqladmin.DatabaseFlags{{Name: "max_connections", Value: "200"}, {Name: "autovacuum", Value: "on"}},
			back: []string{"autovacuum=on", "max_connections=200"},
		},
		"ValueWithEquals": {
			in:   []string{"search_path=a=b"},
			want: []*sqladmin.DatabaseFlags{{Name: "search_path", Value: "a=b"}},
			back: []string{"search_path=a=b"},
		},
		"QualifiedName": {
			in:   []string{"pg_stat_statements.track=all"},
			want: []*sqladmin.DatabaseFlags{{Name: "pg_stat_statements.track", Value: "all"}},
			back: []string{"pg_stat_statements.track=all"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DatabaseFlags(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DatabaseFlags(...): -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.back, FromDatabaseFlags(got)); diff != "" {
				t.Errorf("FromDatabaseFlags(...): -want, +got:\n%s", diff)
			}
		})
	}
	t.Run("NilEntriesAreSkipped", func(t *testing.T) {
		NewWithT(t).Expect(FromDatabaseFlags([]*sqladmin.DatabaseFlags{nil, {Name: "a", Value: "1"}})).To(Equal([]string{"a=1"}))
	})
}

func TestAuthorizedNetworks(t *testing.T) {
	in := []v1alpha1.AuthorizedNetwork{{CIDR: "30.60.90.120/32", Name: "alice"}, {CIDR: "120.90.60.0/24", Name: "bob"}}
	want := []*sqladmin.AclEntry{
		{Kind: "sql#aclEntry", Value: "30.60.90.120/32", Name: "alice"},
		{Kind: "sql#aclEntry", Value: "120.90.60.0/24", Name: "bob"},
	}
	got := AuthorizedNetworks(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AuthorizedNetworks(...): -want, +got:\n%s", diff)
	}
	// Back, sorted by CIDR, and without the nil entry.
	back := []v1alpha1.AuthorizedNetwork{{CIDR: "120.90.60.0/24", Name: "bob"}, {CIDR: "30.60.90.120/32", Name: "alice"}}
	if diff := cmp.Diff(back, FromAuthorizedNetworks(append(got, nil))); diff != "" {
		t.Errorf("FromAuthorizedNetworks(...): -want, +got:\n%s", diff)
	}
	g := NewWithT(t)
	g.Expect(AuthorizedNetworks(nil)).To(BeNil())
	g.Expect(FromAuthorizedNetworks(nil)).To(BeNil())
}

func TestNormalizeNetwork(t *testing.T) {
	cases := map[string]struct {
		in, want string
	}{
		"ResourceLink": {"projects/p-123456/global/networks/default", "projects/p-123456/global/networks/default"},
		"ComputeURL":   {"https://www.googleapis.com/compute/v1/projects/p-123456/global/networks/default", "projects/p-123456/global/networks/default"},
		"BetaURL":      {"https://compute.googleapis.com/compute/beta/projects/p-123456/global/networks/vpc", "projects/p-123456/global/networks/vpc"},
		"Empty":        {"", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(NormalizeNetwork(tc.in)).To(Equal(tc.want))
		})
	}
}
