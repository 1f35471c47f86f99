// Package sqlite is the embedded state backend: one SQLite file (modernc.org/sqlite, no cgo)
// in WAL mode with synchronous=NORMAL, which survives a killed process. State is rows, never a
// document: one row per resource, one per journal entry, one per event, so persisting a
// resource step costs the same at 10 resources or 100,000.
//
// Writes go through a single connection and take the write lock when they begin (BEGIN
// IMMEDIATE), so they never contend inside a process and never fail with SQLITE_BUSY on
// upgrade; reads use a pool of query-only connections. The statements every resource step runs
// are prepared once at Open. Store passes statetest.Run.
//
// Every column that may hold a user's secret values is sealed with a secrets.Keyring before it
// is written and opened after it is read (seal.go lists them), each blob bound to its row, so
// neither the file nor its WAL holds those values in clear; secure_delete zeroes freed space.
// The package imports only state and secrets.
package sqlite
