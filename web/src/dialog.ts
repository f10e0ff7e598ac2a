// Modal dialogs on the native <dialog> (showModal: focus moves in and stays in, Escape cancels, the rest of the
// page is inert), with the focus returned to whatever opened it.
// Nothing is checked here: what the engineer typed goes to the API, whose problem puts each message next to its field.
import { append, clearProblems, h, showProblem, type Child } from './dom.ts'

/** How long typing must pause before a dialog's preview asks the API. */
export const PREVIEW_DELAY_MS = 350

export interface DialogOptions {
  title: string
  body?: Child[]
  /** Labelled fields (dom.ts field()); their values reach onSubmit as FormData. */
  fields?: HTMLElement[]
  submitLabel: string
  danger?: boolean
  /** Runs on submit; an ApiProblem it throws is shown in the dialog next to its fields and the dialog stays open. */
  onSubmit(data: FormData): Promise<void>
  /**
   * Asks the API about the values as they are typed (when the dialog opens, then after each pause of PREVIEW_DELAY_MS,
   * e.g. a dry run): what it answers is shown in a live region above the buttons; a problem it throws shows the
   * messages of the fields already edited next to them, leaving the focus where it is. Stale answers are dropped.
   */
  preview?(data: FormData): Promise<Child[]>
}

/** Resolves true when onSubmit succeeded, false when cancelled. */
export function openDialog(options: DialogOptions): Promise<boolean> {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
  const titleId = `dlg-${Math.random().toString(36).slice(2)}`
  const submit = h('button', { type: 'submit', class: options.danger ? 'danger' : 'primary' }, options.submitLabel)
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel')
  const previewBox = options.preview ? h('div', { class: 'dialog-preview', 'aria-live': 'polite' }) : null
  const form = h(
    'form',
    { novalidate: true },
    h('h2', { id: titleId }, options.title),
    ...(options.body ?? []),
    ...(options.fields ?? []),
    // The API's answer stays in sight below the fields as the engineer scrolls a long form.
    h('div', { class: 'dialog-footer' }, previewBox, h('div', { class: 'actions' }, cancel, submit)),
  )
  const dialog = h('dialog', { 'aria-labelledby': titleId }, form)
  document.body.append(dialog)

  return new Promise<boolean>((resolve) => {
    let result = false
    // The preview: each answer carries its number; only the latest is shown, none asked before a submit.
    const edited = new Set<string>()
    let asked = 0
    let timer: ReturnType<typeof setTimeout> | undefined
    const close = () => dialog.close()
    cancel.addEventListener('click', close)
    dialog.addEventListener('close', () => {
      clearTimeout(timer)
      dialog.remove()
      opener?.focus()
      resolve(result)
    })
    const ask = (preview: NonNullable<DialogOptions['preview']>, box: HTMLElement) => {
      const mine = ++asked
      preview(new FormData(form)).then(
        (nodes) => {
          if (mine !== asked) return
          clearProblems(form)
          box.replaceChildren()
          append(box, ...nodes)
        },
        (error: unknown) => {
          if (mine !== asked) return
          box.replaceChildren()
          showProblem(form, error, { shown: (pointer) => edited.has(pointer) })
        },
      )
    }
    form.addEventListener('input', (event) => {
      const pointer = event.target instanceof Element ? event.target.closest<HTMLElement>('[data-pointer]')?.dataset.pointer : undefined
      if (pointer) edited.add(pointer)
      const { preview } = options
      if (!preview || !previewBox) return
      clearTimeout(timer)
      timer = setTimeout(() => ask(preview, previewBox), PREVIEW_DELAY_MS)
    })
    if (options.preview && previewBox) ask(options.preview, previewBox)

    form.addEventListener('submit', (event) => {
      event.preventDefault()
      clearTimeout(timer)
      asked++
      // Once submitted, every field has been judged: later previews keep showing each one's message.
      for (const el of form.querySelectorAll<HTMLElement>('[data-pointer]')) edited.add(el.dataset.pointer ?? '')
      clearProblems(form)
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
