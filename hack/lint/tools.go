//go:build tools

// Package tools pins staticcheck, which `make lint` runs beside go vet and the
// gofmt check (its checks are configured in staticcheck.conf at the repository's
// root). It is a module of its own so that the linter's dependencies never mix
// with the provider's; the Makefile builds it once into the tool cache.
package tools

import _ "honnef.co/go/tools/cmd/staticcheck"
