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
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// GeneratePatch is the body of instances.patch that fixes every updatable
// difference Compare(p, observed) reports, and nothing else: each group of
// settings with a difference is sent whole (backups, flags, labels, IP
// configuration, zone, maintenance window, storage growth), the others are
// left out, so a patch never touches what is already right (sending flags,
// for one, may restart the instance). In particular:
//
//   - name, region, databaseVersion, dataDiskType and rootPassword are never
//     sent: they cannot change or are not settings.
//   - false and 0 are sent when desired (ForceSendFields): backups off,
//     public IP off, growth off, no growth limit, maintenance day and hour 0.
//   - flags and authorized networks are sent as whole lists (an empty one
//     when the spec has none), so they end up exactly as specified.
//   - labels are sent as the desired map; Cloud SQL merges it into the
//     labels the instance has.
//   - dataDiskSizeGb is sent only when the desired size exceeds the
//     observed one: disks never shrink.
//   - settings.settingsVersion is the observed one, so Cloud SQL rejects
//     the patch (412) if the settings changed since they were observed,
//     rather than overwrite a change nobody compared.
//
// Call it only when Compare(p, observed).NeedsPatch(): with no updatable
// difference the body carries nothing but the settings version, and the
// patch would be an update operation that changes nothing. When observed or
// its settings are nil, every patchable managed setting is sent.
func GeneratePatch(p v1alpha1.PostgresqlInstanceParameters, observed *sqladmin.DatabaseInstance) *sqladmin.DatabaseInstance {
	s := &sqladmin.Settings{}
	if observed != nil && observed.Settings != nil {
		s.SettingsVersion = observed.Settings.SettingsVersion
	}
	for _, d := range differences(&p, observed) {
		if d.fix != nil {
			d.fix(&p, s)
		}
	}
	return &sqladmin.DatabaseInstance{Settings: s}
}
