package sqlite

// migrations are applied in order at Open, each in the transaction that bumps
// schema_version.version to its index + 1. Never edit one that has shipped: append another.
//
// Times are INTEGER unix milliseconds in UTC, 0 for the zero time; byte slices are BLOBs;
// Resource.Deps is JSON text. seq columns are AUTOINCREMENT so that a Seq is never handed out
// twice, even after DeleteStack removed the newest rows (clients page events by Seq).
var migrations = []string{
	// 1: the first schema.
	`
CREATE TABLE stacks (
	name TEXT PRIMARY KEY,
	id TEXT NOT NULL,
	dialect TEXT NOT NULL,
	status TEXT NOT NULL,
	status_reason TEXT NOT NULL,
	description TEXT NOT NULL,
	parameters BLOB,
	outputs BLOB,
	operation TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE TABLE resources (
	stack TEXT NOT NULL,
	name TEXT NOT NULL,
	type TEXT NOT NULL,
	id TEXT NOT NULL,
	status TEXT NOT NULL,
	status_reason TEXT NOT NULL,
	props BLOB,
	outputs BLOB,
	deps TEXT NOT NULL,
	deletion_policy TEXT NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (stack, name)
);
CREATE TABLE journal (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	operation TEXT NOT NULL,
	stack TEXT NOT NULL,
	step TEXT NOT NULL,
	phase TEXT NOT NULL,
	token TEXT NOT NULL,
	failed INTEGER NOT NULL,
	detail BLOB,
	at INTEGER NOT NULL
);
CREATE INDEX journal_by_operation ON journal (operation, seq);
CREATE TABLE operations (
	id TEXT PRIMARY KEY,
	stack TEXT NOT NULL,
	kind TEXT NOT NULL,
	status TEXT NOT NULL,
	status_reason TEXT NOT NULL,
	request BLOB,
	owner TEXT NOT NULL,
	lease_expires INTEGER NOT NULL,
	started_at INTEGER NOT NULL,
	ended_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX one_running_operation_per_stack ON operations (stack) WHERE status = 'running';
CREATE TABLE events (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	stack TEXT NOT NULL,
	operation TEXT NOT NULL,
	logical_id TEXT NOT NULL,
	physical_id TEXT NOT NULL,
	type TEXT NOT NULL,
	status TEXT NOT NULL,
	reason TEXT NOT NULL,
	at INTEGER NOT NULL
);
CREATE INDEX events_by_stack ON events (stack, seq);
CREATE TABLE keys (
	name TEXT PRIMARY KEY,
	value BLOB NOT NULL
);
CREATE TABLE custom_requests (
	id TEXT PRIMARY KEY,
	stack TEXT NOT NULL,
	logical_id TEXT NOT NULL,
	body BLOB,
	expires INTEGER NOT NULL,
	sent INTEGER NOT NULL,
	response BLOB,
	responded_at INTEGER NOT NULL
);
`,
	// 2: a stack's running operation is read from operations (one_running_operation_per_stack)
	// rather than kept in a copy that StartOperation could not set before the stack's row
	// existed. Operations of a stack are found by stack for DeleteStack.
	`
ALTER TABLE stacks DROP COLUMN operation;
CREATE INDEX operations_by_stack ON operations (stack);
`,
	// 3: Terraform providers' private data and the provider configuration of a resource; the
	// template of a stack's last deploy.
	`
ALTER TABLE resources ADD COLUMN private BLOB;
ALTER TABLE resources ADD COLUMN provider TEXT NOT NULL DEFAULT '';
ALTER TABLE stacks ADD COLUMN template BLOB;
`,
	// 4: the private-provider registry (internal/registry). seq orders rows created in the same
	// millisecond; versions go with their provider (DeletePrivateProvider also deletes them).
	`
CREATE TABLE private_providers (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	tenant TEXT NOT NULL,
	id TEXT NOT NULL UNIQUE,
	name TEXT NOT NULL,
	description TEXT NOT NULL,
	agency_urn TEXT NOT NULL,
	agency_name TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	UNIQUE (tenant, name)
);
CREATE INDEX private_providers_by_time ON private_providers (tenant, created_at, seq);
CREATE TABLE private_provider_versions (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	tenant TEXT NOT NULL,
	provider_id TEXT NOT NULL REFERENCES private_providers (id) ON DELETE CASCADE,
	version TEXT NOT NULL,
	description TEXT NOT NULL,
	function_urn TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	UNIQUE (provider_id, version)
);
CREATE INDEX private_provider_versions_by_time ON private_provider_versions (provider_id, created_at, seq);
`,
	// 5: functions (internal/function): definitions; code lives in the data directory.
	`
CREATE TABLE functions (
	name TEXT PRIMARY KEY,
	kind TEXT NOT NULL,
	url TEXT NOT NULL,
	handler TEXT NOT NULL,
	code_dir TEXT NOT NULL,
	timeout_ms INTEGER NOT NULL,
	memory_mb INTEGER NOT NULL,
	concurrency INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
`,
	// 6: the provider versions and configurations a Terraform-language stack last applied with.
	`
ALTER TABLE stacks ADD COLUMN providers BLOB;
`,
	// 7: tenants own stacks and functions. A stack's name column holds its key
	// (state.StackKey), so rows of the default tenant keep their plain names; a function's
	// name column holds TENANT/NAME likewise.
	`
ALTER TABLE stacks ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
CREATE INDEX stacks_by_tenant ON stacks (tenant, name);
ALTER TABLE functions ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
CREATE INDEX functions_by_tenant ON functions (tenant, name);
`,
	// 8: a Terraform-language stack's terraform lineage and serial, kept apart from its id.
	`
ALTER TABLE stacks ADD COLUMN tfstate BLOB;
`,
	// 9: a function's environment variables (sealed JSON object; NULL: none).
	`
ALTER TABLE functions ADD COLUMN env BLOB;
`,
	// 10: an operation's small columns, covered by an index: its row stores them after the
	// request (the whole template), so reading them from the row walks the request's overflow
	// pages. Every fenced journal append and every watch of the operation reads them.
	`
CREATE INDEX operations_small ON operations (id, status, owner, stack, kind, status_reason, lease_expires, started_at, ended_at);
`,
	// 11: a resource's protect flag (Pulumi's protect), kept with its row; NULL for a row
	// written before (state.Resource.ProtectUnknown).
	`
ALTER TABLE resources ADD COLUMN protect INTEGER;
`,
	// 12: accounts (state.Accounts): API tokens by the hash of the token, per-stack grants,
	// and the audit log of changes.
	`
CREATE TABLE tokens (
	id TEXT PRIMARY KEY,
	hash BLOB NOT NULL UNIQUE,
	tenant TEXT NOT NULL,
	role TEXT NOT NULL,
	name TEXT NOT NULL,
	created_by TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	revoked_at INTEGER NOT NULL
);
CREATE INDEX tokens_by_tenant ON tokens (tenant, created_at);
CREATE TABLE grants (
	tenant TEXT NOT NULL,
	subject TEXT NOT NULL,
	stack TEXT NOT NULL,
	role TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (tenant, subject, stack)
);
CREATE TABLE audit (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	at INTEGER NOT NULL,
	tenant TEXT NOT NULL,
	subject TEXT NOT NULL,
	role TEXT NOT NULL,
	action TEXT NOT NULL,
	target TEXT NOT NULL,
	remote TEXT NOT NULL,
	status INTEGER NOT NULL
);
CREATE INDEX audit_by_tenant ON audit (tenant, seq);
`,
	// 13: a function's code zip, so that a replica without its code directory unpacks it.
	`
ALTER TABLE functions ADD COLUMN code BLOB;
`,
}
