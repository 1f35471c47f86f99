package pulumiyaml

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
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

// crypters caches the decrypters already derived (a million PBKDF2 rounds each), by a digest
// of salt and passphrase: a stack is parsed several times per command.
var crypters sync.Map // [32]byte -> config.Crypter

// decrypter returns the decrypter of a stack file's encryptionsalt.
func decrypter(salt string) (config.Decrypter, error) {
	if salt == "" {
		return nil, errors.New("the stack file has secure values but no encryptionsalt (only Pulumi's passphrase secrets provider is supported)")
	}
	phrase, err := passphrase()
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256([]byte(salt + "\x00" + phrase))
	if c, ok := crypters.Load(key); ok {
		return c.(config.Crypter), nil
	}
	parts := strings.SplitN(salt, ":", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return nil, errors.New("encryptionsalt is not of the form v1:<salt>:<check>")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, errors.New("encryptionsalt's salt is not base64")
	}
	c := config.NewSymmetricCrypterFromPassphrase(phrase, raw)
	if check, err := c.DecryptValue(context.Background(), parts[2]); err != nil || check != "pulumi" {
		return nil, errors.New("incorrect passphrase (PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE)")
	}
	crypters.Store(key, c)
	return c, nil
}

// decryptSecure decrypts one secure value; the error never holds the value.
func decryptSecure(d config.Decrypter, ciphertext string) (string, error) {
	plain, err := d.DecryptValue(context.Background(), ciphertext)
	if err != nil {
		return "", errors.New("cannot decrypt it with this passphrase (was it encrypted for another stack?)")
	}
	return plain, nil
}

// secureValues decrypts the secure values of one stack file, deriving its key on first use.
type secureValues struct {
	salt string
	d    config.Decrypter
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
