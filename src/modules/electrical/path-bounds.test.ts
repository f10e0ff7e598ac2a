import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { testDialects } from '../../../test/harness.ts'
import { MAX_STUDIED_DEVICES, tripTime } from './protection.ts'
import { BASE, electricalSetup, loadNetwork } from './test-support.ts'
import { buildGraph, findLoops, findSupplyPath, findSupplyPaths, MAX_LISTED_PATH_NODES, MAX_SUPPLY_PATHS } from './topology.ts'

/** A chain S0 – S1 – … – S(n−1) of generators: every node is a supply, so a node at the end reaches n supplies. */
function supplyChain(n: number) {
  const id = (i: number) => `S${String(i).padStart(5, '0')}`
  return {
    nodes: Array.from({ length: n }, (_, i) => ({ id: id(i), name: `Generator ${i}`, nodeType: 1 })),
    edges: Array.from({ length: n - 1 }, (_, i) => ({ sourceId: id(i), targetId: id(i + 1), edgeType: 2 })),
  }
}

/**
 * Grid G – B0 – CB0 – B1 – CB1 – … – B(n−1) – CB(n−1) – L: a feeder through n protected breakers (IEC SI, pickup
 * 100 A, TMS cycling 0.1 … 1.0), each on its own board. A fault at L meets CB(n−1) first and CB0 last.
 */
function breakerChain(n: number) {
  const cb = (i: number) => `CB${String(i).padStart(5, '0')}`
  const bus = (i: number) => `B${String(i).padStart(5, '0')}`
  const nodes: object[] = [
    { id: 'G', name: 'Grid', nodeType: 0 },
    { id: 'L', name: 'Load', nodeType: 10 },
  ]
  const edges: object[] = [{ sourceId: 'G', targetId: bus(0), edgeType: 0 }]
  for (let i = 0; i < n; i++) {
    nodes.push({ id: bus(i), name: `Board ${i}`, nodeType: 3 })
    nodes.push({ id: cb(i), name: `Breaker ${i}`, nodeType: 5, protectionCurve: 'IEC SI', protectionPickupA: 100, protectionTms: ((i % 10) + 1) / 10 })
    edges.push({ sourceId: bus(i), targetId: cb(i), edgeType: 2 })
    edges.push({ sourceId: cb(i), targetId: i + 1 < n ? bus(i + 1) : 'L', edgeType: 0 })
  }
  return { nodes, edges, cb }
}

interface Row {
  deviceId: string
  tripTimeS: number | null
  upstreamDeviceId: string | null
  marginS: number | null
  status: string
  currentRatio: number
}

/** What the coordination must say for the chain, device by device, from the trip-time formula alone. */
function expectedRows(n: number, cb: (i: number) => string, faultCurrentA: number) {
  const times = Array.from({ length: n }, (_, i) => tripTime({ curve: 'IEC SI', pickupA: 100, tms: ((i % 10) + 1) / 10 }, faultCurrentA).tripTimeS!)
  return Array.from({ length: n }, (_, r) => {
    const i = n - 1 - r
    const marginS = i > 0 ? times[i - 1]! - times[i]! : null
    return {
      deviceId: cb(i),
      tripTimeS: times[i]!,
      upstreamDeviceId: i > 0 ? cb(i - 1) : null,
      marginS,
      status: marginS !== null && marginS < 0.3 - 1e-9 ? 'Violation' : 'OK',
      currentRatio: 1,
    }
  })
}

const pick = (rows: Row[]) =>
  rows.map(({ deviceId, tripTimeS, upstreamDeviceId, marginS, status, currentRatio }) => ({
    deviceId,
    tripTimeS,
    upstreamDeviceId,
    marginS,
    status,
    currentRatio,
  }))

/**
 * A ladder: a grid G feeding two parallel runs A1 … An and B1 … Bn, joined by `rungs` ties at the far end. Each tie
 * closes a loop back through G of about 2n nodes.
 */
function ladder(n: number, rungs: number) {
  const nodes = [{ id: 'G', name: 'Grid', nodeType: 0 }]
  const edges = [
    { sourceId: 'G', targetId: 'A1', edgeType: 0 },
    { sourceId: 'G', targetId: 'B1', edgeType: 0 },
  ]
  for (let i = 1; i <= n; i++) {
    nodes.push({ id: `A${i}`, name: `A${i}`, nodeType: 3 }, { id: `B${i}`, name: `B${i}`, nodeType: 3 })
    if (i < n) edges.push({ sourceId: `A${i}`, targetId: `A${i + 1}`, edgeType: 0 }, { sourceId: `B${i}`, targetId: `B${i + 1}`, edgeType: 0 })
    if (i > n - rungs) edges.push({ sourceId: `A${i}`, targetId: `B${i}`, edgeType: 4 })
  }
  return { nodes, edges }
}

describe('one supply path, built alone', () => {
  it('is the path supply-paths lists first, or lists to the supply named, for every node of a meshed network', () => {
    // A small deterministic mesh: 60 nodes, every fifth a supply, each joined to two earlier nodes.
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
    const nodes = Array.from({ length: 60 }, (_, i) => ({ id: `N${i}`, nodeType: i % 5 === 0 ? 1 : 3 }))
    const edges: { sourceId: string; targetId: string; edgeType: number }[] = []
    for (let i = 1; i < 60; i++) {
      if (i % 17 === 0) continue // a few islands
      for (const j of new Set([next() % i, next() % i])) edges.push({ sourceId: `N${j}`, targetId: `N${i}`, edgeType: next() % 5 })
    }
    nodes.push({ id: 'LONE', nodeType: 3 })
    const graph = buildGraph(nodes, edges)
    for (const { id } of nodes) {
      const all = findSupplyPaths(graph, id)
      assert.deepEqual(findSupplyPath(graph, id), all.paths[0] ?? null)
      for (const path of all.paths) assert.deepEqual(findSupplyPath(graph, id, path.supplyId), path)
      assert.equal(findSupplyPath(graph, id, 'N1'), null, 'N1 is no supply')
      assert.equal(findSupplyPath(graph, id, 'NOPE'), null)
    }
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect}: electrical path answers stay bounded`, () => {
    it('supply paths through a chain of 3000 generators: nearest first, cut at the documented bounds, the cut said', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      const n = 3000
      await loadNetwork(as, supplyChain(n))
      const res = await as('GET', `${BASE}/nodes/S00000/supply-paths`)
      assert.equal(res.statusCode, 200)
      assert.ok(res.body.length < 20_000_000, `answer of ${res.body.length} bytes`)
      const body = res.json()
      assert.equal(body.isSupplied, true)
      assert.equal(body.isTruncated, true)
      assert.equal(body.supplyCount, n)
      // Nearest first: path k runs S0 … Sk, so k + 1 node ids; listed while the total stays within the bounds.
      const listed = body.paths.length
      assert.ok(listed >= 1 && listed <= MAX_SUPPLY_PATHS && listed < n)
      const total = body.paths.reduce((sum: number, p: { nodeIds: string[] }) => sum + p.nodeIds.length, 0)
      assert.ok(total <= MAX_LISTED_PATH_NODES, `${total} node ids listed`)
      assert.equal(total, (listed * (listed + 1)) / 2)
      const next = listed + 1 // the node ids of the first path left out
      assert.ok(listed === MAX_SUPPLY_PATHS || total + next > MAX_LISTED_PATH_NODES, 'stops only at a bound')
      body.paths.forEach((p: { supplyId: string; hops: number; nodeIds: string[]; edges: unknown[] }, k: number) => {
        assert.equal(p.hops, k)
        assert.equal(p.nodeIds.length, k + 1)
        assert.equal(p.edges.length, k)
        assert.equal(p.supplyId, `S${String(k).padStart(5, '0')}`)
      })
      // A node with few supplies within reach is answered whole, without the cut's fields.
      const small = supplyChain(3)
      await loadNetwork(as, small)
      assert.deepEqual(Object.keys((await as('GET', `${BASE}/nodes/S00001/supply-paths`)).json()), ['nodeId', 'isSupplied', 'paths'])
    })

    it('loops round a 2 × 2000 ladder with 100 ties: the first listed whole, the rest cut at the node-id bound', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      await loadNetwork(as, ladder(2000, 100))
      const res = await as('GET', `${BASE}/topology/loops?maxLoops=10000`)
      assert.equal(res.statusCode, 200)
      const body = res.json()
      assert.equal(body.loopCount, 100)
      assert.equal(body.isTruncated, true)
      const total = body.loops.reduce((sum: number, l: { nodeIds: string[] }) => sum + l.nodeIds.length, 0)
      assert.ok(body.loops.length >= 1 && body.loops.length < 100)
      assert.ok(total <= MAX_LISTED_PATH_NODES, `${total} node ids listed`)
      for (const loop of body.loops) assert.equal(loop.edges.length, loop.nodeIds.length)
      // The same network in memory: listing stops at the first loop that would pass the bound.
      const { nodes, edges } = ladder(2000, 100)
      const report = findLoops(buildGraph(nodes, edges), { maxLoops: 10_000 })
      assert.equal(report.loops.length, body.loops.length)
      assert.ok(total + 2 * 1901 + 1 > MAX_LISTED_PATH_NODES, 'stops only at the bound (the shortest loop, by the tie at A1901, has 3803 nodes)')
      // Under the bound, maxLoops alone limits, as before.
      const two = (await as('GET', `${BASE}/topology/loops?maxLoops=2`)).json()
      assert.equal(two.loops.length, 2)
      assert.equal(two.isTruncated, true)
    })

    it(`the study gives the currents of at most ${MAX_STUDIED_DEVICES} devices on a path: more is a 422, or with a typed current graded without the study's checks`, async (t) => {
      const { as } = await electricalSetup(t, dialect)
      /** UTIL — 50 m cable — CB0 — B0 — CB1 — B1 — … — B(n−1): n protected breakers on one 400 V bus, all the study's data. */
      const studied = (n: number) => {
        const cb = (i: number) => `CB${String(i).padStart(4, '0')}`
        const bus = (i: number) => `B${String(i).padStart(4, '0')}`
        const relay = { protectionCurve: 'IEC SI', protectionPickupA: 100, protectionTms: 0.1 }
        return {
          nodes: [
            { id: 'UTIL', name: 'Grid', nodeType: 0, ratedVoltageV: 400, study: { scPowerMaxMva: 10, scPowerMinMva: 8, rxRatio: 0.1 } },
            ...Array.from({ length: n }, (_, i) => ({
              id: cb(i),
              name: `Breaker ${i}`,
              nodeType: 5,
              ...relay,
              ...(i === 0 ? { cableLengthM: 50, study: { rOhmPerKm: 0.1, xOhmPerKm: 0.08 } } : {}),
            })),
            ...Array.from({ length: n }, (_, i) => ({ id: bus(i), name: `Board ${i}`, nodeType: 3, ratedVoltageV: 400 })),
          ],
          edges: [
            { sourceId: 'UTIL', targetId: cb(0), edgeType: 0 },
            ...Array.from({ length: n }, (_, i) => ({ sourceId: cb(i), targetId: bus(i), edgeType: 2 })),
            ...Array.from({ length: n - 1 }, (_, i) => ({ sourceId: bus(i), targetId: cb(i + 1), edgeType: 2 })),
          ],
          end: bus(n - 1),
        }
      }
      const { end: atBound, ...bounded } = studied(MAX_STUDIED_DEVICES)
      await loadNetwork(as, bounded)
      const computed = await as('GET', `${BASE}/nodes/${atBound}/coordination`)
      assert.equal(computed.statusCode, 200, computed.body.slice(0, 500))
      assert.equal(computed.json().rows.length, MAX_STUDIED_DEVICES)
      assert.equal(computed.json().faultCurrentSource, 'shortCircuitStudy')
      const { end, ...over } = studied(MAX_STUDIED_DEVICES + 1)
      await loadNetwork(as, over)
      for (const read of ['coordination', 'protection-curves']) {
        const refused = await as('GET', `${BASE}/nodes/${end}/${read}`)
        assert.equal(refused.statusCode, 422, refused.body.slice(0, 500))
        assert.deepEqual(
          [refused.json().code, refused.json().deviceCount, refused.json().maxDevices],
          ['UnprocessableEntity', MAX_STUDIED_DEVICES + 1, MAX_STUDIED_DEVICES],
        )
      }
      const typed = await as('GET', `${BASE}/nodes/${end}/coordination?faultCurrentA=2000`)
      assert.equal(typed.statusCode, 200, typed.body.slice(0, 500))
      assert.equal(typed.json().rows.length, MAX_STUDIED_DEVICES + 1)
      assert.equal(typed.json().minimumFaultCheck.checked, false)
      assert.match(typed.json().minimumFaultCheck.detail, new RegExp(`at most ${MAX_STUDIED_DEVICES} protective devices`))
    })

    it('coordination and protection curves along 2000 protected breakers: every device, in order, with its trip time and margin', async (t) => {
      const { as } = await electricalSetup(t, dialect)
      // The small case first: the same answer, row for row, as the trip-time formula gives.
      for (const n of [3, 2000]) {
        const { cb, ...network } = breakerChain(n)
        await loadNetwork(as, network)
        const res = await as('GET', `${BASE}/nodes/L/coordination?faultCurrentA=2000`)
        assert.equal(res.statusCode, 200, res.body)
        const body = res.json()
        assert.equal(body.supplyId, 'G')
        assert.equal(body.pathNodeIds.length, 2 * n + 2)
        assert.equal(body.pathNodeIds[0], 'L')
        assert.equal(body.pathNodeIds.at(-1), 'G')
        const expected = expectedRows(n, cb, 2000)
        assert.deepEqual(pick(body.rows), expected)
        assert.equal(body.violationCount, expected.filter((r) => r.status === 'Violation').length)
        const fastest = Math.min(...expected.map((r) => r.tripTimeS))
        assert.equal(body.clearingDeviceId, expected.find((r) => r.tripTimeS === fastest)!.deviceId)
        assert.deepEqual(body.skipped, [])
        // From the middle of the chain, towards a named supply: only the devices between.
        const mid = (await as('GET', `${BASE}/nodes/${cb(1)}/coordination?faultCurrentA=2000&supplyId=G`)).json()
        assert.deepEqual(
          mid.rows.map((r: Row) => r.deviceId),
          [cb(1), cb(0)],
        )
        const curves = await as('GET', `${BASE}/nodes/L/protection-curves?faultCurrentA=2000&points=3`)
        assert.equal(curves.statusCode, 200, curves.body)
        const c = curves.json()
        assert.equal(c.devices.length, n)
        assert.equal(c.devices[0].deviceId, cb(n - 1))
        assert.equal(c.devices.at(-1).deviceId, cb(0))
        assert.equal(c.fromA, 100)
        assert.equal(c.toA, 3000)
        assert.deepEqual(c.currentsA.length, 3)
        for (const d of c.devices) assert.equal(d.currentRatio, 1)
      }
    })
  })
}
