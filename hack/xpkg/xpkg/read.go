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
	"archive/tar"
	"io"
	"path"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/manifests"
)

const (
	errNotTarball    = "%s is not an image tarball"
	errNoPackageFile = "%s holds no %s"
	errParsePackage  = "%s: %s does not parse"
)

// packageFile is where `crossplane xpkg build` puts the package's objects.
const packageFile = "package.yaml"

// Contents are what a package file holds.
type Contents struct {
	// Objects are the package's objects: the meta object (crossplane.yaml) first.
	Objects []*unstructured.Unstructured
	// Config is the image configuration: entrypoint, user, environment.
	Config *v1.ConfigFile
	// Files is the flattened filesystem of the image (package and runtime layers).
	Files map[string][]byte
}

// Read opens a package file (an image tarball) and decodes its objects.
func Read(p string) (*Contents, error) {
	img, err := tarball.ImageFromPath(p, nil)
	if err != nil {
		return nil, errors.Wrapf(err, errNotTarball, p)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	c := &Contents{Config: cfg, Files: map[string][]byte{}}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		c.Files[path.Clean("/"+strings.TrimPrefix(h.Name, "./"))] = b
	}
	raw, ok := c.Files["/"+packageFile]
	if !ok {
		return nil, errors.Errorf(errNoPackageFile, p, packageFile)
	}
	objs, err := manifests.Decode(raw)
	if err != nil {
		return nil, errors.Wrapf(err, errParsePackage, p, packageFile)
	}
	c.Objects = objs
	return c, nil
}
