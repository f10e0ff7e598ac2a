import { CLI_ACTOR } from '../identity.ts'
import { JSON_OPTION, parseDuration, UsageError, type Command } from './command.ts'
import { naming } from './errors.ts'
import { orgBySlug } from './org-option.ts'
import { withServices } from './runtime.ts'

function requireString(values: Record<string, unknown>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

export const keyCommands: Command[] = [
  {
    path: ['key', 'mint'],
    usage: '--org SLUG --role ROLE --name NAME --expires-in 30d [--site CODE] [--network CIDR]…',
    positionals: [],
    summary: "Mints a tenant API key (the operator's bootstrap) and prints the plaintext alone on stdout. It is shown once.",
    options: {
      org: { type: 'string', value: 'SLUG', description: 'the organisation (its slug)' },
      role: { type: 'string', value: 'ROLE', description: 'owner, admin, member, or a custom role name (platform_* and service are reserved)' },
      name: { type: 'string', value: 'NAME', description: 'a label for the key (who or what uses it)' },
      'expires-in': { type: 'string', value: 'DURATION', description: 'lifetime: a number and m, h, d or w (90m, 12h, 30d, 2w); from 1 hour to 730 days' },
      site: { type: 'string', value: 'CODE', description: "an edge gateway's key: restricted to this site (it must exist)" },
      network: { type: 'string', value: 'CIDR', multiple: true, description: 'restricted to clients in this network (an address is /32 or /128)' },
    },
    run: async ({ values }, io) => {
      const slug = requireString(values, 'org')
      const role = requireString(values, 'role')
      const name = requireString(values, 'name')
      const lifetimeMs = parseDuration(requireString(values, 'expires-in'))
      await withServices(io.env, { requireKeySecret: true }, async ({ orgs, apiKeys }) => {
        const org = await orgBySlug(orgs, slug)
        const restriction = {
          ...(typeof values.site === 'string' ? { siteId: values.site } : {}),
          ...(Array.isArray(values.network) ? { networks: values.network as string[] } : {}),
        }
        const minted = await apiKeys.mint(org.id, CLI_ACTOR, { role, name, expiresAt: new Date(Date.now() + lifetimeMs).toISOString(), ...restriction })
        io.out(minted.plaintext)
        io.err(`minted key ${minted.keyId} (${minted.keyPrefix}…, ${minted.role}) expiring ${minted.expiresAt}`)
      })
    },
  },
  {
    path: ['key', 'list'],
    usage: '--org SLUG [--json]',
    positionals: [],
    summary:
      'Lists the non-revoked keys of an organisation, newest first: keyId, prefix, role, name, expiry, last use, ' +
      "the site it is restricted to and its client networks (comma-separated; '-' when unrestricted).",
    options: { org: { type: 'string', value: 'SLUG', description: 'the organisation (its slug)' }, ...JSON_OPTION },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ orgs, apiKeys }) => {
        const org = await orgBySlug(orgs, requireString(values, 'org'))
        for (const k of await apiKeys.list(org.id)) {
          io.out(
            values.json
              ? JSON.stringify(k)
              : [k.keyId, k.keyPrefix, k.role, k.name, k.expiresAt, k.lastUsedAt ?? '-', k.siteId ?? '-', k.networks?.join(',') ?? '-'].join('\t'),
          )
        }
      }),
  },
  {
    path: ['key', 'revoke'],
    usage: '--org SLUG KEYID [--reason TEXT]',
    positionals: ['KEYID'],
    summary: 'Revokes a key at once, in every process sharing the database.',
    options: {
      org: { type: 'string', value: 'SLUG', description: 'the organisation (its slug)' },
      reason: { type: 'string', value: 'TEXT', description: 'why, kept in the audit record' },
    },
    run: ({ values, positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ orgs, apiKeys }) => {
        const org = await orgBySlug(orgs, requireString(values, 'org'))
        const keyId = positionals[0]!
        await naming(`no key ${JSON.stringify(keyId)} in ${org.slug} (\`sitegrid key list --org ${org.slug}\` shows them)`, () =>
          apiKeys.revoke(org.id, CLI_ACTOR, keyId, (values.reason as string | undefined) ?? null),
        )
        io.err(`revoked key ${positionals[0]}`)
      }),
  },
]
