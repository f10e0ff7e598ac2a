import { join } from 'node:path'
import { systemClock } from '../clock.ts'
import type { Config } from '../config/schema.ts'
import type { DatabaseHandle } from '../db/connect.ts'
import type { LinkHttp } from '../modules/fleet/agent/http.ts'
import { CLI_ACTOR } from '../identity.ts'
import { NotEnrolled } from '../modules/fleet/enrolment/errors.ts'
import { JSON_OPTION, UsageError, type Command } from './command.ts'
import { orgBySlug } from './org-option.ts'
import { withServices } from './runtime.ts'
import { cliTenantTransfer } from './tenant-transfer.ts'

function requireString(values: Record<string, unknown>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

function requireMode(config: Config, mode: Config['mode'], command: string): void {
  if (config.mode !== mode)
    throw new UsageError(`sitegrid link ${command} runs on a ${mode === 'cloud' ? 'cloud cell' : 'site server'} (SITEGRID_MODE=${mode})`)
}

/**
 * The services as `serve` builds them (app.ts): the site-servers area and what seeding and enrolment read, and the
 * enrolment. Loaded on use, so that `sitegrid --help` loads none of them (src/cli/build.ts).
 */
async function linkServices(config: Config, handle: DatabaseHandle) {
  const [{ createEnrolment }, { currentCursor }, { createSiteServersService }, { createSitesService }] = await Promise.all([
    import('../modules/fleet/enrolment/service.ts'),
    import('../modules/fleet/outbox/store.ts'),
    import('../modules/fleet/site-servers/service.ts'),
    import('../modules/sites/service.ts'),
  ])
  const clock = systemClock
  const sites = createSitesService({ handle, clock, dependents: [] })
  const transfer = await cliTenantTransfer(config, handle, sites)
  const siteServers = createSiteServersService({
    handle,
    clock,
    keySecret: config.keySecret!,
    sites,
    currentCursor: (db, orgId) => currentCursor(db, handle.dialect, orgId),
    exportSite: (org, site, versions) => transfer.exportPackage(org, site, versions),
  })
  const enrolment = (orgs: Parameters<typeof createEnrolment>[0]['orgs']) =>
    createEnrolment({ handle, clock, keySecret: config.keySecret!, siteOrgSlug: config.siteOrgSlug, orgs, sites, transfer })
  return { sites, transfer, siteServers, enrolment }
}

/** The link's client (through HTTPS_PROXY/HTTP_PROXY/NO_PROXY when set), closed once `fn` ends. */
async function withCloud<T>(cloudUrl: string, env: NodeJS.ProcessEnv, fn: (http: LinkHttp) => Promise<T>): Promise<T> {
  const { createLinkHttp } = await import('../modules/fleet/agent/http.ts')
  const http = createLinkHttp({ cloudUrl, env, timeoutMs: LINK_TIMEOUT_MS })
  try {
    return await fn(http)
  } finally {
    await http.close()
  }
}

/** The wait for an answer's headers, and then between a seed's bytes (a slow WAN). */
const LINK_TIMEOUT_MS = 60_000

export const linkCommands: Command[] = [
  {
    path: ['link', 'register'],
    usage: '--org SLUG --name NAME --site CODE [--site CODE …]',
    positionals: [],
    summary:
      "Cloud cell: registers a site server for some of the organisation's sites and prints its one-time enrolment code alone on stdout (valid 24 h, shown once). On the site server: sitegrid link enrol --cloud URL --code CODE.",
    options: {
      org: { type: 'string', value: 'SLUG', description: 'the organisation (its slug)' },
      name: { type: 'string', value: 'NAME', description: 'a label for the site server' },
      site: { type: 'string', multiple: true, value: 'CODE', description: 'a site the server holds (its code)' },
    },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: true }, async ({ config, handle, orgs }) => {
        requireMode(config, 'cloud', 'register')
        const org = await orgBySlug(orgs, requireString(values, 'org'))
        const sites = (values.site as unknown as string[] | undefined) ?? []
        if (sites.length === 0) throw new UsageError('--site is required (once per site)')
        const registered = await (await linkServices(config, handle)).siteServers.register(org.id, CLI_ACTOR, { name: requireString(values, 'name'), sites })
        io.out(registered.enrolmentCode)
        io.err(`registered site server ${registered.id} for ${registered.sites.join(', ')}; the code expires ${registered.codeExpiresAt}`)
      }),
  },
  {
    path: ['link', 'code'],
    usage: '--org SLUG SERVERID',
    positionals: ['SERVERID'],
    summary: 'Cloud cell: a new one-time enrolment code for a site server (e.g. after a revoke), printed alone on stdout; re-enrolling keeps its id.',
    options: { org: { type: 'string', value: 'SLUG', description: 'the organisation (its slug)' } },
    run: ({ values, positionals }, io) =>
      withServices(io.env, { requireKeySecret: true }, async ({ config, handle, orgs }) => {
        requireMode(config, 'cloud', 'code')
        const org = await orgBySlug(orgs, requireString(values, 'org'))
        const issued = await (await linkServices(config, handle)).siteServers.issueEnrolmentCode(org.id, CLI_ACTOR, positionals[0]!)
        io.out(issued.enrolmentCode)
        io.err(`new enrolment code for site server ${issued.id}; it expires ${issued.codeExpiresAt}`)
      }),
  },
  {
    path: ['link', 'revoke'],
    usage: '--org SLUG SERVERID',
    positionals: ['SERVERID'],
    summary: "Cloud cell: revokes a site server's link credential at once, in every process sharing the database. The site server keeps working locally.",
    options: { org: { type: 'string', value: 'SLUG', description: 'the organisation (its slug)' } },
    run: ({ values, positionals }, io) =>
      withServices(io.env, { requireKeySecret: true }, async ({ config, handle, orgs }) => {
        requireMode(config, 'cloud', 'revoke')
        const org = await orgBySlug(orgs, requireString(values, 'org'))
        await (await linkServices(config, handle)).siteServers.revoke(org.id, CLI_ACTOR, positionals[0]!)
        io.err(`revoked site server ${positionals[0]}`)
      }),
  },
  {
    path: ['link', 'list'],
    usage: '--org SLUG [--json]',
    positionals: [],
    summary: "Cloud cell: the organisation's site servers, oldest first: id, name, sites, status, last contact, last error (tab-separated, or JSON lines).",
    options: { org: { type: 'string', value: 'SLUG', description: 'the organisation (its slug)' }, ...JSON_OPTION },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: true }, async ({ config, handle, orgs }) => {
        requireMode(config, 'cloud', 'list')
        const org = await orgBySlug(orgs, requireString(values, 'org'))
        const { siteServers } = await linkServices(config, handle)
        let cursor: string | undefined
        do {
          const page = await siteServers.list(org.id, { limit: 200, ...(cursor === undefined ? {} : { cursor }) })
          for (const s of page.items) {
            io.out(values.json ? JSON.stringify(s) : [s.id, s.name, s.sites.join(','), s.status, s.lastContactAt ?? '-', s.lastError ?? '-'].join('\t'))
          }
          cursor = page.nextCursor ?? undefined
        } while (cursor !== undefined)
      }),
  },
  {
    path: ['link', 'enrol'],
    usage: '--cloud URL --code CODE',
    positionals: [],
    summary:
      "Site server: enrols with the organisation's cloud cell (https://{slug}.{domain}) using a one-time code. Creates the organisation here when absent, stores the link credential sealed, and seeds the sites this server holds no data of. A server holding another organisation's data is refused.",
    options: {
      cloud: { type: 'string', value: 'URL', description: "the organisation's cloud cell, https://{slug}.{domain}" },
      code: { type: 'string', value: 'CODE', description: 'the one-time enrolment code printed by `link register` or `link code` on the cloud (24 h)' },
    },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: true }, async ({ config, handle, orgs }) => {
        requireMode(config, 'site', 'enrol')
        const cloudUrl = requireString(values, 'cloud')
        if (!/^https?:\/\/[^/]/i.test(cloudUrl))
          throw new UsageError(`--cloud must be the cloud cell's http(s) URL, e.g. https://acme.cloud.example; got ${JSON.stringify(cloudUrl)}`)
        const enrolment = (await linkServices(config, handle)).enrolment(orgs)
        const code = requireString(values, 'code')
        const result = await withCloud(cloudUrl, io.env, (http) => enrolment.enrol({ cloudUrl, code, http, actor: CLI_ACTOR }))
        io.err(
          `${result.isReenrolment ? 're-enrolled' : 'enrolled'} as site server ${result.serverId} of ${result.org.slug} (${result.org.id}) for ${result.sites.join(', ')}; ` +
            `seeded ${result.seeded.length ? result.seeded.join(', ') : 'nothing'}; the pull starts at ${result.mark.tx}.${result.mark.seq}`,
        )
      }),
  },
  {
    path: ['link', 'seed'],
    usage: '',
    positionals: [],
    summary:
      'Site server: finishes a seed from the cloud that was cut off during `link enrol` (with the credential stored then, no new code needed). Does nothing when the seed completed.',
    options: {},
    run: (_args, io) =>
      withServices(io.env, { requireKeySecret: true }, async ({ config, handle, orgs }) => {
        requireMode(config, 'site', 'seed')
        const enrolment = (await linkServices(config, handle)).enrolment(orgs)
        const peer = await enrolment.peer()
        if (!peer) throw new NotEnrolled()
        const result = await withCloud(peer.cloudUrl, io.env, (http) => enrolment.resumeSeeding({ http, actor: CLI_ACTOR }))
        io.err(`seeded ${result.seeded.length ? result.seeded.join(', ') : 'nothing'}; the pull starts at ${result.mark.tx}.${result.mark.seq}`)
      }),
  },
  {
    path: ['link', 'reseed'],
    usage: '[--keep FILE]',
    positionals: [],
    summary:
      "Site server, after a restore from an old backup (the link shows `diverged`): starts the link anew from the cloud's state. " +
      'Stop the server first: it refuses while a `sitegrid serve` holds the database (and no serve starts until it ends). ' +
      "It announces a new epoch to the cloud, removes this server's data of its linked sites and seeds them again from the cloud " +
      '(as `link enrol` does). Changes made here that the cloud never acknowledged cannot be applied on top of its state: they ' +
      'are not sent but kept, one JSON change a line, in --keep FILE (default: beside the database, <database>.reseed-<time>.jsonl), ' +
      'for the operator to read and redo by hand. A reseed cut during the seed is finished by `sitegrid link seed`.',
    options: { keep: { type: 'string', value: 'FILE', description: 'where to keep the changes the cloud never acknowledged (default: beside the database)' } },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: true }, async ({ config, handle, orgs }) => {
        requireMode(config, 'site', 'reseed')
        const dbPath = config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl.slice('sqlite:'.length) : undefined
        // The server stopped: a serve holding the file refuses the reseed (SqliteFileServed names it); held from here
        // until this command ends, so no serve starts in the middle of it.
        if (dbPath !== undefined) (await import('../db/server-lock.ts')).holdSqliteServerLock(dbPath)
        const enrolment = (await linkServices(config, handle)).enrolment(orgs)
        const peer = await enrolment.peer()
        if (!peer) throw new NotEnrolled()
        const stamp = new Date(systemClock.now()).toISOString().replace(/[:.]/g, '-')
        const keep =
          typeof values.keep === 'string' && values.keep !== ''
            ? values.keep
            : dbPath !== undefined && dbPath !== ':memory:'
              ? `${dbPath}.reseed-${stamp}.jsonl`
              : join(process.cwd(), `sitegrid-reseed-${stamp}.jsonl`)
        const result = await withCloud(peer.cloudUrl, io.env, (http) => enrolment.reseed({ http, actor: CLI_ACTOR, unacknowledgedFile: keep }))
        io.err(
          `reseeded site server ${result.serverId} (new epoch): seeded ${result.seeded.length ? result.seeded.join(', ') : 'nothing'}; the pull starts at ${result.mark.tx}.${result.mark.seq}; ` +
            (result.unacknowledgedFile === null
              ? 'no change made here was left unacknowledged'
              : `${result.unacknowledged} change(s) made here that the cloud never acknowledged were not sent: kept in ${result.unacknowledgedFile}`),
        )
      }),
  },
]
