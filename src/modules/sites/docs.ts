/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  createSite: '`code` and `name` are required; `timeZone` defaults to UTC and `status` to 0 (Planned).',
  listSites: 'Paged, ordered by code.',
  updateSite: 'Spec 2.2 and 4.2: name, description, location, timeZone (IANA), status; all optional.',
  deleteSite:
    'Deletes the site with its controllers, instances, electrical network, alarms and historian data in one transaction — only when `confirm` equals the ' +
    "site's code, and revokes the API keys restricted to it (a site made later under the same code is another site). Otherwise nothing changes and the 409 " +
    '`ConfirmationRequired` lists in `wouldDelete` how many records of each kind would go (`apiKeys`: the keys it would revoke).',
}
