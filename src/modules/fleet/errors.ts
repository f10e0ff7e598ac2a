import { domainError, type FieldProblem } from '../../errors/domain-error.ts'

// The fleet link's named errors (issue 26): each carries a wire code from errors/catalog.ts, never a status.

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
