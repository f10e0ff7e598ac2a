import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { bodyFingerprint, IDEMPOTENCY_STALE_MS, IDEMPOTENCY_TTL_MS } from '../../src/http/idempotency.ts'
import { setUpAi } from '../../src/modules/ai/route-test-setup.ts'
import { controllerBody, equipmentSetup, rowCount } from '../../src/modules/controllers/test-support.ts'
import type { Org } from '../../src/identity.ts'
import { harness, testDialects, type Harness } from '../harness.ts'

const keyRows = async (h: Harness, org: Org) => h.handle.db.selectFrom('idempotency_keys').selectAll().where('org_id', '=', org.id).execute()

for (const dialect of testDialects()) {
  describe(`${dialect}: Idempotency-Key`, () => {
    it('a retry with the same key and body replays the first answer (Idempotent-Replayed: true) and creates nothing more', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const body = controllerBody()
      const first = await as('POST', '/api/sites/S1/controllers', body, { 'idempotency-key': 'create-crusher-1' })
      const again = await as('POST', '/api/sites/S1/controllers', body, { 'idempotency-key': 'create-crusher-1' })
      assert.equal(first.statusCode, 201)
      assert.equal(first.headers['idempotent-replayed'], undefined)
      assert.equal(again.statusCode, 201)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.equal(again.body, first.body)
      assert.equal(again.headers['content-type'], first.headers['content-type'])
      assert.equal(await rowCount(h, 'controllers', org.id), 1)
      const rows = await keyRows(h, org)
      assert.equal(rows.length, 1)
      assert.equal(rows[0]!.state, 'done')
      assert.ok(!String(rows[0]!.body).includes('Crusher PLC'), 'the stored answer is sealed, not plain text')
    })

    it('the same fields in another order are the same request (canonical JSON fingerprint)', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const body = controllerBody()
      const reordered = Object.fromEntries(Object.entries(body).reverse())
      assert.equal((await as('POST', '/api/sites/S1/controllers', body, { 'idempotency-key': 'k-order' })).statusCode, 201)
      const again = await as('POST', '/api/sites/S1/controllers', reordered, { 'idempotency-key': 'k-order' })
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.equal(await rowCount(h, 'controllers', org.id), 1)
    })

    it('the same key with another body or on another path is a 422 IdempotencyKeyReused and changes nothing', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      assert.equal((await as('POST', '/api/sites/S1/controllers', controllerBody(), { 'idempotency-key': 'k-reuse' })).statusCode, 201)
      const otherBody = await as('POST', '/api/sites/S1/controllers', controllerBody(), { 'idempotency-key': 'k-reuse' })
      assert.equal(otherBody.statusCode, 422)
      assert.equal(otherBody.json().code, 'IdempotencyKeyReused')
      const otherPath = await as('POST', '/api/sites', { code: 'S2', name: 'Other' }, { 'idempotency-key': 'k-reuse' })
      assert.equal(otherPath.statusCode, 422)
      assert.equal(otherPath.json().code, 'IdempotencyKeyReused')
      assert.equal(await rowCount(h, 'controllers', org.id), 1)
      assert.equal((await as('GET', '/api/sites/S2')).statusCode, 404, 'the refused site was not created')
    })

    it('keys are scoped per organisation: another organisation with the same key executes its own request', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const other = await h.orgWithKey('admin')
      const asOther = (payload: unknown) =>
        h.inject(
          { org: other.org, apiKey: other.key },
          { method: 'POST', url: '/api/sites', payload: payload as object, headers: { 'idempotency-key': 'shared-key' } },
        )
      const mine = await as('POST', '/api/sites', { code: 'S9', name: 'Mine' }, { 'idempotency-key': 'shared-key' })
      const theirs = await asOther({ code: 'S9', name: 'Mine' })
      assert.equal(mine.statusCode, 201)
      assert.equal(theirs.statusCode, 201)
      assert.equal(theirs.headers['idempotent-replayed'], undefined)
      assert.equal((await keyRows(h, org)).length, 1)
      assert.equal((await keyRows(h, other.org)).length, 1)
      // The other organisation's different body under the same key is judged against its own record only.
      const theirsAgain = await asOther({ code: 'S9', name: 'Mine' })
      assert.equal(theirsAgain.headers['idempotent-replayed'], 'true')
    })

    it("an answer is replayed to the credential that made the request only: another key of the organisation gets 422 and changes nothing; a row stored before 2650 (no caller) keeps the organisation's scope", async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const colleague = await h.mintKey(org, 'admin', { name: 'colleague' })
      const asColleague = (payload: object, key: string) =>
        h.inject({ org, apiKey: colleague.plaintext }, { method: 'POST', url: '/api/sites', payload, headers: { 'idempotency-key': key } })
      const mine = await as('POST', '/api/sites', { code: 'S7', name: 'Mine' }, { 'idempotency-key': 'site-s7' })
      assert.equal(mine.statusCode, 201)
      const theirs = await asColleague({ code: 'S7', name: 'Mine' }, 'site-s7')
      assert.equal(theirs.statusCode, 422, theirs.body)
      assert.equal(theirs.json().code, 'IdempotencyKeyReused')
      assert.equal(theirs.headers['idempotent-replayed'], undefined)
      assert.match(theirs.json().detail, /another credential/)
      assert.equal((await as('POST', '/api/sites', { code: 'S7', name: 'Mine' }, { 'idempotency-key': 'site-s7' })).headers['idempotent-replayed'], 'true')
      const [row] = await keyRows(h, org)
      assert.match(String(row!.caller), /^apiKey:/, 'the row names its caller')
      // A row an earlier version stored has no caller: any credential passing the policy replays it, until it expires.
      assert.equal((await as('POST', '/api/sites', { code: 'S8', name: 'Old' }, { 'idempotency-key': 'site-s8' })).statusCode, 201)
      await h.handle.db.updateTable('idempotency_keys').set({ caller: null }).where('org_id', '=', org.id).where('key', '=', 'site-s8').execute()
      assert.equal((await asColleague({ code: 'S8', name: 'Old' }, 'site-s8')).headers['idempotent-replayed'], 'true')
      assert.equal((await keyRows(h, org)).length, 2, 'nothing more stored')
    })

    it('a key expires 24 hours after first use: until then it replays, after it the request executes anew and the old record is pruned', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const body = controllerBody()
      assert.equal((await as('POST', '/api/sites/S1/controllers', body, { 'idempotency-key': 'k-ttl' })).statusCode, 201)
      h.clock.advance(IDEMPOTENCY_TTL_MS - 1)
      assert.equal((await as('POST', '/api/sites/S1/controllers', body, { 'idempotency-key': 'k-ttl' })).headers['idempotent-replayed'], 'true')
      assert.equal(await rowCount(h, 'controllers', org.id), 1)
      h.clock.advance(1)
      const later = await as('POST', '/api/sites/S1/controllers', { ...body, assetNumber: 'A-after-ttl' }, { 'idempotency-key': 'k-ttl' })
      assert.equal(later.statusCode, 201, 'an expired key is free for another body')
      assert.equal(later.headers['idempotent-replayed'], undefined)
      assert.equal(await rowCount(h, 'controllers', org.id), 2)
      const rows = await keyRows(h, org)
      assert.equal(rows.length, 1)
      assert.equal(Number(rows[0]!.created_at), h.clock.now())
    })

    it('expired keys of the organisation are pruned when a new key is claimed', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      for (const key of ['old-1', 'old-2', 'old-3']) await as('POST', '/api/sites', { code: key, name: 'n' }, { 'idempotency-key': key })
      assert.equal((await keyRows(h, org)).length, 3)
      h.clock.advance(IDEMPOTENCY_TTL_MS)
      await as('POST', '/api/sites', { code: 'new-1', name: 'n' }, { 'idempotency-key': 'new-1' })
      assert.deepEqual(
        (await keyRows(h, org)).map((r) => r.key),
        ['new-1'],
      )
    })

    it('a schema validation failure is not stored (nothing began executing); a 4xx of the operation itself is stored and replayed', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const invalid = await as('POST', '/api/sites/S1/controllers', { name: 'no platform' }, { 'idempotency-key': 'k-400' })
      assert.equal(invalid.statusCode, 400)
      assert.equal((await keyRows(h, org)).length, 0)
      assert.equal((await as('POST', '/api/sites/S1/controllers', controllerBody(), { 'idempotency-key': 'k-400' })).statusCode, 201, 'the key was still free')

      const body = controllerBody()
      const missingSite = await as('POST', '/api/sites/LATER/controllers', body, { 'idempotency-key': 'k-404' })
      assert.equal(missingSite.statusCode, 404)
      assert.equal((await as('POST', '/api/sites', { code: 'LATER', name: 'n' })).statusCode, 201)
      const replayed = await as('POST', '/api/sites/LATER/controllers', body, { 'idempotency-key': 'k-404' })
      assert.equal(replayed.statusCode, 404)
      assert.equal(replayed.headers['idempotent-replayed'], 'true')
      assert.equal(replayed.body, missingSite.body)
      assert.equal(await rowCount(h, 'controllers', org.id), 1)
    })

    it('the header must be 1 to 255 printable ASCII characters, else a 400 naming the header', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      for (const bad of ['x'.repeat(256), '']) {
        const res = await as('POST', '/api/sites', { code: `B${bad.length}`, name: 'n' }, { 'idempotency-key': bad })
        assert.equal(res.statusCode, 400, `length ${bad.length}`)
        assert.deepEqual(
          res.json().errors.map((e: { in: string; pointer: string }) => [e.in, e.pointer]),
          [['headers', '/idempotency-key']],
        )
      }
      assert.equal((await as('POST', '/api/sites', { code: 'G255', name: 'n' }, { 'idempotency-key': '~'.repeat(255) })).statusCode, 201)
      assert.equal((await as('POST', '/api/sites', { code: 'GSP', name: 'n' }, { 'idempotency-key': 'a b!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~' })).statusCode, 201)
      assert.equal((await as('GET', '/api/sites/B256')).statusCode, 404)
      assert.equal((await keyRows(h, org)).length, 2)
    })

    it('without the header every request executes (two identical POSTs create two controllers)', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const body = controllerBody()
      assert.equal((await as('POST', '/api/sites/S1/controllers', body)).statusCode, 201)
      const second = await as('POST', '/api/sites/S1/controllers', { ...body, assetNumber: 'A-second' })
      assert.equal(second.statusCode, 201)
      assert.equal(second.headers['idempotent-replayed'], undefined)
      assert.equal(await rowCount(h, 'controllers', org.id), 2)
      assert.equal((await keyRows(h, org)).length, 0)
    })

    it('20 concurrent identical requests in one process: one executes, 19 wait and replay its answer', async (t) => {
      const { h, org, as } = await equipmentSetup(t, dialect)
      const body = controllerBody()
      const answers = await Promise.all(Array.from({ length: 20 }, () => as('POST', '/api/sites/S1/controllers', body, { 'idempotency-key': 'k-burst' })))
      assert.deepEqual([...new Set(answers.map((a) => a.statusCode))], [201])
      assert.equal(answers.filter((a) => a.headers['idempotent-replayed'] === 'true').length, 19)
      assert.equal(new Set(answers.map((a) => a.body)).size, 1)
      assert.equal(await rowCount(h, 'controllers', org.id), 1)
    })

    it('a request whose key is still executing elsewhere waits, then answers 409 IdempotencyKeyInProgress with Retry-After', async (t) => {
      const h = await harness(t, dialect, { SITEGRID_IDEMPOTENCY_WAIT_MS: '150' })
      const { org, key } = await h.orgWithKey('admin')
      const body = { code: 'BUSY', name: 'n' }
      await h.handle.db
        .insertInto('idempotency_keys')
        .values({
          org_id: org.id,
          key: 'k-busy',
          request_method: 'POST',
          request_path: '/api/sites',
          fingerprint: bodyFingerprint(body),
          state: 'running',
          status: null,
          headers: null,
          body: null,
          created_at: h.clock.now(),
          locked_at: h.clock.now(),
          completed_at: null,
        })
        .execute()
      const res = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/sites', payload: body, headers: { 'idempotency-key': 'k-busy' } })
      assert.equal(res.statusCode, 409)
      assert.equal(res.json().code, 'IdempotencyKeyInProgress')
      assert.equal(res.headers['retry-after'], '1')
      assert.equal((await h.inject({ org, apiKey: key }, { method: 'GET', url: '/api/sites/BUSY' })).statusCode, 404)
      // A claim silent for IDEMPOTENCY_STALE_MS belongs to a process that died: the next request takes it over.
      h.clock.advance(IDEMPOTENCY_STALE_MS)
      const retaken = await h.inject({ org, apiKey: key }, { method: 'POST', url: '/api/sites', payload: body, headers: { 'idempotency-key': 'k-busy' } })
      assert.equal(retaken.statusCode, 201)
      assert.equal(retaken.headers['idempotent-replayed'], undefined)
    })

    it('a 5xx is not stored: the retry executes (AI provider failed, then answered); the replay does not call the provider again', async (t) => {
      const ai = await setUpAi(t, dialect)
      ai.box.enqueue({ kind: 'error', status: 500 }, { kind: 'error', status: 500 })
      const ask = () =>
        ai.h.inject(
          { org: ai.org, apiKey: ai.key },
          { method: 'POST', url: '/api/ai/complete', payload: { prompt: 'Why does the crusher trip?' }, headers: { 'idempotency-key': 'k-ai' } },
        )
      const failed = await ask()
      assert.equal(failed.statusCode, 502)
      assert.equal((await keyRows(ai.h, ai.org)).length, 0)
      const answered = await ask()
      assert.equal(answered.statusCode, 200)
      assert.equal(answered.headers['idempotent-replayed'], undefined)
      const calls = ai.box.requests.length
      const replayed = await ask()
      assert.equal(replayed.statusCode, 200)
      assert.equal(replayed.headers['idempotent-replayed'], 'true')
      assert.equal(replayed.body, answered.body)
      assert.equal(replayed.headers['cache-control'], 'no-store')
      assert.equal(ai.box.requests.length, calls, 'the provider was not asked again')
    })

    it('a stream cannot be replayed: Idempotency-Key with stream: true is a 400 naming the header', async (t) => {
      const ai = await setUpAi(t, dialect)
      const res = await ai.h.inject(
        { org: ai.org, apiKey: ai.key },
        { method: 'POST', url: '/api/ai/complete', payload: { prompt: 'hi', stream: true }, headers: { 'idempotency-key': 'k-stream' } },
      )
      assert.equal(res.statusCode, 400)
      assert.deepEqual(
        res.json().errors.map((e: { in: string; pointer: string }) => [e.in, e.pointer]),
        [['headers', '/idempotency-key']],
      )
      assert.equal(ai.box.requests.length, 0)
      assert.equal((await keyRows(ai.h, ai.org)).length, 0)
    })

    it('the OpenAPI document lists the header on exactly the idempotent operations', async (t) => {
      const h = await harness(t, dialect)
      const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
        paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>>
      }
      const withHeader: string[] = []
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(operations)) {
          if (op.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')) withHeader.push(`${method.toUpperCase()} ${path}`)
        }
      }
      console.log(`idempotent operations (${withHeader.length}): ${withHeader.sort().join(', ')}`)
      for (const op of [
        'POST /api/sites',
        'POST /api/sites/{siteId}/controllers',
        'POST /api/sites/{siteId}/instances',
        'POST /api/sites/{siteId}/electrical/nodes',
        'POST /api/sites/{siteId}/electrical/edges',
        'POST /api/sites/{siteId}/alarms/events',
        'POST /api/ai/complete',
      ]) {
        assert.ok(withHeader.includes(op), op)
      }
      assert.ok(withHeader.every((op) => op.startsWith('POST ')))
      assert.ok(!withHeader.includes('POST /api/admin/api-keys'), 'a minted key is never stored, so its answer cannot be replayed')
    })
  })
}
