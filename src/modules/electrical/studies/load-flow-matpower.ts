// Test support: MATPOWER case files (test/fixtures/electrical/load-flow/) read as load-flow cases, for the library's
// tests and the endpoint's (which builds the same feeders through the API).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { BusKind, LoadFlowBus, LoadFlowCase } from './load-flow-case.ts'

export const FIXTURES = join(import.meta.dirname, '../../../../test/fixtures/electrical/load-flow')

/** A MATPOWER matrix (`mpc.<name> = [ … ];`) as rows of numbers. */
export function matrix(text: string, name: string): number[][] {
  const body = new RegExp(`mpc\\.${name}\\s*=\\s*\\[([\\s\\S]*?)\\];`).exec(text)![1]!
  return body
    .split('\n')
    .map((line) => line.replace(/%.*/, '').trim().replace(/;$/, ''))
    .filter(Boolean)
    .map((line) => line.split(/\s+/).map(Number))
}

/**
 * A MATPOWER case file read as the case file itself reads (columns per MATPOWER's CASEFORMAT): in-service generators
 * summed per bus, a tap ratio of 0 meaning a line. `ohmsAndKw`: the file's own closing conversion (case33bw gives
 * r and x in Ω and loads in kW) applied the same way. Also answers the file's bus rows, whose Vm, Va columns hold
 * the published solution where the case has one, and its branch rows as written (out-of-service ones included).
 */
export function matpowerCase(file: string, ohmsAndKw = false): { study: LoadFlowCase; busRows: number[][]; branchRows: number[][] } {
  const text = readFileSync(join(FIXTURES, file), 'utf8')
  const baseMva = Number(/mpc\.baseMVA\s*=\s*([\d.]+)/.exec(text)![1])
  const [busRows, gens, branches] = [matrix(text, 'bus'), matrix(text, 'gen'), matrix(text, 'branch')]
  const zBaseOhm = ohmsAndKw ? busRows[0]![9]! ** 2 / baseMva : 1
  const toMw = ohmsAndKw ? 1e-3 : 1
  const kinds: Record<number, BusKind> = { 1: 'pq', 2: 'pv', 3: 'slack' }
  const buses = busRows.map((row): LoadFlowBus => {
    const at = gens.filter((g) => g[0] === row[0] && g[7] === 1)
    const bus: LoadFlowBus = {
      id: String(row[0]),
      kind: kinds[row[1]!]!,
      pLoadMw: row[2]! * toMw,
      qLoadMvar: row[3]! * toMw,
      gShuntMw: row[4]!,
      bShuntMvar: row[5]!,
      pGenMw: at.reduce((sum, g) => sum + g[1]!, 0),
      qGenMvar: at.reduce((sum, g) => sum + g[2]!, 0),
    }
    return at.length > 0 ? { ...bus, vSetPu: at[0]![5]! } : bus
  })
  return {
    study: {
      baseMva,
      buses,
      branches: branches
        .filter((r) => r[10] === 1)
        .map((r) => ({
          id: `${r[0]}-${r[1]}`,
          fromBusId: String(r[0]),
          toBusId: String(r[1]),
          rPu: r[2]! / zBaseOhm,
          xPu: r[3]! / zBaseOhm,
          bPu: r[4]!,
          tapRatio: r[8]! === 0 ? 1 : r[8]!,
          shiftDeg: r[9]!,
        })),
    },
    busRows,
    branchRows: branches,
  }
}
