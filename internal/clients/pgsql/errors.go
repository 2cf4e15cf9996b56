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
	"fmt"

	"cloud.google.com/go/cloudsqlconn"
	"cloud.google.com/go/cloudsqlconn/errtype"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes the package tells apart.
const (
	codeInvalidPassword      = "28P01"
	codeInvalidAuthorization = "28000"
	codeUndefinedObject      = "42704"
	codeInvalidCatalogName   = "3D000"
)

// Messages of Unreachable: what failed, then what the provider must be able to
// reach and what to check.
const (
	errUnreachable = "cannot connect to Cloud SQL instance %s as %s over its %s: %s: %s"

	adviceAdminAPI = "the provider must reach the Cloud SQL Admin API (the ProviderConfig's endpoint) to get the instance's connection settings " +
		"and a client certificate (connectSettings, generateEphemeralCert): check the provider's egress to it and that the ProviderConfig's credentials " +
		"may call them (roles/cloudsql.client, or roles/cloudsql.admin), and that the instance exists, is running and has a %s"
	advicePublic = "the provider must reach port 3307 of the instance's public IP address: check firewall rules, " +
		"the network policies of the provider's namespace and any egress proxy"
	advicePrivate = "the provider must reach port 3307 of the instance's private IP address, which only the VPC network the instance is " +
		"connected to (or a network peered with it) can: run the provider in that network and check firewall rules and the network policies of its namespace"
	adviceAuthentication = "PostgreSQL refused the login: the instance's connection secret must hold the current password of %s " +
		"(a password set outside the provider, with gcloud or the console, makes it stale)"
)

// Reason says which step of a connection failed.
type Reason string

// Reasons of Unreachable.
const (
	// ReasonAdminAPI: the Cloud SQL Admin API did not give the instance's
	// connection settings or a client certificate.
	ReasonAdminAPI Reason = "AdminAPI"
	// ReasonNetwork: the instance's server-side proxy (port 3307) did not
	// answer, or the TLS handshake with it failed.
	ReasonNetwork Reason = "Network"
	// ReasonAuthentication: PostgreSQL refused the user or its password.
	ReasonAuthentication Reason = "Authentication"
)

// Unreachable is an instance that the provider could not log in to: the Admin
// API, the instance's address or its password failed before any SQL ran.
// Retrying at once does not help; the controller says so in a condition and
// tries again at its poll interval. SQL errors are never Unreachable.
type Unreachable struct {
	// Instance is the instance's connection name (project:region:name).
	Instance string
	// User is who logged in.
	User string
	// IPType is the address the connection was made to.
	IPType IPType
	// Reason is the step that failed.
	Reason Reason
	// Err is the connector's or PostgreSQL's error.
	Err error
}

// Error says what failed and what the provider must be able to reach.
func (e *Unreachable) Error() string {
	var advice string
	switch e.Reason {
	case ReasonAdminAPI:
		advice = fmt.Sprintf(adviceAdminAPI, e.IPType)
	case ReasonAuthentication:
		advice = fmt.Sprintf(adviceAuthentication, e.User)
	default:
		advice = advicePublic
		if e.IPType == PrivateIP {
			advice = advicePrivate
		}
	}
	cause := "unknown error"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	return fmt.Sprintf(errUnreachable, e.Instance, e.User, e.IPType, cause, advice)
}

// Unwrap is the connector's or PostgreSQL's error.
func (e *Unreachable) Unwrap() error { return e.Err }

// IsUnreachable reports whether err, or an error it wraps, is Unreachable.
func IsUnreachable(err error) bool {
	var u *Unreachable
	return errors.As(err, &u)
}

// IsNotFound reports whether err says that a role or database does not exist.
func IsNotFound(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == codeUndefinedObject || pe.Code == codeInvalidCatalogName)
}

// reasonOf says why a connection attempt failed, or "" when the failure is not
// one of reaching the instance: the caller gave up (context canceled), the
// dialer was closed under it (a configuration that changed), a database that
// does not exist, or PostgreSQL answering that it cannot take the session now
// (starting up, too many connections), which a retry soon mends.
func reasonOf(err error) Reason {
	var (
		pe  *pgconn.PgError
		re  *errtype.RefreshError
		ce  *errtype.ConfigError
		rxe *errtype.ResourceExhaustedError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &pe):
		if pe.Code == codeInvalidPassword || pe.Code == codeInvalidAuthorization {
			return ReasonAuthentication
		}
		return ""
	case errors.Is(err, context.Canceled), errors.Is(err, cloudsqlconn.ErrDialerClosed):
		return ""
	case errors.As(err, &re), errors.As(err, &ce), errors.As(err, &rxe):
		return ReasonAdminAPI
	default:
		// Dial errors, TLS handshakes and deadlines: the network.
		return ReasonNetwork
	}
}
