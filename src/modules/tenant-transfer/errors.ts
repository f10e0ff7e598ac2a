import { DomainError } from '../../errors/domain-error.ts'

export class PackageCorrupt extends DomainError<'PackageInvalid'> {
  constructor(reason: string) { super('PackageInvalid', `The tenant package is not valid: ${reason}.`, { extensions: { reason } }) }
}

export class PackageVersionUnsupported extends DomainError<'PackageInvalid'> {
  constructor(version: unknown) {
    super('PackageInvalid', `The package has format version ${String(version)}; this server reads version 1.`, { extensions: { reason: 'unsupported format version' } })
  }
}

export class PackageOfAnotherOrg extends DomainError<'PackageInvalid'> {
  constructor() { super('PackageInvalid', 'The package belongs to another organisation (its organisation id differs).', { extensions: { reason: 'another organisation' } }) }
}

export class NoStagedPackage extends DomainError<'Conflict'> {
  constructor() { super('Conflict', 'No package is staged: PUT it to …/tenant/import/package first.') }
}

export class ImportConflicts extends DomainError<'Conflict'> {
  constructor(conflicts: Array<{ part: string; key: Record<string, unknown> }>, total: number) {
    super('Conflict', `The import would overwrite ${total} existing record(s); nothing was changed. Repeat with force=true to replace them.`, { extensions: { conflicts, conflictCount: total } })
  }
}

export class PackageTooLarge extends DomainError<'PayloadTooLarge'> {
  constructor(limit: number) { super('PayloadTooLarge', `The package exceeds ${limit} bytes.`) }
}

export class PackageInflatesTooLarge extends DomainError<'PayloadTooLarge'> {
  constructor(limit: number) {
    super('PayloadTooLarge', `The package inflates to more than ${limit} bytes (SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES); nothing was kept.`, { extensions: { limit, setting: 'SITEGRID_TENANT_PACKAGE_MAX_INFLATED_BYTES' } })
  }
}
