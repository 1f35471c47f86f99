package pulumiyaml

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"

	"github.com/cairn-dev/cairn/internal/pulumistate"
)

// Pulumi's passphrase secrets provider, as `pulumi config set --secret` uses it with a file or
// local backend: the stack file's `encryptionsalt: v1:<salt>:<"pulumi" encrypted>` says which
// key (PBKDF2 of the passphrase and salt) encrypts its `secure: v1:<nonce>:<ciphertext>` values.
// The passphrase comes from PULUMI_CONFIG_PASSPHRASE or the file PULUMI_CONFIG_PASSPHRASE_FILE
// names, in the environment of the process that parses (the CLI's when cairn runs in-process,
// the server's otherwise): a request never carries it, since the server keeps requests.

// errNoPassphrase is the error for a secure value without a passphrase in the environment.
var errNoPassphrase = errors.New("set PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE to decrypt it")

// lookupEnv is os.LookupEnv; tests replace it.
var lookupEnv = os.LookupEnv

func passphrase() (string, error) {
	if p, ok := lookupEnv("PULUMI_CONFIG_PASSPHRASE"); ok {
		return p, nil
	}
	if file, ok := lookupEnv("PULUMI_CONFIG_PASSPHRASE_FILE"); ok && file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("cannot read PULUMI_CONFIG_PASSPHRASE_FILE: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return "", errNoPassphrase
}

// crypters caches the crypter of each salt and passphrase: deriving a key takes 1,000,000
// PBKDF2 rounds, which every parse would otherwise pay again.
var crypters sync.Map // [32]byte -> *pulumistate.Crypter

// decrypter is the crypter of the stack file's encryptionsalt with the passphrase, checked
// against the salt's sealed check value.
func decrypter(salt string) (*pulumistate.Crypter, error) {
	if salt == "" {
		return nil, errors.New("the stack file has secure values but no encryptionsalt (only Pulumi's passphrase secrets provider is supported)")
	}
	phrase, err := passphrase()
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256([]byte(salt + "\x00" + phrase))
	if c, ok := crypters.Load(key); ok {
		return c.(*pulumistate.Crypter), nil
	}
	c, err := pulumistate.ParseSalt(salt, phrase)
	if err != nil {
		return nil, fmt.Errorf("%w (PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE)", err)
	}
	crypters.Store(key, c)
	return c, nil
}

// decryptSecure decrypts one secure value; the error never holds the value.
func decryptSecure(c *pulumistate.Crypter, ciphertext string) (string, error) {
	plain, err := c.Open(ciphertext)
	if err != nil {
		return "", errors.New("cannot decrypt it with this passphrase (was it encrypted for another stack?)")
	}
	return plain, nil
}

type secureValues struct {
	salt string
	d    *pulumistate.Crypter
	err  error
}

func (s *secureValues) decrypt(n syntax.Node) (string, error) {
	text, ok := n.(*syntax.StringNode)
	if !ok {
		return "", errors.New("secure: must be a string")
	}
	if s.d == nil && s.err == nil {
		s.d, s.err = decrypter(s.salt)
	}
	if s.err != nil {
		return "", s.err
	}
	return decryptSecure(s.d, text.Value())
}
