import assert from 'node:assert/strict'
import { test } from 'node:test'

// The browser's zone is the process's here: set before dom.ts makes its formatters.
process.env.TZ = 'Australia/Perth'
const { formatTime } = await import('./dom.ts')

test('a time without a zone of the page names the browser zone it is shown in; one in the page zone does not repeat it', () => {
  const iso = '2026-01-05T06:00:00.000Z'
  const local = formatTime(iso)
  assert.match(local, /14:00|2:00/)
  assert.match(local, / (GMT\+8|AWST)$/)
  assert.doesNotMatch(formatTime(iso, 'Asia/Kolkata'), /GMT|IST/)
  assert.equal(formatTime(null), '—')
})
