// Boots the console: finds out the server's mode (from index.html, filled in by the server), whether someone is
// signed in (cloud: the session cookie through POST /auth/token; site: a kept refresh token), who it is
// (GET /api/me), then mounts the shell, or the sign-in page when nobody is.
import type { Me } from './api-types.ts'
import { createApi, createCloudSession, createSiteSession, SignedOut, type Session, type SiteSession } from './api.ts'
import { ApiProblem, type Principal } from './context.ts'
import { clear, h, messageOf } from './dom.ts'
import { renderPending, renderSignIn } from './pages/sign-in.ts'
import { mountShell } from './shell.ts'

const meta = (name: string) => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? ''
const mode: 'cloud' | 'site' = meta('sitegrid-mode') === 'cloud' ? 'cloud' : 'site'
const browserSignIn = meta('sitegrid-browser-sign-in') === 'true'
const root = document.getElementById('app')!
const session: Session | SiteSession = mode === 'site' ? createSiteSession() : createCloudSession()
let shell: { stop(): void } | undefined

function returnTo(): string {
  const here = location.pathname + location.search
  return location.pathname === '/sign-in' || location.pathname === '/' ? '/sites' : here
}

function showSignIn(message?: string): void {
  shell?.stop()
  shell = undefined
  renderSignIn(root, {
    mode,
    browserSignIn,
    returnTo: returnTo(),
    message,
    async signInWithPin(email, pin) {
      await (session as SiteSession).signIn(email, pin)
      await start()
    },
  })
}

async function signOut(): Promise<void> {
  await session.signOut()
  shell?.stop()
  shell = undefined
  history.replaceState(null, '', '/sign-in')
  showSignIn('You are signed out.')
}

async function start(): Promise<void> {
  let ended = false
  const api = createApi(session, () => {
    if (ended) return
    ended = true
    showSignIn('Your sign-in has ended. Please sign in again.')
  })
  let me: Me
  try {
    await session.token()
    me = await api.get<Me>('/api/me')
  } catch (error) {
    if (error instanceof SignedOut) return showSignIn()
    if (error instanceof ApiProblem && error.status === 403) return renderPending(root, { signOut })
    clear(root)
    root.append(
      h(
        'main',
        { id: 'main', class: 'page narrow' },
        h('h1', {}, 'sitegrid'),
        h('p', { class: 'form-error', role: 'alert' }, messageOf(error)),
        h(
          'button',
          {
            type: 'button',
            class: 'primary',
            onclick: () => {
              void start()
            },
          },
          'Try again',
        ),
      ),
    )
    return
  }
  if (location.pathname === '/sign-in') history.replaceState(null, '', '/sites')
  const principal: Principal = { kind: me.kind === 'sitePin' ? 'sitePin' : 'user', role: me.role, name: me.name, isPlatformAdmin: me.isPlatformAdmin }
  shell?.stop()
  shell = mountShell(root, { api, principal, org: { slug: me.orgSlug }, mode: me.mode, signOut })
}

void start()
