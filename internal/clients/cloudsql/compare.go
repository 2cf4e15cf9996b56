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
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

const errImmutable = "the Cloud SQL instance differs from the spec in fields that cannot change on an existing instance; " +
	"set them back to the instance's values, or create a new PostgresqlInstance (with another name) to get the new ones"

// Renderings of values in differences.
const (
	unset  = "(unset)"
	absent = "(absent)"
	noName = "(no name)"
)

// A Diff is how an observed instance differs from the spec, as
// human-readable lines such as "settings.tier: want db-custom-2-7680, have
// db-custom-1-3840". The lines name API fields and values, never secrets,
// so they may go into events and logs.
type Diff struct {
	// Updatable differences are fixed by the patch that GeneratePatch
	// builds.
	Updatable []string

	// Immutable differences (a lower database version, region, disk type,
	// removing a private network) cannot be fixed by any patch. The
	// controller must not patch for them, but surface them
	// (ImmutableError) so the user restores the old values or creates a
	// new instance.
	Immutable []string

	// Upgrade is the databaseVersion the spec raises the instance to (a
	// major upgrade, which the controller guards: GenerateUpgrade), empty
	// when the version is as the spec says, or lower.
	Upgrade string
}

// UpToDate reports whether the instance matches the spec in every managed
// field.
func (d Diff) UpToDate() bool {
	return len(d.Updatable) == 0 && len(d.Immutable) == 0 && d.Upgrade == ""
}

// NeedsPatch reports whether a patch would bring the instance closer to
// the spec. It is false when only immutable differences remain: patching
// then would write to Cloud SQL on every poll and change nothing.
func (d Diff) NeedsPatch() bool {
	return len(d.Updatable) > 0
}

// All is every difference, the updatable ones first.
func (d Diff) All() []string {
	if d.UpToDate() {
		return nil
	}
	out := make([]string, 0, len(d.Updatable)+len(d.Immutable)+1)
	out = append(out, d.Updatable...)
	if d.Upgrade != "" {
		out = append(out, "databaseVersion: want "+d.Upgrade+" (a major upgrade)")
	}
	return append(out, d.Immutable...)
}

// ImmutableError explains the immutable differences, or is nil when there
// are none.
func (d Diff) ImmutableError() error {
	if len(d.Immutable) == 0 {
		return nil
	}
	return errors.Wrap(errors.New(strings.Join(d.Immutable, "; ")), errImmutable)
}

// IsUpToDate reports whether observed matches p in every field the spec
// manages, and lists the differences (Diff.All). It is Compare for callers
// that need only a yes or no; the controller needs Compare to tell
// differences a patch fixes from those it cannot.
func IsUpToDate(p v1alpha1.PostgresqlInstanceParameters, observed *sqladmin.DatabaseInstance) (bool, []string) {
	d := Compare(p, observed)
	return d.UpToDate(), d.All()
}

// Compare lists how observed differs from p, looking only at the fields
// the spec manages, so that nothing Cloud SQL sets by itself can make an
// instance look out of date forever (an update loop), while an out-of-band
// change of a managed field shows up and is reverted by GeneratePatch.
//
// The rules, each chosen so that the patch GeneratePatch builds makes the
// comparison succeed on the next observation:
//
//   - Disk size: only an observed disk smaller than sizeMinimumGb differs.
//     A larger one is what automatic growth does, and disks never shrink.
//   - Labels: every desired label (the user's and owner) must be present
//     with the desired value; labels nobody asked for are not drift. Cloud
//     SQL and other tools (billing, policy, the console) add labels, and a
//     patch merges labels rather than replacing them, so requiring exactly
//     the desired set could never succeed. Consequence: a label removed from
//     the spec stays on the instance.
//   - Flags: likewise, every desired flag must be present with the desired
//     value; a flag the spec does not name is not drift, because Cloud SQL
//     sets some flags itself when features are turned on, and would set them
//     again after every patch. When flags do differ, the patch sends the
//     whole desired list, so flags then end up exactly as specified
//     (unnamed ones removed). Consequence: a flag removed from the spec, or
//     added out of band, is removed only with the next patch that fixes a
//     flag; to reset a flag at once, set it to its default value.
//   - Authorized networks: exactly the desired set, keyed by CIDR (a bare
//     address is its /32), with the desired names. Cloud SQL adds none of
//     its own, and one added out of band is a hole in the firewall that
//     must be closed.
//   - Order: flags and authorized networks are compared as sets, because
//     Cloud SQL does not keep their order.
//   - Maintenance: day 0 is any day; the hour matters only on a chosen day.
//     A missing maintenanceWindow is any day.
//   - Zone: Any (or unset) accepts every zone.
//   - Private network: compared as projects/P/global/networks/N, whatever
//     form Cloud SQL answers with. A private network on an instance whose
//     spec has none is immutable: Cloud SQL cannot remove it.
//   - Storage limit: compared only while automatic growth is wanted; with
//     growth off it has no effect.
//   - Unset parameters (see the package documentation) are not compared.
//
// A nil instance or nil settings never panic: they are one updatable
// difference, and GeneratePatch then sends every managed setting. Other
// missing parts (ipConfiguration, backupConfiguration, ...) compare as
// their zero values, so each managed field in them shows as a difference.
func Compare(p v1alpha1.PostgresqlInstanceParameters, observed *sqladmin.DatabaseInstance) Diff {
	var d Diff
	if observed != nil && IsUpgrade(observed.DatabaseVersion, DatabaseVersion(p.Version)) {
		d.Upgrade = DatabaseVersion(p.Version)
	}
	for _, x := range differences(&p, observed) {
		if x.fix == nil {
			d.Immutable = append(d.Immutable, x.text)
			continue
		}
		d.Updatable = append(d.Updatable, x.text)
	}
	return d
}

// A difference is one line of a Diff, with the setter that fixes it (nil
// when a patch cannot).
type difference struct {
	text string
	fix  setter
}

// differences is the comparison behind Compare and GeneratePatch, so that
// a patch always fixes exactly what the comparison reports. Each group of
// settings that a setter writes together is compared by a method of diffs
// of its own; they run in the order of the API, which is the order of the
// differences.
func differences(p *v1alpha1.PostgresqlInstanceParameters, o *sqladmin.DatabaseInstance) []difference {
	var ds diffs
	if o == nil {
		ds.add(setAllPatchable, "instance", "an observed Cloud SQL instance", "none")
		return ds
	}
	if !IsUpgrade(o.DatabaseVersion, DatabaseVersion(p.Version)) {
		// A lower version: Cloud SQL never downgrades.
		ds.addIfSet(nil, "databaseVersion", DatabaseVersion(p.Version), o.DatabaseVersion)
	}
	ds.addIfSet(nil, "region", p.Location.Region, o.Region)
	s := o.Settings
	if s == nil {
		ds.add(setAllPatchable, "settings", "the managed settings", "none")
		return ds
	}
	ds.tierAndAvailability(p, s)
	ds.backups(p.Backups, s.BackupConfiguration)
	ds.safety(p, s)
	ds.flags(p.Flags, s.DatabaseFlags)
	ds.labels(p.Labels, s.UserLabels)
	ds.networks(p.Networking, s.IpConfiguration)
	ds.zone(p.Location.Zone, s.LocationPreference)
	ds.maintenance(p.Maintenance, s.MaintenanceWindow)
	ds.updateTrack(p.Maintenance.UpdateTrack, s.MaintenanceWindow)
	ds.denyPeriods(p.Maintenance.DenyPeriods, s.DenyMaintenancePeriods)
	ds.disk(p.Resources.Disk, s)
	return ds
}

// diffs is the list the comparison builds, one group of settings after
// another, so that every line has the same form.
type diffs []difference

// add records that path wants want but has have; fix is the setter that
// fixes it, nil when no patch can.
func (ds *diffs) add(fix setter, path, want, have string) {
	*ds = append(*ds, difference{text: path + ": want " + want + ", have " + have, fix: fix})
}

// addIfSet is add for a plain string field, when want differs from have:
// an empty want is an unset parameter, which is not compared.
func (ds *diffs) addIfSet(fix setter, path, want, have string) {
	if want != "" && want != have {
		ds.add(fix, path, want, orUnset(have))
	}
}

// tierAndAvailability compares what setTier, setEdition and
// setAvailability write.
func (ds *diffs) tierAndAvailability(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	ds.addIfSet(setTier, "settings.tier", p.Resources.InstanceType, s.Tier)
	ds.addIfSet(setEdition, "settings.edition", Edition(p.Edition), s.Edition)
	ds.addIfSet(setAvailability, "settings.availabilityType", AvailabilityType(p.Availability.Type), s.AvailabilityType)
}

// backups compares what setBackups writes, each field only when the spec
// sets it, and the log retention only while point-in-time recovery is on
// (without it the retention has no effect); bc may be nil.
func (ds *diffs) backups(b v1alpha1.Backups, bc *sqladmin.BackupConfiguration) {
	if bc == nil {
		bc = &sqladmin.BackupConfiguration{}
	}
	d := b.Daily
	if want := d.Enabled; want != nil && *want != bc.Enabled {
		ds.add(setBackups, "settings.backupConfiguration.enabled", strconv.FormatBool(*want), strconv.FormatBool(bc.Enabled))
	}
	ds.addIfSet(setBackups, "settings.backupConfiguration.startTime", d.StartTime, bc.StartTime)
	if pitr := b.PointInTimeRecovery; pitr != nil {
		if pitr.Enabled != bc.PointInTimeRecoveryEnabled {
			ds.add(setBackups, "settings.backupConfiguration.pointInTimeRecoveryEnabled", strconv.FormatBool(pitr.Enabled), strconv.FormatBool(bc.PointInTimeRecoveryEnabled))
		}
		if want := int64(pitr.LogRetentionDays); pitr.Enabled && want > 0 && want != bc.TransactionLogRetentionDays {
			ds.add(setBackups, "settings.backupConfiguration.transactionLogRetentionDays", strconv.FormatInt(want, 10), strconv.FormatInt(bc.TransactionLogRetentionDays, 10))
		}
	}
	if n := b.RetainedBackups; n != nil {
		have := int64(0)
		if rs := bc.BackupRetentionSettings; rs != nil {
			have = rs.RetainedBackups
		}
		if int64(*n) != have {
			ds.add(setBackups, "settings.backupConfiguration.backupRetentionSettings.retainedBackups", strconv.FormatInt(int64(*n), 10), strconv.FormatInt(have, 10))
		}
	}
	ds.addIfSet(setBackups, "settings.backupConfiguration.location", b.Location, bc.Location)
}

// safety compares what setDeletionProtection, setRetainBackups and
// setFinalBackup write, each only when the spec sets it; the final backup's
// retention only while it is on.
func (ds *diffs) safety(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	if dp := p.DeletionProtection; dp != nil && dp.Enabled != s.DeletionProtectionEnabled {
		ds.add(setDeletionProtection, "settings.deletionProtectionEnabled", strconv.FormatBool(dp.Enabled), strconv.FormatBool(s.DeletionProtectionEnabled))
	}
	if r := p.Backups.RetainOnDelete; r != nil && *r != s.RetainBackupsOnDelete {
		ds.add(setRetainBackups, "settings.retainBackupsOnDelete", strconv.FormatBool(*r), strconv.FormatBool(s.RetainBackupsOnDelete))
	}
	fb := p.Backups.FinalBackup
	if fb == nil {
		return
	}
	have := s.FinalBackupConfig
	if have == nil {
		have = &sqladmin.FinalBackupConfig{}
	}
	if fb.Enabled != have.Enabled {
		ds.add(setFinalBackup, "settings.finalBackupConfig.enabled", strconv.FormatBool(fb.Enabled), strconv.FormatBool(have.Enabled))
	}
	if want := int64(finalBackupDays(fb)); fb.Enabled && want != have.RetentionDays {
		ds.add(setFinalBackup, "settings.finalBackupConfig.retentionDays", strconv.FormatInt(want, 10), strconv.FormatInt(have.RetentionDays, 10))
	}
}

// flags requires every desired flag with its value and ignores the others,
// which Cloud SQL may set itself (see Compare).
func (ds *diffs) flags(flags []string, observed []*sqladmin.DatabaseFlags) {
	haveFlags := flagMap(observed)
	for _, f := range DatabaseFlags(sortedFlags(flags)) {
		if have, ok := haveFlags[f.Name]; !ok || have != f.Value {
			ds.add(setFlags, "settings.databaseFlags["+f.Name+"]", f.Value, orIf(have, ok, absent))
		}
	}
}

// labels requires every desired label with its value and ignores the
// others, which other tools add (see Compare).
func (ds *diffs) labels(labels map[string]v1alpha1.LabelValue, observed map[string]string) {
	wantLabels := UserLabels(labels)
	for _, k := range sortedKeys(wantLabels) {
		if have, ok := observed[k]; !ok || have != wantLabels[k] {
			ds.add(setLabels, "settings.userLabels."+k, wantLabels[k], orIf(have, ok, absent))
		}
	}
}

// networks compares what setIPConfiguration writes; ipc may be nil.
func (ds *diffs) networks(n v1alpha1.Networking, ipc *sqladmin.IpConfiguration) {
	if ipc == nil {
		ipc = &sqladmin.IpConfiguration{}
	}
	if want := n.PublicIP.Enabled; want != ipc.Ipv4Enabled {
		ds.add(setIPConfiguration, "settings.ipConfiguration.ipv4Enabled", strconv.FormatBool(want), strconv.FormatBool(ipc.Ipv4Enabled))
	}
	ds.privateNetwork(n.PrivateIP, NormalizeNetwork(ipc.PrivateNetwork))
	ds.authorizedNetworks(n.PublicIP.AuthorizedNetworks, ipc.AuthorizedNetworks)
}

// privateNetwork compares the wanted private network with have, already
// normalized. Removing one is immutable: Cloud SQL cannot.
func (ds *diffs) privateNetwork(pip v1alpha1.PrivateIP, have string) {
	switch {
	case pip.Enabled && pip.Network != "":
		if want := NormalizeNetwork(pip.Network); want != have {
			ds.add(setIPConfiguration, "settings.ipConfiguration.privateNetwork", want, orUnset(have))
		}
	case !pip.Enabled && have != "":
		// Cloud SQL cannot take a private IP away again.
		ds.add(nil, "settings.ipConfiguration.privateNetwork", "none (private IP disabled)", have)
	}
}

// authorizedNetworks requires exactly the desired set, by CIDR and name:
// an entry added out of band is a hole in the firewall (see Compare).
func (ds *diffs) authorizedNetworks(wanted []v1alpha1.AuthorizedNetwork, observed []*sqladmin.AclEntry) {
	want := make(map[string]string, len(wanted))
	for _, a := range wanted {
		want[normalizeCIDR(a.CIDR)] = a.Name
	}
	haveACL := aclMap(observed)
	for _, cidr := range sortedKeys(want, haveACL) {
		w, inWant := want[cidr]
		h, inHave := haveACL[cidr]
		if inWant && inHave && w == h {
			continue
		}
		ds.add(setIPConfiguration, "settings.ipConfiguration.authorizedNetworks["+cidr+"]",
			aclText(w, inWant), aclText(h, inHave))
	}
}

// zone compares what setZone writes: Any or no zone accepts every zone.
func (ds *diffs) zone(want string, lp *sqladmin.LocationPreference) {
	if want == "" || want == v1alpha1.Any {
		return
	}
	have := ""
	if lp != nil {
		have = lp.Zone
	}
	if have != want {
		ds.add(setZone, "settings.locationPreference.zone", want, orUnset(have))
	}
}

// maintenance compares what setMaintenance writes, only when a day is
// set; the hour matters only on a chosen day. mw may be nil.
func (ds *diffs) maintenance(m v1alpha1.Maintenance, mw *sqladmin.MaintenanceWindow) {
	if m.Day == "" {
		return
	}
	if mw == nil {
		// No window is no preference, which is what day 0 says.
		mw = &sqladmin.MaintenanceWindow{}
	}
	wantDay := MaintenanceDay(m.Day)
	if wantDay != mw.Day {
		ds.add(setMaintenance, "settings.maintenanceWindow.day", dayText(wantDay), dayText(mw.Day))
	}
	if want := wantMaintenanceHour(m); wantDay != MaintenanceAnyDay && want != mw.Hour {
		ds.add(setMaintenance, "settings.maintenanceWindow.hour", strconv.FormatInt(want, 10), strconv.FormatInt(mw.Hour, 10))
	}
}

// disk compares what setDiskSize and setAutoResize write, only when a
// minimum size is set (a larger disk is automatic growth, not drift), then
// the disk type, which cannot change.
func (ds *diffs) disk(d v1alpha1.Disk, s *sqladmin.Settings) {
	if d.SizeMinimumGb > 0 {
		if want := int64(d.SizeMinimumGb); s.DataDiskSizeGb < want {
			ds.add(setDiskSize, "settings.dataDiskSizeGb", "at least "+strconv.FormatInt(want, 10), strconv.FormatInt(s.DataDiskSizeGb, 10))
		}
		ds.storageGrowth(d, s)
	}
	ds.addIfSet(nil, "settings.dataDiskType", DataDiskType(d.Type), s.DataDiskType)
}

// storageGrowth compares automatic growth and, only while growth is wanted,
// its limit: with growth off the limit has no effect.
func (ds *diffs) storageGrowth(d v1alpha1.Disk, s *sqladmin.Settings) {
	want := autoResize(d)
	if s.StorageAutoResize == nil || *s.StorageAutoResize != want {
		have := unset
		if s.StorageAutoResize != nil {
			have = strconv.FormatBool(*s.StorageAutoResize)
		}
		ds.add(setAutoResize, "settings.storageAutoResize", strconv.FormatBool(want), have)
	}
	if limit := int64(d.SizeMaximumGb); want && limit != s.StorageAutoResizeLimit {
		ds.add(setAutoResize, "settings.storageAutoResizeLimit", limitText(limit), limitText(s.StorageAutoResizeLimit))
	}
}

// setAllPatchable writes every managed setting a patch can change, for an
// instance whose settings are unknown.
func setAllPatchable(p *v1alpha1.PostgresqlInstanceParameters, s *sqladmin.Settings) {
	for _, set := range patchSetters {
		set(p, s)
	}
}

// sortedFlags is flags sorted, so that differences come in a stable order.
func sortedFlags(flags []string) []string {
	out := append([]string(nil), flags...)
	sort.Strings(out)
	return out
}

// sortedKeys is the union of the keys of ms, sorted.
func sortedKeys(ms ...map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func orUnset(s string) string {
	return orIf(s, s != "", unset)
}

// orIf is s when ok, else alt.
func orIf(s string, ok bool, alt string) string {
	if !ok {
		return alt
	}
	if s == "" {
		return `""`
	}
	return s
}

// aclText describes one authorized network entry by its name.
func aclText(name string, present bool) string {
	switch {
	case !present:
		return absent
	case name == "":
		return "present " + noName
	default:
		return "present, named " + name
	}
}

func dayText(d int64) string {
	if d == MaintenanceAnyDay {
		return "0 (any day)"
	}
	return fmt.Sprintf("%d (%s)", d, FromMaintenanceDay(d))
}

func limitText(l int64) string {
	if l == 0 {
		return "0 (no limit)"
	}
	return strconv.FormatInt(l, 10)
}
