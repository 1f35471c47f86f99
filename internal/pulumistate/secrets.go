package pulumistate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

// ErrNeedsKeys says a state holds secrets and nothing to seal or open them with.
var ErrNeedsKeys = errors.New("the state holds secrets: set PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE) " +
	"to seal them as Pulumi's passphrase secrets provider does, or write them in clear with --show-secrets")

// passphraseState is the passphrase provider's state: its salt, and "pulumi" sealed with the
// key, by which a passphrase is checked ("v1:<salt>:v1:<nonce>:<sealed>").
type passphraseState struct {
	Salt string `json:"salt"`
}

// passphraseCheck is what the provider seals in its state to check a passphrase with.
const passphraseCheck = "pulumi"

// sealer seals the secrets of one file. The key is derived once per file, when the first
// secret needs it (PBKDF2 in 1,000,000 rounds, as Pulumi does: about a second).
type sealer struct {
	passphrase string
	clear      bool
	crypter    *Crypter
	provider   *secretsProvider
}

func (s *sealer) seal(_ context.Context, plaintext string) (map[string]any, error) {
	if s.clear {
		return map[string]any{sig.Key: sig.Secret, "plaintext": plaintext}, nil
	}
	if s.passphrase == "" {
		return nil, ErrNeedsKeys
	}
	if s.crypter == nil {
		salt, c, err := NewSalt(s.passphrase)
		if err != nil {
			return nil, fmt.Errorf("cannot make a key: %w", err)
		}
		st, err := json.Marshal(passphraseState{Salt: salt})
		if err != nil {
			return nil, err
		}
		s.crypter, s.provider = c, &secretsProvider{Type: "passphrase", State: st}
	}
	ct, err := s.crypter.Seal(plaintext)
	if err != nil {
		return nil, fmt.Errorf("cannot seal a secret: %w", err)
	}
	return map[string]any{sig.Key: sig.Secret, "ciphertext": ct}, nil
}

// opener opens the secrets of one file read.
type opener struct {
	passphrase string
	provider   *secretsProvider
	crypter    *Crypter
}

func (o *opener) open(_ context.Context, env map[string]any) (string, error) {
	if p, ok := env["plaintext"].(string); ok {
		return p, nil
	}
	ct, ok := env["ciphertext"].(string)
	if !ok {
		return "", errors.New("a secret has neither ciphertext nor plaintext")
	}
	if o.crypter == nil {
		c, err := o.decrypter()
		if err != nil {
			return "", err
		}
		o.crypter = c
	}
	return o.crypter.Open(ct)
}

func (o *opener) decrypter() (*Crypter, error) {
	if o.provider == nil || o.provider.Type != "passphrase" {
		kind := "none"
		if o.provider != nil {
			kind = o.provider.Type
		}
		return nil, fmt.Errorf("the state's secrets are sealed by the %q secrets provider: cairn opens passphrase-sealed states only "+
			"(pulumi stack change-secrets-provider passphrase, then export again)", kind)
	}
	if o.passphrase == "" {
		return nil, ErrNeedsKeys
	}
	var st passphraseState
	if err := json.Unmarshal(o.provider.State, &st); err != nil {
		return nil, fmt.Errorf("cannot read the passphrase provider's state: %w", err)
	}
	return ParseSalt(st.Salt, o.passphrase)
}
