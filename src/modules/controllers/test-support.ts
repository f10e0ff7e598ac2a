import type { TestContext } from 'node:test'
import { harness, type Harness, type TestDialect } from '../../../test/harness.ts'
import type { Org } from '../../identity.ts'

export type As = (method: string, url: string, payload?: unknown, headers?: Record<string, string>) => ReturnType<Harness['inject']>

/** An organisation with an admin key and one site `S1`; `as` calls the API with that key. */
export async function equipmentSetup(t: TestContext, dialect: TestDialect) {
  const h = await harness(t, dialect)
  const { org, key } = await h.orgWithKey('admin')
  const as: As = (method, url, payload, headers) => h.inject({ org, apiKey: key }, { method: method as 'GET', url, payload: payload as object, headers })
  const site = await as('POST', '/api/sites', { code: 'S1', name: 'Plant' })
  if (site.statusCode !== 201) throw new Error(`site create: ${site.statusCode} ${site.body}`)
  return { h, org, key, as }
}

export const controllerBody = (over: Record<string, unknown> = {}, connection: Record<string, unknown> = {}) => ({
  name: 'Crusher PLC',
  platform: 1,
  assetNumber: `A-${Math.random().toString(36).slice(2, 10)}`,
  connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15', ...connection },
  ...over,
})

export async function createController(
  as: As,
  site = 'S1',
  over: Record<string, unknown> = {},
  connection: Record<string, unknown> = {},
): Promise<{ id: string } & Record<string, unknown>> {
  const res = await as('POST', `/api/sites/${site}/controllers`, controllerBody(over, connection))
  if (res.statusCode !== 201) throw new Error(`controller create: ${res.statusCode} ${res.body}`)
  return res.json()
}

export async function rowCount(h: Harness, table: 'controllers' | 'instances', orgId: string): Promise<number> {
  const row = await h.handle.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Every row of the organisation in both tables, to prove a refused request changed nothing. */
export async function snapshot(h: Harness, org: Org): Promise<string> {
  const controllers = await h.handle.db.selectFrom('controllers').selectAll().where('org_id', '=', org.id).orderBy('id').execute()
  const instances = await h.handle.db.selectFrom('instances').selectAll().where('org_id', '=', org.id).orderBy('id').execute()
  return JSON.stringify({ controllers, instances })
}
