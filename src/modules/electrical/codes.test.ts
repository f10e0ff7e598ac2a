import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EDGE_TYPES, EdgeType, NODE_TYPES, NodeType, describeCodes, isSupplyNodeType, isSwitchingNodeType, openApiEnumAnnotations } from './codes.ts'

describe('code tables', () => {
  it('cover nodeType 0–13 and edgeType 0–4 exactly once, in order, with unique PascalCase names', () => {
    for (const [table, size] of [
      [NODE_TYPES, 14],
      [EDGE_TYPES, 5],
    ] as const) {
      assert.deepEqual(
        table.map((t) => t.code),
        Array.from({ length: size }, (_, i) => i),
      )
      assert.equal(new Set(table.map((t) => t.name)).size, size)
      for (const t of table) assert.match(t.name, /^[A-Z][A-Za-z]+$/)
    }
  })

  it('treat utility supply, generator and UPS as supplies, and breaker, fuse-switch, disconnector as switching', () => {
    assert.deepEqual(
      NODE_TYPES.filter((t) => isSupplyNodeType(t.code)).map((t) => t.code),
      [0, 1, 13],
    )
    assert.deepEqual(
      NODE_TYPES.filter((t) => isSwitchingNodeType(t.code)).map((t) => t.code),
      [5, 6, 7],
    )
    assert.equal(isSupplyNodeType(14), false)
  })

  it('name the codes so code can say NodeType.CircuitBreaker and EdgeType.BusTie', () => {
    assert.equal(NodeType.CircuitBreaker, 5)
    assert.equal(NodeType.UpsBattery, 13)
    assert.equal(EdgeType.BusTie, 4)
  })
})

describe('OpenAPI rendering', () => {
  it('describes codes as "code = Name (label)" joined by commas', () => {
    assert.match(describeCodes(NODE_TYPES), /^0 = UtilitySupply \(Utility supply \/ grid infeed\), 1 = Generator \(Generator\), /)
    assert.match(describeCodes(EDGE_TYPES), /, 4 = BusTie \(Bus tie \/ switched link\)$/)
  })

  it('gives x-enum-varnames and x-enum-descriptions aligned with enum', () => {
    const annotations = openApiEnumAnnotations(EDGE_TYPES)
    assert.deepEqual(annotations.enum, [0, 1, 2, 3, 4])
    assert.deepEqual(annotations['x-enum-varnames'], ['Cable', 'OverheadLine', 'BusbarLink', 'TransformerWinding', 'BusTie'])
    assert.equal(annotations['x-enum-descriptions'].length, 5)
  })
})
