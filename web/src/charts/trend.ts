// Trend chart of historian series (uPlot). The period shown is read from
// GET /api/sites/{siteId}/historian/series with a bucket width suited to the chart's pixel width, so the server
// downsamples (min, max, mean per bucket) and the browser never holds more points than it can draw. Dragging across
// the chart zooms into that period and refetches it at the finer bucket; "Reset zoom" goes back. The line breaks
// where the data has a gap (charts/gaps.ts: neighbours more than GAP_FACTOR median spacings and a bucket apart); a
// point with no neighbour gets a mark. Times are in the zone the page shows (the site's or the browser's), named.
import type { Series as SeriesAnswer } from '../api-types.ts'
import uPlot from 'uplot'
import { adoptStyles } from '../adopt-styles.ts'
import type { Api } from '../context.ts'
import { formatTime } from '../dom.ts'
import { bucketFor, NICE_BUCKETS } from './buckets.ts'
import { fitPlot } from './fit.ts'
import { GAP_FACTOR, gapThreshold, isolatedPoints, withGaps } from './gaps.ts'
import { tickLabels } from './ticks.ts'
import { UPLOT_CSS } from './uplot-css.ts'

export interface TrendSeries {
  instanceId: string
  /** The instance's tag key (the mapping's `tag_key`). */
  tag: string
  label?: string
  /** Unit of the values: series of different units get their own y axis. */
  unit?: string | null
}

export interface TrendOptions {
  api: Api
  siteId: string
  series: TrendSeries[]
  /** The period first shown, epoch milliseconds, [from, to). */
  from: number
  to: number
  /** The IANA zone of the time axis and the period shown (named on the axis). */
  timeZone: string
  height?: number
}

export interface TrendChart {
  readonly element: HTMLElement
  /** Fetches and draws the current period (resolves once drawn). */
  load(): Promise<void>
  destroy(): void
}

const COLOURS = ['#0b57d0', '#b3261e', '#1e7a3a', '#b35c00', '#6a1b9a', '#00796b', '#5d4037', '#c2185b']
const MAX_PAGES = 5
const PAGE_LIMIT = 10_000

const CSS = `
.trend{display:flex;flex-direction:column;gap:.5rem;min-width:0}
.trend-toolbar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.trend-toolbar button{min-height:2.75rem}
.trend-status{margin:0;font-size:.9rem;color:#3c4550}
.trend-plot{min-height:120px;width:100%;min-width:0}
`

export function createTrendChart(options: TrendOptions): TrendChart {
  adoptStyles('uplot', UPLOT_CSS)
  adoptStyles('trend', CSS)
  const element = document.createElement('div')
  element.className = 'trend'
  const toolbar = document.createElement('div')
  toolbar.className = 'trend-toolbar'
  const reset = document.createElement('button')
  reset.type = 'button'
  reset.textContent = 'Reset zoom'
  reset.disabled = true
  const status = document.createElement('p')
  status.className = 'trend-status'
  status.setAttribute('role', 'status')
  toolbar.append(reset, status)
  const plotBox = document.createElement('div')
  plotBox.className = 'trend-plot'
  const hint = document.createElement('p')
  hint.className = 'hint'
  hint.textContent =
    'Drag across the chart to zoom into a period; the server then sends it at a finer resolution. ' +
    `A line breaks where its points are more than ${GAP_FACTOR} times their usual (median) spacing and more than one bucket apart: ` +
    'no line is drawn across a period without data. A point with no neighbour is drawn as a dot.'
  element.append(toolbar, plotBox, hint)

  const initial = { from: options.from, to: options.to }
  let period = { ...initial }
  let plot: uPlot | null = null
  let generation = 0
  let destroyed = false
  const single = options.series.length === 1

  const widthOf = () => Math.max(300, Math.floor(plotBox.clientWidth || element.clientWidth || 800))

  /** One series over the period: `[xs, mean, min, max]` in seconds, a null row in each gap. */
  async function fetchSeries(s: TrendSeries, bucket: string | null): Promise<[number[], ...Array<Array<number | null>>]> {
    const xs: number[] = []
    const mean: Array<number | null> = []
    const min: Array<number | null> = []
    const max: Array<number | null> = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await options.api.get<SeriesAnswer>(`/api/sites/${encodeURIComponent(options.siteId)}/historian/series`, {
        instanceId: s.instanceId,
        tag: s.tag,
        from: new Date(period.from).toISOString(),
        to: new Date(period.to).toISOString(),
        bucket: bucket ?? undefined,
        limit: PAGE_LIMIT,
        cursor,
      })
      for (const b of answer.buckets ?? []) {
        xs.push(Date.parse(b.start) / 1000)
        mean.push(b.mean)
        min.push(b.min)
        max.push(b.max)
      }
      for (const r of answer.samples ?? []) {
        xs.push(Date.parse(r.ts) / 1000)
        mean.push(r.value)
        min.push(r.value)
        max.push(r.value)
      }
      if (!answer.nextCursor) break
      cursor = answer.nextCursor
    }
    const bucketSeconds = (NICE_BUCKETS.find(([, text]) => text === bucket)?.[0] ?? 0) / 1000
    return withGaps([xs, mean, min, max], gapThreshold(xs, bucketSeconds))
  }

  function makeOptions(width: number, labels: string[]): uPlot.Options {
    // One y scale per unit (in order of first appearance): left, right, left… axes, each labelled with its unit.
    const units = [...new Set(options.series.map((s) => s.unit ?? ''))]
    const scaleOf = (s: TrendSeries) => `y${units.indexOf(s.unit ?? '')}`
    const series: uPlot.Series[] = [{ label: 'Time' }]
    labels.forEach((label, i) => {
      const colour = COLOURS[i % COLOURS.length]!
      series.push({
        label,
        scale: scaleOf(options.series[i]!),
        stroke: colour,
        width: 1.5,
        spanGaps: false,
        points: { show: false, size: 7, fill: colour, filter: (u, seriesIdx) => isolatedPoints(u.data[seriesIdx]!) },
      })
    })
    if (single) {
      const scale = scaleOf(options.series[0]!)
      const band = { scale, stroke: 'rgba(11,87,208,.35)', width: 1, spanGaps: false, points: { show: false } }
      series.push({ label: 'min', ...band }, { label: 'max', ...band })
    }
    const axes: uPlot.Axis[] = [
      { label: `Time (${options.timeZone})` },
      ...units.map(
        (unit, i): uPlot.Axis => ({
          scale: `y${i}`,
          side: i % 2 === 0 ? 3 : 1,
          size: 60,
          label: unit || undefined,
          grid: { show: i === 0 },
          values: (_u, splits, _axis, _space, incr) => tickLabels(splits, incr),
        }),
      ),
    ]
    return {
      width,
      height: options.height ?? 320,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), options.timeZone),
      series,
      bands: single ? [{ series: [3, 2], fill: 'rgba(11,87,208,.12)' }] : [],
      scales: { x: { time: true } },
      axes,
      cursor: { drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width < 3) return
            const from = Math.floor(u.posToVal(u.select.left, 'x') * 1000)
            const to = Math.ceil(u.posToVal(u.select.left + u.select.width, 'x') * 1000)
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false)
            if (to - from < 1_000) return
            period = { from, to }
            void load()
          },
        ],
      },
    }
  }

  async function load(): Promise<void> {
    const mine = ++generation
    const width = widthOf()
    const bucket = bucketFor(period.to - period.from, width)
    status.textContent = 'Loading…'
    element.setAttribute('aria-busy', 'true')
    try {
      const fetched = await Promise.all(options.series.map((s) => fetchSeries(s, bucket)))
      if (mine !== generation || destroyed) return
      const tables = fetched.map(([xs, mean, min, max]) => (single ? [xs, mean!, min!, max!] : [xs, mean!]) as uPlot.AlignedData)
      const data = tables.length === 1 ? tables[0]! : uPlot.join(tables)
      const labels = options.series.map((s) => s.label ?? `${s.instanceId} · ${s.tag}`)
      const points = fetched.reduce((sum, [, mean]) => sum + mean!.filter((v) => v !== null).length, 0)
      if (!plot) {
        plot = new uPlot(makeOptions(width, labels), data, plotBox)
        // A much wider chart deserves finer buckets (refetched only when the bucket changes).
        unfit = fitPlot(plot, plotBox, options.height ?? 320, (resized) => {
          if ((bucketFor(period.to - period.from, resized) ?? 'raw') === element.dataset.bucket) return
          clearTimeout(resizeTimer)
          resizeTimer = setTimeout(() => void load(), 300)
        })
      } else plot.setData(data, false)
      plot.setScale('x', { min: period.from / 1000, max: period.to / 1000 })
      element.dataset.points = String(points)
      element.dataset.bucket = bucket ?? 'raw'
      reset.disabled = period.from === initial.from && period.to === initial.to
      status.textContent =
        `${formatTime(new Date(period.from).toISOString(), options.timeZone)} – ${formatTime(new Date(period.to).toISOString(), options.timeZone)} (${options.timeZone}) · ` +
        `${bucket ? `${bucket} buckets (${single ? 'min, mean, max' : 'mean'})` : 'raw samples'} · ${points} point${points === 1 ? '' : 's'}` +
        (points === 0 ? ' · no data in this period' : '')
    } catch (error) {
      if (mine !== generation) return
      status.textContent = `Could not load the trend: ${error instanceof Error ? error.message : String(error)}`
    } finally {
      if (mine === generation) element.removeAttribute('aria-busy')
    }
  }

  reset.addEventListener('click', () => {
    period = { ...initial }
    void load()
  })
  let resizeTimer: ReturnType<typeof setTimeout> | undefined
  let unfit: (() => void) | undefined

  return {
    element,
    load,
    destroy() {
      destroyed = true
      clearTimeout(resizeTimer)
      unfit?.()
      plot?.destroy()
      element.remove()
    },
  }
}
