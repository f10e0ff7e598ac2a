import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { testDialects } from '../../../test/harness.ts'
import { arbitraryFromSchema, responseValidator } from '../../../test/support/schema-arbitrary.ts'
import { AssignControllerBody, ControllerPage, ControllerSchema, CreateControllerBody, UpdateControllerBody } from './schemas.ts'
import { createController, equipmentSetup } from './test-support.ts'

const RUNS = Number(process.env.SITEGRID_PROPERTY_RUNS ?? 60)
const URL = '/api/sites/S1/controllers'

for (const dialect of testDialects()) {
  describe(`${dialect}: controllers, generated bodies`, () => {
    it('create, update and assign never answer 5xx, and every 2xx body matches the documented Controller schema', async (t) => {
      const { as } = await equipmentSetup(t, dialect)
      const valid = responseValidator(ControllerSchema)
      const statuses = new Map<number, number>()
      const check = async (res: Awaited<ReturnType<typeof as>>, what: string) => {
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
        assert.ok(res.statusCode < 500, `${what}: ${res.statusCode} ${res.body}`)
        if (res.statusCode < 300) assert.equal(valid(res.json()), null, `${what}: ${res.body}`)
        else assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
      }
      const target = await createController(as)
      await fc.assert(
        fc.asyncProperty(arbitraryFromSchema(CreateControllerBody), async (body) => {
          await check(await as('POST', URL, body), `create ${JSON.stringify(body)}`)
        }),
        { numRuns: RUNS },
      )
      await fc.assert(
        fc.asyncProperty(arbitraryFromSchema(UpdateControllerBody), async (body) => {
          await check(await as('PUT', `${URL}/${target.id}`, body), `update ${JSON.stringify(body)}`)
        }),
        { numRuns: RUNS },
      )
      await fc.assert(
        fc.asyncProperty(arbitraryFromSchema(AssignControllerBody), async (body) => {
          await check(await as('POST', `${URL}/${target.id}/assign`, body), `assign ${JSON.stringify(body)}`)
        }),
        { numRuns: Math.ceil(RUNS / 2) },
      )
      assert.ok((statuses.get(201) ?? 0) > 0 && (statuses.get(200) ?? 0) > 0, `some generated bodies were accepted: ${JSON.stringify([...statuses])}`)
      assert.ok((statuses.get(400) ?? 0) > 0, 'some generated bodies were refused')
      const page = (await as('GET', `${URL}?limit=500`)).json()
      assert.equal(responseValidator(ControllerPage)(page), null)
    })
  })
}
