/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  listMembers:
    'Pending requests and active members with the e-mail and name from their latest sign-in, ordered by accountId; revoked accounts are not listed. ' +
    "`{slug}` must be the host's organisation, else the uniform 404, unless the caller is a platform admin.",
  approveMembershipRequest:
    "Activates a pending request with `role` (default `member`), effective at once in every process. A role above the caller's: 403. Already active: 409. " +
    "No pending request (absent, revoked, another organisation's): the uniform 404. `{slug}` must be the host's organisation, else the uniform 404, unless " +
    'the caller is a platform admin.',
  revokeMember:
    '204 with no body. The account loses its role at once and its browser sessions at this organisation end; its next call is 403. ' +
    "The last owner cannot be removed (409); a member whose role is above the caller's neither (403). Absent or already revoked: the uniform 404. " +
    "`{slug}` must be the host's organisation, else the uniform 404, unless the caller is a platform admin.",
  bindCustomDomain:
    'Binds a domain to the organisation, disabled until enabled. A domain serves at most one organisation: ' +
    '409 `Conflict` when any organisation (this one included) holds it. Invalid domains answer 400 naming `/domain`. ' +
    "`{slug}` must be the host's organisation (else the uniform 404) unless the caller is a platform admin.",
  listDomainBindings:
    "Enabled and disabled bindings, in domain order, keyset-paged. `{slug}` must be the host's organisation (else the uniform 404) unless the caller is a " +
    'platform admin.',
  updateDomainBinding:
    'An enabled binding serves the organisation exactly as its subdomain does, in every process at once; ' +
    'a disabled one is an unknown host (the uniform 401). An absent or foreign domain answers the uniform 404. ' +
    "`{slug}` must be the host's organisation (else the uniform 404) unless the caller is a platform admin.",
  removeDomainBinding:
    '204 with no body; the domain stops serving at once. An absent, foreign or already removed domain answers the same 404. ' +
    "`{slug}` must be the host's organisation (else the uniform 404) unless the caller is a platform admin.",
  readAuditTrail:
    "Every administrative change (keys, domains, members, configuration reloads made from this organisation's host) with who, what and when; " +
    "newest first, keyset-paged, optionally filtered by action prefix. `{slug}` must be the host's organisation (else the uniform 404) unless the caller is " +
    'a platform admin.',
  reloadConfiguration:
    'Rereads the configuration file and the environment and validates all of it. Valid: the reloadable settings (`SITEGRID_LOG_LEVEL`, ' +
    '`SITEGRID_RATE_LIMIT_PER_MINUTE`, `SITEGRID_AUTH_RATE_LIMIT_PER_MINUTE`) are swapped in atomically and listed under `changed`; ' +
    'other differences are listed under `requiresRestart` and the running values stay. Invalid: ' +
    '422 `UnprocessableEntity` naming every problem in `problems`, and the running configuration stays in force. ' +
    'Every attempt, refused ones included, writes an audit record (who, what changed, the reason). This process only: with N processes, reload each.',
}
