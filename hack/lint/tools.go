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

// Package tools pins staticcheck, which `make lint` runs beside go vet (its
// checks are configured in staticcheck.conf at the repository's root), and
// goimports, whose check keeps imports in three groups: the standard library,
// other modules, this module. It is a module of its own so that the linter's dependencies never mix
// with the provider's; the Makefile builds it once into the tool cache.
package tools

import (
	_ "golang.org/x/tools/cmd/goimports"
	_ "honnef.co/go/tools/cmd/staticcheck"
)
