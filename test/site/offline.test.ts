import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, it } from 'node:test'

const ROOT = join(import.meta.dirname, '..', '..')
const SCRIPT = `node --import tsx ${JSON.stringify(join(ROOT, 'test', 'site', 'offline-session.ts'))}`

/** The first way this machine allows to run a command in a network namespace with only loopback up. */
function namespacePrefix(): string[] | undefined {
  for (const prefix of [
    ['unshare', '--net'],
    ['unshare', '--user', '--map-root-user', '--net'],
  ]) {
    const probe = spawnSync(prefix[0]!, [...prefix.slice(1), 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' })
    if (probe.status === 0) return prefix
  }
  return undefined
}

describe('offline operation (site mode)', () => {
  it('a whole session (init, first owner by CLI, serve, PIN sign-in, refresh, API calls) works with no network and no OIDC configuration', (t) => {
    const prefix = namespacePrefix()
    // Without namespaces the same session still runs (no OIDC, nothing external is configured), but the
    // report's `network` then shows whether the machine itself was offline.
    if (!prefix) t.diagnostic('network namespaces unavailable here: the session runs in the normal network')
    const command = prefix ? [...prefix, 'sh', '-c', `ip link set lo up && exec ${SCRIPT}`] : ['sh', '-c', `exec ${SCRIPT}`]
    const run = spawnSync(command[0]!, command.slice(1), {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 240_000,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    })
    assert.equal(run.status, 0, run.stderr)
    const report = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, unknown>
    if (prefix) assert.deepEqual(report.network, { dns: false, tcp: false }, 'inside the namespace nothing but loopback is reachable')
    assert.equal(report.error, undefined, String(report.error))
    assert.deepEqual(
      {
        init: report.init,
        orgCreate: report.orgCreate,
        ownerAdd: report.ownerAdd,
        login: report.login,
        refresh: report.refresh,
        listUsers: report.listUsers,
        userCount: report.userCount,
        mintKey: report.mintKey,
        useKey: report.useKey,
        jwks: report.jwks,
        serverExit: report.serverExit,
      },
      { init: 0, orgCreate: 0, ownerAdd: 0, login: 200, refresh: 200, listUsers: 200, userCount: 1, mintKey: 201, useKey: 200, jwks: 200, serverExit: 0 },
    )
  })
})
