import { sql, type Kysely } from 'kysely'

/**
 * Session 25: a sample's value lies within ±1e100, and is 0 or at least 1e-100 in magnitude (historian/sample-value.ts).
 * A value outside these stored before (a live push, an import whose mapping's `scale` overflowed to Infinity, NaN on
 * PostgreSQL, a subnormal) made every aggregate read of its tag fail on PostgreSQL (overflow, underflow) and answer
 * Infinity on SQLite, and a site server holding one could no longer send its batch:
 * the cloud refuses the chunk, and the link's push waits on it. Such a sample is kept, as a text state that says what
 * it was (`value out of range`, quality unchanged): raw reads still show the sample, aggregates leave it out as they
 * leave out every text state.
 */
export const OUT_OF_RANGE_TEXT = 'value out of range'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update historian_points set value = null, text = ${OUT_OF_RANGE_TEXT}
    where value > 1e100 or value < -1e100 or (value <> 0 and value > -1e-100 and value < 1e-100)`.execute(db)
}

export async function down(): Promise<void> {
  // The values were no numbers a read could use: nothing to restore.
}
