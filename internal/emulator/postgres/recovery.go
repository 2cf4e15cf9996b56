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

package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errArchive      = "cannot archive the write-ahead log of %s"
	errNotArchived  = "segment %s of %s was not archived within %s: %s"
	errRecoveryConf = "cannot write the recovery settings of %s"
	errNotPromoted  = "PostgreSQL for %s did not end its recovery to %s within %s: %s"
	errRecovery     = "PostgreSQL for %s could not recover to %s (%v): %s"
)

// recoveryTimeFormat is how recovery_target_time is written: to the
// microsecond, which commit timestamps have, in UTC.
const recoveryTimeFormat = "2006-01-02 15:04:05.999999-07"

// archiveCommand copies a finished WAL segment into dir, never over one that
// is there (PostgreSQL's own advice): a segment archived twice is the same.
func archiveCommand(dir string) string {
	return fmt.Sprintf("test ! -f '%[1]s/%%f' && cp '%%p' '%[1]s/%%f'", dir)
}

// ArchiveWAL puts everything the server has committed until now into its
// archive, and returns now: the latest time a recovery from the archive can
// reach. It commits a transaction after that time, so that a recovery to any
// time up to it meets a commit past its target and stops there (PostgreSQL
// ends a recovery that never does with an error), then closes the current
// WAL segment and waits until the archive holds it.
func (s *Server) ArchiveWAL(ctx context.Context) (time.Time, error) {
	latest := time.Now()
	seg, err := s.Query(ctx, "SELECT txid_current(); SELECT pg_walfile_name(pg_switch_wal())")
	if err != nil {
		return time.Time{}, errors.Wrapf(err, errArchive, s.name)
	}
	lines := strings.Fields(seg)
	if len(lines) == 0 {
		return time.Time{}, errors.Errorf(errAnswer, s.name, seg)
	}
	// pg_walfile_name names the segment that ends at the switch: the one just
	// closed, or the last one closed when nothing was written since.
	file := filepath.Join(s.ArchiveDir(), lines[len(lines)-1])
	deadline := time.Now().Add(execTimeout)
	for {
		if _, err := os.Stat(file); err == nil {
			return latest, nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, errors.Errorf(errNotArchived, filepath.Base(file), s.name, execTimeout, s.logTail())
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// RecoverTo starts a server called name on a copy of backup b, replaying
// the write-ahead log kept in archive (a server's ArchiveDir) up to target:
// it holds every transaction committed at or before target and none after,
// as Cloud SQL's point-in-time recovery does. b must have been taken before
// target, and archive must reach it (target no later than the time an
// ArchiveWAL returned); else
// PostgreSQL ends the recovery with an error, which RecoverTo returns. The
// server's administrator password is that of the server b was taken from.
func RecoverTo(ctx context.Context, b *Backup, archive string, target time.Time, name string) (*Server, error) {
	cred, _ := b.cfg.credential()
	s, err := newServerDir(b.cfg, cred, name, b.adminPw)
	if err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, "cp", "-a", b.dataDir(), s.dataDir()).CombinedOutput(); err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, errors.Errorf(errRestore, b.name, name, err, lastLines(out, 10))
	}
	when := target.UTC().Format(recoveryTimeFormat)
	if err := writeRecoverySettings(s.dataDir(), archive, when); err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, errors.Wrapf(err, errRecoveryConf, name)
	}
	if err := s.start(ctx, cred); err != nil {
		_ = s.Stop()
		return nil, errors.Errorf(errRecovery, name, when, err, s.logTail())
	}
	deadline := time.Now().Add(startTimeout)
	for {
		out, err := s.Query(ctx, "SELECT pg_is_in_recovery()")
		if err == nil && strings.TrimSpace(out) == "f" {
			return s, nil
		}
		select {
		case <-s.exited:
			_ = s.Stop()
			return nil, errors.Errorf(errRecovery, name, when, s.exitErr, s.logTail())
		case <-ctx.Done():
			_ = s.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tail := s.logTail()
			_ = s.Stop()
			return nil, errors.Errorf(errNotPromoted, name, when, startTimeout, tail)
		}
	}
}

// writeRecoverySettings makes the data directory dataDir recover from the
// WAL in archive up to the time when, then serve: PostgreSQL reads the
// settings from postgresql.auto.conf, and recovery.signal asks for the
// recovery (it removes the file once promoted).
func writeRecoverySettings(dataDir, archive, when string) error {
	conf := fmt.Sprintf("restore_command = '%s'\nrecovery_target_time = '%s'\nrecovery_target_action = 'promote'\n",
		strings.ReplaceAll(fmt.Sprintf(`cp "%s/%%f" "%%p"`, archive), "'", "''"), when)
	f, err := os.OpenFile(filepath.Join(dataDir, "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(conf); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	signal, err := os.OpenFile(filepath.Join(dataDir, "recovery.signal"), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	return signal.Close()
}
