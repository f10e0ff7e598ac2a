/**
 * Per-km impedance of a cable read from its `cableSize` text, for a node with no `rOhmPerKm` / `xOhmPerKm`.
 * R: the maximum DC resistance at 20 °C of IEC 60228 class 2 (stranded) conductors. X: 0.08 Ω/km at 50 Hz, the
 * usual value for three-core and trefoil cables up to 36 kV (a flat or spaced layout is higher: give xOhmPerKm).
 * The text must state the cross-section (`185mm²`, `185 mm2`, `3x185`, `4C 185`) and the conductor (`Cu` / copper or
 * `Al` / aluminium); otherwise nothing is read (the study then asks for the values).
 */
const R20_OHM_PER_KM = {
  Cu: {
    1.5: 12.1,
    2.5: 7.41,
    4: 4.61,
    6: 3.08,
    10: 1.83,
    16: 1.15,
    25: 0.727,
    35: 0.524,
    50: 0.387,
    70: 0.268,
    95: 0.193,
    120: 0.153,
    150: 0.124,
    185: 0.0991,
    240: 0.0754,
    300: 0.0601,
    400: 0.047,
    500: 0.0366,
    630: 0.0283,
  },
  Al: {
    16: 1.91,
    25: 1.2,
    35: 0.868,
    50: 0.641,
    70: 0.443,
    95: 0.32,
    120: 0.253,
    150: 0.206,
    185: 0.164,
    240: 0.125,
    300: 0.1,
    400: 0.0778,
    500: 0.0605,
    630: 0.0469,
  },
} as const satisfies Record<string, Record<number, number>>

export const CABLE_X_OHM_PER_KM = 0.08

export interface CableFromSize {
  readonly conductor: 'Cu' | 'Al'
  readonly crossSectionMm2: number
  readonly rOhmPerKm: number
  readonly xOhmPerKm: number
}

/** The table's values for the cable the text describes, or null when it names no size or conductor the table has. */
export function cableFromSize(text: string): CableFromSize | null {
  const conductor = /\b(al|alu|aluminium|aluminum)\b/i.test(text) ? 'Al' : /\b(cu|copper)\b/i.test(text) ? 'Cu' : null
  const size = /(\d+(?:\.\d+)?)\s*(?:mm²|mm2|mm\^2|sq\s*mm|mm)/i.exec(text) ?? /(?:\d\s*[x×c]\s*|\d\s*c\s+)(\d+(?:\.\d+)?)/i.exec(text)
  if (conductor === null || size === null) return null
  const crossSectionMm2 = Number(size[1])
  const r = (R20_OHM_PER_KM[conductor] as Record<number, number>)[crossSectionMm2]
  return r === undefined ? null : { conductor, crossSectionMm2, rOhmPerKm: r, xOhmPerKm: CABLE_X_OHM_PER_KM }
}
