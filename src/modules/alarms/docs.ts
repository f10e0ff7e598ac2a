import { MAX_EVENTS_PER_BATCH, MAX_LISTED_HISTORY } from './schemas.ts'

/** Issue 26: what every action on one alarm says about a linked site in the cloud (alarms/forward.ts). */
const FORWARDED =
  ' Cloud, a site linked to a site server: the alarm is not changed here. The request is checked as usual (400, 404), then stored as a pending command ' +
  "and answered 202 with it; the site server applies it in order under the same rules, and the command comes back `applied` (with the alarm's new " +
  'state) or `refused` (with the code and detail, e.g. `AlarmStateConflict` when the state moved on). See `GET …/alarms/{alarmId}/commands`.'

/** The OpenAPI descriptions of this area's routes (routes.ts); the policy sentence is added from `config.policy` (http/openapi.ts). */
export const docs = {
  postAlarmEvents:
    `1 to ${MAX_EVENTS_PER_BATCH} events. Each is answered in \`results\` (same order): \`accepted\`, \`duplicate\` (its \`eventId\` was already stored for ` +
    `the site, or repeats within the batch: nothing changes, so a gateway may resend after a timeout), or \`refused\` with a \`code\` (\`UnknownInstance\`, ` +
    `\`OccurredInFuture\`); a refused event does not fail the others. The accepted events are applied in order of \`occurredAt\` in one transaction: ` +
    `an activation raises an alarm (at most one open alarm per instance and condition, enforced by a unique index) or re-arms the open one; ` +
    `a return to normal moves it to \`returned_unacknowledged\`, or to \`normal\` if already acknowledged. Shelving is judged by \`occurredAt\`: ` +
    `an activation that occurred inside a shelve is suppressed (not annunciated, counted apart by the alarm load) even if it arrives after the shelve ended, ` +
    `and one that occurred before the shelve began is annunciated. Only an API key (a gateway's machine credential) may post events: ` +
    `interactive users (bearer, site PIN) get 403, so a person cannot fabricate process alarms. Cloud, a site linked to a site server: 409 ` +
    `\`AlarmsFromSiteServer\`, its alarms come from that server through the link.`,
  listAlarms:
    'Spec 4.2. Newest change first (`changedAt`, then `alarmId`), keyset-paged: `limit` 1 to 1000 (default 100; ' +
    'anything else is a 400 naming the bound), `cursor` from `nextCursor`. Alarms inserted while paging appear at the top, never inside later pages, so none ' +
    'is skipped or repeated; an alarm that changes while paging moves to the top. Filters: `instanceId`, `state` and `priority` (repeat for several).',
  alarmLoad:
    'Over [`from`, `to`) (at most 31 days), from the activations the gateways reported (by `occurredAt`): ' +
    'annunciated alarms per 10 minutes and per hour per operator position, the count of each 10-minute interval (`activationsPer10Min`, for a chart), the peak 10 minutes, flood periods (more than 10 per 10 minutes per position, ' +
    'intervals aligned to `from`) and the share of time in flood, activations by priority, the 10 most frequent alarms and the chattering ones (3 or more ' +
    'activations within 60 seconds). Activations while shelved or out of service are counted apart.',
  readAlarm:
    `Every transition, oldest first, with who and when: the latest ${MAX_LISTED_HISTORY} of an alarm that has more, with \`historyTruncated: true\` ` +
    '(`…/history` pages them all). The answer of every action on one alarm is this read.',
  alarmHistory: 'Every transition of the alarm, oldest first, a page at a time (keyset on the transition order: stable while the alarm changes).',
  acknowledgeAlarms:
    'Acknowledges each listed alarm that is unacknowledged, in one transaction; each other is reported as `refused` with `NotFound` or `AlarmStateConflict` ' +
    'without failing the rest. Cloud, a site linked to a site server: one pending acknowledge command per alarm found (202, `results` per id, ' +
    'unknown ids `refused` with `NotFound`); the site server applies them in order.',
  acknowledgeAlarm:
    'ISA-18.2: `active_unacknowledged` → `active_acknowledged`; `returned_unacknowledged` → `normal`. Any other state is a 409 `AlarmStateConflict`. ' +
    'Optional comment.' +
    FORWARDED,
  shelveAlarm:
    'Suppresses the alarm until `until` (after now, at most 7 days ahead); it then returns by itself to its process state (history: ' +
    '`shelve_expired` by `system`). A shelved or out-of-service alarm cannot be shelved (409). Comment required. ' +
    "Recorded in the alarm's history and the audit trail." +
    FORWARDED,
  unshelveAlarm:
    'Back to its process state (an alarm that activated while shelved comes back unacknowledged). Only a shelved alarm (409 otherwise). Comment required. ' +
    "Recorded in the alarm's history and the audit trail." +
    FORWARDED,
  takeOutOfService:
    "For maintenance, with no expiry; replaces a shelve. Already out of service: 409. Comment required. Recorded in the alarm's history and the audit trail." +
    FORWARDED,
  returnToService:
    "Back to its process state; only an out-of-service alarm (409 otherwise). Comment required. Recorded in the alarm's history and the audit trail." +
    FORWARDED,
}
