import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CompiledQuery } from 'kysely'
import { connectDatabase } from '../../../db/connect.ts'
import { postgresUrl, testDialects } from '../../../../test/harness.ts'
import { numberArray, textArray } from './pg-arrays.ts'

// The binary arrays a live push sends (postgresArrayWrite) read back by PostgreSQL as the values written.
if (testDialects().includes('postgres')) {
  describe('postgres: binary array parameters', () => {
    it('integers of every width (int8 past 32 bits and negative), doubles, nulls and UTF-8 texts arrive as written', async () => {
      const handle = await connectDatabase(await postgresUrl(), { poolSize: 1 })
      try {
        const int8 = [1_714_564_800_123, -1, 0, 2 ** 53 - 1, -(2 ** 40) - 7]
        const float8 = [-12.5, null, 1e300, 0, 3.141592653589793]
        const texts = [null, 'RUNNING', 'über "quoted", ✓', '', null]
        const { rows } = await handle.db.executeQuery<{ a: string[]; b: number[]; c: Array<number | null>; d: Array<string | null>; e: number[] }>(
          CompiledQuery.raw('select $1::bigint[]::text[] as a, $2::integer[] as b, $3::float8[] as c, $4::text[] as d, $5::smallint[] as e', [
            numberArray('int8', 5, (k) => int8[k]!),
            numberArray('int4', 5, (k) => [2_147_483_647, -2_147_483_648, 0, 7, 1][k]!),
            numberArray('float8', 5, (k) => float8[k]!),
            textArray(5, (k) => texts[k]!),
            numberArray('int2', 5, (k) => [192, 64, 0, 255, 1][k]!),
          ]),
        )
        assert.deepEqual(rows[0], {
          a: int8.map(String),
          b: [2_147_483_647, -2_147_483_648, 0, 7, 1],
          c: float8,
          d: texts,
          e: [192, 64, 0, 255, 1],
        })
      } finally {
        await handle.close()
      }
    })
  })
}
