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
	"os/exec"
	"path/filepath"
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

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
)

var env *controlplane.Env

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

// objectName is prefix and a case's name as the name of an object: case names
// are CamelCase, object names lowercase.
func objectName(prefix, name string) string { return prefix + strings.ToLower(name) }

// instance is the smallest valid PostgresqlInstance, changed by fns.
func instance(name string, fns ...func(p *v1alpha1.PostgresqlInstanceParameters)) *v1alpha1.PostgresqlInstance {
	pi := &v1alpha1.PostgresqlInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pi.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: "crossplane-system", Name: name + "-postgres"}
	pi.Spec.ForProvider.Networking.PublicIP.Enabled = true
	for _, fn := range fns {
		fn(&pi.Spec.ForProvider)
	}
	return pi
}

// denied asserts that err is the API server's rejection carrying every fragment
// (field path and message) given.
func denied(g Gomega, err error, fragments ...string) {
	g.ExpectWithOffset(1, err).To(HaveOccurred(), "the API server accepted an object it should reject")
	for _, f := range fragments {
		g.ExpectWithOffset(1, err.Error()).To(ContainSubstring(f))
	}
}

func TestDefaultsOnMinimalObject(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := instance("defaults")
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())

	got := &v1alpha1.PostgresqlInstance{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), got)).To(Succeed())
	fp := got.Spec.ForProvider
	g.Expect(fp.Name).To(BeNil())
	g.Expect(fp.Version).To(Equal("18"))
	g.Expect(fp.Edition).To(Equal(v1alpha1.EditionEnterprise))
	g.Expect(fp.Availability.Type).To(Equal(v1alpha1.AvailabilityZonal))
	g.Expect(fp.Backups.Daily.Enabled).To(Equal(ptr.To(true)))
	g.Expect(fp.Backups.Daily.StartTime).To(Equal("00:00"))
	// Unset, so that an imported instance keeps what Cloud SQL has; the
	// provider turns them on for an instance it creates.
	g.Expect(fp.DeletionProtection).To(BeNil())
	g.Expect(fp.Backups.RetainOnDelete).To(BeNil())
	g.Expect(fp.Backups.FinalBackup).To(BeNil())
	g.Expect(fp.Flags).To(BeEmpty())
	g.Expect(fp.Labels).To(BeEmpty())
	g.Expect(fp.Location).To(Equal(v1alpha1.Location{Region: "europe-west1", Zone: v1alpha1.Any}))
	// Without a day there is no hour to choose; EffectiveHour says Any.
	g.Expect(fp.Maintenance).To(Equal(v1alpha1.Maintenance{Day: v1alpha1.Any}))
	g.Expect(fp.Maintenance.EffectiveHour()).To(Equal(v1alpha1.Any))
	g.Expect(fp.Networking.PrivateIP).To(Equal(v1alpha1.PrivateIP{}))
	g.Expect(fp.Networking.PublicIP).To(Equal(v1alpha1.PublicIP{Enabled: true}))
	g.Expect(fp.Resources).To(Equal(v1alpha1.Resources{
		Disk:         v1alpha1.Disk{SizeMinimumGb: 10, SizeMaximumGb: 0, Type: v1alpha1.DiskTypeSSD},
		InstanceType: "db-custom-1-3840",
	}))
	g.Expect(got.Spec.DeletionPolicy).To(Equal(xpv2.DeletionDelete))
	g.Expect(got.Spec.ProviderConfigReference).To(Equal(&xpv2.Reference{Name: "default"}))
	g.Expect(got.Spec.ManagementPolicies).To(Equal(xpv2.ManagementPolicies{xpv2.ManagementActionAll}))
}

func TestConnectionSecretRequiredToCreate(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := instance("no-secret")
	pi.Spec.WriteConnectionSecretToReference = nil
	denied(g, env.Client.Create(ctx, pi), "spec.writeConnectionSecretToRef", "is required when the provider may create the instance")

	// Observing (importing) an instance needs no secret.
	pi = instance("observe-only")
	pi.Spec.WriteConnectionSecretToReference = nil
	pi.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())
}

func TestFalseIsNotDefaultedAway(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := instance("backups-off", func(p *v1alpha1.PostgresqlInstanceParameters) {
		p.Backups.Daily.Enabled = ptr.To(false)
	})
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())
	got := &v1alpha1.PostgresqlInstance{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), got)).To(Succeed())
	g.Expect(got.Spec.ForProvider.Backups.Daily.Enabled).To(Equal(ptr.To(false)))
}

func TestCreateValidation(t *testing.T) {
	controlplane.Need(t)
	type params = v1alpha1.PostgresqlInstanceParameters
	const fp = "spec.forProvider."
	cases := map[string]struct {
		meta   string // metadata.name, when not the case name
		mutate func(p *params)
		// want is empty for objects the API server must accept, else every fragment
		// of the expected denial.
		want []string
	}{
		// name
		"NameValid":                {mutate: func(p *params) { p.Name = ptr.To("cloudsql-psql-123456") }},
		"NameStartsDigit":          {mutate: func(p *params) { p.Name = ptr.To("1psql") }, want: []string{fp + "name", "must start with a lowercase letter"}},
		"NameEndsHyphen":           {mutate: func(p *params) { p.Name = ptr.To("psql-") }, want: []string{fp + "name", "end with a letter or digit"}},
		"NameUppercase":            {mutate: func(p *params) { p.Name = ptr.To("Psql") }, want: []string{fp + "name", "lowercase letters"}},
		"NameTooLong":              {mutate: func(p *params) { p.Name = ptr.To("a" + strings.Repeat("b", 91)) }, want: []string{fp + "name", "91"}},
		"MetadataNameDotsWithName": {meta: "team.db2", mutate: func(p *params) { p.Name = ptr.To("team-db2") }},

		// source
		"SourceClone": {mutate: func(p *params) { p.Source = &v1alpha1.Source{Instance: "orders"} }},
		"SourceCloneAtTime": {mutate: func(p *params) {
			p.Source = &v1alpha1.Source{Instance: "orders", PointInTime: &metav1.Time{Time: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}}
		}},
		"SourceBackupRun": {mutate: func(p *params) { p.Source = &v1alpha1.Source{Instance: "orders", BackupRunID: "1764237600000"} }},
		"SourceBackup":    {mutate: func(p *params) { p.Source = &v1alpha1.Source{Backup: "nightly"} }},
		"SourceRetained": {mutate: func(p *params) {
			p.Source = &v1alpha1.Source{RetainedBackup: "projects/my-project-123/backups/1764237600000"}
		}},
		"SourceNone": {mutate: func(p *params) { p.Source = &v1alpha1.Source{} }, want: []string{fp + "source", "set exactly one of instance, clusterInstance, backup and retainedBackup"}},
		"SourceTwo":  {mutate: func(p *params) { p.Source = &v1alpha1.Source{Instance: "orders", Backup: "nightly"} }, want: []string{fp + "source", "set exactly one of"}},
		"SourceTimeAlone": {mutate: func(p *params) {
			p.Source = &v1alpha1.Source{Backup: "nightly", PointInTime: &metav1.Time{Time: time.Now()}}
		}, want: []string{fp + "source.pointInTime", "needs instance or clusterInstance"}},
		"SourceRunAlone": {mutate: func(p *params) { p.Source = &v1alpha1.Source{Backup: "nightly", BackupRunID: "12"} }, want: []string{fp + "source.backupRunId", "needs instance or clusterInstance"}},
		"SourceRunAndTime": {mutate: func(p *params) {
			p.Source = &v1alpha1.Source{Instance: "orders", BackupRunID: "12", PointInTime: &metav1.Time{Time: time.Now()}}
		}, want: []string{fp + "source.backupRunId", "cannot be used together with pointInTime"}},
		"SourceRunNotNumber":    {mutate: func(p *params) { p.Source = &v1alpha1.Source{Instance: "orders", BackupRunID: "latest"} }, want: []string{fp + "source.backupRunId", "should match"}},
		"SourceRetainedBad":     {mutate: func(p *params) { p.Source = &v1alpha1.Source{RetainedBackup: "backups/12"} }, want: []string{fp + "source.retainedBackup", "should match"}},
		"SourceClusterInstance": {mutate: func(p *params) { p.Source = &v1alpha1.Source{ClusterInstance: "orders"} }, want: []string{fp + "source.clusterInstance", "is for namespaced PostgresqlInstances only"}},

		// version and edition
		"Version96":         {mutate: func(p *params) { p.Version = "9.6" }},
		"VersionUnknown":    {mutate: func(p *params) { p.Version = "9.5" }, want: []string{fp + "version", `Unsupported value: "9.5"`, `"18"`}},
		"EditionUnknown":    {mutate: func(p *params) { p.Edition = "Standard" }, want: []string{fp + "edition", `Unsupported value: "Standard"`}},
		"EditionPlusValid":  {mutate: func(p *params) { p.Edition = "EnterprisePlus"; p.Resources.InstanceType = "db-perf-optimized-N-4" }},
		"EditionPlusCustom": {mutate: func(p *params) { p.Edition = "EnterprisePlus" }, want: []string{fp + "resources.instanceType", "edition EnterprisePlus needs a db-perf-optimized-N-<vCPUs> instance type"}},
		"EditionPlusShared": {mutate: func(p *params) { p.Edition = "EnterprisePlus"; p.Resources.InstanceType = "db-f1-micro" }, want: []string{fp + "resources.instanceType", "shared-core types need edition Enterprise"}},
		"EditionPlusOldVersion": {mutate: func(p *params) {
			p.Edition = "EnterprisePlus"
			p.Version = "11"
			p.Resources.InstanceType = "db-perf-optimized-N-2"
		}, want: []string{fp + "edition", "needs PostgreSQL 12 or later"}},
		"PerfOptimizedOddVcpus":     {mutate: func(p *params) { p.Edition = "EnterprisePlus"; p.Resources.InstanceType = "db-perf-optimized-N-3" }, want: []string{fp + "resources.instanceType", "Enterprise Plus machines have 2, 4, 8, 16, 32, 48, 64, 80, 96 or 128 vCPUs"}},
		"PerfOptimizedOnEnterprise": {mutate: func(p *params) { p.Resources.InstanceType = "db-perf-optimized-N-8" }, want: []string{fp + "resources.instanceType", "need edition EnterprisePlus"}},

		// password rotation
		"RotationMonthly": {mutate: func(p *params) {
			p.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: 720 * time.Hour}}
		}},
		"RotationHourly": {mutate: func(p *params) {
			p.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: time.Hour}}
		}},
		"RotationTooOften": {mutate: func(p *params) {
			p.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: 30 * time.Minute}}
		}, want: []string{fp + "passwordRotation.period", "must be at least 1h"}},

		// availability and backups
		"AvailabilityRegional": {mutate: func(p *params) { p.Availability.Type = "Regional" }},
		"AvailabilityUnknown":  {mutate: func(p *params) { p.Availability.Type = "Multi" }, want: []string{fp + "availability.type", `Unsupported value: "Multi"`}},
		"BackupStart22":        {mutate: func(p *params) { p.Backups.Daily.StartTime = "22:00" }},
		"BackupStartHalf":      {mutate: func(p *params) { p.Backups.Daily.StartTime = "22:30" }, want: []string{fp + "backups.daily.startTime", "must be a full hour in 24-hour UTC time, hh:00"}},
		"BackupStart24":        {mutate: func(p *params) { p.Backups.Daily.StartTime = "24:00" }, want: []string{fp + "backups.daily.startTime", "hh:00"}},
		"FinalBackupOneDay":    {mutate: func(p *params) { p.Backups.FinalBackup = &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 1} }},
		"FinalBackupOneYear":   {mutate: func(p *params) { p.Backups.FinalBackup = &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 365} }},
		"FinalBackupTooLong": {
			mutate: func(p *params) { p.Backups.FinalBackup = &v1alpha1.FinalBackup{Enabled: true, RetentionDays: 366} },
			want:   []string{fp + "backups.finalBackup.retentionDays", "backups.finalBackup.retentionDays must be between 1 and 365 days"},
		},
		"FinalBackupNegative": {
			mutate: func(p *params) { p.Backups.FinalBackup = &v1alpha1.FinalBackup{Enabled: true, RetentionDays: -1} },
			want:   []string{fp + "backups.finalBackup.retentionDays", "choose a retention in that range"},
		},
		"ProtectionOff": {mutate: func(p *params) { p.DeletionProtection = &v1alpha1.DeletionProtection{} }},
		"PITRSevenDays": {mutate: func(p *params) {
			p.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true, LogRetentionDays: 7}
		}},
		"PITREightDaysOnEnterprise": {
			mutate: func(p *params) {
				p.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true, LogRetentionDays: 8}
			},
			want: []string{fp + "backups.pointInTimeRecovery.logRetentionDays", "is too long for edition Enterprise, which keeps at most 7 days of logs", "EnterprisePlus for up to 35"},
		},
		"PITR35DaysOnEnterprisePlus": {mutate: func(p *params) {
			p.Edition, p.Resources.InstanceType = v1alpha1.EditionEnterprisePlus, "db-perf-optimized-N-2"
			p.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true, LogRetentionDays: 35}
		}},
		"PITR36Days": {
			mutate: func(p *params) {
				p.Edition, p.Resources.InstanceType = v1alpha1.EditionEnterprisePlus, "db-perf-optimized-N-2"
				p.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true, LogRetentionDays: 36}
			},
			want: []string{fp + "backups.pointInTimeRecovery.logRetentionDays", "must be between 1 and 35 days"},
		},
		"PITRWithoutDailyBackups": {
			mutate: func(p *params) {
				p.Backups.Daily.Enabled = ptr.To(false)
				p.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{Enabled: true}
			},
			want: []string{fp + "backups.pointInTimeRecovery.enabled", "needs daily backups: set backups.daily.enabled to true"},
		},
		"PITROffWithoutDailyBackups": {mutate: func(p *params) {
			p.Backups.Daily.Enabled = ptr.To(false)
			p.Backups.PointInTimeRecovery = &v1alpha1.PointInTimeRecovery{}
		}},
		"RetainedBackupsZero": {
			mutate: func(p *params) { p.Backups.RetainedBackups = ptr.To[int32](0) },
			want:   []string{fp + "backups.retainedBackups", "must be between 1 and 365"},
		},
		"BackupLocationRegion": {mutate: func(p *params) { p.Backups.Location = "europe-west1" }},
		"BackupLocationBad": {
			mutate: func(p *params) { p.Backups.Location = "Europe West" },
			want:   []string{fp + "backups.location", "must be a multi-region such as eu or us"},
		},

		// flags
		"FlagsValid":     {mutate: func(p *params) { p.Flags = []string{"autovacuum=on", "cloudsql.iam_authentication=on"} }},
		"FlagsNoValue":   {mutate: func(p *params) { p.Flags = []string{"autovacuum"} }, want: []string{fp + "flags[0]", "each flag must be written as name=value"}},
		"FlagsBadName":   {mutate: func(p *params) { p.Flags = []string{"Auto Vacuum=on"} }, want: []string{fp + "flags[0]", "name=value"}},
		"FlagsDuplicate": {mutate: func(p *params) { p.Flags = []string{"autovacuum=on", "autovacuum=off"} }, want: []string{fp + "flags", "each flag name may appear only once"}},
		"LabelsValid": {mutate: func(p *params) {
			p.Labels = map[string]v1alpha1.LabelValue{"team": "payments", "cost_center": "42", "empty": ""}
		}},
		"LabelsOwnerOurs":  {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"owner": "cloudsql-postgres-operator"} }},
		"LabelsOwnerOther": {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"owner": "alice"} }, want: []string{fp + "labels", "the owner label is reserved"}},
		"LabelsOwnerUid":   {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"owner-uid": "x"} }, want: []string{fp + "labels", "the owner-uid label is reserved"}},
		"LabelsKeyUpper":   {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"Team": "payments"} }, want: []string{fp + "labels", "label keys must start with a lowercase letter"}},
		"LabelsKeyDigit":   {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"1team": "payments"} }, want: []string{fp + "labels", "label keys must start with a lowercase letter"}},
		"LabelsValueUpper": {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"team": "Payments"} }, want: []string{fp + "labels.team", "should match"}},
		"LabelsValueLong": {mutate: func(p *params) {
			p.Labels = map[string]v1alpha1.LabelValue{"team": v1alpha1.LabelValue(strings.Repeat("a", 64))}
		}, want: []string{fp + "labels.team", "63"}},
		"Labels62": {mutate: func(p *params) { p.Labels = labels(62) }},
		"Labels62AndOwner": {mutate: func(p *params) {
			p.Labels = labels(62)
			p.Labels["owner"] = "cloudsql-postgres-operator"
		}},
		"Labels63":         {mutate: func(p *params) { p.Labels = labels(63) }, want: []string{fp + "labels", "at most 62 labels besides owner: Cloud SQL allows 64 labels"}},
		"LabelsTooManyKey": {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"k" + strings.Repeat("a", 63): "v"} }, want: []string{fp + "labels", "at most 63"}},

		// location
		"LocationZone":         {mutate: func(p *params) { p.Location = v1alpha1.Location{Region: "europe-west4", Zone: "europe-west4-b"} }},
		"LocationRegionBad":    {mutate: func(p *params) { p.Location.Region = "Europe" }, want: []string{fp + "location.region", "must be a Google Cloud region such as europe-west1"}},
		"LocationZoneBad":      {mutate: func(p *params) { p.Location.Zone = "europe-west1" }, want: []string{fp + "location.zone", "must be Any or a Google Cloud zone"}},
		"LocationZoneMismatch": {mutate: func(p *params) { p.Location.Zone = "us-east1-b" }, want: []string{fp + "location.zone", "must be Any or a zone of region europe-west1, for example europe-west1-b"}},

		// maintenance
		"MaintenanceDayHour":     {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Saturday", Hour: "16:00"} }},
		"MaintenanceDayOnly":     {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Monday"} }},
		"MaintenanceDayUnknown":  {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Funday", Hour: "04:00"} }, want: []string{fp + "maintenance.day", `Unsupported value: "Funday"`}},
		"MaintenanceAnyWithHour": {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Any", Hour: "16:00"} }, want: []string{fp + "maintenance.hour", "must be Any while maintenance.day is Any"}},
		"MaintenanceDayAnyHour":  {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Sunday", Hour: "Any"} }, want: []string{fp + "maintenance.hour", "must be a full hour (hh:00, UTC) when maintenance.day is a weekday"}},
		"MaintenanceHourFormat":  {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Sunday", Hour: "4:00"} }, want: []string{fp + "maintenance.hour", "must be Any or a full hour"}},
		"UpdateTrackWeek5":       {mutate: func(p *params) { p.Maintenance.UpdateTrack = "week5" }},
		"UpdateTrackUnknown":     {mutate: func(p *params) { p.Maintenance.UpdateTrack = "production" }, want: []string{fp + "maintenance.updateTrack", `Unsupported value: "production"`}},
		"DenyYearly":             {mutate: deny(v1alpha1.DenyPeriod{StartDate: "12-15", EndDate: "01-05"})},
		"DenyDated90Days":        {mutate: deny(v1alpha1.DenyPeriod{StartDate: "2026-01-01", EndDate: "2026-04-01", Time: "01:00:00"})},
		"DenyDated91Days": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "2026-01-01", EndDate: "2026-04-02"}),
			want: []string{fp + "maintenance.denyPeriods[0].endDate", "at most 90 days later, as Cloud SQL allows"}},
		"DenyDatedBackwards": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "2026-05-01", EndDate: "2026-04-01"}),
			want: []string{fp + "maintenance.denyPeriods[0].endDate", "must be on or after startDate"}},
		"DenyYearlyTooLong": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "10-01", EndDate: "01-31"}),
			want: []string{fp + "maintenance.denyPeriods[0].endDate", "a yearly period (mm-dd) may last at most 90 days"}},
		"DenyYearInOneDate": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "2026-12-01", EndDate: "12-20"}),
			want: []string{fp + "maintenance.denyPeriods[0].endDate", "must both carry a year"}},
		"DenyBadDate": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "12-1", EndDate: "12-20"}),
			want: []string{fp + "maintenance.denyPeriods[0].startDate", "must be a date that exists, yyyy-mm-dd, or mm-dd"}},
		"DenyNoSuchDay": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "02-30", EndDate: "03-20"}),
			want: []string{fp + "maintenance.denyPeriods[0].startDate", "must be a date that exists"}},
		"DenyNoSuchDayDated": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "2026-04-01", EndDate: "2026-04-31"}),
			want: []string{fp + "maintenance.denyPeriods[0].endDate", "must be a date that exists"}},
		"DenyYearlyLeapDay":             {mutate: deny(v1alpha1.DenyPeriod{StartDate: "02-29", EndDate: "03-05"})},
		"DenyYearlyAcrossNewYear90Days": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "11-02", EndDate: "01-31"})},
		"DenyBadTime": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "12-01", EndDate: "12-20", Time: "1:00"}),
			want: []string{fp + "maintenance.denyPeriods[0].time", "must be a UTC time hh:mm:ss"}},
		"DenyTwoPeriods": {mutate: deny(v1alpha1.DenyPeriod{StartDate: "12-01", EndDate: "12-20"}, v1alpha1.DenyPeriod{StartDate: "06-01", EndDate: "06-20"}),
			want: []string{fp + "maintenance.denyPeriods", "must have at most 1 item"}},

		// networking
		"NetworkingNone": {mutate: func(p *params) { p.Networking.PublicIP.Enabled = false }, want: []string{fp + "networking", "enable at least one of networking.publicIp and networking.privateIp"}},
		"NetworkingPrivateOnly": {mutate: func(p *params) {
			p.Networking = v1alpha1.Networking{PrivateIP: v1alpha1.PrivateIP{Enabled: true, Network: "projects/my-project-123/global/networks/default"}}
		}},
		"NetworkingPrivateNoNetwork": {mutate: func(p *params) { p.Networking.PrivateIP.Enabled = true }, want: []string{fp + "networking.privateIp.network", "is required when privateIp.enabled is true"}},
		"NetworkingPrivateBadNetwork": {mutate: func(p *params) {
			p.Networking.PrivateIP = v1alpha1.PrivateIP{Enabled: true, Network: "default"}
		}, want: []string{fp + "networking.privateIp.network", "must be a VPC network resource link: projects/<project-id>/global/networks/<network-name>"}},
		"NetworkingNetworkWhileDisabled": {mutate: func(p *params) {
			p.Networking.PrivateIP.Network = "projects/my-project-123/global/networks/default"
		}, want: []string{fp + "networking.privateIp.network", "may only be set when privateIp.enabled is true"}},
		"NetworkingAuthorized": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "30.60.90.120/32", Name: "alice"}, {CIDR: "120.90.60.0/24"}}
		}},
		"NetworkingCidrInvalid": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "300.1.1.1/32"}}
		}, want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "must be an IPv4 network in CIDR notation"}},
		"NetworkingCidrNoPrefix": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "1.2.3.4"}}
		}, want: []string{"authorizedNetworks[0].cidr", "CIDR notation"}},
		"NetworkingCidrIpv6": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "2001:db8::/32"}}
		}, want: []string{"authorizedNetworks[0].cidr", "must be an IPv4 network"}},
		"NetworkingCidrHostBits": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "120.90.60.5/24"}}
		}, want: []string{"authorizedNetworks[0].cidr", "has host bits set"}},
		"NetworkingCidrDuplicate": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "10.0.0.0/8", Name: "a"}, {CIDR: "10.0.0.0/8", Name: "b"}}
		}, want: []string{"authorizedNetworks[1]", "Duplicate value"}},

		// disk
		"DiskGrowBounded": {mutate: func(p *params) { p.Resources.Disk = v1alpha1.Disk{SizeMinimumGb: 20, SizeMaximumGb: 40} }},
		"DiskNoGrowth":    {mutate: func(p *params) { p.Resources.Disk = v1alpha1.Disk{SizeMinimumGb: 20, SizeMaximumGb: 20} }},
		"DiskTooSmall":    {mutate: func(p *params) { p.Resources.Disk.SizeMinimumGb = 5 }, want: []string{fp + "resources.disk.sizeMinimumGb", "greater than or equal to 10"}},
		"DiskMaxBelowMin": {mutate: func(p *params) { p.Resources.Disk = v1alpha1.Disk{SizeMinimumGb: 20, SizeMaximumGb: 15} },
			want: []string{fp + "resources.disk.sizeMaximumGb", "must be 0 (grow without limit) or at least sizeMinimumGb"}},
		"DiskMaxNegative": {mutate: func(p *params) { p.Resources.Disk.SizeMaximumGb = -1 }, want: []string{fp + "resources.disk.sizeMaximumGb", "greater than or equal to 0"}},
		"DiskTypeHdd":     {mutate: func(p *params) { p.Resources.Disk.Type = "HDD" }},
		"DiskTypeUnknown": {mutate: func(p *params) { p.Resources.Disk.Type = "NVMe" }, want: []string{fp + "resources.disk.type", `Unsupported value: "NVMe"`}},

		// instance type
		"TypeMicro":     {mutate: func(p *params) { p.Resources.InstanceType = "db-f1-micro" }},
		"TypeSmall":     {mutate: func(p *params) { p.Resources.InstanceType = "db-g1-small" }},
		"TypeCustom2":   {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-2-7680" }},
		"TypeCustom96":  {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-96-638976" }},
		"TypeUnknown":   {mutate: func(p *params) { p.Resources.InstanceType = "db-n1-standard-1" }, want: []string{fp + "resources.instanceType", "must be db-f1-micro, db-g1-small, db-custom-<vCPUs>-<MiB>"}},
		"TypeOddVcpus":  {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-3-7680" }, want: []string{fp + "resources.instanceType", "has 3 vCPUs: a custom machine has 1 vCPU or an even number of vCPUs up to 96"}},
		"TypeManyVcpus": {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-98-200704" }, want: []string{fp + "resources.instanceType", "has 98 vCPUs"}},
		"TypeNot256":    {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-2-7000" }, want: []string{fp + "resources.instanceType", "has 7000 MiB of memory: memory must be a multiple of 256 MiB"}},
		"TypeBelow3840": {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-1-3584" }, want: []string{fp + "resources.instanceType", "a custom machine needs at least 3840 MiB"}},
		"TypeTooMuch":   {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-1-7168" }, want: []string{fp + "resources.instanceType", "has 7168 MiB for 1 vCPUs: memory must be between 0.9 GiB (921.6 MiB) and 6.5 GiB (6656 MiB) per vCPU"}},
		"TypeTooLittle": {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-96-65536" }, want: []string{fp + "resources.instanceType", "has 65536 MiB for 96 vCPUs"}},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			meta := tc.meta
			if meta == "" {
				meta = objectName("create-", name)
			}
			pi := instance(meta)
			if tc.mutate != nil {
				tc.mutate(&pi.Spec.ForProvider)
			}
			err := env.Client.Create(context.Background(), pi)
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}
}

// deny sets the deny maintenance periods.
func deny(periods ...v1alpha1.DenyPeriod) func(p *v1alpha1.PostgresqlInstanceParameters) {
	return func(p *v1alpha1.PostgresqlInstanceParameters) { p.Maintenance.DenyPeriods = &periods }
}

func TestUpdateValidation(t *testing.T) {
	controlplane.Need(t)
	type params = v1alpha1.PostgresqlInstanceParameters
	const fp = "spec.forProvider."
	withName := func(p *params) { p.Name = ptr.To("original-name") }
	withDisk := func(p *params) { p.Resources.Disk.SizeMinimumGb = 20 }
	withPrivate := func(p *params) {
		p.Networking.PrivateIP = v1alpha1.PrivateIP{Enabled: true, Network: "projects/my-project-123/global/networks/default"}
	}
	cases := map[string]struct {
		initial func(p *params)
		update  func(p *params)
		want    []string
	}{
		"NameChanged":      {initial: withName, update: func(p *params) { p.Name = ptr.To("other-name") }, want: []string{fp + "name", "is immutable: the Cloud SQL instance is named original-name"}},
		"NameRemoved":      {initial: withName, update: func(p *params) { p.Name = nil }, want: []string{fp + "name", "cannot be added or removed after creation"}},
		"NameAdded":        {update: func(p *params) { p.Name = ptr.To("late-name") }, want: []string{fp + "name", "cannot be added or removed after creation"}},
		"VersionDown":      {update: func(p *params) { p.Version = "17" }, want: []string{fp + "version", "cannot go down (was 18)", "never downgrades", "spec.forProvider.source"}},
		"VersionUp":        {initial: func(p *params) { p.Version = "15" }, update: func(p *params) { p.Version = "16" }},
		"VersionUpFrom96":  {initial: func(p *params) { p.Version = "9.6" }, update: func(p *params) { p.Version = "10" }},
		"VersionDownTo96":  {initial: func(p *params) { p.Version = "10" }, update: func(p *params) { p.Version = "9.6" }, want: []string{fp + "version", "cannot go down (was 10)"}},
		"SourceAdded":      {update: func(p *params) { p.Source = &v1alpha1.Source{Instance: "orders"} }, want: []string{fp + "source", "is immutable"}},
		"SourceChanged":    {initial: func(p *params) { p.Source = &v1alpha1.Source{Instance: "orders"} }, update: func(p *params) { p.Source.Instance = "billing" }, want: []string{fp + "source", "is immutable"}},
		"SourceRemoved":    {initial: func(p *params) { p.Source = &v1alpha1.Source{Instance: "orders"} }, update: func(p *params) { p.Source = nil }, want: []string{fp + "source", "is immutable"}},
		"RegionChanged":    {update: func(p *params) { p.Location.Region = "europe-west4" }, want: []string{fp + "location.region", "is immutable (was europe-west1)"}},
		"ZoneChanged":      {update: func(p *params) { p.Location.Zone = "europe-west1-c" }},
		"DiskTypeChanged":  {update: func(p *params) { p.Resources.Disk.Type = "HDD" }, want: []string{fp + "resources.disk.type", "is immutable (was SSD)"}},
		"DiskGrown":        {initial: withDisk, update: func(p *params) { p.Resources.Disk.SizeMinimumGb = 30 }},
		"DiskShrunk":       {initial: withDisk, update: func(p *params) { p.Resources.Disk.SizeMinimumGb = 15 }, want: []string{fp + "resources.disk.sizeMinimumGb", "may be increased, never decreased"}},
		"PrivateDisabled":  {initial: withPrivate, update: func(p *params) { p.Networking.PrivateIP.Enabled = false; p.Networking.PublicIP.Enabled = true }, want: []string{fp + "networking.privateIp.enabled", "cannot go back to false"}},
		"PrivateEnabled":   {update: withPrivate},
		"NetworkChanged":   {initial: withPrivate, update: func(p *params) { p.Networking.PrivateIP.Network = "projects/my-project-123/global/networks/other" }},
		"NetworkRemoved":   {initial: withPrivate, update: func(p *params) { p.Networking.PrivateIP.Network = "" }, want: []string{fp + "networking.privateIp.network", "may be changed but not removed (was projects/my-project-123/global/networks/default)"}},
		"EditionUpgraded":  {update: func(p *params) { p.Edition = "EnterprisePlus"; p.Resources.InstanceType = "db-perf-optimized-N-2" }},
		"TypeChanged":      {update: func(p *params) { p.Resources.InstanceType = "db-custom-4-15360" }},
		"FlagsChanged":     {update: func(p *params) { p.Flags = []string{"max_connections=200"} }},
		"AvailabilityToHa": {update: func(p *params) { p.Availability.Type = "Regional" }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			pi := instance(objectName("update-", name))
			if tc.initial != nil {
				tc.initial(&pi.Spec.ForProvider)
			}
			g.Expect(env.Client.Create(ctx, pi)).To(Succeed())
			tc.update(&pi.Spec.ForProvider)
			err := env.Client.Update(ctx, pi)
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}
}

// While a PostgresqlInstance only observes its Cloud SQL instance (an import),
// the fields that are otherwise immutable may be corrected to describe it; once
// the provider may change the instance, they are locked.
func TestImmutableFieldsCanBeCorrectedWhileObserving(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	pi := instance("import-fix")
	pi.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	g.Expect(env.Client.Create(ctx, pi)).To(Succeed())

	pi.Spec.ForProvider.Version = "15"
	pi.Spec.ForProvider.Location.Region = "us-central1"
	pi.Spec.ForProvider.Resources.Disk.Type = v1alpha1.DiskTypeHDD
	pi.Spec.ForProvider.Name = ptr.To("legacy-db")
	pi.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	g.Expect(env.Client.Update(ctx, pi)).To(Succeed())

	pi.Spec.ForProvider.Version = "14"
	denied(g, env.Client.Update(ctx, pi), "spec.forProvider.version", "cannot go down (was 15)")
}

func TestProviderConfigValidation(t *testing.T) {
	controlplane.Need(t)
	secretRef := &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "crossplane-system", Name: "key"}, Key: "key.json"}
	cases := map[string]struct {
		spec v1alpha1.ProviderConfigSpec
		want []string
	}{
		"Secret": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{
			Source: xpv2.CredentialsSourceSecret, CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: secretRef}}}},
		"InjectedIdentityWithEndpointAndProxy": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "example.com:my-project", Endpoint: "http://127.0.0.1:8085/"},
			Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}, ProxyCredentials: secretRef}},
		"NoneWithEndpoint": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123", Endpoint: "http://127.0.0.1:8085/"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}}},
		"NoneWithoutEndpoint": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}},
			want: []string{"spec.credentials.source", "None is only allowed together with spec.endpoint"}},
		"SecretWithoutRef": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceSecret}},
			want: []string{"spec.credentials.secretRef", "is required when source is Secret"}},
		"EnvironmentWithoutEnv": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceEnvironment}},
			want: []string{"spec.credentials.env", "is required when source is Environment"}},
		"FilesystemWithoutFs": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceFilesystem}},
			want: []string{"spec.credentials.fs", "is required when source is Filesystem"}},
		"SourceUnknown": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: "Magic"}},
			want: []string{"spec.credentials.source", `Unsupported value: "Magic"`}},
		"ProjectDisplayName": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "My Project"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"spec.projectID", "must be a Google Cloud project ID"}},
		"ProjectNumber": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "123456789012"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"spec.projectID", "not the project number"}},
		"ProjectMissing": {spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"spec.projectID"}},
		"LongName": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"metadata.name may hold at most 63 characters"}},
		"EndpointNotUrl": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123", Endpoint: "ftp://example.com/"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"spec.endpoint", "must be an http:// or https:// URL"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			if name == "LongName" {
				name = strings.Repeat("a", 64)
			}
			pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: objectName("pc-", name)}, Spec: tc.spec}
			err := env.Client.Create(context.Background(), pc)
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}
}

func TestInjectionValidation(t *testing.T) {
	controlplane.Need(t)
	const f = "spec.injection."
	sel := func(exprs ...metav1.LabelSelectorRequirement) *v1alpha1.Injection {
		return &v1alpha1.Injection{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: exprs}}
	}
	cases := map[string]struct {
		injection *v1alpha1.Injection
		want      []string
	}{
		"Names":           {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"team-a", "team-b"}}},
		"Star":            {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"*"}}},
		"EmptyAllowsNone": {injection: &v1alpha1.Injection{}},
		"StarAndNames": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"*", "team-a"}},
			want: []string{f + "allowedNamespaces", "list either '*' alone or namespace names"}},
		"BadName": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"Team_A"}},
			want: []string{f + "allowedNamespaces[0]", "must be a namespace name"}},
		"LongName": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{strings.Repeat("a", 64)}},
			want: []string{f + "allowedNamespaces[0]", "63"}},
		"DuplicateName": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"team-a", "team-a"}},
			want: []string{f + "allowedNamespaces[1]", "Duplicate value"}},
		"SelectorLabels": {injection: &v1alpha1.Injection{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "payments"}}}},
		"SelectorIn":     {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}})},
		"SelectorExists": {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpExists})},
		"NamesAndSelector": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"team-a"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "payments"}}}},
		"SelectorBadOperator": {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: "Equals", Values: []string{"a"}}),
			want: []string{f + "namespaceSelector.matchExpressions", "each operator must be In, NotIn, Exists or DoesNotExist"}},
		"SelectorInNoValues": {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpNotIn}),
			want: []string{f + "namespaceSelector.matchExpressions", "operators In and NotIn need at least one value"}},
		"SelectorExistsValues": {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpExists, Values: []string{"a"}}),
			want: []string{f + "namespaceSelector.matchExpressions", "operators Exists and DoesNotExist take no values"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			pi := instance(objectName("injection-", name))
			pi.Spec.Injection = tc.injection
			err := env.Client.Create(context.Background(), pi)
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				got := &v1alpha1.PostgresqlInstance{}
				g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(pi), got)).To(Succeed())
				// An empty injection must survive the round trip: it means "no namespace",
				// unlike an absent one, which means "the provider's default".
				g.Expect(got.Spec.Injection).To(Equal(tc.injection))
				return
			}
			denied(g, err, tc.want...)
		})
	}
}

// TestExamplesAreAccepted creates every manifest under examples/ (but compositions,
// whose kinds come from Crossplane) so that what users copy is known to be valid.
func TestExamplesAreAccepted(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "crossplane-system"}})).To(Succeed())

	files, err := filepath.Glob(filepath.Join(controlplane.RepoRoot(), "examples", "*.yaml"))
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(files).ToNot(BeEmpty())
	namespaced, err := filepath.Glob(filepath.Join(controlplane.RepoRoot(), "examples", "namespaced", "*.yaml"))
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(namespaced).To(HaveLen(8))
	files = append(files, namespaced...)
	// The namespaced examples are a team's, in its namespace.
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})).To(Succeed())
	for _, f := range files {
		objs, err := manifests.ReadFile(f)
		g.Expect(err).ToNot(HaveOccurred())
		for _, u := range objs {
			g.Expect(env.Client.Create(ctx, u)).To(Succeed(), "%s: %s %s", filepath.Base(f), u.GetKind(), u.GetName())
		}
	}
}

// TestKubectlExplain checks what `kubectl explain` shows users for the resources.
func TestKubectlExplain(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	path, args, err := env.KubectlArgs()
	g.Expect(err).NotTo(HaveOccurred())
	explain := func(field string) func() (string, error) {
		return func() (string, error) {
			out, err := exec.Command(path, append(args, "explain", field)...).CombinedOutput()
			return string(out), err
		}
	}
	// The API server publishes a new CRD's OpenAPI schema a moment after installing it.
	g.Eventually(explain("postgresqlinstance.spec.forProvider.resources"), 30*time.Second, 250*time.Millisecond).Should(And(
		ContainSubstring("Resources are the machine type and storage of the instance"),
		ContainSubstring("instanceType"),
		ContainSubstring("db-custom-<vCPUs>-<MiB>"),
		ContainSubstring("Disk configures storage"),
	))
	g.Expect(explain("postgresqlinstance.spec.forProvider.resources.disk.sizeMinimumGb")()).To(ContainSubstring("It may be increased,"))
	g.Expect(explain("postgresqlinstance.spec.forProvider.deletionProtection")()).To(And(
		ContainSubstring("settings.deletionProtectionEnabled"), ContainSubstring("cloudsql.travelaudience.com/allow-deletion")))
	g.Expect(explain("postgresqlinstance.spec.forProvider.backups.finalBackup.retentionDays")()).To(ContainSubstring("1 to 365"))
	g.Eventually(explain("postgresqlbackups.cloudsql.travelaudience.com.status.atProvider.sizeBytes"), 30*time.Second, 250*time.Millisecond).Should(
		ContainSubstring("maxChargeableBytes"))
	g.Expect(explain("postgresqlbackups.cloudsql.m.travelaudience.com")()).To(And(
		ContainSubstring("an on-demand backup, belonging to a namespace"), ContainSubstring("cloudsql.travelaudience.com/allow-deletion")))
}

func TestMaintenanceEffectiveHour(t *testing.T) {
	cases := map[string]struct {
		m    v1alpha1.Maintenance
		want string
	}{
		"Any":            {m: v1alpha1.Maintenance{Day: "Any", Hour: "Any"}, want: "Any"},
		"Unset":          {m: v1alpha1.Maintenance{}, want: "Any"},
		"DayWithoutHour": {m: v1alpha1.Maintenance{Day: "Saturday"}, want: "04:00"},
		"DayWithHour":    {m: v1alpha1.Maintenance{Day: "Saturday", Hour: "16:00"}, want: "16:00"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(tc.m.EffectiveHour()).To(Equal(tc.want))
		})
	}
}

// labels is n distinct valid labels.
func labels(n int) map[string]v1alpha1.LabelValue {
	l := map[string]v1alpha1.LabelValue{}
	for i := range n {
		l[fmt.Sprintf("label-%d", i)] = "v"
	}
	return l
}

// The new kinds are what crossplane-runtime's managed reconciler takes, with
// spec.deletionPolicy honoured (resource.LegacyManaged), and what its reference
// resolution calls.
var (
	//lint:ignore SA1019 the cluster-scoped kinds are legacy managed resources in crossplane-runtime v2: only those have spec.deletionPolicy honoured
	_ resource.LegacyManaged = &v1alpha1.PostgresqlDatabase{}
	//lint:ignore SA1019 as above
	_ resource.LegacyManaged = &v1alpha1.PostgresqlUser{}
	//lint:ignore SA1019 as above
	_ resource.LegacyManaged = &v1alpha1.PostgresqlBackup{}
	_ resource.ManagedList   = &v1alpha1.PostgresqlDatabaseList{}
	_ resource.ManagedList   = &v1alpha1.PostgresqlUserList{}
	_ resource.ManagedList   = &v1alpha1.PostgresqlBackupList{}
	_ interface {
		ResolveReferences(ctx context.Context, c client.Reader) error
	} = &v1alpha1.PostgresqlBackup{}
	_ interface {
		ResolveReferences(ctx context.Context, c client.Reader) error
	} = &v1alpha1.PostgresqlDatabase{}
	_ interface {
		ResolveReferences(ctx context.Context, c client.Reader) error
	} = &v1alpha1.PostgresqlUser{}
)

// database is the smallest valid PostgresqlDatabase, changed by fns.
func database(name string, fns ...func(p *v1alpha1.PostgresqlDatabaseParameters)) *v1alpha1.PostgresqlDatabase {
	db := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: name}}
	db.Spec.ForProvider.Instance = "shared"
	for _, fn := range fns {
		fn(&db.Spec.ForProvider)
	}
	return db
}

// user is the smallest valid BUILT_IN PostgresqlUser, changed by fns.
func user(name string, fns ...func(p *v1alpha1.PostgresqlUserParameters)) *v1alpha1.PostgresqlUser {
	u := &v1alpha1.PostgresqlUser{ObjectMeta: metav1.ObjectMeta{Name: name}}
	u.Spec.WriteConnectionSecretToReference = &xpv2.SecretReference{Namespace: "crossplane-system", Name: name + "-credentials"}
	u.Spec.ForProvider.Instance = "shared"
	for _, fn := range fns {
		fn(&u.Spec.ForProvider)
	}
	return u
}

// iamServiceAccount makes a user a CLOUD_IAM_SERVICE_ACCOUNT user.
func iamServiceAccount(p *v1alpha1.PostgresqlUserParameters) {
	p.Type = v1alpha1.UserTypeCloudIAMServiceAccount
	p.IAMPrincipal = "app@my-project-123.iam.gserviceaccount.com"
}

func TestDatabaseAndUserDefaults(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()

	db := database("defaults")
	g.Expect(env.Client.Create(ctx, db)).To(Succeed())
	g.Expect(db.Spec.ForProvider.Name).To(BeNil(), "the name defaults to metadata.name in the provider, not in the API server")
	g.Expect(db.Spec.ForProvider.Charset).To(Equal(v1alpha1.DefaultCharset))
	g.Expect(db.Spec.ForProvider.Collation).To(Equal(v1alpha1.DefaultCollation))
	g.Expect(db.Spec.ManagementPolicies).To(Equal(xpv2.ManagementPolicies{xpv2.ManagementActionAll}))
	g.Expect(db.Spec.DeletionPolicy).To(Equal(xpv2.DeletionDelete))
	g.Expect(db.Spec.WriteConnectionSecretToReference).To(BeNil(), "a database needs no connection secret")
	g.Expect(db.GetProviderConfigReference()).To(BeNil(), "a database's project and credentials are its instance's")
	g.Expect(db.InstanceKey()).To(Equal(types.NamespacedName{Name: "shared"}))

	u := user("defaults")
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	g.Expect(u.Spec.ForProvider.Type).To(Equal(v1alpha1.UserTypeBuiltIn))
	g.Expect(u.Spec.ForProvider.Name).To(BeNil())
	g.Expect(u.Spec.ForProvider.Injection).To(BeNil())
	g.Expect(u.Spec.ManagementPolicies).To(Equal(xpv2.ManagementPolicies{xpv2.ManagementActionAll}))
	g.Expect(u.Spec.DeletionPolicy).To(Equal(xpv2.DeletionDelete))
	g.Expect(u.ConnectionSecret()).To(Equal(&xpv2.SecretReference{Namespace: "crossplane-system", Name: "defaults-credentials"}))
	g.Expect(u.Settings()).To(BeIdenticalTo(&u.Spec.ForProvider.PostgresqlUserSettings))
}

func TestDatabaseAndUserCreateValidation(t *testing.T) {
	controlplane.Need(t)
	const fp = "spec.forProvider."
	cases := map[string]struct {
		object client.Object
		// want is empty for objects the API server must accept, else every fragment
		// of the expected denial.
		want []string
	}{
		// A database's name: metadata.name when it is a valid one.
		"DatabaseHyphen":            {object: database("orders-db")},
		"DatabaseMetadataDigit":     {object: database("1orders"), want: []string{fp + "name", "is required when metadata.name is not a valid database name"}},
		"DatabaseNamed":             {object: database("team.orders", func(p *v1alpha1.PostgresqlDatabaseParameters) { p.Name = ptr.To("team_orders$1") })},
		"DatabaseMetadataDots":      {object: database("team.orders"), want: []string{fp + "name", "is required when metadata.name is not a valid database name", "name the database here"}},
		"DatabaseMetadataLong":      {object: database(strings.Repeat("d", 64)), want: []string{fp + "name", "is required when metadata.name is not a valid database name"}},
		"DatabaseMetadataPostgres":  {object: database("postgres"), want: []string{fp + "name", "is required when metadata.name is not a valid database name", "not postgres, template0, template1 or cloudsqladmin"}},
		"DatabaseMetadataTemplate1": {object: database("template1"), want: []string{fp + "name", "is required when metadata.name is not a valid database name"}},
		"DatabasePostgresRenamed":   {object: database("postgres", func(p *v1alpha1.PostgresqlDatabaseParameters) { p.Name = ptr.To("app") })},
		"DatabaseCharsetLatin1": {object: database("latin", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.Charset = "LATIN1"
			p.Collation = "C"
		})},
		"DatabaseByReference": {object: database("by-ref", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.Instance = ""
			p.InstanceRef = &xpv2.Reference{Name: "shared"}
			p.OwnerSelector = &xpv2.Selector{MatchLabels: map[string]string{"app": "orders"}}
		})},
		"DatabaseBySelector": {object: database("by-selector", func(p *v1alpha1.PostgresqlDatabaseParameters) {
			p.Instance = ""
			p.InstanceSelector = &xpv2.Selector{MatchLabels: map[string]string{"tier": "shared"}}
		})},

		// A user's name.
		"UserMetadataPostgres": {object: user("postgres"), want: []string{fp + "name", "is required when metadata.name is not a valid login name", "not postgres, not starting with cloudsql"}},
		"UserMetadataCloudsql": {object: user("cloudsql-app"), want: []string{fp + "name", "is required when metadata.name is not a valid login name"}},
		"UserMetadataDots":     {object: user("team.app"), want: []string{fp + "name", "name the login here"}},
		"UserNamed":            {object: user("team.app", func(p *v1alpha1.PostgresqlUserParameters) { p.Name = ptr.To("team_app") })},
		// An IAM user's login follows from its principal: metadata.name may be any name.
		"UserIamMetadataDots": {object: user("team.app-sa", iamServiceAccount)},
		"UserIamPerson": {object: user("jane", func(p *v1alpha1.PostgresqlUserParameters) {
			p.Type = v1alpha1.UserTypeCloudIAMUser
			p.IAMPrincipal = "jane.doe@example.com"
		})},
		"UserIamNoSecret": {object: func() client.Object {
			u := user("iam-no-secret", iamServiceAccount)
			u.Spec.WriteConnectionSecretToReference = nil
			return u
		}()},
		"UserBuiltInObservedNoSecret": {object: func() client.Object {
			u := user("observed-no-secret")
			u.Spec.WriteConnectionSecretToReference = nil
			u.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
			return u
		}()},
		"UserBuiltInNoSecret": {object: func() client.Object {
			u := user("no-secret")
			u.Spec.WriteConnectionSecretToReference = nil
			return u
		}(), want: []string{"spec.writeConnectionSecretToRef", "is required for a BUILT_IN user the provider may create"}},
		"UserNarrowerInjection": {object: user("narrow", func(p *v1alpha1.PostgresqlUserParameters) {
			p.Injection = &v1alpha1.UserInjection{AllowedNamespaces: []string{"team-a", "team-b"}}
		})},
		"UserEmptyInjection": {object: user("empty-injection", func(p *v1alpha1.PostgresqlUserParameters) {
			p.Injection = &v1alpha1.UserInjection{}
		})},
		"UserRotation": {object: user("rotates", func(p *v1alpha1.PostgresqlUserParameters) {
			p.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: 24 * time.Hour}}
		})},
		"UserRotationTooOften": {object: user("rotates-often", func(p *v1alpha1.PostgresqlUserParameters) {
			p.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: time.Minute}}
		}), want: []string{fp + "passwordRotation.period", "must be at least 1h"}},
		"UserIamRotation": {object: user("iam-rotates", iamServiceAccount, func(p *v1alpha1.PostgresqlUserParameters) {
			p.PasswordRotation = &v1alpha1.PasswordRotation{Period: metav1.Duration{Duration: 24 * time.Hour}}
		}), want: []string{fp + "passwordRotation", "must be omitted for CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER users, which have no password"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(context.Background(), tc.object)
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}
}

func TestDatabaseAndUserUpdateValidation(t *testing.T) {
	controlplane.Need(t)
	const fp = "spec.forProvider."
	type dbParams = v1alpha1.PostgresqlDatabaseParameters
	type userParams = v1alpha1.PostgresqlUserParameters
	dbName := func(p *dbParams) { p.Name = ptr.To("orders") }
	userName := func(p *userParams) { p.Name = ptr.To("orders_app") }
	dbCases := map[string]struct {
		initial func(p *dbParams)
		update  func(p *dbParams)
		want    []string
	}{
		"NameChanged":      {initial: dbName, update: func(p *dbParams) { p.Name = ptr.To("invoices") }, want: []string{fp + "name", "is immutable: the database is named orders; create a new PostgresqlDatabase to use another name"}},
		"NameRemoved":      {initial: dbName, update: func(p *dbParams) { p.Name = nil }, want: []string{fp + "name", "cannot be added or removed after creation"}},
		"NameAdded":        {update: dbName, want: []string{fp + "name", "cannot be added or removed after creation"}},
		"CharsetChanged":   {update: func(p *dbParams) { p.Charset = "LATIN1" }, want: []string{fp + "charset", "is immutable (was UTF8): PostgreSQL cannot change the character set of a database"}},
		"CollationChanged": {update: func(p *dbParams) { p.Collation = "C" }, want: []string{fp + "collation", "is immutable (was en_US.UTF8): PostgreSQL cannot change the collation of a database"}},
		"InstanceChanged":  {update: func(p *dbParams) { p.Instance = "other" }, want: []string{fp + "instance", "cannot be changed or removed once set (was shared): a database cannot move to another instance"}},
		"InstanceRemoved": {update: func(p *dbParams) { p.Instance = ""; p.InstanceRef = &xpv2.Reference{Name: "shared"} },
			want: []string{fp + "instance", "cannot be changed or removed once set (was shared)"}},
		"OwnerChanged": {update: func(p *dbParams) { p.Owner = "other-app" }},
		"OwnerSet":     {update: func(p *dbParams) { p.OwnerRef = &xpv2.Reference{Name: "app"} }},
	}
	for name, tc := range dbCases {
		t.Run("Database"+name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			db := database(objectName("update-", name))
			if tc.initial != nil {
				tc.initial(&db.Spec.ForProvider)
			}
			g.Expect(env.Client.Create(ctx, db)).To(Succeed())
			tc.update(&db.Spec.ForProvider)
			err := env.Client.Update(ctx, db)
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}

	userCases := map[string]struct {
		initial func(p *userParams)
		update  func(p *userParams)
		want    []string
	}{
		"NameChanged": {initial: userName, update: func(p *userParams) { p.Name = ptr.To("other") }, want: []string{fp + "name", "is immutable: the login is named orders_app; create a new PostgresqlUser to use another name"}},
		"NameAdded":   {update: userName, want: []string{fp + "name", "cannot be added or removed after creation"}},
		"TypeChanged": {update: iamServiceAccount, want: []string{fp + "type", "is immutable (was BUILT_IN): create a new PostgresqlUser for another type of login"}},
		"PrincipalChanged": {initial: iamServiceAccount, update: func(p *userParams) { p.IAMPrincipal = "other@my-project-123.iam.gserviceaccount.com" },
			want: []string{fp + "iamPrincipal", "is immutable: the login's name follows from it"}},
		"InstanceChanged":  {update: func(p *userParams) { p.Instance = "other" }, want: []string{fp + "instance", "cannot be changed or removed once set (was shared): a login cannot move to another instance"}},
		"InjectionNarrows": {update: func(p *userParams) { p.Injection = &v1alpha1.UserInjection{AllowedNamespaces: []string{"team-a"}} }},
	}
	for name, tc := range userCases {
		t.Run("User"+name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			u := user(objectName("update-", name))
			if tc.initial != nil {
				tc.initial(&u.Spec.ForProvider)
			}
			g.Expect(env.Client.Create(ctx, u)).To(Succeed())
			tc.update(&u.Spec.ForProvider)
			err := env.Client.Update(ctx, u)
			if len(tc.want) == 0 {
				g.Expect(err).ToNot(HaveOccurred())
				return
			}
			denied(g, err, tc.want...)
		})
	}
}

func TestDatabaseAndUserCanBeCorrectedWhileObserving(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	observe := xpv2.ManagementPolicies{xpv2.ManagementActionObserve}

	db := database("import-db")
	db.Spec.ManagementPolicies = observe
	g.Expect(env.Client.Create(ctx, db)).To(Succeed())
	db.Spec.ForProvider.Name = ptr.To("legacy_orders")
	db.Spec.ForProvider.Collation = "C"
	db.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	g.Expect(env.Client.Update(ctx, db)).To(Succeed())
	db.Spec.ForProvider.Collation = "en_US.UTF8"
	denied(g, env.Client.Update(ctx, db), "spec.forProvider.collation", "is immutable (was C)")

	u := user("import-user")
	u.Spec.ManagementPolicies = observe
	g.Expect(env.Client.Create(ctx, u)).To(Succeed())
	u.Spec.ForProvider.Name = ptr.To("legacy_app")
	g.Expect(env.Client.Update(ctx, u)).To(Succeed())
}

// TestResolveReferences resolves the references of both kinds as the managed
// reconciler does, against the API server.
func TestResolveReferences(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	shared := instance("resolve-shared")
	shared.SetLabels(map[string]string{"tier": "resolve-shared"})
	g.Expect(env.Client.Create(ctx, shared)).To(Succeed())
	owner := user("resolve-owner")
	owner.Spec.ForProvider.Instance = ""
	owner.Spec.ForProvider.InstanceRef = &xpv2.Reference{Name: shared.GetName()}
	owner.SetLabels(map[string]string{"app": "resolve-orders"})
	g.Expect(env.Client.Create(ctx, owner)).To(Succeed())

	g.Expect(owner.ResolveReferences(ctx, env.Client)).To(Succeed())
	g.Expect(owner.Spec.ForProvider.Instance).To(Equal(shared.GetName()), "instanceRef sets instance to the metadata.name of the instance")

	cases := map[string]struct {
		params func(p *v1alpha1.PostgresqlDatabaseParameters)
		// want are the values resolution sets, or errs the fragments of its error.
		want v1alpha1.PostgresqlDatabaseParameters
		errs []string
	}{
		"References": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.InstanceRef = &xpv2.Reference{Name: shared.GetName()}
				p.OwnerRef = &xpv2.Reference{Name: owner.GetName()}
			},
			want: v1alpha1.PostgresqlDatabaseParameters{
				Instance: shared.GetName(), InstanceRef: &xpv2.Reference{Name: shared.GetName()},
				Owner: owner.GetName(), OwnerRef: &xpv2.Reference{Name: owner.GetName()},
			},
		},
		"Selectors": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.InstanceSelector = &xpv2.Selector{MatchLabels: map[string]string{"tier": "resolve-shared"}}
				p.OwnerSelector = &xpv2.Selector{MatchLabels: map[string]string{"app": "resolve-orders"}}
			},
			want: v1alpha1.PostgresqlDatabaseParameters{
				Instance: shared.GetName(), InstanceRef: &xpv2.Reference{Name: shared.GetName()},
				InstanceSelector: &xpv2.Selector{MatchLabels: map[string]string{"tier": "resolve-shared"}},
				Owner:            owner.GetName(), OwnerRef: &xpv2.Reference{Name: owner.GetName()},
				OwnerSelector: &xpv2.Selector{MatchLabels: map[string]string{"app": "resolve-orders"}},
			},
		},
		"ValuesAreKept": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.Instance = "set-by-hand"
				p.InstanceRef = &xpv2.Reference{Name: shared.GetName()}
			},
			want: v1alpha1.PostgresqlDatabaseParameters{Instance: "set-by-hand", InstanceRef: &xpv2.Reference{Name: shared.GetName()}},
		},
		"NoInstance": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.InstanceRef = &xpv2.Reference{Name: "resolve-missing"}
			},
			errs: []string{"cannot resolve spec.forProvider.instanceRef or instanceSelector to a cluster-scoped PostgresqlInstance", "not found"},
		},
		"NoOwner": {
			params: func(p *v1alpha1.PostgresqlDatabaseParameters) {
				p.Instance = shared.GetName()
				p.OwnerSelector = &xpv2.Selector{MatchLabels: map[string]string{"app": "resolve-nobody"}}
			},
			errs: []string{"cannot resolve spec.forProvider.ownerRef or ownerSelector to a cluster-scoped PostgresqlUser", "no resources matched selector"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			db := &v1alpha1.PostgresqlDatabase{ObjectMeta: metav1.ObjectMeta{Name: objectName("resolve-", name)}}
			tc.params(&db.Spec.ForProvider)
			err := db.ResolveReferences(ctx, env.Client)
			if len(tc.errs) > 0 {
				denied(g, err, tc.errs...)
				return
			}
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(db.Spec.ForProvider).To(Equal(tc.want))
		})
	}
}

// TestKubectlExplainDatabasesAndUsers checks what `kubectl explain` shows users
// for the new kinds.
func TestKubectlExplainDatabasesAndUsers(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	path, args, err := env.KubectlArgs()
	g.Expect(err).NotTo(HaveOccurred())
	explain := func(field string) func() (string, error) {
		return func() (string, error) {
			out, err := exec.Command(path, append(args, "explain", "--api-version=cloudsql.travelaudience.com/v1alpha1", field)...).CombinedOutput()
			return string(out), err
		}
	}
	g.Eventually(explain("postgresqldatabase.spec.forProvider"), 30*time.Second, 250*time.Millisecond).Should(And(
		ContainSubstring("ForProvider holds the settings of the database"),
		ContainSubstring("charset"),
		ContainSubstring("ownerSelector"),
	))
	g.Expect(explain("postgresqldatabase.spec.forProvider.name")()).To(ContainSubstring("When omitted, metadata.name is used"))
	g.Expect(explain("postgresqldatabase.spec.forProvider.owner")()).To(ContainSubstring("stays owned by cloudsqlsuperuser"))
	g.Eventually(explain("postgresqluser.spec.forProvider.iamPrincipal"), 30*time.Second, 250*time.Millisecond).Should(
		ContainSubstring("without .gserviceaccount.com"))
	g.Expect(explain("postgresqluser.spec.forProvider.injection.allowedNamespaces")()).To(ContainSubstring("among those the instance allows"))
	g.Expect(explain("postgresqluser.status.atProvider.superuserMember")()).To(ContainSubstring("cloudsqlsuperuser"))
}
