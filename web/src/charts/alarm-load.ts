// Alarm load chart for the alarms page: the alarm rate per 10 minutes and per operator position over the period
// of one answer of GET /api/sites/{siteId}/alarms/load?from=&to=&operatorPositions= (src/modules/alarms/schemas.ts
// AlarmLoadSchema). The endpoint answers aggregates, not a count for every interval, so the chart draws what it
// knows exactly: the average and the peak rate, the ISA-18.2 flood threshold (> 10 per 10 min per position) and each
// flood run (its mean rate per 10 min across the run's intervals), with the summary figures as text beside it.
import uPlot from 'uplot'
import type { AlarmLoad } from '../api-types.ts'
import { adoptStyles } from '../adopt-styles.ts'
import { UPLOT_CSS } from './uplot-css.ts'

/**
 * The data: the alarm load answer as the API sends it (only these fields are read).
 * - `from`, `to`: the period (ISO date-times); `operatorPositions`: positions sharing the alarms.
 * - `activations`: annunciated activations; `intervals`: 10-minute intervals in the period.
 * - `averagePer10MinPerPosition`, `peakPer10MinPerPosition`: rates per 10 min per position.
 * - `floodThresholdPer10Min`: more than this many per 10 min per position is a flood (10).
 * - `percentTimeInFlood`; `floods`: runs of flooded intervals `{start, end, activations, peakPer10Min}`.
 * - `byPriority`: activations per priority (`critical`, `high`, `medium`, `low`).
 */
export type AlarmLoadData = Pick<
  AlarmLoad,
  | 'from'
  | 'to'
  | 'operatorPositions'
  | 'activations'
  | 'intervals'
  | 'averagePer10MinPerPosition'
  | 'peakPer10MinPerPosition'
  | 'floodThresholdPer10Min'
  | 'percentTimeInFlood'
  | 'floods'
  | 'byPriority'
>

const TEN_MINUTES = 600_000

const CSS = `
.alarm-load{display:flex;flex-direction:column;gap:.5rem;min-width:0}
.alarm-load-summary{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;margin:0}
.alarm-load-summary div{display:flex;gap:.35rem}
.alarm-load-summary dt{font-weight:600}
.alarm-load-summary dd{margin:0}
`

/** Draws the chart into `el` (replacing its content); returns a function that removes it. */
export function renderAlarmLoadChart(el: HTMLElement, data: AlarmLoadData): () => void {
  adoptStyles('uplot', UPLOT_CSS)
  adoptStyles('alarm-load', CSS)
  const from = Date.parse(data.from)
  const to = Date.parse(data.to)
  const positions = Math.max(1, data.operatorPositions)
  const count = Math.max(1, Math.ceil((to - from) / TEN_MINUTES))
  const xs: number[] = []
  const flood: Array<number | null> = []
  for (let i = 0; i <= count; i++) {
    xs.push((from + i * TEN_MINUTES) / 1000)
    flood.push(null)
  }
  for (const f of data.floods) {
    const first = Math.max(0, Math.floor((Date.parse(f.start) - from) / TEN_MINUTES))
    const last = Math.min(count, Math.ceil((Date.parse(f.end) - from) / TEN_MINUTES))
    const rate = f.activations / Math.max(1, last - first) / positions
    for (let i = first; i < last; i++) flood[i] = rate
    if (last > first) flood[last] = rate
  }
  const average = xs.map(() => data.averagePer10MinPerPosition)
  const threshold = xs.map(() => data.floodThresholdPer10Min)

  const figure = document.createElement('figure')
  figure.className = 'alarm-load'
  const caption = document.createElement('figcaption')
  caption.textContent = `Alarm rate per 10 minutes per operator position (${positions} position${positions === 1 ? '' : 's'})`
  const plotBox = document.createElement('div')
  const summary = document.createElement('dl')
  summary.className = 'alarm-load-summary'
  const figures: Array<[string, string]> = [
    ['Activations', String(data.activations)],
    ['Average / 10 min', data.averagePer10MinPerPosition.toFixed(2)],
    ['Peak / 10 min', String(Math.round(data.peakPer10MinPerPosition * 100) / 100)],
    ['Floods', String(data.floods.length)],
    ['Time in flood', `${data.percentTimeInFlood.toFixed(1)} %`],
    ...Object.entries(data.byPriority).map(([p, n]): [string, string] => [p[0]!.toUpperCase() + p.slice(1), String(n)]),
  ]
  for (const [term, value] of figures) {
    const div = document.createElement('div')
    const dt = document.createElement('dt')
    dt.textContent = term
    const dd = document.createElement('dd')
    dd.textContent = value
    div.append(dt, dd)
    summary.append(div)
  }
  figure.append(caption, plotBox, summary)
  el.replaceChildren(figure)

  const width = Math.max(300, Math.floor(el.clientWidth || 800))
  const plot = new uPlot(
    {
      width,
      height: 220,
      series: [
        { label: 'Time' },
        {
          label: 'Flood (mean rate in the run)',
          stroke: '#b3261e',
          fill: 'rgba(179,38,30,.25)',
          width: 1.5,
          paths: uPlot.paths.stepped!({ align: 1 }),
          spanGaps: false,
        },
        { label: 'Average', stroke: '#0b57d0', width: 1.5 },
        { label: 'Flood threshold', stroke: '#5b6573', width: 1, dash: [6, 4] },
      ],
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, data.floodThresholdPer10Min * 1.2, data.peakPer10MinPerPosition * 1.1)] } },
      axes: [{}, { size: 50, label: 'per 10 min' }],
    },
    [xs, flood, average, threshold],
    plotBox,
  )
  plotBox.setAttribute('role', 'img')
  plotBox.setAttribute(
    'aria-label',
    `${data.activations} activations; average ${data.averagePer10MinPerPosition.toFixed(2)} and peak ${data.peakPer10MinPerPosition} per 10 minutes per position; ${data.floods.length} flood${data.floods.length === 1 ? '' : 's'}.`,
  )

  const observer =
    typeof ResizeObserver === 'undefined'
      ? null
      : new ResizeObserver(() => {
          const w = Math.max(300, Math.floor(el.clientWidth || width))
          if (Math.abs(w - plot.width) >= 8) plot.setSize({ width: w, height: 220 })
        })
  observer?.observe(el)
  return () => {
    observer?.disconnect()
    plot.destroy()
    figure.remove()
  }
}
