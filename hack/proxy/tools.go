//go:build tools

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

// Package tools pins the Cloud SQL Auth Proxy, which the end-to-end test and
// `make demo` run against the emulator's data plane. Its version here is the one
// place that names the proxy release: `go generate` writes it into the provider's
// default [proxy] image (internal/configfile), so the test proves the arguments the
// injector writes against the release it deploys. It is a module of its own so that
// the proxy's dependencies never mix with the provider's.
package tools

import _ "github.com/GoogleCloudPlatform/cloud-sql-proxy/v2"
