// A whole on-site session, run as a script (inside a network namespace with only loopback, by
// offline.test.ts): init, create the organisation and the first owner with the CLI, serve, sign in with the
// PIN, refresh, call the API, mint and use an API key. Prints one JSON report on stdout.
import { lookup } from 'node:dns/promises'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from '../cli/process.ts'
import { runSitegrid } from './cli-run.ts'

const report: Record<string, unknown> = {}

async function reachable(): Promise<{ dns: boolean; tcp: boolean }> {
  const dns = await lookup('registry.npmjs.org').then(
    () => true,
    () => false,
  )
  const tcp = await new Promise<boolean>((resolve) => {
    const socket = connect({ host: '1.1.1.1', port: 443, timeout: 2000 })
    socket.on('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.on('error', () => resolve(false))
    socket.on('timeout', () => {
      socket.destroy()
      resolve(false)
    })
  })
  return { dns, tcp }
}

async function json(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null }
}

async function waitUntilHealthy(url: string): Promise<void> {
  for (let i = 0; i < 900; i++) {
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const cwd = mkdtempSync(join(tmpdir(), 'sitegrid-offline-'))
try {
  report.network = await reachable()
  report.init = runSitegrid(['init'], { cwd }).code
  report.orgCreate = runSitegrid(['org', 'create', 'plant', '--name', 'Hunter Valley CHPP'], { cwd }).code
  const added = runSitegrid(['site-user', 'add', '--email', 'owner@plant.example', '--name', 'Site Owner', '--role', 'owner'], { cwd, input: '24681357\n' })
  report.ownerAdd = added.code
  const server = await startServer({ cwd, env: {} })
  try {
    await waitUntilHealthy(server.url) // startServer waits 20 s at most; a loaded machine may need longer
    const login = await json(`${server.url}/auth/site/login`, { method: 'POST', body: { email: 'owner@plant.example', pin: '24681357' } })
    report.login = login.status
    const refreshed = await json(`${server.url}/auth/site/refresh`, { method: 'POST', body: { refreshToken: login.body?.refreshToken } })
    report.refresh = refreshed.status
    const bearer = { authorization: `Bearer ${String(refreshed.body?.accessToken)}` }
    const users = await json(`${server.url}/api/site/users`, { headers: bearer })
    report.listUsers = users.status
    report.userCount = (users.body?.items as unknown[] | undefined)?.length
    const minted = await json(`${server.url}/api/admin/api-keys`, {
      method: 'POST',
      headers: bearer,
      body: { role: 'admin', name: 'HMI 1', expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() },
    })
    report.mintKey = minted.status
    const keys = await json(`${server.url}/api/admin/api-keys`, { headers: { 'x-api-key': String(minted.body?.plaintext) } })
    report.useKey = keys.status
    report.jwks = (await json(`${server.url}/.well-known/jwks.json`)).status
  } finally {
    report.serverExit = await server.stop()
  }
} catch (err) {
  report.error = String(err)
} finally {
  rmSync(cwd, { recursive: true, force: true })
}
process.stdout.write(`${JSON.stringify(report)}\n`)
