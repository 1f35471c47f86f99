package pulumistate

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
)

// Crypter seals and opens values as Pulumi's passphrase secrets provider does (its state
// files and `secure:` config values): Pulumi's own symmetric crypter (AES-256-GCM, the key
// derived from the passphrase and an 8-byte salt by PBKDF2-SHA256 in 1,000,000 rounds; each
// value "v1:<nonce>:<sealed>").
type Crypter struct{ c config.Crypter }

// NewCrypter derives the key of passphrase and salt.
func NewCrypter(passphrase string, salt []byte) (*Crypter, error) {
	return &Crypter{c: config.NewSymmetricCrypterFromPassphrase(passphrase, salt)}, nil
}

// Seal seals plaintext with a fresh nonce.
func (c *Crypter) Seal(plaintext string) (string, error) {
	return c.c.EncryptValue(context.Background(), plaintext)
}

// errBadSealed says a sealed value is not one this key sealed (or not one at all); it never
// says more, so a wrong passphrase and a damaged value look alike.
var errBadSealed = errors.New("cannot open a sealed value: wrong passphrase or damaged value")

// Open opens a value Seal (or Pulumi) sealed.
func (c *Crypter) Open(sealed string) (string, error) {
	pt, err := c.c.DecryptValue(context.Background(), sealed)
	if err != nil {
		return "", errBadSealed
	}
	return pt, nil
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
		return nil, errors.New("incorrect passphrase: it is not the one the secrets were sealed with")
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
