import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { actorOf } from '../../identity.ts'
import { Forbidden } from '../../errors/domain-error.ts'
import { problemResponses } from '../../http/problem.ts'
import {
  AcknowledgeBody,
  AlarmCommandSchema,
  AlarmLoadQuery,
  AlarmLoadSchema,
  AlarmPage,
  AlarmHistoryPage,
  AlarmHistoryQuery,
  AlarmParams,
  AlarmWithHistorySchema,
  BulkAcknowledgeBody,
  BulkAcknowledgeResult,
  CommentBody,
  ForwardedBulkAcknowledgeResult,
  ListAlarmsQuery,
  PostAlarmEventsBody,
  PostAlarmEventsResult,
  ShelveBody,
  SiteAlarmsParams,
} from './schemas.ts'
import type { AlarmsService } from './service.ts'
import { docs } from './docs.ts'
import { ForwardedToSite } from './forward.ts'

const TAGS = ['Alarms']
const TRANSITION_PROBLEMS = problemResponses(400, 401, 403, 404, 409, 413, 415, 429, 503)
/** Cloud, a linked site's alarm: the action is forwarded to its site server, which applies it (fleet/commands). */
const FORWARDED = { 202: AlarmCommandSchema }

/** An action's answer: 202 with the command when it was forwarded to the site server, else the applied result. */
function answer<T, F>(reply: FastifyReply, outcome: T | ForwardedToSite<F>): T | F {
  if (!(outcome instanceof ForwardedToSite)) return outcome
  reply.code(202)
  return outcome.answer
}

export const alarmsRoutes: FastifyPluginAsyncTypebox<{ alarms: AlarmsService }> = async (app, { alarms }) => {
  app.post(
    '/:siteId/alarms/events',
    {
      config: { policy: 'member', idempotent: true },
      schema: {
        tags: TAGS,
        operationId: 'postAlarmEvents',
        summary: 'Post a batch of alarm events (gateways)',
        description: docs.postAlarmEvents,
        params: SiteAlarmsParams,
        body: PostAlarmEventsBody,
        response: { 200: PostAlarmEventsResult, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429, 503) },
      },
    },
    async (request) => {
      if (request.principal.kind !== 'apiKey') throw new Forbidden('Alarm events are posted by gateways with an API key.')
      return alarms.ingest(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.body.events)
    },
  )

  app.get(
    '/:siteId/alarms',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listAlarms',
        summary: "List a site's alarms",
        description: docs.listAlarms,
        params: SiteAlarmsParams,
        querystring: ListAlarmsQuery,
        response: { 200: AlarmPage, ...problemResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => alarms.list(request.principal.orgId, request.params.siteId, request.query),
  )

  app.get(
    '/:siteId/alarms/load',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getAlarmLoad',
        summary: 'Alarm load of a site over a period (ISA-18.2 / EEMUA 191)',
        description: docs.alarmLoad,
        params: SiteAlarmsParams,
        querystring: AlarmLoadQuery,
        response: { 200: AlarmLoadSchema, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => alarms.load(request.principal.orgId, request.params.siteId, request.query),
  )

  app.get(
    '/:siteId/alarms/:alarmId',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'getAlarm',
        summary: 'Read an alarm with its history',
        description: docs.readAlarm,
        params: AlarmParams,
        response: { 200: AlarmWithHistorySchema, ...problemResponses(401, 403, 404, 429, 503) },
      },
    },
    async (request) => alarms.get(request.principal.orgId, request.params.siteId, request.params.alarmId),
  )

  app.get(
    '/:siteId/alarms/:alarmId/history',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listAlarmHistory',
        summary: "Page through an alarm's transitions",
        description: docs.alarmHistory,
        params: AlarmParams,
        querystring: AlarmHistoryQuery,
        response: { 200: AlarmHistoryPage, ...problemResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => alarms.history(request.principal.orgId, request.params.siteId, request.params.alarmId, request.query),
  )

  app.post(
    '/:siteId/alarms/acknowledge',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'acknowledgeAlarms',
        summary: 'Acknowledge several alarms',
        description: docs.acknowledgeAlarms,
        params: SiteAlarmsParams,
        body: BulkAcknowledgeBody,
        response: { 200: BulkAcknowledgeResult, 202: ForwardedBulkAcknowledgeResult, ...problemResponses(400, 401, 403, 404, 413, 415, 429, 503) },
      },
    },
    async (request, reply) =>
      answer(
        reply,
        await alarms.acknowledgeMany(
          request.principal.orgId,
          actorOf(request.principal),
          request.params.siteId,
          request.body.alarmIds,
          request.body.comment ?? null,
        ),
      ),
  )

  app.post(
    '/:siteId/alarms/:alarmId/acknowledge',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'acknowledgeAlarm',
        summary: 'Acknowledge an alarm',
        description: docs.acknowledgeAlarm,
        params: AlarmParams,
        body: AcknowledgeBody,
        response: { 200: AlarmWithHistorySchema, ...FORWARDED, ...TRANSITION_PROBLEMS },
      },
    },
    async (request, reply) =>
      answer(
        reply,
        await alarms.acknowledge(
          request.principal.orgId,
          actorOf(request.principal),
          request.params.siteId,
          request.params.alarmId,
          request.body?.comment ?? null,
        ),
      ),
  )

  app.post(
    '/:siteId/alarms/:alarmId/shelve',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'shelveAlarm',
        summary: 'Shelve an alarm until a time',
        description: docs.shelveAlarm,
        params: AlarmParams,
        body: ShelveBody,
        response: { 200: AlarmWithHistorySchema, ...FORWARDED, ...TRANSITION_PROBLEMS },
      },
    },
    async (request, reply) =>
      answer(
        reply,
        await alarms.shelve(
          request.principal.orgId,
          actorOf(request.principal),
          request.params.siteId,
          request.params.alarmId,
          request.body.comment,
          request.body.until,
        ),
      ),
  )

  app.post(
    '/:siteId/alarms/:alarmId/unshelve',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'unshelveAlarm',
        summary: 'Unshelve an alarm',
        description: docs.unshelveAlarm,
        params: AlarmParams,
        body: CommentBody,
        response: { 200: AlarmWithHistorySchema, ...FORWARDED, ...TRANSITION_PROBLEMS },
      },
    },
    async (request, reply) =>
      answer(
        reply,
        await alarms.unshelve(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.alarmId, request.body.comment),
      ),
  )

  app.post(
    '/:siteId/alarms/:alarmId/out-of-service',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'takeAlarmOutOfService',
        summary: 'Take an alarm out of service',
        description: docs.takeOutOfService,
        params: AlarmParams,
        body: CommentBody,
        response: { 200: AlarmWithHistorySchema, ...FORWARDED, ...TRANSITION_PROBLEMS },
      },
    },
    async (request, reply) =>
      answer(
        reply,
        await alarms.removeFromService(
          request.principal.orgId,
          actorOf(request.principal),
          request.params.siteId,
          request.params.alarmId,
          request.body.comment,
        ),
      ),
  )

  app.post(
    '/:siteId/alarms/:alarmId/return-to-service',
    {
      config: { policy: 'admin' },
      schema: {
        tags: TAGS,
        operationId: 'returnAlarmToService',
        summary: 'Return an alarm to service',
        description: docs.returnToService,
        params: AlarmParams,
        body: CommentBody,
        response: { 200: AlarmWithHistorySchema, ...FORWARDED, ...TRANSITION_PROBLEMS },
      },
    },
    async (request, reply) =>
      answer(
        reply,
        await alarms.returnToService(request.principal.orgId, actorOf(request.principal), request.params.siteId, request.params.alarmId, request.body.comment),
      ),
  )
}
