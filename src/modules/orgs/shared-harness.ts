import { after, type TestContext } from 'node:test'
import { harness, type Harness, type TestDialect } from '../../../test/harness.ts'

/**
 * One application per suite, built on first use and closed after the suite: building one per test costs
 * more than the test on a loaded machine. Tests still share no rows: each creates its own organisations.
 * Call inside `describe`.
 */
export function sharedHarness(dialect: TestDialect, env: Record<string, string> = {}): () => Promise<Harness> {
  let built: Promise<Harness> | undefined
  const cleanups: Array<() => unknown> = []
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })
  const context = {
    after: (fn: () => unknown) => {
      cleanups.push(fn)
    },
  } as unknown as TestContext
  return () => (built ??= harness(context, dialect, env))
}
