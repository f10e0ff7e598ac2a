import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { testDialects } from '../../../../test/harness.ts'
import { StudyTooMeshed } from '../errors.ts'
import { BASE, electricalSetup, loadNetwork, snapshot } from '../test-support.ts'
import { MAX_ELIMINATION_WORK, orderBlockPattern } from './load-flow-sparse.ts'
import { meshedSiteNetwork } from './test-meshed-network.ts'

const fixture = fileURLToPath(new URL('./test-meshed-network.ts', import.meta.url))

interface Refusal {
  status: number
  code: string
  detail: string
  extensions: { rule: string; busCount: number; eliminatedBuses: number; eliminationWork: number; maxEliminationWork: number; fillBlocks: number }
}

/** A refusal of the bound: 422 `UnprocessableEntity` naming the rule and the study, with figures past the bound. */
function assertTooMeshed(problem: Refusal, study: string) {
  assert.equal(problem.status, 422, JSON.stringify(problem))
  assert.equal(problem.code, 'UnprocessableEntity')
  assert.match(
    problem.detail,
    new RegExp(`^The network is too meshed for the ${study}: its sparse solver accepts at most ${MAX_ELIMINATION_WORK} elimination operations`),
  )
  const { rule, busCount, eliminatedBuses, eliminationWork, maxEliminationWork } = problem.extensions
  assert.equal(rule, 'network too meshed')
  assert.equal(maxEliminationWork, MAX_ELIMINATION_WORK)
  assert.ok(eliminationWork > MAX_ELIMINATION_WORK, JSON.stringify(problem.extensions))
  assert.ok(eliminatedBuses < busCount, JSON.stringify(problem.extensions))
}

/** Edges of a tree of fan-out `fanOut` over `size` buses with a ring closed every `every` buses: the benches' shapes. */
function radialWithRings(size: number, fanOut: number, every: number, back: number): Array<[number, number]> {
  const edges: Array<[number, number]> = []
  for (let i = 1; i < size; i++) {
    edges.push([Math.floor((i - 1) / fanOut), i])
    if (i > back && i % every === 0) edges.push([i - back, i])
  }
  return edges
}

describe('the elimination-work bound of the sparse studies (load-flow-sparse.ts)', () => {
  it('a dense mesh of 4 000 boards is refused by the load flow and the short-circuit study with a 422 naming the rule, in a process bounded to 60 s (the minimum-degree elimination filled in to a dense matrix: many minutes)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', fixture, '4000'], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(run.signal, null, `not answered within 60 s (it is refused in under a second): ${run.stderr}`)
    assert.equal(run.status, 0, run.stderr)
    const { loadFlow, shortCircuit } = JSON.parse(run.stdout) as { loadFlow: Refusal; shortCircuit: Refusal }
    assertTooMeshed(loadFlow, 'load flow')
    assertTooMeshed(shortCircuit, 'short-circuit study')
  })

  it("the benches' networks pass at the network limits (100 000 buses), and so does a full 50 × 50 grid", () => {
    // bench/load-flow.ts: fan-out 4, a ring about every 100 buses; bench/short-circuit.ts: fan-out 3, a ring every 50.
    assert.equal(orderBlockPattern(100_000, radialWithRings(100_000, 4, 100, 90)).size, 100_000)
    assert.equal(orderBlockPattern(100_000, radialWithRings(100_000, 3, 50, 7)).size, 100_000)
    const grid: Array<[number, number]> = []
    for (let r = 0; r < 50; r++)
      for (let c = 0; c < 50; c++)
        grid.push(...(c < 49 ? [[50 * r + c, 50 * r + c + 1] as [number, number]] : []), ...(r < 49 ? [[50 * r + c, 50 * r + c + 50] as [number, number]] : []))
    assert.equal(orderBlockPattern(2500, grid).size, 2500)
  })

  it('the bound is checked before each elimination step: a complete graph is refused part-way, with the figures', () => {
    const complete: Array<[number, number]> = []
    for (let a = 0; a < 40; a++) for (let b = a + 1; b < 40; b++) complete.push([a, b])
    // Eliminating K40 costs Σ d² = 39² + 38² + … + 1² = 20 540: one less is refused at its 39th pivot (d = 1).
    assert.equal(orderBlockPattern(40, complete, 'test', 20_540).size, 40)
    assert.throws(
      () => orderBlockPattern(40, complete, 'test', 20_539),
      (err: unknown) =>
        err instanceof StudyTooMeshed &&
        err.status === 422 &&
        err.extensions?.rule === 'network too meshed' &&
        err.extensions.eliminatedBuses === 38 &&
        err.extensions.eliminationWork === 20_540,
    )
    assert.throws(
      () => orderBlockPattern(40, complete, 'test', 1000),
      (err: unknown) => err instanceof StudyTooMeshed && err.extensions?.eliminatedBuses === 0 && err.extensions.eliminationWork === 39 * 39,
    )
  })
})

for (const dialect of testDialects()) {
  describe(`${dialect}: a network too meshed for the studies, through the API`, () => {
    it('GET studies/load-flow and studies/short-circuit answer 422 naming the rule, each time, nothing written; a lightly meshed network of as many boards is computed', async (t) => {
      const { h, org, asMember, as } = await electricalSetup(t, dialect)
      await loadNetwork(as, meshedSiteNetwork(800))
      const before = await snapshot(h, org)
      for (let round = 0; round < 2; round++) {
        for (const [path, study] of [
          ['load-flow', 'load flow'],
          ['short-circuit', 'short-circuit study'],
        ] as const) {
          const res = await asMember('GET', `${BASE}/studies/${path}`)
          assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
          const { code, detail, ...extensions } = res.json() as Refusal & Refusal['extensions']
          assertTooMeshed({ status: res.statusCode, code, detail, extensions }, study)
        }
      }
      assert.equal(await snapshot(h, org), before)
      // One tie every 20 boards: a few rings, as plants have.
      await loadNetwork(as, meshedSiteNetwork(800, 40))
      const loadFlow = await asMember('GET', `${BASE}/studies/load-flow`)
      assert.equal(loadFlow.statusCode, 200, loadFlow.body)
      assert.equal(loadFlow.json().converged, true)
      const shortCircuit = await asMember('GET', `${BASE}/studies/short-circuit`)
      assert.equal(shortCircuit.statusCode, 200, shortCircuit.body)
      assert.equal(shortCircuit.json().buses.length, 801)
    })
  })
}
