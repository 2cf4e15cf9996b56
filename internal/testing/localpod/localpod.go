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

// Package localpod runs the containers of a pod stored in the API server as local
// processes, the way a kubelet would run them but without one: exactly each
// container's command (or its image's entrypoint), arguments and environment, as
// the user its security context names, with the pod's volumes as local
// directories. Paths under a container's mounts, in its arguments and environment,
// are rewritten to those directories; nothing else is added unless the caller asks.
//
// The end-to-end test and `make demo` use it to run what the injector wrote (the
// password-file writers, the Cloud SQL Auth Proxy, and an application's psql)
// against the emulator's data plane. It is test tooling, not part of the provider.
package localpod

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/webhook/podinject"
)

const (
	errStageEntrypoint   = "cannot stage the entrypoint of %s"
	errVolume            = "volume %s of pod %s/%s"
	errNoSecretKey       = "secret %s has no key %s"
	errVolumeKind        = "only emptyDir and secret volumes can be run locally"
	errNoContainer       = "pod %s/%s has no container %s"
	errNoEntrypoint      = "container %s sets no command and image %s has no local entrypoint (localpod.WithImage)"
	errNotOnPath         = "container %s runs %s, which is not on this machine's PATH"
	errValueFrom         = "container %s takes %s from valueFrom, which localpod does not resolve"
	errRunAsUser         = "container %s runs as user %d: only root can run it as that user here"
	errNoStartupProbe    = "container %s has no HTTP startup probe on a numbered port"
	errProbeNeverPassed  = "startup probe of container %s never passed (last: %s)"
	errExitedBeforeProbe = "container %s exited before its startup probe passed (last: %s)"
)

// Pod is a stored pod whose volumes exist as local directories. Close removes them.
type Pod struct {
	pod     *corev1.Pod
	dir     string
	volumes map[string]string // volume name -> local directory
	images  map[string]string // image repository -> local entrypoint
}

// An Option configures Load.
type Option func(*Pod)

// WithImage says which local binary stands for the entrypoint of an image
// repository (an image reference without tag or digest), for containers that set
// no command.
func WithImage(repository, entrypoint string) Option {
	return func(p *Pod) { p.images[repository] = entrypoint }
}

// Load lays out the volumes of pod in a new temporary directory: an emptyDir as an
// empty directory anyone may write (as a kubelet makes it), a secret volume as the
// files of that secret in the pod's namespace, read through c, with their modes.
// Other volume types are an error.
func Load(ctx context.Context, c client.Reader, pod *corev1.Pod, opts ...Option) (*Pod, error) {
	dir, err := os.MkdirTemp("", "localpod-"+pod.Name+"-")
	if err != nil {
		return nil, err
	}
	// Containers run as other users must reach their volumes.
	if err := os.Chmod(dir, 0o755); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	p := &Pod{pod: pod.DeepCopy(), dir: dir, volumes: map[string]string{}, images: map[string]string{}}
	for _, o := range opts {
		o(p)
	}
	for repo, ep := range p.images {
		// Containers that run as another user must be able to reach the binary,
		// wherever the build cache keeps it (often under a private home).
		local, err := p.stage(ep)
		if err != nil {
			_ = p.Close()
			return nil, errors.Wrapf(err, errStageEntrypoint, repo)
		}
		p.images[repo] = local
	}
	for _, v := range pod.Spec.Volumes {
		local := filepath.Join(dir, "volumes", v.Name)
		if err := p.volume(ctx, c, v, local); err != nil {
			_ = p.Close()
			return nil, errors.Wrapf(err, errVolume, v.Name, pod.Namespace, pod.Name)
		}
		p.volumes[v.Name] = local
	}
	return p, nil
}

// SyncSecrets writes the secret volumes again from their secrets as they
// are now, each file replaced at once (a new file renamed over the old), as
// the kubelet's periodic sync brings a changed secret into a running pod.
func (p *Pod) SyncSecrets(ctx context.Context, c client.Reader) error {
	for _, v := range p.pod.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		if err := p.volume(ctx, c, v, p.volumes[v.Name]); err != nil {
			return errors.Wrapf(err, errVolume, v.Name, p.pod.Namespace, p.pod.Name)
		}
	}
	return nil
}

func (p *Pod) volume(ctx context.Context, c client.Reader, v corev1.Volume, local string) error {
	switch {
	case v.EmptyDir != nil:
		if err := os.MkdirAll(local, 0o755); err != nil {
			return err
		}
		return os.Chmod(local, 0o777)
	case v.Secret != nil:
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: p.pod.Namespace, Name: v.Secret.SecretName}, s); err != nil {
			return err
		}
		if err := os.MkdirAll(local, 0o755); err != nil {
			return err
		}
		mode := int32(0o644)
		if v.Secret.DefaultMode != nil {
			mode = *v.Secret.DefaultMode
		}
		items := v.Secret.Items
		if len(items) == 0 {
			for k := range s.Data {
				items = append(items, corev1.KeyToPath{Key: k, Path: k})
			}
		}
		for _, it := range items {
			data, ok := s.Data[it.Key]
			if !ok {
				return errors.Errorf(errNoSecretKey, s.Name, it.Key)
			}
			m := mode
			if it.Mode != nil {
				m = *it.Mode
			}
			// Written beside and renamed over: a reader never sees half a file.
			f := filepath.Join(local, it.Path)
			tmp := filepath.Join(filepath.Dir(f), ".."+filepath.Base(f)+".new")
			if err := os.WriteFile(tmp, data, 0o600); err != nil {
				return err
			}
			if err := os.Chmod(tmp, os.FileMode(m)); err != nil {
				return err
			}
			if err := os.Rename(tmp, f); err != nil {
				return err
			}
		}
		return nil
	}
	return errors.New(errVolumeKind)
}

// stage links (or copies) a binary into the pod's directory, readable and
// executable by anyone.
func (p *Pod) stage(bin string) (string, error) {
	dst := filepath.Join(p.dir, "bin", filepath.Base(bin))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if err := os.Link(bin, dst); err != nil {
		in, err := os.Open(bin)
		if err != nil {
			return "", err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			return "", err
		}
		if _, err := io.Copy(out, in); err != nil {
			_ = out.Close()
			return "", err
		}
		if err := out.Close(); err != nil {
			return "", err
		}
	}
	return dst, os.Chmod(dst, 0o755)
}

// Close removes the pod's local directories.
func (p *Pod) Close() error { return os.RemoveAll(p.dir) }

// Container returns the container (or init container) called name.
func (p *Pod) Container(name string) (*corev1.Container, error) {
	for _, cs := range [][]corev1.Container{p.pod.Spec.InitContainers, p.pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i], nil
			}
		}
	}
	return nil, errors.Errorf(errNoContainer, p.pod.Namespace, p.pod.Name, name)
}

// InitContainerNames are the names of the pod's init containers, in order.
func (p *Pod) InitContainerNames() []string {
	names := make([]string, 0, len(p.pod.Spec.InitContainers))
	for _, c := range p.pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	return names
}

// LocalPath is where path, as container name sees it, is on this machine. A path
// outside the container's mounts is returned unchanged.
func (p *Pod) LocalPath(name, path string) (string, error) {
	c, err := p.Container(name)
	if err != nil {
		return "", err
	}
	return p.rewrite(c, path), nil
}

// Command is container name run as the kubelet would run it: its command (or its
// image's entrypoint, see WithImage) and arguments, then extraArgs; only the
// variables of its env (literal values; valueFrom is an error) plus PATH and a
// HOME of its own; as its runAsUser, runAsGroup and the pod's fsGroup. Paths under
// its mounts are rewritten to the local volumes. The caller sets Stdout and Stderr
// and starts it.
func (p *Pod) Command(ctx context.Context, name string, extraArgs ...string) (*exec.Cmd, error) {
	c, err := p.Container(name)
	if err != nil {
		return nil, err
	}
	argv := append(append([]string{}, c.Command...), c.Args...)
	if len(c.Command) == 0 {
		ep, ok := p.images[podinject.Repository(c.Image)]
		if !ok {
			return nil, errors.Errorf(errNoEntrypoint, name, c.Image)
		}
		argv = append([]string{ep}, argv...)
	}
	argv = append(argv, extraArgs...)
	for i := range argv {
		argv[i] = p.rewrite(c, argv[i])
	}
	bin := argv[0]
	if !filepath.IsAbs(bin) {
		if bin, err = exec.LookPath(bin); err != nil {
			return nil, errors.Wrapf(err, errNotOnPath, name, argv[0])
		}
	}

	home := filepath.Join(p.dir, "home", name)
	if err := os.MkdirAll(home, 0o777); err != nil {
		return nil, err
	}
	_ = os.Chmod(home, 0o777)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			return nil, errors.Errorf(errValueFrom, name, e.Name)
		}
		env = append(env, e.Name+"="+p.rewrite(c, e.Value))
	}

	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Env = env
	cmd.Dir = home
	cred, err := p.credential(c)
	if err != nil {
		return nil, err
	}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd, nil
}

// Run runs container name to completion and returns what it printed.
func (p *Pod) Run(ctx context.Context, name string, extraArgs ...string) (string, error) {
	cmd, err := p.Command(ctx, name, extraArgs...)
	if err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// credential is the user container c runs as, nil for the caller. Without
// runAsGroup a numeric user gets group 0, as container runtimes give a user that
// the image's passwd does not list.
func (p *Pod) credential(c *corev1.Container) (*syscall.Credential, error) {
	var uid, gid *int64
	var fsGroup *int64
	if psc := p.pod.Spec.SecurityContext; psc != nil {
		uid, gid, fsGroup = psc.RunAsUser, psc.RunAsGroup, psc.FSGroup
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
	}
	if uid == nil {
		uid = new(int64) // the image's user; these images' is root
	}
	self := int64(os.Geteuid())
	if self != 0 {
		if *uid != self && *uid != 0 {
			return nil, errors.Errorf(errRunAsUser, c.Name, *uid)
		}
		return nil, nil
	}
	cred := &syscall.Credential{Uid: uint32(*uid)}
	if gid != nil {
		cred.Gid = uint32(*gid)
	}
	if fsGroup != nil {
		cred.Groups = []uint32{uint32(*fsGroup)}
	}
	return cred, nil
}

// rewrite replaces, in s, every path under one of c's mounts with the local
// volume: a mount path counts where it starts s or follows a character that
// cannot be part of a path (such as '=' or ' '), and ends s or is followed by
// '/' or such a character. Longer mount paths win.
func (p *Pod) rewrite(c *corev1.Container, s string) string {
	mounts := append([]corev1.VolumeMount{}, c.VolumeMounts...)
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i].MountPath) > len(mounts[j].MountPath) })
	var b strings.Builder
	for i := 0; i < len(s); {
		matched := false
		if i == 0 || !pathChar(s[i-1]) {
			for _, m := range mounts {
				mp := strings.TrimSuffix(m.MountPath, "/")
				end := i + len(mp)
				if mp == "" || !strings.HasPrefix(s[i:], mp) || (end < len(s) && s[end] != '/' && pathChar(s[end])) {
					continue
				}
				local := p.volumes[m.Name]
				if m.SubPath != "" {
					local = filepath.Join(local, m.SubPath)
				}
				b.WriteString(local)
				i = end
				matched = true
				break
			}
		}
		if !matched {
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

func pathChar(c byte) bool {
	return c == '/' || c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// WaitStarted polls the HTTP startup probe of container name, on 127.0.0.1 (where a
// local process listens for the pod's IP), until it answers 2xx or 3xx as the
// kubelet requires, ctx ends, or exited is closed (the process is gone).
func (p *Pod) WaitStarted(ctx context.Context, name string, exited <-chan struct{}) error {
	c, err := p.Container(name)
	if err != nil {
		return err
	}
	pr := c.StartupProbe
	if pr == nil || pr.HTTPGet == nil || pr.HTTPGet.Port.IntValue() == 0 {
		return errors.Errorf(errNoStartupProbe, name)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(pr.HTTPGet.Port.IntValue()) + pr.HTTPGet.Path
	hc := &http.Client{Timeout: 2 * time.Second}
	var last string
	for {
		resp, err := hc.Get(url)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			_ = resp.Body.Close()
			if resp.StatusCode >= 200 && resp.StatusCode < 400 {
				return nil
			}
			last = fmt.Sprintf("%s answered %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return errors.Wrapf(ctx.Err(), errProbeNeverPassed, name, last)
		case <-exited:
			return errors.Errorf(errExitedBeforeProbe, name, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
