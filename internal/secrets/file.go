package secrets

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// fileHeader starts every key file WriteFile writes.
const fileHeader = `# cairn secrets key file: one "ID KEY" line per key (KEY is base64 of 32 bytes). The first
# key seals; every key opens. state.db's secrets cannot be read without this file: back it up
# with state.db, but keep the copies apart. Rotate with: cairn secrets rotate-key
`

// Parse reads keys given as text, as in CAIRN_SECRETS_KEY: base64 of 32 bytes, several
// separated by commas, the first of which seals.
func Parse(s string) (*Keyring, error) {
	var keys []Key
	for i, part := range strings.Split(s, ",") {
		k, err := parseKey(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("cannot read key %d: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	return New(keys...)
}

func parseKey(s string) (Key, error) {
	var k Key
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return k, errors.New("not base64")
	}
	if len(b) != KeySize {
		return k, fmt.Errorf("%d bytes, want %d", len(b), KeySize)
	}
	copy(k[:], b)
	return k, nil
}

// Format is the text of a key file holding r's keys.
func Format(r *Keyring) []byte {
	var b bytes.Buffer
	b.WriteString(fileHeader)
	for _, k := range r.keys {
		fmt.Fprintf(&b, "%08x %s\n", k.ID(), base64.StdEncoding.EncodeToString(k[:]))
	}
	return b.Bytes()
}

// LoadFile reads the key file at path. Like ssh with a private key, it refuses a file that
// its group or others may read or write.
func LoadFile(path string) (*Keyring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read secrets key file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read secrets key file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("secrets key file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("secrets key file %s is accessible by others (permissions %04o are too open): "+
			"it must be readable by its owner only (chmod 600 %s)", path, perm, path)
	}
	var keys []Key
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, key, ok := strings.Cut(line, " ")
		k, err := parseKey(strings.TrimSpace(key))
		if !ok || err != nil {
			return nil, fmt.Errorf("secrets key file %s:%d: want \"ID KEY\", KEY base64 of %d bytes", path, n, KeySize)
		}
		if want := fmt.Sprintf("%08x", k.ID()); id != want {
			return nil, fmt.Errorf("secrets key file %s:%d: id %s does not match its key (%s): the file is damaged", path, n, id, want)
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read secrets key file: %w", err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("secrets key file %s holds no key", path)
	}
	r, err := New(keys...)
	if err != nil {
		return nil, fmt.Errorf("secrets key file %s: %w", path, err)
	}
	return r, nil
}

// LoadOrCreateFile reads the key file at path, or creates it (mode 0600, in a directory
// created with mode 0700) with one new key when there is none. Of processes racing to create
// it, one wins and the others read its key. created reports whether this call made it.
func LoadOrCreateFile(path string) (r *Keyring, created bool, err error) {
	r, err = LoadFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return r, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("cannot create secrets key file: %w", err)
	}
	fresh := Generate()
	tmp, err := writeTemp(path, Format(fresh))
	if err != nil {
		return nil, false, err
	}
	defer os.Remove(tmp)
	// A hard link creates path only if absent, with its content already complete.
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		r, err := LoadFile(path)
		return r, false, err
	} else if err != nil {
		return nil, false, fmt.Errorf("cannot create secrets key file: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, false, err
	}
	return fresh, true, nil
}

// WriteFile replaces the key file at path with r's keys, atomically (a crash leaves the old
// file or the new one, never a mix) and with mode 0600.
func WriteFile(path string, r *Keyring) error {
	tmp, err := writeTemp(path, Format(r))
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("cannot write secrets key file: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// writeTemp writes data, synced, to a new file of mode 0600 beside path and returns its name.
func writeTemp(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return "", fmt.Errorf("cannot write secrets key file: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600) // CreateTemp's mode already, whatever the umask; said for clarity
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("cannot write secrets key file: %w", err)
	}
	return f.Name(), nil
}

// syncDir makes a rename or link in dir durable.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be opened for syncing there
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("cannot sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("cannot sync %s: %w", dir, err)
	}
	return nil
}
