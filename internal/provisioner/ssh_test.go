//go:build unix

package provisioner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/test/sshd"
)

// decodeAs decodes src with spec, as the language does.
func decodeAs(t *testing.T, spec hcldec.Spec, src string) cty.Value {
	t.Helper()
	f, ds := hclsyntax.ParseConfig([]byte(src), "p.tf", hcl.InitialPos)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	v, ds := hcldec.Decode(f.Body, spec, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	return v
}

func specOf(typ string) hcldec.Spec {
	s, _ := Spec(typ)
	return s
}

// connectionTo is a connection block for srv, with extra arguments.
func connectionTo(srv *sshd.Server, key string, extra string) string {
	return fmt.Sprintf("host = %q\nport = %d\nuser = %q\nprivate_key = <<EOT\n%sEOT\n%s\n", srv.Host, srv.Port, srv.User, key, extra)
}

// TestFileOverSSH uploads content, a file and directories to a real sshd, as terraform's file
// provisioner does, and reads back what landed.
func TestFileOverSSH(t *testing.T) {
	srv := sshd.Start(t)
	local := t.TempDir()
	for name, text := range map[string]string{"one.txt": "one\n", "site/index.html": "<p>hi</p>\n", "site/css/a.css": "a{}\n"} {
		p := filepath.Join(local, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		reason, cfg, conn string
		want              map[string]string
	}{
		"content": {reason: "content is written to destination, 0644",
			cfg: `content = "hello\n"` + "\ndestination = \"DST/hello.txt\"", want: map[string]string{"hello.txt": "hello\n"}},
		"empty content": {reason: "an empty content makes an empty file",
			cfg: `content = ""` + "\ndestination = \"DST/empty\"", want: map[string]string{"empty": ""}},
		"file source": {reason: "a relative source is read from the working directory",
			cfg: `source = "one.txt"` + "\ndestination = \"DST/copy.txt\"", want: map[string]string{"copy.txt": "one\n"}},
		"directory into an existing one": {reason: "without a trailing slash the directory itself is copied into destination",
			cfg: `source = "site"` + "\ndestination = \"DST\"", want: map[string]string{"site/index.html": "<p>hi</p>\n", "site/css/a.css": "a{}\n"}},
		"directory contents": {reason: "with a trailing slash only what the directory holds is copied",
			cfg: `source = "site/"` + "\ndestination = \"DST\"", want: map[string]string{"index.html": "<p>hi</p>\n", "css/a.css": "a{}\n"}},
		"host key checked": {reason: "host_key set: the server's key is accepted",
			cfg: `content = "k"` + "\ndestination = \"DST/k\"", conn: fmt.Sprintf("host_key = %q", srv.HostKey), want: map[string]string{"k": "k"}},
		"through a bastion": {reason: "bastion_host: the connection goes through the bastion (here the same sshd)",
			cfg:  `content = "b"` + "\ndestination = \"DST/b\"",
			conn: fmt.Sprintf("bastion_host = %q\nbastion_host_key = %q", srv.Host, srv.HostKey), want: map[string]string{"b": "b"}},
	} {
		t.Run(name, func(t *testing.T) {
			dst := t.TempDir()
			cfg := decodeAs(t, specOf(File), strings.ReplaceAll(tc.cfg, "DST", dst))
			conn := decodeAs(t, ConnectionSpec, connectionTo(srv, srv.PrivateKey, tc.conn))
			if inv := Validate(File, cfg); inv != nil {
				t.Fatal(inv)
			}
			if err := Run(context.Background(), Request{Type: File, Config: cfg, Connection: conn, Dir: local}); err != nil {
				t.Fatalf("%s\nRun: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, sshd.Tree(t, dst)); diff != "" {
				t.Errorf("%s\nfiles (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestFileOverSSHFailures: what fails, fails with terraform's words.
func TestFileOverSSHFailures(t *testing.T) {
	srv := sshd.Start(t)
	addr := fmt.Sprintf("%s@%s:%d", srv.User, srv.Host, srv.Port)
	for name, tc := range map[string]struct {
		cfg, conn, key string
		want           string // a regular expression
	}{
		"wrong key": {cfg: `content = "x"` + "\ndestination = \"/tmp/x\"", conn: `timeout = "2s"`, key: srv.WrongKey,
			want: `^file provisioner error: timeout - last error: SSH authentication failed \(` + regexp.QuoteMeta(addr) +
				`\): ssh: handshake failed: ssh: unable to authenticate, attempted methods \[none publickey\], no supported methods remain$`},
		"wrong host key": {cfg: `content = "x"` + "\ndestination = \"/tmp/x\"", conn: fmt.Sprintf("timeout = \"1s\"\nhost_key = %q", srv.WrongHostKey),
			key: srv.PrivateKey, want: `^file provisioner error: timeout - last error: SSH authentication failed .*: ssh: handshake failed: knownhosts: key mismatch$`},
		"missing destination directory": {cfg: `content = "x"` + "\ndestination = \"/nonexistent/dir/x\"", key: srv.PrivateKey,
			want: `^file provisioner error: Upload failed: scp: /nonexistent/dir: No such file or directory$`},
		"missing source": {cfg: `source = "nothere.txt"` + "\ndestination = \"/tmp/x\"", key: srv.PrivateKey,
			want: `^file provisioner error: stat nothere.txt: no such file or directory$`},
		"no connection": {cfg: `content = "x"` + "\ndestination = \"/tmp/x\"",
			want: `^file provisioner error: Missing connection configuration for provisioner.$`},
		"winrm": {cfg: `content = "x"` + "\ndestination = \"/tmp/x\"", conn: `type = "winrm"`, key: srv.PrivateKey,
			want: `^file provisioner error: cairn does not open WinRM connections`},
		"agent": {cfg: `content = "x"` + "\ndestination = \"/tmp/x\"", conn: `agent = true`, key: srv.PrivateKey,
			want: `^file provisioner error: cairn does not use an SSH agent`},
		"both source and content": {cfg: `content = "x"` + "\nsource = \"a\"\ndestination = \"/tmp/x\"", key: srv.PrivateKey,
			want: `^file provisioner error: Cannot set both 'source' and 'content'$`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := decodeAs(t, specOf(File), tc.cfg)
			conn := cty.NullVal(cty.DynamicPseudoType)
			if tc.key != "" {
				conn = decodeAs(t, ConnectionSpec, connectionTo(srv, tc.key, tc.conn))
			}
			err := Run(context.Background(), Request{Type: File, Config: cfg, Connection: conn, Dir: t.TempDir()})
			if err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Fatalf("error = %v\nwant /%s/", err, tc.want)
			}
		})
	}
}

// A cancelled upload stops its retries at once.
func TestFileOverSSHCancel(t *testing.T) {
	srv := sshd.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	err := Run(ctx, Request{Type: File, Config: decodeAs(t, specOf(File), `content = "x"`+"\ndestination = \"/tmp/x\""),
		Connection: decodeAs(t, ConnectionSpec, connectionTo(srv, srv.WrongKey, ""))})
	if err == nil || !strings.Contains(err.Error(), "interrupted - last error: SSH authentication failed") {
		t.Fatalf("error = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Run took %s after its context ended", d)
	}
}

// TestRemoteExecOverSSH runs inline lines and script files on a real sshd, in a terminal.
func TestRemoteExecOverSSH(t *testing.T) {
	srv := sshd.Start(t)
	local := t.TempDir()
	if err := os.WriteFile(filepath.Join(local, "s1.sh"), []byte("echo from script one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(local, "s2.sh"), []byte("#!/bin/sh\necho from script two >&2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	remote := t.TempDir()
	for name, tc := range map[string]struct {
		cfg  string
		want []string
		err  string
	}{
		"inline":  {cfg: `inline = ["echo one", "cd ` + remote + `", "echo two > out", "cat out"]`, want: []string{"one", "two"}},
		"scripts": {cfg: `scripts = ["s1.sh", "s2.sh"]`, want: []string{"from script one", "from script two"}},
		"failure": {cfg: `inline = ["echo before", "exit 3"]`, want: []string{"before"},
			err: `^remote-exec provisioner error: error executing "` + regexp.QuoteMeta(remote) + `/cairn_[0-9]+\.sh": Process exited with status 3$`},
		"missing script": {cfg: `script = "nothere.sh"`,
			err: `^remote-exec provisioner error: Failed to open script 'nothere.sh': open nothere.sh: no such file or directory$`},
	} {
		t.Run(name, func(t *testing.T) {
			var out collected
			conn := decodeAs(t, ConnectionSpec, connectionTo(srv, srv.PrivateKey, fmt.Sprintf("script_path = %q", remote+"/cairn_%RAND%.sh")))
			err := Run(context.Background(), Request{Type: RemoteExec, Config: decodeAs(t, specOf(RemoteExec), tc.cfg),
				Connection: conn, Dir: local, Output: out.add})
			if tc.err == "" && err != nil {
				t.Fatalf("Run: %v\noutput: %q", err, out.got)
			}
			if tc.err != "" && (err == nil || !regexp.MustCompile(tc.err).MatchString(err.Error())) {
				t.Fatalf("error = %v\nwant /%s/", err, tc.err)
			}
			if tc.want == nil {
				return
			}
			wantHead := []string{"Connecting to remote host via SSH...", "  Host: " + srv.Host, "  User: " + srv.User, "  Password: false",
				"  Private key: true", "  Certificate: false", "  SSH Agent: false", "  Checking Host Key: false", "  Target Platform: unix", "Connected!"}
			if diff := cmp.Diff(append(wantHead, tc.want...), out.got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
	// A script that succeeded is emptied, as terraform does (a failed one stays for a look).
	var scripts []string
	for name, text := range sshd.Tree(t, remote) {
		if strings.HasPrefix(name, "cairn_") {
			scripts = append(scripts, text)
		}
	}
	sort.Strings(scripts)
	if diff := cmp.Diff([]string{"", "", "", "#!/bin/sh\necho before\nexit 3\n"}, scripts); diff != "" {
		t.Errorf("scripts left on the machine (-want +got):\n%s", diff)
	}
}

func TestConnectionDefaults(t *testing.T) {
	c, err := parseConnection(decodeAs(t, ConnectionSpec, `host = "::1"`))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%s %s %s %s %s", c.user, c.addr(), c.timeout, c.scriptPath, c.targetPlatform)
	if want := "root [::1]:22 5m0s /tmp/terraform_%RAND%.sh unix"; got != want {
		t.Errorf("defaults = %q, want %q", got, want)
	}
	for src, want := range map[string]string{
		`host = ""`: "host for provisioner cannot be empty",
		"host = \"h\"\ntarget_platform = \"plan9\"":      "target_platform for provisioner has to be either unix or windows",
		"host = \"h\"\ntype = \"telnet\"":                "connection type 'telnet' not supported",
		"host = \"h\"\nproxy_host = \"p\"":               "cairn does not connect through an HTTP proxy",
		"host = \"h\"\nport = 70000":                     "invalid port",
		"host = \"h\"\nprivate_key = \"not a key\"":      "", // read when connecting
		"host = \"h\"\ntimeout = \"soon\"\nuser = \"u\"": "",
	} {
		_, err := parseConnection(decodeAs(t, ConnectionSpec, src))
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
	if _, err := clientConfig(endpoint{privateKey: "not a key"}); err == nil || strings.Contains(err.Error(), "not a key") {
		t.Errorf("a bad private key: %v (the error must not repeat the key)", err)
	}
	if got := quoteCommand([]string{"scp", "-vt", "/tmp/a dir/it's"}, targetPlatformUnix); got != `scp -vt '/tmp/a dir/it'\''s'` {
		t.Errorf("posix quoting: %s", got)
	}
	if got := quoteCommand([]string{"scp", "-vt", `C:\a dir\`}, targetPlatformWindows); got != `scp -vt "C:\a dir\\"` {
		t.Errorf("windows quoting: %s", got)
	}
}

// TestAnnounceBastion: a connection through a bastion prints the bastion's settings after the
// target's, as terraform does (the bastion takes the target's user and key it does not set).
func TestAnnounceBastion(t *testing.T) {
	conn, err := parseConnection(decodeAs(t, ConnectionSpec,
		"host = \"10.0.0.5\"\nuser = \"app\"\nprivate_key = \"k\"\nbastion_host = \"jump\"\nbastion_password = \"p\"\nbastion_host_key = \"ssh-ed25519 AAAA\""))
	if err != nil {
		t.Fatal(err)
	}
	var out collected
	announce(conn, out.add)
	want := []string{"Connecting to remote host via SSH...", "  Host: 10.0.0.5", "  User: app", "  Password: false",
		"  Private key: true", "  Certificate: false", "  SSH Agent: false", "  Checking Host Key: false", "  Target Platform: unix",
		"Using configured bastion host...", "  Host: jump", "  User: app", "  Password: true",
		"  Private key: true", "  Certificate: false", "  SSH Agent: false", "  Checking Host Key: true"}
	if diff := cmp.Diff(want, out.got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
