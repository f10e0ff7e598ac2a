/** A text a spreadsheet would run as a formula: it starts with =, +, -, @, a tab or a carriage return. */
const FORMULA_START = /^[=+\-@\t\r]/
/** A number as JavaScript writes one (`-12.5`, `-1e-7`): left as it is, though it starts with a minus. */
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i

/**
 * One field of the CSV the historian answers (RFC 4180): in double quotes, its quotes doubled, when it holds a comma, a
 * quote or a line break. A text that a spreadsheet would run as a formula (OWASP "CSV injection": a text state or a
 * file's column name such as `=HYPERLINK(…)`) is written with a single quote before it, which spreadsheets show as
 * text; numbers are written as they are.
 */
export function csvCell(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value)
  const safe = FORMULA_START.test(text) && !NUMBER.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}
