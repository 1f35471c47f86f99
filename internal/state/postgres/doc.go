// Package postgres is the shared state backend: one PostgreSQL database (pgx, pgxpool) that
// several cairn replicas use at once. It keeps the rows, the columns and the sealing of the
// embedded backend (internal/state/sqlite) so that rows can be copied between the two, and
// passes the same conformance suites (statetest.Run, RunRegistry, RunAccounts).
//
// What SQLite gets from its single writer, PostgreSQL gets from the database itself: a partial
// unique index keeps one running operation per stack, operation rows are locked (FOR UPDATE,
// FOR SHARE) while leases change and fenced journal entries are written, and a stack's events
// take an advisory lock so that their Seq order is their commit order (clients page events by
// Seq). Writes that settle together are sent as one pipelined batch, which PostgreSQL runs in
// one implicit transaction: a resource step costs one round trip.
//
// Stack changes and events are announced with NOTIFY cairn_events (the stack's key), and
// Store.Watch follows them, so that a replica learns of another's events at once.
//
// The package imports only state and secrets (and pgx).
package postgres
