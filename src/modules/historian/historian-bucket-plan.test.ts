import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CompiledQuery } from 'kysely'
import { harness, testDialects, type TestDialect } from '../../../test/harness.ts'
import type { Db } from '../../db/schema.ts'
import type { OrgId } from '../../ids.ts'
import { bucketsQuery } from './store/queries.ts'

// The bucketed read once joined the per-bucket first/last values back to the samples in a way SQLite ran as a
// search of the samples per bucket (quadratic, cubic with the bucket join): `WITH visible AS MATERIALIZED` fixed it.
// These tests read the query plan, not the clock: the samples table is scanned once, and first/last are primary-key
// lookups of one sample a bucket (they were automatic indexes over the materialized rows on SQLite: two copies of
// every sample read, up to 16 MiB of page cache each, issue 29). A control (the same query without MATERIALIZED)
// shows the check catches the old shape.

async function planOf(db: Db, dialect: TestDialect, edit: (text: string) => string = (s) => s): Promise<string[]> {
  const compiled = bucketsQuery('org_plan' as OrgId, 1, 60_000, { from: 0, to: 86_400_000, limit: 100 }).compile(db)
  const text = `explain ${dialect === 'sqlite' ? 'query plan ' : ''}${edit(compiled.sql)}`
  const { rows } = await db.executeQuery(CompiledQuery.raw(text, [...compiled.parameters]))
  return (rows as Array<Record<string, unknown>>).map((r) => String(r.detail ?? r['QUERY PLAN']))
}

/** How many times the plan reads historian_points (the samples). */
function samplesReads(plan: string[], dialect: TestDialect): number {
  return plan.filter((line) => (dialect === 'sqlite' ? /^(SEARCH|SCAN) s\b/.test(line) : /\bon historian_points s\b/.test(line))).length
}

for (const dialect of testDialects()) {
  describe(`${dialect}: the bucketed series read stays linear in the samples`, () => {
    it('the plan reads the samples once and looks first/last up by primary key, never by scan', async (t) => {
      const h = await harness(t, dialect)
      const plan = await planOf(h.handle.db, dialect)
      assert.equal(samplesReads(plan, dialect), 1, plan.join('\n'))
      // The only correlated subqueries: first and last, each one primary-key lookup a bucket (checked below).
      assert.equal(plan.filter((line) => /CORRELATED|SubPlan/.test(line)).length, 2, plan.join('\n'))
      if (dialect === 'sqlite') {
        assert.ok(plan.includes('MATERIALIZE visible'), plan.join('\n'))
        for (const alias of ['f', 'l']) {
          assert.ok(plan.includes(`SEARCH ${alias} USING PRIMARY KEY (org_id=? AND series_id=? AND ts=?)`), `${alias}: ${plan.join('\n')}`)
          assert.ok(!plan.some((line) => new RegExp(`^SCAN ${alias}\\b`).test(line)), `${alias}: ${plan.join('\n')}`)
        }
      } else {
        assert.ok(
          plan.some((line) => /CTE visible/.test(line)),
          plan.join('\n'),
        )
        for (const alias of ['f', 'l']) {
          const at = plan.findIndex((line) => new RegExp(`Index (Only )?Scan using historian_points_pk on historian_points ${alias}\\b`).test(line))
          assert.ok(at >= 0 && /Index Cond: .*\(ts = bk\.t[01]\)/.test(plan[at + 1] ?? ''), `${alias}: ${plan.join('\n')}`)
        }
      }
    })

    if (dialect === 'sqlite') {
      it('control: without MATERIALIZED the same query searches the samples again per bucket, and the check above says so', async (t) => {
        const h = await harness(t, dialect)
        const plan = await planOf(h.handle.db, dialect, (text) => text.replace('as materialized', 'as'))
        assert.ok(samplesReads(plan, dialect) > 1, plan.join('\n'))
      })
    }
  })
}
