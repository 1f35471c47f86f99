package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestSealOpen(t *testing.T) {
	k1, k2 := NewKey(), NewKey()
	ring := must(New(k1))
	other := must(New(k2))
	rotated := must(New(k2, k1)) // k2 seals, k1 still opens
	ad := []byte("stacks\x00parameters\x00demo")
	secret := []byte(`{"Password":"hunter2"}`)
	sealed := ring.Seal(secret, ad)

	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 1
		return b
	}
	cases := map[string]struct {
		reason string
		ring   *Keyring
		blob   []byte
		ad     []byte
		want   []byte
		err    error // matched with errors.Is, or by type for *UnknownKeyError
	}{
		"RoundTrip":     {reason: "A blob opens with its key and associated data.", ring: ring, blob: sealed, ad: ad, want: secret},
		"OlderKey":      {reason: "A ring opens with every key, not only the sealing one.", ring: rotated, blob: sealed, ad: ad, want: secret},
		"Empty":         {reason: "An empty value stays a non-nil empty value.", ring: ring, blob: ring.Seal(nil, ad), ad: ad, want: []byte{}},
		"WrongKey":      {reason: "Another key with an unknown id is named.", ring: other, blob: sealed, ad: ad, err: &UnknownKeyError{}},
		"TamperedBody":  {reason: "A changed ciphertext byte fails authentication.", ring: ring, blob: flip(len(sealed) - 20), ad: ad, err: ErrAuth},
		"TamperedTag":   {reason: "A changed tag byte fails authentication.", ring: ring, blob: flip(len(sealed) - 1), ad: ad, err: ErrAuth},
		"TamperedNonce": {reason: "A changed nonce fails authentication.", ring: ring, blob: flip(prefixLen), ad: ad, err: ErrAuth},
		"SwappedAD": {reason: "A blob moved to another row does not open there.", ring: ring, blob: sealed,
			ad: []byte("stacks\x00parameters\x00other"), err: ErrAuth},
		"UnknownKeyID": {reason: "A key id the ring lacks is reported as such, not as tampering.", ring: ring, blob: flip(2),
			ad: ad, err: &UnknownKeyError{}},
		"Plaintext": {reason: "Plaintext is refused, never passed through: it could be anything an attacker wrote.",
			ring: ring, blob: secret, ad: ad, err: ErrNotSealed},
		"OtherVersion": {reason: "An unknown format version is not taken for this one.", ring: ring, blob: flip(1), ad: ad, err: ErrNotSealed},
		"Truncated":    {reason: "A blob shorter than header and tag is not sealed.", ring: ring, blob: sealed[:headerLen+tagLen-1], ad: ad, err: ErrNotSealed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.ring.Open(tc.blob, tc.ad)
			if tc.err == nil {
				if err != nil || !bytes.Equal(got, tc.want) || got == nil {
					t.Errorf("%s\nOpen = %q, %v; want %q", tc.reason, got, err, tc.want)
				}
				return
			}
			var unknown *UnknownKeyError
			if _, wantUnknown := tc.err.(*UnknownKeyError); wantUnknown && !errors.As(err, &unknown) ||
				!wantUnknown && !errors.Is(err, tc.err) {
				t.Errorf("%s\nOpen = %q, %v; want error %v", tc.reason, got, err, tc.err)
			}
		})
	}
}

func TestSealedBlobs(t *testing.T) {
	ring := Generate()
	a, b := ring.Seal([]byte("same"), nil), ring.Seal([]byte("same"), nil)
	if bytes.Equal(a, b) {
		t.Errorf("two seals of one value are equal: nonces must be random")
	}
	if id, ok := KeyID(a); !ok || id != ring.PrimaryID() {
		t.Errorf("KeyID = %08x, %v; want the sealing key %08x", id, ok, ring.PrimaryID())
	}
	if !IsSealed(a) || IsSealed([]byte(`{"a":1}`)) || IsSealed(nil) {
		t.Errorf("IsSealed does not tell sealed from plain")
	}
	if got := len(a) - len("same"); got != headerLen+tagLen {
		t.Errorf("overhead = %d bytes, want %d", got, headerLen+tagLen)
	}
	if bytes.Contains(a, []byte("same")) {
		t.Errorf("the plaintext is visible in %x", a)
	}
}

func TestRotate(t *testing.T) {
	ring := Generate()
	old := ring.Seal([]byte("v"), nil)
	next := ring.Rotate()
	if next.PrimaryID() == ring.PrimaryID() || len(next.Keys()) != 2 || next.IDs()[1] != ring.PrimaryID() {
		t.Fatalf("Rotate: ids %x, want a new key before %08x", next.IDs(), ring.PrimaryID())
	}
	if got, err := next.Open(old, nil); err != nil || string(got) != "v" {
		t.Errorf("the rotated ring cannot open a blob of the old key: %q, %v", got, err)
	}
	if id, _ := KeyID(next.Seal([]byte("v"), nil)); id != next.PrimaryID() {
		t.Errorf("the rotated ring seals with %08x, want its new key %08x", id, next.PrimaryID())
	}
	only := next.PrimaryOnly()
	if _, err := only.Open(old, nil); err == nil {
		t.Errorf("PrimaryOnly still opens a blob of the dropped key")
	}
}

func TestNewRefusesDuplicates(t *testing.T) {
	k := NewKey()
	if _, err := New(k, k); err == nil {
		t.Errorf("New(k, k): no error")
	}
	if _, err := New(); err == nil {
		t.Errorf("New(): no error")
	}
}

func TestKeyNeverPrintsItsSecret(t *testing.T) {
	k := NewKey()
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if got, want := fmt.Sprintf(verb, k), fmt.Sprintf("key %08x", k.ID()); got != want {
			t.Errorf("Sprintf(%q, key) = %q, want %q", verb, got, want)
		}
	}
}

func must(r *Keyring, err error) *Keyring {
	if err != nil {
		panic(err)
	}
	return r
}
