import type { OrgId } from '../../ids.ts'
import type { AlarmsService } from '../alarms/service.ts'
import type { ControllersService } from '../controllers/service.ts'
import type { ElectricalService } from '../electrical/service.ts'
import type { SitesService } from '../sites/service.ts'
import type { Grounding } from './schemas.ts'

/** The longest site summary put into a system prompt; longer lists are cut with a note. */
const MAX_SUMMARY_CHARS = 6_000
const MAX_CONTROLLERS = 50
const MAX_ALARMS = 25
/** The network part: nodes named in the prompt listed at most, neighbours per node, supplies and unsupplied islands. */
const MAX_NAMED_NODES = 10
const MAX_NEIGHBOURS = 8
const MAX_LISTED_IDS = 20
const MAX_NETWORK_CHARS = 2_500

/** Where a summary comes from: each area's own service, so exactly what the caller may read through the API. */
export interface GroundingSources {
  readonly sites: Pick<SitesService, 'require' | 'dependents'>
  readonly controllers?: Pick<ControllersService, 'summary'>
  readonly alarms?: Pick<AlarmsService, 'list'>
  readonly electrical?: Pick<ElectricalService, 'getNetwork' | 'islands' | 'loops'>
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
 * electrical network (nodes by type, supplies, islands, loops, and the nodes the prompt names), and the number of
 * rows every site-scoped area keeps under it. Absent or foreign site: the uniform NotFound.
 */
export async function summariseSite(sources: GroundingSources, orgId: OrgId, code: string, prompt = ''): Promise<SiteContext> {
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
    lines.push(
      ...listLines(
        'Controllers',
        controllers,
        MAX_CONTROLLERS,
        (c) =>
          `${c.name}${c.assetNumber ? ` [${c.assetNumber}]` : ''}: ${c.platform}, ${c.protocol} at ${c.ipAddress}` +
          `${c.cipPath ? `, CIP path ${c.cipPath}` : ''}${c.edgeId ? `, edge ${c.edgeId}` : ''}, polled every ${c.pollIntervalMs} ms`,
      ),
    )
  }
  if (sources.alarms) {
    const state = ['active_unacknowledged', 'active_acknowledged'] as unknown as AlarmListQuery['state']
    const page = await sources.alarms.list(orgId, code, { limit: MAX_ALARMS, state })
    included.push('activeAlarms')
    lines.push(
      ...listLines(
        'Active alarms, newest change first',
        page.items,
        MAX_ALARMS,
        (a) => `[${a.priority}] ${a.condition} on ${a.instanceId} (${a.state}, raised ${a.raisedAt})${a.message ? `: ${a.message}` : ''}`,
        page.nextCursor !== null,
      ),
    )
  }
  if (sources.electrical) {
    let network = (await summariseNetwork(sources.electrical, orgId, code, prompt)).join('\n')
    if (network.length > MAX_NETWORK_CHARS) network = `${network.slice(0, MAX_NETWORK_CHARS)}\n[network summary cut]`
    included.push('electricalNetwork')
    lines.push(network)
  }
  const counts = await sources.sites.dependents(orgId, code)
  const countText = Object.entries(counts)
    .map(([area, count]) => `${area} ${count}`)
    .join(', ')
  if (countText !== '') {
    lines.push(`Records kept under the site: ${countText}.`)
    included.push(...Object.keys(counts).map((area) => `${area}Count`))
  }
  let text = `Context from sitegrid about the site the question concerns:\n${lines.join('\n')}`
  if (text.length > MAX_SUMMARY_CHARS) text = `${text.slice(0, MAX_SUMMARY_CHARS)}\n[summary cut]`
  return { text, grounding: { siteId: site.code, included } }
}

const idList = (ids: readonly string[]): string =>
  `${ids.slice(0, MAX_LISTED_IDS).join(', ')}${ids.length > MAX_LISTED_IDS ? `, … ${ids.length - MAX_LISTED_IDS} more` : ''}`

const WORD_CHAR = /[\p{L}\p{N}_-]/u
/** The most occurrences of node ids and names in a prompt looked at; the nodes after the budget count as not named. */
const MENTION_BUDGET = 1_000_000

/**
 * Where a prompt first names each node by id or name as a whole word ("TX-1" is not in "TX-12"). The prompt is read
 * once (lower-cased, each character's word class), each distinct id or name is looked for once, and the occurrences
 * looked at are bounded by MENTION_BUDGET: a network of many nodes named alike and a prompt of one letter repeated
 * made every node scan the whole prompt (minutes for 100 000 nodes).
 */
function mentionFinder(prompt: string): (...names: Array<string | null | undefined>) => number {
  const text = prompt.toLowerCase()
  const word = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) word[i] = WORD_CHAR.test(text[i]!) ? 1 : 0
  const found = new Map<string, number>()
  let budget = MENTION_BUDGET
  const firstAt = (wanted: string): number => {
    for (let at = text.indexOf(wanted); at >= 0 && budget > 0; at = text.indexOf(wanted, at + 1), budget--) {
      const end = at + wanted.length
      if ((at === 0 || word[at - 1] === 0) && (end === text.length || word[end] === 0)) return at
    }
    return -1
  }
  return (...names) => {
    let first = -1
    for (const name of names) {
      if (!name || name.length < 2) continue
      const wanted = name.toLowerCase()
      let at = found.get(wanted)
      if (at === undefined) found.set(wanted, (at = firstAt(wanted)))
      if (at >= 0 && (first < 0 || at < first)) first = at
    }
    return first
  }
}

/** The nodes `prompt` names by id or name, in the order it names them: the first MAX_NAMED_NODES + 1 (one more tells "first"). */
export function namedNodes<T extends { id: string; name?: string | null }>(prompt: string, nodes: readonly T[]): T[] {
  const mentionAt = mentionFinder(prompt)
  return nodes
    .map((node) => ({ node, at: mentionAt(node.id, node.name) }))
    .filter((m) => m.at >= 0)
    .sort((a, b) => a.at - b.at)
    .map((m) => m.node)
    .slice(0, MAX_NAMED_NODES + 1)
}

/** Node count by type, supplies, islands, loops, and the nodes named in the prompt with their neighbours. */
async function summariseNetwork(electrical: NonNullable<GroundingSources['electrical']>, orgId: OrgId, code: string, prompt: string): Promise<string[]> {
  const network = await electrical.getNetwork(orgId, code)
  if (network.nodeCount === 0) return ['Electrical network: no nodes recorded.']
  const [islands, loops] = await Promise.all([electrical.islands(orgId, code), electrical.loops(orgId, code, 0)])
  const byType = new Map<string, number>()
  for (const node of network.nodes) byType.set(node.nodeTypeName, (byType.get(node.nodeTypeName) ?? 0) + 1)
  const supplies = islands.islands.flatMap((i) => i.supplyIds)
  const unsupplied = islands.islands.filter((i) => !i.hasSupply)
  const lines = [
    `Electrical network: ${network.nodeCount} nodes (${[...byType]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([type, n]) => `${type} ${n}`)
      .join(', ')}), ${network.edgeCount} edges.`,
    `Supplies (${supplies.length}): ${supplies.length === 0 ? 'none' : idList(supplies)}.`,
    `Islands: ${islands.islandCount}, of which ${islands.unsuppliedIslandCount} without a supply${unsupplied.length === 0 ? '' : ` (nodes ${idList(unsupplied.flatMap((i) => i.nodeIds))})`}.`,
    `Loops: ${loops.loopCount} independent (${loops.isRadial ? 'radial' : 'meshed'}).`,
  ]
  const named = namedNodes(prompt, network.nodes)
  if (named.length === 0) return lines
  const supplied = new Map(islands.islands.flatMap((i) => i.nodeIds.map((id) => [id, i.hasSupply] as const)))
  lines.push(`Nodes named in the question (${named.length > MAX_NAMED_NODES ? `first ${MAX_NAMED_NODES}` : named.length}):`)
  for (const node of named.slice(0, MAX_NAMED_NODES)) {
    const neighbours = network.edges
      .filter((e) => e.sourceId === node.id || e.targetId === node.id)
      .map((e) => `${e.sourceId === node.id ? e.targetId : e.sourceId} (${e.edgeTypeName})`)
    const ratings = [
      node.ratedVoltageV == null ? '' : `${node.ratedVoltageV} V`,
      node.ratedCurrentA == null ? '' : `${node.ratedCurrentA} A`,
      node.ratedPowerKw == null ? '' : `${node.ratedPowerKw} kW`,
      node.protectionCurve == null ? '' : `protection ${node.protectionCurve}`,
    ].filter((r) => r !== '')
    lines.push(
      `- ${node.id}${node.name ? ` "${node.name}"` : ''}: ${node.nodeTypeName}${ratings.length ? `, ${ratings.join(', ')}` : ''}` +
        `, ${supplied.get(node.id) === true ? 'supplied' : 'NOT supplied'}` +
        `, connects to ${neighbours.length === 0 ? 'nothing' : `${neighbours.slice(0, MAX_NEIGHBOURS).join(', ')}${neighbours.length > MAX_NEIGHBOURS ? `, … ${neighbours.length - MAX_NEIGHBOURS} more` : ''}`}.`,
    )
  }
  return lines
}
