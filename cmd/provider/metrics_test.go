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

package main

import (
	"context"
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/travelaudience/cloudsql-postgres-operator/internal/testing/controlplane"
)

// /metrics, served as the provider serves it by default, answers only callers
// that the API server authenticates and authorizes for the non-resource URL
// /metrics: no token is refused (401), a service account without the grant too
// (403), one bound to a role that grants it reads the metrics.
func TestMetricsNeedAuthorization(t *testing.T) {
	controlplane.Need(t)
	g := NewWithT(t)
	env, err := controlplane.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	c := env.Client
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: defaultNamespace}})).To(Succeed())

	health, metrics := freeAddr(g), freeAddr(g)
	startProvider(t, g, env, "", "--metrics-bind-address", metrics, "--health-probe-bind-address", health)

	token := func(name string) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: defaultNamespace, Name: name}}
		g.Expect(c.Create(ctx, sa)).To(Succeed())
		tr := &authenticationv1.TokenRequest{}
		g.Expect(c.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
		return tr.Status.Token
	}
	scraper, stranger := token("scraper"), token("stranger")
	g.Expect(c.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	})).To(Succeed())
	g.Expect(c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: defaultNamespace, Name: "scraper"}},
	})).To(Succeed())

	// The certificate is the provider's own, self-signed: what is tested is
	// who may read, not whom to trust.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
	status := func(token string) func() (int, error) {
		return func() (int, error) {
			req, err := http.NewRequest(http.MethodGet, "https://"+metrics+"/metrics", nil)
			if err != nil {
				return 0, err
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := hc.Do(req)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			return resp.StatusCode, nil
		}
	}
	g.Eventually(status(scraper), 30*time.Second, 200*time.Millisecond).Should(Equal(http.StatusOK))
	g.Expect(status("")()).To(Equal(http.StatusUnauthorized))
	g.Expect(status(stranger)()).To(Equal(http.StatusForbidden))
	plain, err := http.Get("http://" + metrics + "/metrics")
	if err == nil {
		defer plain.Body.Close()
		g.Expect(plain.StatusCode).To(Equal(http.StatusBadRequest), "plain HTTP must not serve the metrics")
	}
}
