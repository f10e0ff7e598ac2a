import type { ValueProblem } from './value-rules.ts'
import { domainError } from '../../errors/domain-error.ts'
import type { UniqueConflict } from './unique-rules.ts'
import { quoted } from '../../errors/quoted.ts'

export class PackageCorrupt extends domainError('PackageInvalid') {
  constructor(reason: string) {
    super(`The tenant package is not valid: ${reason}.`, { extensions: { reason } })
  }
}

/**
 * A row value its column cannot hold, or a rule of the table's area the row breaks (value-rules.ts): the same refusal
 * on both databases, naming where.
 */
export class PackageValueRefused extends domainError('PackageInvalid') {
  constructor(part: string, row: number, problem: ValueProblem) {
    const { column, rule } = problem
    const reason = `row ${row} of part ${part}: ${column} ${valueRuleText(problem)}`
    super(`The tenant package is not valid: ${reason}.`, { extensions: { reason, part, row, column, rule } })
  }
}

/** How a refusal says which rule a value breaks (after its column's name): the tenant package's and the fleet link's. */
export function valueRuleText({ rule, expected }: ValueProblem): string {
  if (rule === 'field') return `breaks a rule of its field: ${expected}`
  return `breaks a ${rule} rule of this server's table${expected ? ` (it holds ${expected})` : ''}`
}

export class PackageVersionUnsupported extends domainError('PackageInvalid') {
  constructor(version: unknown) {
    super(`The package has format version ${quoted(String(version))}; this server reads version 1.`, { extensions: { reason: 'unsupported format version' } })
  }
}

export class PackageOfAnotherOrg extends domainError('PackageInvalid') {
  constructor() {
    super('The package belongs to another organisation (its organisation id differs).', { extensions: { reason: 'another organisation' } })
  }
}

export class NoStagedPackage extends domainError('Conflict') {
  constructor() {
    super('No package is staged: PUT it to …/tenant/import/package first.')
  }
}

/**
 * A later upload of the organisation's package replaced this one: before this one was checked (its PUT), or before its
 * import (a POST naming its uploadId). Nothing of this upload is kept.
 */
export class StagedUploadReplaced extends domainError('Conflict') {
  constructor() {
    super(
      'A later upload of a package for this organisation replaced this one; nothing of this upload is kept. Stage this package again if it is the one to import.',
      {
        extensions: { reason: 'replaced by a later upload' },
      },
    )
  }
}

export class ImportConflicts extends domainError('Conflict') {
  constructor(conflicts: Array<{ part: string; key: Record<string, unknown> }>, total: number) {
    super(`The import would overwrite ${total} existing record(s); nothing was changed. Repeat with force=true to replace them.`, {
      extensions: { conflicts, conflictCount: total },
    })
  }
}

export class PackageTooLarge extends domainError('PayloadTooLarge') {
  constructor(limit: number) {
    super(`The package exceeds ${limit} bytes.`)
  }
}

export class PackageInflatesTooLarge extends domainError('PayloadTooLarge') {
  constructor(limit: number) {
    super(`The package inflates to more than ${limit} bytes (SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES); nothing was kept.`, {
      extensions: { limit, setting: 'SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES' },
    })
  }
}

export class UniqueRuleConflicts extends domainError('Conflict') {
  constructor(part: string, conflicts: UniqueConflict[]) {
    const first = conflicts[0]
    const text = (values: Record<string, unknown>) =>
      Object.entries(values)
        .map(([k, v]) => `${k} ${String(v)}`)
        .join(', ')
    const holder = !first
      ? ''
      : first.heldBy === null
        ? 'another organisation holds'
        : `the ${first.heldIn === 'the package' ? "package's" : 'existing'} record (${text(first.heldBy)}) holds`
    super(
      first
        ? `The package's ${part} record (${text(first.record)}) has ${text(first.values)}, which ${holder}: a unique rule of ${part}${conflicts.length > 1 ? ` (${conflicts.length} such records)` : ''}. force replaces only records with the same key; nothing was changed.`
        : `A record of part ${part} breaks a unique rule of ${part}; nothing was changed.`,
      { extensions: { uniqueConflicts: conflicts.slice(0, 100), uniqueConflictCount: conflicts.length } },
    )
  }
}
