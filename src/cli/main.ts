import { DomainError } from '../errors/domain-error.ts'
import { helpText, parseCommandArgs, UsageError, type CommandIo } from './command.ts'
import { commands } from './commands.ts'
import { Cancelled } from './errors.ts'

const WIDTH = Math.max(...commands.map((c) => c.path.join(' ').length))

function overview(): string {
  return [
    'Usage: sitegrid COMMAND [options]   (sitegrid COMMAND --help for details)',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.path.join(' ').padEnd(WIDTH)} ${c.summary.split(/\. (?=[A-Z])/)[0]}`),
  ].join('\n')
}

/** Runs one command; returns the exit code. Domain errors and bad usage go to stderr, never a stack trace. */
export async function runCli(argv: string[], io: CommandIo): Promise<number> {
  if (argv.length === 0) {
    io.err(overview()) // bad usage: stderr, as every other usage error
    return 2
  }
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.out(overview())
    return 0
  }
  const command = commands.filter((c) => c.path.every((word, i) => argv[i] === word)).sort((a, b) => b.path.length - a.path.length)[0]
  if (!command) {
    const group = commands.filter((c) => c.path[0] === argv[0])
    const asked = argv[1] === '--help' || argv[1] === '-h'
    if (group.length && asked) {
      io.out(group.map((c) => `sitegrid ${c.path.join(' ')} ${c.usage}\n    ${c.summary}`).join('\n'))
      return 0
    }
    io.err(group.length ? `sitegrid ${argv[0]}: expected one of ${group.map((c) => c.path[1]).join(', ')}` : `sitegrid: unknown command "${argv[0]}"`)
    io.err(group.length ? group.map((c) => `  sitegrid ${c.path.join(' ')} ${c.usage}`).join('\n') : overview())
    return 2
  }
  try {
    const parsed = parseCommandArgs(command, argv.slice(command.path.length))
    if (parsed.help) {
      io.out(helpText(command))
      return 0
    }
    // Loaded here, not at the top: it brings typebox, which `sitegrid --help` does not need (src/cli/build.ts).
    for (const warning of (await import('../config/load.ts')).unknownEnvSettings(io.env)) io.err(`sitegrid: warning: ${warning}`)
    return (await command.run(parsed, io)) ?? 0
  } catch (err) {
    // Loaded here, not at the top: it brings typebox, which `sitegrid --help` does not need (src/cli/build.ts).
    const { ConfigInvalid } = await import('../config/load.ts')
    if (err instanceof UsageError) {
      io.err(`sitegrid ${command.path.join(' ')}: ${err.message}\n${helpText(command)}`)
      return 2
    }
    if (err instanceof ConfigInvalid) {
      for (const problem of err.problems) io.err(`sitegrid: invalid configuration: ${problem}`) // one line each, naming its setting
      return 78 // EX_CONFIG
    }
    if (err instanceof Cancelled) {
      io.err(`sitegrid ${command.path.join(' ')}: ${err.message}`)
      return 130 // 128 + SIGINT, as a shell reports a command Ctrl-C stopped
    }
    if (err instanceof DomainError) {
      // Each field and its rule, unless the detail already says it (InvalidField's does).
      const fields = err.errors?.map((e) => (err.message.includes(e.message) ? '' : ` (${e.pointer.slice(1)}: ${e.message})`)).join('') ?? ''
      io.err(`sitegrid ${command.path.join(' ')}: ${err.code}: ${err.message}${fields}`)
      return 1
    }
    io.err(`sitegrid ${command.path.join(' ')}: ${(err as Error).message}`)
    return 1
  }
}

const io: CommandIo = { env: process.env, out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) }
process.exitCode = await runCli(process.argv.slice(2), io)
