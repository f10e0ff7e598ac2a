import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { DatabaseHandle } from '../db/connect.ts'
import { DatabaseUnreachable } from './errors.ts'
import { problemResponses } from './problem.ts'

const Status = Type.Object({ status: Type.String() }, { additionalProperties: false })

export const healthRoutes: FastifyPluginAsyncTypebox<{ handle: DatabaseHandle; openapi: () => unknown }> = async (app, { handle, openapi }) => {
  app.get(
    '/healthz',
    {
      config: { policy: 'public' },
      schema: { tags: ['Operations'], summary: 'The process is up', security: [], response: { 200: Status } },
    },
    async () => ({ status: 'ok' }),
  )

  app.get(
    '/readyz',
    {
      config: { policy: 'public' },
      schema: { tags: ['Operations'], summary: 'The database is reachable', security: [], response: { 200: Status, ...problemResponses(503) } },
    },
    async () => {
      try {
        await handle.ping()
      } catch {
        throw new DatabaseUnreachable()
      }
      return { status: 'ready' }
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
