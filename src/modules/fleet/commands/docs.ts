/** The OpenAPI descriptions of the forwarded alarm commands' routes (routes.ts); the policy sentence comes from `config.policy`. */
export const docs = {
  alarmCommands:
    'Issue 26, the fleet link: the actions taken in the cloud on this alarm of a linked site (acknowledge, shelve, …), each forwarded to the ' +
    'site server as a command, oldest first. `pending` until the site server has applied it (`applied`, `result.alarm` the alarm after it) or ' +
    'refused it under the normal rules (`refused`, `result.code` and `result.detail`, e.g. `AlarmStateConflict` when the state moved on). ' +
    'A site server lists the commands it received. An unknown site or alarm is a 404.',
  listCommands:
    "The organisation's forwarded alarm commands, oldest first (the order the site servers apply them in), keyset-paged. Filters: `status` " +
    '(`pending`, `applied`, `refused`) and `siteId`. `GET /api/link/commands?status=pending` is what still waits for a site server.',
}
