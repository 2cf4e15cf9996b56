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
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	. "github.com/onsi/gomega"
)

// startupBytes is a StartupMessage of protocol version with params, in
// order, encoded as a client sends it.
func startupBytes(version uint32, params ...string) []byte {
	body := binary.BigEndian.AppendUint32(nil, version)
	for _, p := range params {
		body = append(append(body, p...), 0)
	}
	body = append(body, 0)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...)
}

// request is an 8-byte request (SSLRequest, GSSENCRequest) with code.
func request(code uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{0, 0, 0, 8}, code)
}

// cancelBytes is a CancelRequest for pid with a four-byte key.
func cancelBytes(pid, key uint32) []byte {
	b := binary.BigEndian.AppendUint32([]byte{0, 0, 0, 16}, cancelRequestCode)
	b = binary.BigEndian.AppendUint32(b, pid)
	return binary.BigEndian.AppendUint32(b, key)
}

// conversation is a client's side of the startup: what it sends, and what
// the proxy answers it.
type conversation struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *conversation) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *conversation) Write(p []byte) (int, error) { return c.out.Write(p) }

func join(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestReadStartup(t *testing.T) {
	v3 := startupBytes(196608, "user", "app@p.iam", "database", "orders", "application_name", "psql")
	v32 := startupBytes(196610, "user", "app", "_pq_.test", "on")
	noTerminator := bytes.Clone(v3[:len(v3)-1])
	binary.BigEndian.PutUint32(noTerminator, uint32(len(noTerminator)))
	oddValue := startupBytes(196608, "user")
	for name, tc := range map[string]struct {
		send       []byte
		wantKind   startupKind
		wantCode   uint32
		wantParams map[string]string
		// wantRaw is what PostgreSQL gets; nil means the whole message sent.
		wantRaw    []byte
		wantAnswer string
		wantErr    bool
	}{
		"StartupMessage": {
			send: v3, wantKind: startupV3, wantCode: 196608,
			wantParams: map[string]string{"user": "app@p.iam", "database": "orders", "application_name": "psql"},
		},
		"Protocol32WithAnExtension": {
			send: v32, wantKind: startupV3, wantCode: 196610,
			wantParams: map[string]string{"user": "app", "_pq_.test": "on"},
		},
		"SSLRequestIsDeclined": {
			send: join(request(sslRequestCode), v3), wantRaw: v3, wantAnswer: "N", wantKind: startupV3, wantCode: 196608,
			wantParams: map[string]string{"user": "app@p.iam", "database": "orders", "application_name": "psql"},
		},
		"GSSENCRequestThenSSLRequestAreDeclined": {
			send: join(request(gssEncRequestCode), request(sslRequestCode), v3), wantRaw: v3, wantAnswer: "NN",
			wantKind: startupV3, wantCode: 196608,
			wantParams: map[string]string{"user": "app@p.iam", "database": "orders", "application_name": "psql"},
		},
		"ThreeEncryptionRequestsAreTooMany": {
			send:    join(request(sslRequestCode), request(gssEncRequestCode), request(sslRequestCode), v3),
			wantErr: true, wantAnswer: "NN",
		},
		"CancelRequest": {
			send: cancelBytes(4242, 0xdeadbeef), wantKind: startupCancel, wantCode: cancelRequestCode,
		},
		"UnknownProtocolGoesToPostgreSQL": {
			send: startupBytes(131072, "user", "app"), wantKind: startupOther, wantCode: 131072,
		},
		"ALayoutWithoutTerminatorGoesToPostgreSQL": {
			send: noTerminator, wantKind: startupOther, wantCode: 196608,
		},
		"ANameWithoutValueGoesToPostgreSQL": {
			send: oddValue, wantKind: startupOther, wantCode: 196608,
		},
		"ATooShortLengthGoesToPostgreSQL": {
			send: []byte{0, 0, 0, 4, 1, 2, 3}, wantRaw: []byte{0, 0, 0, 4}, wantKind: startupOther,
		},
		"ATooLongLengthGoesToPostgreSQL": {
			send: []byte{0, 1, 0, 0, 1, 2, 3}, wantRaw: []byte{0, 1, 0, 0}, wantKind: startupOther,
		},
		"EndOfFileBeforeTheLength": {send: []byte{0, 0}, wantErr: true},
		"EndOfFileInTheMessage":    {send: v3[:10], wantErr: true},
		"NothingAtAll":             {send: nil, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := &conversation{in: bytes.NewReader(tc.send)}
			got, err := readStartup(c)
			g.Expect(c.out.String()).To(Equal(tc.wantAnswer))
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.kind).To(Equal(tc.wantKind))
			g.Expect(got.code).To(Equal(tc.wantCode))
			if tc.wantParams == nil {
				g.Expect(got.params).To(BeEmpty())
			} else {
				g.Expect(got.params).To(Equal(tc.wantParams))
			}
			want := tc.wantRaw
			if want == nil {
				want = tc.send
			}
			g.Expect(got.raw).To(Equal(want), "PostgreSQL gets the message as sent")
		})
	}
}

func TestReadStartupLeavesWhatFollows(t *testing.T) {
	g := NewWithT(t)
	v3 := startupBytes(196608, "user", "app")
	c := &conversation{in: bytes.NewReader(join(request(sslRequestCode), v3, []byte("next")))}
	_, err := readStartup(c)
	g.Expect(err).NotTo(HaveOccurred())
	rest, _ := io.ReadAll(c.in)
	g.Expect(string(rest)).To(Equal("next"), "nothing past the startup message is read")
}

func TestParseStartupParams(t *testing.T) {
	for name, tc := range map[string]struct {
		body    string
		want    map[string]string
		wantErr bool
	}{
		"None":              {body: "\x00", want: map[string]string{}},
		"One":               {body: "user\x00app\x00\x00", want: map[string]string{"user": "app"}},
		"EmptyValue":        {body: "user\x00app\x00options\x00\x00\x00", want: map[string]string{"user": "app", "options": ""}},
		"LastOneWins":       {body: "user\x00a\x00user\x00b\x00\x00", want: map[string]string{"user": "b"}},
		"Email":             {body: "user\x00jane@example.com\x00database\x00db\x00\x00", want: map[string]string{"user": "jane@example.com", "database": "db"}},
		"Empty":             {body: "", wantErr: true},
		"NoTerminator":      {body: "user\x00app\x00", wantErr: true},
		"NoValue":           {body: "user\x00", wantErr: true},
		"UnterminatedValue": {body: "user\x00app", wantErr: true},
		"BytesAfterTheEnd":  {body: "user\x00app\x00\x00x", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := parseStartupParams([]byte(tc.body))
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestIAMLoginName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(iamLoginName("app@p.iam.gserviceaccount.com")).To(Equal("app@p.iam"))
	g.Expect(iamLoginName("jane@example.com")).To(Equal("jane@example.com"))
}

func TestTokenAndPasswordRefusals(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	app := grant{account: "app@p.iam.gserviceaccount.com", expiry: now.Add(time.Minute)}
	other := grant{account: "other@p.iam.gserviceaccount.com", expiry: now.Add(time.Minute)}
	expired := grant{account: "app@p.iam.gserviceaccount.com", expiry: now}
	jane := grant{account: "jane@example.com", expiry: now.Add(time.Minute)}
	tokens := map[string]grant{"t-app": app, "t-other": other, "t-expired": expired, "t-jane": jane}
	lookup := func(tok string) (grant, bool) { g, ok := tokens[tok]; return g, ok }

	for name, tc := range map[string]struct {
		user, password string
		want           string
	}{
		"TheAccountsToken":    {user: "app@p.iam", password: "t-app"},
		"APersonsToken":       {user: "jane@example.com", password: "t-jane"},
		"AnotherAccountToken": {user: "app@p.iam", password: "t-other", want: `The access token belongs to other@p.iam.gserviceaccount.com, whose database user is "other@p.iam".`},
		"TheFullEmailIsNotTheUser": {user: "app@p.iam.gserviceaccount.com", password: "t-app",
			want: `The access token belongs to app@p.iam.gserviceaccount.com, whose database user is "app@p.iam".`},
		"ExpiredToken":    {user: "app@p.iam", password: "t-expired", want: "The access token expired at 2026-03-01T10:00:00.000Z."},
		"NoToken":         {user: "app@p.iam", password: "", want: "No access token was given."},
		"AnOrdinaryWord":  {user: "app@p.iam", password: "app-pw", want: "The password is not an access token of the account."},
		"APersonWithSA":   {user: "jane@example.com", password: "t-app", want: `The access token belongs to app@p.iam.gserviceaccount.com, whose database user is "app@p.iam".`},
		"CaseMattersHere": {user: "App@p.iam", password: "t-app", want: `The access token belongs to app@p.iam.gserviceaccount.com, whose database user is "app@p.iam".`},
	} {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(passwordRefusal(tc.user, tc.password, lookup, now)).To(Equal(tc.want))
		})
	}
	NewWithT(t).Expect(tokenRefusal("app@p.iam", app, now.Add(time.Minute))).To(ContainSubstring("expired"),
		"a token is expired from its expiry on")
}

func TestIAMRefusal(t *testing.T) {
	g := NewWithT(t)
	sa := iamRefusal(userTypeIAMServiceAccount, "app@p.iam", "why")
	g.Expect(sa.Severity).To(Equal("FATAL"))
	g.Expect(sa.SeverityUnlocalized).To(Equal("FATAL"))
	g.Expect(sa.Code).To(Equal("28000"))
	g.Expect(sa.Message).To(Equal(`Cloud SQL IAM service account authentication failed for user "app@p.iam"`))
	g.Expect(sa.Detail).To(Equal("why"))
	g.Expect(sa.Hint).To(ContainSubstring("--auto-iam-authn"))
	person := iamRefusal(userTypeIAMUser, "jane@example.com", "why")
	g.Expect(person.Message).To(Equal(`Cloud SQL IAM user authentication failed for user "jane@example.com"`))
}

func TestAskPassword(t *testing.T) {
	password := func(pw string) []byte {
		b, _ := (&pgproto3.PasswordMessage{Password: pw}).Encode(nil)
		return b
	}
	ask, _ := (&pgproto3.AuthenticationCleartextPassword{}).Encode(nil)
	for name, tc := range map[string]struct {
		send       []byte
		want       string
		wantErr    bool
		wantAnswer []byte
	}{
		"AToken":        {send: password("emulator-ABC"), want: "emulator-ABC", wantAnswer: ask},
		"Empty":         {send: password(""), want: "", wantAnswer: ask},
		"Terminate":     {send: []byte{'X', 0, 0, 0, 4}, wantErr: true},
		"TooLong":       {send: []byte{'p', 0, 2, 0, 0}, wantErr: true, wantAnswer: ask},
		"TooShort":      {send: []byte{'p', 0, 0, 0, 4}, wantErr: true, wantAnswer: ask},
		"NoTerminator":  {send: []byte{'p', 0, 0, 0, 6, 'a', 'b'}, wantErr: true, wantAnswer: ask},
		"ClosedMidway":  {send: []byte{'p', 0, 0}, wantErr: true, wantAnswer: ask},
		"ClosedAtOnce":  {send: nil, wantErr: true, wantAnswer: ask},
		"TrailingBytes": {send: join(password("tok"), []byte("Q")), want: "tok", wantAnswer: ask},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := &conversation{in: bytes.NewReader(tc.send)}
			got, err := askPassword(c)
			if tc.wantAnswer != nil {
				g.Expect(c.out.Bytes()).To(Equal(tc.wantAnswer))
			} else {
				g.Expect(c.out.Bytes()).To(HavePrefix(string(ask)))
				g.Expect(c.out.String()).To(ContainSubstring("08P01"), "a protocol violation is reported")
			}
			if tc.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestProtocolReply(t *testing.T) {
	g := NewWithT(t)
	g.Expect(protocolReply(startupMessage{code: 196608, params: map[string]string{"user": "a"}})).To(BeNil())
	g.Expect(protocolReply(startupMessage{code: 196610, params: map[string]string{"user": "a"}})).To(Equal(
		&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0}))
	g.Expect(protocolReply(startupMessage{code: 196608, params: map[string]string{"user": "a", "_pq_.b": "1", "_pq_.a": "2"}})).To(Equal(
		&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: []string{"_pq_.a", "_pq_.b"}}))
}

// TestPgLoginConfigIgnoresTheEnvironment sets every PG variable that could
// send the emulator's login elsewhere or as someone else: none may count.
func TestPgLoginConfigIgnoresTheEnvironment(t *testing.T) {
	g := NewWithT(t)
	pgpass := t.TempDir() + "/pgpass"
	for k, v := range map[string]string{
		"PGHOST": "/elsewhere", "PGHOSTADDR": "10.0.0.1", "PGPORT": "1", "PGUSER": "intruder",
		"PGPASSWORD": "leaked", "PGDATABASE": "elsewhere", "PGSSLMODE": "verify-full", "PGAPPNAME": "leaked",
		"PGOPTIONS": "-c search_path=leaked", "PGPASSFILE": pgpass, "PGCONNECT_TIMEOUT": "1",
		"PGTARGETSESSIONATTRS": "read-write", "PGKRBSRVNAME": "leaked", "PGTZ": "Asia/Tokyo",
		"PGCHANNELBINDING": "require", "PGREQUIREAUTH": "password", "PGMAXPROTOCOLVERSION": "3.2",
	} {
		t.Setenv(k, v)
	}
	cfg, err := pgLoginConfig("/tmp/srv/run/.s.PGSQL.5432", "app@p.iam", "internal", map[string]string{
		"user": "app@p.iam", "database": "orders", "application_name": "psql", "_pq_.x": "1",
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Host).To(Equal("/tmp/srv/run"))
	g.Expect(cfg.Port).To(Equal(uint16(5432)))
	g.Expect(cfg.User).To(Equal("app@p.iam"))
	g.Expect(cfg.Password).To(Equal("internal"))
	g.Expect(cfg.Database).To(Equal("orders"))
	g.Expect(cfg.TLSConfig).To(BeNil())
	g.Expect(cfg.Fallbacks).To(BeEmpty())
	g.Expect(cfg.RuntimeParams).To(Equal(map[string]string{"application_name": "psql"}))
	g.Expect(cfg.ValidateConnect).To(BeNil())
	g.Expect(cfg.ConnectTimeout).To(Equal(startupTimeout))
	g.Expect(cfg.KerberosSrvName).To(BeEmpty())
	g.Expect(cfg.ChannelBinding).To(Equal("disable"))
	g.Expect(cfg.RequireAuth).To(Equal("scram-sha-256"))
	g.Expect(cfg.MaxProtocolVersion).To(Equal("3.0"))

	cfg, err = pgLoginConfig("/tmp/srv/run/.s.PGSQL.5432", "app@p.iam", "internal", map[string]string{"user": "app@p.iam"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Database).To(BeEmpty(), "PostgreSQL takes the user's name, as for the client")
}

func TestGrantStoreForgetsExpiredGrantsAndStaysBounded(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	st := &grantStore{limit: 3}
	st.add("a", grant{account: "a", expiry: now.Add(time.Minute)}, now)
	st.add("b", grant{account: "b", expiry: now.Add(2 * time.Minute)}, now)
	_, ok := st.get("a")
	g.Expect(ok).To(BeTrue())

	// A minute later a has expired: the next grant drops it.
	st.add("c", grant{account: "c", expiry: now.Add(time.Hour)}, now.Add(time.Minute))
	_, ok = st.get("a")
	g.Expect(ok).To(BeFalse(), "expired grants go when one is added")
	g.Expect(st.m).To(HaveLen(2))

	// Full, none expired: the one that expires first makes room.
	st.add("d", grant{account: "d", expiry: now.Add(time.Hour)}, now.Add(time.Minute))
	st.add("e", grant{account: "e", expiry: now.Add(time.Hour)}, now.Add(time.Minute))
	g.Expect(st.m).To(HaveLen(3))
	_, ok = st.get("b")
	g.Expect(ok).To(BeFalse())
	for _, k := range []string{"c", "d", "e"} {
		_, ok = st.get(k)
		g.Expect(ok).To(BeTrue(), k)
	}
	for i := range 10 {
		st.add(fmt.Sprint(i), grant{expiry: now.Add(time.Hour)}, now)
	}
	g.Expect(st.m).To(HaveLen(3), "the store never holds more than its limit")
}
