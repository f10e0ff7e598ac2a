// Sign-in: cloud mode sends the browser through the organisation's identity provider (GET /auth/login, which comes
// back to `returnTo` with a session cookie); site mode asks for the site user's e-mail and PIN (POST /auth/site/login).
import { ApiProblem } from '../context.ts'
import { clear, clearProblems, field, h, showProblem } from '../dom.ts'

export interface SignInOptions {
  mode: 'cloud' | 'site'
  /** Cloud: whether the server has a browser sign-in client (SITEGRID_OIDC_CLIENT_ID/SECRET). */
  browserSignIn: boolean
  returnTo: string
  message?: string
  signInWithPin(email: string, pin: string): Promise<void>
}

function pinProblem(error: unknown): unknown {
  if (!(error instanceof ApiProblem)) return error
  if (error.status === 401) return new ApiProblem(401, { detail: 'The e-mail or the PIN is wrong.' })
  if (error.status === 423)
    return new ApiProblem(423, {
      detail: `Sign-in with this e-mail is locked after too many wrong PINs${until(error)}. Try again then, or ask a site owner to unlock it.`,
    })
  if (error.status === 429) return new ApiProblem(429, { detail: `Too many attempts from this device. Try again${until(error)}.` })
  return error
}

/** " until 14:05:30 (this device's time)" from the answer's `lockedUntil`, or nothing. */
function until(error: ApiProblem): string {
  const at = error.lockedUntil === undefined ? Number.NaN : Date.parse(error.lockedUntil)
  return Number.isNaN(at) ? '' : ` until ${new Date(at).toLocaleTimeString()} (this device's time)`
}

export function renderSignIn(root: HTMLElement, options: SignInOptions): void {
  clear(root)
  document.title = 'Sign in · sitegrid'
  const main = h('main', { id: 'main', class: 'page narrow sign-in', tabindex: '-1' }, h('h1', {}, 'Sign in to sitegrid'))
  if (options.message) main.append(h('p', { class: 'notice', role: 'status' }, options.message))
  if (options.mode === 'cloud') {
    if (options.browserSignIn) {
      // A plain navigation to GET /auth/login (the server redirects to the provider and back to returnTo); the
      // optional e-mail is passed on as the provider's login hint.
      const hint = h('input', { type: 'email', name: 'loginHint', autocomplete: 'username', autocapitalize: 'none', spellcheck: 'false' })
      const form = h(
        'form',
        { class: 'form', novalidate: true },
        field('Work e-mail (optional)', hint, { hint: 'Saves typing it again at your identity provider.' }),
        h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', id: 'sign-in-button' }, 'Sign in with your organisation account')),
      )
      form.addEventListener('submit', (event) => {
        event.preventDefault()
        const query = new URLSearchParams({ returnTo: options.returnTo })
        if (hint.value.trim()) query.set('loginHint', hint.value.trim())
        location.assign(`/auth/login?${query}`)
      })
      main.append(h('p', {}, 'Sign in with your organisation account. You will come back here afterwards.'), form)
    } else {
      main.append(
        h(
          'p',
          { class: 'form-error', role: 'alert' },
          'Browser sign-in is not configured on this server (SITEGRID_OIDC_CLIENT_ID and SITEGRID_OIDC_CLIENT_SECRET). Integrations can still use API keys.',
        ),
      )
    }
  } else {
    const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true, autocapitalize: 'none', spellcheck: 'false' })
    const pin = h('input', {
      type: 'password',
      name: 'pin',
      autocomplete: 'current-password',
      inputmode: 'numeric',
      pattern: '[0-9]*',
      required: true,
      minlength: 6,
      maxlength: 12,
    })
    const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in')
    const form = h(
      'form',
      { class: 'form', novalidate: true },
      field('E-mail', email, { pointer: '/email' }),
      field('PIN', pin, { pointer: '/pin', hint: '6 to 12 digits' }),
      h('div', { class: 'actions' }, submit),
    )
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      clearProblems(form)
      const missing = [!email.value.trim() && '/email', !pin.value && '/pin'].filter((p): p is string => Boolean(p))
      if (missing.length > 0) {
        showProblem(form, new ApiProblem(400, { detail: 'Enter your e-mail and PIN.', errors: missing.map((pointer) => ({ pointer, message: 'Required.' })) }))
        return
      }
      submit.disabled = true
      submit.setAttribute('aria-busy', 'true')
      options.signInWithPin(email.value.trim(), pin.value).catch((error: unknown) => {
        pin.value = ''
        submit.disabled = false
        submit.removeAttribute('aria-busy')
        showProblem(form, pinProblem(error))
      })
    })
    main.append(h('p', {}, 'Sign in with the e-mail and PIN your site administrator gave you.'), form)
    queueMicrotask(() => email.focus())
  }
  root.append(main)
}

/** A signed-in account whose membership request awaits an owner's or admin's approval (every API call is 403). */
export function renderPending(root: HTMLElement, options: { signOut(): Promise<void> }): void {
  clear(root)
  document.title = 'Awaiting approval · sitegrid'
  root.append(
    h(
      'main',
      { id: 'main', class: 'page narrow', tabindex: '-1' },
      h('h1', {}, 'Awaiting approval'),
      h(
        'p',
        { role: 'status' },
        'You are signed in, but your request to join this organisation has not been approved yet. An owner or admin approves it under Administration → Members. Reload this page once they have.',
      ),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'primary', onclick: () => location.reload() }, 'Check again'),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: () => {
              void options.signOut()
            },
          },
          'Sign out',
        ),
      ),
    ),
  )
}
