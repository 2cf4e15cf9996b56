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

package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations that make up the contract with users. Their values are part
// of the API.
const (
	// AnnotationAllowDeletion must be "true" on a PostgresqlInstance before
	// the admission webhook lets it (and so its Cloud SQL instance) be
	// deleted.
	AnnotationAllowDeletion = Group + "/allow-deletion"

	// AnnotationInstanceName on a pod names the PostgresqlInstance (its
	// metadata.name, not spec.forProvider.name) whose proxy and credentials
	// the injector adds to the pod.
	AnnotationInstanceName = Group + "/postgresqlinstance-name"

	// AnnotationProxyInjected is set to "true" on pods the injector has
	// changed.
	AnnotationProxyInjected = Group + "/proxy-injected"

	// AnnotationInjectedInstance on an injected pod names the PostgresqlInstance
	// that AnnotationInstanceName resolved to, as `kubectl get` takes it in the
	// pod's namespace: postgresqlinstances.cloudsql.m.travelaudience.com/<name>
	// (the pod's own namespace) or
	// postgresqlinstances.cloudsql.travelaudience.com/<name> (cluster-scoped).
	AnnotationInjectedInstance = Group + "/injected-postgresqlinstance"

	// AnnotationProxyCredentialsSecret on a pod names a Secret of the pod's
	// namespace whose key credentials.json is the Google credentials file
	// (a service-account key, or a workload identity federation
	// configuration) that the injected Cloud SQL Auth Proxy authenticates
	// with, instead of the configuration's spec.proxyCredentials or the pod's
	// Workload Identity. With a PostgresqlUser of an IAM type it is also the
	// identity the proxy logs in as.
	AnnotationProxyCredentialsSecret = Group + "/proxy-credentials-secret"

	// AnnotationProxyRollout set to "true" on a PostgresqlInstance (of either
	// kind), or as a label on a namespace, lets the provider restart the
	// Deployments, StatefulSets and DaemonSets whose injected pods run a
	// proxy that no longer matches what the injector would give them (a new
	// proxy image, connection name, endpoint or proxy key), as
	// `kubectl rollout restart` does.
	AnnotationProxyRollout = Group + "/proxy-rollout"
)

// LabelInstance is set, with the metadata.name of a PostgresqlInstance as
// its value, on every secret the provider copies into other namespaces for
// that instance, so that they can be found and removed with it.
const LabelInstance = Group + "/postgresqlinstance"

// AnnotationPasswordUnconfirmed marks a connection secret whose password was
// generated but not yet confirmed to be set on the Cloud SQL instance; the
// provider sets it again until it is.
const AnnotationPasswordUnconfirmed = Group + "/password-unconfirmed"

// AnnotationPasswordSHA256 holds, on a connection secret, a SHA-256 fingerprint
// of the password the provider last set on the Cloud SQL instance (with the
// PostgresqlInstance's metadata.uid): a password in the secret that does not
// match it was edited there, and the provider sets it on the instance.
const AnnotationPasswordSHA256 = Group + "/password-sha256"

// AnnotationPasswordOperation holds, on a connection secret whose password is
// unconfirmed, the Cloud SQL operation of the users.update that sets it: the
// password is confirmed once that operation is done without an error, and
// sent again when it failed.
const AnnotationPasswordOperation = Group + "/password-operation"

// AnnotationPasswordSetAt holds, on a connection secret, when the provider
// last set the password it holds (RFC 3339): spec.forProvider.passwordRotation
// counts its period from then.
const AnnotationPasswordSetAt = Group + "/password-set-at"

// OwnerLabelKey and OwnerLabelValue form the label that the provider adds
// to every Cloud SQL instance it manages, so that they can be told apart
// in the console.
const (
	OwnerLabelKey   = "owner"
	OwnerLabelValue = "cloudsql-postgres-operator"
)

// OwnerUIDLabelKey is the Cloud SQL label that holds the metadata.uid of the
// PostgresqlInstance that created (or imported) the instance: the provider never
// changes, deletes or resets the password of an instance that carries another.
const OwnerUIDLabelKey = "owner-uid"

// Values of the enumerations below, for use in code.
const (
	AvailabilityZonal    = "Zonal"
	AvailabilityRegional = "Regional"

	EditionEnterprise     = "Enterprise"
	EditionEnterprisePlus = "EnterprisePlus"

	DiskTypeSSD = "SSD"
	DiskTypeHDD = "HDD"

	// Any means "no preference" for a zone, a maintenance day or a maintenance
	// hour.
	Any = "Any"

	// DefaultMaintenanceHour is the maintenance hour used when a day is chosen
	// without an hour.
	DefaultMaintenanceHour = "04:00"
)

// PostgresqlInstanceParameters are the configurable fields of a Cloud SQL
// for PostgreSQL instance. Every field but networking has a default, so
// one enabled kind of networking describes a working instance.
// +kubebuilder:validation:XValidation:rule="self.edition != 'EnterprisePlus' || self.resources.instanceType.startsWith('db-perf-optimized-N-')",fieldPath=".resources.instanceType",message="edition EnterprisePlus needs a db-perf-optimized-N-<vCPUs> instance type; db-custom-* and shared-core types need edition Enterprise"
// +kubebuilder:validation:XValidation:rule="self.edition == 'EnterprisePlus' || !self.resources.instanceType.startsWith('db-perf-optimized-N-')",fieldPath=".resources.instanceType",message="db-perf-optimized-N-* instance types need edition EnterprisePlus"
// +kubebuilder:validation:XValidation:rule="self.edition != 'EnterprisePlus' || !(self.version in ['9.6', '10', '11'])",fieldPath=".edition",message="edition EnterprisePlus needs PostgreSQL 12 or later; use edition Enterprise for versions 9.6 to 11"
// +kubebuilder:validation:XValidation:rule="!has(self.backups) || !has(self.backups.pointInTimeRecovery) || !has(self.backups.pointInTimeRecovery.logRetentionDays) || self.backups.pointInTimeRecovery.logRetentionDays <= (has(self.edition) && self.edition == 'EnterprisePlus' ? 35 : 7)",fieldPath=".backups.pointInTimeRecovery.logRetentionDays",message="backups.pointInTimeRecovery.logRetentionDays is too long for edition Enterprise, which keeps at most 7 days of logs: choose 7 days or fewer, or edition EnterprisePlus for up to 35"
type PostgresqlInstanceParameters struct {
	// Name of the Cloud SQL instance. When omitted, the
	// crossplane.io/external-name annotation is used, which defaults to
	// metadata.name. Lowercase letters, digits and hyphens, starting with a
	// letter and not ending with a hyphen; together with the project ID it may
	// not exceed 97 characters. Immutable. Names of deleted instances stay
	// reserved by Cloud SQL for up to a week.
	// +optional
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=91
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z][a-z0-9-]+[a-z0-9]$')",message="must start with a lowercase letter, contain only lowercase letters, digits and hyphens, and end with a letter or digit"
	Name *string `json:"name,omitempty"`

	// Version is the PostgreSQL major version. It may go up, never down:
	// raising it upgrades the instance in place, guarded (Cloud SQL's
	// pre-check, then an on-demand backup the provider waits for, then a
	// patch of the version alone; status.atProvider.majorUpgrade follows
	// it). To go back, restore the backup taken before the upgrade into a
	// new PostgresqlInstance (spec.forProvider.source).
	// +optional
	// +kubebuilder:default="18"
	// +kubebuilder:validation:Enum="9.6";"10";"11";"12";"13";"14";"15";"16";"17";"18"
	Version string `json:"version,omitempty"`

	// Edition is the Cloud SQL edition: Enterprise, or EnterprisePlus (which
	// needs a db-perf-optimized-N-* instance type and PostgreSQL 12 or later).
	// +optional
	// +kubebuilder:default=Enterprise
	// +kubebuilder:validation:Enum=Enterprise;EnterprisePlus
	Edition string `json:"edition,omitempty"`

	// Source makes the new instance a recovery, instead of an empty
	// instance: a clone of another instance, optionally as it was at a
	// point in time, or a restore of a backup into the new instance. Never
	// a recovery over a live instance: the source gets no write. The new
	// instance gets its own owner label and a new postgres password,
	// published only once it is set; the source's other users and its
	// databases come across in PostgreSQL, and objects adopt them as
	// imports do. Read only when the instance is created; immutable.
	// +optional
	Source *Source `json:"source,omitempty"`

	// Availability of the instance.
	// +optional
	// +kubebuilder:default={"type":"Zonal"}
	Availability Availability `json:"availability,omitempty"`

	// PasswordRotation has the provider give the postgres user a new
	// generated password at a period. When omitted, the password changes
	// only when it is lost or edited in the connection secret.
	// +optional
	PasswordRotation *PasswordRotation `json:"passwordRotation,omitempty"`

	// Backups configures automated backups, and the backups that outlive
	// the instance when it is deleted.
	// +optional
	// +kubebuilder:default={"daily":{"enabled":true,"startTime":"00:00"}}
	Backups Backups `json:"backups,omitempty"`

	// DeletionProtection is Cloud SQL's own guard against deleting the
	// instance (settings.deletionProtectionEnabled): while it is on, Cloud
	// SQL refuses every delete, from the console, gcloud or a script alike.
	// When omitted, the provider turns it on for an instance it creates, and
	// an imported instance keeps what Cloud SQL has (the field is then
	// filled from it). The provider turns it off itself only to delete a
	// PostgresqlInstance that carries the annotation
	// cloudsql.travelaudience.com/allow-deletion: "true", with one patch
	// right before the delete.
	// +optional
	DeletionProtection *DeletionProtection `json:"deletionProtection,omitempty"`

	// Flags are PostgreSQL database flags, each as name=value, for example
	// autovacuum=on. Each flag name may appear once.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^[a-z][a-z0-9_.]*=.+$')",message="each flag must be written as name=value, for example autovacuum=on; names are lowercase letters, digits, '_' and '.'"
	// +kubebuilder:validation:XValidation:rule="self.all(f, self.filter(g, g.split('=')[0] == f.split('=')[0]).size() == 1)",message="each flag name may appear only once"
	Flags []string `json:"flags,omitempty"`

	// Labels are user-defined labels set on the Cloud SQL instance (not the
	// Kubernetes object). Keys start with a lowercase letter; keys and values
	// hold at most 63 lowercase letters, digits, '_' or '-'. The provider adds
	// owner=cloudsql-postgres-operator and owner-uid itself, and Cloud SQL
	// allows 64 labels: at most 62 others.
	// +optional
	// +kubebuilder:validation:MaxProperties=63
	// +kubebuilder:validation:XValidation:rule="size(self) + ('owner' in self ? 0 : 1) <= 63",message="at most 62 labels besides owner: Cloud SQL allows 64 labels on an instance, and the provider sets owner and owner-uid itself; remove some"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z][a-z0-9_-]{0,62}$'))",message="label keys must start with a lowercase letter and hold at most 63 lowercase letters, digits, '_' or '-'"
	// +kubebuilder:validation:XValidation:rule="!('owner' in self) || self['owner'] == 'cloudsql-postgres-operator'",message="the owner label is reserved: the provider sets owner=cloudsql-postgres-operator itself; remove it or use another key"
	// +kubebuilder:validation:XValidation:rule="!('owner-uid' in self)",message="the owner-uid label is reserved: the provider records there which PostgresqlInstance manages the Cloud SQL instance; use another key"
	Labels map[string]LabelValue `json:"labels,omitempty"`

	// Location of the instance.
	// +optional
	// +kubebuilder:default={"region":"europe-west1","zone":"Any"}
	Location Location `json:"location,omitempty"`

	// Maintenance sets the preferred window for weekly maintenance.
	// +optional
	// +kubebuilder:default={"day":"Any"}
	Maintenance Maintenance `json:"maintenance,omitempty"`

	// Networking says how the instance can be reached. At least one of
	// publicIp and privateIp must be enabled, so there is no default.
	Networking Networking `json:"networking"`

	// Resources are the machine type and storage of the instance.
	// +optional
	// +kubebuilder:default={"disk":{"sizeMinimumGb":10,"sizeMaximumGb":0,"type":"SSD"},"instanceType":"db-custom-1-3840"}
	Resources Resources `json:"resources,omitempty"`
}

// Source is what a new instance is recovered from. Set exactly one of
// instance (or, for a namespaced PostgresqlInstance, clusterInstance),
// backup and retainedBackup.
// +kubebuilder:validation:XValidation:rule="[has(self.instance), has(self.clusterInstance), has(self.backup), has(self.retainedBackup)].filter(x, x).size() == 1",message="set exactly one of instance, clusterInstance, backup and retainedBackup: the new instance is recovered from one source"
// +kubebuilder:validation:XValidation:rule="!has(self.pointInTime) || has(self.instance) || has(self.clusterInstance)",fieldPath=".pointInTime",message="needs instance or clusterInstance: a point in time is of an instance's recoverable window"
// +kubebuilder:validation:XValidation:rule="!has(self.backupRunId) || has(self.instance) || has(self.clusterInstance)",fieldPath=".backupRunId",message="needs instance or clusterInstance: the ID names a backup run of that instance"
// +kubebuilder:validation:XValidation:rule="!(has(self.pointInTime) && has(self.backupRunId))",fieldPath=".backupRunId",message="cannot be used together with pointInTime: restore one backup run, or clone the instance at one point in time"
type Source struct {
	// Instance is the metadata.name of the PostgresqlInstance to recover
	// from: a cluster-scoped one for a cluster-scoped PostgresqlInstance,
	// one of the same namespace for a namespaced one. Alone, the new
	// instance is a clone of it as it is now; with pointInTime, as it was
	// then; with backupRunId, a restore of that backup run.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Instance string `json:"instance,omitempty"`

	// ClusterInstance, for a namespaced PostgresqlInstance only, is the
	// metadata.name of a cluster-scoped PostgresqlInstance to recover from,
	// as instance is; its spec.injection must admit this namespace (a copy
	// holds all of its data and a postgres password: spec.tenancy, which
	// admits users and databases only, does not suffice).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClusterInstance string `json:"clusterInstance,omitempty"`

	// PointInTime clones the instance as it was at this time (RFC 3339,
	// for example 2026-11-27T10:15:00Z): it holds every transaction
	// committed by then and none after. The time must lie within the
	// instance's recoverable window (status.atProvider.backups of the
	// source: earliestRecoveryTime to latestRecoveryTime), which needs
	// point-in-time recovery on (backups.pointInTimeRecovery).
	// +optional
	PointInTime *metav1.Time `json:"pointInTime,omitempty"`

	// BackupRunID restores the backup run of this ID (automated or on
	// demand, as gcloud sql backups list --instance shows it) of the
	// instance.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,19}$`
	BackupRunID string `json:"backupRunId,omitempty"`

	// Backup is the metadata.name of a PostgresqlBackup to restore: a
	// cluster-scoped one for a cluster-scoped PostgresqlInstance, one of
	// the same namespace for a namespaced one. It must be Ready. Its
	// instance may have been deleted since, when Cloud SQL kept its backups
	// (backups.retainOnDelete).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Backup string `json:"backup,omitempty"`

	// RetainedBackup, for a cluster-scoped PostgresqlInstance only, is the
	// name of a backup that Cloud SQL kept after its instance was deleted
	// (backups.retainOnDelete, or the final backup), as gcloud sql backups
	// list shows it: projects/PROJECT/backups/ID. It must be of the
	// instance's own project.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^projects/[a-z][-a-z0-9.:]*[a-z0-9]/backups/[A-Za-z0-9_-]+$`
	RetainedBackup string `json:"retainedBackup,omitempty"`
}

// LabelValue is the value of a Cloud SQL label.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[a-z0-9_-]*$`
type LabelValue string

// Availability configures high availability.
type Availability struct {
	// Type is Zonal (a single zone) or Regional (high availability: a standby
	// in another zone of the region takes over on failure).
	// +optional
	// +kubebuilder:default=Zonal
	// +kubebuilder:validation:Enum=Zonal;Regional
	Type string `json:"type,omitempty"`
}

// Backups configures automated backups, and the backups that outlive the
// instance when it is deleted.
// +kubebuilder:validation:XValidation:rule="!has(self.pointInTimeRecovery) || !self.pointInTimeRecovery.enabled || !has(self.daily) || !has(self.daily.enabled) || self.daily.enabled",fieldPath=".pointInTimeRecovery.enabled",message="backups.pointInTimeRecovery needs daily backups: set backups.daily.enabled to true, or turn point-in-time recovery off"
type Backups struct {
	// Daily configures the daily automated backup.
	// +optional
	// +kubebuilder:default={"enabled":true,"startTime":"00:00"}
	Daily DailyBackups `json:"daily,omitempty"`

	// RetainOnDelete keeps the instance's automated and on-demand backups
	// when the instance is deleted (settings.retainBackupsOnDelete), until
	// their retention ends; they are listed in the project's backups
	// (gcloud sql backups list) and are billed as backup storage. When
	// omitted, the provider turns it on for an instance it creates, and an
	// imported instance keeps what Cloud SQL has.
	// +optional
	RetainOnDelete *bool `json:"retainOnDelete,omitempty"`

	// FinalBackup has Cloud SQL take one last backup when the instance is
	// deleted (settings.finalBackupConfig, and enableFinalBackup and
	// finalBackupTtlDays on the delete), kept for retentionDays after the
	// instance is gone. When omitted, the provider turns it on (30 days) for
	// an instance it creates, and an imported instance keeps what Cloud SQL
	// has.
	// +optional
	FinalBackup *FinalBackup `json:"finalBackup,omitempty"`

	// PointInTimeRecovery keeps the write-ahead log, so that the instance
	// can be recovered to any moment of the last logRetentionDays
	// (backupConfiguration.pointInTimeRecoveryEnabled and
	// transactionLogRetentionDays). It needs daily backups. When omitted,
	// Cloud SQL's default applies (off for Enterprise, on for
	// EnterprisePlus when created through the API), which follows the
	// edition when it changes.
	// +optional
	PointInTimeRecovery *PointInTimeRecovery `json:"pointInTimeRecovery,omitempty"`

	// RetainedBackups is how many automated backups Cloud SQL keeps
	// (backupConfiguration.backupRetentionSettings.retainedBackups), 1 to
	// 365; each is billed as backup storage. When omitted, Cloud SQL's
	// default applies (7 for Enterprise, 15 for EnterprisePlus), which
	// follows the edition when it changes.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 1 && self <= 365",message="backups.retainedBackups must be between 1 and 365, as Cloud SQL allows: choose a count in that range"
	RetainedBackups *int32 `json:"retainedBackups,omitempty"`

	// Location is where Cloud SQL stores the backups
	// (backupConfiguration.location): a multi-region such as eu or us, or
	// a region such as europe-west1. When omitted, Cloud SQL stores them in
	// the multi-region nearest the instance.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]+(-[a-z]+[0-9]+)?$')",message="backups.location must be a multi-region such as eu or us, or a region such as europe-west1"
	Location string `json:"location,omitempty"`
}

// PointInTimeRecovery configures point-in-time recovery.
type PointInTimeRecovery struct {
	// Enabled turns point-in-time recovery on or off.
	Enabled bool `json:"enabled"`

	// LogRetentionDays is how many days of write-ahead log Cloud SQL keeps:
	// 1 to 7 for edition Enterprise, 1 to 35 for EnterprisePlus. When
	// omitted, Cloud SQL's default applies (7 for Enterprise, 14 for
	// EnterprisePlus).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 1 && self <= 35",message="backups.pointInTimeRecovery.logRetentionDays must be between 1 and 35 days (at most 7 for edition Enterprise): choose a retention in that range"
	LogRetentionDays int32 `json:"logRetentionDays,omitempty"`
}

// DeletionProtection is Cloud SQL's guard against deleting the instance.
type DeletionProtection struct {
	// Enabled turns Cloud SQL's deletion protection on or off.
	Enabled bool `json:"enabled"`
}

// FinalBackup is the backup Cloud SQL takes when the instance is deleted.
type FinalBackup struct {
	// Enabled has Cloud SQL take a final backup when the instance is
	// deleted.
	Enabled bool `json:"enabled"`

	// RetentionDays is how long the final backup is kept after the instance
	// is deleted, in days: 1 to 365. It is billed as backup storage for
	// that long.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:XValidation:rule="self >= 1 && self <= 365",message="backups.finalBackup.retentionDays must be between 1 and 365 days, as Cloud SQL allows: choose a retention in that range"
	RetentionDays int32 `json:"retentionDays,omitempty"`
}

// DefaultFinalBackupRetentionDays is how long a final backup is kept when
// no retention is given, as Cloud SQL does.
const DefaultFinalBackupRetentionDays = 30

// DailyBackups configures the daily automated backup.
type DailyBackups struct {
	// Enabled turns daily backups on or off.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`

	// StartTime is the hour (UTC, 24-hour hh:00) at which the daily backup
	// starts.
	// +optional
	// +kubebuilder:default="00:00"
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:XValidation:rule="self.matches('^([01][0-9]|2[0-3]):00$')",message="must be a full hour in 24-hour UTC time, hh:00, for example 22:00"
	StartTime string `json:"startTime,omitempty"`
}

// Location is where the instance runs.
// +kubebuilder:validation:XValidation:rule="self.zone == 'Any' || self.zone.startsWith(self.region + '-')",fieldPath=".zone",messageExpression="'must be Any or a zone of region ' + self.region + ', for example ' + self.region + '-b'"
type Location struct {
	// Region of the instance, for example europe-west1. Immutable.
	// +optional
	// +kubebuilder:default=europe-west1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]+-[a-z]+[0-9]+$')",message="must be a Google Cloud region such as europe-west1"
	Region string `json:"region,omitempty"`

	// Zone of the (primary) instance, for example europe-west1-b, or Any to
	// let Cloud SQL choose. For Regional instances it places only the primary.
	// +optional
	// +kubebuilder:default=Any
	// +kubebuilder:validation:MaxLength=34
	// +kubebuilder:validation:XValidation:rule="self == 'Any' || self.matches('^[a-z]+-[a-z]+[0-9]+-[a-z]$')",message="must be Any or a Google Cloud zone such as europe-west1-b"
	Zone string `json:"zone,omitempty"`
}

// Maintenance is the preferred weekly maintenance window.
// +kubebuilder:validation:XValidation:rule="self.day != 'Any' || !has(self.hour) || self.hour == 'Any'",fieldPath=".hour",message="must be Any while maintenance.day is Any: choose a day to choose an hour"
// +kubebuilder:validation:XValidation:rule="self.day == 'Any' || !has(self.hour) || self.hour != 'Any'",fieldPath=".hour",message="must be a full hour (hh:00, UTC) when maintenance.day is a weekday; omit it for 04:00"
type Maintenance struct {
	// Day of the week for maintenance, or Any.
	// +optional
	// +kubebuilder:default=Any
	// +kubebuilder:validation:Enum=Any;Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
	Day string `json:"day,omitempty"`

	// Hour (UTC, 24-hour hh:00) at which maintenance may start. Any if and
	// only if day is Any; when a day is given without an hour, 04:00 is used.
	// +optional
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:XValidation:rule="self == 'Any' || self.matches('^([01][0-9]|2[0-3]):00$')",message="must be Any or a full hour in 24-hour UTC time, hh:00, for example 16:00"
	Hour string `json:"hour,omitempty"`

	// UpdateTrack is when, after Cloud SQL announces a maintenance, it
	// applies it to this instance (settings.maintenanceWindow.updateTrack):
	// canary (7 to 14 days after the notice; "Week 1" in the console,
	// preview in gcloud), stable (15 to 21 days; "Week 2", production) or
	// week5 (35 to 42 days). Put test instances on canary and production
	// ones on stable or week5 to see an update before it reaches what
	// matters. When omitted, Cloud SQL's choice applies and an imported
	// instance keeps its own.
	// +optional
	// +kubebuilder:validation:Enum=canary;stable;week5
	UpdateTrack string `json:"updateTrack,omitempty"`

	// DenyPeriods are the dates on which Cloud SQL must not start a
	// maintenance (settings.denyMaintenancePeriods): at most one period,
	// of at most 90 days, as Cloud SQL allows. When omitted, the provider
	// leaves Cloud SQL's as they are (an imported instance's are filled
	// in); an empty list ([]) removes them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1
	DenyPeriods *[]DenyPeriod `json:"denyPeriods,omitempty"`
}

// DenyPeriod is a period in which Cloud SQL starts no maintenance: from
// time on startDate to time on endDate (UTC). Both dates carry a year
// (yyyy-mm-dd, one period) or neither does (mm-dd, every year).
// +kubebuilder:validation:XValidation:rule="self.startDate.matches('^[0-9]{4}-') == self.endDate.matches('^[0-9]{4}-')",fieldPath=".endDate",message="maintenance.denyPeriods: startDate and endDate must both carry a year (yyyy-mm-dd, one period) or both omit it (mm-dd, every year)"
// +kubebuilder:validation:XValidation:rule="!self.startDate.matches('^([0-9]{4}-)?((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))$') || !self.endDate.matches('^([0-9]{4}-)?((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))$') || !self.startDate.matches('^[0-9]{4}-') || (timestamp(self.endDate + 'T00:00:00Z') >= timestamp(self.startDate + 'T00:00:00Z') && timestamp(self.endDate + 'T00:00:00Z') - timestamp(self.startDate + 'T00:00:00Z') <= duration('2160h'))",fieldPath=".endDate",message="maintenance.denyPeriods: endDate must be on or after startDate and at most 90 days later, as Cloud SQL allows: shorten the period"
// +kubebuilder:validation:XValidation:rule="!self.startDate.matches('^([0-9]{4}-)?((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))$') || !self.endDate.matches('^([0-9]{4}-)?((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))$') || self.startDate.matches('^[0-9]{4}-') || (timestamp('2000-' + self.endDate + 'T00:00:00Z') - timestamp('2000-' + self.startDate + 'T00:00:00Z') + (self.endDate < self.startDate ? duration('8784h') : duration('0s'))) <= duration('2160h')",fieldPath=".endDate",message="maintenance.denyPeriods: a yearly period (mm-dd) may last at most 90 days, as Cloud SQL allows: shorten the period"
type DenyPeriod struct {
	// StartDate is the first day of the period: yyyy-mm-dd, or mm-dd for
	// a period that recurs every year.
	// +kubebuilder:validation:MaxLength=10
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]{4}-)?((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))$')",message="maintenance.denyPeriods.startDate must be a date that exists, yyyy-mm-dd, or mm-dd for every year, for example 2026-12-01 or 12-01"
	StartDate string `json:"startDate"`

	// EndDate is the last day of the period: yyyy-mm-dd, or mm-dd for a
	// period that recurs every year (it may be earlier in the year than
	// startDate: 12-01 to 01-31 spans the turn of the year).
	// +kubebuilder:validation:MaxLength=10
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]{4}-)?((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))$')",message="maintenance.denyPeriods.endDate must be a date that exists, yyyy-mm-dd, or mm-dd for every year, for example 2027-01-31 or 01-31"
	EndDate string `json:"endDate"`

	// Time (UTC, hh:mm:ss) at which the period starts on startDate and
	// ends on endDate; 00:00:00 when omitted.
	// +optional
	// +kubebuilder:default="00:00:00"
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$')",message="maintenance.denyPeriods.time must be a UTC time hh:mm:ss, for example 00:00:00"
	Time string `json:"time,omitempty"`
}

// EffectiveHour is the maintenance hour that applies: the hour given, or
// the default for the day.
func (m Maintenance) EffectiveHour() string {
	switch {
	case m.Hour != "":
		return m.Hour
	case m.Day == "" || m.Day == Any:
		return Any
	default:
		return DefaultMaintenanceHour
	}
}

// Networking says how the instance can be reached.
// +kubebuilder:validation:XValidation:rule="self.publicIp.enabled || self.privateIp.enabled",message="enable at least one of networking.publicIp and networking.privateIp: an instance without either cannot be reached"
type Networking struct {
	// PrivateIP configures access from a VPC network.
	// +optional
	// +kubebuilder:default={"enabled":false}
	PrivateIP PrivateIP `json:"privateIp,omitempty"`

	// PublicIP configures access through a public IPv4 address.
	// +optional
	// +kubebuilder:default={"enabled":false}
	PublicIP PublicIP `json:"publicIp,omitempty"`
}

// PrivateIP configures access to the instance from a VPC network.
// +kubebuilder:validation:XValidation:rule="!oldSelf.enabled || self.enabled",fieldPath=".enabled",message="cannot go back to false: Cloud SQL cannot remove a private IP once it is enabled"
// +kubebuilder:validation:XValidation:rule="!self.enabled || (has(self.network) && size(self.network) > 0)",fieldPath=".network",message="is required when privateIp.enabled is true: give the VPC as projects/<project>/global/networks/<network>"
// +kubebuilder:validation:XValidation:rule="self.enabled || !has(self.network) || size(self.network) == 0",fieldPath=".network",message="may only be set when privateIp.enabled is true"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.network) || size(oldSelf.network) == 0 || (has(self.network) && size(self.network) > 0)",fieldPath=".network",messageExpression="'may be changed but not removed (was ' + oldSelf.network + ')'"
type PrivateIP struct {
	// Enabled gives the instance a private IP in the network below. Once true,
	// it cannot be set back to false.
	// +optional
	// +kubebuilder:default=false
	Enabled bool `json:"enabled,omitempty"`

	// Network is the resource link of the VPC network, in the form
	// projects/<project>/global/networks/<network>. Required when enabled; may
	// be added and changed, not removed.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^projects/([a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]/global/networks/[a-z]([-a-z0-9]{0,61}[a-z0-9])?$')",message="must be a VPC network resource link: projects/<project-id>/global/networks/<network-name>"
	Network string `json:"network,omitempty"`
}

// PublicIP configures access to the instance through a public IPv4
// address.
type PublicIP struct {
	// Enabled gives the instance a public IPv4 address. Connections through
	// the Cloud SQL Auth Proxy need no authorized networks.
	// +optional
	// +kubebuilder:default=false
	Enabled bool `json:"enabled,omitempty"`

	// AuthorizedNetworks may connect to the public IP directly (without the
	// proxy).
	// +optional
	// +listType=map
	// +listMapKey=cidr
	// +kubebuilder:validation:MaxItems=256
	AuthorizedNetworks []AuthorizedNetwork `json:"authorizedNetworks,omitempty"`
}

// AuthorizedNetwork is an IPv4 network allowed to reach the public IP.
type AuthorizedNetwork struct {
	// CIDR of the network, for example 120.90.60.0/24 or 30.60.90.120/32.
	// +kubebuilder:validation:MaxLength=18
	// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self).ip().family() == 4",message="must be an IPv4 network in CIDR notation, for example 120.90.60.0/24"
	// +kubebuilder:validation:XValidation:rule="!isCIDR(self) || cidr(self).masked() == cidr(self)",message="has host bits set: write the network address, for example 120.90.60.0/24 rather than 120.90.60.5/24"
	CIDR string `json:"cidr"`

	// Name of the rule, shown in the Cloud SQL console.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name,omitempty"`
}

// Resources are the machine type and storage of the instance.
type Resources struct {
	// Disk configures storage.
	// +optional
	// +kubebuilder:default={"sizeMinimumGb":10,"sizeMaximumGb":0,"type":"SSD"}
	Disk Disk `json:"disk,omitempty"`

	// InstanceType is the machine type: db-f1-micro or db-g1-small (shared
	// core, edition Enterprise only), db-custom-<vCPUs>-<MiB> (edition
	// Enterprise: vCPUs 1 or an even number up to 96; memory a multiple of 256
	// MiB, at least 3840 MiB and between 0.9 and 6.5 GiB per vCPU), or
	// db-perf-optimized-N-<vCPUs> (edition EnterprisePlus).
	// +optional
	// +kubebuilder:default=db-custom-1-3840
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="self.matches('^(db-f1-micro|db-g1-small|db-custom-[0-9]{1,3}-[0-9]{1,7}|db-perf-optimized-N-[0-9]{1,3})$')",message="must be db-f1-micro, db-g1-small, db-custom-<vCPUs>-<MiB> (for example db-custom-2-7680) or db-perf-optimized-N-<vCPUs>"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('db-perf-optimized-N-') || self in ['db-perf-optimized-N-2', 'db-perf-optimized-N-4', 'db-perf-optimized-N-8', 'db-perf-optimized-N-16', 'db-perf-optimized-N-32', 'db-perf-optimized-N-48', 'db-perf-optimized-N-64', 'db-perf-optimized-N-80', 'db-perf-optimized-N-96', 'db-perf-optimized-N-128']",message="Enterprise Plus machines have 2, 4, 8, 16, 32, 48, 64, 80, 96 or 128 vCPUs: db-perf-optimized-N-<one of those>"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^db-custom-[0-9]{1,3}-[0-9]{1,7}$') || int(self.split('-')[2]) == 1 || (int(self.split('-')[2]) % 2 == 0 && int(self.split('-')[2]) >= 2 && int(self.split('-')[2]) <= 96)",messageExpression="'has ' + self.split('-')[2] + ' vCPUs: a custom machine has 1 vCPU or an even number of vCPUs up to 96'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^db-custom-[0-9]{1,3}-[0-9]{1,7}$') || int(self.split('-')[3]) % 256 == 0",messageExpression="'has ' + self.split('-')[3] + ' MiB of memory: memory must be a multiple of 256 MiB'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^db-custom-[0-9]{1,3}-[0-9]{1,7}$') || int(self.split('-')[3]) >= 3840",messageExpression="'has ' + self.split('-')[3] + ' MiB of memory: a custom machine needs at least 3840 MiB'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^db-custom-[0-9]{1,3}-[0-9]{1,7}$') || (int(self.split('-')[3]) * 10 >= int(self.split('-')[2]) * 9216 && int(self.split('-')[3]) <= int(self.split('-')[2]) * 6656)",messageExpression="'has ' + self.split('-')[3] + ' MiB for ' + self.split('-')[2] + ' vCPUs: memory must be between 0.9 GiB (921.6 MiB) and 6.5 GiB (6656 MiB) per vCPU'"
	InstanceType string `json:"instanceType,omitempty"`
}

// Disk configures the storage of the instance.
// +kubebuilder:validation:XValidation:rule="self.sizeMaximumGb == 0 || self.sizeMaximumGb >= self.sizeMinimumGb",fieldPath=".sizeMaximumGb",message="must be 0 (grow without limit) or at least sizeMinimumGb"
type Disk struct {
	// SizeMinimumGb is the storage to provision, in GB. It may be increased,
	// never decreased. The disk grows automatically as needed, so the actual
	// size (status.atProvider.currentDiskSizeGb) may be larger.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=65536
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="may be increased, never decreased: Cloud SQL cannot shrink a disk"
	SizeMinimumGb int32 `json:"sizeMinimumGb,omitempty"`

	// SizeMaximumGb limits automatic storage growth, in GB. 0 grows up to the
	// largest size Cloud SQL allows; a value equal to sizeMinimumGb turns
	// automatic growth off.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65536
	SizeMaximumGb int32 `json:"sizeMaximumGb,omitempty"`

	// Type of disk: SSD or HDD. Immutable.
	// +optional
	// +kubebuilder:default=SSD
	// +kubebuilder:validation:Enum=SSD;HDD
	Type string `json:"type,omitempty"`
}

// PostgresqlInstanceObservation is the observed state of the Cloud SQL
// instance.
type PostgresqlInstanceObservation struct {
	// State of the instance as Cloud SQL reports it, for example RUNNABLE.
	State string `json:"state,omitempty"`

	// ConnectionName is project:region:instance, as the Cloud SQL Auth Proxy
	// wants it.
	ConnectionName string `json:"connectionName,omitempty"`

	// PublicIP is the instance's public IPv4 address, if it has one.
	PublicIP string `json:"publicIp,omitempty"`

	// PrivateIP is the instance's private IP address, if it has one.
	PrivateIP string `json:"privateIp,omitempty"`

	// PSCEnabled is true when the instance takes connections through
	// Private Service Connect (settings.ipConfiguration.pscConfig), which
	// pods may then ask for with cloudsql.travelaudience.com/proxy-ip-type:
	// psc.
	PSCEnabled bool `json:"pscEnabled,omitempty"`

	// GCEZone is the zone the primary currently runs in.
	GCEZone string `json:"gceZone,omitempty"`

	// DatabaseInstalledVersion is the exact PostgreSQL version, for example
	// POSTGRES_18_1.
	DatabaseInstalledVersion string `json:"databaseInstalledVersion,omitempty"`

	// CurrentDiskSizeGb is the provisioned disk size, which automatic growth
	// may have raised above spec.forProvider.resources.disk.sizeMinimumGb.
	CurrentDiskSizeGb int64 `json:"currentDiskSizeGb,omitempty"`

	// ServiceAccountEmailAddress is the service account of the instance, for
	// granting it access to buckets (imports, exports).
	ServiceAccountEmailAddress string `json:"serviceAccountEmailAddress,omitempty"`

	// SettingsVersion increases with every change of the instance's settings.
	SettingsVersion int64 `json:"settingsVersion,omitempty"`

	// SelfLink is the URI of the instance in the Cloud SQL Admin API.
	SelfLink string `json:"selfLink,omitempty"`

	// ScheduledMaintenance is the maintenance Cloud SQL has scheduled for
	// the instance (its scheduledMaintenance), absent when none is.
	// +optional
	ScheduledMaintenance *ScheduledMaintenance `json:"scheduledMaintenance,omitempty"`

	// Backups is the health of the instance's backups, read from Cloud
	// SQL's backup runs (and, with point-in-time recovery on, its
	// recoverable window) about once an hour: see the BackupsHealthy
	// condition. Absent until the first read.
	// +optional
	Backups *BackupHealth `json:"backups,omitempty"`

	// Recovery is how the instance was recovered from its source
	// (spec.forProvider.source), while the provider makes it its own and
	// after: absent for an instance made empty.
	// +optional
	Recovery *Recovery `json:"recovery,omitempty"`

	// MajorUpgrade is the last major version upgrade the provider made, or
	// the one under way: absent until the version is first raised.
	// +optional
	MajorUpgrade *MajorUpgrade `json:"majorUpgrade,omitempty"`
}

// Recovery is how an instance was recovered from its source.
type Recovery struct {
	// Source names what the instance was recovered from: the Cloud SQL
	// instance, with the point in time or backup run, or the backup.
	Source string `json:"source,omitempty"`

	// Phase is where the recovery stands: Recovering (Cloud SQL makes the
	// instance), Securing (the provider sets its own postgres password and
	// owner label: the secret is published once the password is set), Done.
	Phase string `json:"phase,omitempty"`

	// CreateTime is when Cloud SQL created the instance.
	CreateTime *metav1.Time `json:"createTime,omitempty"`
}

// Phases of a recovery (status.atProvider.recovery.phase).
const (
	RecoveryRecovering = "Recovering"
	RecoverySecuring   = "Securing"
	RecoveryDone       = "Done"
)

// MajorUpgrade is a guarded major version upgrade of the instance.
type MajorUpgrade struct {
	// FromVersion and ToVersion are the Cloud SQL database versions, for
	// example POSTGRES_15 and POSTGRES_16.
	FromVersion string `json:"fromVersion,omitempty"`
	ToVersion   string `json:"toVersion,omitempty"`

	// Phase is where the upgrade stands: PreCheck (Cloud SQL's
	// preCheckMajorVersionUpgrade runs), Blocked (the pre-check found what
	// must be fixed first: see message), Backup (the on-demand backup taken
	// before the upgrade runs), Upgrading (the patch of the version runs),
	// Done.
	Phase string `json:"phase,omitempty"`

	// PreCheckOperation is the operation of the last pre-check.
	PreCheckOperation string `json:"preCheckOperation,omitempty"`

	// BackupID is the ID of the on-demand backup run taken right before
	// the upgrade: restore it (spec.forProvider.source.backupRunId) into a
	// new instance to go back to the old version.
	BackupID string `json:"backupId,omitempty"`

	// BackupEndTime is when that backup ended.
	BackupEndTime *metav1.Time `json:"backupEndTime,omitempty"`

	// StartTime is when the patch of the version was sent; EndTime when the
	// instance was first seen at the new version.
	StartTime *metav1.Time `json:"startTime,omitempty"`
	EndTime   *metav1.Time `json:"endTime,omitempty"`

	// Message says what the pre-check, the backup or the upgrade reported,
	// when it stopped the upgrade.
	Message string `json:"message,omitempty"`

	// FailedAttempts counts the upgrades that Cloud SQL failed: each
	// attempt after one runs the pre-check and takes a backup again.
	FailedAttempts int32 `json:"failedAttempts,omitempty"`
}

// Phases of a major upgrade (status.atProvider.majorUpgrade.phase).
const (
	UpgradePreCheck  = "PreCheck"
	UpgradeBlocked   = "Blocked"
	UpgradeBackup    = "Backup"
	UpgradeUpgrading = "Upgrading"
	UpgradeDone      = "Done"
)

// ScheduledMaintenance is a maintenance that Cloud SQL has scheduled.
type ScheduledMaintenance struct {
	// StartTime is when the maintenance starts.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CanDefer says whether the maintenance can be deferred
	// (gcloud sql reschedule-maintenance).
	// +optional
	CanDefer bool `json:"canDefer,omitempty"`

	// CanReschedule says whether the maintenance can be rescheduled.
	// +optional
	CanReschedule bool `json:"canReschedule,omitempty"`

	// ScheduleDeadlineTime is the latest time to which the maintenance can
	// be rescheduled.
	// +optional
	ScheduleDeadlineTime *metav1.Time `json:"scheduleDeadlineTime,omitempty"`
}

// BackupHealth is what the provider last read of an instance's backups.
type BackupHealth struct {
	// LastSuccessful is the newest backup run (of any type) that succeeded,
	// among the newest that Cloud SQL lists; absent when none did.
	// +optional
	LastSuccessful *BackupRunSummary `json:"lastSuccessful,omitempty"`

	// LastRun is the newest backup run, when it is not lastSuccessful: one
	// that failed, or that is still under way.
	// +optional
	LastRun *BackupRunSummary `json:"lastRun,omitempty"`

	// EarliestRecoveryTime is the earliest moment to which point-in-time
	// recovery can bring the instance (instances.getLatestRecoveryTime);
	// absent while it is off.
	// +optional
	EarliestRecoveryTime *metav1.Time `json:"earliestRecoveryTime,omitempty"`

	// LatestRecoveryTime is the latest moment to which point-in-time
	// recovery can bring the instance; absent while it is off.
	// +optional
	LatestRecoveryTime *metav1.Time `json:"latestRecoveryTime,omitempty"`

	// ReadTime is when this was read from Cloud SQL.
	// +optional
	ReadTime *metav1.Time `json:"readTime,omitempty"`

	// ReadError is why the last read failed, when it did: what this block
	// says is then as of readTime.
	// +optional
	ReadError string `json:"readError,omitempty"`
}

// BackupRunSummary is one backup run, as Cloud SQL lists it.
type BackupRunSummary struct {
	// ID of the backup run (gcloud sql backups describe ID).
	ID string `json:"id"`

	// Type is AUTOMATED, ON_DEMAND or FINAL.
	Type string `json:"type"`

	// Status is Cloud SQL's: SUCCESSFUL, FAILED, ENQUEUED, RUNNING, ...
	// +optional
	Status string `json:"status,omitempty"`

	// Time is when the run ended (or, while it runs, when it was enqueued).
	// +optional
	Time *metav1.Time `json:"time,omitempty"`

	// Error is Cloud SQL's error of a failed run: its code and message.
	// +optional
	Error string `json:"error,omitempty"`
}

// BackupsHealthy is the condition type that says whether the instance's
// automated backups succeed on time.
const BackupsHealthy xpv2.ConditionType = "BackupsHealthy"

// Reasons of the BackupsHealthy condition.
const (
	// ReasonBackupSucceeded: the newest automated backup succeeded, on time.
	ReasonBackupSucceeded xpv2.ConditionReason = "Succeeded"
	// ReasonBackupFailed: the newest automated backup failed.
	ReasonBackupFailed xpv2.ConditionReason = "BackupFailed"
	// ReasonBackupOverdue: no automated backup succeeded for longer than a
	// day, the backup window and a grace.
	ReasonBackupOverdue xpv2.ConditionReason = "Overdue"
	// ReasonBackupsDisabled: daily backups are off.
	ReasonBackupsDisabled xpv2.ConditionReason = "Disabled"
	// ReasonNoBackupYet: a new instance whose first backup is not due yet.
	ReasonNoBackupYet xpv2.ConditionReason = "NoBackupYet"
	// ReasonBackupReadFailed: the reads of the backup runs have failed for
	// a while, so the health is not known.
	ReasonBackupReadFailed xpv2.ConditionReason = "ReadFailed"
	// ReasonAutomatedNotListed: the newest backup runs, as many as one read
	// lists, are all on-demand ones, so the newest automated run is not
	// known.
	ReasonAutomatedNotListed xpv2.ConditionReason = "AutomatedNotListed"
)

// A PostgresqlInstanceSpec defines the desired state of a
// PostgresqlInstance. Once the provider may create or update the instance,
// its name, region and disk type cannot change and its version only goes up;
// while it only observes (managementPolicies Observe), they may be corrected
// to describe an imported instance. The source never changes.
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || has(self.forProvider.name) == has(oldSelf.forProvider.name)",fieldPath=".forProvider.name",message="cannot be added or removed after creation: the Cloud SQL instance keeps the name it was created with"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || !has(self.forProvider.name) || !has(oldSelf.forProvider.name) || self.forProvider.name == oldSelf.forProvider.name",fieldPath=".forProvider.name",messageExpression="'is immutable: the Cloud SQL instance is named ' + oldSelf.forProvider.name + '; create a new PostgresqlInstance to use another name'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || (self.forProvider.version == '9.6' ? 9.6 : double(self.forProvider.version)) >= (oldSelf.forProvider.version == '9.6' ? 9.6 : double(oldSelf.forProvider.version))",fieldPath=".forProvider.version",messageExpression="'cannot go down (was ' + oldSelf.forProvider.version + '): Cloud SQL upgrades PostgreSQL in place but never downgrades it; to go back, restore the backup taken before the upgrade (status.atProvider.majorUpgrade.backupId) into a new PostgresqlInstance with spec.forProvider.source'"
// +kubebuilder:validation:XValidation:rule="has(self.forProvider.source) == has(oldSelf.forProvider.source) && (!has(self.forProvider.source) || self.forProvider.source == oldSelf.forProvider.source)",fieldPath=".forProvider.source",message="is immutable: an instance is recovered from its source once, when it is created; create a new PostgresqlInstance to recover again"
// +kubebuilder:validation:XValidation:rule="!has(self.forProvider.source) || !has(self.forProvider.source.clusterInstance)",fieldPath=".forProvider.source.clusterInstance",message="is for namespaced PostgresqlInstances only: a cluster-scoped PostgresqlInstance names its source with instance"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.location.region == oldSelf.forProvider.location.region",fieldPath=".forProvider.location.region",messageExpression="'is immutable (was ' + oldSelf.forProvider.location.region + '): a Cloud SQL instance cannot move to another region'"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.managementPolicies) && oldSelf.managementPolicies.all(p, p == 'Observe' || p == 'LateInitialize')) || self.forProvider.resources.disk.type == oldSelf.forProvider.resources.disk.type",fieldPath=".forProvider.resources.disk.type",messageExpression="'is immutable (was ' + oldSelf.forProvider.resources.disk.type + '): Cloud SQL cannot change the disk type of an instance'"
// +kubebuilder:validation:XValidation:rule="has(self.writeConnectionSecretToRef) || (has(self.managementPolicies) && !self.managementPolicies.exists(p, p == '*' || p == 'Create'))",fieldPath=".writeConnectionSecretToRef",message="is required when the provider may create the instance: the generated password of the postgres user is stored there before the instance is created, so that it is never lost"
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || size(self.providerConfigRef.name) > 0",fieldPath=".providerConfigRef.name",message="must name a ProviderConfig (the project and credentials), for example default"
// +kubebuilder:validation:XValidation:rule="!has(self.writeConnectionSecretToRef) || size(self.writeConnectionSecretToRef.namespace) > 0",fieldPath=".writeConnectionSecretToRef.namespace",message="must be a namespace name: a PostgresqlInstance is cluster-scoped, so its connection secret's namespace must be given"
type PostgresqlInstanceSpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`

	// ForProvider holds the settings of the Cloud SQL instance.
	ForProvider PostgresqlInstanceParameters `json:"forProvider"`

	// Injection says from which namespaces pods may request this instance
	// with the annotation cloudsql.travelaudience.com/postgresqlinstance-name,
	// which gives them the Cloud SQL Auth Proxy and the postgres password.
	// When omitted, the provider's configuration decides
	// ([injection] default_allowed_namespaces, by default no namespace).
	// When present, only the namespaces listed in allowedNamespaces or
	// matched by namespaceSelector may; an empty injection ({}) allows none.
	// Copies of the password in namespaces that are no longer allowed are
	// deleted; running pods keep the copy they started with.
	// +optional
	Injection *Injection `json:"injection,omitempty"`

	// Tenancy says which namespaces may create namespaced PostgresqlUsers
	// and PostgresqlDatabases on this instance (spec.forProvider.clusterInstance),
	// without receiving the postgres password: their pods get their own
	// least-privileged logins only. A namespace that spec.injection allows
	// may create them too. It also says which objects may take over a login
	// or a database that exists on the instance without having been
	// created by one of them (importPolicy).
	// +optional
	Tenancy *Tenancy `json:"tenancy,omitempty"`
}

// An ObjectImportPolicy says which PostgresqlUsers and PostgresqlDatabases
// may take over (reset the password of, give away, drop) a login or a
// database that exists on their instance but that no such object created.
type ObjectImportPolicy string

// Object import policies.
const (
	// ObjectImportClusterScoped lets cluster-scoped objects, which only
	// the platform team writes, import; namespaced objects may not.
	ObjectImportClusterScoped ObjectImportPolicy = "ClusterScoped"
	// ObjectImportAllow lets every object that may use the instance import.
	ObjectImportAllow ObjectImportPolicy = "Allow"
	// ObjectImportDeny lets no object import: every login and database
	// must be created by the object that manages it.
	ObjectImportDeny ObjectImportPolicy = "Deny"
)

// Tenancy says which namespaces may put their own logins and databases on a
// cluster-scoped instance, and which objects may import existing ones. A
// namespace is admitted when allowedNamespaces lists it (or lists "*") or
// when namespaceSelector matches its labels.
// +kubebuilder:validation:XValidation:rule="!has(self.allowedNamespaces) || !('*' in self.allowedNamespaces) || size(self.allowedNamespaces) == 1",fieldPath=".allowedNamespaces",message="'*' already admits every namespace: list either '*' alone or namespace names"
// +kubebuilder:validation:XValidation:rule="!has(self.namespaceSelector) || !has(self.namespaceSelector.matchExpressions) || self.namespaceSelector.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",fieldPath=".namespaceSelector.matchExpressions",message="each operator must be In, NotIn, Exists or DoesNotExist"
// +kubebuilder:validation:XValidation:rule="!has(self.namespaceSelector) || !has(self.namespaceSelector.matchExpressions) || self.namespaceSelector.matchExpressions.all(e, !(e.operator in ['In', 'NotIn']) || (has(e.values) && size(e.values) > 0))",fieldPath=".namespaceSelector.matchExpressions",message="operators In and NotIn need at least one value"
// +kubebuilder:validation:XValidation:rule="!has(self.namespaceSelector) || !has(self.namespaceSelector.matchExpressions) || self.namespaceSelector.matchExpressions.all(e, !(e.operator in ['Exists', 'DoesNotExist']) || !has(e.values) || size(e.values) == 0)",fieldPath=".namespaceSelector.matchExpressions",message="operators Exists and DoesNotExist take no values"
type Tenancy struct {
	// AllowedNamespaces are the names of the namespaces that may create
	// PostgresqlUsers and PostgresqlDatabases on this instance, or ["*"]
	// for every namespace. Their pods may name those users
	// (cloudsql.travelaudience.com/postgresqluser-name), never the instance
	// itself, unless spec.injection allows them too.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule="self == '*' || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a namespace name (lowercase letters, digits and '-', starting and ending with a letter or digit) or '*' for every namespace"
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`

	// NamespaceSelector selects, by their labels, the namespaces that may
	// create PostgresqlUsers and PostgresqlDatabases on this instance.
	// Whoever may label namespaces can then grant that, so prefer labels
	// that only administrators set, such as kubernetes.io/metadata.name.
	// An empty selector ({}) matches every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// ImportPolicy says which objects may take over a login or a database
	// that exists on the instance but that no PostgresqlUser or
	// PostgresqlDatabase created (made with psql, gcloud, or by an object
	// since deleted with deletionPolicy Orphan): ClusterScoped (the
	// default) lets cluster-scoped objects, which only the platform team
	// writes, do it; Allow lets namespaced objects do it too; Deny lets
	// none. A login or database that another object created is never taken
	// over, whatever this says.
	// +optional
	// +kubebuilder:default=ClusterScoped
	// +kubebuilder:validation:Enum=ClusterScoped;Allow;Deny
	ImportPolicy ObjectImportPolicy `json:"importPolicy,omitempty"`
}

// ImportPolicyOf is the import policy of tenancy t, which may be nil, with
// the default of a cluster-scoped instance.
func ImportPolicyOf(t *Tenancy) ObjectImportPolicy {
	if t == nil || t.ImportPolicy == "" {
		return ObjectImportClusterScoped
	}
	return t.ImportPolicy
}

// PasswordRotation is how often a login's password is replaced. At each
// period the provider generates a new password, stores it in the connection
// secret before Cloud SQL is given it (a crash in between loses nothing), and
// sets it with users.update within the request budget; the injector's copies
// and the password files of running pods follow it. Connections already open
// stay open; a pod's new connections use the new password once its file
// follows (within the kubelet's sync period, about a minute).
// +kubebuilder:validation:XValidation:rule="duration(self.period) >= duration('1h')",fieldPath=".period",message="must be at least 1h: every rotation is a request to Cloud SQL and a new password for every pod that uses the login"
type PasswordRotation struct {
	// Period between two passwords, as a duration such as 720h (30 days);
	// at least 1h. The provider spreads the rotations of many logins with
	// the same period over its last tenth, so that they do not all come in
	// the same minute. Counted from when the provider last set the password
	// (the connection secret's annotation
	// cloudsql.travelaudience.com/password-set-at).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	Period metav1.Duration `json:"period"`
}

// Injection says which namespaces may request an instance. A namespace is
// allowed when allowedNamespaces lists it (or lists "*") or when
// namespaceSelector matches its labels.
// +kubebuilder:validation:XValidation:rule="!has(self.allowedNamespaces) || !('*' in self.allowedNamespaces) || size(self.allowedNamespaces) == 1",fieldPath=".allowedNamespaces",message="'*' already allows every namespace: list either '*' alone or namespace names"
// +kubebuilder:validation:XValidation:rule="!has(self.namespaceSelector) || !has(self.namespaceSelector.matchExpressions) || self.namespaceSelector.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",fieldPath=".namespaceSelector.matchExpressions",message="each operator must be In, NotIn, Exists or DoesNotExist"
// +kubebuilder:validation:XValidation:rule="!has(self.namespaceSelector) || !has(self.namespaceSelector.matchExpressions) || self.namespaceSelector.matchExpressions.all(e, !(e.operator in ['In', 'NotIn']) || (has(e.values) && size(e.values) > 0))",fieldPath=".namespaceSelector.matchExpressions",message="operators In and NotIn need at least one value"
// +kubebuilder:validation:XValidation:rule="!has(self.namespaceSelector) || !has(self.namespaceSelector.matchExpressions) || self.namespaceSelector.matchExpressions.all(e, !(e.operator in ['Exists', 'DoesNotExist']) || !has(e.values) || size(e.values) == 0)",fieldPath=".namespaceSelector.matchExpressions",message="operators Exists and DoesNotExist take no values"
type Injection struct {
	// AllowedNamespaces are the names of the namespaces whose pods may
	// request this instance, or ["*"] for every namespace. "*" lets anyone
	// who can create a pod anywhere in the cluster connect as postgres.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule="self == '*' || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a namespace name (lowercase letters, digits and '-', starting and ending with a letter or digit) or '*' for every namespace"
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`

	// NamespaceSelector selects, by their labels, the namespaces whose pods
	// may request this instance, for example
	// {matchLabels: {team: payments}}. Whoever may label namespaces can then
	// grant access, so prefer labels that only administrators set, such as
	// kubernetes.io/metadata.name. An empty selector ({}) matches every
	// namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// A PostgresqlInstanceStatus represents the observed state of a
// PostgresqlInstance.
type PostgresqlInstanceStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	// AtProvider is what Cloud SQL last reported about the instance.
	AtProvider PostgresqlInstanceObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A PostgresqlInstance is a Cloud SQL for PostgreSQL instance. Creating
// one creates the instance, with a generated password for the postgres
// user published in the connection secret; deleting one deletes the
// instance only when it carries the annotation
// cloudsql.travelaudience.com/allow-deletion: "true".
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="STATE",type="string",JSONPath=".status.atProvider.state"
// +kubebuilder:printcolumn:name="CONNECTION NAME",type="string",JSONPath=".status.atProvider.connectionName"
// +kubebuilder:printcolumn:name="VERSION",type="string",JSONPath=".spec.forProvider.version",priority=1
// +kubebuilder:printcolumn:name="TYPE",type="string",JSONPath=".spec.forProvider.resources.instanceType",priority=1
// +kubebuilder:printcolumn:name="REGION",type="string",JSONPath=".spec.forProvider.location.region",priority=1
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type="string",JSONPath=".metadata.annotations.crossplane\\.io/external-name",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,cloudsql},shortName=pgi
type PostgresqlInstance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PostgresqlInstanceSpec   `json:"spec"`
	Status PostgresqlInstanceStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PostgresqlInstanceList contains a list of PostgresqlInstance.
type PostgresqlInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PostgresqlInstance `json:"items"`
}
