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

package pgsql

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/cloudsqlconn"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/providerconfig"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

// recorder is a transport that records the paths it carries.
type recorder struct {
	mu    sync.Mutex
	paths []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.paths = append(r.paths, req.URL.Path)
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.paths...)
}

func config(name, uid, endpoint string) *v1alpha1.ProviderConfig {
	return &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)},
		Spec:       v1alpha1.ProviderConfigSpec{Project: v1alpha1.Project{Endpoint: endpoint}},
	}
}

// dialOnce makes d ask the Admin API for an instance's connection settings;
// the emulator has no such instance, so it fails once that is done.
func dialOnce(d *cloudsqlconn.Dialer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := d.Dial(ctx, "p:europe-west1:none")
	if err == nil {
		_ = conn.Close()
	}
	return err
}

func TestDialerCache(t *testing.T) {
	hs := httptest.NewServer(emulator.New())
	t.Cleanup(hs.Close)
	none := auth.Credentials{Source: xpv2.CredentialsSourceNone}

	t.Run("OneDialerPerConfigurationUntilItChanges", func(t *testing.T) {
		g := NewWithT(t)
		c := NewDialerCache(nil)
		t.Cleanup(func() { _ = c.Close() })
		pc := config("default", "u1", hs.URL)
		first, err := c.Get(pc, none)
		g.Expect(err).NotTo(HaveOccurred())
		again, err := c.Get(pc, none)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(again).To(BeIdenticalTo(first), "the same configuration reuses its dialer and the certificates it holds")

		changed := config("default", "u1", hs.URL+"/other")
		next, err := c.Get(changed, none)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(next).NotTo(BeIdenticalTo(first), "a changed endpoint gets a dialer of its own")
		g.Expect(errors.Is(dialOnce(first), cloudsqlconn.ErrDialerClosed)).To(BeTrue(), "the replaced dialer is closed")
		g.Expect(c.Len()).To(Equal(1))

		key := auth.Credentials{Source: xpv2.CredentialsSourceSecret, JSON: []byte(`{"type":"service_account"}`)}
		_, err = c.Get(changed, key)
		g.Expect(err).To(HaveOccurred(), "a broken key is refused")
		g.Expect(err.Error()).To(ContainSubstring(`ProviderConfig "default"`))
	})

	t.Run("IdleDialersAreDroppedAndClosed", func(t *testing.T) {
		g := NewWithT(t)
		now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		c := NewDialerCache(nil, withClock(func() time.Time { return now }))
		t.Cleanup(func() { _ = c.Close() })
		idle, err := c.Get(config("idle", "u1", hs.URL), none)
		g.Expect(err).NotTo(HaveOccurred())
		now = now.Add(IdleDialer / 2)
		busy, err := c.Get(config("busy", "u2", hs.URL), none)
		g.Expect(err).NotTo(HaveOccurred())
		now = now.Add(IdleDialer/2 + time.Minute)
		_, err = c.Get(config("busy", "u2", hs.URL), none)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c.Len()).To(Equal(2), "dropped only when another configuration needs a dialer")
		_, err = c.Get(config("new", "u3", hs.URL), none)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c.Len()).To(Equal(2))
		g.Expect(errors.Is(dialOnce(idle), cloudsqlconn.ErrDialerClosed)).To(BeTrue(), "the idle dialer is closed")
		g.Expect(errors.Is(dialOnce(busy), cloudsqlconn.ErrDialerClosed)).To(BeFalse(), "the busy one is kept")

		g.Expect(c.Close()).To(Succeed())
		g.Expect(c.Len()).To(BeZero())
		g.Expect(errors.Is(dialOnce(busy), cloudsqlconn.ErrDialerClosed)).To(BeTrue(), "Close closes every dialer")
	})

	t.Run("AdminAPIRequestsGoThroughTheConfigurationsTransport", func(t *testing.T) {
		g := NewWithT(t)
		platform, tenants := &recorder{}, map[string]*recorder{}
		var mu sync.Mutex
		c := NewDialerCache(platform, WithTenantTransport(func(key string) http.RoundTripper {
			mu.Lock()
			defer mu.Unlock()
			tenants[key] = &recorder{}
			return tenants[key]
		}))
		t.Cleanup(func() { _ = c.Close() })

		d, err := c.Get(config("default", "u1", hs.URL), none)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(dialOnce(d)).To(HaveOccurred())
		// The connector asks for settings and a certificate at once, and
		// the dial fails with the first answer: wait for both.
		g.Eventually(platform.seen).Should(ConsistOf(
			"/sql/v1beta4/projects/p/instances/none/connectSettings",
			"/sql/v1beta4/projects/p/instances/none:generateEphemeralCert",
		), "the connector's requests spend the platform's budget")

		tenant := config(providerconfig.ConfigPrefix+"team-a/own", "u2", hs.URL)
		tenant.Annotations = map[string]string{providerconfig.AnnotationTenant: "true"}
		d, err = c.Get(tenant, auth.Credentials{Source: xpv2.CredentialsSourceNone, Tenant: true})
		g.Expect(err).NotTo(HaveOccurred())
		before := len(platform.seen())
		g.Expect(dialOnce(d)).To(HaveOccurred())
		mu.Lock()
		rec := tenants[tenant.Name]
		mu.Unlock()
		g.Expect(rec).NotTo(BeNil(), "a tenant's configuration gets its own transport")
		g.Eventually(rec.seen).Should(HaveLen(2), "and spends its own budget")
		g.Consistently(platform.seen, 200*time.Millisecond).Should(HaveLen(before), "not the platform's")
	})
}
