// Issue 30, live push on SQLite: a statement that may end half-way (ABORT: a NOT NULL check, or a key conflict
// without a clause) and writes more than one row runs inside a statement journal, which copies each page the statement
// changes before changing it, into a temporary file once past 64 KiB. With the upsert that was 2.3 writes to the
// temporary files for each write to the WAL, every push (docs/benchmarks.md, issue 30 third pass). The live insert is
// INSERT OR IGNORE so that nothing in its program can abort: this reads the program, opcode by opcode.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CompiledQuery } from 'kysely'
import { harness, testDialects } from '../../../../test/harness.ts'
import { sqliteLiveStatement } from './sample-writer.ts'

/** SQLite's OE_Abort, the P2 of an opcode that ends the statement and undoes its changes so far. */
const OE_ABORT = 2

for (const dialect of testDialects().filter((d) => d === 'sqlite')) {
  describe(`${dialect}: the live push's insert`, () => {
    it('has no step that can abort the statement half-way, so SQLite keeps no statement journal for it', async (t) => {
      const h = await harness(t, dialect)
      for (const rows of [1, 16, 512]) {
        const text = sqliteLiveStatement(rows)
        const { rows: program } = await h.handle.db.executeQuery<{ opcode: string; p2: number; p4: unknown }>(
          CompiledQuery.raw(`explain ${text}`, new Array<null>(2 + rows * 5).fill(null)),
        )
        assert.ok(
          program.some((op) => op.opcode === 'IdxInsert'),
          `${rows} rows: an insert`,
        )
        const aborting = program.filter((op) => (op.opcode === 'HaltIfNull' || op.opcode === 'Halt') && op.p2 === OE_ABORT)
        assert.deepEqual(aborting, [], `${rows} rows`)
      }
    })
  })
}
