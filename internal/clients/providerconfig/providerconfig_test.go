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

package providerconfig

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	"github.com/spf13/afero"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/clients/auth"
	"github.com/travelaudience/cloudsql-postgres-operator/internal/emulator"
)

func pc(name string, source xpv2.CredentialsSource, sel xpv2.CommonCredentialSelectors) *v1alpha1.ProviderConfig {
	return &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: v1alpha1.ProviderConfigSpec{
			Project:     v1alpha1.Project{ProjectID: "my-project-123", Endpoint: "http://127.0.0.1:1/"},
			Credentials: v1alpha1.ProviderCredentials{Source: source, CommonCredentialSelectors: sel},
		},
	}
}

func TestCredentialsNeedNoKeyForNoneAndInjectedIdentity(t *testing.T) {
	g := NewWithT(t)
	for _, s := range []xpv2.CredentialsSource{xpv2.CredentialsSourceNone, xpv2.CredentialsSourceInjectedIdentity} {
		// No reader and no file system: these sources must not read anything.
		c, err := Credentials(context.Background(), nil, nil, pc("pc", s, xpv2.CommonCredentialSelectors{}))
		g.Expect(err).ToNot(HaveOccurred())
		g.Expect(c).To(Equal(auth.Credentials{Source: s}))
	}
}

func TestCredentialsNameWhereABadKeyCameFrom(t *testing.T) {
	g := NewWithT(t)
	fs := afero.NewMemMapFs()
	g.Expect(afero.WriteFile(fs, "/creds/key.json", []byte("not json"), 0o600)).To(Succeed())

	_, err := Credentials(context.Background(), nil, fs, pc("files", xpv2.CredentialsSourceFilesystem,
		xpv2.CommonCredentialSelectors{Fs: &xpv2.FsSelector{Path: "/creds/key.json"}}))
	g.Expect(err).To(MatchError(And(ContainSubstring("ProviderConfig \"files\": file /creds/key.json"), ContainSubstring("is not JSON"))))

	_, err = Credentials(context.Background(), nil, fs, pc("files", xpv2.CredentialsSourceFilesystem,
		xpv2.CommonCredentialSelectors{Fs: &xpv2.FsSelector{Path: "/creds/missing.json"}}))
	g.Expect(err).To(MatchError(ContainSubstring("ProviderConfig \"files\": cannot read the credentials of source Filesystem")))

	t.Setenv("PROVIDERCONFIG_TEST_KEY", "")
	_, err = Credentials(context.Background(), nil, fs, pc("env", xpv2.CredentialsSourceEnvironment,
		xpv2.CommonCredentialSelectors{Env: &xpv2.EnvSelector{Name: "PROVIDERCONFIG_TEST_KEY"}}))
	g.Expect(err).To(MatchError(And(ContainSubstring("ProviderConfig \"env\": environment variable PROVIDERCONFIG_TEST_KEY"), ContainSubstring("is empty"))))
}

func TestServiceCacheReusesClientsUntilTheConfigChanges(t *testing.T) {
	g := NewWithT(t)
	c := NewServiceCache(nil)
	p := pc("cached", xpv2.CredentialsSourceNone, xpv2.CommonCredentialSelectors{})
	creds := auth.Credentials{Source: xpv2.CredentialsSourceNone}

	first, err := c.Get(p, creds)
	g.Expect(err).ToNot(HaveOccurred())
	again, err := c.Get(p, creds)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(again).To(BeIdenticalTo(first))

	p.Spec.Endpoint = "http://127.0.0.1:2/"
	moved, err := c.Get(p, creds)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(moved).ToNot(BeIdenticalTo(first))
	g.Expect(moved.BasePath).To(Equal("http://127.0.0.1:2/"))

	_, err = c.Get(pc("bad", xpv2.CredentialsSourceSecret, xpv2.CommonCredentialSelectors{}), auth.Credentials{Source: xpv2.CredentialsSourceSecret, JSON: []byte("{}")})
	g.Expect(err).To(MatchError(ContainSubstring("ProviderConfig \"bad\": cannot create a Cloud SQL Admin API client")))
}

// Clients that nothing asked for during IdleService are dropped when another
// is built: configurations that are gone do not stay in memory, those in use
// keep their clients.
func TestServiceCacheDropsIdleClients(t *testing.T) {
	g := NewWithT(t)
	c := NewServiceCache(nil)
	now := time.Now()
	c.now = func() time.Time { return now }
	creds := auth.Credentials{Source: xpv2.CredentialsSourceNone}
	used, gone := pc("used", xpv2.CredentialsSourceNone, xpv2.CommonCredentialSelectors{}), pc("gone", xpv2.CredentialsSourceNone, xpv2.CommonCredentialSelectors{})
	kept, err := c.Get(used, creds)
	g.Expect(err).ToNot(HaveOccurred())
	_, err = c.Get(gone, creds)
	g.Expect(err).ToNot(HaveOccurred())

	now = now.Add(IdleService / 2)
	_, err = c.Get(used, creds)
	g.Expect(err).ToNot(HaveOccurred())
	now = now.Add(IdleService/2 + time.Second)
	_, err = c.Get(pc("new", xpv2.CredentialsSourceNone, xpv2.CommonCredentialSelectors{}), creds)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(c.services).To(HaveKey("used"))
	g.Expect(c.services).To(HaveKey("new"))
	g.Expect(c.services).ToNot(HaveKey("gone"), "a client unused for an hour is kept")
	again, err := c.Get(used, creds)
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(again).To(BeIdenticalTo(kept))
}

func TestDisplay(t *testing.T) {
	for name, want := range map[string]string{
		"default":                              "ProviderConfig \"default\"",
		"ClusterProviderConfig/default":        "ClusterProviderConfig \"default\"",
		"ProviderConfig/team-a/team-a-project": "ProviderConfig \"team-a-project\" of namespace team-a",
	} {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(Display(&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Equal(want))
		})
	}
}

// A ProviderConfig whose credentials are a secret holding a key with the
// emulator's token_uri works as a key from Google does when the configuration
// file lets platform keys keep their token_uri: the provider's client gets its
// access token from that token_uri and calls the API with it.
func TestSecretKeyWithTheEmulatorsTokenURI(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	var mu sync.Mutex
	var seen []string
	emu := emulator.New()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		emu.ServeHTTP(w, r)
	}))
	defer api.Close()

	key, err := emulator.ServiceAccountKey("my-project-123", api.URL+emulator.TokenPath)
	g.Expect(err).ToNot(HaveOccurred())
	kube := fake.NewClientBuilder().WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: "admin-key"}, Data: map[string][]byte{"key.json": key},
	}).Build()
	p := pc("keyed", xpv2.CredentialsSourceSecret, xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
		SecretReference: xpv2.SecretReference{Namespace: "crossplane-system", Name: "admin-key"}, Key: "key.json",
	}})
	p.Spec.Endpoint = api.URL + "/"

	creds, err := Credentials(ctx, kube, nil, p)
	g.Expect(err).ToNot(HaveOccurred())
	svc, err := NewServiceCache(nil, WithAuth(auth.WithKeyTokenURI(true))).Get(p, creds)
	g.Expect(err).ToNot(HaveOccurred())
	_, err = svc.Instances.List("my-project-123").Context(ctx).Do()
	g.Expect(err).ToNot(HaveOccurred())
	g.Expect(seen).To(HaveExactElements(
		emulator.TokenPath+" ",
		MatchRegexp(`^/sql/v1beta4/projects/my-project-123/instances Bearer emulator-\S+$`),
	))
}

// countingTransport counts the requests it carries to the emulator.
type countingTransport struct {
	mu   sync.Mutex
	n    int
	keys []string
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// A tenant configuration's requests go through its own transport, keyed by its
// name; the platform's through the platform's.
func TestServiceCacheSendsTenantsThroughTheirOwnTransport(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(emulator.New(emulator.WithRequestBudget(0)))
	t.Cleanup(srv.Close)
	platform, tenants := &countingTransport{}, &countingTransport{}
	c := NewServiceCache(platform, WithTenantTransport(func(key string) http.RoundTripper {
		tenants.keys = append(tenants.keys, key)
		return tenants
	}))
	creds := auth.Credentials{Source: xpv2.CredentialsSourceNone}

	platformPC := pc("platform", xpv2.CredentialsSourceNone, xpv2.CommonCredentialSelectors{})
	platformPC.Spec.Endpoint = srv.URL + "/"
	tenantPC := pc(ConfigPrefix+"team-a/own", xpv2.CredentialsSourceNone, xpv2.CommonCredentialSelectors{})
	tenantPC.Spec.Endpoint = srv.URL + "/"
	tenantPC.Annotations = map[string]string{AnnotationTenant: "true"}

	for _, p := range []*v1alpha1.ProviderConfig{platformPC, tenantPC, tenantPC} {
		svc, err := c.Get(p, auth.Credentials{Source: creds.Source, Tenant: Tenant(p)})
		g.Expect(err).ToNot(HaveOccurred())
		_, err = svc.Instances.List("my-project-123").Do()
		g.Expect(err).ToNot(HaveOccurred())
	}
	g.Expect(platform.n).To(Equal(1))
	g.Expect(tenants.n).To(Equal(2))
	g.Expect(tenants.keys).To(Equal([]string{"ProviderConfig/team-a/own"}), "one client for the tenant's configuration, keyed by its name")
}
