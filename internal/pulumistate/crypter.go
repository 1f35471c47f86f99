package pulumistate

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
)

// Crypter seals and opens values as Pulumi's passphrase secrets provider does (its state
// files and `secure:` config values): AES-256-GCM with a key derived from the passphrase and
// an 8-byte salt by PBKDF2-SHA256 in 1,000,000 rounds, each value "v1:<nonce>:<sealed>" in
// standard base64. (Pulumi's own implementation, sdk/go/common/resource/config, would bring
// some seventeen packages for these few lines of the standard library; the conformance
// checker, Pulumi's code, opens what this seals.)
type Crypter struct{ aead cipher.AEAD }

// passphraseRounds is Pulumi's PBKDF2 iteration count.
const passphraseRounds = 1_000_000

// NewCrypter derives the key of passphrase and salt.
func NewCrypter(passphrase string, salt []byte) (*Crypter, error) {
	key, err := pbkdf2.Key(sha256.New, passphrase, salt, passphraseRounds, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Crypter{aead: aead}, nil
}

// Seal seals plaintext with a fresh nonce.
func (c *Crypter) Seal(plaintext string) (string, error) {
	nonce := make([]byte, c.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := c.aead.Seal(nil, nonce, []byte(plaintext), nil)
	return "v1:" + base64.StdEncoding.EncodeToString(nonce) + ":" + base64.StdEncoding.EncodeToString(sealed), nil
}

// errBadSealed says a sealed value is not one this key sealed (or not one at all); it never
// says more, so a wrong passphrase and a damaged value look alike.
var errBadSealed = errors.New("cannot open a sealed value: wrong passphrase or damaged value")

// Open opens a value Seal (or Pulumi) sealed.
func (c *Crypter) Open(sealed string) (string, error) {
	parts := strings.Split(sealed, ":")
	if len(parts) != 3 || parts[0] != "v1" {
		return "", errBadSealed
	}
	nonce, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil || len(nonce) != c.aead.NonceSize() {
		return "", errBadSealed
	}
	ct, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil {
		return "", errBadSealed
	}
	pt, err := c.aead.Open(nil, nonce, ct, nil)
	if err != nil {
		return "", errBadSealed
	}
	return string(pt), nil
}

// ParseSalt reads a passphrase provider's salt state ("v1:<salt>:<sealed check>", as a stack's
// `encryptionsalt` or a deployment's secrets provider state holds it) and checks passphrase
// against it, returning the crypter.
func ParseSalt(state, passphrase string) (*Crypter, error) {
	parts := strings.SplitN(state, ":", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return nil, errors.New("cannot read the passphrase salt")
	}
	salt, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, errors.New("cannot read the passphrase salt")
	}
	c, err := NewCrypter(passphrase, salt)
	if err != nil {
		return nil, err
	}
	if got, err := c.Open(parts[2]); err != nil || got != passphraseCheck {
		return nil, errors.New("the passphrase is not the one the secrets were sealed with")
	}
	return c, nil
}

// NewSalt makes a fresh salt state for passphrase and its crypter.
func NewSalt(passphrase string) (string, *Crypter, error) {
	salt := make([]byte, 8)
	if _, err := rand.Read(salt); err != nil {
		return "", nil, err
	}
	c, err := NewCrypter(passphrase, salt)
	if err != nil {
		return "", nil, err
	}
	check, err := c.Seal(passphraseCheck)
	if err != nil {
		return "", nil, err
	}
	return "v1:" + base64.StdEncoding.EncodeToString(salt) + ":" + check, c, nil
}
