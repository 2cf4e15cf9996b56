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

package xpkg

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const (
	errNoCrossplaneCLI   = "the Crossplane CLI is not set: run `make xpkg`, which builds it from hack/crank"
	errBuildCmd          = "cannot build %s"
	errBuildRuntimeImage = "cannot build the runtime image of %s"
	errWriteRuntimeImage = "cannot write the runtime image of %s"
	errXpkgBuild         = "crossplane xpkg build of %s failed"
	errNoExamples        = "no example manifests match %s"
)

// A Package is one Crossplane package this repository ships.
type Package struct {
	// Name of the package file (Name.xpkg) and of its runtime image.
	Name string
	// Binary is the name of the runtime image's entrypoint.
	Binary string
	// Cmd is the Go package of the binary.
	Cmd string
	// Root is the package root (crossplane.yaml and the objects), relative to the
	// repository root.
	Root string
	// Ignore are paths under Root that belong to another package.
	Ignore []string
	// Examples are globs, relative to the repository root, of the example
	// manifests shipped in the package. The Crossplane CLI takes a whole directory
	// tree, so they are staged into one of their own.
	Examples []string
}

// Packages are the packages `make xpkg` builds.
var Packages = []Package{
	{Name: "provider-cloudsql-postgres", Binary: "provider", Cmd: "./cmd/provider", Root: "package", Ignore: []string{"function/*"}, Examples: []string{"examples/*.yaml", "examples/namespaced/*.yaml", "examples/install/*.yaml"}},
	{Name: "function-cloudsql-postgres", Binary: "function", Cmd: "./cmd/function-cloudsql-postgres", Root: "package/function", Examples: []string{"examples/composition/definition.yaml", "examples/composition/composition.yaml", "examples/composition/claim.yaml", "examples/composition/definition-v2.yaml", "examples/composition/composition-v2.yaml", "examples/composition/xr-v2.yaml"}},
}

// BuildOptions say where to build.
type BuildOptions struct {
	// RepoRoot is the repository's root directory.
	RepoRoot string
	// OutDir receives the binaries, the image tarballs and the packages.
	OutDir string
	// CrossplaneCLI is the path of the Crossplane CLI (crank).
	CrossplaneCLI string
	// Log receives the output of the commands run.
	Log io.Writer
}

// Build compiles the package's static binary, wraps it in a runtime image and
// embeds that into the package with `crossplane xpkg build`. It returns the path
// of the .xpkg file.
func Build(ctx context.Context, o BuildOptions, p Package) (string, error) {
	if o.CrossplaneCLI == "" {
		return "", errors.New(errNoCrossplaneCLI)
	}
	bin := filepath.Join(o.OutDir, "bin", p.Binary)
	gobuild := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, p.Cmd)
	gobuild.Dir, gobuild.Stdout, gobuild.Stderr = o.RepoRoot, o.Log, o.Log
	gobuild.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := gobuild.Run(); err != nil {
		return "", errors.Wrapf(err, errBuildCmd, p.Cmd)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	ca, err := CABundle()
	if err != nil {
		return "", err
	}
	img, err := Image(p.Binary, data, ca)
	if err != nil {
		return "", errors.Wrapf(err, errBuildRuntimeImage, p.Name)
	}
	tag, err := name.NewTag("xpkg.local/" + p.Name + ":dev")
	if err != nil {
		return "", err
	}
	imgTar := filepath.Join(o.OutDir, p.Name+"-image.tar")
	if err := tarball.WriteToFile(imgTar, tag, img); err != nil {
		return "", errors.Wrapf(err, errWriteRuntimeImage, p.Name)
	}
	examples, err := stageExamples(o, p)
	if err != nil {
		return "", err
	}
	out := filepath.Join(o.OutDir, p.Name+".xpkg")
	args := []string{"xpkg", "build",
		"--package-root=" + filepath.Join(o.RepoRoot, p.Root),
		"--embed-runtime-image-tarball=" + imgTar,
		"--package-file=" + out,
		"--examples-root=" + examples,
	}
	for _, ig := range p.Ignore {
		args = append(args, "--ignore="+ig)
	}
	xp := exec.CommandContext(ctx, o.CrossplaneCLI, args...)
	xp.Dir, xp.Stdout, xp.Stderr = o.RepoRoot, o.Log, o.Log
	if err := xp.Run(); err != nil {
		return "", errors.Wrapf(err, errXpkgBuild, p.Name)
	}
	return out, nil
}

// stageExamples copies the package's example manifests into a directory of
// their own and returns it.
func stageExamples(o BuildOptions, p Package) (string, error) {
	dir := filepath.Join(o.OutDir, p.Name+"-examples")
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, glob := range p.Examples {
		files, err := filepath.Glob(filepath.Join(o.RepoRoot, glob))
		if err != nil {
			return "", err
		}
		if len(files) == 0 {
			return "", errors.Errorf(errNoExamples, glob)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			rel, err := filepath.Rel(o.RepoRoot, f)
			if err != nil {
				return "", err
			}
			target := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(target, data, 0o644); err != nil {
				return "", err
			}
		}
	}
	return dir, nil
}
