import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CompiledQuery } from 'kysely'
import { connectDatabase } from './connect.ts'
import { postgresUrl, testDialects } from '../../test/harness.ts'
import { BinaryArrays, numberArrayBytes, textArrayBytes } from './pg-arrays.ts'

// The binary arrays a live push and an alarm batch send read back by PostgreSQL as the values written.

it('an integer element refuses a value it cannot hold instead of writing it wrapped or truncated', () => {
  const arrays = new BinaryArrays()
  for (const [type, value] of [
    ['int4', 2 ** 31],
    ['int4', -(2 ** 31) - 1],
    ['int4', 1.5],
    ['int2', 40_000],
    ['int8', 2 ** 53],
  ] as const) {
    arrays.start(numberArrayBytes(type, 1))
    assert.throws(() => arrays.numbers(type, 1, () => value), RangeError, `${type} ${value}`)
  }
  arrays.start(numberArrayBytes('int4', 2))
  assert.equal(arrays.numbers('int4', 2, (k) => [2 ** 31 - 1, -(2 ** 31)][k]!).length, numberArrayBytes('int4', 2))
})
if (testDialects().includes('postgres')) {
  describe('postgres: binary array parameters', () => {
    it('integers of every width (int8 past 32 bits and negative), doubles, nulls and UTF-8 texts arrive as written, also from reused bytes', async () => {
      const handle = await connectDatabase(await postgresUrl(), { poolSize: 1 })
      const arrays = new BinaryArrays()
      const roundTrip = async (int8: number[], int4: number[], float8: Array<number | null>, texts: Array<string | null>, int2: number[]) => {
        const n = int8.length
        arrays.start(
          numberArrayBytes('int8', n) +
            numberArrayBytes('int4', n) +
            numberArrayBytes('float8', n) +
            numberArrayBytes('int2', n) +
            textArrayBytes(n, (k) => texts[k]!),
        )
        const { rows } = await handle.db.executeQuery<{ a: string[]; b: number[]; c: Array<number | null>; d: Array<string | null>; e: number[] }>(
          CompiledQuery.raw('select $1::bigint[]::text[] as a, $2::integer[] as b, $3::float8[] as c, $4::text[] as d, $5::smallint[] as e', [
            arrays.numbers('int8', n, (k) => int8[k]!),
            arrays.numbers('int4', n, (k) => int4[k]!),
            arrays.numbers('float8', n, (k) => float8[k]!),
            arrays.texts(n, (k) => texts[k]!),
            arrays.numbers('int2', n, (k) => int2[k]!),
          ]),
        )
        assert.deepEqual(rows[0], { a: int8.map(String), b: int4, c: float8, d: texts, e: int2 })
      }
      try {
        await roundTrip(
          [1_714_564_800_123, -1, 0, 2 ** 53 - 1, -(2 ** 40) - 7],
          [2_147_483_647, -2_147_483_648, 0, 7, 1],
          [-12.5, null, 1e300, 0, 3.141592653589793],
          [null, 'RUNNING', 'über "quoted", ✓', '', null],
          [192, 64, 0, 255, 1],
        )
        // The same bytes again, a shorter set: nothing of the first is left in it.
        await roundTrip([5, 6], [-3, 4], [null, null], ['a', null], [0, 192])
      } finally {
        await handle.close()
      }
    })
  })
}
