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

	// Immutable differences (database version, region, disk type, removing
	// a private network) cannot be fixed by any patch. The controller must
	// not patch for them, but surface them (ImmutableError) so the user
	// restores the old values or creates a new instance.
	Immutable []string
}

// UpToDate reports whether the instance matches the spec in every managed
// field.
func (d Diff) UpToDate() bool {
	return len(d.Updatable) == 0 && len(d.Immutable) == 0
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
	out := make([]string, 0, len(d.Updatable)+len(d.Immutable))
	out = append(out, d.Updatable...)
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
// a patch always fixes exactly what the comparison reports.
func differences(p *v1alpha1.PostgresqlInstanceParameters, o *sqladmin.DatabaseInstance) []difference {
	var ds []difference
	add := func(fix setter, path, want, have string) {
		ds = append(ds, difference{text: path + ": want " + want + ", have " + have, fix: fix})
	}

	if o == nil {
		add(setAllPatchable, "instance", "an observed Cloud SQL instance", "none")
		return ds
	}
	if want := DatabaseVersion(p.Version); want != "" && want != o.DatabaseVersion {
		add(nil, "databaseVersion", want, orUnset(o.DatabaseVersion))
	}
	if want := p.Location.Region; want != "" && want != o.Region {
		add(nil, "region", want, orUnset(o.Region))
	}
	s := o.Settings
	if s == nil {
		add(setAllPatchable, "settings", "the managed settings", "none")
		return ds
	}

	if want := p.Resources.InstanceType; want != "" && want != s.Tier {
		add(setTier, "settings.tier", want, orUnset(s.Tier))
	}
	if want := Edition(p.Edition); want != "" && want != s.Edition {
		add(setEdition, "settings.edition", want, orUnset(s.Edition))
	}
	if want := AvailabilityType(p.Availability.Type); want != "" && want != s.AvailabilityType {
		add(setAvailability, "settings.availabilityType", want, orUnset(s.AvailabilityType))
	}

	bc := s.BackupConfiguration
	if bc == nil {
		bc = &sqladmin.BackupConfiguration{}
	}
	if want := p.Backups.Daily.Enabled; want != nil && *want != bc.Enabled {
		add(setBackups, "settings.backupConfiguration.enabled", strconv.FormatBool(*want), strconv.FormatBool(bc.Enabled))
	}
	if want := p.Backups.Daily.StartTime; want != "" && want != bc.StartTime {
		add(setBackups, "settings.backupConfiguration.startTime", want, orUnset(bc.StartTime))
	}

	haveFlags := flagMap(s.DatabaseFlags)
	for _, f := range DatabaseFlags(sortedFlags(p.Flags)) {
		if have, ok := haveFlags[f.Name]; !ok || have != f.Value {
			add(setFlags, "settings.databaseFlags["+f.Name+"]", f.Value, orIf(have, ok, absent))
		}
	}

	wantLabels := UserLabels(p.Labels)
	for _, k := range sortedKeys(wantLabels) {
		if have, ok := s.UserLabels[k]; !ok || have != wantLabels[k] {
			add(setLabels, "settings.userLabels."+k, wantLabels[k], orIf(have, ok, absent))
		}
	}

	ds = append(ds, ipDifferences(p, s.IpConfiguration)...)

	if want := p.Location.Zone; want != "" && want != v1alpha1.Any {
		have := ""
		if s.LocationPreference != nil {
			have = s.LocationPreference.Zone
		}
		if have != want {
			add(setZone, "settings.locationPreference.zone", want, orUnset(have))
		}
	}

	if m := p.Maintenance; m.Day != "" {
		mw := s.MaintenanceWindow
		if mw == nil {
			// No window is no preference, which is what day 0 says.
			mw = &sqladmin.MaintenanceWindow{}
		}
		wantDay := MaintenanceDay(m.Day)
		if wantDay != mw.Day {
			add(setMaintenance, "settings.maintenanceWindow.day", dayText(wantDay), dayText(mw.Day))
		}
		if want := wantMaintenanceHour(m); wantDay != MaintenanceAnyDay && want != mw.Hour {
			add(setMaintenance, "settings.maintenanceWindow.hour", strconv.FormatInt(want, 10), strconv.FormatInt(mw.Hour, 10))
		}
	}

	if disk := p.Resources.Disk; disk.SizeMinimumGb > 0 {
		if want := int64(disk.SizeMinimumGb); s.DataDiskSizeGb < want {
			add(setDiskSize, "settings.dataDiskSizeGb", "at least "+strconv.FormatInt(want, 10), strconv.FormatInt(s.DataDiskSizeGb, 10))
		}
		want := autoResize(disk)
		if s.StorageAutoResize == nil || *s.StorageAutoResize != want {
			have := unset
			if s.StorageAutoResize != nil {
				have = strconv.FormatBool(*s.StorageAutoResize)
			}
			add(setAutoResize, "settings.storageAutoResize", strconv.FormatBool(want), have)
		}
		if want := int64(disk.SizeMaximumGb); autoResize(disk) && want != s.StorageAutoResizeLimit {
			add(setAutoResize, "settings.storageAutoResizeLimit", limitText(want), limitText(s.StorageAutoResizeLimit))
		}
	}
	if want := DataDiskType(p.Resources.Disk.Type); want != "" && want != s.DataDiskType {
		add(nil, "settings.dataDiskType", want, orUnset(s.DataDiskType))
	}
	return ds
}

// ipDifferences compares the networking of the spec with ipc, which may be
// nil.
func ipDifferences(p *v1alpha1.PostgresqlInstanceParameters, ipc *sqladmin.IpConfiguration) []difference {
	var ds []difference
	add := func(fix setter, path, want, have string) {
		ds = append(ds, difference{text: path + ": want " + want + ", have " + have, fix: fix})
	}
	if ipc == nil {
		ipc = &sqladmin.IpConfiguration{}
	}
	n := p.Networking

	if want := n.PublicIP.Enabled; want != ipc.Ipv4Enabled {
		add(setIPConfiguration, "settings.ipConfiguration.ipv4Enabled", strconv.FormatBool(want), strconv.FormatBool(ipc.Ipv4Enabled))
	}

	have := NormalizeNetwork(ipc.PrivateNetwork)
	switch {
	case n.PrivateIP.Enabled && n.PrivateIP.Network != "":
		if want := NormalizeNetwork(n.PrivateIP.Network); want != have {
			add(setIPConfiguration, "settings.ipConfiguration.privateNetwork", want, orUnset(have))
		}
	case !n.PrivateIP.Enabled && have != "":
		// Cloud SQL cannot take a private IP away again.
		add(nil, "settings.ipConfiguration.privateNetwork", "none (private IP disabled)", have)
	}

	want := make(map[string]string, len(n.PublicIP.AuthorizedNetworks))
	for _, a := range n.PublicIP.AuthorizedNetworks {
		want[normalizeCIDR(a.CIDR)] = a.Name
	}
	haveACL := aclMap(ipc.AuthorizedNetworks)
	for _, cidr := range sortedKeys(want, haveACL) {
		w, inWant := want[cidr]
		h, inHave := haveACL[cidr]
		if inWant && inHave && w == h {
			continue
		}
		add(setIPConfiguration, "settings.ipConfiguration.authorizedNetworks["+cidr+"]",
			aclText(w, inWant), aclText(h, inHave))
	}
	return ds
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
