import { domainError } from '../../errors/domain-error.ts'

// The fleet link's named errors (issue 26). Append new classes at the end: several parts of the link share this file.

/**
 * A change of a link batch breaks a rule (sync/validate.ts): the whole batch is refused before anything is written.
 * `index` is the change's position in the batch.
 */
export class LinkChangeRefused extends domainError('LinkChangeRefused') {
  constructor(index: number, table: string, rule: string, column?: string) {
    const where = column === undefined ? '' : ` column ${column}:`
    super(`Change ${index} of the batch (table ${table}):${where} ${rule}. Nothing of the batch was applied.`, {
      extensions: { index, table, rule, ...(column === undefined ? {} : { column }) },
    })
  }
}

export type DivergedReason = 'ahead' | 'behind' | 'digest' | 'epoch'

const DIVERGED_TEXT: Record<DivergedReason, string> = {
  ahead: "the batch continues after a change the cloud never applied ('after' is above the cloud's mark)",
  behind: "the batch starts before the cloud's mark but does not hold the change at the mark",
  digest: "the change at the cloud's mark differs from the one the cloud applied (the site was restored from an old backup)",
  epoch: 'the batch belongs to another epoch than the enrolled one',
}

/** The site server's outbox does not continue what the cloud applied (sync/apply-push.ts): it must reseed. */
export class LinkDiverged extends domainError('LinkDiverged') {
  constructor(reason: DivergedReason, mark: { epoch: string; seq: number }, after: number) {
    super(
      `The site server diverged from the cloud: ${DIVERGED_TEXT[reason]}. The cloud's mark is ${mark.seq}, the batch says ${after}; nothing was applied. Reseed the site server.`,
      {
        extensions: { reason, mark, after },
      },
    )
  }
}

export class LinkConflictNotFound extends domainError('NotFound') {
  constructor(id: string) {
    super(`No link conflict ${id} in this organisation.`)
  }
}

export class LinkConflictResolved extends domainError('Conflict') {
  constructor(id: string, resolution: string) {
    super(`Link conflict ${id} is already resolved (${resolution}).`, { extensions: { resolution } })
  }
}

/** Re-applying a losing version breaks a rule of its table now (a unique value another row holds, a missing reference). */
export class LinkConflictNotReapplicable extends domainError('Conflict') {
  constructor(id: string, reason: string) {
    super(`Link conflict ${id} cannot be re-applied: ${reason}. Nothing was changed.`, { extensions: { reason } })
  }
}
