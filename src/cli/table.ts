/** Rows as aligned columns (a header row first), for the listing commands' readable output. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)))
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
}

/** One record as `label: value` lines, labels aligned. */
export function record(fields: Array<[string, string]>): string[] {
  const width = Math.max(...fields.map(([label]) => label.length))
  return fields.map(([label, value]) => `${`${label}:`.padEnd(width + 1)} ${value}`)
}
