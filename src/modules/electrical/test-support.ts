import type { TestContext } from 'node:test'
import { harness, type Harness, type TestDialect } from '../../../test/harness.ts'
import type { Org } from '../../identity.ts'

export type As = (method: string, url: string, payload?: unknown) => ReturnType<Harness['inject']>

export const BASE = '/api/sites/S1/electrical'

/** An organisation with an admin key, a member key and one site `S1`; `as` calls with the admin key. */
export async function electricalSetup(t: TestContext, dialect: TestDialect, env: Record<string, string> = {}) {
  const h = await harness(t, dialect, env)
  const { org, key } = await h.orgWithKey('admin')
  const member = (await h.mintKey(org, 'member')).plaintext
  const call =
    (apiKey: string): As =>
    (method, url, payload) =>
      h.inject(
        { org, apiKey },
        typeof payload === 'string'
          ? { method: method as 'GET', url, payload, headers: { 'content-type': 'application/json' } }
          : { method: method as 'GET', url, payload: payload as object },
      )
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

/**
 * A radial feeder: grid → transformer → main switchboard → CB1 → MCC → CB2 → motor M1 (and CB3 → M2),
 * plus a spare feeder ISO connected to nothing.
 */
export const RADIAL = {
  nodes: [
    { id: 'G', name: 'Grid 11 kV', nodeType: 0, ratedVoltageV: 11000 },
    { id: 'TX', name: 'TX1 11/0.415 kV', nodeType: 2, ratedPowerKw: 1500, protectionCurve: 'IEC SI' },
    { id: 'MSB', name: 'Main switchboard', nodeType: 3, ratedVoltageV: 415 },
    { id: 'CB1', name: 'MCC incomer', nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 400, protectionTms: 0.3 },
    { id: 'MCC', name: 'MCC-1', nodeType: 4, ratedVoltageV: 415 },
    { id: 'CB2', name: 'Conveyor starter', nodeType: 5, protectionCurve: 'iec standard inverse', protectionPickupA: 100, protectionTms: 0.1 },
    { id: 'M1', name: 'Conveyor motor', nodeType: 8, ratedPowerKw: 55, cableLengthM: 80 },
    { id: 'CB3', name: 'Pump starter', nodeType: 5 },
    { id: 'M2', name: 'Pump motor', nodeType: 8, ratedPowerKw: 30 },
    { id: 'ISO', name: 'Spare feeder', nodeType: 10 },
  ],
  edges: [
    { sourceId: 'G', targetId: 'TX', edgeType: 3 },
    { sourceId: 'TX', targetId: 'MSB', edgeType: 3 },
    { sourceId: 'MSB', targetId: 'CB1', edgeType: 2 },
    { sourceId: 'CB1', targetId: 'MCC', edgeType: 0 },
    { sourceId: 'MCC', targetId: 'CB2', edgeType: 2 },
    { sourceId: 'CB2', targetId: 'M1', edgeType: 0 },
    { sourceId: 'MCC', targetId: 'CB3', edgeType: 2 },
    { sourceId: 'CB3', targetId: 'M2', edgeType: 0 },
  ],
}

/** Replaces site S1's network through the API. */
export async function loadNetwork(as: As, network: { nodes: object[]; edges: object[] }) {
  const res = await as('PUT', `${BASE}/network`, network)
  if (res.statusCode !== 200) throw new Error(`network load: ${res.statusCode} ${res.body}`)
}

/** Every electrical row of the organisation, to prove a refused request changed nothing. */
export async function snapshot(h: Harness, org: Org): Promise<string> {
  const nodes = await h.handle.db.selectFrom('electrical_nodes').selectAll().where('org_id', '=', org.id).orderBy('site_code').orderBy('id').execute()
  const edges = await h.handle.db
    .selectFrom('electrical_edges')
    .selectAll()
    .where('org_id', '=', org.id)
    .orderBy('site_code')
    .orderBy('source_id')
    .orderBy('target_id')
    .orderBy('edge_type')
    .execute()
  return JSON.stringify({ nodes, edges })
}
