import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { addEdge, addNode, BASE, electricalSetup, snapshot } from './test-support.ts'

const pointers = (body: string) => ((JSON.parse(body) as { errors?: Array<{ pointer: string }> }).errors ?? []).map((e) => e.pointer)

for (const dialect of testDialects()) {
  describe(`${dialect}: electrical edges`, () => {
    it('create: 201 with the triple; both ends must be nodes of the site (422 naming each end)', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      await addNode(as, 'B', 3)
      const res = await as('POST', `${BASE}/edges`, { sourceId: 'A', targetId: 'B', edgeType: 0 })
      assert.equal(res.statusCode, 201, res.body)
      assert.deepEqual(
        { ...(res.json() as object), createdAt: undefined },
        { sourceId: 'A', targetId: 'B', edgeType: 0, edgeTypeName: 'Cable', createdAt: undefined },
      )
      const before = await snapshot(h, org)
      for (const [body, expected] of [
        [{ sourceId: 'X', targetId: 'B', edgeType: 1 }, ['/sourceId']],
        [{ sourceId: 'A', targetId: 'Y', edgeType: 1 }, ['/targetId']],
        [{ sourceId: 'X', targetId: 'Y', edgeType: 1 }, ['/sourceId', '/targetId']],
        [{ sourceId: '', targetId: 'B', edgeType: 1 }, ['/sourceId']],
        [{ sourceId: 'A', targetId: 'z'.repeat(50), edgeType: 1 }, ['/targetId']],
      ] as const) {
        const r = await as('POST', `${BASE}/edges`, body)
        assert.equal(r.statusCode, 422, r.body)
        assert.deepEqual(pointers(r.body), expected)
      }
      assert.equal((await as('POST', '/api/sites', { code: 'S2', name: 'Other' })).statusCode, 201)
      await addNode(as, 'Q', 3, {}, 'S2')
      assert.equal(
        (await as('POST', `${BASE}/edges`, { sourceId: 'A', targetId: 'Q', edgeType: 0 })).statusCode,
        422,
        'a node of another site is not a node of this one',
      )
      assert.equal(await snapshot(h, org).then((s) => s.includes('"target_id":"Q"')), false)
      assert.equal((JSON.parse(await snapshot(h, org)) as { edges: unknown[] }).edges.length, (JSON.parse(before) as { edges: unknown[] }).edges.length)
    })

    it('create: bounds (ends 0 to 50 characters, edgeType 0 to 4), self-loop 422, duplicate triple 409, reverse direction is another edge', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      const long = 'L'.repeat(50)
      await addNode(as, 'A', 0)
      await addNode(as, long, 3)
      const cases: Array<[Record<string, unknown>, number]> = [
        [{ sourceId: 'A', targetId: long, edgeType: -1 }, 400],
        [{ sourceId: 'A', targetId: long, edgeType: 0 }, 201],
        [{ sourceId: 'A', targetId: long, edgeType: 4 }, 201],
        [{ sourceId: 'A', targetId: long, edgeType: 5 }, 400],
        [{ sourceId: 'A', targetId: `${long}L`, edgeType: 1 }, 400],
        [{ sourceId: `${long}L`, targetId: 'A', edgeType: 1 }, 400],
        [{ sourceId: long, targetId: 'A', edgeType: 1 }, 201],
        [{ sourceId: 'A', targetId: long, edgeType: 1.5 }, 400],
        [{ sourceId: 'A', targetId: long }, 400],
        [{ sourceId: 'A', targetId: long, edgeType: 2, extra: 1 }, 400],
      ]
      for (const [body, status] of cases) {
        const before = await snapshot(h, org)
        const res = await as('POST', `${BASE}/edges`, body)
        assert.equal(res.statusCode, status, `${JSON.stringify(body).slice(0, 80)}: ${res.body}`)
        if (status !== 201) assert.equal(await snapshot(h, org), before)
      }
      const before = await snapshot(h, org)
      const loop = await as('POST', `${BASE}/edges`, { sourceId: 'A', targetId: 'A', edgeType: 0 })
      assert.equal(loop.statusCode, 422)
      assert.deepEqual(pointers(loop.body), ['/targetId'])
      const dup = await as('POST', `${BASE}/edges`, { sourceId: 'A', targetId: long, edgeType: 0 })
      assert.equal(dup.statusCode, 409)
      assert.equal(await snapshot(h, org), before)
      assert.equal(
        (await as('POST', `${BASE}/edges`, { sourceId: long, targetId: 'A', edgeType: 0 })).statusCode,
        201,
        'the reverse triple is a different edge',
      )
    })

    it('delete: all of source, target, type required (400 naming the missing one); 204 then the uniform 404', async (t) => {
      const { h, org, as } = await electricalSetup(t, dialect)
      await addNode(as, 'A', 0)
      await addNode(as, 'B', 3)
      await addEdge(as, 'A', 'B', 2)
      await addEdge(as, 'A', 'B', 0)
      const before = await snapshot(h, org)
      for (const [query, missing] of [
        ['target=B&type=2', '/source'],
        ['source=A&type=2', '/target'],
        ['source=A&target=B', '/type'],
        ['', '/source'],
      ] as const) {
        const res = await as('DELETE', `${BASE}/edges?${query}`)
        assert.equal(res.statusCode, 400, res.body)
        assert.ok(pointers(res.body).includes(missing), `${query}: ${res.body}`)
        assert.equal(res.json().errors[0].in, 'query')
      }
      for (const type of ['5', '-1', 'x', '1.0', 'Cables']) {
        const res = await as('DELETE', `${BASE}/edges?source=A&target=B&type=${type}`)
        assert.equal(res.statusCode, 400, type)
        assert.deepEqual(pointers(res.body), ['/type'])
      }
      assert.equal(await snapshot(h, org), before)
      const missing = await as('DELETE', `${BASE}/edges?source=B&target=A&type=2`)
      assert.equal(missing.statusCode, 404, 'direction is part of the identity')
      assert.equal((await as('DELETE', `${BASE}/edges?source=A&target=B&type=1`)).statusCode, 404)
      assert.equal(await snapshot(h, org), before)
      assert.equal((await as('DELETE', `${BASE}/edges?source=A&target=B&type=2`)).statusCode, 204)
      assert.equal((await as('DELETE', `${BASE}/edges?source=A&target=B&type=2`)).statusCode, 404)
      assert.equal((await as('DELETE', `${BASE}/edges?source=A&target=B&type=cable`)).statusCode, 204, 'the type may be named')
      assert.deepEqual((await as('GET', `${BASE}/edges`)).json(), { items: [], nextCursor: null })
    })

    it('list: paged by (source, target, type); nodeId keeps the edges touching one node', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      for (const id of ['a', 'b', 'c']) await addNode(as, id, 3)
      await addEdge(as, 'b', 'c', 1)
      await addEdge(as, 'a', 'b', 2)
      await addEdge(as, 'a', 'b', 0)
      await addEdge(as, 'a', 'c', 0)
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const page = (await as('GET', `${BASE}/edges?limit=1${cursor ? `&cursor=${cursor}` : ''}`)).json() as {
          items: Array<{ sourceId: string; targetId: string; edgeType: number }>
          nextCursor: string | null
        }
        seen.push(...page.items.map((e) => `${e.sourceId}${e.targetId}${e.edgeType}`))
        cursor = page.nextCursor
      } while (cursor)
      assert.deepEqual(seen, ['ab0', 'ab2', 'ac0', 'bc1'])
      const touching = (await as('GET', `${BASE}/edges?nodeId=c`)).json().items.map((e: { sourceId: string; targetId: string }) => `${e.sourceId}${e.targetId}`)
      assert.deepEqual(touching, ['ac', 'bc'])
    })
  })
}
