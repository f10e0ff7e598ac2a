import { userInfo } from 'node:os'
import type { Actor } from '../identity.ts'
import { JSON_OPTION, UsageError, type Command } from './command.ts'
import { naming } from './errors.ts'
import { withServices } from './runtime.ts'

// Platform admins are the control plane's operators (issue 4): a server-side list of OIDC `oid`s that pass
// the OrgAdmin policy in every organisation of the cell. A change takes effect at once in running servers.

const OID_PATTERN = /^[\x21-\x7e]{1,255}$/

function checkOid(value: string): string {
  if (!OID_PATTERN.test(value)) throw new UsageError("OID: 1 to 255 printable characters, no spaces (the account's `oid` claim)")
  return value
}

/** Who ran the command, for the platform audit record: the operating-system account (`cli:root`). */
function cliActor(env: NodeJS.ProcessEnv): Actor {
  let name = env.SUDO_USER ?? env.USER ?? env.LOGNAME
  try {
    name ??= userInfo().username
  } catch {
    name ??= 'unknown'
  }
  return { kind: 'cli', subject: `cli:${name}`, role: 'owner' }
}

export const platformAdminCommands: Command[] = [
  {
    path: ['platform-admin', 'add'],
    usage: 'OID [--note TEXT]',
    positionals: ['OID'],
    summary: 'Makes the account with this OIDC `oid` a platform admin (passes OrgAdmin in every organisation). Idempotent.',
    options: { note: { type: 'string', value: 'TEXT', description: 'who the account is, kept with it and in the platform audit' } },
    run: ({ values, positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ platformAdmins }) => {
        const oid = checkOid(positionals[0]!)
        const added = await platformAdmins.add(oid, (values.note as string | undefined) ?? null, cliActor(io.env))
        io.err(added ? `platform admin added: ${oid}` : `already a platform admin: ${oid}`)
      }),
  },
  {
    path: ['platform-admin', 'remove'],
    usage: 'OID',
    positionals: ['OID'],
    summary: 'Removes a platform admin; running servers stop honouring it at once. NotFound (exit 1) when it is not listed.',
    options: {},
    run: ({ positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ platformAdmins }) => {
        const oid = checkOid(positionals[0]!)
        await naming(`no platform admin ${JSON.stringify(oid)} (\`sitegrid platform-admin list\` shows them)`, () =>
          platformAdmins.remove(oid, cliActor(io.env)),
        )
        io.err(`platform admin removed: ${oid}`)
      }),
  },
  {
    path: ['platform-admin', 'list'],
    usage: '[--json]',
    positionals: [],
    summary: 'Lists the platform admins: oid, time added, note (tab-separated, or JSON lines with --json).',
    options: { ...JSON_OPTION },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ platformAdmins }) => {
        for (const admin of await platformAdmins.list()) {
          io.out(values.json ? JSON.stringify(admin) : [admin.accountId, admin.addedAt, admin.note ?? ''].join('\t'))
        }
      }),
  },
  {
    path: ['platform-admin', 'audit'],
    usage: '[--limit N] [--json]',
    positionals: [],
    summary:
      'The platform audit records (additions and removals of platform admins: who, when, what), newest first; default 100, at most 10000 (tab-separated, or JSON lines with --json).',
    options: { limit: { type: 'string', value: 'N', description: 'how many records, newest first: 1 to 10000 (default 100)' }, ...JSON_OPTION },
    run: ({ values }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ platformAdmins }) => {
        const limit = values.limit === undefined ? 100 : Number(values.limit)
        if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit: an integer from 1 to 10000')
        for (const r of await platformAdmins.auditLog(limit)) {
          io.out(values.json ? JSON.stringify(r) : [r.at, r.actorKind, r.actorId, r.action, r.target, JSON.stringify(r.detail)].join('\t'))
        }
      }),
  },
]
