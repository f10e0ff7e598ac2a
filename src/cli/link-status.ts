import { JSON_OPTION, type Command } from './command.ts'
import { withServices } from './runtime.ts'

/**
 * `sitegrid link status`: a site server's link as GET /api/link shows it, read from the database (the agent's live
 * state is in the serving process: here `state` is `stopped` unless the credential was revoked). Cloud cells list
 * their site servers with `sitegrid link list`.
 */
export const linkStatusCommand: Command = {
  path: ['link', 'status'],
  usage: '[--org SLUG] [--json]',
  positionals: [],
  summary:
    "Site server: the link's enrolment, last contact and last error, what waits to go up (changes, bytes, the oldest), how far the cloud's changes were applied and the unresolved conflicts; --json for one JSON object. Cloud cells: use `link list`.",
  options: { org: { type: 'string', value: 'SLUG', description: 'the organisation (default: SITEGRID_SITE_ORG, or the only one)' }, ...JSON_OPTION },
  run: async ({ values }, io) =>
    withServices(io.env, { requireKeySecret: false }, async ({ config, handle, orgs }) => {
      if (config.mode !== 'site') {
        io.err('sitegrid link status runs on a site server (SITEGRID_MODE=site); on a cloud cell, `sitegrid link list --org SLUG` shows the site servers')
        return 2
      }
      const all = await orgs.list()
      const slug = typeof values.org === 'string' ? values.org : config.siteOrgSlug
      const org = slug === undefined ? (all.length === 1 ? all[0] : undefined) : all.find((o) => o.slug === slug)
      if (!org) {
        io.err(all.length === 0 ? 'no organisation on this server: not enrolled (sitegrid link enrol)' : 'several organisations: name one with --org SLUG')
        return 2
      }
      const { readLinkStatus } = await import('../modules/fleet/status.ts')
      const status = await readLinkStatus(handle, org.id, undefined)
      if (values.json === true) {
        io.out(JSON.stringify(status))
        return 0
      }
      if (!status.enrolled) {
        io.out(`${org.slug}: not enrolled (sitegrid link enrol --cloud URL --code CODE)`)
        return 0
      }
      io.out(
        [
          `organisation   ${org.slug}`,
          `cloud          ${status.cloudUrl}`,
          `server         ${status.serverId} (sites ${status.sites.join(', ')})`,
          `credential     ${status.state === 'revoked' ? 'revoked: enrol again with a new code' : 'held (sealed)'}`,
          `last contact   ${status.lastContactAt ?? 'never'}`,
          `last error     ${status.lastError ?? 'none'}`,
          `waiting up     ${status.up.items} changes, ${status.up.bytes} bytes${status.up.oldestAt ? `, oldest ${status.up.oldestAt}` : ''}`,
          `pulled to      ${status.pulledTo.tx}.${status.pulledTo.seq}`,
          `conflicts      ${status.unresolvedConflicts} unresolved`,
        ].join('\n'),
      )
      return 0
    }),
}
