import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { harness, type Harness, type TestDialect } from '../../../test/harness.ts'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
export type Call = (method: Method, url: string, payload?: unknown) => ReturnType<Harness['inject']>

export interface Ev {
  eventId: string
  instanceId: string
  condition: string
  priority: string
  state: 'active' | 'normal'
  occurredAt: string
  value?: number
}

export const MIN = 60_000

export async function addInstances(as: Call, site: string, ids: string[]): Promise<void> {
  const ctl = await as('POST', `/api/sites/${site}/controllers`, {
    name: 'PLC 1',
    platform: 0,
    assetNumber: `PLC-${site}`,
    connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' },
  })
  assert.equal(ctl.statusCode, 201, ctl.body)
  const controllerId = ctl.json() as { id?: string; controllerId?: string }
  const cid = controllerId.controllerId ?? controllerId.id
  for (const id of ids) {
    const res = await as('POST', `/api/sites/${site}/instances`, { id, name: id, typeId: 'conveyor', assetNumber: `A-${id}`, controllerId: cid })
    assert.equal(res.statusCode, 201, res.body)
  }
}

/** An org with an admin and a member key, site S1 with instances P1 to P3, and helpers to post events and read alarms. */
export async function setup(t: TestContext, dialect: TestDialect, env: Record<string, string> = {}, options: Parameters<typeof harness>[3] = {}) {
  const h = await harness(t, dialect, env, options)
  const { org, key } = await h.orgWithKey('admin')
  const memberKey = (await h.mintKey(org, 'member')).plaintext
  const admin: Call = (method, url, payload) => h.inject({ org, apiKey: key }, { method, url, payload: payload as object })
  const member: Call = (method, url, payload) => h.inject({ org, apiKey: memberKey }, { method, url, payload: payload as object })
  assert.equal((await admin('POST', '/api/sites', { code: 'S1', name: 'Site 1' })).statusCode, 201)
  await addInstances(admin, 'S1', ['P1', 'P2', 'P3'])
  const t0 = Math.floor(h.clock.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000
  let n = 0
  const ev = (instanceId: string, condition: string, state: 'active' | 'normal', at: number, priority = 'high'): Ev => ({
    eventId: `e${n++}`,
    instanceId,
    condition,
    priority,
    state,
    occurredAt: new Date(at).toISOString(),
  })
  const post = async (events: Ev[]) => {
    const res = await member('POST', '/api/sites/S1/alarms/events', { events })
    assert.equal(res.statusCode, 200, res.body)
    return res.json() as {
      accepted: number
      duplicates: number
      refused: number
      results: Array<{ eventId: string; status: string; alarmId: string | null; code?: string }>
    }
  }
  const read = async (alarmId: string) => {
    const res = await member('GET', `/api/sites/S1/alarms/${alarmId}`)
    assert.equal(res.statusCode, 200, res.body)
    return res.json() as {
      state: string
      isActive: boolean
      isAcknowledged: boolean
      activationCount: number
      shelvedUntil: string | null
      history: Array<{
        seq: number
        action: string
        fromState: string
        toState: string
        actorKind: string
        actorId: string
        at: string
        comment: string | null
      }>
    }
  }
  const rows = async (table: 'alarms' | 'alarm_events' | 'alarm_history' | 'alarm_shelves') =>
    Number(
      (
        await h.handle.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('org_id', '=', org.id)
          .executeTakeFirstOrThrow()
      ).n,
    )
  return { h, org, admin, member, ev, post, read, rows, t0 }
}

export const future = (h: Harness, ms: number) => new Date(h.clock.now() + ms).toISOString()
