// A node's protection on the site page: its settings, and a check for a fault at the node: the node's trip time
// (…/trip-time), the grading along its path to the chosen supply (…/coordination) and the time–current curves of that
// path (charts/tcc.ts from …/protection-curves) drawn beside the coordination table. The fault current is the
// short-circuit study's I″k max at the node unless the engineer types one; the study's 422 (which node lacks which
// parameter) is shown as the API says it.
import type { Coordination, ElectricalNode, ProtectionCurves, SupplyPaths, TripTime } from '../api-types.ts'
import { faultSourceLabel, renderTcc } from '../charts/tcc.ts'
import { ApiProblem, type Api } from '../context.ts'
import { append, clear, clearProblems, field, h, messageOf, select, showProblem, table, type Child } from '../dom.ts'
import { figures, num } from './site-parts.ts'

export interface ProtectionContext {
  api: Api
  nodePath: string
  /** Where the check draws the time–current plot and the coordination table. */
  plotBox: HTMLElement
  /** Takes the plot's cleanup (it observes its box's size); null when the plot goes. */
  plotted(cleanup: (() => void) | null): void
  /** The supply path a check walked (to highlight it). */
  checked(path: SupplyPaths['paths'][number]): void
}

/** The node's protection settings and the check form (run at once when the node has complete settings). */
export function protectionCheck(node: ElectricalNode, paths: SupplyPaths, at: ProtectionContext): Child[] {
  const { api: client, nodePath } = at
  const out: Child[] = []
  const hasSettings = Boolean(node.protectionCurve) && (node.protectionPickupA ?? 0) > 0 && (node.protectionTms ?? 0) > 0
  out.push(
    figures([
      ['Curve', node.protectionCurve || '—'],
      ['Pickup', num(node.protectionPickupA, 'A')],
      ['TMS', node.protectionTms === null ? '—' : String(node.protectionTms)],
    ]),
  )
  const result = h('div', { 'aria-live': 'polite' })
  if (hasSettings || paths.isSupplied) {
    // Empty: the short-circuit study's I″k max at the node; a typed current wins.
    const current = h('input', { type: 'number', name: 'faultCurrentA', step: 'any', placeholder: 'computed' })
    // Issue 28: the supply whose path is checked and drawn, when the node has more than one.
    const supply =
      paths.paths.length > 1
        ? select(
            'supplyId',
            paths.paths.map((p) => [p.supplyId, `${p.supplyId} (${p.hops} hop${p.hops === 1 ? '' : 's'})`]),
          )
        : null
    const form = h(
      'form',
      { class: 'filters', 'aria-label': 'Protection check', novalidate: true },
      field('Fault current (A)', current, {
        pointer: '/faultCurrentA',
        hint: "Empty: the short-circuit study's I″k max at this node. Type one to check another current.",
      }),
      supply ? field('Supply', supply, { pointer: '/supplyId', hint: 'The path checked and drawn.' }) : null,
      h('button', { type: 'submit', class: 'secondary' }, 'Check protection'),
    )
    const check = async () => {
      // Sent as typed: the API says what is wrong with it (a 400 naming faultCurrentA).
      const query: Record<string, string> = {}
      if (current.value.trim() !== '' || current.validity.badInput) query.faultCurrentA = current.value
      const chosen = supply ? { ...query, supplyId: supply.value } : query
      clear(result)
      clearPlot(at)
      const [trip, coordination] = await Promise.allSettled([
        hasSettings ? client.get<TripTime>(`${nodePath}/trip-time`, query) : Promise.resolve(null),
        paths.isSupplied ? client.get<Coordination>(`${nodePath}/coordination`, chosen) : Promise.resolve(null),
      ])
      // A refused fault current is the same 400 from both: once, next to the field.
      clearProblems(form)
      const refused = [trip, coordination].find(
        (r): r is PromiseRejectedResult => r.status === 'rejected' && r.reason instanceof ApiProblem && r.reason.status === 400,
      )
      if (refused) {
        showProblem(form, refused.reason)
        return
      }
      // The computed current needs the study's data: its 422 names the node and the parameter; once, not per read.
      const missing = [trip, coordination].find(
        (r): r is PromiseRejectedResult => r.status === 'rejected' && r.reason instanceof ApiProblem && r.reason.code === 'StudyDataMissing',
      )
      if (missing) {
        result.append(
          h('p', { class: 'form-error', role: 'alert', 'data-code': 'StudyDataMissing' }, messageOf(missing.reason)),
          h('p', { class: 'hint' }, 'Complete that study parameter, or type a fault current to check without the study.'),
        )
        return
      }
      if (trip.status === 'fulfilled' && trip.value) {
        const t = trip.value
        result.append(
          h(
            'p',
            {},
            `At ${amps(t.faultCurrentA)} (${faultSourceLabel(t)}): `,
            t.trips && t.tripTimeS !== null
              ? `trips in ${Number(t.tripTimeS.toFixed(3))} s at ${Number(t.multiple.toFixed(2))}× pickup (${t.curveLabel}).`
              : `does not trip at ${Number(t.multiple.toFixed(2))}× pickup.`,
          ),
          h('p', { class: 'hint' }, t.formula),
        )
      } else if (trip.status === 'rejected') result.append(h('p', { class: 'form-error' }, messageOf(trip.reason)))
      if (coordination.status === 'fulfilled' && coordination.value) {
        const c = coordination.value
        const walked = paths.paths.find((p) => p.supplyId === c.supplyId)
        if (walked) at.checked(walked)
        append(
          result,
          h(
            'p',
            { class: c.isCoordinated ? 'ok-text' : 'warn-text' },
            c.isCoordinated
              ? `Coordinated towards ${c.supplyId}.`
              : `${c.violationCount} grading violation${c.violationCount === 1 ? '' : 's'} towards ${c.supplyId}.`,
          ),
          c.pickupAboveMinFaultCount > 0
            ? h(
                'p',
                { class: 'warn-text', 'data-flag': 'pickupAboveMinFault' },
                `Pickup above the least fault at the end of the zone (I″k2 min): ${c.rows
                  .filter((r) => r.pickupAboveMinFault === true)
                  .map((r) => r.deviceId)
                  .join(', ')}.`,
              )
            : null,
          c.minimumFaultCheck.checked ? null : h('p', { class: 'hint' }, `Minimum-fault check not made: ${c.minimumFaultCheck.detail ?? ''}`),
        )
        showCurves(at, c)
      } else if (coordination.status === 'rejected') result.append(h('p', { class: 'form-error' }, messageOf(coordination.reason)))
    }
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      void check()
    })
    if (!hasSettings)
      out.push(h('p', { class: 'hint' }, "No complete protection settings on this node (curve, pickup and TMS); the path's devices can still be checked."))
    out.push(form, result)
    if (hasSettings) void check()
  } else {
    out.push(h('p', { class: 'hint' }, 'No protection settings.'))
  }
  return out
}

const amps = (a: number) => (a >= 1000 ? `${Number((a / 1000).toFixed(2))} kA` : `${Number(a.toFixed(1))} A`)

/** Takes away the last check's plot and table (a check that fails shows no other check's curves). */
function clearPlot(at: ProtectionContext): void {
  at.plotted(null)
  for (const el of at.plotBox.querySelectorAll('.tcc-body, .form-error')) el.remove()
}

/** The time–current plot of the coordination's path (curves from the API) with the coordination table beside it. */
function showCurves(at: ProtectionContext, c: Coordination): void {
  const { plotBox } = at
  clearPlot(at)
  const faultCurrentA = c.faultCurrentA
  // No device on the path: nothing to draw, and no range to ask for.
  const asked =
    c.rows.length === 0
      ? Promise.resolve(null)
      : at.api.get<ProtectionCurves>(`${at.nodePath}/protection-curves`, {
          supplyId: c.supplyId,
          // The coordination's current (typed or computed), so that the curves and the table agree.
          faultCurrentA,
          // The range reaches past the fault current, so that its line and the trip times at it are on the plot
          // (pickups on the fault's axis: a device beyond a transformer starts at pickup / currentRatio).
          toA: Math.max(...c.rows.map((r) => (30 * r.pickupA) / r.currentRatio), 2 * faultCurrentA),
        })
  void asked.then(
    (curves) => {
      const chart = h('div', { class: 'tcc-chart' })
      const body = h(
        'div',
        { class: 'tcc-body' },
        chart,
        h(
          'div',
          { class: 'tcc-table' },
          h(
            'p',
            { class: 'tcc-fault-summary' },
            `Fault ${amps(faultCurrentA)} at ${c.nodeId} (${faultSourceLabel(c)}), towards ${c.supplyId}; grading margin ${c.gradingMarginS} s.`,
          ),
          h('p', { class: 'hint mono' }, `Path: ${c.pathNodeIds.join(' → ')}`),
          table(
            'Protection coordination',
            ['Device', 'Curve', 'Current seen', 'Trip time', 'Margin', 'Status', 'Least fault at zone end (I″k2 min)'],
            c.rows.map((r) => ({
              attrs: { 'data-device-id': r.deviceId, 'data-status': r.status, 'data-min-fault': String(r.pickupAboveMinFault) },
              cells: [
                r.deviceId,
                `${r.curveLabel} ${r.pickupA} A × ${r.tms}`,
                r.currentRatio === 1 ? amps(r.faultCurrentA) : `${amps(r.faultCurrentA)} (× ${Number(r.currentRatio.toPrecision(4))})`,
                r.tripTimeS === null ? 'no trip' : `${Number(r.tripTimeS.toFixed(3))} s`,
                r.marginS === null ? '—' : `${Number(r.marginS.toFixed(3))} s`,
                h('span', { class: r.status === 'OK' ? 'ok-text' : 'warn-text' }, r.status),
                r.zoneEndMinFaultA === null
                  ? '—'
                  : h(
                      'span',
                      { class: r.pickupAboveMinFault ? 'warn-text' : '' },
                      `${amps(r.zoneEndMinFaultA)} at ${r.zoneEndBusId}${r.pickupAboveMinFault ? ': pickup above it' : ''}`,
                    ),
              ],
            })),
            { empty: 'No protective device with usable settings on the path.' },
          ),
          c.skipped.length > 0 ? h('p', { class: 'hint' }, `Skipped (incomplete settings): ${c.skipped.map((s) => s.nodeId).join(', ')}`) : null,
        ),
      )
      plotBox.append(body)
      if (curves && curves.devices.length > 0) at.plotted(renderTcc(chart, { curves, coordination: c }))
      else chart.append(h('p', { class: 'empty' }, 'No protective device with usable settings on the path: nothing to draw.'))
    },
    (error: unknown) => {
      plotBox.append(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
    },
  )
}
