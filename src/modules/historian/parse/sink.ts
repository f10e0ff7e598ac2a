import { CELL_EMPTY, CELL_NUMBER, CELL_SENTINEL, CELL_TEXT } from './cells.ts'
import type { CellReader } from './cells.ts'
import type { Quality, Rejection, Sample } from './types.ts'

/** Collects what the rows of one batch produce; decoders write into it. */
export class BatchSink {
  samples: Sample[] = []
  rejections: Rejection[] = []
  rowsRead = 0
  emptyCells = 0
  sentinelCells = 0

  reject(line: number, reason: string, column?: string): void {
    this.rejections.push(column === undefined ? { line, reason } : { line, reason, column })
  }

  /** Turns one value cell into a sample, a counted empty/sentinel cell, or a rejection. */
  cell(cells: CellReader, tag: string, ts: number, raw: string, quality: Quality, line: number, column?: string): void {
    const kind = cells.read(raw)
    if (kind === CELL_NUMBER) this.samples.push({ tag, ts, value: cells.number, text: null, quality, line })
    else if (kind === CELL_TEXT) this.samples.push({ tag, ts, value: null, text: cells.text, quality, line })
    else if (kind === CELL_EMPTY) this.emptyCells++
    else if (kind === CELL_SENTINEL) this.sentinelCells++
    else this.reject(line, column === undefined ? cells.reason : `${column}: ${cells.reason}`, column)
  }

  /** Hands over what was collected and starts empty again. */
  drain(): { samples: Sample[]; rejections: Rejection[]; rowsRead: number; emptyCells: number; sentinelCells: number } {
    const out = { samples: this.samples, rejections: this.rejections, rowsRead: this.rowsRead, emptyCells: this.emptyCells, sentinelCells: this.sentinelCells }
    this.samples = []
    this.rejections = []
    this.rowsRead = 0
    this.emptyCells = 0
    this.sentinelCells = 0
    return out
  }
}
