import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { it } from 'node:test'
import { FailureDigest } from './failure-digest.ts'

const fixture = fileURLToPath(new URL('./fixtures/runner/failing-suite.ts', import.meta.url))

function report(): string[] {
  // Without NODE_TEST_CONTEXT: the runner must not take itself for a child of this test run and report to it.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', fixture], { encoding: 'utf8', env })
  assert.equal(run.status, 1, 'the fixture fails')
  return run.stdout.split('\n')
}

function digestOf(lines: string[]): { passed: string[]; tail: string[] } {
  const digest = new FailureDigest()
  const passed = lines.flatMap((line) => digest.push(line))
  return { passed, tail: digest.end() }
}

it('repeats each failed test with its suites and error just above the closing summary, and passes the report through', () => {
  const lines = report()
  const { passed, tail } = digestOf(lines)
  assert.deepEqual(
    [...passed, ...tail.filter((line) => !line.startsWith('# ') || /^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms)\b/.test(line))],
    lines,
  )

  const summaryAt = tail.findIndex((line) => /^# tests \d+$/.test(line))
  assert.ok(summaryAt > 0, 'the summary follows the digest')
  const digest = tail.slice(0, summaryAt).join('\n')
  assert.match(digest, /^# 2 failed test\(s\)/)
  assert.match(digest, /# not ok: outer suite > inner suite > compares two numbers\n/)
  assert.match(digest, /arithmetic went wrong/)
  assert.match(digest, /# not ok: fails at the top level\n/)
  assert.match(digest, /top-level failure/)
  assert.match(digest, /failing-suite\.ts/, 'the location is kept')
  assert.doesNotMatch(digest, /not ok: outer suite\n|not ok: outer suite > inner suite\n/, 'suites failed by a test inside are not repeated')
  assert.doesNotMatch(digest, /duration_ms/)
  assert.match(tail.slice(summaryAt).join('\n'), /^# tests 3\n# suites 2\n# pass 1\n# fail 2\n/)
})

it('a passing run prints no digest: the summary comes through unchanged', () => {
  const { passed, tail } = digestOf(['# Subtest: a', 'ok 1 - a', '1..1', '# tests 1', '# pass 1', '# fail 0'])
  assert.deepEqual(passed, ['# Subtest: a', 'ok 1 - a', '1..1'])
  assert.deepEqual(tail, ['# tests 1', '# pass 1', '# fail 0'])
})

it('the runner outlives a reader that goes away: it still waits for the tests and exits with their code', async () => {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  const runner = fileURLToPath(new URL('./run.ts', import.meta.url))
  const child = spawn(process.execPath, ['--import', 'tsx', runner, fixture], { env: { ...env, SITEGRID_TEST_DIALECTS: 'sqlite' } })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  // The first line read, the pipe is closed: the runner's later writes meet EPIPE.
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
  child.stdout.destroy()
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  assert.equal(code, 1, `the fixture's failures decide the exit code; stderr: ${stderr}`)
  assert.doesNotMatch(stderr, /EPIPE|Unhandled 'error'/)
})
