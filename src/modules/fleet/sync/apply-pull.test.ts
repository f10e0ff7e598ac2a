import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { harness } from '../../../../test/harness.ts'
import { LinkChangeRefused } from '../errors.ts'
import { applyPull, CLOUD_PEER } from './apply-pull.ts'
import { rowKey, type Change, type Cursor } from './outbox-port.ts'
import { alarmEventRow, change, commandRow, controllerRow, countRows, siteRow } from './test-support.ts'

/** A site server (SQLite) of one organisation serving S1; the organisation also has S2 elsewhere. */
async function site(t: TestContext) {
  const h = await harness(t, 'sqlite')
  const org = await h.createOrg()
  const db = h.handle.db
  await db
    .insertInto('sites')
    .values(siteRow(org.id, 'S1') as never)
    .execute()
  const deps = { handle: h.handle, clock: h.clock }
  const pull = (changes: Change[], next?: Cursor) =>
    applyPull(deps, { orgId: org.id, serverId: 'srv_pit', sites: ['S1'], epoch: 'ep1', changes, ...(next ? { next } : {}) })
  const base = async (id: string) =>
    (
      await db
        .selectFrom('link_base')
        .select('version')
        .where('org_id', '=', org.id)
        .where('table_name', '=', 'controllers')
        .where('row_key', '=', rowKey(['S1', id]))
        .executeTakeFirst()
    )?.version
  const mark = () => db.selectFrom('link_marks').select(['tx', 'seq']).where('org_id', '=', org.id).where('peer', '=', CLOUD_PEER).executeTakeFirst()
  const controller = (id: string) => db.selectFrom('controllers').selectAll().where('org_id', '=', org.id).where('id', '=', id).executeTakeFirst()
  return { h, org, db, pull, base, mark, controller }
}

describe('fleet sync, a site server applies a pull (sqlite)', () => {
  it('applies the cloud changes once, remembers their version as the base, and moves the mark', async (t) => {
    const s = await site(t)
    const v1 = controllerRow(s.org.id, 'S1', 'plc1')
    const v2 = controllerRow(s.org.id, 'S1', 'plc1', { ip_address: '10.1.1.1' })
    const page = [
      change(40, 'controllers', v1, { tx: 7 }),
      change(41, 'controllers', controllerRow(s.org.id, 'S1', 'plc2'), { tx: 7 }),
      change(45, 'controllers', v2, { tx: 9 }),
    ]
    assert.deepEqual(await s.pull(page), { mark: { tx: 9, seq: 45 }, applied: 3, skipped: 0 })
    assert.deepEqual(await s.controller('plc1'), v2)
    assert.equal(await s.base('plc1'), 45)
    assert.equal(await s.base('plc2'), 41)
    assert.deepEqual(await s.mark(), { tx: 9, seq: 45 })
    // The same page again changes nothing, even over a local edit made since: skipped by the mark.
    await s.db.updateTable('controllers').set({ name: 'edited on site' }).where('org_id', '=', s.org.id).where('id', '=', 'plc1').execute()
    assert.deepEqual(await s.pull(page), { mark: { tx: 9, seq: 45 }, applied: 0, skipped: 3 })
    assert.equal((await s.controller('plc1'))!.name, 'edited on site')
    // A tombstone deletes the row and its base; an empty page moves the mark to the answer's `next`.
    assert.equal((await s.pull([change(50, 'controllers', v2, { op: 'delete', tx: 10 })])).applied, 1)
    assert.equal(await s.controller('plc1'), undefined)
    assert.equal(await s.base('plc1'), undefined)
    assert.deepEqual((await s.pull([], { tx: 12, seq: 60 })).mark, { tx: 12, seq: 60 })
    assert.deepEqual(await s.mark(), { tx: 12, seq: 60 })
  })

  it('the cloud wins on the site: its version replaces a local edit', async (t) => {
    const s = await site(t)
    await s.db
      .insertInto('controllers')
      .values(controllerRow(s.org.id, 'S1', 'plc1', { name: 'site edit' }) as never)
      .execute()
    const cloud = controllerRow(s.org.id, 'S1', 'plc1', { name: 'cloud version' })
    await s.pull([change(5, 'controllers', cloud)])
    assert.deepEqual(await s.controller('plc1'), cloud)
    assert.equal(await s.base('plc1'), 5)
  })

  it('a forwarded command the site settled stays settled when the cloud sends it again as pending', async (t) => {
    const s = await site(t)
    const settled = commandRow(s.org.id, 'S1', 'cmd_1', { status: 'applied', result: '{}', settled_at: 5 })
    await s.db
      .insertInto('link_commands')
      .values(settled as never)
      .execute()
    const answer = await s.pull([
      change(1, 'link_commands', commandRow(s.org.id, 'S1', 'cmd_1')),
      change(2, 'link_commands', commandRow(s.org.id, 'S1', 'cmd_2')),
    ])
    assert.equal(answer.applied, 2)
    const rows = await s.db.selectFrom('link_commands').selectAll().where('org_id', '=', s.org.id).orderBy('id').execute()
    assert.deepEqual(rows, [settled, commandRow(s.org.id, 'S1', 'cmd_2')])
  })

  it("refuses a page holding the site's own tables, another site's rows, another organisation's or a row its area's rules refuse, and changes nothing", async (t) => {
    const s = await site(t)
    const good = change(1, 'controllers', controllerRow(s.org.id, 'S1', 'plc1'))
    const other = await s.h.createOrg()
    for (const [bad, rule] of [
      [change(2, 'alarm_events', alarmEventRow(s.org.id, 'S1', 'ev1')), /does not send/],
      [change(2, 'controllers', controllerRow(s.org.id, 'S2', 'plc2')), /not one of this link's sites/],
      [change(2, 'controllers', controllerRow(other.id, 'S1', 'plc2')), /another organisation/],
      // A value of the right type that breaks a rule of the controllers' endpoints (tenant-transfer/tables.ts `rules`).
      [change(2, 'controllers', controllerRow(s.org.id, 'S1', 'plc2', { platform: 77 })), /^breaks a rule of its field: platform must be one of 0 \(Generic\)/],
    ] as const) {
      await assert.rejects(
        s.pull([good, bad]),
        (e: unknown) => e instanceof LinkChangeRefused && e.extensions?.index === 1 && rule.test(String(e.extensions?.rule)),
      )
    }
    assert.equal(await countRows(s.db, 'controllers', s.org.id), 0)
    assert.equal(await countRows(s.db, 'link_base', s.org.id), 0)
    assert.equal(await s.mark(), undefined)
  })
})
