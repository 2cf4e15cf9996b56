// Package composetest tests examples/composition end to end, the way a platform team
// would use it: `crossplane render` runs the example Composition against the
// function served in the test process, `crossplane beta validate` checks the claim
// and the composite against the XRD (offline, with Crossplane's own CRDs), and a
// real kube-apiserver with Crossplane's CRDs beside the provider's accepts the XRD,
// both Compositions and every PostgresqlInstance the function renders.
//
// It needs the Crossplane CLI (CROSSPLANE_CLI) and the directory of Crossplane's
// CRDs (CROSSPLANE_CRDS), both of which `make test` provides, besides
// KUBEBUILDER_ASSETS.
package composetest
