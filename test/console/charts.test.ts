// The console's charts checked by their geometry and pixels in headless Chromium (issue 28): each chart's canvas lies
// inside its box at 800 and 2 560 px, the alarm-load peak is drawn at its height, a trend breaks at a gap of months,
// a single sample has a visible mark, no axis reads "-0", times are in the site's zone (labelled, with a toggle to
// the browser's), and the alarm list's Acknowledge button is on screen at 800 px. The texts a canvas draws are
// recorded by wrapping fillText before the console loads (uPlot draws its axes on the canvas).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { expect } from './expect.ts'
import { shot, signInWithPin, siteConsole } from './support.ts'

const SITE = 'KOL-1'
const ZONE = 'Asia/Kolkata'
const TEN_MIN = 600_000
const BLUE = [11, 87, 208] as const

/** Records, per canvas, what fillText wrote since the canvas was last cleared whole (uPlot clears before each redraw). */
function recordCanvasTexts(): void {
  type Canvas = HTMLCanvasElement & { drawnTexts?: Array<{ text: string; x: number; y: number }> }
  const proto = CanvasRenderingContext2D.prototype
  const fillText = proto.fillText
  const clearRect = proto.clearRect
  proto.fillText = function (this: CanvasRenderingContext2D, text: string, x: number, y: number, maxWidth?: number) {
    const canvas = this.canvas as Canvas
    const m = this.getTransform()
    ;(canvas.drawnTexts ??= []).push({ text: String(text), x: m.a * x + m.c * y + m.e, y: m.b * x + m.d * y + m.f })
    return maxWidth === undefined ? fillText.call(this, text, x, y) : fillText.call(this, text, x, y, maxWidth)
  }
  proto.clearRect = function (this: CanvasRenderingContext2D, x: number, y: number, w: number, h: number) {
    if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height) (this.canvas as Canvas).drawnTexts = []
    return clearRect.call(this, x, y, w, h)
  }
}

interface ChartView {
  box: { left: number; right: number; width: number }
  canvas: { left: number; right: number; width: number }
  viewport: number
  /** The plot area (u-over) in canvas pixels. */
  plot: { left: number; top: number; width: number; height: number }
  texts: Array<{ text: string; x: number; y: number }>
}

/** The chart inside `boxSelector`: its box, its canvas, its plot area and the texts drawn on it. */
function view(page: Page, boxSelector: string): Promise<ChartView> {
  return page.evaluate((selector) => {
    const box = document.querySelector(selector)!
    const canvas = box.querySelector('canvas') as HTMLCanvasElement & { drawnTexts?: Array<{ text: string; x: number; y: number }> }
    const over = box.querySelector('.u-over')!
    const [b, c, o] = [box.getBoundingClientRect(), canvas.getBoundingClientRect(), over.getBoundingClientRect()]
    const ratio = canvas.width / c.width
    return {
      box: { left: b.left, right: b.right, width: b.width },
      canvas: { left: c.left, right: c.right, width: c.width },
      viewport: document.documentElement.clientWidth,
      plot: { left: (o.left - c.left) * ratio, top: (o.top - c.top) * ratio, width: o.width * ratio, height: o.height * ratio },
      texts: canvas.drawnTexts ?? [],
    }
  }, boxSelector)
}

/** Pixels close to `rgb` in the plot area of the chart in `boxSelector`, between the fractions `from` and `to` of its width; and the topmost one's y. */
function colourPixels(page: Page, boxSelector: string, rgb: readonly number[], from = 0, to = 1): Promise<{ count: number; top: number }> {
  return page.evaluate(
    ({ selector, rgb, from, to }) => {
      const box = document.querySelector(selector)!
      const canvas = box.querySelector('canvas') as HTMLCanvasElement
      const over = box.querySelector('.u-over')!.getBoundingClientRect()
      const c = canvas.getBoundingClientRect()
      const ratio = canvas.width / c.width
      const left = Math.round((over.left - c.left + from * over.width) * ratio)
      const width = Math.max(1, Math.round((to - from) * over.width * ratio))
      const top = Math.round((over.top - c.top) * ratio)
      const height = Math.round(over.height * ratio)
      const pixels = canvas.getContext('2d')!.getImageData(left, top, width, height).data
      let count = 0
      let first = Infinity
      for (let i = 0; i < pixels.length; i += 4) {
        const near = Math.abs(pixels[i]! - rgb[0]!) + Math.abs(pixels[i + 1]! - rgb[1]!) + Math.abs(pixels[i + 2]! - rgb[2]!) < 60 && pixels[i + 3]! > 200
        if (!near) continue
        count++
        first = Math.min(first, top + Math.floor(i / 4 / width))
      }
      return { count, top: first }
    },
    { selector: boxSelector, rgb, from, to },
  )
}

function assertInside(v: ChartView, what: string): void {
  assert.ok(
    v.canvas.left >= v.box.left - 0.5 && v.canvas.right <= v.box.right + 0.5,
    `${what}: canvas ${v.canvas.left}–${v.canvas.right} inside its box ${v.box.left}–${v.box.right}`,
  )
  assert.ok(v.box.right <= v.viewport + 0.5, `${what}: its box ends at ${v.box.right}, inside the ${v.viewport} px viewport`)
  assert.ok(v.canvas.width >= v.box.width - 2, `${what}: the canvas (${v.canvas.width} px) fills its box (${v.box.width} px)`)
}

/** Waits until the chart in `boxSelector` fits its box (it follows a window resize), then checks it. */
async function fitsAfterResize(page: Page, boxSelector: string, what: string): Promise<ChartView> {
  await expect(async () => {
    const v = await view(page, boxSelector)
    return v.canvas.right <= v.box.right + 0.5 && v.canvas.width >= v.box.width - 2
  }, `${what} follows the window`).catch(() => undefined)
  const v = await view(page, boxSelector)
  assertInside(v, what)
  return v
}

const minusZero = (texts: ChartView['texts']) => texts.filter((t) => /^[-−]0([.,]0*)?$/.test(t.text.trim())).map((t) => t.text)

/** A long-layout export: `drift` around 0 (±0.0003 mm) hourly for a week in January and one in May, `level` once in March. */
function trendCsv(): string {
  const lines = ['timestamp,tag,value']
  for (const start of [Date.parse('2026-01-01T00:00:00Z'), Date.parse('2026-05-01T00:00:00Z')]) {
    for (let i = 0; i < 7 * 24; i++)
      lines.push(`${new Date(start + i * 3_600_000).toISOString().slice(0, 19).replace('T', ' ')},BELT.DRIFT,${(((i % 5) - 3) * 0.0001).toFixed(4)}`)
  }
  lines.push('2026-03-01 12:00:00,TANK.LEVEL,42.5')
  return `${lines.join('\n')}\n`
}

test('charts fit their box at 800 and 2 560 px, tell the truth (peak height, gaps, single samples, no "-0") and show times in the site zone', {
  timeout: 120_000,
}, async (t) => {
  const c = await siteConsole(t)
  await c.must('POST', '/api/sites', { code: SITE, name: 'Kolkata terminal', timeZone: ZONE })
  const plc = await c.must<{ id: string }>('POST', `/api/sites/${SITE}/controllers`, {
    name: 'PLC 1',
    platform: 1,
    assetNumber: 'PLC-1',
    connection: { protocol: 'EtherNet/IP', ipAddress: '10.0.0.1' },
  })
  await c.must('POST', `/api/sites/${SITE}/instances`, { id: 'CV-1', name: 'Conveyor 1', typeId: 'conveyor', assetNumber: 'A-CV-1', controllerId: plc.id })
  // Six activations in the newest 10 minutes that have begun (intervals are aligned to whole hours by the page).
  const interval = Math.floor((Date.now() - 7_000) / TEN_MIN) * TEN_MIN
  const gateway = await c.mintKey('member', 'gateway')
  await c.must(
    'POST',
    `/api/sites/${SITE}/alarms/events`,
    {
      events: Array.from({ length: 6 }, (_, i) => ({
        eventId: `peak-${i}`,
        instanceId: 'CV-1',
        condition: `trip_${i + 1}`,
        priority: 'high',
        state: 'active',
        occurredAt: new Date(interval + (i + 1) * 1000).toISOString(),
        message: `Trip ${i + 1}`,
      })),
    },
    gateway.plaintext,
  )
  const form = new FormData()
  form.set('site_id', SITE)
  form.set('format', 'long')
  form.set('mapping_csv', new Blob(['historian_tag,instance_id,tag_key,unit\nBELT.DRIFT,CV-1,drift,mm\nTANK.LEVEL,CV-1,level,%\n']), 'mapping.csv')
  form.set('trend_csv', new Blob([trendCsv()]), 'trend.csv')
  const imported = await fetch(`${c.origin}/api/historian/import-batches`, { method: 'POST', headers: { 'x-api-key': c.ownerKey }, body: form })
  assert.equal(imported.status, 201, await imported.text())

  const page = await c.browser.page({ width: 800, height: 900 })
  await page.addInitScript(recordCanvasTexts)
  const local = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)
  assert.notEqual(local, ZONE, 'the browser runs in another zone than the site')
  await signInWithPin(page, c.origin, c.owner, `/alarms?site=${SITE}`)

  // Alarms at 800 px: the Acknowledge button is on screen, the times and the chart are in the site's zone.
  const ack = page.getByRole('button', { name: 'Acknowledge CV-1 trip_6' })
  await ack.waitFor()
  const button = (await ack.boundingBox())!
  assert.ok(button.x >= 0 && button.x + button.width <= 800, `Acknowledge at ${button.x}–${button.x + button.width}, inside 800 px`)
  const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(pageWidth <= 800, `the alarms page does not scroll sideways at 800 px (${pageWidth} px wide)`)
  const toggle = page.getByRole('group', { name: 'Times in' })
  assert.equal(await toggle.getAttribute('data-zone'), ZONE)
  assert.equal(await toggle.getByLabel(`Site time (${ZONE})`).isChecked(), true)
  const raised = page.locator('tr', { has: ack }).locator('time').first()
  const raisedIso = (await raised.getAttribute('datetime'))!
  const inZone = (zone: string) =>
    page.evaluate(
      ([iso, zone]) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: zone }).format(new Date(iso!)),
      [raisedIso, zone],
    )
  assert.equal(await raised.textContent(), await inZone(ZONE))

  const LOAD = '.alarm-load .chart'
  await page.locator(`${LOAD} canvas`).waitFor()
  await expect(async () => (await view(page, LOAD)).texts.length > 0, 'the alarm-load chart draws its axes')
  let load = await view(page, LOAD)
  assertInside(load, 'alarm load at 800 px')
  assert.ok(
    load.texts.some((x) => x.text === `Time (${ZONE})`),
    `the time axis names the site's zone: ${load.texts.map((x) => x.text).join(' | ')}`,
  )
  assert.deepEqual(minusZero(load.texts), [])
  // The peak's height: the topmost pixel of the per-interval step against the y axis's own tick labels.
  const yTicks = load.texts
    .filter((x) => x.x < load.plot.left && /^\d+$/.test(x.text))
    .map((x) => ({ value: Number(x.text), y: x.y }))
    .sort((a, b) => a.value - b.value)
  assert.ok(yTicks.length >= 2, 'the y axis has numbered ticks')
  const [low, high] = [yTicks[0]!, yTicks.at(-1)!]
  const step = await colourPixels(page, LOAD, BLUE)
  const peak = low.value + ((low.y - step.top) / (low.y - high.y)) * (high.value - low.value)
  assert.ok(Math.abs(peak - 6) < 0.3, `the peak is drawn at ${peak.toFixed(2)} per 10 min (6 seeded)`)
  await shot(page, 'chart-alarm-load-800')

  // The toggle: times in the browser's zone, then back.
  await toggle.getByLabel(`My time (${local})`).check()
  await expect(async () => (await toggle.getAttribute('data-zone')) === local, 'the toggle switches to the browser zone')
  await expect(
    async () => (await page.locator('tr', { has: ack }).locator('time').first().textContent()) === (await inZone(local)),
    'the raised time is in the browser zone',
  )
  await expect(async () => (await view(page, LOAD)).texts.some((x) => x.text === `Time (${local})`), 'the chart axis names the browser zone')
  await toggle.getByLabel(`Site time (${ZONE})`).check()
  await expect(async () => (await view(page, LOAD)).texts.some((x) => x.text === `Time (${ZONE})`), 'back to the site zone')

  // The shelve dialog's "until" is typed in the site's zone too: its default (8 h ahead) is read back as such.
  await page.getByRole('button', { name: 'Shelve CV-1 trip_1' }).click()
  const shelve = page.getByRole('dialog', { name: 'Shelve CV-1 trip_1' })
  assert.match((await shelve.locator('[data-pointer="/until"] .hint').textContent()) ?? '', new RegExp(ZONE))
  await shelve.getByLabel('Reason').fill('belt being re-tensioned')
  await shelve.getByRole('button', { name: 'Shelve alarm' }).click()
  await page.locator('tr[data-state="shelved"]').waitFor()
  const alarms = await c.must<{ items: Array<{ condition: string; shelvedUntil: string | null }> }>('GET', `/api/sites/${SITE}/alarms?state=shelved`)
  const hoursAhead = (Date.parse(alarms.items[0]!.shelvedUntil!) - Date.now()) / 3_600_000
  assert.ok(hoursAhead > 7.9 && hoursAhead <= 8, `shelved for the default 8 hours of site time (${hoursAhead.toFixed(2)})`)

  await page.setViewportSize({ width: 2560, height: 1200 })
  load = await fitsAfterResize(page, LOAD, 'alarm load at 2 560 px')
  assert.ok(load.canvas.width > 1500, `the chart grew with the window (${load.canvas.width} px)`)
  await shot(page, 'chart-alarm-load-2560')

  // Historian trend at 2 560 px: the drift tag (values around 0, two clusters months apart).
  await page.goto(`${c.origin}/historian?site=${SITE}`)
  const TREND = '.trend-box'
  await page.getByRole('button', { name: /^Trend the tags of/ }).click()
  await page.locator('.trend[data-points]').waitFor()
  await page.getByLabel('CV-1 · level (%)').uncheck()
  await page.getByRole('button', { name: 'Show trend' }).click()
  await page.locator('.trend[data-points]').waitFor()
  await expect(async () => (await view(page, TREND)).texts.length > 0, 'the trend draws its axes')
  await shot(page, 'chart-trend-gap-2560')
  const trend = await view(page, TREND)
  assertInside(trend, 'trend at 2 560 px')
  assert.deepEqual(minusZero(trend.texts), [], 'no axis label reads "-0"')
  assert.ok(
    trend.texts.some((x) => x.text === `Time (${ZONE})`),
    "the trend's time axis names the site's zone",
  )
  const ends = await colourPixels(page, TREND, BLUE, 0, 0.05)
  const middle = await colourPixels(page, TREND, BLUE, 0.1, 0.9)
  assert.ok(ends.count > 0, 'the January samples are drawn')
  assert.equal(middle.count, 0, 'no line across the months without data')

  await page.setViewportSize({ width: 800, height: 900 })
  await fitsAfterResize(page, TREND, 'trend at 800 px')
  await shot(page, 'chart-trend-gap-800')

  // The level tag has one sample: it is drawn as a mark.
  await page.getByLabel('CV-1 · drift (mm)').uncheck()
  await page.getByLabel('CV-1 · level (%)').check()
  await page.getByRole('button', { name: 'Show trend' }).click()
  await page.locator('.trend[data-points="1"]').waitFor()
  await expect(async () => (await view(page, TREND)).texts.length > 0, 'the single-sample trend draws its axes')
  assertInside(await view(page, TREND), 'single-sample trend at 800 px')
  const mark = await colourPixels(page, TREND, BLUE)
  assert.ok(mark.count >= 9, `the single sample is visible (${mark.count} pixels)`)
  await shot(page, 'chart-trend-single-800')
  assert.deepEqual(page.errors, [])
})
