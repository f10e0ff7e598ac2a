import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects, type Harness } from '../../../test/harness.ts'
import type { Org } from '../../identity.ts'
import { controllerBody, createController, equipmentSetup, rowCount, snapshot } from './test-support.ts'

const URL = '/api/sites/S1/controllers'

/** The organisation's controllers, instances and audit events: a dry run must leave all three as they were. */
async function everything(h: Harness, org: Org): Promise<string> {
  const audit = await h.handle.db
    .selectFrom('audit_events')
    .select(['action', 'target'])
    .where('org_id', '=', org.id)
    .orderBy('action')
    .orderBy('target')
    .execute()
  return `${await snapshot(h, org)}${JSON.stringify(audit)}`
}

/** A problem without its request id, to compare a dry run's refusal with the save's. */
const problem = (res: { statusCode: number; json(): Record<string, unknown> }) => {
  const { instance: _instance, ...rest } = res.json()
  return { status: res.statusCode, ...rest }
}

for (const dialect of testDialects()) {
  describe(`${dialect}: controller dry runs (dryRun=true on create and update)`, () => {
    it('create: answers 200 with the controller as it would be (route explained, defaults), writes nothing, and refuses what create refuses with the same problem', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      await createController(as, 'S1', { assetNumber: 'PLC-TAKEN' })
      const before = await everything(h, org)

      const dry = await as('POST', `${URL}?dryRun=true`, controllerBody({ name: 'Stacker PLC', assetNumber: 'PLC-NEW' }, { cipPath: '2,10.0.0.5,1,0' }))
      assert.equal(dry.statusCode, 200)
      const c = dry.json()
      assert.equal(c.name, 'Stacker PLC')
      assert.equal(c.assetNumber, 'PLC-NEW')
      assert.equal(c.connection.port, 44818)
      assert.equal(c.connection.pollIntervalMs, 1000)
      assert.match(c.cipRoute.explanation, /Ethernet\) to 10\.0\.0\.5, then backplane, slot 0/)
      assert.deepEqual(c.pollBudget.warnings, [])
      assert.equal(await everything(h, org), before, 'a dry run writes nothing')
      assert.equal(await rowCount(h, 'controllers', org.id), 1)

      const refused: Array<[string, Record<string, unknown>, number]> = [
        ['malformed CIP route', controllerBody({}, { cipPath: '1,17' }), 400],
        ['not an address', controllerBody({}, { ipAddress: 'not an address!' }), 400],
        ['schema: pollIntervalMs below 100', controllerBody({}, { pollIntervalMs: 50 }), 400],
        ['duplicate asset number', controllerBody({ assetNumber: 'PLC-TAKEN' }), 409],
      ]
      for (const [what, body, status] of refused) {
        const asDry = await as('POST', `${URL}?dryRun=true`, body)
        assert.equal(asDry.statusCode, status, what)
        const asSave = await as('POST', URL, body)
        assert.deepEqual(problem(asDry), problem(asSave), what)
      }
      assert.equal((await as('POST', '/api/sites/NOPE/controllers?dryRun=true', controllerBody())).statusCode, 404)
      assert.equal((await as('POST', `${URL}?dryRun=maybe`, controllerBody())).statusCode, 400, 'dryRun is a boolean')
      assert.equal(await everything(h, org), before, 'nothing written by the refusals either')
    })

    it("update: answers the controller as it would be with its instances' poll budget warnings, writes nothing, and refuses what update refuses", async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const c = await createController(as, 'S1', {}, { cipPath: '1,0' })
      const inst = await as('POST', '/api/sites/S1/instances', {
        id: 'CV-1',
        name: 'Conveyor 1',
        typeId: 'conveyor',
        assetNumber: 'A-CV-1',
        controllerId: c.id,
        tagMappings: { running: 'Program:Main.CV1.Run' },
      })
      assert.equal(inst.statusCode, 201)
      const stored = (await as('GET', `${URL}/${c.id}`)).json()
      const before = await everything(h, org)

      const dry = await as('PUT', `${URL}/${c.id}?dryRun=true`, { name: 'Renamed', connection: { timeoutMs: 30000, cipPath: '1,4' } })
      assert.equal(dry.statusCode, 200)
      const would = dry.json()
      assert.equal(would.name, 'Renamed')
      assert.equal(would.connection.timeoutMs, 30000)
      assert.equal(would.cipRoute.explanation, 'From the module at ipAddress: backplane, slot 4.')
      assert.equal(would.pollBudget.mappedTags, 1)
      assert.deepEqual(
        would.pollBudget.warnings.map((w: { code: string }) => w.code),
        ['SlowFailureDetection'],
      )
      assert.deepEqual((await as('GET', `${URL}/${c.id}`)).json(), stored, 'the stored controller is unchanged')
      assert.equal(await everything(h, org), before, 'a dry run writes nothing')

      for (const body of [{ connection: { cipPath: '1,0,2' } }, { connection: { port: 70000 } }, { platform: 9 }]) {
        const asDry = await as('PUT', `${URL}/${c.id}?dryRun=true`, body)
        assert.equal(asDry.statusCode, 400, JSON.stringify(body))
        assert.deepEqual(problem(asDry), problem(await as('PUT', `${URL}/${c.id}`, body)), JSON.stringify(body))
      }
      assert.equal((await as('PUT', `${URL}/ctl_nope?dryRun=true`, { name: 'x' })).statusCode, 404)
      assert.equal(await everything(h, org), before)

      // Without dryRun the same body is saved.
      const saved = await as('PUT', `${URL}/${c.id}`, { name: 'Renamed', connection: { timeoutMs: 30000, cipPath: '1,4' } })
      assert.equal(saved.statusCode, 200)
      assert.deepEqual({ ...(saved.json() as object), updatedAt: null }, { ...would, updatedAt: null })
    })
  })
}
