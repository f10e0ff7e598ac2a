// Reads the TAP report of Node's test runner line by line, passes it through, and repeats each failed test (its
// suites' names, its error and its location) just above the closing summary, where a reader of the last lines looks.
// Suites that failed only because a test inside them did are not repeated; the test is.

const MAX_FAILURES = 20
const MAX_BLOCK_LINES = 40

// The block's opening, its duration and the runner's own stack frames say nothing about the failure.
function isNoise(detail: string): boolean {
  return detail === '---' || detail.startsWith('duration_ms:') || /\(node:|^\s*async Promise\.all /.test(detail)
}

interface Failure {
  path: string[]
  block: string[]
}

export class FailureDigest {
  readonly #names: string[] = []
  readonly #failures: Failure[] = []
  #open: { failure: Failure; end: string } | undefined
  #held: string[] | undefined

  /** Takes one line of the report; returns the lines to print now (the closing summary is held for end()). */
  push(line: string): string[] {
    if (this.#held) {
      this.#held.push(line)
      return []
    }
    const open = this.#open
    if (open) {
      if (line === open.end) {
        this.#settle(open.failure)
        this.#open = undefined
      } else {
        const detail = line.slice(Math.min(open.end.length - 3, line.length - line.trimStart().length))
        if (!isNoise(detail)) open.failure.block.push(detail)
      }
      return [line]
    }
    const indent = line.length - line.trimStart().length
    const depth = Math.floor(indent / 4)
    const body = line.slice(indent)
    const subtest = /^# Subtest: (.*)$/.exec(body)
    if (subtest) {
      this.#names.length = depth
      this.#names[depth] = subtest[1] ?? ''
      return [line]
    }
    const notOk = /^not ok \d+ - (.*?)(?: # .*)?$/.exec(body)
    if (notOk) {
      const path = [...this.#names.slice(0, depth), notOk[1] ?? '']
      this.#open = { failure: { path, block: [] }, end: `${' '.repeat(indent)}  ...` }
      return [line]
    }
    if (depth === 0 && /^# tests \d+$/.test(body)) {
      this.#held = [line]
      return []
    }
    return [line]
  }

  /** The digest (TAP comments) followed by the held closing summary. */
  end(): string[] {
    const held = this.#held ?? []
    if (this.#failures.length === 0) return held
    const out = [`# ${this.#failures.length} failed test(s), repeated from above:`]
    for (const { path, block } of this.#failures.slice(0, MAX_FAILURES)) {
      out.push(`# not ok: ${path.join(' > ')}`)
      const shown = block.slice(0, MAX_BLOCK_LINES)
      for (const line of shown) out.push(`#   ${line}`)
      if (block.length > shown.length) out.push(`#   (${block.length - shown.length} more lines above)`)
    }
    if (this.#failures.length > MAX_FAILURES) out.push(`# and ${this.#failures.length - MAX_FAILURES} more, above`)
    return [...out, ...held]
  }

  #settle(failure: Failure): void {
    if (failure.block.some((line) => /failureType: 'subtestsFailed'/.test(line))) return
    this.#failures.push(failure)
  }
}
