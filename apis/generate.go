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

// Code generation for the API types. `go generate ./...` (or `make generate`) runs it:
// deepcopy and the CRDs come from controller-gen, the managed-resource method sets
// from angryjet. Both tools are pinned as `tool` directives in go.mod.

// Remove the old CRDs first so that a renamed or deleted kind leaves nothing behind.
//go:generate rm -rf ../package/crds

//go:generate go tool controller-gen object:headerFile=../hack/boilerplate.go.txt paths=./...
//go:generate go tool controller-gen crd:crdVersions=v1 paths=./... output:artifacts:config=../package/crds
//go:generate go tool angryjet generate-methodsets --header-file=../hack/boilerplate.go.txt ./...

// The API reference is written from the CRDs, so that it can never drift from them.
//go:generate go run ../hack/apidocs --crds ../package/crds --out ../docs/api.md

package apis
