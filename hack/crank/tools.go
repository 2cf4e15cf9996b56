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

// Package tools pins the Crossplane CLI (crank), which `make xpkg` uses to build
// the provider and function packages and the tests use for `crossplane render`. It
// is a module of its own so that Crossplane's dependencies never mix with the
// provider's or with the control plane's.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crank"
