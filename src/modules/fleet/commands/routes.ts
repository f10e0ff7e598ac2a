import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemResponses } from '../../../http/problem.ts'
import { docs } from './docs.ts'
import { AlarmCommandPage, AlarmCommandsParams, AlarmCommandsQuery, ListCommandsQuery } from './schemas.ts'
import type { CommandsService } from './service.ts'

const TAGS = ['Fleet link']

/** Under /api/sites: the commands of one alarm. */
export const alarmCommandsRoutes: FastifyPluginAsyncTypebox<{ commands: CommandsService }> = async (app, { commands }) => {
  app.get(
    '/:siteId/alarms/:alarmId/commands',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listAlarmCommands',
        summary: "An alarm's actions forwarded to its site server",
        description: docs.alarmCommands,
        params: AlarmCommandsParams,
        querystring: AlarmCommandsQuery,
        response: { 200: AlarmCommandPage, ...problemResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => commands.listOfAlarm(request.principal.orgId, request.params.siteId, request.params.alarmId, request.query),
  )
}

/** Under /api/link: the organisation's forwarded commands. */
export const linkCommandsRoutes: FastifyPluginAsyncTypebox<{ commands: CommandsService }> = async (app, { commands }) => {
  app.get(
    '/commands',
    {
      config: { policy: 'member' },
      schema: {
        tags: TAGS,
        operationId: 'listLinkCommands',
        summary: 'Alarm actions forwarded to site servers',
        description: docs.listCommands,
        querystring: ListCommandsQuery,
        response: { 200: AlarmCommandPage, ...problemResponses(400, 401, 403, 429, 503) },
      },
    },
    async (request) => commands.list(request.principal.orgId, request.query),
  )
}
