// Protection time–current (TCC) plot, drawn as SVG on log–log axes: current (A) across, time (s) up. The curves are
// the server's (GET …/nodes/{id}/protection-curves: protection.ts's trip time at shared log-spaced currents), the
// fault current and each device's trip time at it and each grading margin pass/fail are the coordination's answer
// (GET …/nodes/{id}/coordination), so nothing here evaluates a curve. The current axis is the fault's: a device
// beyond a transformer is drawn at the current it sees for each current at the fault (the API's `currentRatio`), and
// the fault line is the short-circuit study's I″k max unless the engineer typed a current. Redrawn at its box's width
// when that changes.
import type { Coordination, ProtectionCurves } from '../api-types.ts'
import { adoptStyles } from '../adopt-styles.ts'

const SVG = 'http://www.w3.org/2000/svg'

const CSS = `
.tcc{min-width:0;width:100%}
.tcc svg{display:block;width:100%;height:auto;background:#fff;border:1px solid #c6ccd4;border-radius:6px}
.tcc-grid line{stroke:#e3e7ec;stroke-width:1}
.tcc-grid line.tcc-decade{stroke:#c6ccd4}
.tcc-axis text{font:11px system-ui,sans-serif;fill:#1c232b}
.tcc-axis .tcc-title{font-weight:600}
.tcc-curve{fill:none;stroke-width:2.25}
.tcc-fault{stroke:#b3261e;stroke-width:2;stroke-dasharray:6 4}
.tcc-fault-label{font:600 11px system-ui,sans-serif;fill:#b3261e}
.tcc-trip{stroke:#fff;stroke-width:1.5}
.tcc-margin line{stroke-width:3}
.tcc-margin text{font:600 11px system-ui,sans-serif}
.tcc-margin[data-status=OK] line{stroke:#1e7a3a}
.tcc-margin[data-status=OK] text{fill:#1e7a3a}
.tcc-margin[data-status=Violation] line{stroke:#b3261e}
.tcc-margin[data-status=Violation] text{fill:#b3261e}
.tcc-legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:.4rem 0 0;padding:0;list-style:none;font-size:.85rem}
.tcc-legend li{display:flex;align-items:center;gap:.35rem}
.tcc-legend svg{width:28px;height:12px;border:0;background:none}
`

// Colour and dash per device, so that curves differ without colour too.
const STYLES: Array<[colour: string, dash: string]> = [
  ['#0b57d0', ''],
  ['#6a1b9a', '8 4'],
  ['#b35c00', '2 3'],
  ['#00796b', '10 3 2 3'],
  ['#5b6573', '4 4'],
  ['#c2185b', '12 4'],
]

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}, text?: string): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value))
  if (text !== undefined) el.textContent = text
  return el
}

/** The decades (powers of ten) covering [min, max], at least one decade wide. */
export function decades(min: number, max: number): number[] {
  const from = Math.floor(Math.log10(min))
  const to = Math.max(from + 1, Math.ceil(Math.log10(max)))
  return Array.from({ length: to - from + 1 }, (_, i) => 10 ** (from + i))
}

/** A decade's label: 0.01, 0.1, 1, 10, 100, 1k, 10k, 100k, 1M… (never exponent notation, never "-0"). */
export function decadeLabel(value: number): string {
  if (value >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`
  if (value >= 1000) return `${Number((value / 1000).toPrecision(3))}k`
  return String(Number(value.toPrecision(3)))
}

const seconds = (s: number) => (s < 10 ? `${Number(s.toFixed(3))} s` : `${Number(s.toFixed(1))} s`)
/** How the fault line is labelled: the study's current or the one typed. */
export const faultSourceLabel = (c: Pick<Coordination, 'faultCurrentSource' | 'faultBusId'>) =>
  c.faultCurrentSource === 'shortCircuitStudy' ? `I″k max at ${c.faultBusId}, short-circuit study` : 'typed'
const amps = (a: number) => (a >= 1000 ? `${Number((a / 1000).toFixed(2))} kA` : `${Number(a.toFixed(0))} A`)

export interface TccData {
  curves: ProtectionCurves
  coordination: Coordination
}

/** Draws the plot into `el`; the returned function removes it. */
export function renderTcc(el: HTMLElement, data: TccData): () => void {
  adoptStyles('tcc', CSS)
  const box = document.createElement('div')
  box.className = 'tcc'
  el.append(box)
  let width = 0
  const draw = () => {
    const next = Math.max(320, Math.round(box.clientWidth || el.clientWidth || 640))
    if (next === width) return
    width = next
    box.replaceChildren(plot(data, width), legend(data))
  }
  draw()
  const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(draw)
  observer?.observe(box)
  return () => {
    observer?.disconnect()
    box.remove()
  }
}

function plot({ curves, coordination }: TccData, width: number): SVGSVGElement {
  const height = Math.round(Math.min(560, Math.max(280, width * 0.62)))
  const pad = { left: 58, right: 16, top: 16, bottom: 44 }
  const times = [
    ...curves.devices.flatMap((d) => d.timesS.filter((t): t is number => t !== null)),
    ...coordination.rows.flatMap((r) => (r.tripTimeS === null ? [] : [r.tripTimeS])),
  ]
  const currents = [...curves.currentsA, coordination.faultCurrentA].filter((a) => a > 0)
  // Time axis from 0.01 s to 1000 s at most: an inverse curve's time just above pickup runs off towards infinity.
  const xDecades = decades(Math.min(...currents), Math.max(...currents))
  const yDecades = decades(Math.max(0.01, Math.min(...times, 1)), Math.min(1000, Math.max(...times, 1)))
  const [x0, x1] = [xDecades[0]!, xDecades.at(-1)!]
  const [y0, y1] = [yDecades[0]!, yDecades.at(-1)!]
  const plotW = width - pad.left - pad.right
  const plotH = height - pad.top - pad.bottom
  const x = (a: number) => pad.left + ((Math.log10(a) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0))) * plotW
  const y = (s: number) => pad.top + (1 - (Math.log10(s) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * plotH

  const violations = coordination.rows.filter((r) => r.status === 'Violation').length
  const root = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    'data-x-scale': 'log',
    'data-y-scale': 'log',
    'aria-label':
      `Time–current curves of ${curves.devices.length} device${curves.devices.length === 1 ? '' : 's'} from ${curves.nodeId} to ${curves.supplyId}, ` +
      `log–log; fault current ${amps(coordination.faultCurrentA)} (${faultSourceLabel(coordination)}); ` +
      (violations === 0 ? 'every grading margin met.' : `${violations} grading margin${violations === 1 ? '' : 's'} below ${coordination.gradingMarginS} s.`),
  })
  const clipId = `tcc-clip-${Math.random().toString(36).slice(2)}`
  const clip = svg('clipPath', { id: clipId })
  clip.append(svg('rect', { x: pad.left, y: pad.top, width: plotW, height: plotH }))
  root.append(svg('defs'))
  root.firstElementChild!.append(clip)

  // Grid: decades and their 2…9 multiples; labels on the decades.
  const grid = svg('g', { class: 'tcc-grid', 'aria-hidden': 'true' })
  const axes = svg('g', { class: 'tcc-axis', 'aria-hidden': 'true' })
  for (const d of xDecades) {
    for (let m = 1; m < 10 && d * m <= x1; m++) {
      const px = x(d * m)
      grid.append(svg('line', { x1: px, x2: px, y1: pad.top, y2: pad.top + plotH, class: m === 1 ? 'tcc-decade' : '' }))
    }
    axes.append(svg('text', { class: 'tcc-x-tick', x: x(d), y: pad.top + plotH + 15, 'text-anchor': 'middle', 'data-value': d }, decadeLabel(d)))
  }
  for (const d of yDecades) {
    for (let m = 1; m < 10 && d * m <= y1; m++) {
      const py = y(d * m)
      grid.append(svg('line', { x1: pad.left, x2: pad.left + plotW, y1: py, y2: py, class: m === 1 ? 'tcc-decade' : '' }))
    }
    axes.append(svg('text', { class: 'tcc-y-tick', x: pad.left - 6, y: y(d) + 4, 'text-anchor': 'end', 'data-value': d }, decadeLabel(d)))
  }
  axes.append(svg('text', { class: 'tcc-title', x: pad.left + plotW / 2, y: height - 6, 'text-anchor': 'middle' }, 'Current (A), log scale'))
  axes.append(
    svg(
      'text',
      { class: 'tcc-title', x: 14, y: pad.top + plotH / 2, 'text-anchor': 'middle', transform: `rotate(-90 14 ${pad.top + plotH / 2})` },
      'Time (s), log scale',
    ),
  )
  root.append(grid, axes)

  const inside = svg('g', { 'clip-path': `url(#${clipId})` })
  curves.devices.forEach((device, i) => {
    const [colour, dash] = STYLES[i % STYLES.length]!
    // A break wherever the device does not trip (at or below pickup); each run of samples is one sub-path.
    let d = ''
    let pen = 'M'
    device.timesS.forEach((t, k) => {
      if (t === null || t <= 0) {
        pen = 'M'
        return
      }
      d += `${pen}${x(curves.currentsA[k]!).toFixed(1)} ${y(t).toFixed(1)} `
      pen = 'L'
    })
    inside.append(svg('path', { class: 'tcc-curve', d: d.trim(), stroke: colour, 'stroke-dasharray': dash, 'data-device-id': device.deviceId }))
  })

  // The fault current, each device's trip time at it, and each margin to the next device upstream.
  const fx = x(coordination.faultCurrentA)
  inside.append(
    svg('line', {
      class: 'tcc-fault',
      x1: fx,
      x2: fx,
      y1: pad.top,
      y2: pad.top + plotH,
      'data-current-a': coordination.faultCurrentA,
      'data-source': coordination.faultCurrentSource,
    }),
  )
  const colourOf = new Map(curves.devices.map((d, i) => [d.deviceId, STYLES[i % STYLES.length]![0]]))
  const tripOf = new Map(coordination.rows.map((r) => [r.deviceId, r.tripTimeS]))
  coordination.rows.forEach((row, i) => {
    if (row.tripTimeS !== null) {
      inside.append(
        svg('circle', { class: 'tcc-trip', cx: fx, cy: y(row.tripTimeS), r: 5, fill: colourOf.get(row.deviceId) ?? '#1c232b', 'data-device-id': row.deviceId }),
      )
    }
    const upstream = row.upstreamDeviceId === null ? null : tripOf.get(row.upstreamDeviceId)
    if (row.marginS === null || row.tripTimeS === null || upstream === null || upstream === undefined) return
    const mx = fx + 12 + 14 * i
    const passed = row.status === 'OK'
    const g = svg('g', { class: 'tcc-margin', 'data-status': row.status, 'data-device-id': row.deviceId })
    g.append(
      svg(
        'title',
        {},
        `${row.deviceId} → ${row.upstreamDeviceId}: margin ${seconds(row.marginS)} (${passed ? 'meets' : 'below'} ${coordination.gradingMarginS} s)`,
      ),
      svg('line', { x1: mx, x2: mx, y1: y(row.tripTimeS), y2: y(upstream) }),
      svg('text', { x: mx + 5, y: (y(row.tripTimeS) + y(upstream)) / 2 + 4 }, `${passed ? '✓' : '✗'} ${seconds(row.marginS)}`),
    )
    inside.append(g)
  })
  root.append(inside)
  const computed = coordination.faultCurrentSource === 'shortCircuitStudy'
  root.append(
    svg(
      'text',
      { class: 'tcc-fault-label', x: Math.min(fx + 4, width - (computed ? 170 : 120)), y: pad.top + 12 },
      `Fault ${amps(coordination.faultCurrentA)}${computed ? ' (I″k max)' : ''}`,
    ),
  )
  return root
}

function legend({ curves }: TccData): HTMLUListElement {
  const list = document.createElement('ul')
  list.className = 'tcc-legend'
  list.setAttribute('aria-label', 'Curves')
  curves.devices.forEach((device, i) => {
    const [colour, dash] = STYLES[i % STYLES.length]!
    const li = document.createElement('li')
    const sample = svg('svg', { viewBox: '0 0 28 12', 'aria-hidden': 'true' })
    sample.append(svg('path', { d: 'M2 6 L26 6', stroke: colour, 'stroke-width': 2.5, 'stroke-dasharray': dash, fill: 'none' }))
    // A device beyond a transformer: its pickup is in its own amperes, its curve on the fault's axis.
    const referred = device.currentRatio === 1 ? '' : ` (sees ${Number(device.currentRatio.toPrecision(4))} × the fault current)`
    li.append(sample, `${device.deviceId}: ${device.curveLabel}, Is ${device.pickupA} A, TMS ${device.tms}${referred}`)
    list.append(li)
  })
  return list
}
