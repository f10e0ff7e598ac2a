/**
 * Domain errors of historian parsing. They carry a stable PascalCase `code` (the wire code
 * once the lead maps them in the error catalog) and never mention HTTP. A bad option is a
 * programmer mistake and is a plain TypeError instead (see options.ts).
 */
export type HistorianParseErrorCode = 'HistorianHeaderInvalid' | 'HistorianFormatUndetected' | 'HistorianCsvInvalid' | 'HistorianMappingInvalid'

export class HistorianParseError extends Error {
  readonly code: HistorianParseErrorCode
  /** 1-based line the problem was found on, when there is one. */
  readonly line: number | undefined

  constructor(code: HistorianParseErrorCode, message: string, line?: number) {
    super(message)
    this.name = new.target.name
    this.code = code
    this.line = line
  }
}

/** The header (or the lines before it) does not fit the chosen layout: the whole file is refused. */
export class HistorianHeaderInvalid extends HistorianParseError {
  constructor(message: string, line?: number) {
    super('HistorianHeaderInvalid', message, line)
  }
}

/** `format: 'auto'` found no layout; the message lists the candidates. */
export class HistorianFormatUndetected extends HistorianParseError {
  readonly candidates: readonly string[]
  constructor(message: string, candidates: readonly string[]) {
    super('HistorianFormatUndetected', message, 1)
    this.candidates = candidates
  }
}

/** The byte stream is not CSV we can read (unterminated quote, UTF-16, a row over the size cap). */
export class HistorianCsvInvalid extends HistorianParseError {
  constructor(message: string, line?: number) {
    super('HistorianCsvInvalid', message, line)
  }
}

export interface MappingProblem {
  line: number
  message: string
}

/** The mapping CSV has problems; every problem found is listed, each naming its line. */
export class HistorianMappingInvalid extends HistorianParseError {
  readonly problems: readonly MappingProblem[]
  constructor(problems: readonly MappingProblem[]) {
    const head = problems
      .slice(0, 5)
      .map((p) => `line ${p.line}: ${p.message}`)
      .join('; ')
    const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''
    super('HistorianMappingInvalid', `Mapping file invalid: ${head}${more}`, problems[0]?.line)
    this.problems = problems
  }
}
