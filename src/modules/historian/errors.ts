import { DomainError, domainError, type FieldProblem } from '../../errors/domain-error.ts'
import { HistorianParseError, HistorianMappingInvalid as ParserMappingInvalid, type HistorianParseErrorCode } from './parse/index.ts'

/** Part names of the upload, as the client sends them. */
export type UploadPart = 'trend_csv' | 'mapping_csv'

/** The same pair of files was already imported into the site; `force=true` imports it again. */
export class DuplicateBatch extends domainError('Conflict') {
  constructor(earlierBatchId: string) {
    super(`These two files were already imported into this site as batch ${earlierBatchId}; send force=true to import them again (latest value wins).`, {
      extensions: { earlierBatchId },
    })
  }
}

/** The mapping names instances the site does not have: one problem per line. */
export class MappingUnknownInstances extends domainError('HistorianMappingInvalid') {
  constructor(problems: ReadonlyArray<{ line: number; instanceId: string }>) {
    const errors: FieldProblem[] = problems.map((p) => ({
      in: 'part',
      pointer: '/mapping_csv',
      message: `line ${p.line}: instance '${p.instanceId}' does not exist in this site`,
    }))
    super(
      `Mapping file invalid: ${errors
        .slice(0, 5)
        .map((e) => e.message)
        .join('; ')}${errors.length > 5 ? ` (and ${errors.length - 5} more)` : ''}`,
      {
        errors,
        extensions: { line: problems[0]?.line },
      },
    )
  }
}

/** The mapping file the parser refused: every problem it found, each naming its line. */
export class MappingFileInvalid extends domainError('HistorianMappingInvalid') {
  constructor(err: ParserMappingInvalid, part: UploadPart) {
    const errors: FieldProblem[] = err.problems.map((p) => ({ in: 'part', pointer: `/${part}`, message: `line ${p.line}: ${p.message}` }))
    super(err.message, { errors, extensions: { line: err.line } })
  }
}

/** A part the parser refused (its header, its layout, its CSV), under the parser's own code, naming the part and the line. */
export class UploadPartInvalid extends DomainError<HistorianParseErrorCode> {
  static readonly codes: readonly HistorianParseErrorCode[] = [
    'HistorianHeaderInvalid',
    'HistorianFormatUndetected',
    'HistorianCsvInvalid',
    'HistorianMappingInvalid',
  ]

  constructor(err: HistorianParseError, part: UploadPart) {
    const where = err.line === undefined ? '' : `line ${err.line}: `
    super(err.code, `${part}: ${where}${err.message}`, {
      errors: [{ in: 'part', pointer: `/${part}`, message: `${where}${err.message}` }],
      extensions: err.line === undefined ? undefined : { line: err.line },
    })
  }
}

/** A part of the multipart body passed one of the parser's limits (parts, files or fields). */
export class MultipartLimitExceeded extends domainError('PayloadTooLarge') {
  constructor(message: string) {
    super(`The multipart body ${message}.`, { errors: [{ in: 'part', pointer: '', message }] })
  }
}

/** The multipart body does not follow its boundary ("Unexpected end of multipart data", "Malformed part header"). */
export class MultipartMalformed extends domainError('MalformedBody') {
  constructor(reason: string) {
    super(`The multipart body is malformed: ${reason}.`)
  }
}

/** A file part over SITEGRID_HISTORIAN_MAX_FILE_BYTES. */
export class UploadFileTooLarge extends domainError('PayloadTooLarge') {
  constructor(name: string, limit: number) {
    super(`${name}: the file is larger than ${limit} bytes (SITEGRID_HISTORIAN_MAX_FILE_BYTES).`, {
      errors: [{ in: 'part', pointer: `/${name}`, message: `is larger than ${limit} bytes` }],
    })
  }
}

/** A batch still being imported cannot be deleted. */
export class BatchStillRunning extends domainError('Conflict') {
  constructor(batchId: string) {
    super(`Batch ${batchId} is still running; delete it once it has completed or failed.`)
  }
}

/** The parser's errors (not DomainErrors) as problems naming the part and the line. */
export function fromParseError(err: unknown, part: UploadPart): unknown {
  if (!(err instanceof HistorianParseError)) return err
  if (err instanceof ParserMappingInvalid) return new MappingFileInvalid(err, part)
  return new UploadPartInvalid(err, part)
}

/** A live push of more samples than SITEGRID_HISTORIAN_LIVE_MAX_SAMPLES: nothing of it is stored. */
export class LiveBatchTooLarge extends domainError('PayloadTooLarge') {
  constructor(count: number, limit: number) {
    super(`The push holds ${count} samples; at most ${limit} are taken at once (SITEGRID_HISTORIAN_LIVE_MAX_SAMPLES). Split it.`, {
      errors: [{ in: 'body', pointer: '/samples', message: `holds ${count} samples, more than ${limit}` }],
    })
  }
}

/** A live push of no samples: it would make a batch of nothing, so it is refused (a gateway with nothing to send sends nothing). */
export class LivePushEmpty extends domainError('UnprocessableEntity') {
  constructor() {
    super('The push holds no samples; nothing is stored and no batch is made. Send a push once there is a sample to send.', {
      errors: [{ in: 'body', pointer: '/samples', message: 'holds no samples; at least 1' }],
    })
  }
}

/** A tag mark for a tag key the instance does not map (the rule live samples follow: a key of its `tagMappings`). */
export class TagKeyNotMapped extends domainError('UnprocessableEntity') {
  constructor(instanceId: string, tagKey: string) {
    super(`Tag key '${tagKey}' is not one of instance '${instanceId}''s tag mappings.`, {
      errors: [{ in: 'params', pointer: '/tag', message: `is not one of instance '${instanceId}''s tag mappings` }],
    })
  }
}
