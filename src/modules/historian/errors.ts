import { DomainError, type FieldProblem } from '../../errors/domain-error.ts'
import { HistorianParseError, HistorianMappingInvalid as ParserMappingInvalid } from './parse/index.ts'

/** Part names of the upload, as the client sends them. */
export type UploadPart = 'trend_csv' | 'mapping_csv'

/** The same pair of files was already imported into the site; `force=true` imports it again. */
export class DuplicateBatch extends DomainError<'Conflict'> {
  constructor(earlierBatchId: string) {
    super('Conflict', `These two files were already imported into this site as batch ${earlierBatchId}; send force=true to import them again (latest value wins).`, {
      extensions: { earlierBatchId },
    })
  }
}

/** The mapping names instances the site does not have: one problem per line. */
export class MappingUnknownInstances extends DomainError<'HistorianMappingInvalid'> {
  constructor(problems: ReadonlyArray<{ line: number; instanceId: string }>) {
    const errors: FieldProblem[] = problems.map((p) => ({ in: 'part', pointer: '/mapping_csv', message: `line ${p.line}: instance '${p.instanceId}' does not exist in this site` }))
    super('HistorianMappingInvalid', `Mapping file invalid: ${errors.slice(0, 5).map((e) => e.message).join('; ')}${errors.length > 5 ? ` (and ${errors.length - 5} more)` : ''}`, {
      errors, extensions: { line: problems[0]?.line },
    })
  }
}

/** The parser's errors (not DomainErrors) as problems naming the part and the line. */
export function fromParseError(err: unknown, part: UploadPart): unknown {
  if (!(err instanceof HistorianParseError)) return err
  if (err instanceof ParserMappingInvalid) {
    const errors: FieldProblem[] = err.problems.map((p) => ({ in: 'part', pointer: `/${part}`, message: `line ${p.line}: ${p.message}` }))
    return new DomainError('HistorianMappingInvalid', err.message, { errors, extensions: { line: err.line } })
  }
  const where = err.line === undefined ? '' : `line ${err.line}: `
  return new DomainError(err.code, `${part}: ${where}${err.message}`, {
    errors: [{ in: 'part', pointer: `/${part}`, message: `${where}${err.message}` }],
    extensions: err.line === undefined ? undefined : { line: err.line },
  })
}
