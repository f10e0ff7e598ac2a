import { parseArgs } from 'node:util'

export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

export interface CommandIo {
  env: NodeJS.ProcessEnv
  out: (line: string) => void
  err: (line: string) => void
}

/** An option of a command, for `util.parseArgs` and for the help. */
export interface CommandOption {
  type: 'string' | 'boolean'
  multiple?: boolean
  /** The form of the value in the help (`--expires-in DURATION`); string options only, default VALUE. */
  value?: string
  /** What the option does and which values it takes (the help's right column; test/cli/help.test.ts checks each has one). */
  description: string
}

export interface Command {
  /** Words after `sitegrid`, e.g. `['key', 'mint']`. */
  path: string[]
  summary: string
  usage: string
  options: Record<string, CommandOption>
  /** Exact number of positional arguments. */
  positionals: string[]
  run(args: { values: Record<string, string | boolean | undefined>; positionals: string[] }, io: CommandIo): Promise<number | void>
}

export function parseCommandArgs(command: Command, argv: string[]) {
  let parsed
  try {
    const options = Object.fromEntries(Object.entries(command.options).map(([name, o]) => [name, { type: o.type, multiple: o.multiple === true }]))
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true })
  } catch (err) {
    // Node adds to an unknown option how to pass a positional starting with '-', which no command here takes.
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument starting with a '-'[\s\S]*$/, ''))
  }
  if (parsed.values.help) return { help: true as const }
  if (parsed.positionals.length !== command.positionals.length) {
    throw new UsageError(
      `expected ${command.positionals.length ? command.positionals.join(' ') : 'no arguments'}, got ${parsed.positionals.length} argument(s)`,
    )
  }
  return { help: false as const, values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals }
}

export function helpText(command: Command): string {
  const lines = [`Usage: sitegrid ${command.path.join(' ')} ${command.usage}`.trimEnd(), '', command.summary]
  const rows = Object.entries(command.options).map(([name, o]) => [
    `--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`,
    `${o.description}${o.multiple ? ' (repeatable)' : ''}`,
  ])
  rows.push(['-h, --help', 'this help'])
  const width = Math.max(...rows.map(([left]) => left!.length))
  lines.push('', 'Options:', ...rows.map(([left, right]) => `  ${left!.padEnd(width)}  ${right}`))
  return lines.join('\n')
}

/** `--json` of the listing commands. */
export const JSON_OPTION = { json: { type: 'boolean', description: 'JSON instead of text: one object a line (a list) or one object' } } as const

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** `30d`, `12h`, `90m`, `2w` → milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d{1,6})([mhdw])$/.exec(text)
  if (!match) throw new UsageError(`--expires-in: expected a number and a unit m, h, d or w (e.g. 30d), got "${text}"`)
  return Number(match[1]) * UNITS[match[2]!]!
}
