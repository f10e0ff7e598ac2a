import { domainError, type FieldProblem } from '../../errors/domain-error.ts'

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
  constructor(reason: DivergedReason, mark: { epoch: string; tx: number; seq: number }, after: { tx: number; seq: number }) {
    super(
      `The site server diverged from the cloud: ${DIVERGED_TEXT[reason]}. The cloud's mark is ${mark.tx}.${mark.seq}, the batch says ${after.tx}.${after.seq}; nothing was applied. Reseed the site server.`,
      {
        extensions: { reason, mark: { epoch: mark.epoch, tx: mark.tx, seq: mark.seq }, after: { tx: after.tx, seq: after.seq } },
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

/** A historian chunk whose samples hash otherwise than its `sha256`: corrupted or cut on the way. */
export class ChunkChecksumMismatch extends domainError('LinkChecksumMismatch') {
  constructor() {
    super('sha256 does not match the SHA-256 of the canonical samples (JSON.stringify of `samples`); nothing was stored.', {
      errors: [{ in: 'body', pointer: '/sha256', message: 'does not match the SHA-256 of the canonical samples' }],
    })
  }
}

/** A link request naming a site that is not one of the site server's sites. */
export class SiteNotLinked extends domainError('LinkSiteNotLinked') {
  constructor(site: string) {
    super(`Site '${site}' is not one of this site server's sites; nothing was stored.`, {
      errors: [{ in: 'body', pointer: '/site', message: "is not one of the site server's sites" }],
    })
  }
}

/** Samples naming instances the site does not have (in this organisation): the first few, each by its pointer. */
export class ChunkUnknownInstances extends domainError('UnprocessableEntity') {
  constructor(problems: ReadonlyArray<{ index: number; instanceId: string }>, total: number) {
    super(`${total} sample(s) name an instance the site does not have (first: '${problems[0]?.instanceId ?? ''}'); nothing was stored.`, {
      errors: problems.map((p) => ({ in: 'body', pointer: `/samples/${p.index}/0`, message: `instance '${p.instanceId}' does not exist in the site` })),
    })
  }
}

/** The same chunk number again with other content than the one stored: the site's batch is not the one it sent. */
export class ChunkDiffers extends domainError('Conflict') {
  constructor(chunk: number, stored: number, sent: number) {
    super(`Chunk ${chunk} of this batch was stored with ${stored} sample(s); this one has ${sent}. Nothing was stored.`, {
      extensions: { chunk, storedSamples: stored },
    })
  }
}

/** Samples that break a value rule or the chunk's order: the first problems, each by its pointer. */
export class ChunkSamplesInvalid extends domainError('ValidationFailed') {
  constructor(problems: FieldProblem[]) {
    super(
      `samples: ${problems
        .map((p) => `${p.pointer} ${p.message}`)
        .slice(0, 3)
        .join('; ')}; nothing was stored.`,
      { errors: problems },
    )
  }
}
