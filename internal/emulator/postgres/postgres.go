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

// Package postgres runs throwaway PostgreSQL servers, one per emulated Cloud SQL
// instance: each has its own initdb data directory in a temporary directory,
// listens on a Unix socket only, and is stopped and removed with Stop.
//
// Like Cloud SQL, a server has an administrator role (cloudsqladmin) that only the
// emulator knows the password of, a postgres role that is not a superuser but
// a member of cloudsqlsuperuser, and the group roles of IAM database users
// (cloudsqliamserviceaccount, cloudsqliamuser). Every role logs in with a SCRAM
// password, over the socket as much as anywhere, so a wrong password fails as it
// does on Cloud SQL.
//
// PostgreSQL refuses to run as root; when the caller is root, the server runs as
// an unprivileged user (postgres, else nobody). The binaries come from a Debian
// postgresql-NN package or any directory holding initdb, postgres and psql.
package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// AdminRole is the superuser the emulator administers a server with; Cloud SQL
// keeps one of the same name to itself.
const AdminRole = "cloudsqladmin"

// SuperuserRole is the role Cloud SQL grants to the users it creates: they may
// create databases and roles but are not superusers.
const SuperuserRole = "cloudsqlsuperuser"

// RootRole is the user every Cloud SQL for PostgreSQL instance has.
const RootRole = "postgres"

// The group roles Cloud SQL makes the roles of IAM database users members of:
// one for service accounts (CLOUD_IAM_SERVICE_ACCOUNT users), one for people
// (CLOUD_IAM_USER users). Neither logs in.
const (
	IAMServiceAccountRole = "cloudsqliamserviceaccount"
	IAMUserRole           = "cloudsqliamuser"
)

// socketName is the file name of the socket under SocketDir, for port 5432.
const socketName = ".s.PGSQL.5432"

const (
	startTimeout = 60 * time.Second
	stopTimeout  = 15 * time.Second
	execTimeout  = 30 * time.Second
)

const (
	// errNoBinaries says what to install; `make postgres` does it.
	errNoBinaries = "cannot find PostgreSQL's initdb, postgres and psql (looked in %s): install Debian's postgresql-15 (`make postgres` does, with apt) or give the directory that holds them"
	errRootUser   = "user %s has uid 0, and PostgreSQL refuses to run as root: name an unprivileged user"
	errNoUser     = "PostgreSQL refuses to run as root and no unprivileged user %s exists: create one or name another"
	errMkdir      = "cannot make a directory for the PostgreSQL server of %s"
	errCreateRole = "cannot create the postgres role of %s"
	errChown      = "cannot give %s to the user PostgreSQL runs as"
	errInitdb     = "initdb for %s failed: %w: %s"
	errStart      = "cannot start PostgreSQL for %s"
	errExited     = "PostgreSQL for %s exited while starting (%v): %s"
	errNoAnswer   = "PostgreSQL for %s did not answer within %s: %v: %s"
	errPsql       = "psql on %s: %w: %s"
	errBasebackup = "pg_basebackup from %s for %s failed: %w: %s"
	errRestore    = "cannot copy backup %s for %s: %w: %s"
	errNoBackup   = "cannot find pg_basebackup in %s, which clones and backups need: install Debian's postgresql-15 (`make postgres` does)"
	errVersion    = "cannot read the server version of %s from %q"
	errAnswer     = "cannot read the answer of %s: %q"
)

// Config says where the binaries are and whom the servers run as.
type Config struct {
	// BinDir holds initdb, postgres and psql. Empty finds them with FindBinDir.
	BinDir string
	// RunAs is the user servers run as when the caller is root (PostgreSQL
	// refuses root). Empty means postgres if that user exists, else nobody.
	// When the caller is not root, servers run as the caller.
	RunAs string
	// Dir is where the servers' temporary directories are made. Empty means
	// os.TempDir().
	Dir string
}

// FindBinDir returns the directory holding initdb, postgres and psql: the
// newest /usr/lib/postgresql/NN/bin (Debian's layout), else the directory of
// pg_config --bindir, else the directory of initdb on PATH.
func FindBinDir() (string, error) {
	var tried []string
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	for _, d := range dirs {
		if hasBinaries(d) {
			return d, nil
		}
		tried = append(tried, d)
	}
	if len(tried) == 0 {
		tried = []string{"/usr/lib/postgresql/*/bin, pg_config --bindir and PATH"}
	}
	return "", errors.Errorf(errNoBinaries, strings.Join(tried, ", "))
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func hasBinaries(dir string) bool {
	for _, b := range []string{"initdb", "postgres", "psql"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}

// Resolve fills in BinDir and checks that the binaries and the RunAs user exist,
// so that a bad setting fails when the emulator starts rather than at the first
// instance.
func (c Config) Resolve() (Config, error) {
	if c.BinDir == "" {
		d, err := FindBinDir()
		if err != nil {
			return c, err
		}
		c.BinDir = d
	} else if !hasBinaries(c.BinDir) {
		return c, errors.Errorf(errNoBinaries, c.BinDir)
	}
	if _, err := c.credential(); err != nil {
		return c, err
	}
	return c, nil
}

// credential is who the servers run as: nil means the caller.
func (c Config) credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	names := []string{c.RunAs}
	if c.RunAs == "" {
		names = []string{"postgres", "nobody"}
	}
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		if uid == 0 {
			if c.RunAs != "" {
				return nil, errors.Errorf(errRootUser, n)
			}
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.Errorf(errNoUser, strings.Join(names, " or "))
}

// Server is one running PostgreSQL server.
type Server struct {
	cfg      Config
	name     string
	dir      string
	adminPw  string
	cmd      *exec.Cmd
	exited   chan struct{}
	exitErr  error
	stopOnce sync.Once
}

// Start initialises a data directory for a server called name (used in paths
// and errors) and starts it, with the postgres role's password set to
// rootPassword (an empty one leaves postgres unable to log in, until
// SetPassword). It returns once the server answers queries.
func Start(ctx context.Context, cfg Config, name, rootPassword string) (*Server, error) {
	cfg, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	cred, _ := cfg.credential()
	dir, err := os.MkdirTemp(cfg.Dir, "cloudsql-"+safeName(name)+"-")
	if err != nil {
		return nil, errors.Wrapf(err, errMkdir, name)
	}
	s := &Server{cfg: cfg, name: name, dir: dir, adminPw: rand.Text(), exited: make(chan struct{})}
	if err := s.initdb(ctx, cred); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.start(ctx, cred); err != nil {
		_ = s.Stop()
		return nil, err
	}
	if err := s.Exec(ctx, bootstrapSQL(rootPassword)); err != nil {
		_ = s.Stop()
		return nil, errors.Wrapf(err, errCreateRole, name)
	}
	return s, nil
}

// Clone starts a server called name that holds a copy of src's data: its
// roles with their passwords, its databases and what is in them, as
// instances.clone does. The copy is a pg_basebackup of the running src, taken
// over its socket, so src keeps serving meanwhile. The clone's administrator
// password is src's, which the copy carries.
func Clone(ctx context.Context, cfg Config, name string, src *Server) (*Server, error) {
	cfg, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	cred, _ := cfg.credential()
	s, err := newServerDir(cfg, cred, name, src.adminPw)
	if err != nil {
		return nil, err
	}
	if err := basebackup(ctx, cfg, cred, src, s.dataDir(), name); err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, err
	}
	if err := s.start(ctx, cred); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// newServerDir makes the temporary directory of a server that is not
// started yet, with its socket directory.
func newServerDir(cfg Config, cred *syscall.Credential, name, adminPw string) (*Server, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "cloudsql-"+safeName(name)+"-")
	if err != nil {
		return nil, errors.Wrapf(err, errMkdir, name)
	}
	s := &Server{cfg: cfg, name: name, dir: dir, adminPw: adminPw, exited: make(chan struct{})}
	if err := s.prepareDirs(cred); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// basebackup copies the running src's data directory into dataDir (which
// must not exist, in a directory the servers' user owns) with pg_basebackup,
// WAL included, so that the copy starts on its own.
func basebackup(ctx context.Context, cfg Config, cred *syscall.Credential, src *Server, dataDir, name string) error {
	bin := filepath.Join(cfg.BinDir, "pg_basebackup")
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return errors.Errorf(errNoBackup, cfg.BinDir)
	}
	cmd := exec.CommandContext(ctx, bin, "-D", dataDir, "--wal-method=stream", "--checkpoint=fast", "--no-sync")
	cmd.Env = append(baseEnv(), "PGHOST="+src.SocketDir(), "PGUSER="+AdminRole,
		"PGPASSWORD="+src.adminPw, "PGCONNECT_TIMEOUT=5", "PGAPPNAME=cloudsql-emulator")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return errors.Errorf(errBasebackup, src.name, name, err, lastLines(out, 10))
	}
	return nil
}

// Backup is a copy of a server's data as it was when Server.Backup took it,
// kept in a directory of its own until Remove, whatever becomes of the
// server: what a Cloud SQL backup holds. Restore starts a server from it.
type Backup struct {
	cfg     Config
	name    string
	dir     string
	adminPw string
}

// Backup copies the server's data (roles, databases and their rows) as they
// are now, with pg_basebackup over its socket, so the server keeps serving.
// name is used in paths and errors.
func (s *Server) Backup(ctx context.Context, name string) (*Backup, error) {
	cred, _ := s.cfg.credential()
	dir, err := os.MkdirTemp(s.cfg.Dir, "cloudsql-backup-"+safeName(name)+"-")
	if err != nil {
		return nil, errors.Wrapf(err, errMkdir, name)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			_ = os.RemoveAll(dir)
			return nil, errors.Wrapf(err, errChown, dir)
		}
	}
	b := &Backup{cfg: s.cfg, name: name, dir: dir, adminPw: s.adminPw}
	if err := basebackup(ctx, s.cfg, cred, s, b.dataDir(), name); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return b, nil
}

func (b *Backup) dataDir() string { return filepath.Join(b.dir, "data") }

// Remove deletes the backup's files.
func (b *Backup) Remove() error { return os.RemoveAll(b.dir) }

// Size is how many bytes the backup's files hold.
func (b *Backup) Size() int64 {
	var n int64
	_ = filepath.WalkDir(b.dataDir(), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}

// Restore starts a server called name on a copy of the backup's data; the
// backup stays as it is. The server's administrator password is the one of
// the server the backup was taken from.
func Restore(ctx context.Context, b *Backup, name string) (*Server, error) {
	cred, _ := b.cfg.credential()
	s, err := newServerDir(b.cfg, cred, name, b.adminPw)
	if err != nil {
		return nil, err
	}
	// cp -a keeps the owner and modes PostgreSQL insists on (0700 data
	// directory, owned by the servers' user).
	out, err := exec.CommandContext(ctx, "cp", "-a", b.dataDir(), s.dataDir()).CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, errors.Errorf(errRestore, b.name, name, err, lastLines(out, 10))
	}
	if err := s.start(ctx, cred); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// SocketDir is the directory of the server's Unix socket, the host to give
// libpq (PGHOST) or the directory of SocketPath.
func (s *Server) SocketDir() string { return filepath.Join(s.dir, "run") }

// SocketPath is the server's Unix socket, to dial with net.Dial("unix", ...).
func (s *Server) SocketPath() string { return filepath.Join(s.SocketDir(), socketName) }

// ArchiveDir is where the server keeps every finished segment of its
// write-ahead log (archive_command), until Stop.
func (s *Server) ArchiveDir() string { return filepath.Join(s.dir, "wal-archive") }

// Dir is the server's temporary directory (data directory, socket, log, WAL
// archive).
func (s *Server) Dir() string { return s.dir }

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *Server) logPath() string { return filepath.Join(s.dir, "postgres.log") }

// prepareDirs makes the socket directory and gives the server's directory to
// the user it runs as.
func (s *Server) prepareDirs(cred *syscall.Credential, extra ...string) error {
	for _, d := range []string{s.SocketDir(), s.ArchiveDir()} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	if cred != nil {
		for _, p := range append([]string{s.dir, s.SocketDir(), s.ArchiveDir()}, extra...) {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return errors.Wrapf(err, errChown, p)
			}
		}
	}
	return nil
}

func (s *Server) initdb(ctx context.Context, cred *syscall.Credential) error {
	pwfile := filepath.Join(s.dir, "adminpw")
	if err := os.WriteFile(pwfile, []byte(s.adminPw+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	if err := s.prepareDirs(cred, pwfile); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.cfg.BinDir, "initdb"),
		"-D", s.dataDir(), "-U", AdminRole, "--pwfile="+pwfile,
		"--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions",
		// 1 MB segments, not 16: each backup and each ArchiveWAL closes one,
		// and the archive keeps them.
		"--wal-segsize=1")
	cmd.Env = baseEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return errors.Errorf(errInitdb, s.name, err, lastLines(out, 10))
	}
	return nil
}

func (s *Server) start(ctx context.Context, cred *syscall.Credential) error {
	logf, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	// Small and fast: a test server holds little and need not survive a crash.
	cmd := exec.Command(filepath.Join(s.cfg.BinDir, "postgres"), "-D", s.dataDir(),
		"-c", "listen_addresses=",
		"-c", "unix_socket_directories="+s.SocketDir(),
		"-c", "unix_socket_permissions=0700",
		"-c", "max_connections=30",
		"-c", "shared_buffers=16MB",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		// A failing ALTER ROLE would otherwise write its password to the log.
		"-c", "log_min_error_statement=panic",
		// Every finished WAL segment is kept, as Cloud SQL keeps the logs of
		// point-in-time recovery: RecoverTo replays them.
		"-c", "archive_mode=on",
		"-c", "archive_command="+archiveCommand(s.ArchiveDir()),
		"-c", "password_encryption=scram-sha-256")
	cmd.Env = baseEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that a Ctrl-C meant for the emulator does not
	// reach it before the emulator stops it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return errors.Wrapf(err, errStart, s.name)
	}
	s.cmd = cmd
	go func() {
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()

	deadline := time.Now().Add(startTimeout)
	for {
		err := s.exec(ctx, "SELECT 1", 2*time.Second)
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return errors.Errorf(errExited, s.name, s.exitErr, s.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.Errorf(errNoAnswer, s.name, startTimeout, err, s.logTail())
		}
	}
}

// Exec runs SQL as the administrator, in one transaction-less psql session that
// stops at the first error. The SQL goes through stdin, so passwords in it never
// show in a process list.
func (s *Server) Exec(ctx context.Context, sql string) error {
	return s.exec(ctx, sql, execTimeout)
}

func (s *Server) exec(ctx context.Context, sql string, timeout time.Duration) error {
	_, err := s.psql(ctx, sql, timeout)
	return err
}

// Query runs SQL as the administrator, as Exec does, and returns what it printed:
// rows unaligned, one a line, columns separated by |, no headers.
func (s *Server) Query(ctx context.Context, sql string) (string, error) {
	return s.psql(ctx, sql, execTimeout, "--tuples-only", "--no-align")
}

// QueryIn runs SQL as Query does, in database instead of postgres.
func (s *Server) QueryIn(ctx context.Context, database, sql string) (string, error) {
	return s.psql(ctx, sql, execTimeout, "--tuples-only", "--no-align", "--dbname="+database)
}

func (s *Server) psql(ctx context.Context, sql string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.cfg.BinDir, "psql"),
		append([]string{"--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1", "--file=-"}, args...)...)
	cmd.Env = append(baseEnv(),
		"PGHOST="+s.SocketDir(), "PGUSER="+AdminRole, "PGDATABASE=postgres",
		"PGPASSWORD="+s.adminPw, "PGCONNECT_TIMEOUT=5", "PGAPPNAME=cloudsql-emulator")
	cmd.Stdin = strings.NewReader(sql)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", errors.Errorf(errPsql, s.name, err, strings.TrimSpace(out.String()+stderr.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// CreateRole creates a login role that is a member of cloudsqlsuperuser, as
// users.insert does for built-in users. An empty password leaves it unable to log
// in with a password.
func (s *Server) CreateRole(ctx context.Context, name, password string) error {
	return s.Exec(ctx, fmt.Sprintf("CREATE ROLE %s WITH LOGIN CREATEDB CREATEROLE PASSWORD %s IN ROLE %s;\n",
		QuoteIdent(name), passwordLiteral(password), QuoteIdent(SuperuserRole)))
}

// CreateIAMRole creates the login role of an IAM database user, as
// users.insert does for CLOUD_IAM_SERVICE_ACCOUNT and CLOUD_IAM_USER users: a
// member of group (IAMServiceAccountRole or IAMUserRole) only, neither of
// cloudsqlsuperuser nor with CREATEDB or CREATEROLE. Its password is one that
// only the caller knows, for logging in on the user's behalf once the user's
// IAM credentials have been checked.
func (s *Server) CreateIAMRole(ctx context.Context, name, password, group string) error {
	return s.Exec(ctx, fmt.Sprintf("CREATE ROLE %s WITH LOGIN NOCREATEDB NOCREATEROLE PASSWORD %s IN ROLE %s;\n",
		QuoteIdent(name), passwordLiteral(password), QuoteIdent(group)))
}

// SetPassword sets a role's password, as users.update does.
func (s *Server) SetPassword(ctx context.Context, name, password string) error {
	return s.Exec(ctx, fmt.Sprintf("ALTER ROLE %s WITH PASSWORD %s;\n", QuoteIdent(name), passwordLiteral(password)))
}

// DropRole drops a role, as users.delete does. Like Cloud SQL's, it fails
// while objects depend on the role (see RoleDependents), rather than dropping
// them with it.
func (s *Server) DropRole(ctx context.Context, name string) error {
	return s.Exec(ctx, fmt.Sprintf("DROP ROLE %s;\n", QuoteIdent(name)))
}

// RoleDependents says why DROP ROLE name would fail for objects that depend on
// the role (it owns a database, a table, holds privileges, ...): PostgreSQL's
// message and detail, such as `role "app" cannot be dropped because some
// objects depend on it` and "owner of database appdb". Both are empty when
// nothing depends on it. It tries the drop from the postgres database in a
// transaction that it rolls back; a role that does not exist is an error.
func (s *Server) RoleDependents(ctx context.Context, name string) (message, detail string, err error) {
	body := fmt.Sprintf(`
DECLARE m text := ''; d text := '';
BEGIN
  BEGIN
    DROP ROLE %s;
  EXCEPTION WHEN dependent_objects_still_exist THEN
    GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
  END;
  PERFORM set_config('cloudsql_emulator.drop_role',
    encode(convert_to(m, 'UTF8'), 'hex') || '|' || encode(convert_to(coalesce(d, ''), 'UTF8'), 'hex'), true);
END`, QuoteIdent(name))
	out, err := s.Query(ctx, "BEGIN;\nDO "+dollarQuote(body)+";\n"+
		"SELECT current_setting('cloudsql_emulator.drop_role');\nROLLBACK;\n")
	if err != nil {
		return "", "", err
	}
	m, d, _ := strings.Cut(out, "|")
	mb, err1 := hex.DecodeString(m)
	db, err2 := hex.DecodeString(d)
	if err1 != nil || err2 != nil {
		return "", "", errors.Errorf(errAnswer, s.name, out)
	}
	return string(mb), string(db), nil
}

// Sessions counts the sessions connected to the database name, those that
// make DROP DATABASE fail with "is being accessed by other users".
func (s *Server) Sessions(ctx context.Context, name string) (int, error) {
	out, err := s.Query(ctx, fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE datname = %s;\n", QuoteLiteral(name)))
	if err != nil {
		return 0, err
	}
	n, perr := strconv.Atoi(out)
	if perr != nil {
		return 0, errors.Errorf(errAnswer, s.name, out)
	}
	return n, nil
}

// SetDatabaseOwner makes role the owner of the database name, as ALTER
// DATABASE ... OWNER TO does.
func (s *Server) SetDatabaseOwner(ctx context.Context, name, role string) error {
	return s.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s OWNER TO %s;\n", QuoteIdent(name), QuoteIdent(role)))
}

// CreateDatabase creates a database owned by cloudsqlsuperuser, as
// databases.insert does on Cloud SQL (whose users may then drop it), from
// template0 with the given encoding and collation (LC_COLLATE and LC_CTYPE).
// A collation the host has no locale for (container images often carry only C
// and C.UTF-8) falls back to the template's C locale: sorting then differs from
// Cloud SQL's, everything else behaves the same.
func (s *Server) CreateDatabase(ctx context.Context, name, encoding, collation string) error {
	stmt := fmt.Sprintf("CREATE DATABASE %s WITH OWNER %s TEMPLATE template0 ENCODING %s",
		QuoteIdent(name), QuoteIdent(SuperuserRole), QuoteLiteral(encoding))
	if collation != "" {
		err := s.Exec(ctx, fmt.Sprintf("%s LC_COLLATE %s LC_CTYPE %s;\n", stmt, QuoteLiteral(collation), QuoteLiteral(collation)))
		if err == nil || !strings.Contains(err.Error(), "locale name") {
			return err
		}
	}
	return s.Exec(ctx, stmt+";\n")
}

// DropDatabase drops a database, disconnecting the sessions that use it
// (WITH (FORCE) from PostgreSQL 13 on, terminating them first before).
// databases.delete refuses a database that has sessions (see Sessions); this
// covers those that connect between that check and the drop.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	v, err := s.versionNum(ctx)
	if err != nil {
		return err
	}
	if v >= 130000 {
		return s.Exec(ctx, fmt.Sprintf("DROP DATABASE %s WITH (FORCE);\n", QuoteIdent(name)))
	}
	return s.Exec(ctx, fmt.Sprintf("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid();\n"+
		"DROP DATABASE %s;\n", QuoteLiteral(name), QuoteIdent(name)))
}

// versionNum is the server's server_version_num, e.g. 150004.
func (s *Server) versionNum(ctx context.Context) (int, error) {
	out, err := s.Query(ctx, "SHOW server_version_num;\n")
	if err != nil {
		return 0, err
	}
	v, perr := strconv.Atoi(out)
	if perr != nil {
		return 0, errors.Errorf(errVersion, s.name, out)
	}
	return v, nil
}

// Stop stops the server (fast shutdown, then a kill) and removes its directory.
// It is safe to call more than once.
func (s *Server) Stop() error {
	var err error
	s.stopOnce.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-s.exited:
			case <-time.After(stopTimeout):
				_ = s.cmd.Process.Kill()
				<-s.exited
			}
		}
		err = os.RemoveAll(s.dir)
	})
	return err
}

// Exited is closed when the server process has ended.
func (s *Server) Exited() <-chan struct{} { return s.exited }

func bootstrapSQL(rootPassword string) string {
	return fmt.Sprintf("CREATE ROLE %s WITH NOLOGIN CREATEDB CREATEROLE;\n"+
		"CREATE ROLE %s WITH LOGIN CREATEDB CREATEROLE PASSWORD %s IN ROLE %s;\n"+
		"GRANT ALL ON DATABASE postgres TO %s;\n"+
		"GRANT ALL ON SCHEMA public TO %s;\n"+
		"CREATE ROLE %s WITH NOLOGIN;\n"+
		"CREATE ROLE %s WITH NOLOGIN;\n",
		QuoteIdent(SuperuserRole),
		QuoteIdent(RootRole), passwordLiteral(rootPassword), QuoteIdent(SuperuserRole),
		QuoteIdent(SuperuserRole), QuoteIdent(SuperuserRole),
		QuoteIdent(IAMServiceAccountRole), QuoteIdent(IAMUserRole))
}

// dollarQuote quotes s as a dollar-quoted string constant whose tag s does
// not contain.
func dollarQuote(s string) string {
	tag := "$emulator$"
	for strings.Contains(s, tag) {
		tag = tag[:len(tag)-1] + "x$"
	}
	return tag + s + tag
}

// QuoteIdent quotes an SQL identifier.
func QuoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// QuoteLiteral quotes an SQL string literal (standard_conforming_strings is on).
func QuoteLiteral(s string) string {
	return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
}

func passwordLiteral(pw string) string {
	if pw == "" {
		return "NULL"
	}
	return QuoteLiteral(pw)
}

// baseEnv is the environment of the PostgreSQL commands: nothing inherited but
// PATH, so that the caller's PG* variables cannot redirect them.
func baseEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "TZ=UTC"}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath())
	return lastLines(b, 10)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func safeName(s string) string {
	out := []rune{}
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			out = append(out, r)
		}
		if len(out) == 20 {
			break
		}
	}
	return string(out)
}
