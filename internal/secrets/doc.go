// Package secrets encrypts values at rest: a Keyring of AES-256-GCM keys seals a value bound
// to associated data (where it is stored), and opens it again with whichever of its keys
// sealed it. The first key of a ring seals; the others only open, so a key can be rotated
// while values sealed with the previous one are re-sealed.
//
// A sealed blob is recognisable: it starts with a header of 18 bytes, a magic byte (0xCA), a
// format version (1), the sealing key's id (4 bytes, big-endian) and the 12-byte random nonce,
// followed by the ciphertext and its 16-byte tag.
//
// Open refuses a blob without that header (ErrNotSealed) rather than passing it through as
// plaintext: a pass-through would let anyone able to write the database substitute a value
// of their choice, which is what binding blobs to their row is meant to prevent. Stores
// therefore seal an older database's plaintext once, when they open it, and never read
// plaintext afterwards.
//
// Keys live outside the database: in a key file (LoadOrCreateFile, WriteFile) or in the
// environment (Parse). Random 96-bit nonces keep a key safe for 2^32 seals; rotate long
// before that.
//
// It imports only the standard library.
package secrets
