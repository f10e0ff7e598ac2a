// History routing: paths such as /sites/PLANT-1 (the server answers index.html for every console path), links
// are ordinary <a href> (so they work with the keyboard, middle-click and screen readers), intercepted here.
export interface Match<R> {
  route: R
  params: Record<string, string>
}

/** Matches `pathname` against patterns such as `/sites/:code`; parameters are decoded. */
export function matchPath<R extends { path: string }>(routes: readonly R[], pathname: string): Match<R> | undefined {
  const parts = pathname.replace(/\/+$/, '').split('/').slice(1)
  for (const route of routes) {
    const pattern = route.path === '/' ? [] : route.path.split('/').slice(1)
    const given = pathname === '/' ? [] : parts
    if (pattern.length !== given.length) continue
    const params: Record<string, string> = {}
    let ok = true
    for (let i = 0; i < pattern.length && ok; i++) {
      const want = pattern[i]!
      const got = given[i]!
      if (want.startsWith(':')) {
        try {
          params[want.slice(1)] = decodeURIComponent(got)
        } catch {
          ok = false
        }
      } else {
        ok = want === got
      }
    }
    if (ok) return { route, params }
  }
  return undefined
}

/** Follows same-origin link clicks without reloading; `onChange` runs on every navigation (and Back/Forward). */
export function startRouter(onChange: () => void): { navigate(path: string, options?: { replace?: boolean }): void; stop(): void } {
  const navigate = (path: string, options: { replace?: boolean } = {}) => {
    if (options.replace) history.replaceState(null, '', path)
    else history.pushState(null, '', path)
    onChange()
  }
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    const link = (event.target as Element | null)?.closest('a')
    if (!link || link.target || link.hasAttribute('download') || link.dataset.external !== undefined) return
    const url = new URL(link.href, location.href)
    if (url.origin !== location.origin || url.pathname.startsWith('/auth/') || url.pathname.startsWith('/api/')) return
    event.preventDefault()
    if (url.pathname + url.search !== location.pathname + location.search) navigate(url.pathname + url.search + url.hash)
  }
  document.addEventListener('click', onClick)
  window.addEventListener('popstate', onChange)
  return {
    navigate,
    stop() {
      document.removeEventListener('click', onClick)
      window.removeEventListener('popstate', onChange)
    },
  }
}
