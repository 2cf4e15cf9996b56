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

package emulator

import (
	"fmt"
	"hash/fnv"
	"time"

	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// connectGet answers connectSettings: what a Cloud SQL connector (the Auth
// Proxy) needs to reach the instance and verify its certificate.
func (s *Server) connectGet(req *apiRequest) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, inst, err := s.findInstance(req.project, req.instance)
	if err != nil {
		return nil, err
	}
	db := inst.db
	ips := make([]*sqladmin.IpMapping, 0, len(db.IpAddresses))
	for _, ip := range db.IpAddresses {
		c := *ip
		ips = append(ips, &c)
	}
	return &sqladmin.ConnectSettings{
		Kind:            "sql#connectSettings",
		ServerCaCert:    inst.ca.sslCert(db.Name),
		IpAddresses:     ips,
		Region:          db.Region,
		DatabaseVersion: db.DatabaseVersion,
		BackendType:     db.BackendType,
		PscEnabled:      false,
		DnsName:         dnsName(req.project, db.Name, db.Region),
		ServerCaMode:    "GOOGLE_MANAGED_INTERNAL_CA",
	}, nil
}

// dnsName is a stable DNS name in the shape Cloud SQL gives instances.
func dnsName(project, instance, region string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(project + ":" + instance))
	return fmt.Sprintf("%012x.%s.sql.goog.", h.Sum64()&0xffffffffffff, region)
}

// msgAccessTokenInvalid is generateEphemeralCert's answer to an access_token
// that is not one the token endpoint issued, or that has expired.
const msgAccessTokenInvalid = "The access token is invalid or expired."

// connectGenerateEphemeral signs the caller's public key with the
// instance's CA, as generateEphemeralCert does for connectors. With an
// access_token (automatic IAM database authentication: the Auth Proxy's
// --auto-iam-authn, a connector's WithIAMAuthN), the certificate is bound to
// the token's account and expires with the token at the latest, as on Cloud
// SQL: the data plane then logs the connection in as that account's IAM user
// without a password. An access token the emulator did not issue, or that
// has expired, is refused with 400 invalid.
func (s *Server) connectGenerateEphemeral(req *apiRequest) (any, error) {
	var in sqladmin.GenerateEphemeralCertRequest
	if err := decodeJSON(req.body, &in); err != nil {
		return nil, err
	}
	if in.PublicKey == "" {
		return nil, errRequired("public_key")
	}
	pub, err := parsePublicKeyPEM(in.PublicKey)
	if err != nil {
		return nil, err
	}
	var valid time.Duration
	if in.ValidDuration != "" {
		if valid, err = time.ParseDuration(in.ValidDuration); err != nil || valid <= 0 {
			return nil, errInvalid("Invalid validDuration %q: use a duration such as 3600s.", in.ValidDuration)
		}
	}

	s.mu.Lock()
	_, inst, err := s.findInstance(req.project, req.instance)
	now := s.now()
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var (
		tok   grant
		bound = in.AccessToken != ""
	)
	if bound {
		var ok bool
		if tok, ok = s.tokens.get(in.AccessToken); !ok || !tok.validAt(now) {
			return nil, errInvalid(msgAccessTokenInvalid)
		}
	}
	// Signing happens outside the lock; the CA never changes after insert.
	cert, err := inst.ca.ephemeralCert(req.instance, pub, now, valid, tok.expiry)
	if err != nil {
		return nil, err
	}
	if bound {
		s.certGrants.add(cert.CertSerialNumber, tok, now)
	}
	return &sqladmin.GenerateEphemeralCertResponse{EphemeralCert: cert}, nil
}
