// The site page's edge gateways (issue 30): each gateway with its state (online, stale, faulted), last heartbeat and
// version, and each controller it polls with its own state, last report, last good poll and error count, as
// GET …/edges answers them. Times are in the site's zone unless the engineer chose the browser's (time-zone.ts).
import type { EdgeStatus } from '../api-types.ts'
import type { PageContext } from '../context.ts'
import { clear, h, messageOf, table, time } from '../dom.ts'
import { shownZone } from '../time-zone.ts'
import { sitePath } from './site-parts.ts'

const LABEL: Record<EdgeStatus['state'], string> = { online: 'Online', stale: 'Stale', faulted: 'Faulted' }
const stateCell = (state: EdgeStatus['state']) => h('span', { class: `edge-state ${state}` }, LABEL[state])

/** Fills `box` (a section with its h2) with the site's gateways and their controllers. */
export async function showGateways(box: HTMLElement, ctx: PageContext, code: string, siteZone: string): Promise<void> {
  const body = h('div', {})
  box.append(body)
  try {
    const { items } = await ctx.api.get<{ items: EdgeStatus[] }>(`${sitePath(code)}/edges`)
    const zone = shownZone(siteZone)
    clear(body)
    if (items.length === 0) {
      body.append(h('p', {}, 'No controller is assigned to an edge gateway yet.'))
      return
    }
    const staleAfterS = Math.round(items[0]!.staleAfterMs / 1000)
    body.append(
      h('p', { class: 'hint' }, `A gateway or controller is stale after ${staleAfterS} s without a heartbeat. Times in ${zone}.`),
      table(
        'Edge gateways',
        ['Gateway', 'State', 'Last heartbeat', 'Version', 'Message'],
        items.map((g) => ({
          attrs: { 'data-edge-id': g.edgeId, 'data-state': g.state },
          cells: [
            h('span', { class: 'mono' }, g.edgeId),
            stateCell(g.state),
            g.lastHeartbeatAt ? time(g.lastHeartbeatAt, zone) : 'never',
            g.gatewayVersion ?? '—',
            g.message ?? '',
          ],
        })),
      ),
      table(
        'Controllers by gateway',
        ['Gateway', 'Controller', 'State', 'Last report', 'Last good poll', 'Errors', 'Last error'],
        items.flatMap((g) =>
          g.controllers.map((c) => ({
            attrs: { 'data-controller-id': c.controllerId, 'data-state': c.state },
            cells: [
              h('span', { class: 'mono' }, g.edgeId),
              c.name ?? c.controllerId,
              stateCell(c.state),
              c.reportedAt ? time(c.reportedAt, zone) : 'never',
              c.lastGoodPollAt ? time(c.lastGoodPollAt, zone) : '—',
              c.errorCount ?? '—',
              c.lastError ?? '',
            ],
          })),
        ),
      ),
    )
  } catch (error) {
    clear(body)
    body.append(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
  }
}
