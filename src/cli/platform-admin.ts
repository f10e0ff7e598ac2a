import { createPlatformAdminsService } from '../modules/orgs/platform-admins-service.ts'
import { systemClock } from '../clock.ts'
import { UsageError, type Command } from './command.ts'
import { withServices } from './runtime.ts'

// Platform admins are the control plane's operators (issue 4): a server-side list of OIDC `oid`s that pass
// the OrgAdmin policy in every organisation of the cell. A change takes effect at once in running servers.

const OID_PATTERN = /^[\x21-\x7e]{1,255}$/

function checkOid(value: string): string {
  if (!OID_PATTERN.test(value)) throw new UsageError('OID: 1 to 255 printable characters, no spaces (the account\'s `oid` claim)')
  return value
}

export const platformAdminCommands: Command[] = [
  {
    path: ['platform-admin', 'add'], usage: 'OID [--note TEXT]', positionals: ['OID'],
    summary: 'Makes the account with this OIDC `oid` a platform admin (passes OrgAdmin in every organisation). Idempotent.',
    options: { note: { type: 'string' } },
    run: ({ values, positionals }, io) => withServices(io.env, { requireKeySecret: false }, async ({ handle }) => {
      const oid = checkOid(positionals[0]!)
      const added = await createPlatformAdminsService({ handle, clock: systemClock }).add(oid, (values.note as string | undefined) ?? null)
      io.err(added ? `platform admin added: ${oid}` : `already a platform admin: ${oid}`)
    }),
  },
  {
    path: ['platform-admin', 'remove'], usage: 'OID', positionals: ['OID'],
    summary: 'Removes a platform admin; running servers stop honouring it at once. NotFound (exit 1) when it is not listed.',
    options: {},
    run: ({ positionals }, io) => withServices(io.env, { requireKeySecret: false }, async ({ handle }) => {
      const oid = checkOid(positionals[0]!)
      await createPlatformAdminsService({ handle, clock: systemClock }).remove(oid)
      io.err(`platform admin removed: ${oid}`)
    }),
  },
  {
    path: ['platform-admin', 'list'], usage: '[--json]', positionals: [],
    summary: 'Lists the platform admins: oid, time added, note (tab-separated, or JSON lines with --json).',
    options: { json: { type: 'boolean' } },
    run: ({ values }, io) => withServices(io.env, { requireKeySecret: false }, async ({ handle }) => {
      for (const admin of await createPlatformAdminsService({ handle, clock: systemClock }).list()) {
        io.out(values.json ? JSON.stringify(admin) : [admin.accountId, admin.addedAt, admin.note ?? ''].join('\t'))
      }
    }),
  },
]
