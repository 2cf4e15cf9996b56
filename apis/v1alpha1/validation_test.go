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

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		"name-valid":                   {mutate: func(p *params) { p.Name = ptr.To("cloudsql-psql-123456") }},
		"name-starts-digit":            {mutate: func(p *params) { p.Name = ptr.To("1psql") }, want: []string{fp + "name", "must start with a lowercase letter"}},
		"name-ends-hyphen":             {mutate: func(p *params) { p.Name = ptr.To("psql-") }, want: []string{fp + "name", "end with a letter or digit"}},
		"name-uppercase":               {mutate: func(p *params) { p.Name = ptr.To("Psql") }, want: []string{fp + "name", "lowercase letters"}},
		"name-too-long":                {mutate: func(p *params) { p.Name = ptr.To("a" + strings.Repeat("b", 91)) }, want: []string{fp + "name", "91"}},
		"metadata-name-dots-with-name": {meta: "team.db2", mutate: func(p *params) { p.Name = ptr.To("team-db2") }},

		// version and edition
		"version-9-6":         {mutate: func(p *params) { p.Version = "9.6" }},
		"version-unknown":     {mutate: func(p *params) { p.Version = "9.5" }, want: []string{fp + "version", `Unsupported value: "9.5"`, `"18"`}},
		"edition-unknown":     {mutate: func(p *params) { p.Edition = "Standard" }, want: []string{fp + "edition", `Unsupported value: "Standard"`}},
		"edition-plus-valid":  {mutate: func(p *params) { p.Edition = "EnterprisePlus"; p.Resources.InstanceType = "db-perf-optimized-N-4" }},
		"edition-plus-custom": {mutate: func(p *params) { p.Edition = "EnterprisePlus" }, want: []string{fp + "resources.instanceType", "edition EnterprisePlus needs a db-perf-optimized-N-<vCPUs> instance type"}},
		"edition-plus-shared": {mutate: func(p *params) { p.Edition = "EnterprisePlus"; p.Resources.InstanceType = "db-f1-micro" }, want: []string{fp + "resources.instanceType", "shared-core types need edition Enterprise"}},
		"edition-plus-old-version": {mutate: func(p *params) {
			p.Edition = "EnterprisePlus"
			p.Version = "11"
			p.Resources.InstanceType = "db-perf-optimized-N-2"
		}, want: []string{fp + "edition", "needs PostgreSQL 12 or later"}},
		"perf-optimized-odd-vcpus":     {mutate: func(p *params) { p.Edition = "EnterprisePlus"; p.Resources.InstanceType = "db-perf-optimized-N-3" }, want: []string{fp + "resources.instanceType", "Enterprise Plus machines have 2, 4, 8, 16, 32, 48, 64, 80, 96 or 128 vCPUs"}},
		"perf-optimized-on-enterprise": {mutate: func(p *params) { p.Resources.InstanceType = "db-perf-optimized-N-8" }, want: []string{fp + "resources.instanceType", "need edition EnterprisePlus"}},

		// availability and backups
		"availability-regional": {mutate: func(p *params) { p.Availability.Type = "Regional" }},
		"availability-unknown":  {mutate: func(p *params) { p.Availability.Type = "Multi" }, want: []string{fp + "availability.type", `Unsupported value: "Multi"`}},
		"backup-start-22":       {mutate: func(p *params) { p.Backups.Daily.StartTime = "22:00" }},
		"backup-start-half":     {mutate: func(p *params) { p.Backups.Daily.StartTime = "22:30" }, want: []string{fp + "backups.daily.startTime", "must be a full hour in 24-hour UTC time, hh:00"}},
		"backup-start-24":       {mutate: func(p *params) { p.Backups.Daily.StartTime = "24:00" }, want: []string{fp + "backups.daily.startTime", "hh:00"}},

		// flags
		"flags-valid":     {mutate: func(p *params) { p.Flags = []string{"autovacuum=on", "cloudsql.iam_authentication=on"} }},
		"flags-no-value":  {mutate: func(p *params) { p.Flags = []string{"autovacuum"} }, want: []string{fp + "flags[0]", "each flag must be written as name=value"}},
		"flags-bad-name":  {mutate: func(p *params) { p.Flags = []string{"Auto Vacuum=on"} }, want: []string{fp + "flags[0]", "name=value"}},
		"flags-duplicate": {mutate: func(p *params) { p.Flags = []string{"autovacuum=on", "autovacuum=off"} }, want: []string{fp + "flags", "each flag name may appear only once"}},
		"labels-valid": {mutate: func(p *params) {
			p.Labels = map[string]v1alpha1.LabelValue{"team": "payments", "cost_center": "42", "empty": ""}
		}},
		"labels-owner-ours":  {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"owner": "cloudsql-postgres-operator"} }},
		"labels-owner-other": {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"owner": "alice"} }, want: []string{fp + "labels", "the owner label is reserved"}},
		"labels-owner-uid":   {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"owner-uid": "x"} }, want: []string{fp + "labels", "the owner-uid label is reserved"}},
		"labels-key-upper":   {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"Team": "payments"} }, want: []string{fp + "labels", "label keys must start with a lowercase letter"}},
		"labels-key-digit":   {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"1team": "payments"} }, want: []string{fp + "labels", "label keys must start with a lowercase letter"}},
		"labels-value-upper": {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"team": "Payments"} }, want: []string{fp + "labels.team", "should match"}},
		"labels-value-long": {mutate: func(p *params) {
			p.Labels = map[string]v1alpha1.LabelValue{"team": v1alpha1.LabelValue(strings.Repeat("a", 64))}
		}, want: []string{fp + "labels.team", "63"}},
		"labels-62": {mutate: func(p *params) { p.Labels = labels(62) }},
		"labels-62-and-owner": {mutate: func(p *params) {
			p.Labels = labels(62)
			p.Labels["owner"] = "cloudsql-postgres-operator"
		}},
		"labels-63":           {mutate: func(p *params) { p.Labels = labels(63) }, want: []string{fp + "labels", "at most 62 labels besides owner: Cloud SQL allows 64 labels"}},
		"labels-too-many-key": {mutate: func(p *params) { p.Labels = map[string]v1alpha1.LabelValue{"k" + strings.Repeat("a", 63): "v"} }, want: []string{fp + "labels", "at most 63"}},

		// location
		"location-zone":          {mutate: func(p *params) { p.Location = v1alpha1.Location{Region: "europe-west4", Zone: "europe-west4-b"} }},
		"location-region-bad":    {mutate: func(p *params) { p.Location.Region = "Europe" }, want: []string{fp + "location.region", "must be a Google Cloud region such as europe-west1"}},
		"location-zone-bad":      {mutate: func(p *params) { p.Location.Zone = "europe-west1" }, want: []string{fp + "location.zone", "must be Any or a Google Cloud zone"}},
		"location-zone-mismatch": {mutate: func(p *params) { p.Location.Zone = "us-east1-b" }, want: []string{fp + "location.zone", "must be Any or a zone of region europe-west1, for example europe-west1-b"}},

		// maintenance
		"maintenance-day-hour":      {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Saturday", Hour: "16:00"} }},
		"maintenance-day-only":      {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Monday"} }},
		"maintenance-day-unknown":   {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Funday", Hour: "04:00"} }, want: []string{fp + "maintenance.day", `Unsupported value: "Funday"`}},
		"maintenance-any-with-hour": {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Any", Hour: "16:00"} }, want: []string{fp + "maintenance.hour", "must be Any while maintenance.day is Any"}},
		"maintenance-day-any-hour":  {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Sunday", Hour: "Any"} }, want: []string{fp + "maintenance.hour", "must be a full hour (hh:00, UTC) when maintenance.day is a weekday"}},
		"maintenance-hour-format":   {mutate: func(p *params) { p.Maintenance = v1alpha1.Maintenance{Day: "Sunday", Hour: "4:00"} }, want: []string{fp + "maintenance.hour", "must be Any or a full hour"}},

		// networking
		"networking-none": {mutate: func(p *params) { p.Networking.PublicIP.Enabled = false }, want: []string{fp + "networking", "enable at least one of networking.publicIp and networking.privateIp"}},
		"networking-private-only": {mutate: func(p *params) {
			p.Networking = v1alpha1.Networking{PrivateIP: v1alpha1.PrivateIP{Enabled: true, Network: "projects/my-project-123/global/networks/default"}}
		}},
		"networking-private-no-network": {mutate: func(p *params) { p.Networking.PrivateIP.Enabled = true }, want: []string{fp + "networking.privateIp.network", "is required when privateIp.enabled is true"}},
		"networking-private-bad-network": {mutate: func(p *params) {
			p.Networking.PrivateIP = v1alpha1.PrivateIP{Enabled: true, Network: "default"}
		}, want: []string{fp + "networking.privateIp.network", "must be a VPC network resource link: projects/<project-id>/global/networks/<network-name>"}},
		"networking-network-while-disabled": {mutate: func(p *params) {
			p.Networking.PrivateIP.Network = "projects/my-project-123/global/networks/default"
		}, want: []string{fp + "networking.privateIp.network", "may only be set when privateIp.enabled is true"}},
		"networking-authorized": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "30.60.90.120/32", Name: "alice"}, {CIDR: "120.90.60.0/24"}}
		}},
		"networking-cidr-invalid": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "300.1.1.1/32"}}
		}, want: []string{fp + "networking.publicIp.authorizedNetworks[0].cidr", "must be an IPv4 network in CIDR notation"}},
		"networking-cidr-no-prefix": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "1.2.3.4"}}
		}, want: []string{"authorizedNetworks[0].cidr", "CIDR notation"}},
		"networking-cidr-ipv6": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "2001:db8::/32"}}
		}, want: []string{"authorizedNetworks[0].cidr", "must be an IPv4 network"}},
		"networking-cidr-host-bits": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "120.90.60.5/24"}}
		}, want: []string{"authorizedNetworks[0].cidr", "has host bits set"}},
		"networking-cidr-duplicate": {mutate: func(p *params) {
			p.Networking.PublicIP.AuthorizedNetworks = []v1alpha1.AuthorizedNetwork{{CIDR: "10.0.0.0/8", Name: "a"}, {CIDR: "10.0.0.0/8", Name: "b"}}
		}, want: []string{"authorizedNetworks[1]", "Duplicate value"}},

		// disk
		"disk-grow-bounded": {mutate: func(p *params) { p.Resources.Disk = v1alpha1.Disk{SizeMinimumGb: 20, SizeMaximumGb: 40} }},
		"disk-no-growth":    {mutate: func(p *params) { p.Resources.Disk = v1alpha1.Disk{SizeMinimumGb: 20, SizeMaximumGb: 20} }},
		"disk-too-small":    {mutate: func(p *params) { p.Resources.Disk.SizeMinimumGb = 5 }, want: []string{fp + "resources.disk.sizeMinimumGb", "greater than or equal to 10"}},
		"disk-max-below-min": {mutate: func(p *params) { p.Resources.Disk = v1alpha1.Disk{SizeMinimumGb: 20, SizeMaximumGb: 15} },
			want: []string{fp + "resources.disk.sizeMaximumGb", "must be 0 (grow without limit) or at least sizeMinimumGb"}},
		"disk-max-negative": {mutate: func(p *params) { p.Resources.Disk.SizeMaximumGb = -1 }, want: []string{fp + "resources.disk.sizeMaximumGb", "greater than or equal to 0"}},
		"disk-type-hdd":     {mutate: func(p *params) { p.Resources.Disk.Type = "HDD" }},
		"disk-type-unknown": {mutate: func(p *params) { p.Resources.Disk.Type = "NVMe" }, want: []string{fp + "resources.disk.type", `Unsupported value: "NVMe"`}},

		// instance type
		"type-micro":      {mutate: func(p *params) { p.Resources.InstanceType = "db-f1-micro" }},
		"type-small":      {mutate: func(p *params) { p.Resources.InstanceType = "db-g1-small" }},
		"type-custom-2":   {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-2-7680" }},
		"type-custom-96":  {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-96-638976" }},
		"type-unknown":    {mutate: func(p *params) { p.Resources.InstanceType = "db-n1-standard-1" }, want: []string{fp + "resources.instanceType", "must be db-f1-micro, db-g1-small, db-custom-<vCPUs>-<MiB>"}},
		"type-odd-vcpus":  {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-3-7680" }, want: []string{fp + "resources.instanceType", "has 3 vCPUs: a custom machine has 1 vCPU or an even number of vCPUs up to 96"}},
		"type-many-vcpus": {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-98-200704" }, want: []string{fp + "resources.instanceType", "has 98 vCPUs"}},
		"type-not-256":    {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-2-7000" }, want: []string{fp + "resources.instanceType", "has 7000 MiB of memory: memory must be a multiple of 256 MiB"}},
		"type-below-3840": {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-1-3584" }, want: []string{fp + "resources.instanceType", "a custom machine needs at least 3840 MiB"}},
		"type-too-much":   {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-1-7168" }, want: []string{fp + "resources.instanceType", "has 7168 MiB for 1 vCPUs: memory must be between 0.9 GiB (921.6 MiB) and 6.5 GiB (6656 MiB) per vCPU"}},
		"type-too-little": {mutate: func(p *params) { p.Resources.InstanceType = "db-custom-96-65536" }, want: []string{fp + "resources.instanceType", "has 65536 MiB for 96 vCPUs"}},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			meta := tc.meta
			if meta == "" {
				meta = "create-" + name
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
		"name-changed":       {initial: withName, update: func(p *params) { p.Name = ptr.To("other-name") }, want: []string{fp + "name", "is immutable: the Cloud SQL instance is named original-name"}},
		"name-removed":       {initial: withName, update: func(p *params) { p.Name = nil }, want: []string{fp + "name", "cannot be added or removed after creation"}},
		"name-added":         {update: func(p *params) { p.Name = ptr.To("late-name") }, want: []string{fp + "name", "cannot be added or removed after creation"}},
		"version-changed":    {update: func(p *params) { p.Version = "17" }, want: []string{fp + "version", "is immutable (was 18)"}},
		"region-changed":     {update: func(p *params) { p.Location.Region = "europe-west4" }, want: []string{fp + "location.region", "is immutable (was europe-west1)"}},
		"zone-changed":       {update: func(p *params) { p.Location.Zone = "europe-west1-c" }},
		"disk-type-changed":  {update: func(p *params) { p.Resources.Disk.Type = "HDD" }, want: []string{fp + "resources.disk.type", "is immutable (was SSD)"}},
		"disk-grown":         {initial: withDisk, update: func(p *params) { p.Resources.Disk.SizeMinimumGb = 30 }},
		"disk-shrunk":        {initial: withDisk, update: func(p *params) { p.Resources.Disk.SizeMinimumGb = 15 }, want: []string{fp + "resources.disk.sizeMinimumGb", "may be increased, never decreased"}},
		"private-disabled":   {initial: withPrivate, update: func(p *params) { p.Networking.PrivateIP.Enabled = false; p.Networking.PublicIP.Enabled = true }, want: []string{fp + "networking.privateIp.enabled", "cannot go back to false"}},
		"private-enabled":    {update: withPrivate},
		"network-changed":    {initial: withPrivate, update: func(p *params) { p.Networking.PrivateIP.Network = "projects/my-project-123/global/networks/other" }},
		"network-removed":    {initial: withPrivate, update: func(p *params) { p.Networking.PrivateIP.Network = "" }, want: []string{fp + "networking.privateIp.network", "may be changed but not removed (was projects/my-project-123/global/networks/default)"}},
		"edition-upgraded":   {update: func(p *params) { p.Edition = "EnterprisePlus"; p.Resources.InstanceType = "db-perf-optimized-N-2" }},
		"type-changed":       {update: func(p *params) { p.Resources.InstanceType = "db-custom-4-15360" }},
		"flags-changed":      {update: func(p *params) { p.Flags = []string{"max_connections=200"} }},
		"availability-to-ha": {update: func(p *params) { p.Availability.Type = "Regional" }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			pi := instance("update-" + name)
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

	pi.Spec.ForProvider.Version = "16"
	denied(g, env.Client.Update(ctx, pi), "spec.forProvider.version", "is immutable (was 15)")
}

func TestProviderConfigValidation(t *testing.T) {
	controlplane.Need(t)
	secretRef := &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "crossplane-system", Name: "key"}, Key: "key.json"}
	cases := map[string]struct {
		spec v1alpha1.ProviderConfigSpec
		want []string
	}{
		"secret": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{
			Source: xpv2.CredentialsSourceSecret, CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: secretRef}}}},
		"injected-identity-with-endpoint-and-proxy": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "example.com:my-project", Endpoint: "http://127.0.0.1:8085/"},
			Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}, ProxyCredentials: secretRef}},
		"none-with-endpoint": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123", Endpoint: "http://127.0.0.1:8085/"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}}},
		"none-without-endpoint": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceNone}},
			want: []string{"spec.credentials.source", "None is only allowed together with spec.endpoint"}},
		"secret-without-ref": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceSecret}},
			want: []string{"spec.credentials.secretRef", "is required when source is Secret"}},
		"environment-without-env": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceEnvironment}},
			want: []string{"spec.credentials.env", "is required when source is Environment"}},
		"filesystem-without-fs": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceFilesystem}},
			want: []string{"spec.credentials.fs", "is required when source is Filesystem"}},
		"source-unknown": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: "Magic"}},
			want: []string{"spec.credentials.source", `Unsupported value: "Magic"`}},
		"project-display-name": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "My Project"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"spec.projectID", "must be a Google Cloud project ID"}},
		"project-number": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "123456789012"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"spec.projectID", "not the project number"}},
		"project-missing": {spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"spec.projectID"}},
		"long-name": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"metadata.name may hold at most 63 characters"}},
		"endpoint-not-url": {spec: v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{ProjectID: "my-project-123", Endpoint: "ftp://example.com/"}, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
			want: []string{"spec.endpoint", "must be an http:// or https:// URL"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			if name == "long-name" {
				name = strings.Repeat("a", 64)
			}
			pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "pc-" + name}, Spec: tc.spec}
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
		"names":             {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"team-a", "team-b"}}},
		"star":              {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"*"}}},
		"empty-allows-none": {injection: &v1alpha1.Injection{}},
		"star-and-names": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"*", "team-a"}},
			want: []string{f + "allowedNamespaces", "list either '*' alone or namespace names"}},
		"bad-name": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"Team_A"}},
			want: []string{f + "allowedNamespaces[0]", "must be a namespace name"}},
		"long-name": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{strings.Repeat("a", 64)}},
			want: []string{f + "allowedNamespaces[0]", "63"}},
		"duplicate-name": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"team-a", "team-a"}},
			want: []string{f + "allowedNamespaces[1]", "Duplicate value"}},
		"selector-labels": {injection: &v1alpha1.Injection{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "payments"}}}},
		"selector-in":     {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}})},
		"selector-exists": {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpExists})},
		"names-and-selector": {injection: &v1alpha1.Injection{AllowedNamespaces: []string{"team-a"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "payments"}}}},
		"selector-bad-operator": {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: "Equals", Values: []string{"a"}}),
			want: []string{f + "namespaceSelector.matchExpressions", "each operator must be In, NotIn, Exists or DoesNotExist"}},
		"selector-in-no-values": {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpNotIn}),
			want: []string{f + "namespaceSelector.matchExpressions", "operators In and NotIn need at least one value"}},
		"selector-exists-values": {injection: sel(metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpExists, Values: []string{"a"}}),
			want: []string{f + "namespaceSelector.matchExpressions", "operators Exists and DoesNotExist take no values"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			pi := instance("injection-" + name)
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
	g.Expect(namespaced).To(HaveLen(4))
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
}

func TestMaintenanceEffectiveHour(t *testing.T) {
	cases := map[string]struct {
		m    v1alpha1.Maintenance
		want string
	}{
		"any":              {m: v1alpha1.Maintenance{Day: "Any", Hour: "Any"}, want: "Any"},
		"unset":            {m: v1alpha1.Maintenance{}, want: "Any"},
		"day-without-hour": {m: v1alpha1.Maintenance{Day: "Saturday"}, want: "04:00"},
		"day-with-hour":    {m: v1alpha1.Maintenance{Day: "Saturday", Hour: "16:00"}, want: "16:00"},
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
