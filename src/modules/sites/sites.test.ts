import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { harness, testDialects, type Harness } from '../../../test/harness.ts'

async function setup(t: Parameters<typeof harness>[0], dialect: Parameters<typeof harness>[1]) {
  const h = await harness(t, dialect)
  const { org, key } = await h.orgWithKey('admin')
  const as = (method: string, url: string, payload?: unknown) => h.inject({ org, apiKey: key }, { method: method as 'GET', url, payload: payload as object })
  return { h, org, key, as }
}

const count = async (h: Harness, orgId: string) =>
  Number(
    (
      await h.handle.db
        .selectFrom('sites')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', orgId)
        .executeTakeFirstOrThrow()
    ).n,
  )

for (const dialect of testDialects()) {
  describe(`${dialect}: sites`, () => {
    it('create answers 201 with the site; defaults UTC and status 0; a duplicate code is 409', async (t) => {
      const { as } = await setup(t, dialect)
      const res = await as('POST', '/api/sites', { code: 'HV-CHPP_1', name: 'Hunter Valley CHPP' })
      assert.equal(res.statusCode, 201)
      assert.deepEqual(
        { ...(res.json() as object), createdAt: undefined, updatedAt: undefined },
        {
          code: 'HV-CHPP_1',
          name: 'Hunter Valley CHPP',
          description: null,
          location: null,
          timeZone: 'UTC',
          status: 0,
          statusName: 'Planned',
          createdAt: undefined,
          updatedAt: undefined,
        },
      )
      const dup = await as('POST', '/api/sites', { code: 'HV-CHPP_1', name: 'again' })
      assert.equal(dup.statusCode, 409)
      assert.equal(dup.json().code, 'Conflict')
    })

    it('code: 1 to 50 letters, digits, - and _; name 1 to 200; both required; a refused create writes nothing', async (t) => {
      const { h, org, as } = await setup(t, dialect)
      for (const [code, status] of [
        ['a', 201],
        ['x'.repeat(50), 201],
        ['x'.repeat(51), 400],
        ['', 400],
        ['has space', 400],
        ['dot.ted', 400],
        ['é', 400],
      ] as const) {
        assert.equal((await as('POST', '/api/sites', { code, name: 'n' })).statusCode, status, `code "${code}"`)
      }
      for (const [name, status] of [
        ['', 400],
        ['n'.repeat(200), 201],
        ['n'.repeat(201), 400],
      ] as const) {
        assert.equal((await as('POST', '/api/sites', { code: `N${name.length}`, name })).statusCode, status, `name of ${name.length}`)
      }
      const missing = await as('POST', '/api/sites', { name: 'no code' })
      assert.equal(missing.json().errors[0].pointer, '/code')
      assert.equal(await count(h, org.id), 3)
    })

    it('timeZone must be an IANA zone and status one of the documented codes', async (t) => {
      const { as } = await setup(t, dialect)
      assert.equal((await as('POST', '/api/sites', { code: 'tz1', name: 'n', timeZone: 'Australia/Sydney', status: 2 })).statusCode, 201)
      for (const timeZone of ['Mars/Olympus', '+05:00', 'UTC+5', '']) {
        const res = await as('POST', '/api/sites', { code: 'tz2', name: 'n', timeZone })
        assert.equal(res.statusCode, 400, timeZone)
        assert.equal(res.json().errors[0].pointer, '/timeZone')
      }
      for (const status of [-1, 6, 2.5, '2']) {
        assert.equal((await as('POST', '/api/sites', { code: 'st', name: 'n', status })).statusCode, 400, String(status))
      }
    })

    it('PUT changes only the fields present, a null clears a nullable field, and unknown fields are refused', async (t) => {
      const { as } = await setup(t, dialect)
      await as('POST', '/api/sites', { code: 'S1', name: 'Plant', description: 'wash plant', location: 'NSW', status: 1 })
      const res = await as('PUT', '/api/sites/S1', { description: null, status: 2 })
      assert.equal(res.statusCode, 200)
      const site = res.json()
      assert.equal(site.description, null)
      assert.equal(site.location, 'NSW')
      assert.equal(site.name, 'Plant')
      assert.equal(site.statusName, 'Operational')
      const bad = await as('PUT', '/api/sites/S1', { code: 'S2' })
      assert.equal(bad.statusCode, 400)
      assert.equal(bad.json().errors[0].pointer, '/code')
      assert.equal((await as('PUT', '/api/sites/S1', { name: null })).statusCode, 400, 'name is not nullable')
      assert.equal((await as('GET', '/api/sites/S1')).json().status, 2)
    })

    it('list is paged by code with a stable cursor; a bad cursor is a 400', async (t) => {
      const { as } = await setup(t, dialect)
      for (const code of ['C', 'A', 'E', 'B', 'D']) await as('POST', '/api/sites', { code, name: code })
      const first = (await as('GET', '/api/sites?limit=2')).json()
      assert.deepEqual(
        first.items.map((s: { code: string }) => s.code),
        ['A', 'B'],
      )
      const second = (await as('GET', `/api/sites?limit=2&cursor=${first.nextCursor}`)).json()
      assert.deepEqual(
        second.items.map((s: { code: string }) => s.code),
        ['C', 'D'],
      )
      const third = (await as('GET', `/api/sites?limit=2&cursor=${second.nextCursor}`)).json()
      assert.deepEqual(
        third.items.map((s: { code: string }) => s.code),
        ['E'],
      )
      assert.equal(third.nextCursor, null)
      assert.equal((await as('GET', '/api/sites?cursor=garbage')).statusCode, 400)
      assert.equal((await as('GET', '/api/sites?limit=0')).statusCode, 400)
      assert.equal((await as('GET', '/api/sites?limit=501')).statusCode, 400)
    })

    it("another organisation's site is the uniform 404 for read, update and delete, and is not changed", async (t) => {
      const { h, as } = await setup(t, dialect)
      const other = await h.orgWithKey('owner')
      await h.inject({ org: other.org, apiKey: other.key }, { method: 'POST', url: '/api/sites', payload: { code: 'THEIRS', name: 'Theirs' } })
      const missing = await as('GET', '/api/sites/NOPE')
      for (const [method, url, payload] of [
        ['GET', '/api/sites/THEIRS'],
        ['PUT', '/api/sites/THEIRS', { name: 'mine' }],
        ['DELETE', '/api/sites/THEIRS?confirm=THEIRS'],
      ] as const) {
        const res = await as(method, url, payload)
        assert.equal(res.statusCode, 404, `${method}`)
        assert.equal(res.json().detail, missing.json().detail)
      }
      const theirs = await h.inject({ org: other.org, apiKey: other.key }, { url: '/api/sites/THEIRS' })
      assert.equal(theirs.json().name, 'Theirs')
      const mine = (await as('GET', '/api/sites')).json()
      assert.equal(mine.items.length, 0)
    })

    it('DELETE without confirm equal to the code changes nothing and answers 409 ConfirmationRequired with counts; with it, 204', async (t) => {
      const { h, org, as } = await setup(t, dialect)
      await as('POST', '/api/sites', { code: 'GONE', name: 'n' })
      for (const url of ['/api/sites/GONE', '/api/sites/GONE?confirm=gone', '/api/sites/GONE?confirm=']) {
        const res = await as('DELETE', url)
        assert.equal(res.statusCode, 409)
        assert.equal(res.json().code, 'ConfirmationRequired')
        assert.equal(typeof res.json().wouldDelete, 'object')
      }
      assert.equal(await count(h, org.id), 1)
      assert.equal((await as('DELETE', '/api/sites/GONE?confirm=GONE')).statusCode, 204)
      assert.equal(await count(h, org.id), 0)
      assert.equal((await as('GET', '/api/sites/GONE')).statusCode, 404)
    })

    it('members read but cannot write (403)', async (t) => {
      const { h, org, as } = await setup(t, dialect)
      await as('POST', '/api/sites', { code: 'R', name: 'n' })
      const member = await h.mintKey(org, 'member')
      const m = (method: string, url: string, payload?: object) => h.inject({ org, apiKey: member.plaintext }, { method: method as 'GET', url, payload })
      assert.equal((await m('GET', '/api/sites/R')).statusCode, 200)
      assert.equal((await m('GET', '/api/sites')).statusCode, 200)
      assert.equal((await m('POST', '/api/sites', { code: 'X', name: 'n' })).statusCode, 403)
      assert.equal((await m('PUT', '/api/sites/R', { name: 'x' })).statusCode, 403)
      assert.equal((await m('DELETE', '/api/sites/R?confirm=R')).statusCode, 403)
    })
  })
}
