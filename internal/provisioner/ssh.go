package provisioner

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// This file opens the SSH connection of the file and remote-exec provisioners as terraform's
// SSH communicator does: the same authentication (private key, certificate, password with
// keyboard-interactive), host keys ignored unless host_key is set, an optional bastion, and
// retries with backoff until the connection's timeout.

// Retry backoff between connection attempts, terraform's.
var (
	initialBackoff = time.Second
	maxBackoff     = 20 * time.Second
)

// dialTimeout bounds one TCP connection attempt, as terraform's.
const dialTimeout = 15 * time.Second

// Keepalives: a request every interval, and a connection with no reply for maxSilence is
// dropped, so a dead peer does not hang a provisioner until its context ends.
const (
	keepAliveInterval = 2 * time.Second
	maxSilence        = 2 * time.Minute
)

// sshClient is an open connection: the client and what closes it (and its bastion).
type sshClient struct {
	*ssh.Client
	conn *connection
	stop func() bool // stops closing the client when the context ends
	done chan struct{}
	once sync.Once
}

// Close ends the connection.
func (c *sshClient) Close() error {
	c.stop()
	c.once.Do(func() { close(c.done) })
	return c.Client.Close()
}

// connectSSH connects to c, retrying for c.timeout as terraform does; the connection closes
// when ctx ends. announce, when not nil, is called before each attempt (remote-exec prints
// the connection's settings there).
func connectSSH(ctx context.Context, c *connection, announce func()) (*sshClient, error) {
	target, err := clientConfig(c.endpoint)
	if err != nil {
		return nil, err
	}
	var via *ssh.ClientConfig
	if c.bastion != nil {
		if via, err = clientConfig(*c.bastion); err != nil {
			return nil, err
		}
	}
	retryCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var last error
	delay := time.Duration(0)
	for {
		select {
		case <-retryCtx.Done():
			return nil, retryEnded(retryCtx, last)
		case <-time.After(delay):
		}
		if announce != nil {
			announce()
		}
		client, err := dialSSH(retryCtx, c, target, via)
		if err == nil {
			return keepAlive(ctx, c, client), nil
		}
		last = err
		if delay *= 2; delay == 0 {
			delay = initialBackoff
		}
		delay = min(delay, maxBackoff)
	}
}

// retryEnded words the end of the retries as terraform's communicator.Retry.
func retryEnded(ctx context.Context, last error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timeout - last error: %v", last)
	}
	return fmt.Errorf("interrupted - last error: %v", last)
}

// dialSSH makes one attempt: TCP (through the bastion when there is one), then the SSH
// handshake; ctx ending aborts it.
func dialSSH(ctx context.Context, c *connection, target, via *ssh.ClientConfig) (*ssh.Client, error) {
	var (
		conn    net.Conn
		bastion *ssh.Client
		err     error
	)
	if c.bastion != nil {
		bastion, err = handshake(ctx, c.bastion.addr(), via)
		if err != nil {
			return nil, fmt.Errorf("Error connecting to bastion: %s", err)
		}
		stop := context.AfterFunc(ctx, func() { bastion.Close() })
		conn, err = bastion.Dial("tcp", c.addr())
		if !stop() || err != nil { // ctx ended during the dial, or the dial failed
			bastion.Close()
			if err == nil {
				err = ctx.Err()
			}
			return nil, err
		}
	} else {
		d := net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
		if conn, err = d.DialContext(ctx, "tcp", c.addr()); err != nil {
			return nil, err
		}
	}
	client, err := clientOver(ctx, conn, c.addr(), target)
	if err != nil {
		if bastion != nil {
			bastion.Close()
		}
		return nil, fmt.Errorf("SSH authentication failed (%s@%s): %w", c.user, c.addr(), err)
	}
	if bastion != nil {
		// The bastion's client closes with the target's.
		go func() { _ = client.Wait(); bastion.Close() }()
	}
	return client, nil
}

// handshake dials addr and logs in with cfg.
func handshake(ctx context.Context, addr string, cfg *ssh.ClientConfig) (*ssh.Client, error) {
	d := net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return clientOver(ctx, conn, addr, cfg)
}

// clientOver runs the SSH handshake over conn; ctx ending closes conn, which ends it.
func clientOver(ctx context.Context, conn net.Conn, addr string, cfg *ssh.ClientConfig) (*ssh.Client, error) {
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	stop()
	if err != nil {
		conn.Close()
		return nil, err
	}
	return ssh.NewClient(sc, chans, reqs), nil
}

// keepAlive watches an open client: ctx ending closes it, and so does a peer that stops
// answering keepalives.
func keepAlive(ctx context.Context, c *connection, client *ssh.Client) *sshClient {
	sc := &sshClient{Client: client, conn: c, done: make(chan struct{})}
	sc.stop = context.AfterFunc(ctx, func() { client.Close() })
	replies := make(chan error, 1)
	go func() {
		t := time.NewTicker(keepAliveInterval)
		defer t.Stop()
		for {
			select {
			case <-sc.done:
				return
			case <-t.C:
				_, _, err := client.SendRequest("keepalive@openssh.com", true, nil)
				select {
				case replies <- err:
				default:
				}
				if err != nil {
					return
				}
			}
		}
	}()
	go func() {
		silence := time.NewTimer(maxSilence)
		defer silence.Stop()
		for {
			select {
			case <-sc.done:
				return
			case err := <-replies:
				if err != nil {
					client.Close()
					return
				}
				silence.Reset(maxSilence)
			case <-silence.C:
				client.Close()
				return
			}
		}
	}()
	return sc
}

// clientConfig is the SSH client configuration of one endpoint, terraform's
// buildSSHClientConfig: host keys are not checked unless host_key is set (then it is the
// host's key or its certificate authority), the private key (or its certificate) comes
// first, then the password, also offered to keyboard-interactive prompts.
func clientConfig(e endpoint) (*ssh.ClientConfig, error) {
	cfg := &ssh.ClientConfig{User: e.user, HostKeyCallback: ssh.InsecureIgnoreHostKey()} //nolint:gosec // terraform's documented default: host_key opts in
	if e.hostKey != "" {
		cb, err := hostKeyCallback(e.addr(), e.hostKey)
		if err != nil {
			return nil, err
		}
		cfg.HostKeyCallback = cb
	}
	if e.privateKey != "" {
		signer, err := privateKeySigner(e.privateKey)
		if err != nil {
			return nil, err
		}
		if e.certificate != "" {
			pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(e.certificate))
			if err != nil {
				return nil, fmt.Errorf("failed to parse certificate: %s", err)
			}
			cert, ok := pub.(*ssh.Certificate)
			if !ok {
				return nil, errors.New("failed to parse certificate: not an SSH certificate")
			}
			if signer, err = ssh.NewCertSigner(cert, signer); err != nil {
				return nil, fmt.Errorf("failed to create cert signer: %s", err)
			}
		}
		cfg.Auth = append(cfg.Auth, ssh.PublicKeys(signer))
	}
	if e.password != "" {
		pw := e.password
		cfg.Auth = append(cfg.Auth, ssh.Password(pw), ssh.KeyboardInteractive(
			func(_, _ string, questions []string, _ []bool) ([]string, error) {
				answers := make([]string, len(questions))
				for i := range answers {
					answers[i] = pw
				}
				return answers, nil
			}))
	}
	return cfg, nil
}

// privateKeySigner parses a private key; its errors never repeat the key.
func privateKeySigner(pk string) (ssh.Signer, error) {
	block, _ := pem.Decode([]byte(pk))
	if block == nil {
		return nil, errors.New("Failed to read ssh private key: no key found")
	}
	if block.Headers["Proc-Type"] == "4,ENCRYPTED" {
		return nil, errors.New("Failed to read ssh private key: password protected keys are\nnot supported. Please decrypt the key prior to use.")
	}
	signer, err := ssh.ParsePrivateKey([]byte(pk))
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, errors.New("Failed to read ssh private key: password protected keys are\nnot supported. Please decrypt the key prior to use.")
		}
		return nil, fmt.Errorf("Failed to parse ssh private key: %s", err)
	}
	return signer, nil
}

// hostKeyCallback accepts the host key given in host_key, or a host certificate it signed,
// as terraform does: an "@cert-authority" known_hosts line for the address (knownhosts
// matches a plain key against such a line too). knownhosts reads only files.
func hostKeyCallback(addr, hostKey string) (ssh.HostKeyCallback, error) {
	f, err := os.CreateTemp("", "cairn-known_hosts")
	if err != nil {
		return nil, fmt.Errorf("failed to create temp known_hosts file: %s", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	line := fmt.Sprintf("@cert-authority %s %s\n", knownhosts.Normalize(addr), strings.TrimSpace(hostKey))
	if _, err := f.WriteString(line); err != nil {
		return nil, fmt.Errorf("failed to write temp known_hosts file: %s", err)
	}
	return knownhosts.New(f.Name())
}

// startError is a command that did not start (no session, no terminal).
type startError struct{ error }

// run runs command in a new session of c and waits for it; with pty the command gets a
// terminal (which merges stderr into stdout), as terraform's Start.
func (c *sshClient) run(command string, stdin io.Reader, stdout, stderr io.Writer, pty bool) error {
	session, err := c.NewSession()
	if err != nil {
		return &startError{err}
	}
	defer session.Close()
	session.Stdin, session.Stdout, session.Stderr = stdin, stdout, stderr
	if pty {
		modes := ssh.TerminalModes{ssh.ECHO: 0, ssh.TTY_OP_ISPEED: 14400, ssh.TTY_OP_OSPEED: 14400}
		if err := session.RequestPty("xterm", 80, 40, modes); err != nil {
			return &startError{err}
		}
	}
	if err := session.Start(strings.TrimSpace(command) + "\n"); err != nil {
		return &startError{err}
	}
	return session.Wait()
}

// quoteCommand quotes args for the target's shell (POSIX sh, or a Windows command line).
func quoteCommand(args []string, platform string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if platform == targetPlatformWindows {
			quoted[i] = windowsArg(a)
		} else {
			quoted[i] = posixArg(a)
		}
	}
	return strings.Join(quoted, " ")
}

func posixArg(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// windowsArg quotes one argument as CommandLineToArgvW reads it back: backslashes are
// literal except before a quote, where they are doubled.
func windowsArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\"") {
		return a
	}
	var b bytes.Buffer
	b.WriteByte('"')
	slashes := 0
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(a[i])
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return b.String()
}

func joinHostPort(host string, port uint16) string {
	return net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(int(port)))
}
