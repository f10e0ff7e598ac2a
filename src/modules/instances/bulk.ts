import type { InstancesTable } from '../../db/schema.ts'
import type { FieldProblem } from '../../errors/domain-error.ts'
import { describeAjvErrors, MAX_FIELD_PROBLEMS } from '../../http/problem.ts'
import { createBodyValidator } from '../../http/validation.ts'
import type { OrgId } from '../../ids.ts'
import { sizeProblems } from './checks.ts'
import { CreateInstanceBody, type BulkReport, type CreateInstanceInput } from './schemas.ts'
import { rowOf } from './rows.ts'

type Problem = { pointer: string; message: string }

/** One line of a bulk request: its number, the instance body, and problems found while reading it (CSV). */
export interface BulkItem {
  line: number
  /** JSON pointer prefix of the line in the request, for the 422's `errors` (`/3` in a JSON array, `/line/4` in CSV). */
  at: string
  id: string | null
  value: unknown
  problems?: Problem[]
}

/** Checks one instance body against the create schema; the same rules as POST …/instances. */
export function createItemValidator(): (value: unknown) => Problem[] {
  const check = createBodyValidator().compile(CreateInstanceBody)
  return (value) => {
    if (check(value)) return sizeProblems(value as CreateInstanceInput)
    return describeAjvErrors(check.errors ?? [])
  }
}

/** The most problems a refused line lists; the last then says how many more it has. */
export const MAX_LINE_PROBLEMS = 10

/**
 * A refused line's problems as the report lists them: a line of a hundred thousand unknown properties would make a
 * report many times the size of the request (the whole request's `errors` keep the first MAX_FIELD_PROBLEMS).
 */
function listedProblems(problems: Problem[]): Problem[] {
  if (problems.length <= MAX_LINE_PROBLEMS) return problems
  const more = problems.length - (MAX_LINE_PROBLEMS - 1)
  return [...problems.slice(0, MAX_LINE_PROBLEMS - 1), { pointer: '', message: `and ${more} more problems on this line` }]
}

export interface BulkPlan {
  report: Omit<BulkReport, 'dryRun'>
  errors: FieldProblem[]
  inserts: InstancesTable[]
  updates: InstancesTable[]
}

const SAME_FIELDS = ['name', 'type_id', 'type_version', 'asset_number', 'controller_id', 'area', 'tag_mappings', 'config'] as const

/** Decides each line's outcome without writing: created, updated (whole-body replacement), unchanged or refused. */
export function planBulk(
  orgId: OrgId,
  siteCode: string,
  items: BulkItem[],
  ctx: {
    now: number
    existing: Map<string, InstancesTable>
    controllers: Set<string>
    validate: (value: unknown) => Problem[]
  },
): BulkPlan {
  const plan: BulkPlan = { report: { created: 0, updated: 0, unchanged: 0, refused: 0, lines: [] }, errors: [], inserts: [], updates: [] }
  const firstLine = new Map<string, number>()
  for (const item of items) {
    const problems = [...(item.problems ?? []), ...ctx.validate(item.value)]
    const input = item.value as CreateInstanceInput
    if (problems.length === 0) {
      const seen = firstLine.get(input.id)
      if (seen !== undefined) problems.push({ pointer: '/id', message: `repeats the id of line ${seen}` })
      if (!ctx.controllers.has(input.controllerId)) problems.push({ pointer: '/controllerId', message: 'names no controller of this site' })
    }
    if (item.id !== null && !firstLine.has(item.id)) firstLine.set(item.id, item.line)
    if (problems.length > 0) {
      plan.report.refused++
      const listed = listedProblems(problems)
      plan.report.lines.push({ line: item.line, id: item.id, outcome: 'refused', errors: listed })
      for (const p of listed) {
        if (plan.errors.length < MAX_FIELD_PROBLEMS) plan.errors.push({ in: 'body', pointer: `${item.at}${p.pointer}`, message: p.message })
      }
      continue
    }
    const row = rowOf(orgId, siteCode, input, ctx.now)
    const current = ctx.existing.get(input.id)
    if (current === undefined) {
      plan.report.created++
      plan.inserts.push(row)
      plan.report.lines.push({ line: item.line, id: input.id, outcome: 'created' })
    } else if (SAME_FIELDS.every((f) => current[f] === row[f])) {
      plan.report.unchanged++
      plan.report.lines.push({ line: item.line, id: input.id, outcome: 'unchanged' })
    } else {
      plan.report.updated++
      plan.updates.push({ ...row, created_at: current.created_at })
      plan.report.lines.push({ line: item.line, id: input.id, outcome: 'updated' })
    }
  }
  return plan
}
