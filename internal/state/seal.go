package state

import "encoding/binary"

// SealedTable lists a table's columns that may hold a user's secret values (NoEcho
// parameters and response data, sensitive Terraform values, provider configuration and
// private state, keys, functions' environments) and the key columns that bind their sealed
// blobs to the row. Every backend seals them before writing and opens them after reading, bound
// by SealAD, so that neither its files nor its logs hold them in clear and a blob copied from
// one backend's row to the other's (cairn migrate) opens there. A migration that changes a key
// column's values must re-seal the row's blobs.
type SealedTable struct {
	Table string
	Key   []string // TEXT columns naming the row, in the order SealAD takes them
	Cols  []string
}

// SealedTables are the sealed columns of every backend.
var SealedTables = []SealedTable{
	{"stacks", []string{"name"}, []string{"parameters", "outputs", "template", "providers"}},
	{"resources", []string{"stack", "name"}, []string{"props", "outputs", "private"}},
	// Bound to what names the entry rather than to seq, which is assigned only after the blob
	// is sealed.
	{"journal", []string{"operation", "stack", "step", "phase", "token"}, []string{"detail"}},
	{"operations", []string{"id"}, []string{"request"}},
	{"custom_requests", []string{"id"}, []string{"body", "response"}},
	{"keys", []string{"name"}, []string{"value"}},
	// A function's environment variables (the API shows their names only).
	{"functions", []string{"name"}, []string{"env"}},
	// Not sealed: the functions' other columns (the API shows them all), the registry, events
	// (their text is what the API shows, with secrets masked) and accounts (tokens are hashes).
}

// SecretsCheckKey names a keys row holding SecretsCheckValue sealed with the key ring: its
// presence says every sealed column has been sealed; opening it proves, when a backend opens,
// that the ring is the database's.
const SecretsCheckKey = "secrets-check"

// SecretsCheckValue is the plaintext of the SecretsCheckKey row.
var SecretsCheckValue = []byte("cairn sealed state")

// SealAD is the associated data of a sealed blob of table.col in the row named by key.
func SealAD(table, col string, key ...string) []byte {
	b := make([]byte, 0, 64)
	for _, p := range append([]string{table, col}, key...) {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}
