// The frame around every page: skip link, header (organisation, who is signed in, sign-out), navigation (the
// administration section only for owners and admins), the main region the router mounts pages into, and the
// status line pages report to (PageContext.notify).
import type { Api, Cleanup, PageContext, Principal } from './context.ts'
import { clear, h, messageOf } from './dom.ts'
import { matchPath, startRouter } from './router.ts'
import { ROUTES, type Access, type RouteDef } from './routes.ts'

export interface ShellOptions {
  api: Api
  principal: Principal
  org: { slug: string }
  mode: 'cloud' | 'site'
  signOut(): Promise<void>
}

export function allowed(access: Access, principal: Principal, mode: 'cloud' | 'site'): boolean {
  if (access === 'member') return true
  if (access === 'siteMember') return mode === 'site'
  const isAdmin = principal.isPlatformAdmin === true || principal.role === 'owner' || principal.role === 'admin'
  if (access === 'admin') return isAdmin
  if (access === 'siteAdmin') return isAdmin && mode === 'site'
  if (access === 'fleetAdmin') return isAdmin && mode === 'cloud' && principal.kind !== 'sitePin'
  // Organisation administration refuses site-PIN users (they administer the site: keys and site users).
  return isAdmin && principal.kind !== 'sitePin'
}

/**
 * Why a site-PIN user does not see an organisation administration page: the API refuses those to site-PIN sign-ins
 * (policy `orgAdmin`, src/http/auth.ts) whatever their site role, so "for owners and admins" would mislead a site owner.
 */
function sitePinWhy(title: string, principal: Principal): string {
  const administers = principal.role === 'owner' || principal.role === 'admin'
  return (
    `You are signed in with a site PIN${administers ? ': you administer this site (its API keys and site users)' : ''}. ` +
    `The organisation's ${title.toLowerCase()} is for its owners and admins signed in with their organisation account or an owner or admin ` +
    'API key; the API refuses it to site-PIN sign-ins.'
  )
}

export function mountShell(root: HTMLElement, options: ShellOptions): { stop(): void } {
  const { api, principal, org, mode } = options
  const main = h('main', { id: 'main', tabindex: '-1' })
  const status = h('div', { class: 'status', role: 'status', 'aria-live': 'polite' })
  const alert = h('div', { class: 'status status-error', role: 'alert' })
  let statusTimer: ReturnType<typeof setTimeout> | undefined

  const navLink = (route: RouteDef) => h('li', {}, h('a', { href: route.path, 'data-nav': route.path }, route.nav!.label))
  const visible = ROUTES.filter((r) => r.nav && allowed(r.access, principal, mode))
  const mainLinks = visible.filter((r) => r.nav!.section === 'main')
  const adminLinks = visible.filter((r) => r.nav!.section === 'admin')
  const signOutButton = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () => {
        signOutButton.disabled = true
        void options.signOut()
      },
    },
    'Sign out',
  )
  const nav = h(
    'nav',
    { 'aria-label': 'Main' },
    h('ul', {}, ...mainLinks.map(navLink)),
    adminLinks.length > 0 ? h('h2', { class: 'nav-heading', id: 'nav-admin' }, 'Administration') : null,
    adminLinks.length > 0 ? h('ul', { 'aria-labelledby': 'nav-admin' }, ...adminLinks.map(navLink)) : null,
  )

  clear(root)
  root.append(
    h(
      'a',
      {
        class: 'skip-link',
        href: '#main',
        'data-external': '',
        onclick: (e) => {
          e.preventDefault()
          main.focus()
        },
      },
      'Skip to content',
    ),
    h(
      'header',
      { class: 'topbar' },
      h('a', { class: 'brand', href: '/sites' }, 'sitegrid'),
      h('span', { class: 'org', title: 'Organisation' }, org.slug),
      h(
        'span',
        { class: 'who' },
        h('span', { class: 'who-name' }, principal.name),
        ' ',
        h('span', { class: 'badge', 'data-role': principal.role }, principal.isPlatformAdmin ? 'platform admin' : principal.role),
      ),
      signOutButton,
    ),
    h('div', { class: 'layout' }, nav, main),
    status,
    alert,
  )

  const notify = (message: string, kind: 'info' | 'error' = 'info') => {
    const target = kind === 'error' ? alert : status
    ;(kind === 'error' ? status : alert).textContent = ''
    target.textContent = message
    clearTimeout(statusTimer)
    statusTimer = setTimeout(
      () => {
        target.textContent = ''
      },
      kind === 'error' ? 12_000 : 6_000,
    )
  }

  let cleanup: Cleanup | void = undefined
  let generation = 0
  let firstRender = true

  const render = async () => {
    const current = ++generation
    try {
      cleanup?.()
    } catch (error) {
      console.error(error)
    }
    cleanup = undefined
    const match = matchPath(ROUTES, location.pathname)
    if (match?.route.redirect) {
      router.navigate(match.route.redirect + location.search, { replace: true })
      return
    }
    for (const link of nav.querySelectorAll<HTMLAnchorElement>('a[data-nav]')) {
      const path = link.dataset.nav!
      if (location.pathname === path || location.pathname.startsWith(`${path}/`)) link.setAttribute('aria-current', 'page')
      else link.removeAttribute('aria-current')
    }
    clear(main)
    const pageRoot = h('div', { class: 'page' })
    main.append(pageRoot)
    if (!match?.route.page) {
      document.title = 'Not found · sitegrid'
      pageRoot.append(h('h1', {}, 'Page not found'), h('p', {}, 'There is no console page at this address. ', h('a', { href: '/sites' }, 'Go to the sites.')))
    } else if (!allowed(match.route.access, principal, mode)) {
      document.title = `${match.route.title} · sitegrid`
      const why =
        match.route.access === 'siteAdmin' && mode !== 'site'
          ? 'Site users exist on a site server only.'
          : match.route.access === 'siteMember'
            ? "A site server's link to the cloud is shown on the site server; the cloud's view of every site server is under Fleet."
            : match.route.access === 'fleetAdmin' && mode !== 'cloud'
              ? "Site servers are registered in the cloud console; this server's link is under Cloud link."
              : match.route.access === 'orgAdmin' && principal.kind === 'sitePin'
                ? sitePinWhy(match.route.title, principal)
                : 'This page is for organisation owners and admins.'
      pageRoot.append(h('h1', {}, match.route.title), h('p', { class: 'notice' }, why))
    } else {
      document.title = `${match.route.title} · sitegrid`
      const ctx: PageContext = {
        api,
        principal,
        org,
        mode,
        notify,
        params: match.params,
        query: new URLSearchParams(location.search),
        navigate: (path) => router.navigate(path),
      }
      try {
        const result = await match.route.page(pageRoot, ctx)
        if (current !== generation) {
          result?.()
          return
        }
        cleanup = result
      } catch (error) {
        if (current !== generation) return
        pageRoot.append(h('p', { class: 'form-error', role: 'alert' }, messageOf(error)))
      }
    }
    // Move the focus to the new page (not on the first load: the browser starts at the top anyway).
    if (!firstRender) main.focus()
    firstRender = false
  }

  const router = startRouter(() => {
    void render()
  })
  void render()
  return {
    stop() {
      router.stop()
      try {
        cleanup?.()
      } catch (error) {
        console.error(error)
      }
    },
  }
}
