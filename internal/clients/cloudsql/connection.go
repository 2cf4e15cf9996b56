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
	"net/url"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/password"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"

	"github.com/travelaudience/cloudsql-postgres-operator/apis/v1alpha1"
)

// Keys of the connection secret (writeConnectionSecretToRef). They are
// part of the API: pods, the injector and compositions read them.
const (
	// ConnectionKeyUsername is the database user: postgres.
	ConnectionKeyUsername = "username"
	// ConnectionKeyPassword is the password of the postgres user.
	ConnectionKeyPassword = "password"
	// ConnectionKeyEndpoint is the address to connect to: the private IP if
	// the instance has one, else the public IP.
	ConnectionKeyEndpoint = "endpoint"
	// ConnectionKeyPort is the PostgreSQL port: 5432.
	ConnectionKeyPort = "port"
	// ConnectionKeyPublicIP is the public IPv4 address, or empty.
	ConnectionKeyPublicIP = "publicIP"
	// ConnectionKeyPrivateIP is the private IP address, or empty.
	ConnectionKeyPrivateIP = "privateIP"
	// ConnectionKeyConnectionName is project:region:instance, for the Cloud
	// SQL Auth Proxy.
	ConnectionKeyConnectionName = "connectionName"
	// ConnectionKeyServerCACert is the PEM certificate of the server's CA,
	// for clients that verify the server (sslmode=verify-ca).
	ConnectionKeyServerCACert = "serverCACertificateCert"
	// ConnectionKeyServerCAExpirationTime is when that certificate expires
	// (RFC 3339).
	ConnectionKeyServerCAExpirationTime = "serverCACertificateExpirationTime"
	// ConnectionKeyPgpass is a ready .pgpass file (PGPASSFILE) with the
	// password for the postgres user at the Cloud SQL Auth Proxy's address
	// (ProxyAddress, any port), for any database.
	ConnectionKeyPgpass = "pgpass"
	// ConnectionKeyDatabase is, in a PostgresqlUser's connection secret, the
	// first by name of the databases the user owns, or empty.
	ConnectionKeyDatabase = "database"
	// ConnectionKeyDatabases is, in a PostgresqlUser's connection secret,
	// every database the user owns, sorted and separated by commas.
	ConnectionKeyDatabases = "databases"
	// ConnectionKeyURL is a postgresql:// URL with the login, its password
	// and the database of key database (none for the instance: libpq then
	// takes the login's name, postgres) at a Cloud SQL Auth Proxy of one's
	// own on its default address, 127.0.0.1:5432 (injected proxies listen
	// elsewhere: their pods get DATABASE_URL), for frameworks that read one
	// variable and do not use libpq's password file. An IAM user's has no
	// password. It changes with the password, as pgpass does.
	ConnectionKeyURL = "url"
)

// Fixed values of the connection secret.
const (
	// ProxyAddress is where a Cloud SQL Auth Proxy listens by default, and
	// the injected ones always: the only host that the pgpass entry names.
	ProxyAddress = "127.0.0.1"
	// RootUser is the PostgreSQL user whose password the provider manages.
	RootUser = "postgres"
	// Port is the port PostgreSQL listens on in Cloud SQL.
	Port = "5432"
)

// PasswordLength is the length of generated passwords: 32 characters of 62
// kinds carry over 190 bits.
const PasswordLength = 32

// passwordAlphabet holds characters that need no quoting in URLs, shells,
// YAML or .pgpass files.
const passwordAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// ConnectionDetails are the contents of the connection secret for observed
// with password as the postgres user's password. Every key is present, with
// an empty value for what the instance does not have (yet), so that readers
// can rely on the keys.
func ConnectionDetails(observed *sqladmin.DatabaseInstance, password string) map[string][]byte {
	public := ipAddress(observed, IPTypePrimary)
	private := ipAddress(observed, IPTypePrivate)
	endpoint := private
	if endpoint == "" {
		endpoint = public
	}
	var connectionName, caCert, caExpiry string
	if observed != nil {
		connectionName = observed.ConnectionName
		if ca := observed.ServerCaCert; ca != nil {
			caCert, caExpiry = ca.Cert, ca.ExpirationTime
		}
	}
	return map[string][]byte{
		ConnectionKeyUsername:               []byte(RootUser),
		ConnectionKeyPassword:               []byte(password),
		ConnectionKeyEndpoint:               []byte(endpoint),
		ConnectionKeyPort:                   []byte(Port),
		ConnectionKeyPublicIP:               []byte(public),
		ConnectionKeyPrivateIP:              []byte(private),
		ConnectionKeyConnectionName:         []byte(connectionName),
		ConnectionKeyServerCACert:           []byte(caCert),
		ConnectionKeyServerCAExpirationTime: []byte(caExpiry),
		ConnectionKeyPgpass:                 []byte(Pgpass(ProxyAddress, "*", RootUser, password)),
		ConnectionKeyURL:                    []byte(URL(RootUser, password, "")),
	}
}

// URL is a postgresql:// URL for login, with password unless it is empty, and
// database unless it is empty, at the Cloud SQL Auth Proxy's default address.
func URL(login, password, database string) string {
	u := url.URL{Scheme: "postgresql", User: url.User(login), Host: ProxyAddress + ":" + Port}
	if password != "" {
		u.User = url.UserPassword(login, password)
	}
	if database != "" {
		u.Path = "/" + database
	}
	return u.String()
}

// Pgpass is a .pgpass line that gives user password at host and port ("*":
// any), for every database, ending in a newline. Never "*" for the host: libpq
// would send the password to any server a client is pointed at. libpq reads
// ':' as the field separator and '\' as an escape, so both are escaped with a
// backslash.
func Pgpass(host, port, user, password string) string {
	return pgpassEscape(host) + ":" + pgpassEscape(port) + ":*:" + pgpassEscape(user) + ":" + pgpassEscape(password) + "\n"
}

var pgpassEscaper = strings.NewReplacer(`\`, `\\`, `:`, `\:`)

func pgpassEscape(s string) string {
	return pgpassEscaper.Replace(s)
}

// GeneratePassword returns a new password of PasswordLength letters and
// digits, drawn uniformly from crypto/rand.
func GeneratePassword() (string, error) {
	return password.Settings{CharacterSet: passwordAlphabet, Length: PasswordLength}.Generate()
}

// UserConnectionDetails are the contents of a PostgresqlUser's connection
// secret: those of its instance's (as observed by the instance's object),
// with the user's login and password, and the databases it owns (sorted).
// An IAM user has no password, and no pgpass entry. Every key is present.
func UserConnectionDetails(instance v1alpha1.PostgresqlInstanceObservation, login, password string, databases []string) map[string][]byte {
	endpoint := instance.PrivateIP
	if endpoint == "" {
		endpoint = instance.PublicIP
	}
	dbs := slices.Sorted(slices.Values(databases))
	first := ""
	if len(dbs) > 0 {
		first = dbs[0]
	}
	pgpass := ""
	if password != "" {
		pgpass = Pgpass(ProxyAddress, "*", login, password)
	}
	return map[string][]byte{
		ConnectionKeyUsername:               []byte(login),
		ConnectionKeyPassword:               []byte(password),
		ConnectionKeyEndpoint:               []byte(endpoint),
		ConnectionKeyPort:                   []byte(Port),
		ConnectionKeyPublicIP:               []byte(instance.PublicIP),
		ConnectionKeyPrivateIP:              []byte(instance.PrivateIP),
		ConnectionKeyConnectionName:         []byte(instance.ConnectionName),
		ConnectionKeyServerCACert:           nil,
		ConnectionKeyServerCAExpirationTime: nil,
		ConnectionKeyPgpass:                 []byte(pgpass),
		ConnectionKeyDatabase:               []byte(first),
		ConnectionKeyDatabases:              []byte(strings.Join(dbs, ",")),
		ConnectionKeyURL:                    []byte(URL(login, password, first)),
	}
}
