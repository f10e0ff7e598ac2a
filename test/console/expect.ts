import assert from 'node:assert/strict'

/** Waits until `check` holds (the console renders asynchronously), failing with `message` after `timeoutMs`. */
export async function expect(check: () => Promise<boolean>, message: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) assert.fail(message)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
