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

// Command cloudsql-emulator serves the in-memory Cloud SQL Admin API v1beta4
// emulator of internal/emulator over HTTP, for demos, end-to-end tests and
// benchmarks. From a clone of the repository:
//
//	go run ./cmd/cloudsql-emulator --listen 127.0.0.1:8085
//
// and point a client at it, e.g. with the Go client
// option.WithEndpoint("http://127.0.0.1:8085/") and
// option.WithoutAuthentication(). It logs one line per request (wall time,
// HTTP method, path, status, duration) to standard error, and shuts down
// cleanly, exiting 0, on SIGTERM or SIGINT.
//
// # Flags
//
//	--listen ADDR   address to listen on (default 127.0.0.1:8085; port 0
//	                picks a free port, printed in the "listening on" line)
//	--config FILE   TOML configuration file (optional)
//	--postgres      back instances with real PostgreSQL servers (as
//	                [postgres] enabled = true below)
//
// # Configuration
//
// Every key is optional; durations are Go durations such as "90s" or "168h".
// Unknown keys are an error, so that a typo doesn't go unnoticed.
//
//	request_budget   = 180     # API requests per project per minute; 0 disables
//	name_reservation = "168h"  # how long a deleted instance's name stays taken
//	seed             = 1       # seed of the emulator's random choices
//
//	[delays]                   # how long operations take (default 0: at once)
//	create = "30s"
//	update = "10s"             # also users.* and databases.* changes
//	delete = "20s"
//
//	[postgres]                 # the data plane (default off)
//	enabled = true             # a PostgreSQL server per RUNNABLE instance
//	# bin_dir = "/usr/lib/postgresql/15/bin"  # default: found (Debian's layout, pg_config, PATH)
//	run_as  = "postgres"       # OS user of the servers when run as root (default postgres, else nobody)
//
//	[[instances]]              # pre-existing instances, RUNNABLE from the start
//	project             = "demo-project"      # required
//	name                = "legacy-db"         # required
//	database_version    = "POSTGRES_15"       # required
//	tier                = "db-custom-1-3840"  # required
//	region              = "europe-west1"      # default us-central1
//	zone                = "europe-west1-c"    # default <region>-b
//	edition             = "ENTERPRISE"        # default by version
//	disk_size_gb        = 20                  # default 10
//	availability_type   = "ZONAL"
//	root_password       = "change-me"         # password of the postgres user
//	ipv4_enabled        = true                # default true
//	private_network     = "projects/demo-project/global/networks/default"
//	deletion_protection = false
//	settings_version    = 3                   # default 1
//	state               = "RUNNABLE"          # or MAINTENANCE, SUSPENDED, ...
//	labels              = { team = "payments" }
//	flags               = { max_connections = "100" }
//	# count             = 1000                # seeds legacy-db-00000 ... legacy-db-00999 instead
//
// # Connecting with the Cloud SQL Auth Proxy and psql
//
// With --postgres, each RUNNABLE instance gets its own loopback address per IP
// type (127.0.0.2, 127.0.0.3, ...) in ipAddresses, where port 3307 takes TLS 1.3
// connections with a client certificate from generateEphemeralCert, as Cloud
// SQL's server-side proxy does, and forwards them to a PostgreSQL server of the
// instance's own (Debian's postgresql-15, run as an unprivileged user; its files
// go when the instance is deleted or the emulator stops). The postgres user's
// password is the instance's rootPassword and follows users.update. So the real
// proxy connects as it would to Cloud SQL:
//
//	go run ./cmd/cloudsql-emulator --postgres --config seed.toml   # seeds demo-project:legacy-db
//	cloud-sql-proxy --sqladmin-api-endpoint http://127.0.0.1:8085/ --token unused \
//	    --port 15432 demo-project:europe-west1:legacy-db &
//	PGPASSWORD=change-me psql -h 127.0.0.1 -p 15432 -U postgres -c 'select current_user'
//
// `make cloud-sql-proxy` builds the proxy release the provider deploys.
//
// # Admin endpoints
//
// Besides the API under /sql/v1beta4/, the emulator serves its admin surface
// under /emulator/v1/ (request counts, the operation log, faults, the clock,
// out-of-band changes, password checks); the package doc of
// internal/emulator lists the endpoints. For example:
//
//	curl -s localhost:8085/emulator/v1/counts
//	curl -s -XPOST localhost:8085/emulator/v1/operations:finish
//	curl -s -XPOST localhost:8085/emulator/v1/faults -d '{"method":"instances.get","serverErrorShare":0.2}'
package main
