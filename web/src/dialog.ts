// Modal dialogs on the native <dialog> (showModal: focus moves in and stays in, Escape cancels, the rest of the
// page is inert), with the focus returned to whatever opened it.
import { ApiProblem } from './context.ts'
import { clearProblems, h, showProblem, type Child } from './dom.ts'

export interface DialogOptions {
  title: string
  body?: Child[]
  /** Labelled fields (dom.ts field()); their values reach onSubmit as FormData. */
  fields?: HTMLElement[]
  submitLabel: string
  danger?: boolean
  /** Runs on submit; an ApiProblem it throws is shown in the dialog next to its fields and the dialog stays open. */
  onSubmit(data: FormData): Promise<void>
}

/** Resolves true when onSubmit succeeded, false when cancelled. */
export function openDialog(options: DialogOptions): Promise<boolean> {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
  const titleId = `dlg-${Math.random().toString(36).slice(2)}`
  const submit = h('button', { type: 'submit', class: options.danger ? 'danger' : 'primary' }, options.submitLabel)
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel')
  const form = h(
    'form',
    { novalidate: true },
    h('h2', { id: titleId }, options.title),
    ...(options.body ?? []),
    ...(options.fields ?? []),
    h('div', { class: 'actions' }, cancel, submit),
  )
  const dialog = h('dialog', { 'aria-labelledby': titleId }, form)
  document.body.append(dialog)

  return new Promise<boolean>((resolve) => {
    let result = false
    const close = () => dialog.close()
    cancel.addEventListener('click', close)
    dialog.addEventListener('close', () => {
      dialog.remove()
      opener?.focus()
      resolve(result)
    })
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      clearProblems(form)
      // Required fields are checked here so that the message sits next to the field, like the API's.
      const missing = [...form.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>('[required]')].filter((c) => !c.value.trim())
      if (missing.length > 0) {
        const errors = missing.map((c) => ({ pointer: c.closest<HTMLElement>('[data-pointer]')?.dataset.pointer ?? '', message: 'Required.' }))
        showProblem(form, new ApiProblem(400, { detail: 'Some fields are missing.', errors }))
        return
      }
      submit.disabled = true
      submit.setAttribute('aria-busy', 'true')
      options
        .onSubmit(new FormData(form))
        .then(
          () => {
            result = true
            close()
          },
          (error: unknown) => {
            showProblem(form, error)
          },
        )
        .finally(() => {
          submit.disabled = false
          submit.removeAttribute('aria-busy')
        })
    })
    dialog.showModal()
    const first = form.querySelector<HTMLElement>('input, select, textarea') ?? cancel
    first.focus()
  })
}
