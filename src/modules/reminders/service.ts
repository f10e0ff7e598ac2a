import { randomBytes } from 'node:crypto'
import type { Clock } from '../../clock.ts'
import type { DatabaseHandle } from '../../db/connect.ts'
import type { SendMail } from './mail.ts'
import { claimNew, claimRetry, findDueKeys, findKeyCreator, settleReminder } from './store.ts'

const DAY_MS = 86_400_000
/** Spec 8: keys 24 to 30 days from expiry. */
export const WINDOW = { fromMs: 24 * DAY_MS, toMs: 30 * DAY_MS }
const LEASE_MS = 10 * 60_000
const MAX_CHAIN = 16

/** Who minted a key, as the key row records it. */
export interface KeyCreator {
  readonly kind: string
  /** Key id, OIDC `sub`, site user id or `cli`. */
  readonly subject: string
  /** A signed-in user's membership key (OIDC `oid`), when the key recorded one. */
  readonly account: string | null
}

/** Finds the e-mail of a person who created a key: a signed-in user (`user`) or a site user (`sitePin`). */
export type CreatorDirectory = (orgId: string, creator: KeyCreator & { kind: 'user' | 'sitePin' }) => Promise<string | undefined>

export interface ReminderRunSummary {
  due: number
  sent: number
  skipped: number
  failed: number
  claimedElsewhere: number
}

/**
 * One poll of the expiry-reminder job. Each reminder is claimed in the database before it is sent (a primary-key
 * insert, or a conditional update for retries), so N processes polling at the same moment send it once; a send that
 * failed is retried on the next poll, one that succeeded never again.
 */
export function createReminderService(deps: {
  handle: DatabaseHandle
  clock: Clock
  send: SendMail
  operatorEmail: string | undefined
  directory: CreatorDirectory
  onError?: (err: unknown, keyId: string) => void
}) {
  const db = deps.handle.db
  const processId = `${process.pid}-${randomBytes(4).toString('hex')}`

  async function recipientOf(orgId: string, creator: KeyCreator): Promise<string | undefined> {
    for (let depth = 0; depth < MAX_CHAIN; depth++) {
      const { kind } = creator
      if (kind === 'cli') return deps.operatorEmail
      if (kind === 'user' || kind === 'sitePin') return deps.directory(orgId, { ...creator, kind })
      if (kind !== 'apiKey') return undefined
      const parent = await findKeyCreator(db, orgId, creator.subject)
      if (!parent) return undefined
      creator = { kind: parent.created_by_kind, subject: parent.created_by_user_id, account: parent.created_by_account }
    }
    return undefined
  }

  return {
    recipientOf,

    async runOnce(): Promise<ReminderRunSummary> {
      const now = deps.clock.now()
      const due = await findDueKeys(db, { from: now + WINDOW.fromMs, to: now + WINDOW.toMs, now, leaseMs: LEASE_MS })
      const summary: ReminderRunSummary = { due: due.length, sent: 0, skipped: 0, failed: 0, claimedElsewhere: 0 }
      for (const key of due) {
        const claim = { orgId: key.org_id, keyId: key.id, expiresAt: key.expires_at, by: processId, at: deps.clock.now() }
        const claimed = (await claimNew(db, claim)) || (await claimRetry(db, { ...claim, leaseMs: LEASE_MS }))
        if (!claimed) {
          summary.claimedElsewhere += 1
          continue
        }
        const to = await recipientOf(key.org_id, { kind: key.created_by_kind, subject: key.created_by_user_id, account: key.created_by_account })
        if (!to) {
          await settleReminder(db, claim, { status: 'skipped', recipient: null, at: deps.clock.now(), error: "no address for the key's creator" })
          summary.skipped += 1
          continue
        }
        try {
          await deps.send({
            to,
            orgName: key.org_name,
            orgSlug: key.org_slug,
            keyName: key.name,
            keyPrefix: key.prefix,
            keyId: key.id,
            role: key.role,
            expiresAt: key.expires_at,
          })
          await settleReminder(db, claim, { status: 'sent', recipient: to, at: deps.clock.now(), error: null })
          summary.sent += 1
        } catch (err) {
          deps.onError?.(err, key.id)
          const code = (err as { responseCode?: number; code?: string }).responseCode ?? (err as { code?: string }).code ?? 'error'
          await settleReminder(db, claim, { status: 'failed', recipient: to, at: deps.clock.now(), error: `send failed (${code})` })
          summary.failed += 1
        }
      }
      return summary
    },
  }
}

export type ReminderService = ReturnType<typeof createReminderService>
