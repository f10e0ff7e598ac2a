import type { TestContext } from 'node:test'
import { harness, type Harness, type TestDialect } from '../../../test/harness.ts'
import type { Org } from '../orgs/service.ts'

export type As = (method: string, url: string, payload?: unknown) => ReturnType<Harness['inject']>

export const BASE = '/api/sites/S1/electrical'

/** An organisation with an admin key, a member key and one site `S1`; `as` calls with the admin key. */
export async function electricalSetup(t: TestContext, dialect: TestDialect, env: Record<string, string> = {}) {
  const h = await harness(t, dialect, env)
  const { org, key } = await h.orgWithKey('admin')
  const member = (await h.mintKey(org, 'member')).plaintext
  const call = (apiKey: string): As => (method, url, payload) =>
    h.inject({ org, apiKey }, typeof payload === 'string'
      ? { method: method as 'GET', url, payload, headers: { 'content-type': 'application/json' } }
      : { method: method as 'GET', url, payload: payload as object })
  const as = call(key)
  const site = await as('POST', '/api/sites', { code: 'S1', name: 'Plant' })
  if (site.statusCode !== 201) throw new Error(`site create: ${site.statusCode} ${site.body}`)
  return { h, org, key, as, asMember: call(member) }
}

export async function addNode(as: As, id: string, nodeType: number, extra: Record<string, unknown> = {}, site = 'S1') {
  const res = await as('POST', `/api/sites/${site}/electrical/nodes`, { id, name: `Node ${id}`, nodeType, ...extra })
  if (res.statusCode !== 201) throw new Error(`node create ${id}: ${res.statusCode} ${res.body}`)
  return res.json() as Record<string, unknown>
}

export async function addEdge(as: As, sourceId: string, targetId: string, edgeType = 0, site = 'S1') {
  const res = await as('POST', `/api/sites/${site}/electrical/edges`, { sourceId, targetId, edgeType })
  if (res.statusCode !== 201) throw new Error(`edge create ${sourceId}->${targetId}: ${res.statusCode} ${res.body}`)
}

/** Every electrical row of the organisation, to prove a refused request changed nothing. */
export async function snapshot(h: Harness, org: Org): Promise<string> {
  const nodes = await h.handle.db.selectFrom('electrical_nodes').selectAll().where('org_id', '=', org.id).orderBy('site_code').orderBy('id').execute()
  const edges = await h.handle.db.selectFrom('electrical_edges').selectAll().where('org_id', '=', org.id)
    .orderBy('site_code').orderBy('source_id').orderBy('target_id').orderBy('edge_type').execute()
  return JSON.stringify({ nodes, edges })
}
