import { siteOrgAmbiguity } from '../config/site-org.ts'
import { JSON_OPTION, type Command } from './command.ts'
import { onOrg } from './errors.ts'
import { withServices } from './runtime.ts'

export const orgCommands: Command[] = [
  {
    path: ['org', 'create'],
    usage: 'SLUG [--name NAME] [--id org_XXXXXXXX]',
    positionals: ['SLUG'],
    summary:
      'Provisions an organisation served at {SLUG}.{base domain}; prints its id (org_ + 8 Crockford base32) alone. --id gives the id the account control plane assigned (the same organisation on a site server and in its cloud cell, so tenant packages move between them).',
    options: {
      name: { type: 'string', value: 'NAME', description: 'display name (default: the slug)' },
      id: { type: 'string', value: 'org_XXXXXXXX', description: 'the id the account control plane assigned (org_ + 8 Crockford base32); default: a new one' },
    },
    run: ({ values, positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ config, orgs }) => {
        const org = await orgs.provision(positionals[0]!, values.name as string | undefined, values.id as string | undefined)
        io.out(org.id)
        // Created all the same; the site server is now ambiguous (config/site-org.ts), which the operator must hear of.
        const ambiguity = siteOrgAmbiguity(
          config,
          (await orgs.list()).map((o) => o.slug),
        )
        if (ambiguity) io.err(`sitegrid org create: warning: ${ambiguity}`)
      }),
  },
  {
    path: ['org', 'list'],
    usage: '[--json]',
    positionals: [],
    summary: 'Lists the organisations: id, slug, name, creation time (tab-separated, or JSON lines with --json).',
    options: { ...JSON_OPTION },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ orgs }) => {
        for (const org of await orgs.list()) io.out(values.json ? JSON.stringify(org) : [org.id, org.slug, org.name, org.createdAt].join('\t'))
      }),
  },
  {
    path: ['org', 'suspend'],
    usage: 'SLUG',
    positionals: ['SLUG'],
    summary:
      "Suspends an organisation: at once, in every serving process, its subdomain and custom domains answer as an unknown host (the uniform 401; sign-in 404) to every credential — its keys, sessions, tokens, site servers' links, platform admins' too. Nothing it owns is changed or deleted: `org resume` serves it again, keys and all.",
    options: {},
    run: ({ positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ config, orgs }) => {
        // A site server answers any unbound host (its IP, `localhost`) as its one organisation: suspension is the cell's.
        if (config.mode !== 'cloud') {
          io.err('sitegrid org suspend runs on a cloud cell (SITEGRID_MODE=cloud): a site server serves its one organisation')
          return 2
        }
        await onOrg(positionals[0]!, () => orgs.suspend(positionals[0]!))
        io.err(`suspended organisation ${positionals[0]}`)
      }),
  },
  {
    path: ['org', 'resume'],
    usage: 'SLUG',
    positionals: ['SLUG'],
    summary: 'Serves a suspended organisation again, with the keys, sessions and links it had.',
    options: {},
    run: ({ positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ orgs }) => {
        await onOrg(positionals[0]!, () => orgs.resume(positionals[0]!))
        io.err(`resumed organisation ${positionals[0]}`)
      }),
  },
  {
    path: ['org', 'delete'],
    usage: 'SLUG',
    positionals: ['SLUG'],
    summary: 'Deprovisions an organisation: removes it and everything it owns, its keys included, in one transaction.',
    options: {},
    run: ({ positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ orgs }) => {
        await onOrg(positionals[0]!, () => orgs.deprovision(positionals[0]!))
        io.err(`deleted organisation ${positionals[0]}`)
      }),
  },
]
