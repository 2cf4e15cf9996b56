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

package localpod

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestRewrite(t *testing.T) {
	p := &Pod{volumes: map[string]string{"pgpass": "/L/pgpass", "secret": "/L/secret", "conf": "/L/conf"}}
	c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "pgpass", MountPath: "/var/run/cloudsql-postgres"},
		{Name: "secret", MountPath: "/var/run/cloudsql-postgres-secret"},
		{Name: "conf", MountPath: "/etc/app/", SubPath: "app.conf"},
	}}
	cases := map[string]struct {
		in, want string
	}{
		"AWholeMountPath":               {"/var/run/cloudsql-postgres", "/L/pgpass"},
		"AFileUnderAMount":              {"/var/run/cloudsql-postgres/pgpass-0", "/L/pgpass/pgpass-0"},
		"TheLongerOfTwoOverlappingOnes": {"/var/run/cloudsql-postgres-secret/pgpass", "/L/secret/pgpass"},
		"AfterAFlagsEquals":             {"--credentials-file=/var/run/cloudsql-postgres/k.json", "--credentials-file=/L/pgpass/k.json"},
		"SeveralInAShellLine":           {`cat "/var/run/cloudsql-postgres-secret/pgpass" > /var/run/cloudsql-postgres/pgpass-7`, `cat "/L/secret/pgpass" > /L/pgpass/pgpass-7`},
		"APathThatOnlyStartsAlike":      {"/var/run/cloudsql-postgresql/x", "/var/run/cloudsql-postgresql/x"},
		"InsideAnotherPath":             {"/opt/var/run/cloudsql-postgres/x", "/opt/var/run/cloudsql-postgres/x"},
		"ATrailingSlashInTheMountPath":  {"/etc/app/x", "/L/conf/app.conf/x"},
		"NothingToRewrite":              {"select current_user", "select current_user"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(p.rewrite(c, tc.in)).To(Equal(tc.want))
		})
	}
}

func TestLoadAndCommand(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "p"},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
					SecretName: "s", DefaultMode: ptr.To[int32](0o440),
					Items: []corev1.KeyToPath{{Key: "k", Path: "key.json"}},
				}}},
			},
			Containers: []corev1.Container{
				{Name: "proxy", Image: "example.com/proxy:1.2", Args: []string{"--credentials-file=/creds/key.json"},
					VolumeMounts: []corev1.VolumeMount{{Name: "creds", MountPath: "/creds"}}},
				{Name: "app", Image: "example.com/app", Command: []string{"sh", "-c", "true"},
					Env:          []corev1.EnvVar{{Name: "PGPASSFILE", Value: "/scratch/pgpass"}, {Name: "A", Value: "b"}},
					VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}},
				{Name: "secretive", Image: "example.com/app", Command: []string{"true"},
					Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{}}}},
				{Name: "imageonly", Image: "example.com/unknown:3"},
			},
		},
	}
	kube := fake.NewClientBuilder().WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "s"}, Data: map[string][]byte{"k": []byte(`{"type":"x"}`)},
	}).Build()
	entry := filepath.Join(t.TempDir(), "proxy-bin")
	g.Expect(os.WriteFile(entry, []byte("#!/bin/sh\n"), 0o700)).To(Succeed())

	lp, err := Load(ctx, kube, pod, WithImage("example.com/proxy", entry))
	g.Expect(err).NotTo(HaveOccurred())
	defer lp.Close()

	key, err := lp.LocalPath("proxy", "/creds/key.json")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.ReadFile(key)).To(Equal([]byte(`{"type":"x"}`)))
	fi, err := os.Stat(key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o440)), "the secret volume's mode")

	cmd, err := lp.Command(ctx, "proxy", "--extra")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(filepath.Dir(cmd.Path)).NotTo(Equal(filepath.Dir(entry)), "the entrypoint is staged where any user can run it")
	g.Expect(cmd.Args[1:]).To(Equal([]string{"--credentials-file=" + key, "--extra"}))

	cmd, err = lp.Command(ctx, "app")
	g.Expect(err).NotTo(HaveOccurred())
	scratch, _ := lp.LocalPath("app", "/scratch")
	g.Expect(cmd.Env).To(ContainElements("PGPASSFILE="+scratch+"/pgpass", "A=b"))
	g.Expect(cmd.Env).NotTo(ContainElement(HavePrefix("PGHOST=")), "nothing of this process's environment leaks in")
	fi, err = os.Stat(scratch)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o777)), "an emptyDir anyone may write, as the kubelet makes it")

	_, err = lp.Command(ctx, "secretive")
	g.Expect(err).To(MatchError(ContainSubstring("valueFrom")))
	_, err = lp.Command(ctx, "imageonly")
	g.Expect(err).To(MatchError(ContainSubstring("example.com/unknown:3")))
	_, err = lp.Command(ctx, "missing")
	g.Expect(err).To(MatchError(ContainSubstring("no container missing")))

	dir := lp.dir
	g.Expect(lp.Close()).To(Succeed())
	g.Expect(dir).NotTo(BeADirectory())
}

// StartProxy adds the emulator's endpoint only to a proxy that has none (the
// injector writes the configuration's), and a token only to one without a key.
func TestProxyExtraArgs(t *testing.T) {
	const endpoint = "http://127.0.0.1:8085/"
	for name, tc := range map[string]struct {
		args, want []string
	}{
		"Neither":                  {args: []string{"--port=20000", "p:r:i"}, want: []string{"--sqladmin-api-endpoint=" + endpoint, "--token=localpod-token"}},
		"TheInjectorsEndpoint":     {args: []string{"--sqladmin-api-endpoint=http://10.0.0.9/", "p:r:i"}, want: []string{"--token=localpod-token"}},
		"AnEndpointAsTwoArgs":      {args: []string{"--sqladmin-api-endpoint", "http://10.0.0.9/", "p:r:i"}, want: []string{"--token=localpod-token"}},
		"AKey":                     {args: []string{"--credentials-file=/k.json", "p:r:i"}, want: []string{"--sqladmin-api-endpoint=" + endpoint}},
		"AKeyShort":                {args: []string{"-c=/k.json"}, want: []string{"--sqladmin-api-endpoint=" + endpoint}},
		"Both":                     {args: []string{"--sqladmin-api-endpoint=" + endpoint, "--credentials-file", "/k.json"}},
		"AFlagThatOnlyStartsAlike": {args: []string{"--sqladmin-api-endpointx=1"}, want: []string{"--sqladmin-api-endpoint=" + endpoint, "--token=localpod-token"}},
	} {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(proxyExtraArgs(tc.args, endpoint)).To(Equal(tc.want))
		})
	}
}

// Stop ends the whole process group of a container, as the end of its PID
// namespace would: a shell that ends on SIGTERM leaves no sleep behind.
func TestStopEndsTheProcessGroup(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "follower", Image: "example.com/sh",
			Command: []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & echo \"sleep $!\"; wait $!"}}}},
	}
	lp, err := Load(ctx, fake.NewClientBuilder().Build(), pod)
	g.Expect(err).NotTo(HaveOccurred())
	defer lp.Close()
	out := &Output{}
	x, err := lp.Start(ctx, "follower", out)
	g.Expect(err).NotTo(HaveOccurred())
	var sleep int
	g.Eventually(func() (int, error) { _, err := fmt.Sscanf(out.String(), "sleep %d", &sleep); return sleep, err }).ShouldNot(BeZero())
	g.Expect(x.Stop()).To(Succeed())
	// Reaped by init, which here takes a moment.
	g.Eventually(func() error { return syscall.Kill(sleep, 0) }).WithTimeout(10*time.Second).Should(MatchError(syscall.ESRCH), "the shell's sleep (pid %d) is left", sleep)
}
