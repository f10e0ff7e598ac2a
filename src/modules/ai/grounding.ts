import type { OrgId } from '../../ids.ts'
import type { AlarmsService } from '../alarms/service.ts'
import type { ControllersService } from '../controllers/service.ts'
import type { SitesService } from '../sites/service.ts'
import type { Grounding } from './schemas.ts'

/** The longest site summary put into a system prompt; longer lists are cut with a note. */
const MAX_SUMMARY_CHARS = 6_000
const MAX_CONTROLLERS = 50
const MAX_ALARMS = 25

/** Where a summary comes from: each area's own service, so exactly what the caller may read through the API. */
export interface GroundingSources {
  readonly sites: Pick<SitesService, 'require' | 'dependents'>
  readonly controllers?: Pick<ControllersService, 'summary'>
  readonly alarms?: Pick<AlarmsService, 'list'>
}

type AlarmListQuery = Parameters<AlarmsService['list']>[2]

export interface SiteContext {
  readonly text: string
  readonly grounding: NonNullable<Grounding>
}

function listLines<T>(title: string, items: readonly T[], max: number, line: (item: T) => string, hasMore = false): string[] {
  if (items.length === 0) return [`${title}: none.`]
  const shown = items.slice(0, max).map((item) => `- ${line(item)}`)
  const more = items.length > max || hasMore ? [`- … more not shown`] : []
  return [`${title} (${items.length}${hasMore ? '+' : ''}):`, ...shown, ...more]
}

/**
 * A compact summary of a site of the caller's organisation for the system prompt: the site, its controllers
 * (name, platform, protocol, address, CIP path, edge), its active alarms (priority, condition, message), and the
 * number of rows every site-scoped area keeps under it. Absent or foreign site: the uniform NotFound.
 */
export async function summariseSite(sources: GroundingSources, orgId: OrgId, code: string): Promise<SiteContext> {
  const site = await sources.sites.require(orgId, code)
  const included = ['site']
  const lines = [
    `Site ${site.code} "${site.name}": status ${site.statusName}, time zone ${site.timeZone}.`,
    ...(site.location ? [`Location: ${site.location}.`] : []),
    ...(site.description ? [`Description: ${site.description}`] : []),
  ]
  if (sources.controllers) {
    const controllers = await sources.controllers.summary(orgId, code)
    included.push('controllers')
    lines.push(...listLines('Controllers', controllers, MAX_CONTROLLERS, (c) =>
      `${c.name}${c.assetNumber ? ` [${c.assetNumber}]` : ''}: ${c.platform}, ${c.protocol} at ${c.ipAddress}` +
      `${c.cipPath ? `, CIP path ${c.cipPath}` : ''}${c.edgeId ? `, edge ${c.edgeId}` : ''}, polled every ${c.pollIntervalMs} ms`))
  }
  if (sources.alarms) {
    const state = ['active_unacknowledged', 'active_acknowledged'] as unknown as AlarmListQuery['state']
    const page = await sources.alarms.list(orgId, code, { limit: MAX_ALARMS, state })
    included.push('activeAlarms')
    lines.push(...listLines('Active alarms, newest change first', page.items, MAX_ALARMS, (a) =>
      `[${a.priority}] ${a.condition} on ${a.instanceId} (${a.state}, raised ${a.raisedAt})${a.message ? `: ${a.message}` : ''}`, page.nextCursor !== null))
  }
  const counts = await sources.sites.dependents(orgId, code)
  const countText = Object.entries(counts).map(([area, count]) => `${area} ${count}`).join(', ')
  if (countText !== '') {
    lines.push(`Records kept under the site: ${countText}.`)
    included.push(...Object.keys(counts).map((area) => `${area}Count`))
  }
  let text = `Context from sitegrid about the site the question concerns:\n${lines.join('\n')}`
  if (text.length > MAX_SUMMARY_CHARS) text = `${text.slice(0, MAX_SUMMARY_CHARS)}\n[summary cut]`
  return { text, grounding: { siteId: site.code, included } }
}
