import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { setUpAi } from './route-test-setup.ts'

type Messages = Array<{ role: string; content: string }>

for (const dialect of testDialects()) {
  describe(`${dialect}: AI grounding in the site's electrical network`, () => {
    it('the system prompt sent to the provider summarises the network (types, supplies, islands, loops) and details the nodes the prompt names', async (t) => {
      const { h, box, ask, org, ownerKey } = await setUpAi(t, dialect)
      const as = (method: 'POST' | 'PUT', url: string, payload: unknown) => h.inject({ org, apiKey: ownerKey }, { method, url, payload: payload as object })
      assert.equal((await as('POST', '/api/sites', { code: 'MILL', name: 'Mill' })).statusCode, 201)
      const network = {
        nodes: [
          { id: 'GRID', name: 'Grid infeed', nodeType: 0 },
          { id: 'TX-1', name: 'Main transformer', nodeType: 2, ratedVoltageV: 11000 },
          { id: 'BUS-A', name: 'Switchboard A', nodeType: 3 },
          { id: 'M-1', name: 'Crusher motor', nodeType: 8 },
          { id: 'ISO', name: 'Spare feeder', nodeType: 10 },
          { id: 'TX-12', name: 'Spare transformer', nodeType: 2 },
        ],
        edges: [
          { sourceId: 'GRID', targetId: 'TX-1', edgeType: 0 },
          { sourceId: 'TX-1', targetId: 'BUS-A', edgeType: 3 },
          { sourceId: 'BUS-A', targetId: 'M-1', edgeType: 0 },
          { sourceId: 'BUS-A', targetId: 'GRID', edgeType: 4 },
          { sourceId: 'TX-12', targetId: 'ISO', edgeType: 0 },
        ],
      }
      const put = await as('PUT', '/api/sites/MILL/electrical/network', network)
      assert.equal(put.statusCode, 200, put.body)

      const res = await ask({ prompt: 'Why did TX-1 trip while the crusher motor was starting?', siteId: 'MILL' })
      assert.equal(res.statusCode, 200, res.body)
      assert.ok(res.json().grounding.included.includes('electricalNetwork'))
      const system = String((box.requests[0]?.body?.messages as Messages)[0]?.content)
      assert.match(system, /Electrical network: 6 nodes \(PowerTransformer 2, FeederLoad 1, Motor 1, Switchboard 1, UtilitySupply 1\), 5 edges\./)
      assert.match(system, /Supplies \(1\): GRID\./)
      assert.match(system, /Islands: 2, of which 1 without a supply \(nodes (TX-12, ISO|ISO, TX-12)\)\./)
      assert.match(system, /Loops: 1 independent \(meshed\)\./)
      assert.match(system, /Nodes named in the question \(2\):/)
      assert.match(
        system,
        /- TX-1 "Main transformer": PowerTransformer, 11000 V, supplied, connects to (GRID \(Cable\), BUS-A \(TransformerWinding\)|BUS-A \(TransformerWinding\), GRID \(Cable\))\./,
      )
      assert.match(system, /- M-1 "Crusher motor": Motor, supplied, connects to BUS-A \(Cable\)\./)
      assert.ok(!/- TX-12 /.test(system), 'TX-12 is not named (TX-1 is a whole word, not a prefix)')
      assert.ok(!/- ISO /.test(system))
    })

    it('without nodes the summary says so; the network part is bounded however many nodes the prompt names', async (t) => {
      const { h, box, ask, org, ownerKey } = await setUpAi(t, dialect)
      const as = (method: 'POST' | 'PUT', url: string, payload: unknown) => h.inject({ org, apiKey: ownerKey }, { method, url, payload: payload as object })
      assert.equal((await as('POST', '/api/sites', { code: 'EMPTY', name: 'Empty' })).statusCode, 201)
      assert.equal((await ask({ prompt: 'Anything?', siteId: 'EMPTY' })).statusCode, 200)
      assert.match(String((box.requests[0]?.body?.messages as Messages)[0]?.content), /Electrical network: no nodes recorded\./)

      assert.equal((await as('POST', '/api/sites', { code: 'BIG', name: 'Big' })).statusCode, 201)
      const ids = Array.from({ length: 300 }, (_, i) => `FEEDER-WITH-A-LONG-NAME-${String(i).padStart(3, '0')}`)
      const nodes = [{ id: 'GRID', name: 'Grid', nodeType: 0 }, ...ids.map((id) => ({ id, name: `${id} load`, nodeType: 10 }))]
      const edges = ids.map((id) => ({ sourceId: 'GRID', targetId: id, edgeType: 0 }))
      assert.equal((await as('PUT', '/api/sites/BIG/electrical/network', { nodes, edges })).statusCode, 200)
      const res = await ask({ prompt: `Compare GRID with ${ids.slice(0, 40).join(', ')}`, siteId: 'BIG' })
      assert.equal(res.statusCode, 200)
      const system = String((box.requests[1]?.body?.messages as Messages)[0]?.content)
      const network = system.slice(system.indexOf('Electrical network:'))
      assert.match(network, /Nodes named in the question \(first 10\):/)
      assert.equal((network.match(/^- /gm) ?? []).length <= 10, true)
      assert.match(network, /GRID "Grid": UtilitySupply, supplied, connects to .*, … 292 more\./)
      assert.ok(network.length < 3_200, `network part of ${network.length} characters`)
      assert.ok(system.length < 6_100, `system prompt of ${system.length} characters`)
    })

    it('off site, node names in the network summary are redacted like the rest of the prompt', async (t) => {
      const { h, cloud, ask, org, ownerKey } = await setUpAi(t, dialect)
      const as = (method: 'POST' | 'PUT', url: string, payload: unknown) => h.inject({ org, apiKey: ownerKey }, { method, url, payload: payload as object })
      assert.equal((await as('POST', '/api/sites', { code: 'RED', name: 'Red' })).statusCode, 201)
      const node = await as('POST', '/api/sites/RED/electrical/nodes', { id: 'RIO-1', name: 'Remote IO 10.20.30.40', nodeType: 10 })
      assert.equal(node.statusCode, 201, node.body)
      const res = await ask({ prompt: 'Is RIO-1 supplied?', siteId: 'RED', tier: 'deep' })
      assert.equal(res.statusCode, 200)
      assert.ok(res.json().redactions.ip >= 1)
      const sent = String((cloud.requests[0]?.body?.messages as Messages)[0]?.content)
      assert.match(sent, /- RIO-1 "Remote IO .*": FeederLoad, NOT supplied, connects to nothing\./)
      assert.ok(!sent.includes('10.20.30.40'), 'the plant address does not leave the site')
    })
  })
}
