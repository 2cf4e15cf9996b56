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

package emulator

import (
	"fmt"
	"hash/fnv"
	"net"
	"regexp"
	"strings"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// Setting values the emulator fills in when the client leaves them out, as
// the real API does.
const (
	defaultDiskSizeGb       = 10
	maxDiskSizeGb           = 65536
	defaultDiskType         = "PD_SSD"
	defaultAvailability     = "ZONAL"
	defaultPricingPlan      = "PER_USE"
	defaultActivationPolicy = "ALWAYS"
	defaultReplicationType  = "SYNCHRONOUS"
	defaultBackupStartTime  = "12:00"
	defaultLogRetentionDays = 7
	defaultRetainedBackups  = 7
	// Enterprise Plus keeps more: 15 backups and 14 days of logs.
	enterprisePlusRetainedBackups  = 15
	enterprisePlusLogRetentionDays = 14
	defaultSSLMode                 = "ALLOW_UNENCRYPTED_AND_ENCRYPTED"
	defaultConnectorEnforce        = "NOT_REQUIRED"
	defaultZoneSuffix              = "-a"
)

// Cloud SQL editions, as settings.edition spells them.
const (
	EditionEnterprise     = "ENTERPRISE"
	EditionEnterprisePlus = "ENTERPRISE_PLUS"
)

var (
	backupStartRE    = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	privateNetworkRE = regexp.MustCompile(`^(https://www\.googleapis\.com/compute/v1/)?projects/[a-z0-9-]+/global/networks/[a-zA-Z0-9_-]+$`)
)

// normalizeSettings fills in defaults and decides which fields are answered
// when their value is false, 0 or empty, as Cloud SQL does (recorded real
// traffic shows it: see internal/emulator/conformance). replace is true for
// insert and update (PUT), where settings are given whole and an omitted
// ipv4Enabled means the default (public IP on); for patch the settings were
// merged onto the stored ones and nothing is implied. existing is true for
// patch and update. raw is the request's settings object (for patch, the
// merged one), used to tell an omitted field from a false one.
//
// The edition defaults to ENTERPRISE_PLUS for POSTGRES_16 and later and to
// ENTERPRISE before, which is what Cloud SQL does for PostgreSQL; backups
// and transaction logs are then kept by the edition's defaults.
func normalizeSettings(st *sqladmin.Settings, raw map[string]any, replace, existing bool, version, region string) {
	st.Kind = "sql#settings"
	if st.Edition == "" {
		st.Edition = defaultEdition(version)
	}
	if st.DataDiskSizeGb == 0 {
		st.DataDiskSizeGb = defaultDiskSizeGb
	}
	if st.DataDiskType == "" {
		st.DataDiskType = defaultDiskType
	}
	if st.AvailabilityType == "" {
		st.AvailabilityType = defaultAvailability
	}
	if st.PricingPlan == "" {
		st.PricingPlan = defaultPricingPlan
	}
	if st.ActivationPolicy == "" {
		st.ActivationPolicy = defaultActivationPolicy
	}
	if st.ReplicationType == "" {
		st.ReplicationType = defaultReplicationType
	}
	if st.ConnectorEnforcement == "" {
		st.ConnectorEnforcement = defaultConnectorEnforce
	}
	if st.StorageAutoResize == nil {
		on := true
		st.StorageAutoResize = &on
	}
	st.ForceSendFields = []string{"DeletionProtectionEnabled", "StorageAutoResizeLimit"}

	normalizeBackups(st, raw, existing)
	normalizeIPConfiguration(st, raw, replace)

	if st.LocationPreference == nil {
		st.LocationPreference = &sqladmin.LocationPreference{}
	}
	st.LocationPreference.Kind = "sql#locationPreference"
	if st.LocationPreference.Zone == "" {
		st.LocationPreference.Zone = region + defaultZoneSuffix
	}
	// Cloud SQL answers a maintenance window only when one was set, and
	// then with its day and hour even when they are 0 (any day, midnight).
	if mw := st.MaintenanceWindow; mw != nil {
		if mw.Day == 0 && mw.Hour == 0 && mw.UpdateTrack == "" &&
			!hasPath(raw, "maintenanceWindow", "day") && !hasPath(raw, "maintenanceWindow", "hour") {
			st.MaintenanceWindow = nil
		} else {
			mw.Kind = "sql#maintenanceWindow"
			mw.ForceSendFields = []string{"Day", "Hour"}
		}
	}
	if ic := st.InsightsConfig; ic != nil {
		ic.ForceSendFields = []string{"QueryPlansPerMinute"}
	}
	if pp := st.PasswordValidationPolicy; pp != nil {
		pp.ForceSendFields = []string{"EnablePasswordPolicy"}
	}
	// Enterprise Plus has a data cache, on unless asked otherwise; an
	// Enterprise instance has none, and answers none.
	switch {
	case st.Edition != EditionEnterprisePlus:
		st.DataCacheConfig = nil
	case st.DataCacheConfig == nil:
		st.DataCacheConfig = &sqladmin.DataCacheConfig{DataCacheEnabled: true}
	default:
		st.DataCacheConfig.ForceSendFields = []string{"DataCacheEnabled"}
	}
}

// raiseToEditionDefaults prepares settings that move an instance from
// Enterprise to Enterprise Plus: backup and log retention still at
// Enterprise's defaults take Enterprise Plus's instead, as Cloud SQL does
// (recorded real traffic).
func raiseToEditionDefaults(next, cur *sqladmin.Settings) {
	if cur.Edition == EditionEnterprisePlus || next.Edition != EditionEnterprisePlus || next.BackupConfiguration == nil {
		return
	}
	bc := next.BackupConfiguration
	if bc.TransactionLogRetentionDays == defaultLogRetentionDays {
		bc.TransactionLogRetentionDays = 0
	}
	if rs := bc.BackupRetentionSettings; rs != nil && rs.RetentionUnit == "COUNT" && rs.RetainedBackups == defaultRetainedBackups {
		bc.BackupRetentionSettings = nil
	}
}

// normalizeBackups fills in the backup configuration's defaults: those of
// the edition for retention and tier, and the fields Cloud SQL answers when
// false. replicationLogArchivingEnabled appears once an instance has been
// changed, or from its creation when point-in-time recovery was asked about.
func normalizeBackups(st *sqladmin.Settings, raw map[string]any, existing bool) {
	if st.BackupConfiguration == nil {
		st.BackupConfiguration = &sqladmin.BackupConfiguration{}
	}
	bc := st.BackupConfiguration
	bc.Kind = "sql#backupConfiguration"
	if bc.StartTime == "" {
		bc.StartTime = defaultBackupStartTime
	}
	logDays, backups := int64(defaultLogRetentionDays), int64(defaultRetainedBackups)
	if st.Edition == EditionEnterprisePlus {
		logDays, backups = enterprisePlusLogRetentionDays, enterprisePlusRetainedBackups
	}
	if bc.TransactionLogRetentionDays == 0 {
		bc.TransactionLogRetentionDays = logDays
	}
	if bc.BackupRetentionSettings == nil {
		bc.BackupRetentionSettings = &sqladmin.BackupRetentionSettings{RetentionUnit: "COUNT", RetainedBackups: backups}
	}
	if st.Edition == EditionEnterprisePlus && bc.BackupTier == "" {
		bc.BackupTier = "STANDARD"
	}
	if bc.TransactionalLogStorageState == "" {
		bc.TransactionalLogStorageState = "TRANSACTIONAL_LOG_STORAGE_STATE_UNSPECIFIED"
	}
	bc.ForceSendFields = []string{"Enabled"}
	if bc.PointInTimeRecoveryEnabled || hasPath(raw, "backupConfiguration", "pointInTimeRecoveryEnabled") {
		bc.ForceSendFields = append(bc.ForceSendFields, "PointInTimeRecoveryEnabled")
	}
	if existing || bc.PointInTimeRecoveryEnabled || hasPath(raw, "backupConfiguration", "pointInTimeRecoveryEnabled") ||
		hasPath(raw, "backupConfiguration", "replicationLogArchivingEnabled") {
		bc.ForceSendFields = append(bc.ForceSendFields, "ReplicationLogArchivingEnabled")
	}
}

// normalizeIPConfiguration fills in the IP configuration's defaults.
func normalizeIPConfiguration(st *sqladmin.Settings, raw map[string]any, replace bool) {
	if st.IpConfiguration == nil {
		st.IpConfiguration = &sqladmin.IpConfiguration{}
	}
	ipc := st.IpConfiguration
	if replace && !hasPath(raw, "ipConfiguration", "ipv4Enabled") {
		ipc.Ipv4Enabled = true
	}
	if ipc.SslMode == "" {
		ipc.SslMode = defaultSSLMode
		if ipc.RequireSsl {
			ipc.SslMode = "ENCRYPTED_ONLY"
		}
	}
	for _, n := range ipc.AuthorizedNetworks {
		if n != nil {
			n.Kind = "sql#aclEntry"
		}
	}
	ipc.ForceSendFields = []string{"Ipv4Enabled", "RequireSsl"}
	if ipc.PrivateNetwork != "" || hasPath(raw, "ipConfiguration", "enablePrivatePathForGoogleCloudServices") {
		ipc.ForceSendFields = append(ipc.ForceSendFields, "EnablePrivatePathForGoogleCloudServices")
	}
}

// hasPath reports whether the JSON object m has a value at the given keys.
func hasPath(m map[string]any, keys ...string) bool {
	var cur any = m
	for _, k := range keys {
		obj, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = obj[k]; !ok {
			return false
		}
	}
	return true
}

// validateSettings checks settings the way the API does on insert, patch and
// update. old is nil on insert; otherwise it is the stored settings, against
// which shrinking the disk and removing the private network are judged.
func validateSettings(st, old *sqladmin.Settings, region string) error {
	if st.Tier == "" {
		return errRequired("settings.tier")
	}
	if st.Edition != EditionEnterprise && st.Edition != EditionEnterprisePlus {
		return errInvalid("Invalid edition %q: use ENTERPRISE or ENTERPRISE_PLUS.", st.Edition)
	}
	if err := validateTier(st.Tier, st.Edition); err != nil {
		return err
	}
	if st.DataDiskSizeGb < defaultDiskSizeGb || st.DataDiskSizeGb > maxDiskSizeGb {
		return errInvalid("Invalid disk size %d GB: settings.dataDiskSizeGb must be between %d and %d.", st.DataDiskSizeGb, defaultDiskSizeGb, maxDiskSizeGb)
	}
	if old != nil && st.DataDiskSizeGb < old.DataDiskSizeGb {
		return errInvalid("The disk size can't be decreased: settings.dataDiskSizeGb is %d GB, requested %d GB.", old.DataDiskSizeGb, st.DataDiskSizeGb)
	}
	if err := oneOf("settings.dataDiskType", st.DataDiskType, "PD_SSD", "PD_HDD", "HYPERDISK_BALANCED"); err != nil {
		return err
	}
	if err := oneOf("settings.availabilityType", st.AvailabilityType, "ZONAL", "REGIONAL"); err != nil {
		return err
	}
	if err := oneOf("settings.activationPolicy", st.ActivationPolicy, "ALWAYS", "NEVER"); err != nil {
		return err
	}
	if err := oneOf("settings.pricingPlan", st.PricingPlan, "PER_USE"); err != nil {
		return err
	}
	if !backupStartRE.MatchString(st.BackupConfiguration.StartTime) {
		return errInvalid("Invalid value for settings.backupConfiguration.startTime %q: use HH:MM in UTC.", st.BackupConfiguration.StartTime)
	}
	if z := st.LocationPreference.Zone; len(z) < len(region)+2 || z[:len(region)+1] != region+"-" {
		return errInvalid("Invalid zone %q: it is not in region %q.", z, region)
	}
	if err := validateIPConfiguration(st.IpConfiguration, old); err != nil {
		return err
	}
	if err := validateLabels(st.UserLabels); err != nil {
		return err
	}
	if err := validateMaintenance(st); err != nil {
		return err
	}
	return validateFlags(st.DatabaseFlags)
}

// maxLabels is how many labels a Google Cloud resource may carry.
const maxLabels = 64

var (
	labelKeyRE   = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	labelValueRE = regexp.MustCompile(`^[a-z0-9_-]{0,63}$`)
)

// validateLabels applies Google Cloud's rules for labels: at most 64; keys
// start with a lowercase letter; keys and values hold at most 63 lowercase
// letters, digits, '_' or '-'.
func validateLabels(labels map[string]string) error {
	if len(labels) > maxLabels {
		return errInvalid("Invalid settings.userLabels: %d labels, at most %d are allowed.", len(labels), maxLabels)
	}
	for k, v := range labels {
		if !labelKeyRE.MatchString(k) {
			return errInvalid("Invalid settings.userLabels key %q: start with a lowercase letter and use at most 63 lowercase letters, digits, '_' or '-'.", k)
		}
		if !labelValueRE.MatchString(v) {
			return errInvalid("Invalid settings.userLabels value %q for key %q: use at most 63 lowercase letters, digits, '_' or '-'.", v, k)
		}
	}
	return nil
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return errInvalid("Invalid value %q for %s: use one of %v.", v, field, allowed)
}

func validateIPConfiguration(ipc *sqladmin.IpConfiguration, old *sqladmin.Settings) error {
	if ipc.PrivateNetwork != "" && !privateNetworkRE.MatchString(ipc.PrivateNetwork) {
		return errInvalid("Invalid private network %q: use projects/PROJECT/global/networks/NETWORK.", ipc.PrivateNetwork)
	}
	if old != nil && old.IpConfiguration != nil && old.IpConfiguration.PrivateNetwork != "" && ipc.PrivateNetwork == "" {
		return errInvalid("Private IP can't be disabled once enabled: settings.ipConfiguration.privateNetwork %q can't be removed.", old.IpConfiguration.PrivateNetwork)
	}
	psc := ipc.PscConfig != nil && ipc.PscConfig.PscEnabled
	if !ipc.Ipv4Enabled && ipc.PrivateNetwork == "" && !psc {
		return errInvalid("At least one of public IP (settings.ipConfiguration.ipv4Enabled), private IP (settings.ipConfiguration.privateNetwork) or Private Service Connect must be enabled.")
	}
	for _, n := range ipc.AuthorizedNetworks {
		if n == nil {
			return errInvalid("Invalid authorized network: empty entry.")
		}
		if _, _, err := net.ParseCIDR(n.Value); err != nil && net.ParseIP(n.Value) == nil {
			return errInvalid("Invalid authorized network %q: use an IPv4 address or CIDR range.", n.Value)
		}
	}
	if err := oneOf("settings.ipConfiguration.sslMode", ipc.SslMode,
		"ALLOW_UNENCRYPTED_AND_ENCRYPTED", "ENCRYPTED_ONLY", "TRUSTED_CLIENT_CERTIFICATE_REQUIRED"); err != nil {
		return err
	}
	return nil
}

// refreshIPAddresses derives db.IpAddresses (db is inst.db or its replacement)
// from the IP configuration. An instance that isn't up yet (or failed to come
// up) has none, as on the real API. Without a data plane the addresses are fake
// but stable for a project and name; with one (WithPostgres) they are the
// loopback addresses where the instance's server-side proxy listens. Callers
// hold s.mu.
func (s *Server) refreshIPAddresses(inst *instanceState, db *sqladmin.DatabaseInstance) {
	db.IpAddresses = nil
	if db.State == StatePendingCreate || db.State == StateFailed || db.Settings == nil || db.Settings.IpConfiguration == nil {
		return
	}
	ipc := db.Settings.IpConfiguration
	var kinds []string
	if ipc.Ipv4Enabled {
		kinds = append(kinds, ipTypePrimary)
	}
	if ipc.PrivateNetwork != "" {
		kinds = append(kinds, ipTypePrivate)
	}
	addr := func(kind string, first byte) string { return fakeIP(first, db.Project, db.Name, strings.ToLower(kind)) }
	if s.data != nil {
		real := s.dataPlaneUp(inst, db.Project, kinds)
		addr = func(kind string, _ byte) string {
			if kind == ipTypeOutgoing {
				kind = ipTypePrimary
			}
			return real[kind]
		}
	}
	add := func(kind string, first byte) {
		if a := addr(kind, first); a != "" {
			db.IpAddresses = append(db.IpAddresses, &sqladmin.IpMapping{Type: kind, IpAddress: a})
		}
	}
	if ipc.Ipv4Enabled {
		add(ipTypePrimary, 34)
		// The outgoing address is the public one connections leave from;
		// Cloud SQL shows it for PostgreSQL instances with a public IP.
		add(ipTypeOutgoing, 35)
	}
	if ipc.PrivateNetwork != "" {
		add(ipTypePrivate, 10)
	}
}

// The types of ipAddresses entries.
const (
	ipTypePrimary  = "PRIMARY"
	ipTypeOutgoing = "OUTGOING"
	ipTypePrivate  = "PRIVATE"
)

func fakeIP(first byte, project, name, kind string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(project + "/" + name + "/" + kind))
	v := h.Sum32()
	return fmt.Sprintf("%d.%d.%d.%d", first, byte(v>>16), byte(v>>8), 2+byte(v)%250)
}

// serviceAccount is the per-project service account Cloud SQL assigns.
func serviceAccount(project string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(project))
	return fmt.Sprintf("p%d-%06x@gcp-sa-cloud-sql.iam.gserviceaccount.com", projectNumber(project), h.Sum32()&0xffffff)
}
