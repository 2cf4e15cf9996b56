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
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Values of Cloud SQL enumerations, as the Admin API spells them.
const (
	// InstanceTypeCloudSQL is a primary instance (not a replica).
	InstanceTypeCloudSQL = "CLOUD_SQL_INSTANCE"
	// BackendTypeSecondGen is the only backend new instances can have.
	BackendTypeSecondGen = "SECOND_GEN"
	// PricingPlanPerUse is the only pricing plan of second-generation
	// instances.
	PricingPlanPerUse = "PER_USE"
	// ActivationPolicyAlways keeps the instance running.
	ActivationPolicyAlways = "ALWAYS"

	// EditionEnterprise and EditionEnterprisePlus are settings.edition.
	EditionEnterprise     = "ENTERPRISE"
	EditionEnterprisePlus = "ENTERPRISE_PLUS"

	// AvailabilityZonal and AvailabilityRegional are
	// settings.availabilityType.
	AvailabilityZonal    = "ZONAL"
	AvailabilityRegional = "REGIONAL"

	// DiskTypeSSD and DiskTypeHDD are settings.dataDiskType.
	DiskTypeSSD = "PD_SSD"
	DiskTypeHDD = "PD_HDD"

	// IPTypePrimary and IPTypePrivate are ipAddresses[].type of the public
	// and the private address. (OUTGOING, the address connections leave
	// from, is neither.)
	IPTypePrimary = "PRIMARY"
	IPTypePrivate = "PRIVATE"

	// ACLEntryKind is the kind of an authorized network entry.
	ACLEntryKind = "sql#aclEntry"

	// MaintenanceAnyDay is maintenanceWindow.day when maintenance may happen
	// on any day (and at any hour).
	MaintenanceAnyDay int64 = 0

	// databaseVersionPrefix starts every PostgreSQL databaseVersion.
	databaseVersionPrefix = "POSTGRES_"
)

// A NamedInstance is a PostgresqlInstance of either kind (cluster-scoped or
// namespaced), as far as the name of its Cloud SQL instance goes.
type NamedInstance interface {
	metav1.Object
	Parameters() *v1alpha1.PostgresqlInstanceParameters
}

// InstanceName is the name of the Cloud SQL instance that mg manages:
// spec.forProvider.name when set, else the crossplane.io/external-name
// annotation, else metadata.name. It depends only on the object, never on
// what exists in Cloud SQL, so a create that crashed half-way finds its
// instance on the next observation instead of creating a second one.
func InstanceName(mg NamedInstance) string {
	if n := mg.Parameters().Name; n != nil && *n != "" {
		return *n
	}
	if n := meta.GetExternalName(mg); n != "" {
		return n
	}
	return mg.GetName()
}

// DatabaseVersion is the Cloud SQL databaseVersion of a PostgreSQL major
// version: "9.6" is POSTGRES_9_6, "15" is POSTGRES_15. An empty version
// gives "".
func DatabaseVersion(v string) string {
	if v == "" {
		return ""
	}
	return databaseVersionPrefix + strings.ReplaceAll(v, ".", "_")
}

// FromDatabaseVersion is the PostgreSQL major version of a Cloud SQL
// databaseVersion (POSTGRES_9_6 is "9.6"), or "" when it is not a
// PostgreSQL version.
func FromDatabaseVersion(v string) string {
	rest, ok := strings.CutPrefix(v, databaseVersionPrefix)
	if !ok || rest == "" {
		return ""
	}
	return strings.ReplaceAll(rest, "_", ".")
}

// Edition is the settings.edition of an edition of the API: Enterprise is
// ENTERPRISE, EnterprisePlus is ENTERPRISE_PLUS; anything else gives "".
func Edition(e string) string {
	switch e {
	case v1alpha1.EditionEnterprise:
		return EditionEnterprise
	case v1alpha1.EditionEnterprisePlus:
		return EditionEnterprisePlus
	}
	return ""
}

// FromEdition is the reverse of Edition.
func FromEdition(e string) string {
	switch e {
	case EditionEnterprise:
		return v1alpha1.EditionEnterprise
	case EditionEnterprisePlus:
		return v1alpha1.EditionEnterprisePlus
	}
	return ""
}

// AvailabilityType is the settings.availabilityType of an availability type
// of the API: Zonal is ZONAL, Regional is REGIONAL; anything else gives "".
func AvailabilityType(t string) string {
	switch t {
	case v1alpha1.AvailabilityZonal:
		return AvailabilityZonal
	case v1alpha1.AvailabilityRegional:
		return AvailabilityRegional
	}
	return ""
}

// FromAvailabilityType is the reverse of AvailabilityType.
func FromAvailabilityType(t string) string {
	switch t {
	case AvailabilityZonal:
		return v1alpha1.AvailabilityZonal
	case AvailabilityRegional:
		return v1alpha1.AvailabilityRegional
	}
	return ""
}

// DataDiskType is the settings.dataDiskType of a disk type of the API: SSD
// is PD_SSD, HDD is PD_HDD; anything else gives "".
func DataDiskType(t string) string {
	switch t {
	case v1alpha1.DiskTypeSSD:
		return DiskTypeSSD
	case v1alpha1.DiskTypeHDD:
		return DiskTypeHDD
	}
	return ""
}

// FromDataDiskType is the reverse of DataDiskType. Disk types the API has
// no value for (HYPERDISK_BALANCED) give "".
func FromDataDiskType(t string) string {
	switch t {
	case DiskTypeSSD:
		return v1alpha1.DiskTypeSSD
	case DiskTypeHDD:
		return v1alpha1.DiskTypeHDD
	}
	return ""
}

// weekdays are the API's maintenance days; Cloud SQL numbers them from 1
// (Monday) to 7 (Sunday).
var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// MaintenanceDay is the maintenanceWindow.day of a maintenance day of the
// API: Monday is 1 ... Sunday is 7; Any (and anything else) is 0, which
// Cloud SQL reads as "any day".
func MaintenanceDay(d string) int64 {
	for i, w := range weekdays {
		if d == w {
			return int64(i + 1)
		}
	}
	return MaintenanceAnyDay
}

// FromMaintenanceDay is the reverse of MaintenanceDay: 1..7 are Monday to
// Sunday, anything else is Any.
func FromMaintenanceDay(d int64) string {
	if d < 1 || d > int64(len(weekdays)) {
		return v1alpha1.Any
	}
	return weekdays[d-1]
}

// MaintenanceHour is the maintenanceWindow.hour of an API hour: "hh:00" is
// hh. Any, "" and anything that is not an hour give 0, which goes with day
// 0 (any day) because the CRD allows Any only then.
func MaintenanceHour(h string) int64 {
	return hourOf(h)
}

// FromMaintenanceHour is the API hour ("hh:00") of a maintenanceWindow.hour.
// Hours outside 0..23 give "".
func FromMaintenanceHour(h int64) string {
	if h < 0 || h > 23 {
		return ""
	}
	return hhMM(h)
}

// hourOf parses the hour of "hh:00". It returns 0 for what is not an hour;
// the CRD has already rejected such values.
func hourOf(s string) int64 {
	hh, mm, ok := strings.Cut(s, ":")
	if !ok || mm != "00" || len(hh) != 2 {
		return 0
	}
	h, err := strconv.ParseInt(hh, 10, 64)
	if err != nil || h < 0 || h > 23 {
		return 0
	}
	return h
}

// hhMM formats an hour as "hh:00".
func hhMM(h int64) string {
	s := strconv.FormatInt(h, 10)
	if h < 10 {
		s = "0" + s
	}
	return s + ":00"
}

// isFullHour reports whether s is an hour the CRD accepts ("hh:00",
// 00..23).
func isFullHour(s string) bool {
	return len(s) == 5 && hhMM(hourOf(s)) == s
}

// UserLabels are the settings.userLabels of the API labels: the user's
// labels plus owner=cloudsql-postgres-operator, which marks the instance as
// managed by this provider.
func UserLabels(labels map[string]v1alpha1.LabelValue) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = string(v)
	}
	out[v1alpha1.OwnerLabelKey] = v1alpha1.OwnerLabelValue
	return out
}

// DatabaseFlags are the settings.databaseFlags of the API's flags. Each
// name=value is split at the first '=', so values may contain '='. The
// result is nil when there are no flags.
func DatabaseFlags(flags []string) []*sqladmin.DatabaseFlags {
	if len(flags) == 0 {
		return nil
	}
	out := make([]*sqladmin.DatabaseFlags, 0, len(flags))
	for _, f := range flags {
		name, value, _ := strings.Cut(f, "=")
		out = append(out, &sqladmin.DatabaseFlags{Name: name, Value: value})
	}
	return out
}

// FromDatabaseFlags is the reverse of DatabaseFlags: name=value strings,
// sorted, because Cloud SQL does not keep the order of flags.
func FromDatabaseFlags(flags []*sqladmin.DatabaseFlags) []string {
	if len(flags) == 0 {
		return nil
	}
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		if f != nil {
			out = append(out, f.Name+"="+f.Value)
		}
	}
	sort.Strings(out)
	return out
}

// flagMap indexes flags by name. A name given twice keeps its last value,
// which is the one Cloud SQL would keep.
func flagMap(flags []*sqladmin.DatabaseFlags) map[string]string {
	out := make(map[string]string, len(flags))
	for _, f := range flags {
		if f != nil {
			out[f.Name] = f.Value
		}
	}
	return out
}

// AuthorizedNetworks are the settings.ipConfiguration.authorizedNetworks of
// the API's authorized networks. The result is nil when there are none.
func AuthorizedNetworks(nets []v1alpha1.AuthorizedNetwork) []*sqladmin.AclEntry {
	if len(nets) == 0 {
		return nil
	}
	out := make([]*sqladmin.AclEntry, 0, len(nets))
	for _, n := range nets {
		out = append(out, &sqladmin.AclEntry{Kind: ACLEntryKind, Value: n.CIDR, Name: n.Name})
	}
	return out
}

// FromAuthorizedNetworks is the reverse of AuthorizedNetworks, sorted by
// CIDR because Cloud SQL does not keep their order.
func FromAuthorizedNetworks(acl []*sqladmin.AclEntry) []v1alpha1.AuthorizedNetwork {
	if len(acl) == 0 {
		return nil
	}
	out := make([]v1alpha1.AuthorizedNetwork, 0, len(acl))
	for _, a := range acl {
		if a != nil {
			out = append(out, v1alpha1.AuthorizedNetwork{CIDR: a.Value, Name: a.Name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CIDR < out[j].CIDR })
	return out
}

// normalizeCIDR writes an authorized network so that equal networks
// compare equal: Cloud SQL accepts a bare address, which is the /32.
func normalizeCIDR(v string) string {
	if ip := net.ParseIP(v); ip != nil && ip.To4() != nil {
		return v + "/32"
	}
	return v
}

// aclMap indexes authorized networks by normalised CIDR, giving their
// names.
func aclMap(acl []*sqladmin.AclEntry) map[string]string {
	out := make(map[string]string, len(acl))
	for _, a := range acl {
		if a != nil {
			out[normalizeCIDR(a.Value)] = a.Name
		}
	}
	return out
}

// NormalizeNetwork reduces a VPC network reference to the resource link
// projects/<project>/global/networks/<network>, the form the API takes.
// Cloud SQL may answer with the full URL
// (https://www.googleapis.com/compute/v1/projects/...), which names the same
// network.
func NormalizeNetwork(link string) string {
	if i := strings.Index(link, "projects/"); i > 0 {
		return link[i:]
	}
	return link
}

// UserName is the login of a PostgresqlUser whose object is called
// metaName: the principal's email for an IAM user (without
// .gserviceaccount.com for a service account, as Cloud SQL names such
// logins), else spec.forProvider.name, else metaName.
func UserName(s *v1alpha1.PostgresqlUserSettings, metaName string) string {
	switch s.Type {
	case v1alpha1.UserTypeCloudIAMServiceAccount:
		return strings.TrimSuffix(s.IAMPrincipal, v1alpha1.ServiceAccountEmailSuffix)
	case v1alpha1.UserTypeCloudIAMUser:
		return s.IAMPrincipal
	}
	if s.Name != nil && *s.Name != "" {
		return *s.Name
	}
	return metaName
}

// DatabaseName is the name of the database of a PostgresqlDatabase whose
// object is called metaName: spec.forProvider.name, else metaName.
func DatabaseName(s *v1alpha1.PostgresqlDatabaseSettings, metaName string) string {
	if s.Name != nil && *s.Name != "" {
		return *s.Name
	}
	return metaName
}
