import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { DatabaseHandle } from '../db/connect.ts'
import { DatabaseUnreachable } from './errors.ts'
import { problemResponses } from './problem.ts'

const Status = Type.Object({ status: Type.String() }, { additionalProperties: false })
const Ready = Type.Object(
  {
    status: Type.String(),
    warnings: Type.Optional(
      Type.Array(Type.String(), { description: 'Configuration that keeps part of the service from working, e.g. an ambiguous site organisation.' }),
    ),
  },
  { additionalProperties: false },
)

export const healthRoutes: FastifyPluginAsyncTypebox<{
  handle: DatabaseHandle
  openapi: () => unknown
  /** What the configuration leaves unserved, read on each call (e.g. config/site-org.ts); none when absent. */
  warnings?: () => Promise<string[]>
}> = async (app, { handle, openapi, warnings }) => {
  app.get(
    '/healthz',
    {
      config: { policy: 'public' },
      schema: { tags: ['Operations'], operationId: 'getHealth', summary: 'The process is up', security: [], response: { 200: Status } },
    },
    async () => ({ status: 'ok' }),
  )

  app.get(
    '/readyz',
    {
      config: { policy: 'public' },
      schema: {
        tags: ['Operations'],
        operationId: 'getReadiness',
        summary: 'The database is reachable',
        description:
          '200 `ready` when the database answers. `warnings` lists what the configuration leaves unserved: on a site server with several ' +
          'organisations and no `SITEGRID_SITE_ORG`, hosts that are not `{slug}.{base domain}` serve no organisation (every request there gets 401).',
        security: [],
        response: { 200: Ready, ...problemResponses(503) },
      },
    },
    async () => {
      try {
        await handle.ping()
      } catch {
        throw new DatabaseUnreachable()
      }
      const found = (await warnings?.()) ?? []
      return found.length ? { status: 'ready', warnings: found } : { status: 'ready' }
    },
  )

  app.get(
    '/openapi.json',
    {
      config: { policy: 'public' },
      schema: { hide: true },
    },
    async () => openapi(),
  )
}
