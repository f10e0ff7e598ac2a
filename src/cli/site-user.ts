import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'
import { CLI_ACTOR, isRole, type Org } from '../identity.ts'
import { systemClock } from '../clock.ts'
import { invalidField } from '../errors/domain-error.ts'
import { PIN_PATTERN } from '../modules/site-users/pin-hash.ts'
import type { SiteUsersService } from '../modules/site-users/service.ts'
import { JSON_OPTION, UsageError, type Command } from './command.ts'
import { NotOnServer } from './errors.ts'
import { ORG_OPTION, siteOrg } from './org-option.ts'
import { withServices } from './runtime.ts'

function role(values: Record<string, unknown>): 'owner' | 'admin' | 'member' {
  const value = values.role
  if (typeof value !== 'string' || !isRole(value)) throw new UsageError('--role must be owner, admin or member')
  return value
}

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`)
  return value
}

/** USER is an e-mail or a site user id. */
/** The site user named by e-mail or id; NotFound naming it when the organisation has none such. */
async function findUser(siteUsers: SiteUsersService, org: Org, user: string) {
  const found = await (user.includes('@') ? siteUsers.findByEmail(org.id, user) : siteUsers.get(org.id, user).catch(() => undefined))
  if (!found) throw new NotOnServer(`no site user ${JSON.stringify(user)} in ${org.slug} (\`sitegrid site-user list\` shows them)`)
  return found
}

// The PIN never goes on the command line (it would show in `ps` and the shell history): it is read from
// standard input, without echo on a terminal, twice to confirm.
async function readPin(): Promise<string> {
  const stdin = process.stdin
  const pin = stdin.isTTY ? await promptTwice() : (await readAll(stdin)).split(/\r?\n/)[0]!.trim()
  if (!PIN_PATTERN.test(pin)) throw invalidField('/pin', 'must be 6 to 12 digits (read from standard input)')
  return pin
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = ''
  for await (const chunk of stream) text += String(chunk)
  return text
}

async function promptTwice(): Promise<string> {
  const ask = (label: string) =>
    new Promise<string>((resolve) => {
      const rl = createInterface({ input: process.stdin, output: new Writable({ write: (_c, _e, cb) => cb() }), terminal: true })
      process.stderr.write(label)
      rl.question('', (answer) => {
        rl.close()
        process.stderr.write('\n')
        resolve(answer.trim())
      })
    })
  const first = await ask('PIN (6 to 12 digits): ')
  if (first !== (await ask('Repeat the PIN: '))) throw new UsageError('the two PINs differ')
  return first
}

function withSiteUsers<T>(env: NodeJS.ProcessEnv, slug: unknown, fn: (s: { org: Org; siteUsers: SiteUsersService }) => Promise<T>): Promise<T> {
  return withServices(env, { requireKeySecret: false }, async ({ config, orgs, siteUsers }) => {
    const org = await siteOrg(orgs, config, slug)
    return fn({ org, siteUsers })
  })
}

export const siteUserCommands: Command[] = [
  {
    path: ['site-user', 'add'],
    usage: '--email EMAIL --name NAME --role owner|admin|member [--org SLUG]  (PIN on standard input)',
    positionals: [],
    summary:
      'Adds a site user who signs in with e-mail and PIN (POST /auth/site/login). The PIN (6 to 12 digits) is read from standard input, never from the command line; prints the new id.',
    options: {
      ...ORG_OPTION,
      email: { type: 'string', value: 'EMAIL', description: 'the e-mail the user signs in with' },
      name: { type: 'string', value: 'NAME', description: 'display name' },
      role: { type: 'string', value: 'ROLE', description: 'owner, admin or member' },
    },
    run: async ({ values }, io) => {
      const input = { email: required(values, 'email'), displayName: required(values, 'name'), siteRole: role(values) }
      const pin = await readPin()
      await withSiteUsers(io.env, values.org, async ({ org, siteUsers }) => {
        const user = await siteUsers.create(org.id, CLI_ACTOR, { ...input, pin })
        io.out(user.id)
        io.err(`added ${user.siteRole} ${user.email} to ${org.slug}`)
      })
    },
  },
  {
    path: ['site-user', 'list'],
    usage: '[--org SLUG] [--json]',
    positionals: [],
    summary: 'Lists the site users: id, e-mail, site role, name (tab-separated, or JSON lines with --json). Never a PIN.',
    options: { ...ORG_OPTION, ...JSON_OPTION },
    run: ({ values }, io) =>
      withSiteUsers(io.env, values.org, async ({ org, siteUsers }) => {
        let cursor: string | undefined
        do {
          const page = await siteUsers.list(org.id, { limit: 200, cursor })
          for (const u of page.items) io.out(values.json ? JSON.stringify(u) : [u.id, u.email, u.siteRole, u.displayName].join('\t'))
          cursor = page.nextCursor ?? undefined
        } while (cursor)
      }),
  },
  {
    path: ['site-user', 'set-role'],
    usage: 'USER --role owner|admin|member [--org SLUG]',
    positionals: ['USER'],
    summary: "Changes a site user's role (USER is the e-mail or the id). The last owner cannot be demoted.",
    options: { ...ORG_OPTION, role: { type: 'string', value: 'ROLE', description: 'owner, admin or member' } },
    run: ({ values, positionals }, io) =>
      withSiteUsers(io.env, values.org, async ({ org, siteUsers }) => {
        const siteRole = role(values)
        const user = await findUser(siteUsers, org, positionals[0]!)
        await siteUsers.update(org.id, CLI_ACTOR, user.id, { siteRole })
        io.err(`${user.email} is now ${siteRole}`)
      }),
  },
  {
    path: ['site-user', 'set-pin'],
    usage: 'USER [--org SLUG]  (new PIN on standard input)',
    positionals: ['USER'],
    summary: "Replaces a site user's PIN (read from standard input); every session they had ends.",
    options: { ...ORG_OPTION },
    run: async ({ values, positionals }, io) => {
      const pin = await readPin()
      await withSiteUsers(io.env, values.org, async ({ org, siteUsers }) => {
        const user = await findUser(siteUsers, org, positionals[0]!)
        await siteUsers.setPin(org.id, CLI_ACTOR, user.id, pin)
        io.err(`PIN replaced for ${user.email}`)
      })
    },
  },
  {
    path: ['site-user', 'remove'],
    usage: 'USER [--org SLUG]',
    positionals: ['USER'],
    summary: 'Removes a site user (e-mail or id); their tokens stop working at once. The last owner cannot be removed.',
    options: { ...ORG_OPTION },
    run: ({ values, positionals }, io) =>
      withSiteUsers(io.env, values.org, async ({ org, siteUsers }) => {
        const user = await findUser(siteUsers, org, positionals[0]!)
        await siteUsers.remove(org.id, CLI_ACTOR, user.id)
        io.err(`removed ${user.email}`)
      }),
  },
  {
    path: ['site-user', 'unlock'],
    usage: '--email EMAIL [--org SLUG]',
    positionals: [],
    summary:
      'Ends the sign-in lock of an e-mail after repeated wrong PINs and forgets its failures, for the rightful user; recorded in the audit log (site_user.unlocked). Works for any e-mail, as the lock does.',
    options: { ...ORG_OPTION, email: { type: 'string', value: 'EMAIL', description: 'the locked e-mail (known or not)' } },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ config, orgs, lockout }) => {
        const email = required(values, 'email')
        const org = await siteOrg(orgs, config, values.org)
        const { wasLockedUntil } = await lockout.unlockEmail(org.id, CLI_ACTOR, email)
        io.err(
          wasLockedUntil
            ? `unlocked ${email} (was locked until ${new Date(wasLockedUntil).toISOString()})`
            : `${email} was not locked; its failures are forgotten`,
        )
      }),
  },
]

export const siteKeyCommands: Command[] = [
  {
    path: ['site-key', 'rotate'],
    usage: '[--org SLUG]',
    positionals: [],
    summary:
      'Adds a new local signing key for site-PIN tokens and retires the old ones; they keep verifying until their tokens expire (15 minutes). Prints the new kid.',
    options: { ...ORG_OPTION },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: true }, async ({ config, handle, orgs }) => {
        const org = await siteOrg(orgs, config, values.org)
        const kid = await (await import('../auth/site-pin/signing-keys.ts'))
          .createSigningKeys({ handle, clock: systemClock, keySecret: config.keySecret! })
          .rotate(org.id)
        io.out(kid)
        io.err(`new signing key ${kid} for ${org.slug}; the previous keys verify for 15 more minutes`)
      }),
  },
  {
    path: ['site-key', 'list'],
    usage: '[--org SLUG] [--json]',
    positionals: [],
    summary:
      'Lists the signing keys that still verify: kid, algorithm, created, retired (or -; tab-separated, or JSON lines with --json). Never a private key.',
    options: { ...ORG_OPTION, ...JSON_OPTION },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: true }, async ({ config, handle, orgs }) => {
        const org = await siteOrg(orgs, config, values.org)
        for (const k of await (await import('../auth/site-pin/signing-keys.ts'))
          .createSigningKeys({ handle, clock: systemClock, keySecret: config.keySecret! })
          .list(org.id)) {
          const row = { kid: k.kid, alg: k.alg, createdAt: k.createdAt, retiredAt: k.retiredAt ?? null } // named fields only: never the sealed key
          io.out(values.json ? JSON.stringify(row) : [row.kid, row.alg, row.createdAt, row.retiredAt ?? '-'].join('\t'))
        }
      }),
  },
]
