//go:build tools

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
