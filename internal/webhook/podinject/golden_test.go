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

package podinject

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/configfile"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden from what Mutate returns now")

// TestUnannotatedPodsAreAsBefore holds what the injector makes of pods that
// ask for nothing but an instance or a user, with the provider's default
// configuration, byte for byte: the proxy's per-workload annotations must
// change nothing for the pods that do not use them. The files were written
// before those annotations existed; rewrite them (-update-golden) only for a
// change every injected pod is meant to get, and say so in its commit.
func TestUnannotatedPodsAreAsBefore(t *testing.T) {
	cfg, err := ConfigFrom(configfile.Defaults(), true)
	if err != nil {
		t.Fatal(err)
	}
	base := func(fns ...func(*Inputs)) Inputs {
		x := Inputs{
			Instance:       "postgresqlinstances.cloudsql.travelaudience.com/db",
			ConnectionName: testConnectionName,
			PgpassSecret:   "cloudsql-pgpass-db",
			ProxyImage:     cfg.ProxyImage,
			WriterImage:    cfg.WriterImage,
			Native:         cfg.Native,
			ProxyResources: cfg.ProxyResources,
			Rand:           rand.New(rand.NewPCG(7, 11)),
		}
		for _, fn := range fns {
			fn(&x)
		}
		return x
	}
	twoUsers := func(p *corev1.Pod) {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true)}
		p.Spec.InitContainers = []corev1.Container{migrate}
		p.Spec.Containers = append(p.Spec.Containers, worker)
	}
	cases := map[string]struct {
		pod *corev1.Pod
		x   Inputs
	}{
		"native":                 {pod: pod(), x: base()},
		"classic":                {pod: pod(), x: base(classic)},
		"native-two-users":       {pod: pod(twoUsers), x: base()},
		"classic-two-users":      {pod: pod(twoUsers), x: base(classic)},
		"native-private-key":     {pod: pod(), x: base(private, withCreds, endpoint(testEndpoint))},
		"classic-private-key":    {pod: pod(), x: base(classic, private, withCreds, endpoint(testEndpoint))},
		"native-user-database":   {pod: pod(), x: base(asLogin("orders_app", "orders"))},
		"classic-iam":            {pod: pod(), x: base(classic, asIAM("app@my-project-123.iam", "orders"))},
		"native-iam":             {pod: pod(), x: base(asIAM("app@my-project-123.iam", ""))},
		"classic-own-grace":      {pod: pod(func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5) }), x: base(classic)},
		"native-with-app-probes": {pod: pod(takesTheDrawnPorts), x: base()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			// As the injector reads them: the pod's annotations, within the
			// default caps.
			shape, err := ParseShape(tc.pod.Annotations, cfg.ProxyResources, cfg.Limits, Paths{Public: true, Private: true})
			g.Expect(err).ToNot(HaveOccurred())
			g.Expect(shape).To(Equal(Shape{}))
			tc.x.Shape = shape
			out, err := Mutate(tc.pod, tc.x)
			g.Expect(err).ToNot(HaveOccurred())
			got, err := json.MarshalIndent(struct {
				Pod         *corev1.Pod `json:"pod"`
				ProxyConfig string      `json:"proxyConfig"`
			}{out, ProxyConfigOf(tc.x).String()}, "", "  ")
			g.Expect(err).ToNot(HaveOccurred())
			file := filepath.Join("testdata", "golden", name+".json")
			if *updateGolden {
				g.Expect(os.WriteFile(file, append(got, '\n'), 0o644)).To(Succeed())
			}
			want, err := os.ReadFile(file)
			g.Expect(err).ToNot(HaveOccurred(), "run go test -run TestUnannotatedPodsAreAsBefore -update-golden once to write it")
			g.Expect(string(got)+"\n").To(Equal(string(want)), "an unannotated pod changed; if every injected pod is meant to change, rewrite with -update-golden and say why")
		})
	}
}
