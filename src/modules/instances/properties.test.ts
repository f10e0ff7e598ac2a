import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { testDialects } from '../../../test/harness.ts'
import { arbitraryFromSchema, responseValidator } from '../../../test/support/schema-arbitrary.ts'
import { createController, equipmentSetup } from '../controllers/test-support.ts'
import { BulkReportSchema, CreateInstanceBody, InstancePage, InstanceSchema, UpdateInstanceBody } from './schemas.ts'

const RUNS = Number(process.env.SITEGRID_PROPERTY_RUNS ?? 60)
const URL = '/api/sites/S1/instances'

/** Most generated bodies name the real controller, so they get past the 422 and reach the write path. */
function withController(arb: fc.Arbitrary<unknown>, controllerId: string): fc.Arbitrary<unknown> {
  return fc.tuple(arb, fc.integer({ min: 0, max: 9 })).map(([body, roll]) => {
    if (roll < 8 && body !== null && typeof body === 'object' && !Array.isArray(body) && 'controllerId' in body) return { ...body, controllerId }
    return body
  })
}

for (const dialect of testDialects()) {
  describe(`${dialect}: instances, generated bodies`, () => {
    it('create, update and bulk never answer 5xx, and every 2xx body matches its documented schema', async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      const c = await createController(as)
      const validInstance = responseValidator(InstanceSchema)
      const validReport = responseValidator(BulkReportSchema)
      const statuses = new Map<number, number>()
      const check = async (res: Awaited<ReturnType<typeof as>>, valid: (v: unknown) => string | null, what: string) => {
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
        assert.ok(res.statusCode < 500, `${what}: ${res.statusCode} ${res.body}`)
        if (res.statusCode < 300) assert.equal(valid(res.json()), null, `${what}: ${res.body}`)
        else assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
      }
      await as('POST', URL, { id: 'TARGET', name: 'n', typeId: 't', assetNumber: 'a', controllerId: c.id })
      await fc.assert(
        fc.asyncProperty(withController(arbitraryFromSchema(CreateInstanceBody), c.id), async (body) => {
          await check(await as('POST', URL, body), validInstance, `create ${JSON.stringify(body)}`)
        }),
        { numRuns: RUNS },
      )
      await fc.assert(
        fc.asyncProperty(withController(arbitraryFromSchema(UpdateInstanceBody), c.id), async (body) => {
          await check(await as('PUT', `${URL}/TARGET`, body), validInstance, `update ${JSON.stringify(body)}`)
        }),
        { numRuns: RUNS },
      )
      const items = fc.array(withController(arbitraryFromSchema(CreateInstanceBody), c.id), { maxLength: 6 })
      await fc.assert(
        fc.asyncProperty(items, fc.boolean(), async (body, dryRun) => {
          await check(await as('POST', `${URL}/bulk?dryRun=${dryRun}`, body), validReport, `bulk ${JSON.stringify(body)}`)
        }),
        { numRuns: Math.ceil(RUNS / 2) },
      )
      assert.ok((statuses.get(201) ?? 0) > 0 && (statuses.get(200) ?? 0) > 0, `some generated bodies were accepted: ${JSON.stringify([...statuses])}`)
      assert.ok((statuses.get(400) ?? 0) > 0, 'some generated bodies were refused')
      const page = (await as('GET', `${URL}?limit=1000`)).json()
      assert.equal(responseValidator(InstancePage)(page), null)
      assert.equal((await as('GET', `/api/sites/S1/controllers/${c.id}`)).statusCode, 200, 'the poll budget still reads after all that')
    })
  })
}
