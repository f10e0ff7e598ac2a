/** The OpenAPI descriptions of the fleet link's site-server routes; the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  registerSiteServer:
    "Cloud mode. Registers a site server for some of the organisation's sites and answers its one-time enrolment code " +
    '(valid 24 hours, shown once, stored as a hash). Every site must exist (400 naming it); a site already linked to another ' +
    'site server that is not revoked is a 409 naming both. Audited (`site_server.registered`).',
  listSiteServers: 'Cloud mode. The registered site servers, oldest first, with their link state. Never a code, credential or verifier.',
  readSiteServer: 'Cloud mode. One site server and its link state; an absent or foreign one is the uniform 404.',
  revokeSiteServer:
    "Cloud mode. Revokes the site server's link credential at once in every process of the cell: its next link call gets the " +
    'uniform 401 and it keeps working locally. A pending code dies too. An absent, foreign or already revoked server is the ' +
    'uniform 404. Audited (`site_server.revoked`).',
  issueEnrolmentCode:
    'Cloud mode. A new one-time enrolment code (24 hours) for the same site server, e.g. after a revoke: re-enrolling keeps ' +
    'its id and where each side stopped. The credential of an enrolled server works until it re-enrols; a revoked one stays ' +
    'dead. Audited (`site_server.code_issued`).',
  enrol:
    'Cloud mode, called by `sitegrid link enrol` on a site server. Public: the one-time code authenticates (limited per client ' +
    'address like the sign-in endpoints). Exchanges the code for the link credential; the code is used up (of concurrent ' +
    'uses exactly one wins). An unknown, expired or used code is the uniform 401. A site server holding another ' +
    "organisation's data is refused (409 `LinkOrgMismatch`, naming both ids) and an incompatible protocol too (409 " +
    '`LinkVersionMismatch`); the code then stays usable. Audited (`site_server.enrolled`).',
  seed:
    "Cloud mode, the fleet link. One of the site server's sites as a tenant package (application/gzip, the format of " +
    'GET …/tenant/export), to seed a site server that holds none of its data. `Sitegrid-Link-Cursor: <tx>.<seq>` is the ' +
    "cloud's outbox position taken before the export: the site server pulls from there (changes made during the export are " +
    'replayed; applying is idempotent). The version the package carries of each record changed after that position is ' +
    'kept for the server: the pull answers its older changes as superseded and an edit the site makes of it is judged ' +
    "from that version. A site that is not one of the server's is the uniform 404.",
  reseed:
    'Cloud mode, called by `sitegrid link reseed` on a site server whose push was refused as diverged (restored from an ' +
    "old backup). Stores the site server's new outbox `epoch` (a push of any other epoch is then 409 `LinkDiverged`, " +
    "reason epoch) and replaces its mark with the new epoch's, starting at `after` (the newest readable position (tx, seq) of its outbox), so its " +
    'next push continues from there. The site server then seeds its sites again (GET /api/link/seed). Repeating it with ' +
    'another epoch is allowed (a reseed cut before the site stored its epoch). Audited (`site_server.reseeded`).',
}
