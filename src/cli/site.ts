import { CLI_ACTOR, type Org } from '../identity.ts'
import { DomainError } from '../errors/domain-error.ts'
import type { CreateSiteInput, Site, UpdateSiteInput } from '../modules/sites/schemas.ts'
import type { SitesService } from '../modules/sites/service.ts'
import { JSON_OPTION, UsageError, type Command, type CommandIo, type CommandOption } from './command.ts'
import { onSite, OptionsInvalid } from './errors.ts'
import { ORG_OPTION, siteOrg } from './org-option.ts'
import { withServices } from './runtime.ts'
import { cliSiteServices } from './site-services.ts'
import { record, table } from './table.ts'

type Values = Record<string, string | boolean | undefined>

/** The site's fields as options; the option name → the field of the API's body (spec 2.2). */
const FIELD_OPTIONS: Record<string, CommandOption & { field: string }> = {
  name: { field: 'name', type: 'string', value: 'NAME', description: '1 to 200 characters' },
  description: { field: 'description', type: 'string', value: 'TEXT', description: "up to 2000 characters ('' clears it)" },
  location: { field: 'location', type: 'string', value: 'TEXT', description: "address, coordinates or region, up to 200 characters ('' clears it)" },
  'time-zone': {
    field: 'timeZone',
    type: 'string',
    value: 'ZONE',
    description: 'IANA time zone, e.g. Australia/Sydney (default UTC); local historian times and alarm shifts use it',
  },
  status: {
    field: 'status',
    type: 'string',
    value: 'STATUS',
    description: 'a code or its name: 0 Planned (default), 1 Commissioning, 2 Operational, 3 Maintenance, 4 Standby, 5 Decommissioned',
  },
}
const FIELD_OF_OPTION = Object.fromEntries(Object.entries(FIELD_OPTIONS).map(([option, o]) => [o.field, option]))
const SITE_OPTIONS = Object.fromEntries(Object.entries(FIELD_OPTIONS).map(([option, { field: _field, ...o }]) => [option, o]))

/** The body of POST/PUT /api/sites from the options, checked against the same schema as the API's. */
async function siteBody(values: Values, kind: 'create' | 'update', code?: string): Promise<Record<string, unknown>> {
  const [{ CreateSiteBody, UpdateSiteBody }, { SITE_STATUS }, { createBodyValidator }, { describeAjvErrors }] = await Promise.all([
    import('../modules/sites/schemas.ts'),
    import('../modules/sites/codes.ts'),
    import('../http/validation.ts'),
    import('../http/problem.ts'),
  ])
  const body: Record<string, unknown> = code === undefined ? {} : { code }
  for (const [option, { field }] of Object.entries(FIELD_OPTIONS)) {
    const value = values[option]
    if (typeof value !== 'string') continue
    if (field === 'description' || field === 'location') body[field] = value === '' ? null : value
    else if (field === 'status')
      body[field] = /^\d+$/.test(value) ? Number(value) : (SITE_STATUS.find((s) => s.name.toLowerCase() === value.toLowerCase())?.code ?? value)
    else body[field] = value
  }
  const check = createBodyValidator().compile(kind === 'create' ? CreateSiteBody : UpdateSiteBody)
  if (!check(body)) {
    const problems = describeAjvErrors(check.errors ?? [])
    const seen = new Set<string>()
    throw new OptionsInvalid(
      problems.flatMap(({ pointer, message }) => {
        const argument = pointer === '/code' ? 'CODE' : `--${FIELD_OF_OPTION[pointer.slice(1)] ?? pointer.slice(1)}`
        if (seen.has(`${argument} ${message}`)) return []
        seen.add(`${argument} ${message}`)
        return [{ argument, message }]
      }),
    )
  }
  return body
}

function withSites<T>(io: CommandIo, values: Values, fn: (s: { org: Org; sites: SitesService }) => Promise<T>): Promise<T> {
  return withServices(io.env, { requireKeySecret: false }, async ({ config, handle, orgs }) => {
    const org = await siteOrg(orgs, config, values.org)
    return fn({ org, sites: (await cliSiteServices(config, handle)).sites })
  })
}

const statusOf = (s: Site) => `${s.status} ${s.statusName}`

function showSite(io: CommandIo, site: Site, values: Values): void {
  if (values.json) {
    io.out(JSON.stringify(site))
    return
  }
  const fields: Array<[string, string]> = [
    ['code', site.code],
    ['name', site.name],
    ['status', statusOf(site)],
    ['time zone', site.timeZone],
    ['location', site.location ?? '-'],
    ['description', site.description ?? '-'],
    ['created', site.createdAt],
    ['updated', site.updatedAt],
  ]
  for (const line of record(fields)) io.out(line)
}

export const siteCommands: Command[] = [
  {
    path: ['site', 'create'],
    usage: 'CODE --name NAME [--time-zone ZONE] [--status STATUS] [--location TEXT] [--description TEXT] [--org SLUG] [--json]',
    positionals: ['CODE'],
    summary:
      "Creates a site (CODE: 1 to 50 letters, digits, - and _, unique in the organisation; every historian and site command takes it). Prints the site; --json as the API's JSON.",
    options: { ...SITE_OPTIONS, ...ORG_OPTION, ...JSON_OPTION },
    run: async ({ values, positionals }, io) => {
      const body = (await siteBody(values, 'create', positionals[0]!)) as CreateSiteInput
      await withSites(io, values, async ({ org, sites }) => showSite(io, await sites.create(org.id, CLI_ACTOR, body), values))
    },
  },
  {
    path: ['site', 'list'],
    usage: '[--status STATUS] [--org SLUG] [--json]',
    positionals: [],
    summary: 'Lists the sites by code: code, name, status, time zone, location (a table, or JSON lines with --json).',
    options: { status: { ...SITE_OPTIONS.status!, description: 'only the sites with this status (a code or its name)' }, ...ORG_OPTION, ...JSON_OPTION },
    run: async ({ values }, io) => {
      const status = typeof values.status === 'string' ? ((await siteBody({ status: values.status }, 'update')).status as number) : undefined
      await withSites(io, values, async ({ org, sites }) => {
        const all: Site[] = []
        let cursor: string | undefined
        do {
          const page = await sites.list(org.id, { limit: 500, cursor, status })
          all.push(...page.items)
          cursor = page.nextCursor ?? undefined
        } while (cursor !== undefined)
        if (values.json) {
          for (const s of all) io.out(JSON.stringify(s))
          return
        }
        if (all.length === 0) {
          io.err(`no sites in ${org.slug}${status === undefined ? '' : ' with this status'}`)
          return
        }
        const rows = all.map((s) => [s.code, s.name, statusOf(s), s.timeZone, s.location ?? '-'])
        for (const line of table([['CODE', 'NAME', 'STATUS', 'TIME ZONE', 'LOCATION'], ...rows])) io.out(line)
      })
    },
  },
  {
    path: ['site', 'show'],
    usage: 'CODE [--org SLUG] [--json]',
    positionals: ['CODE'],
    summary: 'Shows one site (NotFound, exit 1, when the organisation has no such site).',
    options: { ...ORG_OPTION, ...JSON_OPTION },
    run: ({ values, positionals }, io) =>
      withSites(io, values, async ({ org, sites }) => showSite(io, await onSite(org, positionals[0]!, () => sites.require(org.id, positionals[0]!)), values)),
  },
  {
    path: ['site', 'update'],
    usage: 'CODE [--name NAME] [--time-zone ZONE] [--status STATUS] [--location TEXT] [--description TEXT] [--org SLUG] [--json]',
    positionals: ['CODE'],
    summary: "Changes the fields given (the others stay); '' clears the description or the location. Prints the site.",
    options: { ...SITE_OPTIONS, ...ORG_OPTION, ...JSON_OPTION },
    run: async ({ values, positionals }, io) => {
      if (!Object.keys(FIELD_OPTIONS).some((o) => typeof values[o] === 'string'))
        throw new UsageError(
          `nothing to change: give at least one of ${Object.keys(FIELD_OPTIONS)
            .map((o) => `--${o}`)
            .join(', ')}`,
        )
      const body = (await siteBody(values, 'update')) as UpdateSiteInput
      await withSites(io, values, async ({ org, sites }) =>
        showSite(io, await onSite(org, positionals[0]!, () => sites.update(org.id, CLI_ACTOR, positionals[0]!, body)), values),
      )
    },
  },
  {
    path: ['site', 'delete'],
    usage: 'CODE --confirm CODE [--org SLUG]',
    positionals: ['CODE'],
    summary:
      'Deletes a site and everything it owns (controllers, instances, network, alarms, historian data) in one transaction. Without --confirm it deletes nothing and says what would go. A site linked over the fleet link is refused.',
    options: { confirm: { type: 'string', value: 'CODE', description: "the site's code again, to confirm" }, ...ORG_OPTION },
    run: ({ values, positionals }, io) =>
      withSites(io, values, async ({ org, sites }) => {
        const code = positionals[0]!
        try {
          await onSite(org, code, () => sites.remove(org.id, CLI_ACTOR, code, typeof values.confirm === 'string' ? values.confirm : undefined))
        } catch (err) {
          if (!(err instanceof DomainError) || err.code !== 'ConfirmationRequired') throw err
          const counts = Object.entries((err.extensions?.wouldDelete ?? {}) as Record<string, number>)
          io.err(`sitegrid site delete: nothing deleted. Deleting site ${code} removes ${counts.map(([what, n]) => `${what}: ${n}`).join(', ')}.`)
          io.err(`Repeat with --confirm ${code} to delete it.`)
          return 1
        }
        io.err(`deleted site ${code} of ${org.slug}`)
      }),
  },
]
