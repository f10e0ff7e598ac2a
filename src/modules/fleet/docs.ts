/** The OpenAPI descriptions of the fleet link's sync routes (sync-routes.ts, status-routes.ts); the policy sentence is derived. */
export const docs = {
  push:
    "A site server sends its outbox's changes after `after` (the previous answer's `mark`: a position `(tx, seq)`, `tx` the writing " +
    'transaction on a PostgreSQL site server, 0 on SQLite), in outbox order — `(tx, seq)` strictly increasing — at most 1000. ' +
    'The cloud checks every change first (422 `LinkChangeRefused` names the change, the table and the column or rule; nothing is applied), ' +
    "then in one transaction skips every change at or below its mark in `(tx, seq)` order (a resend is a no-op), applies the site's tables as " +
    "they come and its edits of the cloud's tables under the conflict rule (the cloud wins; the losing version is kept as a conflict record), " +
    'and answers its new mark. A `superseded` change (its row has a newer change earlier in outbox order) moves the mark and is not applied. ' +
    'Protocol 3: protocol 1 sent `after` as a seq alone, which loses changes of a site server on PostgreSQL (its transactions commit out of ' +
    'seq order), and protocol 2 had no `superseded`; a peer announcing either is refused with 409 `LinkVersionMismatch`. ' +
    'A batch that does not continue what the cloud applied (a site restored from an old backup) is refused with 409 `LinkDiverged`. ' +
    "The organisation, the server and its sites are the link credential's; a change of another site is refused. " +
    "Both `Sitegrid-Link-Protocol` and `Sitegrid-Schema` must match the cloud's (409 `LinkVersionMismatch`). " +
    'The body is plain JSON of at most 64 MiB (413 `PayloadTooLarge` past it); one sent with a `Content-Encoding` is refused with 415.',
  pull:
    "The cloud's changes for the server's sites after the cursor (`tx`, `seq`: the previous answer's `next`), not those the server sent itself, " +
    'in order, at most `limit`; a `superseded` change only moves the cursor (its row has a newer change earlier in the order). With `waitMs`, an empty answer waits up to that long for a change (a long poll, at most 25 s; a server shutting down answers at once). `more`: pull again at once.',
  heartbeat: 'A site server reports its link state, what waits on it to go up and how far it pulled; the fleet view (`GET /api/admin/site-servers`) shows it.',
  linkStatus:
    "Site mode: this site server's enrolment and the link's state — online/offline/revoked/version/diverged, last contact, last error, what waits " +
    "to go up (items, bytes, the oldest), how far the cloud's changes were applied, and the unresolved conflicts. `enrolled: false` before `sitegrid link enrol`.",
}
