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
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// IAM database authentication, as Cloud SQL's server-side proxy does it. The
// proxy reads the client's startup message itself. A login as a user that is
// not an IAM user of the instance goes to PostgreSQL as it came, and
// PostgreSQL checks its password. A login as an IAM user needs an access
// token of the user's account, which the emulator's token endpoint issued and
// which has not expired by the emulator's clock: one the client certificate
// is bound to (automatic IAM authentication, see connectGenerateEphemeral),
// else one the client gives as its password (manual IAM authentication). The
// proxy then logs in to PostgreSQL as the user's role with the password only
// the emulator knows, and hands the session to the client.

// Codes of a client's first message (the int32 after its length), and the
// protocol versions of a StartupMessage.
const (
	cancelRequestCode = 80877102
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
	// protocolMajor3 is protocol 3.0 (196608); 3.x have the same major.
	protocolMajor3 = 3
	// maxStartupLength is PostgreSQL's limit on the length of a startup
	// message (MAX_STARTUP_PACKET_LENGTH).
	maxStartupLength = 10000
	// maxEncryptionRequests is how many SSLRequest and GSSENCRequest a
	// client may send before its startup message: one of each.
	maxEncryptionRequests = 2
	// maxPasswordLength bounds the password message of manual IAM
	// authentication, whose password is an access token.
	maxPasswordLength = 1 << 16
	// startupTimeout bounds the startup of a connection: the client's startup
	// message and password, and the emulator's login to PostgreSQL. It is
	// PostgreSQL's default authentication_timeout.
	startupTimeout = time.Minute
	// protocolOptionPrefix starts the names of protocol extension options
	// in a startup message, which a server that knows none lists back in
	// NegotiateProtocolVersion.
	protocolOptionPrefix = "_pq_."
)

// Refusals of IAM logins, in Cloud SQL's words for the message, with why in
// the detail.
const (
	msgIAMServiceAccountAuthFailed = `Cloud SQL IAM service account authentication failed for user "%s"`
	msgIAMUserAuthFailed           = `Cloud SQL IAM user authentication failed for user "%s"`
	msgTokenOfAnother              = `The access token belongs to %s, whose database user is "%s".`
	msgTokenExpired                = "The access token expired at %s."
	msgNoToken                     = "No access token was given."
	msgIAMAuthOff                  = "IAM database authentication is off on this instance: its database flag cloudsql.iam_authentication is not on."
	msgNotAToken                   = "The password is not an access token of the account."
	msgIAMHint                     = "Log in with automatic IAM database authentication (the Cloud SQL Auth Proxy's --auto-iam-authn, a connector's WithIAMAuthN), or give an access token of the account as the password."
	// sqlStateInvalidAuthorization is invalid_authorization_specification,
	// what PostgreSQL answers failed logins with.
	sqlStateInvalidAuthorization = "28000"
	// sqlStateProtocolViolation is protocol_violation.
	sqlStateProtocolViolation = "08P01"
	msgExpectedPassword       = "expected password response, got message type %d"
)

// serviceAccountSuffix ends the emails of service accounts, which their IAM
// database users' names leave out.
const serviceAccountSuffix = ".gserviceaccount.com"

const (
	errTooManyRequests = "more than %d SSL and GSSAPI encryption requests"
	errStartupLayout   = "invalid startup packet layout: expected terminator as last byte"
	errPasswordLength  = "invalid length of password packet: %d"
	errPasswordLayout  = "invalid password packet: no terminator"
	errPostgresLogin   = "cannot log in to PostgreSQL as %q"
	errLoginConfig     = "cannot configure the login to PostgreSQL"
	errHijack          = "cannot take over the PostgreSQL session"
	errWelcome         = "cannot greet the client"
)

// startupKind tells apart the first messages a client may send.
type startupKind int

const (
	// startupOther is anything PostgreSQL must judge itself: a bad length,
	// an unknown protocol, a malformed layout.
	startupOther startupKind = iota
	// startupV3 is a StartupMessage of protocol 3.
	startupV3
	// startupCancel is a CancelRequest.
	startupCancel
)

// startupMessage is a client's first message after the encryption
// requests it made, which the proxy declined.
type startupMessage struct {
	kind startupKind
	// code is the protocol version of a StartupMessage, the request code of
	// others.
	code uint32
	// params are the parameters of a StartupMessage (user, database, ...).
	params map[string]string
	// raw is the message as the client sent it, length included, to pass
	// on to PostgreSQL unchanged.
	raw []byte
}

// user is the user a StartupMessage logs in as.
func (m startupMessage) user() string {
	if m.kind != startupV3 {
		return ""
	}
	return m.params["user"]
}

// readStartup reads a client's first message from rw. An SSLRequest or a
// GSSENCRequest is answered 'N', as PostgreSQL on a socket without encryption
// does, and the next message read. What PostgreSQL must judge (a bad length, an
// unknown code) is returned as startupOther, with the bytes read.
func readStartup(rw io.ReadWriter) (startupMessage, error) {
	for declined := 0; ; declined++ {
		var head [4]byte
		if _, err := io.ReadFull(rw, head[:]); err != nil {
			return startupMessage{}, err
		}
		n := binary.BigEndian.Uint32(head[:])
		if n < 8 || n > maxStartupLength {
			return startupMessage{kind: startupOther, raw: head[:]}, nil
		}
		msg := make([]byte, n)
		copy(msg, head[:])
		if _, err := io.ReadFull(rw, msg[4:]); err != nil {
			return startupMessage{}, err
		}
		code := binary.BigEndian.Uint32(msg[4:8])
		switch {
		case code == sslRequestCode || code == gssEncRequestCode:
			if declined == maxEncryptionRequests {
				return startupMessage{}, errors.Errorf(errTooManyRequests, maxEncryptionRequests)
			}
			if _, err := rw.Write([]byte{'N'}); err != nil {
				return startupMessage{}, err
			}
			continue
		case code == cancelRequestCode:
			return startupMessage{kind: startupCancel, code: code, raw: msg}, nil
		case code>>16 == protocolMajor3:
			params, err := parseStartupParams(msg[8:])
			if err != nil {
				return startupMessage{kind: startupOther, code: code, raw: msg}, nil
			}
			return startupMessage{kind: startupV3, code: code, params: params, raw: msg}, nil
		}
		return startupMessage{kind: startupOther, code: code, raw: msg}, nil
	}
}

// parseStartupParams parses the parameters of a StartupMessage: name and
// value pairs, each NUL-terminated, then a NUL.
func parseStartupParams(b []byte) (map[string]string, error) {
	params := map[string]string{}
	for {
		i := bytes.IndexByte(b, 0)
		switch {
		case i < 0:
			return nil, errors.New(errStartupLayout)
		case i == 0:
			if len(b) != 1 {
				return nil, errors.New(errStartupLayout)
			}
			return params, nil
		}
		name := string(b[:i])
		b = b[i+1:]
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			return nil, errors.New(errStartupLayout)
		}
		params[name] = string(b[:j])
		b = b[j+1:]
	}
}

// iamLoginName is the database user of an account's IAM authentication: a
// service account's email without .gserviceaccount.com, a person's email.
func iamLoginName(email string) string {
	return strings.TrimSuffix(email, serviceAccountSuffix)
}

// tokenRefusal says why an access token of grant g does not log in as the
// IAM user user at now, or "" when it does.
func tokenRefusal(user string, g grant, now time.Time) string {
	if name := iamLoginName(g.account); name != user {
		return fmt.Sprintf(msgTokenOfAnother, g.account, name)
	}
	if !g.validAt(now) {
		return fmt.Sprintf(msgTokenExpired, formatTime(g.expiry))
	}
	return ""
}

// passwordRefusal is tokenRefusal for manual IAM authentication, where the
// password is the access token: lookup finds what the token endpoint issued.
func passwordRefusal(user, password string, lookup func(string) (grant, bool), now time.Time) string {
	if password == "" {
		return msgNoToken
	}
	g, ok := lookup(password)
	if !ok {
		return msgNotAToken
	}
	return tokenRefusal(user, g, now)
}

// iamRefusal is the ErrorResponse that refuses a login as the IAM user user
// of type userType, saying why in its detail.
func iamRefusal(userType, user, detail string) *pgproto3.ErrorResponse {
	format := msgIAMServiceAccountAuthFailed
	if userType == userTypeIAMUser {
		format = msgIAMUserAuthFailed
	}
	return &pgproto3.ErrorResponse{
		Severity:            "FATAL",
		SeverityUnlocalized: "FATAL",
		Code:                sqlStateInvalidAuthorization,
		Message:             fmt.Sprintf(format, user),
		Detail:              detail,
		Hint:                msgIAMHint,
	}
}

// pgErrorResponse passes a PostgreSQL error on to the client as PostgreSQL
// sent it.
func pgErrorResponse(e *pgconn.PgError) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{
		Severity:            e.Severity,
		SeverityUnlocalized: e.SeverityUnlocalized,
		Code:                e.Code,
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Position:            e.Position,
		InternalPosition:    e.InternalPosition,
		InternalQuery:       e.InternalQuery,
		Where:               e.Where,
		SchemaName:          e.SchemaName,
		TableName:           e.TableName,
		ColumnName:          e.ColumnName,
		DataTypeName:        e.DataTypeName,
		ConstraintName:      e.ConstraintName,
		File:                e.File,
		Line:                e.Line,
		Routine:             e.Routine,
	}
}

// writeMessages encodes msgs and writes them at once.
func writeMessages(w io.Writer, msgs ...pgproto3.BackendMessage) error {
	var buf []byte
	for _, m := range msgs {
		var err error
		if buf, err = m.Encode(buf); err != nil {
			return err
		}
	}
	_, err := w.Write(buf)
	return err
}

// askPassword asks the client for a cleartext password and reads it. A client
// that answers anything but a password message gets a protocol violation.
func askPassword(rw io.ReadWriter) (string, error) {
	if err := writeMessages(rw, &pgproto3.AuthenticationCleartextPassword{}); err != nil {
		return "", err
	}
	var head [5]byte
	if _, err := io.ReadFull(rw, head[:]); err != nil {
		return "", err
	}
	if head[0] != 'p' {
		_ = writeMessages(rw, &pgproto3.ErrorResponse{
			Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: sqlStateProtocolViolation,
			Message: fmt.Sprintf(msgExpectedPassword, head[0]),
		})
		return "", errors.Errorf(msgExpectedPassword, head[0])
	}
	n := binary.BigEndian.Uint32(head[1:])
	if n < 5 || n > maxPasswordLength {
		return "", errors.Errorf(errPasswordLength, n)
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(rw, body); err != nil {
		return "", err
	}
	i := bytes.IndexByte(body, 0)
	if i < 0 {
		return "", errors.New(errPasswordLayout)
	}
	return string(body[:i]), nil
}

// protocolReply is the NegotiateProtocolVersion a server of protocol 3.0
// that knows no protocol extension answers to a StartupMessage asking for a
// newer minor version or for extensions, or nil when it asks for neither.
func protocolReply(m startupMessage) *pgproto3.NegotiateProtocolVersion {
	var options []string
	for k := range m.params {
		if strings.HasPrefix(k, protocolOptionPrefix) {
			options = append(options, k)
		}
	}
	if m.code&0xffff == 0 && len(options) == 0 {
		return nil
	}
	sort.Strings(options)
	return &pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: options}
}

// loginConnString names, for pgconn.ParseConfig, everything that would
// otherwise come from the emulator's environment (PGHOST, PGSSLMODE,
// PGPASSWORD, ...) or from files (a pgpass file): pgconn needs a Config from
// ParseConfig, and pgLoginConfig then sets every field that says where and
// how to connect.
const loginConnString = "host=/ port=5432 user=cloudsqladmin password=unused dbname=postgres " +
	"sslmode=disable sslnegotiation=postgres target_session_attrs=any channel_binding=disable " +
	"require_auth=scram-sha-256 min_protocol_version=3.0 max_protocol_version=3.0"

// pgLoginConfig logs in to the PostgreSQL whose socket is sock as user with
// password, with the client's startup parameters (database, application_name,
// options, ...) but those of protocol extensions.
func pgLoginConfig(sock, user, password string, params map[string]string) (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(loginConnString)
	if err != nil {
		return nil, errors.Wrap(err, errLoginConfig)
	}
	cfg.Host = filepath.Dir(sock)
	cfg.Port = 5432
	cfg.User = user
	cfg.Password = password
	cfg.Database = params["database"]
	cfg.TLSConfig = nil
	cfg.Fallbacks = nil
	cfg.ConnectTimeout = startupTimeout
	cfg.DialFunc = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}
	cfg.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	cfg.KerberosSrvName = ""
	cfg.KerberosSpn = ""
	cfg.SSLNegotiation = "postgres"
	cfg.AfterNetConnect = nil
	cfg.ValidateConnect = nil
	cfg.AfterConnect = nil
	cfg.OnNotice = nil
	cfg.OnNotification = nil
	cfg.OAuthTokenProvider = nil
	cfg.MinProtocolVersion = "3.0"
	cfg.MaxProtocolVersion = "3.0"
	cfg.ChannelBinding = "disable"
	cfg.RequireAuth = "scram-sha-256"
	cfg.RuntimeParams = map[string]string{}
	for k, v := range params {
		if k != "user" && k != "database" && !strings.HasPrefix(k, protocolOptionPrefix) {
			cfg.RuntimeParams[k] = v
		}
	}
	return cfg, nil
}

// welcome is what PostgreSQL tells a client whose login succeeded, for the
// session hc: AuthenticationOk, the parameters, the key of cancel requests
// and ReadyForQuery, after a NegotiateProtocolVersion when the client asked
// for more than protocol 3.0.
func welcome(m startupMessage, hc *pgconn.HijackedConn) []pgproto3.BackendMessage {
	var msgs []pgproto3.BackendMessage
	if v := protocolReply(m); v != nil {
		msgs = append(msgs, v)
	}
	msgs = append(msgs, &pgproto3.AuthenticationOk{})
	names := make([]string, 0, len(hc.ParameterStatuses))
	for k := range hc.ParameterStatuses {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		msgs = append(msgs, &pgproto3.ParameterStatus{Name: k, Value: hc.ParameterStatuses[k]})
	}
	return append(msgs,
		&pgproto3.BackendKeyData{ProcessID: hc.PID, SecretKey: hc.SecretKey},
		&pgproto3.ReadyForQuery{TxStatus: hc.TxStatus})
}

// iamLogin is what the data plane knows of an IAM user: its type and its
// role's password.
type iamLogin struct {
	userType string
	password string
	// off says the instance's database flag cloudsql.iam_authentication is
	// not on: Cloud SQL then logs no IAM user in.
	off bool
}

// iamAuthenticationFlag is the database flag that turns IAM database
// authentication on for an instance.
const iamAuthenticationFlag = "cloudsql.iam_authentication"

// iamAuthenticationOn says whether settings turn IAM database
// authentication on.
func iamAuthenticationOn(st *sqladmin.Settings) bool {
	if st == nil {
		return false
	}
	for _, f := range st.DatabaseFlags {
		if f != nil && f.Name == iamAuthenticationFlag {
			return f.Value == "on"
		}
	}
	return false
}

// clientSerial is the serial number of the client's certificate.
func clientSerial(conn *tls.Conn) string {
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return ""
	}
	return certs[0].SerialNumber.String()
}

// serveIAM authenticates a login as an IAM user and, once it succeeds, logs
// in to PostgreSQL as the user's role and pipes bytes both ways. Refusals go
// to the client as PostgreSQL's FATAL errors do, and to the data plane's log.
func (b *backend) serveIAM(conn *tls.Conn, sock string, m startupMessage, login iamLogin) {
	from, user, srv := conn.RemoteAddr(), m.user(), b.dp.srv
	_ = conn.SetDeadline(time.Now().Add(startupTimeout))
	var why string
	if login.off {
		why = msgIAMAuthOff
	} else if g, ok := srv.certGrants.get(clientSerial(conn)); ok {
		why = tokenRefusal(user, g, srv.Now())
	} else {
		pw, err := askPassword(conn)
		if err != nil {
			b.dp.log("instance %s:%s: closed the IAM login of %q from %s without a password: %v", b.project, b.instance, user, from, err)
			return
		}
		why = passwordRefusal(user, pw, srv.tokens.get, srv.Now())
	}
	if why != "" {
		_ = writeMessages(conn, iamRefusal(login.userType, user, why))
		b.dp.log("instance %s:%s: refused the IAM login of %q from %s: %s", b.project, b.instance, user, from, why)
		return
	}

	pg, err := b.pgLogin(sock, user, login.password, m)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			_ = writeMessages(conn, pgErrorResponse(pe))
		}
		b.dp.log("instance %s:%s: closed the IAM login of %q from %s: %v", b.project, b.instance, user, from, err)
		return
	}
	defer pg.Conn.Close()
	if err := writeMessages(conn, welcome(m, pg)...); err != nil {
		b.dp.log("instance %s:%s: closed the IAM login of %q from %s: %v", b.project, b.instance, user, from, errors.Wrap(err, errWelcome))
		return
	}
	_ = conn.SetDeadline(time.Time{})
	_ = pg.Conn.SetDeadline(time.Time{})
	pipe(conn, pg.Conn)
}

// pgLogin logs in to the instance's PostgreSQL as user and takes the session
// over from pgconn.
func (b *backend) pgLogin(sock, user, password string, m startupMessage) (*pgconn.HijackedConn, error) {
	cfg, err := pgLoginConfig(sock, user, password, m.params)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(b.ctx, startupTimeout)
	defer cancel()
	c, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, errors.Wrapf(err, errPostgresLogin, user)
	}
	hc, err := c.Hijack()
	if err != nil {
		_ = c.Close(ctx)
		return nil, errors.Wrap(err, errHijack)
	}
	return hc, nil
}
