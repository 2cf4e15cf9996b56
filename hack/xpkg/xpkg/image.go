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

// Package xpkg builds the provider's and the composition function's Crossplane
// packages on a machine without a Docker engine: a minimal OCI runtime image around
// each static binary (go-containerregistry), embedded into the package by the
// Crossplane CLI's `xpkg build`. It also reads packages back, for the tests that
// check what users will install.
package xpkg

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const (
	errNoCABundle = "no CA bundle at %v: install the ca-certificates package"
)

// NonRootUID is the user (and group) the images run as.
const NonRootUID = 65532

// CABundlePaths are where Debian-like hosts keep the CA bundle that goes into images.
var CABundlePaths = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"}

const (
	binDir       = "/usr/local/bin"
	caBundleFile = "/etc/ssl/certs/ca-certificates.crt"
)

// A file in an image layer.
type file struct {
	name string
	mode int64
	data []byte
	dir  bool
}

// Image returns a minimal image that runs binary as /usr/local/bin/<name> as a
// non-root user: no shell, no package manager, just the binary, the CA bundle (for
// TLS to Google's APIs), /etc/passwd and a writable /tmp. Timestamps are zero, so
// the same inputs give the same image.
func Image(name string, binary, caBundle []byte) (v1.Image, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRootUID, NonRootUID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootUID)
	files := []file{
		{name: "etc/", dir: true, mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/ssl/", dir: true, mode: 0o755},
		{name: "etc/ssl/certs/", dir: true, mode: 0o755},
		{name: caBundleFile[1:], mode: 0o644, data: caBundle},
		{name: "home/", dir: true, mode: 0o755},
		{name: "home/nonroot/", dir: true, mode: 0o700},
		{name: "tmp/", dir: true, mode: 0o1777},
		{name: "usr/", dir: true, mode: 0o755},
		{name: "usr/local/", dir: true, mode: 0o755},
		{name: "usr/local/bin/", dir: true, mode: 0o755},
		{name: path.Join(binDir, name)[1:], mode: 0o755, data: binary},
	}
	layerTar, err := tarOf(files)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint = []string{path.Join(binDir, name)}
	cf.Config.User = fmt.Sprintf("%d:%d", NonRootUID, NonRootUID)
	cf.Config.Env = []string{"SSL_CERT_FILE=" + caBundleFile, "HOME=/home/nonroot"}
	cf.Config.WorkingDir = "/home/nonroot"
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.source":   "https://github.com/travelaudience/cloudsql-postgres-operator",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.title":    name,
	}
	return mutate.ConfigFile(img, cf)
}

// CABundle reads the host's CA bundle.
func CABundle() ([]byte, error) {
	for _, p := range CABundlePaths {
		if b, err := os.ReadFile(p); err == nil {
			return b, nil
		}
	}
	return nil, errors.Errorf(errNoCABundle, CABundlePaths)
}

func tarOf(files []file) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if f.name == "home/nonroot/" || f.name == "tmp/" {
			h.Uid, h.Gid = NonRootUID, NonRootUID
		}
		if f.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
