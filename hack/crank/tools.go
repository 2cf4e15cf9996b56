//go:build tools

// Package tools pins the Crossplane CLI (crank), which `make xpkg` uses to build
// the provider and function packages and the tests use for `crossplane render`. It
// is a module of its own so that Crossplane's dependencies never mix with the
// provider's or with the control plane's.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crank"
