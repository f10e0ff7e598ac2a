/** The OpenAPI descriptions of the link's conflict routes (conflict-routes.ts); the policy sentence comes from `config.policy`. */
export const conflictDocs = {
  listConflicts:
    "Versions that lost under the link's rule (the cloud wins): a site server's change of a cloud record the cloud had changed since " +
    "the site's version, a delete against an edit, or a change that broke a unique rule. Each holds the losing version, the cloud's " +
    'version when it was recorded, and who resolved it. Newest first; `unresolved=true` keeps the open ones. On a site server the list ' +
    "is the cloud's, as last pulled, and read-only.",
  getConflict: "One conflict record. Another organisation's answers 404, as a missing one.",
  reapplyConflict:
    'Cloud only. Applies the losing version as a change made in the cloud (it reaches the site server by the link like any other), ' +
    'and marks the conflict re-applied by the caller. 409 when it is already resolved, or when the losing version breaks a rule of its ' +
    'table now (a unique value another record holds, a record it refers to is gone); nothing is changed then.',
  dismissConflict: "Cloud only. Keeps the cloud's version and marks the conflict dismissed by the caller. 409 when it is already resolved.",
}
