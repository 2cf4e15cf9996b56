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
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/fuzzbytes"
)

// FuzzSpecRoundTrip builds PostgresqlInstance parameters from the fuzzer's first
// bytes (mostly values the CRD admits, sometimes ones it refuses) and an observed
// Cloud SQL instance from its second bytes (what the spec created, or an example
// answer of Cloud SQL, then changed out of band: settings missing, flags, labels and
// networks added or altered, a smaller disk, another version), and checks that
//
//   - GenerateInstance, Compare and GeneratePatch never panic nor change their
//     arguments;
//   - the patch carries only what GeneratePatch documents: patchable settings, the
//     observed settings version, a disk size only when it grows, and nothing but the
//     version when Compare sees nothing to patch;
//
// and, for parameters the CRD admits,
//
//   - an instance created from the spec (the insert body, as sent and as stored)
//     compares up to date with it;
//   - the observed instance with the patch applied as instances.patch does (a JSON
//     merge, see applyPatch) has no updatable difference left, and the same
//     immutable ones. Without observed settings the first patch cannot know the disk
//     size, so a second patch is allowed.
//
// `go test` runs the seeds below; `make fuzz` searches further.
func FuzzSpecRoundTrip(f *testing.F) {
	// Empty choices are examples/postgresqlinstance-minimal.yaml after the CRD's
	// defaults, observed as created; the first choice 6 or 7 picks the minimal or
	// full example parameters of helpers_test.go, and the observed choice 1 or 2 the
	// hand-written minimal or full answers of Cloud SQL.
	f.Add([]byte{}, []byte{})
	f.Add([]byte{6}, []byte{1})
	f.Add([]byte{7}, []byte{2})
	f.Add([]byte{7}, []byte{1})
	f.Add([]byte{6}, []byte{2})
	// The full example, created, then five changes: autovacuum set twice, a label added, /32
	// networks written as bare addresses, the same maintenance window, a 5 GB disk.
	f.Add([]byte{7}, []byte{0, 9, 5, 5, 0, 6, 7, 1, 11, 3, 13, 1, 6, 16, 14, 1})
	f.Add([]byte{0, 1, 1, 1, 2, 1, 4, 3, 0, 1, 2, 2, 2, 1, 0, 3, 2, 2}, []byte{3, 7, 5, 3, 6, 2, 7, 1, 13, 2, 6})
	// And a few hundred more, drawn once from a fixed source, so that `go test`
	// alone reaches every branch.
	r := rand.New(rand.NewPCG(7, 7))
	for range 300 {
		spec, observed := make([]byte, r.IntN(64)), make([]byte, r.IntN(48))
		for i := range spec {
			spec[i] = byte(r.Uint32())
		}
		for i := range observed {
			observed[i] = byte(r.Uint32())
		}
		f.Add(spec, observed)
	}
	f.Fuzz(func(t *testing.T, specChoices, observedChoices []byte) {
		g := NewWithT(t)
		c := &choices{Choices: fuzzbytes.New(specChoices)}
		p := genParams(c)
		admitted := !c.odd
		o := genObserved(&choices{Choices: fuzzbytes.New(observedChoices)}, p)
		where := func() string { return "\nspec: " + show(p) + "\nobserved: " + show(o) }

		pBefore, oBefore := p.DeepCopy(), show(o)
		inserted := GenerateInstance("fuzz", "my-project-123", p, "pw")
		d := Compare(p, o)
		patch := GeneratePatch(p, o)
		g.Expect(p).To(Equal(*pBefore), "the parameters were changed")
		g.Expect(show(o)).To(Equal(oBefore), "the observed instance was changed")

		// What a patch may carry.
		w := wire(t, patch)
		g.Expect(w).To(HaveLen(1), "a patch carries settings only: %v", w)
		s, _ := w["settings"].(map[string]any)
		for k := range s {
			g.Expect(patchableSettings).To(ContainElement(k), "a patch must not send settings.%s", k)
		}
		if o != nil && o.Settings != nil && o.Settings.SettingsVersion != 0 {
			g.Expect(s).To(HaveKeyWithValue("settingsVersion", strconv.FormatInt(o.Settings.SettingsVersion, 10)))
		} else {
			g.Expect(s).NotTo(HaveKey("settingsVersion"))
		}
		if size, ok := s["dataDiskSizeGb"]; ok {
			n, err := strconv.ParseInt(size.(string), 10, 64)
			g.Expect(err).NotTo(HaveOccurred())
			if o != nil && o.Settings != nil {
				g.Expect(n).To(BeNumerically(">", o.Settings.DataDiskSizeGb), "a patch must never shrink the disk")
			}
		}
		if !d.NeedsPatch() {
			delete(s, "settingsVersion")
			g.Expect(s).To(BeEmpty(), "nothing to patch, yet the patch sends settings%s", where())
		}

		if !admitted {
			return
		}
		g.Expect(Compare(p, inserted).All()).To(BeEmpty(), "the insert body differs from its spec%s", where())
		g.Expect(Compare(p, stored(t, inserted)).All()).To(BeEmpty(), "the instance created from the spec differs from it%s", where())

		patched := applyPatch(t, o, patch)
		if o == nil || o.Settings == nil {
			patched = applyPatch(t, patched, GeneratePatch(p, patched))
		} else {
			g.Expect(Compare(p, patched).Immutable).To(Equal(d.Immutable), "the patch changed immutable differences%s\npatch: %s", where(), show(patch))
		}
		g.Expect(Compare(p, patched).Updatable).To(BeEmpty(), "the patch did not converge%s\npatch: %s", where(), show(patch))
	})
}

// patchableSettings are the settings a patch may send (see GeneratePatch).
var patchableSettings = []string{
	"settingsVersion", "tier", "edition", "availabilityType", "backupConfiguration", "databaseFlags", "userLabels",
	"ipConfiguration", "locationPreference", "maintenanceWindow", "denyMaintenancePeriods", "dataDiskSizeGb", "storageAutoResize", "storageAutoResizeLimit",
	"deletionProtectionEnabled", "retainBackupsOnDelete", "finalBackupConfig",
}

// stored is in as Cloud SQL keeps it: what goes on the wire, read back.
func stored(t *testing.T, in *sqladmin.DatabaseInstance) *sqladmin.DatabaseInstance {
	t.Helper()
	return fromWire(t, wire(t, in))
}

// show renders v for failure messages.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// choices are the fuzzer's bytes as choices, and whether a value the CRD refuses
// was chosen.
type choices struct {
	*fuzzbytes.Choices
	// odd records that a value the CRD refuses was chosen.
	odd bool
}

// admitted picks from valid, or rarely from refused, which the CRD does not admit.
func (c *choices) admitted(valid []string, refused ...string) string {
	if c.Rarely() {
		c.odd = true
		return c.Pick(refused...)
	}
	return c.Pick(valid...)
}

// Pools of values; the first of each is what the minimal example has once the CRD
// has applied its defaults.
var (
	flagNames  = []string{"autovacuum", "log_connections", "max_connections", "work_mem", "cloudsql.iam_authentication", "search_path"}
	flagValues = []string{"on", "off", "200", "4096", "a=b", `"$user", public`}
	labelKeys  = []string{"team", "cost_center", "env", "a-b", v1alpha1.OwnerLabelKey}
	labelVals  = []string{"payments", "", "42", "x_y"}
	cidrs      = []string{"10.0.0.0/8", "192.168.1.0/24", "30.60.90.120/32", "0.0.0.0/0", "120.90.60.0/24"}
	aclNames   = []string{"", "office", "alice"}
	networks   = []string{"projects/my-project-123/global/networks/default", "projects/example.com:p-123456/global/networks/vpc-1"}
	tiers      = []string{"db-custom-1-3840", "db-custom-2-7680", "db-f1-micro", "db-perf-optimized-N-4", ""}
	sizes      = []int32{10, 20, 100, 65536, 0}
)

// genParams builds parameters from c. Unset ("") values are among the choices:
// the CRD defaults them, but the comparison must skip them (late initialization
// and observe-only instances have them).
func genParams(c *choices) v1alpha1.PostgresqlInstanceParameters {
	switch c.Intn(8) {
	case 6:
		return minimalParams()
	case 7:
		return fullParams()
	}
	p := v1alpha1.PostgresqlInstanceParameters{}
	if c.Intn(4) == 3 {
		p.Name = ptr.To(c.Pick("db-1", "cloudsql-psql-123456"))
	}
	p.Version = c.admitted([]string{"18", "17", "15", "12", "11", "9.6", ""}, "19", "9.5", "POSTGRES_15")
	p.Edition = c.admitted([]string{v1alpha1.EditionEnterprise, v1alpha1.EditionEnterprisePlus, ""}, "Standard")
	p.Availability.Type = c.admitted([]string{v1alpha1.AvailabilityZonal, v1alpha1.AvailabilityRegional, ""}, "Multi")
	p.Backups.Daily.Enabled = []*bool{ptr.To(true), ptr.To(false), nil}[c.Intn(3)]
	p.Backups.Daily.StartTime = c.admitted([]string{"00:00", "22:00", "23:00", ""}, "24:00", "7:00")
	p.Backups.RetainOnDelete = []*bool{ptr.To(true), ptr.To(false), nil}[c.Intn(3)]
	p.Backups.FinalBackup = []*v1alpha1.FinalBackup{{Enabled: true, RetentionDays: 30}, {Enabled: true, RetentionDays: 365}, {}, nil}[c.Intn(4)]
	p.DeletionProtection = []*v1alpha1.DeletionProtection{{Enabled: true}, {}, nil}[c.Intn(3)]

	used := map[string]bool{}
	for range c.Intn(5) {
		n := c.Pick(flagNames...)
		if used[n] {
			if !c.Rarely() {
				continue
			}
			c.odd = true // a flag name given twice
		}
		used[n] = true
		p.Flags = append(p.Flags, n+"="+c.Pick(flagValues...))
	}
	if c.Rarely() {
		c.odd = true
		p.Flags = append(p.Flags, c.Pick("autovacuum", "=on", "x=", "Upper=on"))
	}

	for range c.Intn(4) {
		k, v := c.Pick(labelKeys...), c.Pick(labelVals...)
		if k == v1alpha1.OwnerLabelKey {
			v = v1alpha1.OwnerLabelValue
		}
		if p.Labels == nil {
			p.Labels = map[string]v1alpha1.LabelValue{}
		}
		p.Labels[k] = v1alpha1.LabelValue(v)
	}
	if c.Rarely() {
		c.odd = true
		if p.Labels == nil {
			p.Labels = map[string]v1alpha1.LabelValue{}
		}
		p.Labels[c.Pick(v1alpha1.OwnerLabelKey, v1alpha1.OwnerUIDLabelKey, "Team")] = "alice"
	}

	p.Location.Region = c.admitted([]string{"europe-west1", "us-central1", "asia-east2", ""}, "Europe")
	p.Location.Zone = c.Pick(v1alpha1.Any, "", p.Location.Region+"-b", p.Location.Region+"-c")
	if p.Location.Region == "" && p.Location.Zone != v1alpha1.Any && p.Location.Zone != "" {
		c.odd = true // a zone of no region
	}
	if c.Rarely() {
		c.odd = true
		p.Location.Zone = c.Pick("us-east1-b", "europe-west1")
	}

	p.Maintenance.Day = c.Pick(append([]string{v1alpha1.Any, ""}, weekdays...)...)
	if p.Maintenance.Day == v1alpha1.Any || p.Maintenance.Day == "" {
		p.Maintenance.Hour = c.Pick("", v1alpha1.Any)
	} else {
		p.Maintenance.Hour = c.Pick("", "00:00", "04:00", "16:00", "23:00")
	}
	if c.Rarely() {
		c.odd = true
		p.Maintenance.Hour = c.Pick(v1alpha1.Any, "16:00", "25:00", "4:00")
	}

	n := &p.Networking
	n.PublicIP.Enabled = c.Intn(4) != 3
	seen := map[string]bool{}
	for range c.Intn(4) {
		cidr := c.Pick(cidrs...)
		if seen[cidr] {
			continue
		}
		seen[cidr] = true
		n.PublicIP.AuthorizedNetworks = append(n.PublicIP.AuthorizedNetworks, v1alpha1.AuthorizedNetwork{CIDR: cidr, Name: c.Pick(aclNames...)})
	}
	if c.Rarely() {
		c.odd = true // a bare address, host bits, IPv6, garbage or a duplicate
		n.PublicIP.AuthorizedNetworks = append(n.PublicIP.AuthorizedNetworks, v1alpha1.AuthorizedNetwork{CIDR: c.Pick("1.2.3.4", "1.2.3.5/24", "2001:db8::/32", "garbage", cidrs[0])})
	}
	switch c.Intn(4) {
	case 1, 2:
		n.PrivateIP = v1alpha1.PrivateIP{Enabled: true, Network: c.Pick(networks...)}
	case 3:
		c.odd = true
		n.PrivateIP = []v1alpha1.PrivateIP{
			{Enabled: true}, {Network: networks[0]}, {Enabled: true, Network: "https://www.googleapis.com/compute/v1/" + networks[1]},
		}[c.Intn(3)]
	}
	if !n.PublicIP.Enabled && !n.PrivateIP.Enabled {
		c.odd = true // unreachable
	}

	r := &p.Resources
	r.InstanceType = c.admitted(tiers, "db-n1-standard-1")
	r.Disk.SizeMinimumGb = sizes[c.Intn(len(sizes))]
	switch c.Intn(4) {
	case 1:
		r.Disk.SizeMaximumGb = r.Disk.SizeMinimumGb // no growth
	case 2:
		r.Disk.SizeMaximumGb = min(2*r.Disk.SizeMinimumGb, 65536)
	case 3:
		r.Disk.SizeMaximumGb = 65536
	}
	if c.Rarely() {
		c.odd = true
		r.Disk = v1alpha1.Disk{SizeMinimumGb: []int32{5, -1, 40}[c.Intn(3)], SizeMaximumGb: []int32{20, -5, 0}[c.Intn(3)]}
	}
	r.Disk.Type = c.admitted([]string{v1alpha1.DiskTypeSSD, v1alpha1.DiskTypeHDD, ""}, "NVMe")
	return p
}

// genObserved builds what instances.get answers for an instance of p: the instance
// p created, or an example answer, then changed out of band a few times.
func genObserved(c *choices, p v1alpha1.PostgresqlInstanceParameters) *sqladmin.DatabaseInstance {
	var o *sqladmin.DatabaseInstance
	switch c.Intn(16) {
	case 1:
		o = minimalObserved()
	case 2:
		o = fullObserved()
	case 14:
		return &sqladmin.DatabaseInstance{Name: "fuzz"} // nothing but a name
	case 15:
		return nil
	default:
		b, _ := json.Marshal(GenerateInstance("fuzz", "my-project-123", p, ""))
		o = &sqladmin.DatabaseInstance{}
		_ = json.Unmarshal(b, o)
		o.State, o.Settings.SettingsVersion = "RUNNABLE", int64(1+c.Byte())
	}
	for range c.Intn(8) {
		change(c, o)
	}
	return o
}

// change makes one out-of-band change to o.
func change(c *choices, o *sqladmin.DatabaseInstance) {
	if o.Settings == nil {
		switch c.Intn(3) {
		case 0:
			o.DatabaseVersion = c.Pick("POSTGRES_15", "POSTGRES_18", "")
		case 1:
			o.Region = c.Pick("europe-west1", "us-central1", "")
		}
		return
	}
	s := o.Settings
	if s.BackupConfiguration == nil {
		s.BackupConfiguration = &sqladmin.BackupConfiguration{}
	}
	if s.IpConfiguration == nil {
		s.IpConfiguration = &sqladmin.IpConfiguration{}
	}
	ipc := s.IpConfiguration
	switch c.Intn(20) {
	case 0:
		o.Settings = nil
	case 1:
		s.Tier = c.Pick(append(tiers, "db-custom-4-15360")...)
	case 2:
		s.Edition = c.Pick(EditionEnterprise, EditionEnterprisePlus, "")
	case 3:
		s.AvailabilityType = c.Pick(AvailabilityZonal, AvailabilityRegional, "")
	case 4:
		switch c.Intn(3) {
		case 0:
			s.BackupConfiguration = nil
		case 1:
			s.BackupConfiguration.Enabled = !s.BackupConfiguration.Enabled
		case 2:
			s.BackupConfiguration.StartTime = c.Pick("00:00", "03:00", "")
		}
	case 5:
		s.DatabaseFlags = append(s.DatabaseFlags, &sqladmin.DatabaseFlags{Name: c.Pick(flagNames...), Value: c.Pick(append(flagValues, "other")...)})
	case 6:
		switch {
		case len(s.DatabaseFlags) > 0 && c.Intn(3) == 0:
			i := c.Intn(len(s.DatabaseFlags))
			s.DatabaseFlags = append(s.DatabaseFlags[:i:i], s.DatabaseFlags[i+1:]...)
		case c.Intn(2) == 0:
			s.DatabaseFlags = append(s.DatabaseFlags, nil)
		default:
			s.DatabaseFlags = nil
		}
	case 7:
		switch c.Intn(4) {
		case 0:
			s.UserLabels = nil
		case 1:
			s.UserLabels = withLabel(s.UserLabels, "goog-managed-by", "cloudsql")
		case 2:
			s.UserLabels = withLabel(s.UserLabels, c.Pick(labelKeys...), "changed")
		case 3:
			delete(s.UserLabels, c.Pick(labelKeys...))
		}
	case 8:
		s.IpConfiguration = nil
	case 9:
		ipc.Ipv4Enabled = !ipc.Ipv4Enabled
	case 10:
		switch c.Intn(3) {
		case 0:
			if ipc.PrivateNetwork != "" {
				ipc.PrivateNetwork = "https://www.googleapis.com/compute/v1/" + NormalizeNetwork(ipc.PrivateNetwork)
			}
		case 1:
			ipc.PrivateNetwork = c.Pick(networks...)
		case 2:
			ipc.PrivateNetwork = ""
		}
	case 11:
		acl := ipc.AuthorizedNetworks
		switch c.Intn(5) {
		case 0:
			acl = append(acl, &sqladmin.AclEntry{Kind: ACLEntryKind, Value: c.Pick(append(cidrs, "1.2.3.4", "30.60.90.120")...), Name: c.Pick(aclNames...)})
		case 1:
			if len(acl) > 0 {
				i := c.Intn(len(acl))
				acl = append(acl[:i:i], acl[i+1:]...)
			}
		case 2:
			if len(acl) > 0 && acl[0] != nil {
				acl[0].Name = c.Pick("renamed", "")
			}
		case 3:
			// Cloud SQL accepts a bare address for a /32.
			for _, a := range acl {
				if a != nil && len(a.Value) > 3 && a.Value[len(a.Value)-3:] == "/32" {
					a.Value = a.Value[:len(a.Value)-3]
				}
			}
		case 4:
			acl = append([]*sqladmin.AclEntry{nil}, acl...)
		}
		ipc.AuthorizedNetworks = acl
	case 12:
		if c.Intn(2) == 0 {
			s.LocationPreference = nil
		} else {
			s.LocationPreference = &sqladmin.LocationPreference{Zone: c.Pick("europe-west1-b", "europe-west1-d", "us-central1-b", "")}
		}
	case 13:
		switch c.Intn(3) {
		case 0:
			s.MaintenanceWindow = nil
		default:
			s.MaintenanceWindow = &sqladmin.MaintenanceWindow{Day: int64(c.Intn(9)), Hour: int64(c.Intn(25))}
		}
	case 14:
		s.DataDiskSizeGb = []int64{0, 5, 10, 20, 35, 70000}[c.Intn(6)]
	case 15:
		s.StorageAutoResize = []*bool{nil, ptr.To(true), ptr.To(false)}[c.Intn(3)]
	case 16:
		s.StorageAutoResizeLimit = []int64{0, 10, 20, 40, 100}[c.Intn(5)]
	case 17:
		s.DataDiskType = c.Pick(DiskTypeSSD, DiskTypeHDD, "HYPERDISK_BALANCED", "")
	case 18:
		o.DatabaseVersion = c.Pick("POSTGRES_15", "POSTGRES_18", "")
	case 19:
		o.Region = c.Pick("europe-west1", "us-central1", "")
	}
}

// withLabel is labels with k set to v; labels may be nil.
func withLabel(labels map[string]string, k, v string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[k] = v
	return labels
}
