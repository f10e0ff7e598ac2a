/** Site `status` codes (spec 2.2 leaves their meaning open; these are ours, documented in the OpenAPI document). */
export const SITE_STATUS = [
  { code: 0, name: 'Planned', description: 'designed, not yet built or wired' },
  { code: 1, name: 'Commissioning', description: 'being built, loop-checked and commissioned' },
  { code: 2, name: 'Operational', description: 'in production' },
  { code: 3, name: 'Maintenance', description: 'planned outage or shutdown maintenance' },
  { code: 4, name: 'Standby', description: 'idle or care-and-maintenance, can restart' },
  { code: 5, name: 'Decommissioned', description: 'permanently out of service, kept for records' },
] as const

export const SITE_STATUS_CODES = SITE_STATUS.map((s) => s.code)

export function siteStatusName(code: number): string {
  return SITE_STATUS.find((s) => s.code === code)?.name ?? 'Unknown'
}
