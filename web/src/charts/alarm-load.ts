// Alarm load chart for the alarms page: the alarm rate per 10 minutes and per operator position over the period
// of one answer of GET /api/sites/{siteId}/alarms/load?from=&to=&operatorPositions= (src/modules/alarms/schemas.ts
// AlarmLoadSchema): each interval's activations (`activationsPer10Min`) as a step, those above the ISA-18.2 flood
// threshold (> 10 per 10 min per position) in red, the average and the threshold as lines, with the summary figures as
// text beside it. Times are in the zone the page shows (the site's or the browser's), named on the axis.
import uPlot from 'uplot'
import type { AlarmLoad } from '../api-types.ts'
import { adoptStyles } from '../adopt-styles.ts'
import { fitPlot } from './fit.ts'
import { tickLabels } from './ticks.ts'
import { UPLOT_CSS } from './uplot-css.ts'

/**
 * The data: the alarm load answer as the API sends it (only these fields are read).
 * - `from`, `to`: the period (ISO date-times); `operatorPositions`: positions sharing the alarms.
 * - `activations`: annunciated activations; `intervals`: 10-minute intervals in the period;
 *   `activationsPer10Min`: the activations of each interval (all positions), aligned to `from`.
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
  | 'activationsPer10Min'
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
figure.alarm-load{margin:0}
.alarm-load-plot{min-width:0;width:100%}
.alarm-load-summary{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;margin:0}
.alarm-load-summary div{display:flex;gap:.35rem}
.alarm-load-summary dt{font-weight:600}
.alarm-load-summary dd{margin:0}
`

/** Draws the chart into `el` (replacing its content), times in `timeZone`; returns a function that removes it. */
export function renderAlarmLoadChart(el: HTMLElement, data: AlarmLoadData, timeZone: string): () => void {
  adoptStyles('uplot', UPLOT_CSS)
  adoptStyles('alarm-load', CSS)
  const from = Date.parse(data.from)
  const to = Date.parse(data.to)
  const positions = Math.max(1, data.operatorPositions)
  // One step per interval, from its start to the next (the last one ends at `to`, where its value is repeated). The
  // flood series holds the flooded intervals and the point after each (where its step ends).
  const counts = data.activationsPer10Min
  const xs = [...counts.map((_, i) => (from + i * TEN_MINUTES) / 1000), to / 1000]
  const rate = [...counts, counts.at(-1) ?? 0].map((count) => count / positions)
  const isFlood = (i: number) => i >= 0 && i < counts.length && rate[i]! > data.floodThresholdPer10Min
  const flood = rate.map((r, i) => (isFlood(i) || isFlood(i - 1) ? r : null))
  const average = xs.map(() => data.averagePer10MinPerPosition)
  const threshold = xs.map(() => data.floodThresholdPer10Min)

  const figure = document.createElement('figure')
  figure.className = 'alarm-load'
  const caption = document.createElement('figcaption')
  caption.textContent = `Alarm rate per 10 minutes per operator position (${positions} position${positions === 1 ? '' : 's'}), times in ${timeZone}`
  const plotBox = document.createElement('div')
  plotBox.className = 'alarm-load-plot'
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

  const step = uPlot.paths.stepped!({ align: 1 })
  const plot = new uPlot(
    {
      width: plotBox.clientWidth,
      height: 220,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timeZone),
      series: [
        { label: 'Time' },
        { label: 'Per 10 min', stroke: '#0b57d0', fill: 'rgba(11,87,208,.18)', width: 1.5, paths: step },
        { label: 'Flood', stroke: '#b3261e', fill: 'rgba(179,38,30,.3)', width: 1.5, paths: step, spanGaps: false },
        { label: 'Average', stroke: '#1e7a3a', width: 1.5 },
        { label: 'Flood threshold', stroke: '#5b6573', width: 1, dash: [6, 4] },
      ],
      scales: {
        x: { time: true, range: [from / 1000, to / 1000] },
        y: { range: (_u, _min, max) => [0, Math.max(max, data.floodThresholdPer10Min * 1.2, data.peakPer10MinPerPosition * 1.1)] },
      },
      axes: [{ label: `Time (${timeZone})` }, { size: 50, label: 'per 10 min', values: (_u, splits, _axis, _space, incr) => tickLabels(splits, incr) }],
    },
    [xs, rate, flood, average, threshold],
    plotBox,
  )
  plotBox.setAttribute('role', 'img')
  plotBox.setAttribute(
    'aria-label',
    `${data.activations} activations; average ${data.averagePer10MinPerPosition.toFixed(2)} and peak ${data.peakPer10MinPerPosition} per 10 minutes per position; ${data.floods.length} flood${data.floods.length === 1 ? '' : 's'}.`,
  )

  const unfit = fitPlot(plot, plotBox, 220)
  return () => {
    unfit()
    plot.destroy()
    figure.remove()
  }
}
