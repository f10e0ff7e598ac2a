/** The seven export layouts this parser reads. */
export const FORMAT_NAMES = ['long', 'wide', 'ignition-tall', 'aveva-history', 'proficy', 'citect-pa', 'piconfig'] as const

export type FormatName = (typeof FORMAT_NAMES)[number]

export type Quality = 'good' | 'uncertain' | 'bad'

/**
 * One historian value. Exactly one of `value` and `text` is non-null: a text state
 * (`Running`, `Low [Acknowledged]`, a PI digital state) is kept apart from numbers.
 */
export interface Sample {
  tag: string
  /** Epoch milliseconds, UTC, integer (sub-millisecond digits are truncated). */
  ts: number
  value: number | null
  text: string | null
  quality: Quality
  /** 1-based line of the file where the row starts. */
  line: number
}

/** A row (or, in wide layouts, one cell of a row) that produced no sample, and why. */
export interface Rejection {
  line: number
  reason: string
  /** The column (tag) concerned, when a single cell of a wide row was rejected. */
  column?: string
}

/** Running totals of a parse; final once iteration has ended. */
export interface ParseSummary {
  /** The layout used: the one given, or the one `auto` chose. Null before the first row. */
  format: FormatName | null
  separator: ',' | ';' | '\t' | null
  rowsRead: number
  /**
   * Values read: one a data row in the one-sample-a-row layouts (equal to rowsRead); in the wide layouts (wide,
   * citect-pa) one a tag column of the header for each data row (a cell the row leaves out at its end is an empty
   * one), or one for a row refused whole (its time, its Milliseconds or its field count). Each value becomes exactly
   * one of: a sample, a rejection, an empty cell or a sentinel cell, so valuesRead = samples + rejectedCount +
   * emptyCells + sentinelCells.
   */
  valuesRead: number
  samples: number
  /** Every rejection: whole rows, or single cells in wide layouts (wide, citect-pa). */
  rejectedCount: number
  /** The first `maxRejections` rejections, in file order. */
  rejections: Rejection[]
  /** Cells that held nothing (blank, `NA`, SQL `NULL`): no sample, no rejection. */
  emptyCells: number
  /** Cells equal to a configured sentinel: no sample, no rejection. */
  sentinelCells: number
}

/** Bytes (a Readable, a file stream, an array of Buffers) or already decoded text chunks. */
export type ByteSource = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>
