package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

const (
	magic     = 0xCA
	version   = 1
	idLen     = 4
	nonceLen  = 12
	prefixLen = 2 + idLen // magic, version, key id: authenticated with the associated data
	headerLen = prefixLen + nonceLen
	tagLen    = 16
)

// ErrNotSealed is returned by Open for a blob that does not start with a sealed header.
var ErrNotSealed = errors.New("not a sealed value")

// ErrAuth is returned by Open when a blob fails authentication: it was altered, it belongs to
// another row (other associated data), or another key with the same id sealed it.
var ErrAuth = errors.New("sealed value failed authentication (altered, moved from another row, or sealed with another key)")

// UnknownKeyError is returned by Open for a blob sealed with a key the ring does not hold.
type UnknownKeyError struct {
	ID   uint32   // the key that sealed the blob
	Have []uint32 // the ring's keys
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("value sealed with key %08x, which is not among the keys given (%s)", e.ID, idList(e.Have))
}

// Key is a 32-byte secret key. Its id is derived from it, so the same key has the same id in
// a key file and in the environment.
type Key [KeySize]byte

// NewKey returns a random key.
func NewKey() Key {
	var k Key
	_, _ = rand.Read(k[:]) // never fails: crypto/rand.Read crashes the program rather than return an error
	return k
}

// ID identifies the key in the header of the blobs it seals.
func (k Key) ID() uint32 {
	h := sha256.Sum256(append([]byte("cairn secrets key id\x00"), k[:]...))
	return binary.BigEndian.Uint32(h[:idLen])
}

// String names the key by its id, so that printing a Key never prints the secret.
func (k Key) String() string { return fmt.Sprintf("key %08x", k.ID()) }

// GoString is String, for %#v.
func (k Key) GoString() string { return k.String() }

// Keyring seals with its first key and opens with any of its keys. It is safe for concurrent
// use.
type Keyring struct {
	keys  []Key
	aeads []cipher.AEAD
}

// New returns a ring of keys, the first of which seals. It needs at least one key, and no two
// with the same id.
func New(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("cannot make a key ring without a key")
	}
	r := &Keyring{keys: append([]Key(nil), keys...)}
	seen := map[uint32]bool{}
	for _, k := range keys {
		if seen[k.ID()] {
			return nil, fmt.Errorf("cannot make a key ring: key %08x is given twice", k.ID())
		}
		seen[k.ID()] = true
		block, err := aes.NewCipher(k[:])
		if err != nil {
			return nil, fmt.Errorf("cannot make a key ring: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("cannot make a key ring: %w", err)
		}
		r.aeads = append(r.aeads, aead)
	}
	return r, nil
}

// Generate returns a ring of one new random key, held only in memory: for tests and state
// that is thrown away.
func Generate() *Keyring {
	r, err := New(NewKey())
	if err != nil {
		panic(err) // cannot happen: one valid key
	}
	return r
}

// Keys returns the ring's keys, the sealing one first.
func (r *Keyring) Keys() []Key { return append([]Key(nil), r.keys...) }

// IDs returns the ids of the ring's keys, the sealing one first.
func (r *Keyring) IDs() []uint32 {
	ids := make([]uint32, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.ID()
	}
	return ids
}

// PrimaryID is the id of the key that seals.
func (r *Keyring) PrimaryID() uint32 { return r.keys[0].ID() }

// Rotate returns a ring that seals with a new random key and still opens with r's keys.
func (r *Keyring) Rotate() *Keyring {
	next, err := New(append([]Key{NewKey()}, r.keys...)...)
	if err != nil {
		panic(err) // cannot happen but for a 32-bit id collision with a key of r
	}
	return next
}

// PrimaryOnly returns a ring of r's sealing key alone.
func (r *Keyring) PrimaryOnly() *Keyring {
	return &Keyring{keys: r.keys[:1:1], aeads: r.aeads[:1:1]}
}

// Seal encrypts plaintext with the ring's first key, bound to ad: Open needs the same ad.
// ad says where the value is stored (table, column, row), so that a blob copied to another
// row does not open there.
func (r *Keyring) Seal(plaintext, ad []byte) []byte {
	out := make([]byte, headerLen, headerLen+len(plaintext)+tagLen)
	out[0], out[1] = magic, version
	binary.BigEndian.PutUint32(out[2:prefixLen], r.keys[0].ID())
	_, _ = rand.Read(out[prefixLen:headerLen]) // never fails, as in NewKey
	return r.aeads[0].Seal(out, out[prefixLen:headerLen], plaintext, withPrefix(out, ad))
}

// Open decrypts a blob that Seal made with any key of the ring and the same ad. It returns a
// non-nil slice, empty for an empty plaintext. A blob without the sealed header is
// ErrNotSealed, one of a key the ring lacks *UnknownKeyError, and one that does not
// authenticate ErrAuth.
func (r *Keyring) Open(blob, ad []byte) ([]byte, error) {
	id, ok := KeyID(blob)
	if !ok {
		return nil, ErrNotSealed
	}
	for i, k := range r.keys {
		if k.ID() != id {
			continue
		}
		out, err := r.aeads[i].Open(nil, blob[prefixLen:headerLen], blob[headerLen:], withPrefix(blob, ad))
		if err != nil {
			return nil, ErrAuth
		}
		if out == nil {
			out = []byte{}
		}
		return out, nil
	}
	return nil, &UnknownKeyError{ID: id, Have: r.IDs()}
}

// KeyID returns the id of the key that sealed blob, and false when blob is not sealed.
func KeyID(blob []byte) (uint32, bool) {
	if len(blob) < headerLen+tagLen || blob[0] != magic || blob[1] != version {
		return 0, false
	}
	return binary.BigEndian.Uint32(blob[2:prefixLen]), true
}

// IsSealed reports whether blob starts with a sealed header (it may still fail to open).
func IsSealed(blob []byte) bool {
	_, ok := KeyID(blob)
	return ok
}

// withPrefix is the associated data GCM authenticates: the blob's magic, version and key id,
// then ad.
func withPrefix(blob, ad []byte) []byte {
	return append(append(make([]byte, 0, prefixLen+len(ad)), blob[:prefixLen]...), ad...)
}

func idList(ids []uint32) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%08x", id)
	}
	return s
}
