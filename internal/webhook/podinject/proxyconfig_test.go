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
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
)

func TestProxyConfigChanges(t *testing.T) {
	base := ProxyConfigOf(inputs(withCreds, func(x *Inputs) { x.ProxyCredentialsHash = KeyHash([]byte("key-1")) }))
	cases := map[string]struct {
		reason string
		change func(*ProxyConfig)
		want   []string
	}{
		"Same": {
			reason: "An equal configuration should need no restart.",
			change: func(*ProxyConfig) {},
		},
		"Image": {
			reason: "A new proxy image should say from which to which.",
			change: func(c *ProxyConfig) { c.Image = "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.28.0" },
			want:   []string{"proxy image " + testProxyImage + " -> gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.28.0"},
		},
		"ConnectionNameAndEndpoint": {
			reason: "Each change should be named, in a fixed order, an empty value as (none).",
			change: func(c *ProxyConfig) { c.Endpoint, c.ConnectionName = testEndpoint, "my-project-123:europe-west2:db" },
			want:   []string{"connection name " + testConnectionName + " -> my-project-123:europe-west2:db", "Admin API endpoint (none) -> " + testEndpoint},
		},
		"Key": {
			reason: "A new key in the same secret should need a restart: the proxy reads its key when it starts.",
			change: func(c *ProxyConfig) { c.Credentials = "cloudsql-proxy-credentials-db@" + KeyHash([]byte("key-2")) },
			want:   []string{"proxy key cloudsql-proxy-credentials-db@" + KeyHash([]byte("key-1")) + " -> cloudsql-proxy-credentials-db@" + KeyHash([]byte("key-2"))},
		},
		"IAMAndPrivateIP": {
			reason: "Flags of the proxy should be named too.",
			change: func(c *ProxyConfig) { c.IAMAuthN, c.PrivateIP = true, true },
			want:   []string{"private IP false -> true", "IAM login false -> true"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := base
			tc.change(&now)
			if diff := cmp.Diff(tc.want, now.Changes(base)); diff != "" {
				t.Errorf("\n%s\nChanges(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// What the annotation holds reads back as it was; anything else is not a
// configuration, and a key's fingerprint says nothing of the key.
func TestProxyConfigAnnotation(t *testing.T) {
	g := NewWithT(t)
	c := ProxyConfigOf(inputs(private, withCreds, asIAM("app@my-project-123.iam", "orders"), endpoint(testEndpoint),
		func(x *Inputs) { x.ProxyCredentialsHash = KeyHash([]byte("secret key")) }))
	g.Expect(c).To(Equal(ProxyConfig{
		Image: testProxyImage, ConnectionName: testConnectionName, Endpoint: testEndpoint, PrivateIP: true, IAMAuthN: true,
		Credentials: "cloudsql-proxy-credentials-db@" + KeyHash([]byte("secret key")),
	}))
	back, ok := ParseProxyConfig(c.String())
	g.Expect(ok).To(BeTrue())
	g.Expect(back).To(Equal(c))
	for _, bad := range []string{"", "{}", "not json", `{"connectionName":"p:r:i"}`} {
		_, ok := ParseProxyConfig(bad)
		g.Expect(ok).To(BeFalse(), "%q", bad)
	}
	g.Expect(c.String()).ToNot(ContainSubstring("secret key"))
	g.Expect(KeyHash([]byte("a"))).ToNot(Equal(KeyHash([]byte("b"))))
	g.Expect(ProxyConfigOf(inputs()).Credentials).To(BeEmpty(), "a proxy that authenticates as the pod has no key")
}
