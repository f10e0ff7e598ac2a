// Issue 27: the README's walkthrough runs as written. Every ```sh block of README.md after the first (the first is
// `npm ci && npm start` and `npm test`: what CI itself runs) is run in order, as one bash script with `set -euo
// pipefail`, in a temporary folder laid out like a clone (bin/, package.json and examples/ linked to this one, and
// `../shared` beside it), against the fresh servers the blocks start themselves. Three things differ from a reader's
// shell, each said here: `npm ci` is skipped (this clone is installed), the ports 8080 and 8081 become free ones
// (tests run side by side), and the environment holds no SITEGRID_* setting. A README that drifts from the product
// (a flag, a field, a path, an answer's shape) stops the script and fails here with its output.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { freePort } from '../postgres.ts'
import './process.ts' // builds dist/ when a source is newer (bin/sitegrid refuses a stale build)

const ROOT = resolve(import.meta.dirname, '..', '..')

/** The ```sh blocks of a Markdown text, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
}

function portsReplaced(script: string, first: number, second: number): string {
  for (const literal of ['127.0.0.1:8080', '127.0.0.1:8081', 'PORT=8081']) assert.ok(script.includes(literal), `the walkthrough names ${literal}`)
  return script.replaceAll('127.0.0.1:8080', `127.0.0.1:${first}`).replaceAll('127.0.0.1:8081', `127.0.0.1:${second}`).replaceAll('PORT=8081', `PORT=${second}`)
}

describe('README.md', () => {
  it('the walkthrough runs as written on fresh servers: a plant, its network, alarms, a historian import, a tenant moved to a second server, a sign-in', async (t) => {
    const blocks = shellBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'))
    assert.ok(blocks.length >= 8, `README.md has ${blocks.length} sh blocks`)
    assert.match(blocks[0]!, /^npm ci && npm start/, 'the first block is the install-and-start line CI runs itself')

    const top = mkdtempSync(join(tmpdir(), 'sitegrid-readme-'))
    const clone = join(top, 'sitegrid')
    mkdirSync(clone)
    for (const entry of ['bin', 'package.json', 'examples']) symlinkSync(join(ROOT, entry), join(clone, entry))
    symlinkSync(resolve(ROOT, '..', 'shared'), join(top, 'shared'))

    const [first, second] = [await freePort(), await freePort()]
    const script = [
      `npm() { if [ "$1" = ci ]; then echo '(npm ci: this clone is installed)'; return 0; fi; command npm "$@"; }`,
      portsReplaced(blocks.slice(1).join('\n'), first, second),
    ].join('\n')
    const env: Record<string, string> = { PATH: process.env.PATH!, HOME: top, PORT: String(first), LANG: 'C.UTF-8' }
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: clone, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    // The servers the blocks start stay in the script's process group: stopped (SIGTERM, then SIGKILL) whatever happens.
    const stopGroup = async () => {
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        try {
          process.kill(-child.pid!, signal)
        } catch {
          return // the group is gone
        }
        await new Promise((r) => setTimeout(r, 1_500))
      }
    }
    t.after(async () => {
      await stopGroup()
      rmSync(top, { recursive: true, force: true })
    })
    const code = await new Promise<number | null>((done) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 240_000)
      child.on('exit', (c) => {
        clearTimeout(timer)
        done(c)
      })
    })
    assert.equal(code, 0, `the walkthrough stopped (exit ${code}):\n${output.slice(-6_000)}`)
    // What the blocks print, checked where it says the walkthrough did what it claims.
    assert.match(output, /"code":"chpp-1"/)
    assert.match(output, /"isSupplied":true/)
    assert.match(output, /"state":"active_acknowledged"/)
    assert.match(output, /"status": "complete",\s*"valuesRead": 3495,\s*"samplesStored": 3431,\s*"sentinelValues": 64/)
    assert.match(output, /\[\s*"CR-201",\s*"CV-101",\s*"LAB-1"\s*\]/, "the second server answers the moved site's instances")
    assert.match(output, /<title>sitegrid console<\/title>/)
    assert.match(output, /"refreshToken"/)
  })
})
