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

package cloudsql

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

func TestConnectionDetails(t *testing.T) {
	cert := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	cases := map[string]struct {
		observed *sqladmin.DatabaseInstance
		password string
		want     map[string]string
	}{
		"PrivateAndPublicIPPrefersPrivate": {
			observed: fullObserved(),
			password: "pw",
			want: map[string]string{
				"username": "postgres", "password": "pw", "port": "5432",
				"endpoint": "10.9.8.7", "publicIP": "34.9.8.7", "privateIP": "10.9.8.7",
				"connectionName":                    "my-project-123456:europe-west4:cloudsql-psql-123456",
				"serverCACertificateCert":           cert,
				"serverCACertificateExpirationTime": "2036-01-01T00:00:00Z",
				"pgpass":                            "127.0.0.1:*:*:postgres:pw\n",
				"url":                               "postgresql://postgres:pw@127.0.0.1:5432",
			},
		},
		"PublicIPOnly": {
			observed: minimalObserved(),
			password: "pw",
			want: map[string]string{
				"username": "postgres", "password": "pw", "port": "5432",
				"endpoint": "34.1.2.3", "publicIP": "34.1.2.3", "privateIP": "",
				"connectionName":                    "my-project-123456:europe-west1:example-minimal",
				"serverCACertificateCert":           cert,
				"serverCACertificateExpirationTime": "2036-01-01T00:00:00Z",
				"pgpass":                            "127.0.0.1:*:*:postgres:pw\n",
				"url":                               "postgresql://postgres:pw@127.0.0.1:5432",
			},
		},
		"NotUpYetHasEveryKey": {
			observed: &sqladmin.DatabaseInstance{State: "PENDING_CREATE", ConnectionName: "p:r:i"},
			password: "pw",
			want: map[string]string{
				"username": "postgres", "password": "pw", "port": "5432",
				"endpoint": "", "publicIP": "", "privateIP": "", "connectionName": "p:r:i",
				"serverCACertificateCert": "", "serverCACertificateExpirationTime": "",
				"pgpass": "127.0.0.1:*:*:postgres:pw\n",
				"url":    "postgresql://postgres:pw@127.0.0.1:5432",
			},
		},
		"NilInstance": {
			password: `a:b\c`,
			want: map[string]string{
				"username": "postgres", "password": `a:b\c`, "port": "5432",
				"endpoint": "", "publicIP": "", "privateIP": "", "connectionName": "",
				"serverCACertificateCert": "", "serverCACertificateExpirationTime": "",
				"pgpass": `127.0.0.1:*:*:postgres:a\:b\\c` + "\n",
				"url":    `postgresql://postgres:a%3Ab%5Cc@127.0.0.1:5432`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]string{}
			for k, v := range ConnectionDetails(tc.observed, tc.password) {
				got[k] = string(v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ConnectionDetails(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestConnectionKeys(t *testing.T) {
	// The keys are part of the API: pods and compositions read them by name.
	want := []string{"username", "password", "endpoint", "port", "publicIP", "privateIP", "connectionName",
		"serverCACertificateCert", "serverCACertificateExpirationTime", "pgpass", "url"}
	got := []string{ConnectionKeyUsername, ConnectionKeyPassword, ConnectionKeyEndpoint, ConnectionKeyPort,
		ConnectionKeyPublicIP, ConnectionKeyPrivateIP, ConnectionKeyConnectionName, ConnectionKeyServerCACert,
		ConnectionKeyServerCAExpirationTime, ConnectionKeyPgpass, ConnectionKeyURL}
	NewWithT(t).Expect(got).To(Equal(want))
}

func TestPgpass(t *testing.T) {
	cases := map[string]struct {
		reason                           string
		host, port, user, password, want string
	}{
		"Plain":             {"the line names the proxy's host, any port and database", "127.0.0.1", "*", "postgres", "Abc123", "127.0.0.1:*:*:postgres:Abc123\n"},
		"HostAndPort":       {"a port restricts the line to one proxy", "127.0.0.1", "23456", "postgres", "Abc123", "127.0.0.1:23456:*:postgres:Abc123\n"},
		"IPv6Host":          {"colons in a host are escaped", "::1", "5432", "postgres", "pw", `\:\:1:5432:*:postgres:pw` + "\n"},
		"Colon":             {"colons in a password are escaped", "127.0.0.1", "*", "postgres", "a:b", `127.0.0.1:*:*:postgres:a\:b` + "\n"},
		"Backslash":         {"backslashes are escaped", "127.0.0.1", "*", "postgres", `a\b`, `127.0.0.1:*:*:postgres:a\\b` + "\n"},
		"BackslashColon":    {"each character is escaped once", "127.0.0.1", "*", "postgres", `\:`, `127.0.0.1:*:*:postgres:\\\:` + "\n"},
		"ColonInUser":       {"colons in a user are escaped", "127.0.0.1", "*", "us:er", "pw", `127.0.0.1:*:*:us\:er:pw` + "\n"},
		"OtherCharsAsIs":    {"other characters need no escape", "127.0.0.1", "*", "postgres", "*#$ '\"", "127.0.0.1:*:*:postgres:*#$ '\"\n"},
		"EmptyPassword":     {"an empty password is a line too", "127.0.0.1", "*", "postgres", "", "127.0.0.1:*:*:postgres:\n"},
		"TrailingBackslash": {"a trailing backslash does not escape the newline", "127.0.0.1", "*", "postgres", `pw\`, `127.0.0.1:*:*:postgres:pw\\` + "\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(Pgpass(tc.host, tc.port, tc.user, tc.password)).To(Equal(tc.want), tc.reason)
		})
	}
}

// The connection secret's line names the proxy's address: libpq must not send
// the password to any other server a client is pointed at.
func TestConnectionDetailsPgpassNamesTheProxy(t *testing.T) {
	line := string(ConnectionDetails(minimalObserved(), "pw")[ConnectionKeyPgpass])
	NewWithT(t).Expect(line).To(HavePrefix(ProxyAddress+":"), "the pgpass line must not match every host")
}

// The url key is one libpq and drivers that do not use libpq both parse:
// login and password escaped, the database as its path.
func TestURL(t *testing.T) {
	g := NewWithT(t)
	g.Expect(URL("orders_app", "pw", "orders")).To(Equal("postgresql://orders_app:pw@127.0.0.1:5432/orders"))
	g.Expect(URL("app@my-project.iam", "", "orders")).To(Equal("postgresql://app%40my-project.iam@127.0.0.1:5432/orders"), "an IAM login has no password")
	g.Expect(URL("orders_app", "pw", "")).To(Equal("postgresql://orders_app:pw@127.0.0.1:5432"), "no database: libpq takes the login's name")
}

func TestGeneratePassword(t *testing.T) {
	g := NewWithT(t)
	seen := map[string]bool{}
	for range 50 {
		pw, err := GeneratePassword()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pw).To(HaveLen(PasswordLength))
		g.Expect(strings.Trim(pw, passwordAlphabet)).To(BeEmpty(), "%q has characters outside the alphabet", pw)
		g.Expect(seen).NotTo(HaveKey(pw))
		seen[pw] = true
	}
}

// A PostgresqlUser's secret names its own login, password and first
// database in url; an IAM user's url has no password.
func TestUserConnectionDetailsURL(t *testing.T) {
	g := NewWithT(t)
	obs := v1alpha1.PostgresqlInstanceObservation{ConnectionName: "p:r:i", PublicIP: "34.1.2.3"}
	got := UserConnectionDetails(obs, "orders_app", "pw", []string{"reports", "orders"})
	g.Expect(string(got[ConnectionKeyURL])).To(Equal("postgresql://orders_app:pw@127.0.0.1:5432/orders"))
	g.Expect(string(got[ConnectionKeyDatabase])).To(Equal("orders"))
	iam := UserConnectionDetails(obs, "app@my-project.iam", "", nil)
	g.Expect(string(iam[ConnectionKeyURL])).To(Equal("postgresql://app%40my-project.iam@127.0.0.1:5432"))
	g.Expect(iam).To(HaveKeyWithValue(ConnectionKeyPgpass, BeEmpty()))
}
