// Keyset paging over the API's { items, nextCursor } lists: Next follows nextCursor, Previous goes back along the
// cursors already seen (the API's cursors are opaque and only go forward).
import { clear, h, messageOf } from './dom.ts'

export interface PageOf<T> {
  items: T[]
  nextCursor: string | null
}

export interface Pager {
  reload(): Promise<void>
  first(): Promise<void>
}

export function pager<T>(
  container: HTMLElement,
  label: string,
  load: (cursor: string | undefined) => Promise<PageOf<T>>,
  render: (items: T[]) => HTMLElement,
): Pager {
  const body = h('div', { class: 'pager-body', 'aria-live': 'polite', 'aria-busy': 'false' })
  const prev = h('button', { type: 'button', class: 'secondary' }, 'Previous page')
  const next = h('button', { type: 'button', class: 'secondary' }, 'Next page')
  const where = h('span', { class: 'pager-where' })
  container.append(body, h('nav', { class: 'pager', 'aria-label': `${label} pages` }, prev, where, next))
  const cursors: Array<string | undefined> = [undefined]
  let index = 0
  let nextCursor: string | null = null

  async function show(): Promise<void> {
    body.setAttribute('aria-busy', 'true')
    try {
      const page = await load(cursors[index])
      nextCursor = page.nextCursor
      clear(body)
      body.append(render(page.items))
    } catch (error) {
      clear(body)
      body.append(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
      nextCursor = null
    } finally {
      body.setAttribute('aria-busy', 'false')
    }
    prev.disabled = index === 0
    next.disabled = nextCursor === null
    where.textContent = `Page ${index + 1}`
  }
  prev.addEventListener('click', () => {
    if (index === 0) return
    index -= 1
    void show()
  })
  next.addEventListener('click', () => {
    if (nextCursor === null) return
    cursors.splice(index + 1, cursors.length, nextCursor)
    index += 1
    void show()
  })
  return {
    reload: show,
    async first() {
      cursors.splice(1)
      index = 0
      await show()
    },
  }
}
