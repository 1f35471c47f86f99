package provisioner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"

	"golang.org/x/crypto/ssh"
)

// This file uploads files as terraform's SSH communicator does: it starts `scp -vt DIR` (a
// file) or `scp -rvt DEST` (a directory) on the remote machine and speaks the sink side of
// the scp protocol to it: "C0644 size name" then the bytes, "D0755 0 name" ... "E" around a
// directory, each record acknowledged by a status byte. The protocol is a page long; the Go
// scp libraries upload single files only, or need an SFTP server, which terraform does not.

// maxDirDepth bounds a directory upload (a symlink loop would otherwise never end).
const maxDirDepth = 64

// maxStderr is how much of the remote scp's diagnostics is kept.
const maxStderr = 8 * 1024

// uploadFile writes size bytes of src to dst on the remote machine, mode 0644.
func (c *sshClient) uploadFile(dst string, src io.Reader, size int64) error {
	dir, name := remoteSplit(dst)
	return c.scp(quoteCommand([]string{"scp", "-vt", dir}, c.conn.targetPlatform), func(w io.Writer, r *bufio.Reader) error {
		return scpFile(w, r, name, src, size)
	})
}

// uploadDir copies the local directory src to dst: the directory itself into dst, or with
// contentsOnly (a source ending in "/") what it holds, as terraform.
func (c *sshClient) uploadDir(dst, src string, contentsOnly bool) error {
	return c.scp(quoteCommand([]string{"scp", "-rvt", dst}, c.conn.targetPlatform), func(w io.Writer, r *bufio.Reader) error {
		if contentsOnly {
			return scpEntries(w, r, src, 0)
		}
		return scpDir(w, r, filepath.Base(src), src, 0)
	})
}

// scp runs a remote scp sink command and feeds it with send.
func (c *sshClient) scp(command string, send func(io.Writer, *bufio.Reader) error) error {
	session, err := c.NewSession()
	if err != nil {
		return err
	}
	defer session.Close()
	stdin, err := session.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := session.StdoutPipe()
	if err != nil {
		return err
	}
	session.Stderr = &ring{max: maxStderr}
	if err := session.Start(command); err != nil {
		return err
	}
	// io.EOF: the remote scp ended early; its exit status says why.
	if err := send(stdin, bufio.NewReader(stdout)); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	stdin.Close()
	err = session.Wait()
	var exit *ssh.ExitError
	if errors.As(err, &exit) && exit.ExitStatus() == 127 {
		return errors.New("SCP failed to start. This usually means that SCP is not\nproperly installed on the remote system.")
	}
	return err
}

// scpStatus reads the sink's reply to a record: 0, or 1 or 2 and a message.
func scpStatus(r *bufio.Reader) error {
	code, err := r.ReadByte()
	if err != nil {
		return err
	}
	if code == 0 {
		return nil
	}
	msg, _, err := r.ReadLine()
	if err != nil {
		return fmt.Errorf("Error reading error message: %s", err)
	}
	return errors.New(string(msg))
}

func scpFile(w io.Writer, r *bufio.Reader, name string, src io.Reader, size int64) error {
	if _, err := fmt.Fprintln(w, "C0644", size, name); err != nil {
		return err
	}
	if err := scpStatus(r); err != nil {
		return err
	}
	if n, err := io.CopyN(w, src, size); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s changed while it was uploaded: %d bytes read of %d", name, n, size)
		}
		return err
	}
	if _, err := io.WriteString(w, "\x00"); err != nil {
		return err
	}
	return scpStatus(r)
}

// scpDir sends the directory at path as name, and what it holds.
func scpDir(w io.Writer, r *bufio.Reader, name, local string, depth int) error {
	if depth >= maxDirDepth {
		return fmt.Errorf("%s: directories nest deeper than %d levels (a symlink loop?)", local, maxDirDepth)
	}
	if _, err := fmt.Fprintln(w, "D0755 0", name); err != nil {
		return err
	}
	if err := scpStatus(r); err != nil {
		return err
	}
	if err := scpEntries(w, r, local, depth+1); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "E"); err != nil {
		return err
	}
	return scpStatus(r)
}

// scpEntries sends what the directory at dir holds, in name order; a symlink is sent as what
// it points to, as terraform does.
func scpEntries(w io.Writer, r *bufio.Reader, dir string, depth int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		local := filepath.Join(dir, e.Name())
		fi, err := os.Stat(local)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if err := scpDir(w, r, e.Name(), local, depth); err != nil {
				return err
			}
			continue
		}
		if err := sendLocalFile(w, r, e.Name(), local); err != nil {
			return err
		}
	}
	return nil
}

func sendLocalFile(w io.Writer, r *bufio.Reader, name, local string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return scpFile(w, r, name, f, fi.Size())
}

// remoteSplit splits a remote file path into its directory and name as terraform does
// (filepath.Dir and Base on a unix machine), with forward slashes.
func remoteSplit(p string) (dir, name string) {
	p = filepath.ToSlash(p)
	return path.Dir(p), path.Base(p)
}
