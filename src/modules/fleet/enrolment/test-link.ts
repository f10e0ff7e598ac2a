import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { harness, sleep, type Harness, type TestDialect } from '../../../../test/harness.ts'
import type { Org } from '../../../identity.ts'
import { historianStoredParts } from '../../historian/transfer.ts'
import { createOrgsService } from '../../orgs/service.ts'
import { createSitesService } from '../../sites/service.ts'
import { createTenantTransferService } from '../../tenant-transfer/service.ts'
import { createLinkHttp } from '../agent/http.ts'
import { createEnrolment } from './service.ts'
import { ownPostgresDatabase } from '../../../../test/support/fleet-link.ts'

export type Cred = { org: Org; apiKey: string }

/** A cloud cell (one process) listening on loopback, with an organisation, its owner key and two sites with equipment. */
export async function cloudCell(t: TestContext, dialect: TestDialect, env: Record<string, string> = {}) {
  const cloud = await harness(t, dialect, { SITEGRID_MODE: 'cloud', ...env })
  const { org, key } = await cloud.orgWithKey('owner')
  const owner: Cred = { org, apiKey: key }
  const as = async (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
    cloud.inject(owner, { method, url, ...(payload === undefined ? {} : { payload }) })
  for (const code of ['S1', 'S2']) {
    assert.equal((await as('POST', '/api/sites', { code, name: `Plant ${code} — Süd`, timeZone: 'Australia/Perth' })).statusCode, 201)
    const plc = await as('POST', `/api/sites/${code}/controllers`, {
      name: `PLC ${code}`,
      platform: 1,
      assetNumber: `A-${code}`,
      connection: { protocol: 'EtherNet/IP', ipAddress: '10.20.1.15' },
    })
    assert.equal(plc.statusCode, 201, plc.body)
    for (const id of ['CV-1', 'CV-2']) {
      const res = await as('POST', `/api/sites/${code}/instances`, {
        id,
        name: `Conveyor ${id}`,
        typeId: 'conveyor',
        assetNumber: `${code}-${id}`,
        controllerId: plc.json().id,
      })
      assert.equal(res.statusCode, 201, res.body)
    }
  }
  await cloud.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = cloud.app.server.address() as AddressInfo
  const host = `${org.slug}.localhost`
  const url = `http://${host}:${port}`
  // The site server's real link client ({slug}.localhost resolves to loopback there, Host and all).
  const http = createLinkHttp({ cloudUrl: url, env: {}, timeoutMs: 30_000 })
  t.after(() => http.close())
  return { cloud, org, owner, as, port, host, url, http }
}

/**
 * A site server and its enrolment, built as `sitegrid link enrol` builds it: on SQLite, or on a PostgreSQL database of
 * its own (the cloud cell's is another), with the app role where the tests use it.
 */
export async function siteServer(t: TestContext, env: Record<string, string> = {}, dialect: TestDialect = 'sqlite') {
  const database = dialect === 'postgres' ? await ownPostgresDatabase() : {}
  const site = await harness(t, dialect, { ...database, SITEGRID_MODE: 'site', ...env })
  const { handle, clock, config } = site
  const orgs = createOrgsService({ handle, clock })
  const sites = createSitesService({ handle, clock, dependents: [] })
  const transfer = createTenantTransferService({
    handle,
    clock,
    mode: 'site',
    baseDomain: config.baseDomain,
    sites,
    storedParts: historianStoredParts,
    maxPackageBytes: config.tenantPackageMaxBytes,
    maxInflatedBytes: config.tenantPackageMaxInflatedBytes,
  })
  const enrolment = createEnrolment({ handle, clock, keySecret: config.keySecret!, siteOrgSlug: config.siteOrgSlug, orgs, sites, transfer })
  return { site, orgs, enrolment }
}

/** Registers a site server in the cloud as an organisation admin; its id and one-time code. */
export async function register(cloud: Harness, owner: Cred, sites: string[] = ['S1', 'S2']): Promise<{ id: string; code: string }> {
  const res = await cloud.inject(owner, { method: 'POST', url: '/api/admin/site-servers', payload: { name: 'Pit 3 server', sites } })
  assert.equal(res.statusCode, 201, res.body)
  return { id: res.json().id, code: res.json().enrolmentCode }
}

/** Fast agent timings for tests: local changes looked for every 20 ms, a 1 s long poll, retries at most every 200 ms. */
export const FAST_LINK = {
  SITEGRID_LINK_PUSH_IDLE_MS: '20',
  SITEGRID_LINK_PULL_WAIT_MS: '1000',
  SITEGRID_LINK_HEARTBEAT_MS: '200',
  SITEGRID_LINK_BACKOFF_MAX_MS: '200',
}

/** Polls `read` until `done` holds (at most 30 s): the link is asynchronous, a test waits for what it promises. */
export async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let last: T | undefined
  for (let i = 0; i < 600; i++) {
    last = await read()
    if (done(last)) return last
    await sleep(50)
  }
  assert.fail(`${what}: not reached in 30 s; last seen ${JSON.stringify(last)}`)
}

/** An active HI alarm event of an instance at `at` (epoch ms). */
export const alarmEvent = (eventId: string, instanceId: string, at: number) => ({
  eventId,
  instanceId,
  condition: 'HI',
  priority: 'high',
  state: 'active',
  occurredAt: new Date(at).toISOString(),
})
