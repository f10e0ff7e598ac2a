import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { actorOf } from '../../identity.ts'
import { Forbidden } from '../../errors/domain-error.ts'
import { problemResponses } from '../../http/problem.ts'
import {
  AcknowledgeBody, AlarmLoadQuery, AlarmLoadSchema, AlarmPage, AlarmParams, AlarmWithHistorySchema, BulkAcknowledgeBody, BulkAcknowledgeResult,
  CommentBody, ListAlarmsQuery, MAX_EVENTS_PER_BATCH, PostAlarmEventsBody, PostAlarmEventsResult, ShelveBody, SiteAlarmsParams,
} from './schemas.ts'
import type { AlarmsService } from './service.ts'

const TAGS = ['Alarms']
const READ = 'Policy: members read (cloud: organisation role; site server: site role).'
const OPERATE = 'Policy: members and above (operators acknowledge).'
const ADMIN = 'Policy: admins and owners; members get 403. Recorded in the alarm\'s history and the audit trail.'
const TRANSITION_PROBLEMS = problemResponses(400, 401, 403, 404, 409, 413, 415, 429)

export const alarmsRoutes: FastifyPluginAsyncTypebox<{ alarms: AlarmsService }> = async (app, { alarms }) => {
  app.post('/:siteId/alarms/events', {
    config: { policy: 'member', idempotent: true },
    schema: {
      tags: TAGS, summary: 'Post a batch of alarm events (gateways)',
      description: `1 to ${MAX_EVENTS_PER_BATCH} events. Each is answered in \`results\` (same order): \`accepted\`, \`duplicate\` (its \`eventId\` was already stored for the site, or repeats within the batch: nothing changes, so a gateway may resend after a timeout), or \`refused\` with a \`code\` (\`UnknownInstance\`, \`OccurredInFuture\`); a refused event does not fail the others. The accepted events are applied in order of \`occurredAt\` in one transaction: an activation raises an alarm (at most one open alarm per instance and condition, enforced by a unique index) or re-arms the open one; a return to normal moves it to \`returned_unacknowledged\`, or to \`normal\` if already acknowledged. Shelving is judged by \`occurredAt\`: an activation that occurred inside a shelve is suppressed (not annunciated, counted apart by the alarm load) even if it arrives after the shelve ended, and one that occurred before the shelve began is annunciated. Policy: an API key (a gateway's machine credential) with role member or above; interactive users (bearer, site PIN) get 403, so a person cannot fabricate process alarms.`,
      params: SiteAlarmsParams, body: PostAlarmEventsBody, response: { 200: PostAlarmEventsResult, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
    },
  }, async (request) => {
    if (request.principal.kind !== 'apiKey') throw new Forbidden('Alarm events are posted by gateways with an API key.')
    return alarms.ingest(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body.events)
  })

  app.get('/:siteId/alarms', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'List a site\'s alarms',
      description: `Spec 4.2. Newest change first (\`changedAt\`, then \`alarmId\`), keyset-paged: \`limit\` 1 to 1000 (default 100; anything else is a 400 naming the bound), \`cursor\` from \`nextCursor\`. Alarms inserted while paging appear at the top, never inside later pages, so none is skipped or repeated; an alarm that changes while paging moves to the top. Filters: \`instanceId\`, \`state\` and \`priority\` (repeat for several). ${READ}`,
      params: SiteAlarmsParams, querystring: ListAlarmsQuery, response: { 200: AlarmPage, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => alarms.list(request.principal.orgId, request.params.siteId, request.query))

  app.get('/:siteId/alarms/load', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Alarm load of a site over a period (ISA-18.2 / EEMUA 191)',
      description: `Over [\`from\`, \`to\`) (at most 31 days), from the activations the gateways reported (by \`occurredAt\`): annunciated alarms per 10 minutes and per hour per operator position, the peak 10 minutes, flood periods (more than 10 per 10 minutes per position, intervals aligned to \`from\`) and the share of time in flood, activations by priority, the 10 most frequent alarms and the chattering ones (3 or more activations within 60 seconds). Activations while shelved or out of service are counted apart. ${READ}`,
      params: SiteAlarmsParams, querystring: AlarmLoadQuery, response: { 200: AlarmLoadSchema, ...problemResponses(400, 401, 403, 404, 429) },
    },
  }, async (request) => alarms.load(request.principal.orgId, request.params.siteId, request.query))

  app.get('/:siteId/alarms/:alarmId', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Read an alarm with its history',
      description: `Every transition, oldest first, with who and when. ${READ}`,
      params: AlarmParams, response: { 200: AlarmWithHistorySchema, ...problemResponses(401, 403, 404, 429) },
    },
  }, async (request) => alarms.get(request.principal.orgId, request.params.siteId, request.params.alarmId))

  app.post('/:siteId/alarms/acknowledge', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Acknowledge several alarms',
      description: `Acknowledges each listed alarm that is unacknowledged, in one transaction; each other is reported as \`refused\` with \`NotFound\` or \`AlarmStateConflict\` without failing the rest. ${OPERATE}`,
      params: SiteAlarmsParams, body: BulkAcknowledgeBody, response: { 200: BulkAcknowledgeResult, ...problemResponses(400, 401, 403, 404, 413, 415, 429) },
    },
  }, async (request) => alarms.acknowledgeMany(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body.alarmIds, request.body.comment ?? null))

  app.post('/:siteId/alarms/:alarmId/acknowledge', {
    config: { policy: 'member' },
    schema: {
      tags: TAGS, summary: 'Acknowledge an alarm',
      description: `ISA-18.2: \`active_unacknowledged\` → \`active_acknowledged\`; \`returned_unacknowledged\` → \`normal\`. Any other state is a 409 \`AlarmStateConflict\`. Optional comment. ${OPERATE}`,
      params: AlarmParams, body: AcknowledgeBody, response: { 200: AlarmWithHistorySchema, ...TRANSITION_PROBLEMS },
    },
  }, async (request) => alarms.acknowledge(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.alarmId, request.body?.comment ?? null))

  app.post('/:siteId/alarms/:alarmId/shelve', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Shelve an alarm until a time',
      description: `Suppresses the alarm until \`until\` (after now, at most 7 days ahead); it then returns by itself to its process state (history: \`shelve_expired\` by \`system\`). A shelved or out-of-service alarm cannot be shelved (409). Comment required. ${ADMIN}`,
      params: AlarmParams, body: ShelveBody, response: { 200: AlarmWithHistorySchema, ...TRANSITION_PROBLEMS },
    },
  }, async (request) => alarms.shelve(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.alarmId, request.body.comment, request.body.until))

  app.post('/:siteId/alarms/:alarmId/unshelve', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Unshelve an alarm',
      description: `Back to its process state (an alarm that activated while shelved comes back unacknowledged). Only a shelved alarm (409 otherwise). Comment required. ${ADMIN}`,
      params: AlarmParams, body: CommentBody, response: { 200: AlarmWithHistorySchema, ...TRANSITION_PROBLEMS },
    },
  }, async (request) => alarms.unshelve(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.alarmId, request.body.comment))

  app.post('/:siteId/alarms/:alarmId/out-of-service', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Take an alarm out of service',
      description: `For maintenance, with no expiry; replaces a shelve. Already out of service: 409. Comment required. ${ADMIN}`,
      params: AlarmParams, body: CommentBody, response: { 200: AlarmWithHistorySchema, ...TRANSITION_PROBLEMS },
    },
  }, async (request) => alarms.removeFromService(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.alarmId, request.body.comment))

  app.post('/:siteId/alarms/:alarmId/return-to-service', {
    config: { policy: 'admin' },
    schema: {
      tags: TAGS, summary: 'Return an alarm to service',
      description: `Back to its process state; only an out-of-service alarm (409 otherwise). Comment required. ${ADMIN}`,
      params: AlarmParams, body: CommentBody, response: { 200: AlarmWithHistorySchema, ...TRANSITION_PROBLEMS },
    },
  }, async (request) => alarms.returnToService(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.alarmId, request.body.comment))
}
