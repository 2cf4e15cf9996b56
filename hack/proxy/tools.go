//go:build tools

// Package tools pins the Cloud SQL Auth Proxy, which the end-to-end test and
// `make demo` run against the emulator's data plane. Its version here is the one
// place that names the proxy release: `go generate` writes it into the provider's
// default [proxy] image (internal/configfile), so the test proves the arguments the
// injector writes against the release it deploys. It is a module of its own so that
// the proxy's dependencies never mix with the provider's.
package tools

import _ "github.com/GoogleCloudPlatform/cloud-sql-proxy/v2"
