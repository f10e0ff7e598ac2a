import type { FieldProblem } from '../../errors/domain-error.ts'
import { INSTANCE_LIMITS as L, jsonBytes, jsonDepth } from './limits.ts'

/** Bounds the schema cannot express: total bytes of tagMappings and config, and config depth. */
export function sizeProblems(input: { tagMappings?: Record<string, string>; config?: Record<string, unknown> }): Array<Omit<FieldProblem, 'in'>> {
  const problems: Array<Omit<FieldProblem, 'in'>> = []
  if (input.tagMappings !== undefined && jsonBytes(input.tagMappings) > L.tagMappingsMaxBytes) {
    problems.push({ pointer: '/tagMappings', message: `must be at most ${L.tagMappingsMaxBytes} bytes as JSON` })
  }
  if (input.config !== undefined) {
    if (jsonBytes(input.config) > L.configMaxBytes) problems.push({ pointer: '/config', message: `must be at most ${L.configMaxBytes} bytes as JSON` })
    if (jsonDepth(input.config) > L.configMaxDepth) problems.push({ pointer: '/config', message: `must be nested at most ${L.configMaxDepth} levels deep` })
  }
  return problems
}
