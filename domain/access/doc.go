// Package access is Narad's authorization rule (api.md §4.3-4.6,
// internals.md §12.2): who a request acts for (Principal), whether a grant
// pattern covers a topic, and the one decision every route asks (Decide),
// together with the account invariants of user management (no escalation,
// root protected). It is pure: the callers read users and topics and pass
// them in; nothing here reads a store, a clock or a request.
package access
