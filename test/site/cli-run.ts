import { spawnSync } from 'node:child_process'
import { BIN } from '../cli/process.ts'

/** Runs `sitegrid` with `input` on standard input (how the PIN is given). */
export function runSitegrid(args: string[], options: { cwd: string; input?: string; env?: Record<string, string> }) {
  const result = spawnSync(BIN, args, {
    cwd: options.cwd,
    input: options.input ?? '',
    env: { PATH: process.env.PATH, ...options.env },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}
