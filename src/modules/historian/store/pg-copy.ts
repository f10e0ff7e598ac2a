import { CompiledQuery } from 'kysely'
import { from as copyFrom } from 'pg-copy-streams'
import type { Db } from '../../../db/schema.ts'

/**
 * Runs `COPY … FROM STDIN` with `payload` on the connection `db` is bound to (a transaction or a pinned connection),
 * and answers the rows loaded. Kysely exposes no driver client, but its PostgreSQL connection hands `sql` to
 * `pg.Client.query` as is, and pg runs any object with `submit()` as a query: so the pg-copy-streams query goes in as
 * the statement, made awaitable (Kysely awaits what `query` returns) until PostgreSQL confirms.
 */
export async function copyIn(db: Db, statement: string, payload: Buffer): Promise<number> {
  const stream = copyFrom(statement)
  const done = new Promise<{ command: string; rowCount: number; rows: never[] }>((resolve, reject) => {
    stream.on('finish', () => resolve({ command: 'COPY', rowCount: stream.rowCount, rows: [] }))
    stream.on('error', reject)
  })
  const awaitable = Object.assign(stream, { then: done.then.bind(done) })
  const running = db.executeQuery({ ...CompiledQuery.raw(statement), sql: awaitable as unknown as string })
  stream.end(payload)
  await running
  return stream.rowCount
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1')
/** Room made at each row for its count and fixed-width fields (at most 12 bytes each; text makes its own room). */
const ROW_RESERVE = 256

/**
 * A payload in COPY's binary format (`copy … from stdin (format binary)`): numbers go as their bytes, so the server
 * parses nothing, and no text is built on our side either. The bytes grow once and are reused from payload to
 * payload (`start` empties them): a payload outlives many young-generation collections, and new bytes each time
 * would wait for a full collection to be freed. Each value must match its column's type exactly.
 */
export class BinaryCopy {
  #bytes = Buffer.allocUnsafe(1 << 20)
  #view = new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength)
  #at = 0

  start(): void {
    SIGNATURE.copy(this.#bytes, 0)
    this.#view.setInt32(11, 0) // flags
    this.#view.setInt32(15, 0) // header extension length
    this.#at = 19
  }

  row(fields: number): void {
    this.#reserve(ROW_RESERVE)
    this.#view.setInt16(this.#at, fields)
    this.#at += 2
  }

  int16(value: number): void {
    this.#view.setInt32(this.#at, 2)
    this.#view.setInt16(this.#at + 4, value)
    this.#at += 6
  }

  int32(value: number): void {
    this.#view.setInt32(this.#at, 4)
    this.#view.setInt32(this.#at + 4, value)
    this.#at += 8
  }

  /** An integer of up to 53 bits, written as int8 without a BigInt. */
  int64(value: number): void {
    const high = Math.floor(value / 0x1_0000_0000)
    this.#view.setInt32(this.#at, 8)
    this.#view.setInt32(this.#at + 4, high)
    this.#view.setUint32(this.#at + 8, value - high * 0x1_0000_0000)
    this.#at += 12
  }

  float64(value: number | null): void {
    if (value === null) return this.#null()
    this.#view.setInt32(this.#at, 8)
    this.#view.setFloat64(this.#at + 4, value)
    this.#at += 12
  }

  text(value: string | null): void {
    if (value === null) return this.#null()
    this.#reserve(4 + value.length * 3)
    const length = this.#bytes.write(value, this.#at + 4, 'utf8')
    this.#view.setInt32(this.#at, length)
    this.#at += 4 + length
  }

  /** The payload, trailer included: valid until the next `start`. */
  end(): Buffer {
    this.#reserve(2)
    this.#view.setInt16(this.#at, -1)
    this.#at += 2
    return this.#bytes.subarray(0, this.#at)
  }

  #null(): void {
    this.#view.setInt32(this.#at, -1)
    this.#at += 4
  }

  #reserve(bytes: number): void {
    if (this.#at + bytes <= this.#bytes.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.#bytes.length * 2, this.#at + bytes))
    this.#bytes.copy(grown, 0, 0, this.#at)
    this.#bytes = grown
    this.#view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength)
  }
}
