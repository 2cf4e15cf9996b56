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

package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	. "github.com/onsi/gomega"
	"google.golang.org/api/option"
	sqladmin "google.golang.org/api/sqladmin/v1beta4"
)

// runMainEnv makes the test binary act as the command, so that the tests
// can start it as a real process and signal it.
const runMainEnv = "CLOUDSQL_EMULATOR_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// process is the command running as a child process.
type process struct {
	cmd   *exec.Cmd
	url   string
	lines chan string // stderr, line by line, after the listening line
	done  chan struct{}
}

// start runs the command with args and waits for it to listen.
func start(t *testing.T, args ...string) *process {
	t.Helper()
	g := NewWithT(t)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cmd.Start()).To(Succeed())
	p := &process{cmd: cmd, lines: make(chan string, 1000), done: make(chan struct{})}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})

	listening := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if addr, ok := strings.CutPrefix(line, "cloudsql-emulator listening on "); ok {
				listening <- addr
				continue
			}
			select {
			case p.lines <- line:
			default:
			}
		}
		close(p.lines)
	}()
	select {
	case p.url = <-listening:
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not start listening")
	}
	return p
}

// stop signals the process and returns its exit code and remaining output.
func (p *process) stop(t *testing.T, sig os.Signal) (int, []string) {
	t.Helper()
	NewWithT(t).Expect(p.cmd.Process.Signal(sig)).To(Succeed())
	<-p.done
	err := p.cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("waiting for the command: %v", err)
	}
	var out []string
	for l := range p.lines {
		out = append(out, l)
	}
	return p.cmd.ProcessState.ExitCode(), out
}

func TestCommandServesLogsAndStopsCleanly(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			g := NewWithT(t)
			p := start(t, "--listen", "127.0.0.1:0")
			svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(p.url+"/"), option.WithoutAuthentication())
			g.Expect(err).NotTo(HaveOccurred())
			_, err = svc.Instances.Insert("demo", &sqladmin.DatabaseInstance{
				Name: "orders", DatabaseVersion: "POSTGRES_15", Settings: &sqladmin.Settings{Tier: "db-f1-micro"},
			}).Do()
			g.Expect(err).NotTo(HaveOccurred())
			db, err := svc.Instances.Get("demo", "orders").Do()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(db.State).To(Equal("RUNNABLE"))

			code, out := p.stop(t, sig)
			g.Expect(code).To(Equal(0), "output: %v", out)
			g.Expect(out).To(ContainElement(MatchRegexp(`^\S+ POST /sql/v1beta4/projects/demo/instances 200 \S+$`)))
			g.Expect(out).To(ContainElement(MatchRegexp(`^\S+ GET /sql/v1beta4/projects/demo/instances/orders 200 \S+$`)))
			g.Expect(out).To(ContainElement("cloudsql-emulator stopped"))
		})
	}
}

func TestCommandAppliesItsConfig(t *testing.T) {
	g := NewWithT(t)
	cfg := filepath.Join(t.TempDir(), "emulator.toml")
	g.Expect(os.WriteFile(cfg, []byte(`
request_budget = 3
name_reservation = "1h"
seed = 7

[delays]
create = "1h"
update = "1m"
delete = "1m"

[[instances]]
project = "demo"
name = "legacy"
database_version = "POSTGRES_13"
tier = "db-custom-2-7680"
region = "europe-west1"
zone = "europe-west1-c"
root_password = "pw"
ipv4_enabled = false
private_network = "projects/demo/global/networks/default"
settings_version = 5
labels = { team = "payments" }
flags = { max_connections = "100" }
`), 0o600)).To(Succeed())

	p := start(t, "--listen", "127.0.0.1:0", "--config", cfg)
	svc, err := sqladmin.NewService(context.Background(), option.WithEndpoint(p.url+"/"), option.WithoutAuthentication())
	g.Expect(err).NotTo(HaveOccurred())

	db, err := svc.Instances.Get("demo", "legacy").Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(db.GceZone).To(Equal("europe-west1-c"))
	g.Expect(db.Settings.SettingsVersion).To(Equal(int64(5)))
	g.Expect(db.Settings.UserLabels).To(HaveKeyWithValue("team", "payments"))
	g.Expect(db.Settings.DatabaseFlags).To(HaveLen(1))
	g.Expect(db.IpAddresses).To(HaveExactElements(HaveField("Type", "PRIVATE")))

	// The create delay applies.
	op, err := svc.Instances.Insert("demo", &sqladmin.DatabaseInstance{
		Name: "fresh", DatabaseVersion: "POSTGRES_15", Settings: &sqladmin.Settings{Tier: "db-f1-micro"},
	}).Do()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(op.Status).To(Equal("PENDING"))

	// The request budget applies: that was 2 of 3.
	_, err = svc.Instances.List("demo").Do()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = svc.Instances.List("demo").Do()
	g.Expect(err).To(MatchError(ContainSubstring("rateLimitExceeded")))

	// The admin surface is served too.
	resp, err := http.Post(p.url+"/emulator/v1/projects/demo/instances/legacy/users/postgres:checkPassword", "application/json",
		strings.NewReader(`{"password":"pw"}`))
	g.Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.Expect(string(body)).To(Equal(`{"match":true}`))

	code, out := p.stop(t, syscall.SIGTERM)
	g.Expect(code).To(Equal(0), "output: %v", out)
}

func TestCommandRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		NewWithT(t).Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
		return path
	}
	cases := map[string]struct {
		args []string
		want string
	}{
		"UnknownFlag":          {[]string{"--port", "1"}, "flag provided but not defined"},
		"StrayArgument":        {[]string{"serve"}, "unexpected arguments"},
		"MissingConfig":        {[]string{"--config", filepath.Join(dir, "none.toml")}, "reading config"},
		"BrokenTOML":           {[]string{"--config", write("broken.toml", "request_budget = ")}, "reading config"},
		"UnknownKey":           {[]string{"--config", write("typo.toml", "request_budgett = 3")}, "unknown keys: request_budgett"},
		"BadDuration":          {[]string{"--config", write("dur.toml", "[delays]\ncreate = \"soon\"")}, "reading config"},
		"NegativeDuration":     {[]string{"--config", write("neg.toml", "name_reservation = \"-1h\"")}, "negative"},
		"IncompleteSeed":       {[]string{"--config", write("seed.toml", "[[instances]]\nname = \"x\"")}, "are required"},
		"InvalidSeed":          {[]string{"--config", write("tier.toml", "[[instances]]\nproject = \"p\"\nname = \"x\"\ndatabase_version = \"POSTGRES_15\"\ntier = \"db-custom-3-3840\"")}, "Invalid Tier"},
		"InvalidListenAddress": {[]string{"--listen", "256.0.0.1:1"}, "listen"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var out strings.Builder
			err := run(context.Background(), tc.args, &out)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error() + out.String()).To(ContainSubstring(tc.want))
		})
	}
}

func TestCommandHelpIsNotAnError(t *testing.T) {
	g := NewWithT(t)
	cmd := exec.Command(os.Args[0], "-h")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("-listen"))
	g.Expect(string(out)).To(ContainSubstring("-config"))
}

func TestCommandExitsNonZeroOnError(t *testing.T) {
	g := NewWithT(t)
	cmd := exec.Command(os.Args[0], "--config", "/nonexistent/emulator.toml")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	g.Expect(errors.As(err, &exit)).To(BeTrue())
	g.Expect(exit.ExitCode()).To(Equal(1))
	g.Expect(string(out)).To(HavePrefix("cloudsql-emulator: reading config"))
}
