// Times in the console are shown in the site's time zone (`site.timeZone`, where its alarms and schedules live) and
// labelled with it; the engineer may switch to the browser's zone. The choice is kept in localStorage so that every
// page shows times the same way. The wall-clock helpers are pure (Intl only) and tested in time-zone.test.ts.
import { h, uid } from './dom.ts'

export type ZoneChoice = 'site' | 'local'
const KEY = 'sitegrid.times'

/** The browser's own IANA zone. */
export const localZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone

function choice(): ZoneChoice {
  try {
    return localStorage.getItem(KEY) === 'local' ? 'local' : 'site'
  } catch {
    return 'site'
  }
}

/** The zone a page shows its times in: the site's unless the engineer chose the browser's. */
export const shownZone = (siteZone: string): string => (choice() === 'local' ? localZone() : siteZone)

/**
 * The "Times in" switch: the site's zone or the browser's, each named. `onChange` gets the zone now shown; the
 * returned element's `data-zone` is that zone too.
 */
export function zoneToggle(siteZone: string, onChange: (zone: string) => void): HTMLFieldSetElement {
  const name = uid('zone')
  const option = (value: ZoneChoice, label: string) => {
    const id = uid('zone')
    return h('span', { class: 'check' }, h('input', { type: 'radio', id, name, value, checked: choice() === value }), h('label', { for: id }, label))
  }
  const box = h(
    'fieldset',
    { class: 'checks zone-toggle', 'data-zone': shownZone(siteZone) },
    h('legend', {}, 'Times in'),
    option('site', `Site time (${siteZone})`),
    option('local', `My time (${localZone()})`),
  )
  box.addEventListener('change', (event) => {
    const value = (event.target as HTMLInputElement).value === 'local' ? 'local' : 'site'
    try {
      localStorage.setItem(KEY, value)
    } catch {
      // Storage refused (private mode): the choice holds for this page only.
    }
    box.dataset.zone = value === 'local' ? localZone() : siteZone
    onChange(box.dataset.zone)
  })
  return box
}

const partsFormat = new Map<string, Intl.DateTimeFormat>()
/** The wall-clock fields of `ms` in `zone`. */
function fields(ms: number, zone: string): Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number> {
  let format = partsFormat.get(zone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    partsFormat.set(zone, format)
  }
  const out: Record<string, number> = {}
  for (const p of format.formatToParts(ms)) if (p.type !== 'literal') out[p.type] = Number(p.value)
  return out as ReturnType<typeof fields>
}

/** `ms` as `2024-03-01T10:00:05` in `zone`: the value of a datetime-local input showing that zone. */
export function wallClock(ms: number, zone: string): string {
  const f = fields(Math.floor(ms / 1000) * 1000, zone)
  const pad = (n: number, width = 2) => String(n).padStart(width, '0')
  return `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}T${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}`
}

/** The instant a wall-clock time (`2024-03-01T10:00[:05]`) names in `zone`; NaN if it is not one. */
export function fromWallClock(text: string, zone: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text)
  if (!m) return Number.NaN
  const asUtc = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0))
  const offsetAt = (ms: number) => {
    const f = fields(ms, zone)
    return Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second) - ms
  }
  // The zone's offset at the guess, then at the corrected instant (they differ only across a DST change).
  const first = asUtc - offsetAt(asUtc)
  return asUtc - offsetAt(first)
}
