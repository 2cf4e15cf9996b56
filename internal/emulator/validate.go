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
	"regexp"
	"strconv"
	"strings"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// postgresVersions maps every database version the emulator serves to the
// databaseInstalledVersion and maintenanceVersion it reports. Those of 9.6,
// 15 and 16 are what real Cloud SQL answered in the recorded traffic (9.6
// reports no minor version as installed); the others follow their pattern.
var postgresVersions = map[string]struct{ installed, maintenance string }{
	"POSTGRES_9_6": {"POSTGRES_9_6", "POSTGRES_9_6_24.R20250302.00_31"},
	"POSTGRES_10":  {"POSTGRES_10_23", "POSTGRES_10_23.R20250302.00_31"},
	"POSTGRES_11":  {"POSTGRES_11_22", "POSTGRES_11_22.R20250302.00_31"},
	"POSTGRES_12":  {"POSTGRES_12_22", "POSTGRES_12_22.R20250302.00_31"},
	"POSTGRES_13":  {"POSTGRES_13_20", "POSTGRES_13_20.R20250302.00_31"},
	"POSTGRES_14":  {"POSTGRES_14_17", "POSTGRES_14_17.R20250302.00_31"},
	"POSTGRES_15":  {"POSTGRES_15_7", "POSTGRES_15_7.R20240514.00_12"},
	"POSTGRES_16":  {"POSTGRES_16_3", "POSTGRES_16_3.R20240527.01_10"},
	"POSTGRES_17":  {"POSTGRES_17_4", "POSTGRES_17_4.R20250302.00_31"},
	"POSTGRES_18":  {"POSTGRES_18_0", "POSTGRES_18_0.R20250302.00_31"},
}

// newestMajor is the newest major version the emulator serves.
const newestMajor = 18

func validateDatabaseVersion(v string) error {
	if _, ok := postgresVersions[v]; !ok {
		return errInvalid("Invalid database version %q: the emulator serves POSTGRES_9_6 and POSTGRES_10 to POSTGRES_18.", v)
	}
	return nil
}

func installedVersion(v string) string {
	return postgresVersions[v].installed
}

func maintenanceVersion(v string) string {
	return postgresVersions[v].maintenance
}

// upgradableVersions lists the major versions an instance of version v can
// be upgraded to in place, as upgradableDatabaseVersions does. Cloud SQL
// answered none for a POSTGRES_9_6 instance in the recorded traffic.
func upgradableVersions(v string) []*sqladmin.AvailableDatabaseVersion {
	from := majorVersion(v)
	if from < 10 {
		return nil
	}
	var out []*sqladmin.AvailableDatabaseVersion
	for m := from + 1; m <= newestMajor; m++ {
		name := fmt.Sprintf("POSTGRES_%d", m)
		out = append(out, &sqladmin.AvailableDatabaseVersion{
			MajorVersion: name, Name: name, DisplayName: fmt.Sprintf("PostgreSQL %d", m),
		})
	}
	return out
}

// majorVersion is 9 for POSTGRES_9_6 and N for POSTGRES_N.
func majorVersion(v string) int {
	n, _ := strconv.Atoi(strings.Split(strings.TrimPrefix(v, "POSTGRES_"), "_")[0])
	return n
}

// defaultEdition is what Cloud SQL picks when settings.edition is empty:
// Enterprise Plus for PostgreSQL 16 and later, Enterprise before.
func defaultEdition(version string) string {
	if majorVersion(version) >= 16 {
		return EditionEnterprisePlus
	}
	return EditionEnterprise
}

// validateUpgrade allows in-place major version upgrades and nothing else.
func validateUpgrade(from, to string) error {
	if err := validateDatabaseVersion(to); err != nil {
		return err
	}
	if majorVersion(to) < majorVersion(from) {
		return errInvalid("Invalid database version %q: an instance can't be downgraded from %s.", to, from)
	}
	return nil
}

// Machine shape rules.
const (
	maxCustomVCPU          = 96
	customMemoryStepMiB    = 256
	minCustomMemoryMiB     = 3840
	minMemoryPerVCPUMiB    = 921.6  // 0.9 GiB
	maxMemoryPerVCPUMiB    = 6656.0 // 6.5 GiB
	msgTierEdition         = "Invalid Tier (%s) for (%s) Edition. Use a different tier or edition."
	msgInvalidTier         = "Invalid Tier (%s): %s"
	tierSharedCoreMicro    = "db-f1-micro"
	tierSharedCoreSmall    = "db-g1-small"
	tierCustomPrefix       = "db-custom-"
	tierPerfOptimizedRegex = `^db-perf-optimized-N-(2|4|8|16|32|48|64|80|96|128)$`
)

var (
	customTierRE    = regexp.MustCompile(`^db-custom-([0-9]+)-([0-9]+)$`)
	perfOptimizedRE = regexp.MustCompile(tierPerfOptimizedRegex)
	predefinedRE    = regexp.MustCompile(`^db-n1-(standard-(1|2|4|8|16|32|64|96)|highmem-(2|4|8|16|32|64|96))$`)
)

// validateTier applies the machine type rules of Cloud SQL for PostgreSQL:
// shared-core tiers exist only in Enterprise; db-custom-<vCPU>-<MiB> and the
// db-n1 predefined tiers only in Enterprise, where vCPU is 1 or even up to 96
// and memory is a multiple of 256 MiB, 0.9 to 6.5 GiB per vCPU and at least
// 3840 MiB; db-perf-optimized-N-<vCPU> tiers only in Enterprise Plus.
func validateTier(tier, edition string) error {
	switch {
	case tier == tierSharedCoreMicro || tier == tierSharedCoreSmall || predefinedRE.MatchString(tier):
		if edition != EditionEnterprise {
			return errInvalid(msgTierEdition, tier, edition)
		}
		return nil
	case perfOptimizedRE.MatchString(tier):
		if edition != EditionEnterprisePlus {
			return errInvalid(msgTierEdition, tier, edition)
		}
		return nil
	case strings.HasPrefix(tier, tierCustomPrefix):
		if edition != EditionEnterprise {
			return errInvalid(msgTierEdition, tier, edition)
		}
		return validateCustomTier(tier)
	}
	return errInvalid(msgInvalidTier, tier, "unknown machine type.")
}

func validateCustomTier(tier string) error {
	m := customTierRE.FindStringSubmatch(tier)
	if m == nil {
		return errInvalid(msgInvalidTier, tier, "custom machine types are db-custom-<vCPUs>-<memory in MiB>.")
	}
	vcpu, errC := strconv.Atoi(m[1])
	mem, errM := strconv.Atoi(m[2])
	if errC != nil || errM != nil {
		return errInvalid(msgInvalidTier, tier, "custom machine types are db-custom-<vCPUs>-<memory in MiB>.")
	}
	if vcpu != 1 && (vcpu%2 != 0 || vcpu < 2 || vcpu > maxCustomVCPU) {
		return errInvalid(msgInvalidTier, tier, fmt.Sprintf("the number of vCPUs must be 1 or an even number between 2 and %d.", maxCustomVCPU))
	}
	if mem%customMemoryStepMiB != 0 {
		return errInvalid(msgInvalidTier, tier, fmt.Sprintf("memory must be a multiple of %d MiB.", customMemoryStepMiB))
	}
	if mem < minCustomMemoryMiB {
		return errInvalid(msgInvalidTier, tier, fmt.Sprintf("memory must be at least %d MiB.", minCustomMemoryMiB))
	}
	perCPU := float64(mem) / float64(vcpu)
	if perCPU < minMemoryPerVCPUMiB || perCPU > maxMemoryPerVCPUMiB {
		return errInvalid(msgInvalidTier, tier, "memory must be between 0.9 GiB and 6.5 GiB per vCPU.")
	}
	return nil
}
