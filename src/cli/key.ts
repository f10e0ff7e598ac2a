import { CLI_ACTOR } from '../identity.ts'
import { NotFound } from '../errors/domain-error.ts'
import { parseDuration, UsageError, type Command } from './command.ts'
import { withServices } from './runtime.ts'

function requireString(values: Record<string, unknown>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

export const keyCommands: Command[] = [
  {
    path: ['key', 'mint'],
    usage: '--org SLUG --role ROLE --name NAME --expires-in 30d',
    positionals: [],
    summary: "Mints a tenant API key (the operator's bootstrap) and prints the plaintext alone on stdout. It is shown once.",
    options: { org: { type: 'string' }, role: { type: 'string' }, name: { type: 'string' }, 'expires-in': { type: 'string' } },
    run: async ({ values }, io) => {
      const slug = requireString(values, 'org')
      const role = requireString(values, 'role')
      const name = requireString(values, 'name')
      const lifetimeMs = parseDuration(requireString(values, 'expires-in'))
      await withServices(io.env, { requireKeySecret: true }, async ({ orgs, apiKeys }) => {
        const org = await orgs.findBySlug(slug)
        if (!org) throw new NotFound()
        const minted = await apiKeys.mint(org.id, CLI_ACTOR, { role, name, expiresAt: new Date(Date.now() + lifetimeMs).toISOString() })
        io.out(minted.plaintext)
        io.err(`minted key ${minted.keyId} (${minted.keyPrefix}…, ${minted.role}) expiring ${minted.expiresAt}`)
      })
    },
  },
  {
    path: ['key', 'list'],
    usage: '--org SLUG [--json]',
    positionals: [],
    summary: 'Lists the non-revoked keys of an organisation, newest first: keyId, prefix, role, name, expiry, last use.',
    options: { org: { type: 'string' }, json: { type: 'boolean' } },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ orgs, apiKeys }) => {
        const org = await orgs.findBySlug(requireString(values, 'org'))
        if (!org) throw new NotFound()
        for (const k of await apiKeys.list(org.id)) {
          io.out(values.json ? JSON.stringify(k) : [k.keyId, k.keyPrefix, k.role, k.name, k.expiresAt, k.lastUsedAt ?? '-'].join('\t'))
        }
      }),
  },
  {
    path: ['key', 'revoke'],
    usage: '--org SLUG KEYID [--reason TEXT]',
    positionals: ['KEYID'],
    summary: 'Revokes a key at once, in every process sharing the database.',
    options: { org: { type: 'string' }, reason: { type: 'string' } },
    run: ({ values, positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ orgs, apiKeys }) => {
        const org = await orgs.findBySlug(requireString(values, 'org'))
        if (!org) throw new NotFound()
        await apiKeys.revoke(org.id, CLI_ACTOR, positionals[0]!, (values.reason as string | undefined) ?? null)
        io.err(`revoked key ${positionals[0]}`)
      }),
  },
]
