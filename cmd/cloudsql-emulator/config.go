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

package main

import (
	"os"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator/postgres"
)

// config is the TOML configuration file; the package doc describes it.
type config struct {
	RequestBudget   *int           `toml:"request_budget"`
	NameReservation duration       `toml:"name_reservation"`
	Seed            *uint64        `toml:"seed"`
	Delays          delaysConfig   `toml:"delays"`
	Postgres        postgresConfig `toml:"postgres"`
	Instances       []instanceSeed `toml:"instances"`
}

// postgresConfig is the data plane: real PostgreSQL servers behind the
// instances' IP addresses.
type postgresConfig struct {
	Enabled bool   `toml:"enabled"`
	BinDir  string `toml:"bin_dir"`
	RunAs   string `toml:"run_as"`
}

type delaysConfig struct {
	Create duration `toml:"create"`
	Update duration `toml:"update"`
	Delete duration `toml:"delete"`
}

type instanceSeed struct {
	Project            string            `toml:"project"`
	Name               string            `toml:"name"`
	DatabaseVersion    string            `toml:"database_version"`
	Tier               string            `toml:"tier"`
	Region             string            `toml:"region"`
	Zone               string            `toml:"zone"`
	Edition            string            `toml:"edition"`
	DiskSizeGb         int64             `toml:"disk_size_gb"`
	AvailabilityType   string            `toml:"availability_type"`
	RootPassword       string            `toml:"root_password"`
	Ipv4Enabled        *bool             `toml:"ipv4_enabled"`
	PrivateNetwork     string            `toml:"private_network"`
	DeletionProtection bool              `toml:"deletion_protection"`
	SettingsVersion    int64             `toml:"settings_version"`
	State              string            `toml:"state"`
	Labels             map[string]string `toml:"labels"`
	Flags              map[string]string `toml:"flags"`
	// Count seeds that many instances like this one, named <name>-00000,
	// <name>-00001, ...
	Count int `toml:"count"`
}

// duration is a time.Duration written as a Go duration string.
type duration struct {
	time.Duration
	set bool
}

// UnmarshalText parses a Go duration such as "90s".
func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	if v < 0 {
		return errors.Errorf(errFmtNegativeDuration, b)
	}
	d.Duration, d.set = v, true
	return nil
}

const (
	errFmtReadConfig       = "reading config %s"
	errFmtUnknownKeys      = "config %s: unknown keys: %s"
	errFmtSeedInstance     = "config %s: instance %d (%s/%s)"
	errSeedMissing         = "project, name, database_version and tier are required"
	errFmtPostgresKey      = "config %s: postgres.%s %q"
	errFmtPostgresOff      = "config %s: postgres.bin_dir or postgres.run_as is set but the data plane is off: set postgres.enabled = true or pass --postgres"
	errFmtNegativeDuration = "duration %q is negative"
)

// loadConfig reads and checks a configuration file.
func loadConfig(path string) (*config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrapf(err, errFmtReadConfig, path)
	}
	var cfg config
	md, err := toml.Decode(string(b), &cfg)
	if err != nil {
		return nil, errors.Wrapf(err, errFmtReadConfig, path)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return nil, errors.Errorf(errFmtUnknownKeys, path, strings.Join(keys, ", "))
	}
	return &cfg, nil
}

// options turns the configuration into emulator options.
func (c *config) options() []emulator.Option {
	var opts []emulator.Option
	if c.RequestBudget != nil {
		opts = append(opts, emulator.WithRequestBudget(*c.RequestBudget))
	}
	if c.NameReservation.set {
		opts = append(opts, emulator.WithNameReservation(c.NameReservation.Duration))
	}
	if c.Seed != nil {
		opts = append(opts, emulator.WithRandSeed(*c.Seed))
	}
	opts = append(opts, emulator.WithDelays(c.Delays.Create.Duration, c.Delays.Update.Duration, c.Delays.Delete.Duration))
	return opts
}

// dataPlane returns the WithPostgres option when the data plane is on, after
// checking that PostgreSQL is there and the user to run it as exists; errors
// name the key at fault.
func (c *config) dataPlane(path string) ([]emulator.Option, error) {
	pc := c.Postgres
	if !pc.Enabled {
		if pc.BinDir != "" || pc.RunAs != "" {
			return nil, errors.Errorf(errFmtPostgresOff, path)
		}
		return nil, nil
	}
	bin, err := postgres.Config{BinDir: pc.BinDir}.Resolve()
	if err != nil {
		if pc.BinDir != "" {
			return nil, errors.Wrapf(err, errFmtPostgresKey, path, "bin_dir", pc.BinDir)
		}
		return nil, err
	}
	pg, err := postgres.Config{BinDir: bin.BinDir, RunAs: pc.RunAs}.Resolve()
	if err != nil {
		if pc.RunAs != "" {
			return nil, errors.Wrapf(err, errFmtPostgresKey, path, "run_as", pc.RunAs)
		}
		return nil, err
	}
	return []emulator.Option{emulator.WithPostgres(pg)}, nil
}

// seed stores the configured instances in srv.
func (c *config) seed(path string, srv *emulator.Server) error {
	for i, in := range c.Instances {
		if in.Project == "" || in.Name == "" || in.DatabaseVersion == "" || in.Tier == "" {
			return errors.Wrapf(errors.New(errSeedMissing), errFmtSeedInstance, path, i+1, in.Project, in.Name)
		}
		seed := func() error { return srv.Seed(in.Project, in.instance()) }
		if in.Count > 0 {
			seed = func() error { return srv.SeedMany(in.Project, in.instance(), in.Count) }
		}
		if err := seed(); err != nil {
			return errors.Wrapf(err, errFmtSeedInstance, path, i+1, in.Project, in.Name)
		}
	}
	return nil
}

func (in instanceSeed) instance() *sqladmin.DatabaseInstance {
	ipc := &sqladmin.IpConfiguration{Ipv4Enabled: true, PrivateNetwork: in.PrivateNetwork}
	if in.Ipv4Enabled != nil {
		ipc.Ipv4Enabled = *in.Ipv4Enabled
		ipc.ForceSendFields = []string{"Ipv4Enabled"}
	}
	st := &sqladmin.Settings{
		Tier:                      in.Tier,
		Edition:                   in.Edition,
		DataDiskSizeGb:            in.DiskSizeGb,
		AvailabilityType:          in.AvailabilityType,
		DeletionProtectionEnabled: in.DeletionProtection,
		SettingsVersion:           in.SettingsVersion,
		UserLabels:                in.Labels,
		IpConfiguration:           ipc,
	}
	if in.Zone != "" {
		st.LocationPreference = &sqladmin.LocationPreference{Zone: in.Zone}
	}
	names := make([]string, 0, len(in.Flags))
	for n := range in.Flags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		st.DatabaseFlags = append(st.DatabaseFlags, &sqladmin.DatabaseFlags{Name: n, Value: in.Flags[n]})
	}
	return &sqladmin.DatabaseInstance{
		Name:            in.Name,
		DatabaseVersion: in.DatabaseVersion,
		Region:          in.Region,
		RootPassword:    in.RootPassword,
		State:           in.State,
		Settings:        st,
	}
}
