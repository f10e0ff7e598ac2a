// Helpers shared by the historian parse tests (not imported by production code).
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseAll } from './parse-stream.ts'
import type { ParseOptions } from './options.ts'
import type { ParseSummary, Sample } from './types.ts'

export const FIXTURE_DIR = fileURLToPath(new URL('../../../../test/fixtures/historian/', import.meta.url))
/** Third-party exports, read as they are (see the README there): `shared/` sits beside the project's folder. */
export const SAMPLES_DIR = fileURLToPath(new URL('../../../../../shared/data/historian-samples/', import.meta.url))

export function fixtureBytes(name: string): Buffer {
  return readFileSync(FIXTURE_DIR + name)
}

export function parseFixture(name: string, options: ParseOptions): Promise<{ samples: Sample[]; summary: ParseSummary }> {
  return parseAll([fixtureBytes(name)], options)
}

/** A sample as one readable tuple: tag, ISO time, value or text, quality, line. */
export function brief(s: Sample): [string, string, number | string, string, number] {
  return [s.tag, new Date(s.ts).toISOString(), s.value ?? `text:${s.text}`, s.quality, s.line]
}

/** `bytes` cut at the given offsets (sorted, deduplicated, within bounds). */
export function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < bytes.length))].sort((a, b) => a - b)
  const parts: Uint8Array[] = []
  let start = 0
  for (const p of [...points, bytes.length]) {
    parts.push(bytes.subarray(start, p))
    start = p
  }
  return parts
}
